"""Ray RLlib adapters: a ``MultiAgentEnv``, a batched env runner, self-play mappings, a PPO config.

RLlib (``pip install "hpuno-env[rllib]"``) is imported by this module only, never
by ``import hpuno_env``.

* ``HPUnoMultiAgentEnv``: one game as an RLlib ``MultiAgentEnv``. Agents are
  ``player_0`` .. ``player_{n-1}``; only the agent to act gets an observation,
  and when a round ends every agent gets its last view and its reward.
  Observations are what RLlib's action-masking module
  (``ActionMaskingTorchRLModule``) expects: a Dict of ``"observations"``
  (float32, optionally scaled to about [0, 1]) and ``"action_mask"`` (float32
  0/1 over the 75 actions).
* ``HPUnoVectorMultiAgentEnv`` + ``HPUnoEnvRunner``: ``num_envs_per_env_runner``
  games stepped by one ``VectorEngine`` call, for
  ``config.env_runners(env_runner_cls=HPUnoEnvRunner)``; the runner samples with
  ``rllib_sampling.BatchSampler`` (one forward pass per module and step, the
  rollout in arrays, RLlib's episodes built once per ``sample()``). RLlib's own
  ``SyncVectorMultiAgentEnv`` steps one ``HPUnoMultiAgentEnv`` copy after another;
  ``benchmarks/bench_rllib.py`` compares them.
* ``shared_policy_mapping`` (every seat plays the one trained policy) and
  ``LeagueMapping`` + ``FrozenLeague`` (one seat per game is the learner, the
  others frozen snapshots of it, refreshed every few iterations): self-play.
* ``ppo_config``: PPO with masking on all of the above, what ``train_rllib.py`` runs.

The env's ``config`` (RLlib's ``env_config``) holds ``num_players`` (default 2),
``illegal_action`` (``"lose"``, the default: the mover loses the round, -1 to it
and 0 to the others, as the wrapped PettingZoo ``env()`` does, which is what RLlib's
env check needs, since it steps one unmasked random action; or ``"raise"``:
``ValueError``, nothing changes), ``scale_observations`` (default False;
``encoding.observation_scale``), ``seed``, and any rule option of ``RulesOptions``.

Two of RLlib's log lines that say nothing a user can act on are dropped,
in every process that imports this module (the env runners do): RLlib
2.60's ``RLModule.__init__`` builds the deprecated ``RLModuleConfig`` itself,
for every module including its own defaults, and warns about it; and
``AlgorithmConfig`` announces that the new API stack, which ``ppo_config``
uses on purpose, is the default (``QUIETED_MESSAGES``). Everything else RLlib
and Ray log is left as it is.

Rewards: whatever a seat is paid between two of its decisions (a round's end
while another seat moves, ``reward="points"`` of a match) is handed to it with
its next observation, so RLlib credits it to that seat's last action.
"""

from __future__ import annotations

import collections
import logging
import random
import zlib
from typing import Any
from collections.abc import Sequence

import numpy as np
import torch

try:
    import ray  # noqa: F401  (the import error below names the extra to install)
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.callbacks.utils import make_callback
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.env_context import EnvContext
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.models.base import ENCODER_OUT
    from ray.rllib.utils.metrics import (
        NUM_AGENT_STEPS_SAMPLED,
        NUM_AGENT_STEPS_SAMPLED_LIFETIME,
        NUM_ENV_STEPS_SAMPLED,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
        NUM_EPISODES,
        NUM_EPISODES_LIFETIME,
        NUM_MODULE_STEPS_SAMPLED,
        NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    )
    from ray.rllib.utils.torch_utils import FLOAT_MIN
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError('hpuno_env.rllib needs Ray RLlib: pip install "hpuno-env[rllib]"') from error

from gymnasium import spaces

from ._checks import check_int, check_positive_int
from .actions import ILLEGAL_REWARD, action_index, action_name, check_illegal_action, illegal_actions
from .cards import NUM_ACTIONS
from .engine import VectorEngine
from .rllib_sampling import BatchSampler
from .seat_batch import ObservationFormat

