"""Batched single-seat training environments over one ``VectorEngine``.

``SeatBatch`` runs ``num_envs`` games in one engine. In each game the learner
holds one seat (fixed, or a random seat per episode); the other seats are
played *inside the batch* by an opponent policy, any object with the batched
``act(observations, action_masks)`` of ``agents`` (random by default,
swappable during training with ``set_opponent``). For self-play with shared
parameters, pass the learner itself as the opponent (``agents.TrainedAgent``
around the live model, or any object whose ``act`` calls it).

Rewards: everything the learner's seat is paid between two of its decisions
is summed into the reward of the first, so a round's result arrives even when
an opponent ends it (PettingZoo issue 1147's bug class). A finished game is
reset in the same step (SB3's and Gymnasium's "same-step" autoreset); its last
view of the learner's seat is kept as the terminal observation.

Two thin adapters:

* ``HPUnoVecEnv``: a ``stable_baselines3`` ``VecEnv`` with ``action_masks()``,
  which sb3-contrib's ``MaskablePPO`` trains on directly.
* ``HPUnoGymVectorEnv``: a ``gymnasium.vector.VectorEnv`` (masks in
  ``infos["action_mask"]``, ``autoreset_mode`` SAME_STEP) for CleanRL-style loops.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv as GymVectorEnvBase
from stable_baselines3.common.vec_env import VecEnv

from .cards import NUM_ACTIONS
from .engine import VectorEngine


class SeatBatch:
    """num_envs games where the learner holds one seat and an opponent policy plays the rest.

    Args:
        num_envs: games in the batch.
        num_players: seats per game.
        learner_seat: the learner's seat, or ``"random"`` for a new random seat every episode.
        opponent: object with ``act(observations, action_masks)``; default ``agents.RandomAgent``.
        seed: seeds the engine and the seat draw.
        **rule_options: ``RulesOptions`` fields.
    """

    def __init__(self, num_envs: int, num_players: int = 2, learner_seat: int | str = 0, opponent=None, seed: int | None = None, **rule_options):
        self.engine = VectorEngine(num_games=num_envs, num_players=num_players, seed=seed, auto_reset=False, **rule_options)
        if learner_seat != "random" and not (isinstance(learner_seat, int) and 0 <= learner_seat < num_players):
            raise ValueError(f"learner_seat must be a seat in [0, {num_players}) or 'random', got {learner_seat!r}")
        self.num_envs = num_envs
        self.num_players = num_players
        self.learner_seat = learner_seat
        self.rng = np.random.default_rng(seed)
        self.seats = np.zeros(num_envs, np.int64)
        if opponent is None:
            from agents import RandomAgent

            opponent = RandomAgent(num_players=num_players, seed=None if seed is None else seed + 1)
        self.set_opponent(opponent)
        self._carry = np.zeros(num_envs, np.float32)
        self._rows = np.arange(num_envs)
        self.observations = np.zeros((num_envs, self.engine.observation_size), np.int8)
        self.masks = np.zeros((num_envs, NUM_ACTIONS), np.bool_)

    def set_opponent(self, opponent) -> None:
        """Swap the policy that plays the other seats (takes effect from the next decision)."""
        if not callable(getattr(opponent, "act", None)):
            raise ValueError("opponent must have an act(observations, action_masks) method")
        self.opponent = opponent

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Fresh matches in every game. A seed reseeds the engine, the seat draw and the
        opponent (if it has a ``seed`` method), so the same seed replays the same games."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            if callable(getattr(self.opponent, "seed", None)):
                self.opponent.seed(seed + 1)
        self.engine.reset(seed=seed)
        self._draw_seats(np.arange(self.num_envs))
        self._carry[:] = self._play_opponents()
        return self.observations, self.masks

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The learner acts in every game; returns (observations, masks, rewards, terminated,
        truncated, terminal_observations) where terminal_observations[g] is the learner's last
        view of game g if it ended this step (else zeros)."""
        observations, masks, rewards_by_seat, terminated, truncated = self.engine.step_observe(np.asarray(actions, dtype=np.int64))
        rewards = self._carry + rewards_by_seat[self._rows, self.seats]
        rewards += self._play_opponents(observations, masks, terminated, truncated)
        done = terminated | truncated
        terminal_observations = np.zeros_like(self.observations)
        self._carry[:] = 0.0
        if done.any():
            games = np.flatnonzero(done)
            seats = np.full(self.num_envs, -1, np.int64)
            seats[games] = self.seats[games]
            terminal_observations = self.engine.observe(seats)
            self.engine.reset(games=games)
            self._draw_seats(games)
            self._carry[:] = self._play_opponents()  # paid in the new episodes: next step's reward
        return self.observations, self.masks, rewards.astype(np.float32), terminated, truncated, terminal_observations

    def _draw_seats(self, games: np.ndarray) -> None:
        if self.learner_seat == "random":
            self.seats[games] = self.rng.integers(0, self.num_players, len(games))
        else:
            self.seats[games] = self.learner_seat

    def _play_opponents(self, observations=None, masks=None, terminated=None, truncated=None) -> np.ndarray:
        """Let the opponent move in every running game until the learner is to act, and
        leave the learner's views in self.observations / self.masks. Returns what the
        learner's seat was paid meanwhile; episode flags are updated in place.

        Without flags (right after a reset) a game that the opponents finish before the
        learner's first decision is dealt again: that episode has no decision to credit.
        """
        if observations is None:
            observations, masks = self.engine.observe(), self.engine.legal_mask()
        paid = np.zeros(self.num_envs, np.float32)
        while True:
            current = self.engine.current_player
            waiting = (current >= 0) & (current != self.seats)
            if not waiting.any():
                self.observations, self.masks = observations, masks
                return paid
            games = np.flatnonzero(waiting)
            actions = np.full(self.num_envs, -1, np.int64)
            actions[games] = self.opponent.act(observations[games], masks[games])
            observations, masks, rewards, ended, cut = self.engine.step_observe(actions, partial=True)
            paid += rewards[self._rows, self.seats]
            if terminated is not None:
                terminated |= ended
                truncated |= cut
            elif (ended | cut).any():
                restart = np.flatnonzero(ended | cut)
                paid[restart] = 0.0
                self.engine.reset(games=restart)
                self._draw_seats(restart)
                observations, masks = self.engine.observe(), self.engine.legal_mask()


