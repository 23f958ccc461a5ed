"""The Gymnasium environments: one learner seat against built-in or given opponents, one game or many.

``gymnasium.make("hpuno/HPUno-v1", num_players=2, ...)`` (registered by ``import hpuno_env``) builds
``HPUnoEnv``: a ``gymnasium.Env`` whose episodes are the learner's decisions in one round (or match),
the other seats played inside the step by an opponent policy. It is a one-game ``SeatBatch``
(``seat_batch.py``), so its rewards, opponents and observations are exactly those of the vector
envs; ``gymnasium.make_vec("hpuno/HPUno-v1", num_envs=N, ...)`` gives ``HPUnoGymVectorEnv``, a
``gymnasium.vector.VectorEnv`` over a ``SeatBatch`` of N games (int8 masks in
``infos["action_mask"]``, ``autoreset_mode`` SAME_STEP) for CleanRL-style loops.

Legal actions of ``HPUnoEnv``: ``info["action_mask"]`` (int8, Gymnasium's ``Discrete.sample(mask=...)`` convention)
and ``env.unwrapped.action_masks()`` (bool, what sb3-contrib's ``ActionMasker`` and MaskablePPO
read). Gymnasium's tools sample actions without masks, so by default an illegal action loses the
round (reward -1, terminated), as the wrapped PettingZoo ``env()`` does; ``illegal_action="raise"``
raises ``ValueError`` instead and changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv as GymVectorEnvBase
from gymnasium.vector.utils import batch_space

from ._checks import check_seed
from .cards import NUM_ACTIONS
from .render import render_ansi, render_rgb
from .seat_batch import Assignment, ObservationFormat, SeatBatch


class HPUnoEnv(gymnasium.Env):
    """One learner seat of one game; the other seats are played by ``opponent``.

    Args:
        num_players: seats per game (2..10).
        learner_seat: the learner's seat, or ``"random"`` for a new random seat every episode.
        opponent: an object with ``act(observations, action_masks)`` for games of ``num_players``
            (``agents.load(...)``); default: uniformly random legal play.
        observation_dtype: ``np.float32`` (default) or ``np.int8``.
        scale_observations: multiply by ``encoding.observation_scale`` (every entry about 0..1).
        illegal_action: ``"lose"`` (default: the round is lost, -1) or ``"raise"``.
        render_mode: None, ``"ansi"`` or ``"rgb_array"``: the table as the learner's seat sees it.
        **rule_options: ``RulesOptions`` fields (docs/rules.md).

    ``reset(seed=s)`` seeds the game, the seat draw and every opponent with a ``seed`` method, so
    the same seed replays the same episode; an unseeded ``reset()`` continues from the last seed.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, num_players: int = 2, learner_seat: int | str = 0, opponent=None, observation_dtype=np.float32,
                 scale_observations: bool = False, illegal_action: str = "lose", render_mode: str | None = None,
                 **rule_options):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.batch = SeatBatch(1, num_players, learner_seat, opponent, None, illegal_action, **rule_options)
        self.observation_format = ObservationFormat(self.batch.num_players, observation_dtype, scale_observations)
        self.observation_space = self.observation_format.space
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.render_mode = render_mode
        self._episode_over = True

    @property
    def num_players(self) -> int:
        return self.batch.num_players

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """A new episode: a fresh deal, played on until the learner's first decision.
        ``options`` takes no keys (stacked decks are the engine's: ``VectorEngine.reset``)."""
        if options:
            raise ValueError(f"options takes no keys here, got {sorted(options) if isinstance(options, dict) else options!r}")
        super().reset(seed=check_seed(seed))
        # Every episode's engine seed comes from np_random: a seeded reset and the unseeded ones after it replay.
        observations, masks = self.batch.reset(seed=int(self.np_random.integers(2**31)))
        self._episode_over = False
        return self.observation_format(observations)[0], self._info(masks[0])

    def step(self, action):
        """The learner's action; the opponents then move until the learner is to act again or the round ends."""
        if self._episode_over:
            raise ValueError("the episode is over (or never started): call reset() first")
        given = np.asarray(action)
        if given.shape != () or given.dtype.kind not in "iu":  # bool's kind is "b": refused too
            raise ValueError(f"action must be an integer in [0, {NUM_ACTIONS}), got {action!r}")
        observations, masks, rewards, terminated, truncated, terminal = self.batch.step(given.reshape(1))
        done = bool(terminated[0] or truncated[0])
        self._episode_over = done
        # The batch deals a finished game again at once: the episode's last view is its terminal one.
        observation = self.observation_format(terminal if done else observations)[0]
        mask = np.zeros(NUM_ACTIONS, np.bool_) if done else masks[0]
        return observation, float(rewards[0]), bool(terminated[0]), bool(truncated[0]), self._info(mask)

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions now (bool, shape (75,)); all False once the episode is over."""
        if self._episode_over:
            return np.zeros(NUM_ACTIONS, np.bool_)
        return self.batch.masks[0].copy()

    def render(self):
        """The table as the learner's seat sees it (the next deal's, once an episode is over)."""
        if self.render_mode is None:
            return None
        state = self.batch.engine.game_state(0)
        viewer = f"player_{int(self.batch.seats[0])}"
        if self.render_mode == "rgb_array":
            return render_rgb(state, viewer, [])
        return render_ansi(state, viewer, [])

    def _info(self, mask: np.ndarray) -> dict:
        return {"action_mask": mask.astype(np.int8), "seat": int(self.batch.seats[0])}


class HPUnoGymVectorEnv(GymVectorEnvBase):
    """Gymnasium VectorEnv: one learner seat per game, legal masks in ``infos["action_mask"]``.

    Arguments as ``SeatBatch`` (``illegal_action`` too, ``"raise"`` by default), plus
    ``observation_dtype`` (float32 by default, or np.int8) and ``scale_observations``
    (``ObservationFormat``). Masks are int8 (1 = legal), Gymnasium's convention:
    ``single_action_space.sample(mask=infos["action_mask"][i])`` takes them as they are.
    Same-step autoreset (``autoreset_mode``, also in ``metadata``): a finished game's next
    episode starts in the step that ended it; ``infos["final_obs"]`` holds the finished
    views and ``infos["_final_obs"]`` marks which games they are for.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    autoreset_mode = AutoresetMode.SAME_STEP  # what wrappers that read the attribute (TorchRL's GymWrapper) look for

    def __init__(self, num_envs: int = 64, num_players: int = 2, learner_seat: int | str = 0, opponent=None, seed: int | None = None,
                 observation_dtype=np.float32, scale_observations: bool = False, illegal_action: str = "raise", **rule_options):
        self.batch = SeatBatch(num_envs, num_players, learner_seat, opponent, seed, illegal_action, **rule_options)
        self.observation_format = ObservationFormat(self.batch.num_players, observation_dtype, scale_observations)
        self.num_envs = num_envs
        self.single_observation_space = self.observation_format.space
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, NUM_ACTIONS))
        self.render_mode = None

    def set_opponent(self, opponent) -> None:
        """``SeatBatch.set_opponent``."""
        self.batch.set_opponent(opponent)

    def set_opponents(self, policies: Sequence, assignment: Assignment) -> None:
        """``SeatBatch.set_opponents``: several opponents, per game slot and seat."""
        self.batch.set_opponents(policies, assignment)

    def reset(self, *, seed=None, options=None):
        if options:  # stacked decks are the engine's (VectorEngine.reset)
            raise ValueError(f"options takes no keys here, got {sorted(options) if isinstance(options, dict) else options!r}")
        observations, masks = self.batch.reset(seed=seed)
        return self.observation_format(observations), {"action_mask": masks.astype(np.int8)}

    def step(self, actions):
        observations, masks, rewards, terminated, truncated, terminal = self.batch.step(actions)
        infos = {"action_mask": masks.astype(np.int8)}
        done = terminated | truncated
        if done.any():
            infos["final_obs"] = self.observation_format(terminal)
            infos["_final_obs"] = done
        return self.observation_format(observations), rewards, terminated, truncated, infos