# (logger, a phrase of the message): RLlib log lines about RLlib's own code, dropped (module docstring)
QUIETED_MESSAGES = (
    ("ray._common.deprecation", "RLModule(config=[RLModuleConfig object])"),
    ("ray.rllib.algorithms.algorithm_config", "on the new API stack! This is the new default behavior"),
)


class _DropMessage(logging.Filter):
    def __init__(self, phrase: str):
        super().__init__()
        self.phrase = phrase

    def filter(self, record: logging.LogRecord) -> bool:
        return self.phrase not in record.getMessage()


for _logger, _phrase in QUIETED_MESSAGES:
    logging.getLogger(_logger).addFilter(_DropMessage(_phrase))

SHARED_POLICY = "shared"
LEARNER_POLICY = "learner"


def frozen_policy(index: int) -> str:
    """Module id of the league's index-th frozen snapshot."""
    return f"frozen_{index}"


class MultiAgentGames:
    """``num_games`` games on one ``VectorEngine``, read and stepped in RLlib's multi-agent dicts.

    The one implementation behind ``HPUnoMultiAgentEnv`` (one game) and
    ``HPUnoVectorMultiAgentEnv`` (many): per game a dict of observations for the
    agents that get one, and dicts of rewards, terminateds, truncateds, infos.
    ``config`` as the module docstring says.
    """

    def __init__(self, num_games: int, config: dict | None = None):
        options = dict(config or {})  # EnvContext is a dict: its keys are the env_config
        num_players = options.pop("num_players", 2)
        illegal_action = check_illegal_action(options.pop("illegal_action", "lose"))
        scale_observations = options.pop("scale_observations", False)
        seed = options.pop("seed", None)
        self.engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, auto_reset=False, **options)
        self.num_games = self.engine.num_games
        self.num_players = self.engine.num_players
        self.illegal_action = illegal_action
        self.observation_format = ObservationFormat(self.num_players, np.float32, scale_observations)
        self.agents = list(self.engine.agents)
        self.observation_space = spaces.Dict({
            "observations": self.observation_format.space,
            "action_mask": spaces.Box(0.0, 1.0, (NUM_ACTIONS,), np.float32),
        })
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self._carry = np.zeros((self.num_games, self.num_players), np.float32)
        self._masks = np.zeros((self.num_games, NUM_ACTIONS), np.bool_)
        # A game that ended (or was never dealt) is stepped again only after a reset.
        self.over = np.ones(self.num_games, np.bool_)
        self._no_mask = np.zeros(NUM_ACTIONS, np.float32)

    def reset(self, games: np.ndarray, seed: int | None = None) -> tuple[list[dict], list[dict]]:
        """Fresh matches in ``games`` (indices); returns their observation and info dicts."""
        self.engine.reset(seed=seed, games=games)
        self._carry[games] = 0.0
        self.over[games] = False
        observations, masks = self.engine.observe(), self.engine.legal_mask()
        self._masks[games] = masks[games]
        views, mask_rows = self.observation_format(observations[games]), masks[games].astype(np.float32)
        current = self.engine.current_player[games]
        names = self.agents
        return (
            [{names[seat]: {"observations": views[i], "action_mask": mask_rows[i]}} for i, seat in enumerate(current)],
            [{} for _ in range(len(games))],
        )

    def step(self, actions: Sequence[dict], stepping: np.ndarray) -> tuple[list, list, list, list, list]:
        """The agent to act moves in every game where ``stepping`` is True, with its entry of
        ``actions[g]``; returns (observations, rewards, terminateds, truncateds, infos), one dict
        per stepped game in game order. Bad input raises ValueError and changes nothing."""
        games = np.flatnonzero(stepping)
        if self.over[games].any():
            ended = games[self.over[games]]
            raise ValueError(f"step() in game(s) {ended[:20].tolist()} whose round is over (or never dealt): call reset() first")
        current = self.engine.current_player.copy()
        chosen = np.full(self.num_games, -1, np.int64)
        for g in games:
            agent = self.agents[current[g]]
            if agent not in actions[g]:
                raise ValueError(f"no action for {agent}, the agent to act" + (f" in game {g}" if self.num_games > 1 else "")
                                 + f"; got actions for {sorted(actions[g])}")
            chosen[g] = action_index(actions[g][agent], agent)
        illegal = stepping & illegal_actions(chosen, self._masks)
        if illegal.any():
            if self.illegal_action == "raise":
                bad = np.flatnonzero(illegal)
                raise ValueError(f"illegal action in game(s) {bad[:20].tolist()}: " + ", ".join(
                    f"{self.agents[current[g]]} chose {action_name(chosen[g])}" for g in bad[:5]))
            requested = chosen.copy()
            chosen[illegal] = -1  # the round is forfeited, not played on
        observations, masks, rewards, terminated, truncated = self.engine.step_observe(chosen, partial=True)
        self._masks = masks
        self._carry += rewards
        offenders = np.flatnonzero(illegal)
        self._carry[offenders, current[offenders]] += ILLEGAL_REWARD
        ended = (terminated | truncated | illegal) & stepping
        self.over |= ended
        views, mask_rows = self.observation_format(observations), masks.astype(np.float32)
        final_views = self._final_views(ended) if ended.any() else None
        names, carry = self.agents, self._carry
        results = ([], [], [], [], [])
        for g in games:
            if ended[g]:
                obs = {name: {"observations": final_views[seat][g], "action_mask": self._no_mask} for seat, name in enumerate(names)}
                reward = {name: float(carry[g, seat]) for seat, name in enumerate(names)}
                carry[g] = 0.0
                # "__all__" alone: RLlib's MultiAgentEpisode declares an episode terminated (no
                # value bootstrap) once every agent has its own done flag, truncated ones too.
                cut = bool(truncated[g] and not terminated[g])
                terminateds, truncateds = {"__all__": not cut}, {"__all__": cut}
                info = {names[current[g]]: {"illegal_action": action_name(requested[g])}} if illegal[g] else {}
            else:
                seat = self.engine.current_player[g]
                name = names[seat]
                obs = {name: {"observations": views[g], "action_mask": mask_rows[g]}}
                reward = {name: float(carry[g, seat])}
                carry[g, seat] = 0.0
                terminateds, truncateds, info = {"__all__": False}, {"__all__": False}, {}
            for column, value in zip(results, (obs, reward, terminateds, truncateds, info)):
                column.append(value)
        return results

    def _final_views(self, ended: np.ndarray) -> list[np.ndarray]:
        """Every seat's last view of the games that ended (rows of other games are zeros)."""
        views = []
        for seat in range(self.num_players):
            seats = np.where(ended, seat, -1)
            views.append(self.observation_format(self.engine.observe(seats)))
        return views