class HPUnoVecEnv(VecEnv):
    """Stable-Baselines3 VecEnv: one learner seat per game, opponents inside the batch.

    >>> from sb3_contrib import MaskablePPO
    >>> env = HPUnoVecEnv(num_envs=64, num_players=2, seed=0)
    >>> model = MaskablePPO("MlpPolicy", env).learn(10_000)
    """

    def __init__(self, num_envs: int = 64, num_players: int = 2, learner_seat: int | str = 0, opponent=None, seed: int | None = None, **rule_options):
        self.batch = SeatBatch(num_envs, num_players, learner_seat, opponent, seed, **rule_options)
        observation_space = spaces.Box(0, 127, (self.batch.engine.observation_size,), np.int8)
        self.render_mode = None
        super().__init__(num_envs, observation_space, spaces.Discrete(NUM_ACTIONS))
        self._actions = np.zeros(num_envs, np.int64)

    def set_opponent(self, opponent) -> None:
        self.batch.set_opponent(opponent)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        self._seeds = []
        observations, _ = self.batch.reset(seed=seed)
        return observations.copy()

    def step_async(self, actions) -> None:
        self._actions = np.asarray(actions, dtype=np.int64).reshape(self.num_envs)

    def step_wait(self):
        observations, _, rewards, terminated, truncated, terminal = self.batch.step(self._actions)
        dones = terminated | truncated
        infos = [{} for _ in range(self.num_envs)]
        for game in np.flatnonzero(dones):
            infos[game]["terminal_observation"] = terminal[game]
            infos[game]["TimeLimit.truncated"] = bool(truncated[game] and not terminated[game])
        return observations.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, 75) bool: what MaskablePPO asks for before each step."""
        return self.batch.masks.copy()

    def close(self) -> None:
        pass

    def get_images(self):
        return [None] * self.num_envs

    # SB3's per-env attribute access: every game shares this object's attributes.
    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices

    def get_attr(self, attr_name, indices=None):
        value = getattr(self, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._indices(indices)]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]


class HPUnoGymVectorEnv(GymVectorEnvBase):
    """Gymnasium VectorEnv: one learner seat per game, legal masks in ``infos["action_mask"]``.

    Same-step autoreset: a finished game's next episode starts in the step that
    ended it; ``infos["final_obs"]`` holds the finished views and
    ``infos["_final_obs"]`` marks which games they are for.
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 64, num_players: int = 2, learner_seat: int | str = 0, opponent=None, seed: int | None = None, **rule_options):
        self.batch = SeatBatch(num_envs, num_players, learner_seat, opponent, seed, **rule_options)
        self.num_envs = num_envs
        self.single_observation_space = spaces.Box(0, 127, (self.batch.engine.observation_size,), np.int8)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.Box(0, 127, (num_envs, self.batch.engine.observation_size), np.int8)
        self.action_space = spaces.MultiDiscrete(np.full(num_envs, NUM_ACTIONS))
        self.render_mode = None

    def set_opponent(self, opponent) -> None:
        self.batch.set_opponent(opponent)

    def reset(self, *, seed=None, options=None):
        observations, masks = self.batch.reset(seed=seed)
        return observations.copy(), {"action_mask": masks.copy()}

    def step(self, actions):
        observations, masks, rewards, terminated, truncated, terminal = self.batch.step(actions)
        infos = {"action_mask": masks.copy()}
        done = terminated | truncated
        if done.any():
            infos["final_obs"] = terminal
            infos["_final_obs"] = done
        return observations.copy(), rewards, terminated, truncated, infos
