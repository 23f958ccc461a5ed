"""Ray RLlib's env side: a ``MultiAgentEnv`` and a batched env runner.

RLlib (``pip install "hpuno-env[rllib]"``) is imported by this module and
``rllib_sampling`` only, never by ``import hpuno_env``. What RLlib learns with
(the masking network, self-play mappings, the frozen league, ``ppo_config``, a
trained module as a player) is ``agents.training.rllib_learner``.

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

The env's ``config`` (RLlib's ``env_config``) holds ``num_players`` (default 2),
``illegal_action`` (``"lose"``, the default: the mover loses the round, -1 to it
and 0 to the others, as the wrapped PettingZoo ``env()`` does, which is what RLlib's
env check needs, since it steps one unmasked random action; or ``"raise"``:
``ValueError``, nothing changes), ``scale_observations`` (default False;
``encoding.observation_scale``), ``seed``, and any rule option of ``RulesOptions``.

Two of RLlib's log lines that say nothing a user can act on are dropped,
in every process that imports this module (the env runners and the learner's
module do): RLlib 2.60's ``RLModule.__init__`` builds the deprecated
``RLModuleConfig`` itself, for every module including its own defaults, and
warns about it; and ``AlgorithmConfig`` announces that the new API stack, which
``ppo_config`` uses on purpose, is the default (``QUIETED_MESSAGES``).
Everything else RLlib and Ray log is left as it is.

Rewards: whatever a seat is paid between two of its decisions (a round's end
while another seat moves, ``reward="points"`` of a match) is handed to it with
its next observation, so RLlib credits it to that seat's last action.

The learner's names that hpuno-env 0.2 kept here (``MOVED_TO_LEARNER``) still
resolve, with a ``DeprecationWarning``, through the next release: RLlib
checkpoints written by 0.2 name them here.
"""

from __future__ import annotations

import collections
import importlib
import logging
import random
import warnings
from collections.abc import Sequence

import numpy as np
import torch

try:
    import ray  # noqa: F401  (the import error below names the extra to install)
    from ray.rllib.callbacks.callbacks import RLlibCallback
    from ray.rllib.callbacks.utils import make_callback
    from ray.rllib.env.env_context import EnvContext
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
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
    from ray.rllib.utils.pre_checks.env import check_multiagent_environments
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError('hpuno_env.rllib needs Ray RLlib: pip install "hpuno-env[rllib]"') from error

from gymnasium import spaces

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

# The learner's names, at home in LEARNER_MODULE, that hpuno-env 0.2 kept here. An RLlib checkpoint pickles its
# module class, policy mapping and league callbacks by their module's path, so a 0.2 run's checkpoint names this
# module; ``__getattr__`` resolves them on first use (importing this module never imports agents), with a
# DeprecationWarning, through the next release. tests/test_layers.py allows this one reference to agents.
LEARNER_MODULE = "agents.training.rllib_learner"
MOVED_TO_LEARNER = frozenset({
    "FrozenLeague", "LEARNER_POLICY", "LeagueMapping", "MaskedPPOTorchRLModule", "RLModulePolicy", "SB3_UPDATE",
    "SHARED_POLICY", "frozen_policy", "ppo_config", "shared_policy_mapping",
})


def __getattr__(name: str):
    if name in MOVED_TO_LEARNER:
        warnings.warn(f"hpuno_env.rllib.{name} is {LEARNER_MODULE}.{name}: import it from there "
                      "(the alias is kept through the next release only)", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(LEARNER_MODULE), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