class HPUnoMultiAgentEnv(MultiAgentEnv):
    """One game of Harry Potter UNO as an RLlib ``MultiAgentEnv`` (``config``: see the module docstring).

    >>> env = HPUnoMultiAgentEnv({"num_players": 2})
    >>> observations, infos = env.reset(seed=0)
    >>> (agent, view), = observations.items()          # only the agent to act observes
    >>> action = int(view["action_mask"].argmax())        # a legal action
    >>> observations, rewards, terminateds, truncateds, infos = env.step({agent: action})
    """

    metadata = {"render_modes": []}

    def __init__(self, config: dict | None = None):
        super().__init__()
        self.games = MultiAgentGames(1, config)
        self.possible_agents = list(self.games.agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = dict.fromkeys(self.possible_agents, self.games.observation_space)
        self.action_spaces = dict.fromkeys(self.possible_agents, self.games.action_space)
        self._game = np.zeros(1, np.int64)
        self._stepping = np.ones(1, np.bool_)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        observations, infos = self.games.reset(self._game, seed=seed)
        return observations[0], infos[0]

    def step(self, action_dict: dict):
        observations, rewards, terminateds, truncateds, infos = self.games.step([action_dict], self._stepping)
        return observations[0], rewards[0], terminateds[0], truncateds[0], infos[0]


class HPUnoVectorMultiAgentEnv(VectorMultiAgentEnv):
    """``num_envs`` games in one ``VectorEngine``: what ``SyncVectorMultiAgentEnv`` gives RLlib's
    ``MultiAgentEnvRunner`` from ``num_envs`` ``HPUnoMultiAgentEnv`` copies, with one kernel call per step.

    Same conventions as RLlib's: lists of per-game dicts, and "next_step" autoreset
    (a game that ended is dealt again by the next ``step``, which returns its reset
    observation and ignores its action dict). ``envs[i].unwrapped`` answers RLlib's
    per-game space questions (one shared ``HPUnoMultiAgentEnv``, never stepped).
    """

    metadata = {"autoreset_mode": "next_step"}

    def __init__(self, num_envs: int, config: dict | None = None):
        super().__init__()
        self.games = MultiAgentGames(num_envs, config)
        self.num_envs = self.games.num_games
        spaces_env = HPUnoMultiAgentEnv(config)
        self.envs = [spaces_env] * self.num_envs
        self.single_observation_spaces = dict(spaces_env.observation_spaces)
        self.single_action_spaces = dict(spaces_env.action_spaces)
        self.single_observation_space = spaces.Dict(self.single_observation_spaces)
        self.single_action_space = spaces.Dict(self.single_action_spaces)
        self._all_games = np.arange(self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        return self.games.reset(self._all_games, seed=seed)

    def step(self, actions: Sequence[dict]):
        if len(actions) != self.num_envs:
            raise ValueError(f"actions must hold one dict per game ({self.num_envs}), got {len(actions)}")
        pending = self.games.over.copy()  # ended in the last step: dealt again now
        stepped = self.games.step(actions, ~pending)
        if not pending.any():
            return stepped
        games = np.flatnonzero(pending)
        dealt_observations, dealt_infos = self.games.reset(games)
        results = ([], [], [], [], [])
        stepped_rows, dealt_rows = iter(zip(*stepped)), iter(zip(dealt_observations, dealt_infos))
        for g in range(self.num_envs):
            if pending[g]:
                observation, info = next(dealt_rows)
                row = (observation, {}, {"__all__": False}, {"__all__": False}, info)
            else:
                row = next(stepped_rows)
            for column, value in zip(results, row):
                column.append(value)
        return results


class HPUnoEnvRunner(MultiAgentEnvRunner):
    """RLlib's ``MultiAgentEnvRunner`` with all of its ``num_envs_per_env_runner`` games in one
    ``HPUnoVectorMultiAgentEnv``: ``config.env_runners(env_runner_cls=HPUnoEnvRunner)``.

    The game options come from ``config.env_config``; RLlib's env check (unless
    ``disable_env_checking``) runs on one ``HPUnoMultiAgentEnv``.

    ``sample(num_timesteps=...)`` runs ``BatchSampler`` (``hpuno_env.rllib_sampling``): the same episodes
    RLlib's loop builds, from arrays. RLlib's own loop samples instead (dealing every game afresh)
    where the batched one would not do what it does: random actions, ``num_episodes``, steps counted
    as agent steps, custom connectors, per-episode callbacks.

    Seeding is RLlib's (Python's, numpy's and torch's generators from ``config.seed`` plus
    the runner's index, the games' first reset from the same number) without its
    ``torch.use_deterministic_algorithms(True)``: that call imports torch's compiler
    (``torch._inductor``, about 2 s of every runner's start on a 2-core machine), and the
    runner's CPU forward passes draw the same numbers with or without it. The sampled step
    counts RLlib logs are counted and logged once per ``sample()`` (``_increase_sampled_metrics``).
    """

    def __init__(self, *, config, **kwargs):
        self._sampled = collections.Counter()  # what _increase_sampled_metrics counted since the last log
        self._sampler = None  # the BatchSampler, once it samples
        seed = config.seed
        unseeded = config.copy(copy_frozen=False)
        unseeded.seed = None
        super().__init__(config=unseeded, **kwargs)
        self.config.seed = seed
        if seed is not None:  # the number RLlib's EnvRunner.__init__ computes
            self._seed = int(seed + (self.worker_index or 0) + 1e6 * self.config.in_evaluation)
            random.seed(self._seed)
            np.random.seed(self._seed)
            torch.manual_seed(self._seed)

    def _increase_sampled_metrics(self, num_steps, next_obs, episode):
        """Counts what RLlib's own method logs, for ``_sample`` to log once: RLlib logs six values per
        env step (a quarter of its loop's time with 64 games, in ``MetricsLogger.log_value``). Both
        methods override private ones of RLlib 2.60's ``MultiAgentEnvRunner``; ``tests/env/test_rllib.py``
        checks the counts logged."""
        sampled = self._sampled
        sampled[NUM_ENV_STEPS_SAMPLED] += num_steps
        sampled[NUM_EPISODES] += episode.is_done
        for agent in next_obs:
            sampled[NUM_AGENT_STEPS_SAMPLED, str(agent)] += 1
            sampled[NUM_MODULE_STEPS_SAMPLED, episode.module_for(agent)] += 1
        return num_steps

    def _sample(self, *, num_timesteps=None, num_episodes=None, explore, random_actions=False, force_reset=False):
        try:
            if self._batched_sampling_applies(num_timesteps, random_actions):
                return self._sample_batched(num_timesteps, explore, force_reset)
            # RLlib's loop shares the engine: it deals afresh after the batched sampler has played on
            force_reset = force_reset or self._sampler is not None
            self._sampler = None
            return super()._sample(num_timesteps=num_timesteps, num_episodes=num_episodes, explore=explore,
                                   random_actions=random_actions, force_reset=force_reset)
        finally:  # the counts of ``_increase_sampled_metrics``, under RLlib's names and reductions
            self._log_sampled_counts()

    def _batched_sampling_applies(self, num_timesteps, random_actions) -> bool:
        """Whether ``BatchSampler`` does what RLlib's loop would: timesteps counted as env steps, actions
        from the module, RLlib's default connectors and no per-episode callbacks."""
        config = self.config
        if num_timesteps is None or random_actions or self.module is None or config.count_steps_by != "env_steps":
            return False
        if config._env_to_module_connector is not None or config._module_to_env_connector is not None:
            return False
        hooks = ("on_episode_created", "on_episode_start", "on_episode_step", "on_episode_end")
        if any(getattr(config, f"callbacks_{hook}") for hook in hooks):
            return False
        return not any(getattr(type(callback), hook) is not getattr(RLlibCallback, hook)
                       for callback in self._callbacks for hook in hooks)

    def _sample_batched(self, num_timesteps: int, explore: bool, force_reset: bool) -> list:
        """``BatchSampler``'s sample, kept where RLlib's runner keeps its episodes for ``get_metrics``."""
        if self._sampler is None or force_reset or self._needs_initial_reset:
            self._sampler = BatchSampler(self)
            self._sampler.reset(self._seed if self._needs_initial_reset else None)
            self._needs_initial_reset = False
            self._ongoing_episodes_for_metrics.clear()
        episodes, counts = self._sampler.sample(num_timesteps, explore)
        done = [episode for episode in episodes if episode.is_done]
        self._done_episodes_for_metrics.extend(done)
        for episode in episodes[len(done):]:
            self._ongoing_episodes_for_metrics[episode.id_].append(episode)
        sampled = self._sampled
        sampled[NUM_ENV_STEPS_SAMPLED] += counts["env_steps"]
        sampled[NUM_EPISODES] += counts["episodes"]
        for agent, count in zip(self._sampler.agents, counts["agents"].tolist()):
            sampled[NUM_AGENT_STEPS_SAMPLED, agent] += count
        for module_id, count in counts["modules"].items():
            sampled[NUM_MODULE_STEPS_SAMPLED, module_id] += count
        if counts["env_steps"]:
            self._log_env_steps(metric=self._metrics_num_env_steps_sampled, num_steps=counts["env_steps"])
        return episodes

    def _log_sampled_counts(self) -> None:
        lifetime = {NUM_ENV_STEPS_SAMPLED: NUM_ENV_STEPS_SAMPLED_LIFETIME, NUM_EPISODES: NUM_EPISODES_LIFETIME,
                    NUM_AGENT_STEPS_SAMPLED: NUM_AGENT_STEPS_SAMPLED_LIFETIME,
                    NUM_MODULE_STEPS_SAMPLED: NUM_MODULE_STEPS_SAMPLED_LIFETIME}
        for key, count in self._sampled.items():
            name, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
            if count or name == NUM_ENV_STEPS_SAMPLED:
                self.metrics.log_value((name, *rest) if rest else name, count, reduce="sum")
                self.metrics.log_value((lifetime[name], *rest) if rest else lifetime[name], count,
                                       reduce="lifetime_sum", with_throughput=name == NUM_ENV_STEPS_SAMPLED)
        self._sampled.clear()

    def make_env(self):
        if self.env is not None:
            self.env.close()
        env_context = self.config.env_config
        if not isinstance(env_context, EnvContext):
            env_context = EnvContext(env_context, worker_index=self.worker_index, num_workers=self.config.num_env_runners,
                                     remote=self.config.remote_worker_envs)
        if not self.config.disable_env_checking:
            check_multiagent_environments(HPUnoMultiAgentEnv(env_context))
        self.env = HPUnoVectorMultiAgentEnv(self.config.num_envs_per_env_runner, env_context)
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True
        self._sampler = None  # it steps the engine of the env it was made for
        make_callback(
            "on_environment_created",
            callbacks_objects=self._callbacks,
            callbacks_functions=self.config.callbacks_on_environment_created,
            kwargs=dict(env_runner=self, metrics_logger=self.metrics, env=self.env, env_context=env_context),
        )


# ------------------------------------------------------------ the network


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO network on ``"observations"``, with the logits of the actions that
    ``"action_mask"`` forbids set to the lowest float, so they are never sampled.

    It reads the observation Dict that RLlib's example ``ActionMaskingTorchRLModule``
    reads (the env suits both); this one builds on ``DefaultPPOTorchRLModule``
    (the example's base class is deprecated in RLlib 2.60) and leaves the batch
    it is given unchanged.
    """

    def __init__(self, *, observation_space=None, **kwargs):
        if not (isinstance(observation_space, spaces.Dict) and {"observations", "action_mask"} <= set(observation_space.spaces)):
            raise ValueError(f"observation_space must be a Dict with 'observations' and 'action_mask', got {observation_space}")
        super().__init__(observation_space=observation_space["observations"], **kwargs)
        # The networks are built for the observations alone; the module's space (what
        # RLlib reads to rebuild it from a checkpoint) is the env's, with the mask.
        self.observation_space = observation_space

    def _forward(self, batch, **kwargs):
        mask, batch = _split_mask(batch)
        encoder = self.encoder
        if encoder.config.shared or getattr(encoder, "critic_encoder", None) is None or self.is_stateful():
            return _mask_logits(super()._forward(batch, **kwargs), mask)
        # The actor's encoder alone: RLlib's _forward runs the critic's too, for nothing, in every env
        # runner (RLlib builds a runner's modules of a multi-agent spec with their critics).
        return _mask_logits({Columns.ACTION_DIST_INPUTS: self.pi(encoder.actor_encoder(batch)[ENCODER_OUT])}, mask)

    def _forward_train(self, batch, **kwargs):
        mask, batch = _split_mask(batch)
        return _mask_logits(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch, embeddings=None):
        if embeddings is None:
            _, batch = _split_mask(batch)
        return super().compute_values(batch, embeddings)


def _split_mask(batch: dict) -> tuple[Any, dict]:
    """(action mask, a shallow copy of batch whose observations are the plain vectors)."""
    observations = batch[Columns.OBS]
    batch = dict(batch)
    batch[Columns.OBS] = observations["observations"]
    return observations["action_mask"], batch


def _mask_logits(outputs: dict, mask) -> dict:
    logits = outputs[Columns.ACTION_DIST_INPUTS]
    outputs[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask <= 0, FLOAT_MIN)
    return outputs


# ------------------------------------------------------------ self-play


def shared_policy_mapping(agent_id, episode, **kwargs) -> str:
    """Every seat plays the one trained policy (self-play with shared parameters)."""
    return SHARED_POLICY


class LeagueMapping:
    """One seat per game is the learner, every other seat one of ``num_frozen`` frozen snapshots.

    The choice is a function of the episode id and the agent (CRC32), so it is the
    same whichever process asks and whenever; over many games every seat is the
    learner's equally often and every snapshot is met equally often.
    """

    def __init__(self, num_players: int, num_frozen: int):
        num_frozen = check_positive_int(num_frozen, "num_frozen")
        self.num_players, self.num_frozen = num_players, num_frozen

    def __call__(self, agent_id, episode, **kwargs) -> str:
        learner_seat = zlib.crc32(episode.id_.encode()) % self.num_players
        if agent_id == f"player_{learner_seat}":
            return LEARNER_POLICY
        return frozen_policy(zlib.crc32(f"{episode.id_}/{agent_id}".encode()) % self.num_frozen)


class FrozenLeague:
    """Keeps the league's frozen snapshots: all copies of the learner at the start, then every
    ``snapshot_every`` training iterations the oldest one becomes the learner's current weights.

    Register both hooks: ``config.callbacks(on_algorithm_init=league.on_algorithm_init,
    on_train_result=league.on_train_result)`` (``ppo_config`` does).
    """

    def __init__(self, num_frozen: int, snapshot_every: int):
        snapshot_every = check_positive_int(snapshot_every, "snapshot_every")
        self.num_frozen, self.snapshot_every = num_frozen, snapshot_every
        self.next_slot = 0

    def on_algorithm_init(self, *, algorithm, **kwargs) -> None:
        self._copy_learner(algorithm, [frozen_policy(i) for i in range(self.num_frozen)])

    def on_train_result(self, *, algorithm, result: dict, **kwargs) -> None:
        if algorithm.iteration % self.snapshot_every == 0:
            self._copy_learner(algorithm, [frozen_policy(self.next_slot)])
            result["league_refreshed"] = frozen_policy(self.next_slot)
            self.next_slot = (self.next_slot + 1) % self.num_frozen

    @staticmethod
    def _copy_learner(algorithm, module_ids: list[str]) -> None:
        learners = algorithm.learner_group
        weights = learners.get_weights([LEARNER_POLICY])[LEARNER_POLICY]
        learners.set_weights({module_id: weights for module_id in module_ids})
        # Set on every env runner and waited for: EnvRunnerGroup.sync_weights sends its request
        # asynchronously and drops it while another sync is in flight (as one is, right after
        # the algorithm's own syncs), so the runners could keep playing the old snapshot.
        component = "learner/rl_module"
        state = learners.get_state(components=[f"{component}/{module_id}" for module_id in module_ids],
                                   inference_only=True)["learner"]["rl_module"]
        algorithm.env_runner_group.foreach_env_runner(lambda runner: runner.module.set_state(state), local_env_runner=True)


# ------------------------------------------------------------ PPO


# What PPO's update does beyond the options, as Stable-Baselines3's PPO (train.py) does it (ppo_config).
SB3_UPDATE = {"vf_loss_coeff": 0.5, "grad_clip": 0.5, "grad_clip_by": "global_norm", "use_kl_loss": False, "kl_coeff": 0.0,
              "vf_clip_param": float("inf")}


def ppo_config(num_players: int = 2, *, runners: int = 2, games_per_runner: int = 64, batched: bool = True,
               league: int = 0, snapshot_every: int = 5, train_batch: int = 4096, minibatch: int = 512, epochs: int = 4,
               lr: float = 3e-4, entropy_coeff: float = 0.01, gamma: float = 0.99, gae_lambda: float = 0.8,
               clip_range: float = 0.2, hidden: Sequence[int] = (256, 256), scale_observations: bool = True, learners: int = 0, learner_gpus: float = 0.0, seed: int | None = 0,
               **rule_options) -> PPOConfig:
    """PPO with action masking (``MaskedPPOTorchRLModule``) on Harry Potter UNO self-play.

    Args:
        num_players: seats per game.
        runners: env runner processes (0: sample in the driver).
        games_per_runner: games each runner steps together.
        batched: all of a runner's games in one engine (``HPUnoEnvRunner``), else RLlib's
            ``SyncVectorMultiAgentEnv`` over ``HPUnoMultiAgentEnv`` copies.
        league: 0 for one shared policy at every seat; k > 0 for a ``"learner"`` against
            k frozen snapshots of itself (``LeagueMapping``), refreshed every
            ``snapshot_every`` iterations (``FrozenLeague``).
        train_batch, minibatch, epochs, lr, entropy_coeff, gamma, gae_lambda, clip_range, hidden: PPO's and
            the network's (the batch and minibatch sizes over all learners together), named and defaulted as
            train.py's. The rest of the update is set as Stable-Baselines3's PPO, which train.py runs: value
            loss weight 0.5, gradients clipped to a global norm of 0.5, no KL penalty and no value clipping
            (RLlib's defaults are 1.0, no clipping, a KL penalty of 0.2 and a value clip of 10), so that a
            recipe moves between the two.
        scale_observations: observations times ``encoding.observation_scale``.
        learners: learner processes (RLlib's ``num_learners``), each updating on its share of the
            batch, their gradients averaged; 0: one learner in the driver's process.
        learner_gpus: GPUs per learner (RLlib's ``num_gpus_per_learner``; 0: CPU).
        seed: seeds the games and the networks.
        **rule_options: ``RulesOptions`` fields.

    Build with ``.build_algo()`` after ``ray.init()``.
    """
    league = check_int(league, "league (the number of frozen snapshots)", low=0)
    learners = check_int(learners, "learners", low=0)
    if not learner_gpus >= 0:
        raise ValueError(f"learner_gpus must be >= 0, got {learner_gpus}")
    env_config = {"num_players": num_players, "scale_observations": scale_observations, "seed": seed, **rule_options}
    HPUnoMultiAgentEnv(env_config)  # bad options fail here, in the caller, not in a worker
    module = RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                          model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": [], "vf_share_layers": False})
    shares = max(learners, 1)
    if league:
        module_ids = [LEARNER_POLICY] + [frozen_policy(i) for i in range(league)]
        mapping, trained = LeagueMapping(num_players, league), [LEARNER_POLICY]
    else:
        module_ids, mapping, trained = [SHARED_POLICY], shared_policy_mapping, [SHARED_POLICY]
    config = (
        PPOConfig()
        .environment(HPUnoMultiAgentEnv, env_config=env_config)
        .env_runners(num_env_runners=runners, num_envs_per_env_runner=games_per_runner,
                     env_runner_cls=HPUnoEnvRunner if batched else MultiAgentEnvRunner)
        .multi_agent(policies=set(module_ids), policy_mapping_fn=mapping, policies_to_train=trained)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={module_id: module for module_id in module_ids}))
        # RLlib's batch sizes are per learner: each learner samples and updates on its share
        .training(train_batch_size_per_learner=-(-train_batch // shares), minibatch_size=-(-minibatch // shares),
                  num_epochs=epochs, lr=lr, entropy_coeff=entropy_coeff, gamma=gamma, lambda_=gae_lambda,
                  clip_param=clip_range, **SB3_UPDATE)
        .learners(num_learners=learners, num_gpus_per_learner=learner_gpus)
        .debugging(seed=seed)
    )
    if league:
        keeper = FrozenLeague(league, snapshot_every)
        config.callbacks(on_algorithm_init=keeper.on_algorithm_init, on_train_result=keeper.on_train_result)
    return config


class RLModulePolicy:
    """A trained masking module as a batched player: ``act(observations, action_masks)`` takes the
    engine's int8 views and bool masks (as ``agents`` players do) and returns the greedy legal
    actions, so ``agents.evaluation.rounds.win_rate`` can measure it.

    ``scale_observations`` must be what the module was trained with.
    """

    def __init__(self, module, num_players: int, scale_observations: bool = True):
        self.module, self.num_players = module, num_players
        self.observation_format = ObservationFormat(num_players, np.float32, scale_observations)

    def act(self, observations, action_masks) -> np.ndarray:
        batch = {Columns.OBS: {
            "observations": torch.from_numpy(self.observation_format(np.asarray(observations))),
            "action_mask": torch.from_numpy(np.asarray(action_masks, dtype=np.float32)),
        }}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return logits.argmax(dim=1).numpy()
