"""Training on a mixture of tables: ``HPUnoMixtureVecEnv``, one Stable-Baselines3 ``VecEnv`` over several engines.

Each table is a ``SeatBatch`` of its own player count and rules (the learner
in a random seat of every game, the other seats played inside the batch by
opponent policies that read that table's own per-count observation). The
learner sees every table through the universal observation
(``hpuno_env.universal``), one fixed size for all, so one network learns
them all; ``action_masks()`` are the 75 actions of every table. The games of
table 0 come first in the batch, then table 1's, and so on.

Per-table episode statistics (``table_stats()``) and the ``"table"`` entry of
each finished game's info say which table paid what. This module imports
Stable-Baselines3 (and with it torch), as ``vector_env`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from ._checks import check_bool, check_positive_int, check_seed
from .cards import NUM_ACTIONS
from .heuristic import batch_actions, heuristic_weights
from .options import RulesOptions, check_num_players
from .seat_batch import SeatBatch, check_observation_dtype
from .universal import universal_observation, universal_scale, universal_size
from .vector_env import SharedAttributes

__all__ = ["HPUnoMixtureVecEnv", "HeuristicPolicy", "MixtureTable"]

# Tie-break noise of the heuristic's scores, as agents.load("heuristic") draws it.


class HeuristicPolicy:
    """The compiled heuristic (``hpuno_env.heuristic``) for one player count: the mixture's default opponent.

    It plays as ``agents.load("heuristic", num_players)``; it lives here because this package never imports
    ``agents``."""

    def __init__(self, num_players: int, seed: int | None = None):
        self.num_players = check_num_players(num_players)
        self._weights = heuristic_weights(self.num_players)
        self._scratch = np.zeros(256, np.float32)
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        self.rng = np.random.default_rng(check_seed(seed))

    def act(self, observations, action_masks) -> np.ndarray:
        masks = np.ascontiguousarray(action_masks, dtype=np.bool_)
        return batch_actions(np.ascontiguousarray(observations), masks, self.num_players, self._weights, self.rng, self._scratch)


@dataclass(frozen=True)
class MixtureTable:
    """One table of the mixture: its player count, its games in the batch and its rules options."""

    num_players: int
    num_envs: int = 64
    rules: dict = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "num_players", check_num_players(self.num_players))
        object.__setattr__(self, "num_envs", check_positive_int(self.num_envs, "num_envs"))
        if not isinstance(self.rules, dict):
            raise ValueError(f"a table's rules must be a dict of rules options, got {type(self.rules).__name__}")
        RulesOptions.from_kwargs(**self.rules)  # an unknown option or a bad value: ValueError now


# What the opponent argument may be: a policy that plays every table, or a function (num_players, rules, seed) -> policy.
OpponentFactory = Callable[[int, dict, "int | None"], object]


class HPUnoMixtureVecEnv(SharedAttributes, VecEnv):
    """Stable-Baselines3 VecEnv over several tables of different player counts and rules, in universal observations.

    Args:
        tables: ``MixtureTable``s, or player counts (each a table of ``num_envs_per_table`` games under the default rules).
        num_envs_per_table: games of a table given as a bare player count.
        opponent: None (``HeuristicPolicy`` at every table), an object with ``act(observations, action_masks)``
            that plays every table (it gets each table's per-count observations, so it must not be tied to one
            player count), or a function ``(num_players, rules, seed) -> policy`` called once per table.
        seed: seeds table i with ``seed + 1000 * i`` (its engine, the learner's seats, its opponent).
        observation_dtype: np.float32 (default) or np.int8.
        scale_observations: multiply by ``universal_scale()`` (float32 only).
        illegal_action: ``"raise"`` or ``"lose"``, as ``SeatBatch``.
        wins_only: pay the learner only what it wins (a negative reward becomes 0). With ``reward="win"`` its
            return is then 1 for a won round and 0 for a lost or truncated one, so the return is the win rate.
            With the rules' -1 for a loss, a learner that wins less than half its rounds (a fair share at three
            or more players) does better by stalling a round to its ``max_turns`` truncation (0 for everyone)
            than by playing on; it can stall by drawing until it holds the whole deck.

    >>> from sb3_contrib import MaskablePPO
    >>> env = HPUnoMixtureVecEnv([2, 3, 6], num_envs_per_table=32, seed=0)
    >>> model = MaskablePPO("MlpPolicy", env).learn(10_000)
    """

    def __init__(self, tables: Sequence, num_envs_per_table: int = 64, opponent=None, seed: int | None = None,
                 observation_dtype=np.float32, scale_observations: bool = False, illegal_action: str = "raise",
                 wins_only: bool = False):
        num_envs_per_table = check_positive_int(num_envs_per_table, "num_envs_per_table")
        self.tables = [table if isinstance(table, MixtureTable) else MixtureTable(table, num_envs_per_table) for table in tables]
        if not self.tables:
            raise ValueError("tables must hold at least one table")
        seed = check_seed(seed)
        self.wins_only = check_bool(wins_only, "wins_only")
        self.batches = [SeatBatch(table.num_envs, table.num_players, "random", self._opponent_for(opponent, table, seed, index),
                                  self._table_seed(seed, index), illegal_action, self.wins_only, **table.rules)
                        for index, table in enumerate(self.tables)]
        self.dtype = check_observation_dtype(observation_dtype)
        self.scale = universal_scale() if check_bool(scale_observations, "scale_observations") else None
        if self.scale is not None and self.dtype != np.float32:
            raise ValueError("scale_observations=True needs observation_dtype=np.float32 (scaled values are fractions)")
        high = np.full(universal_size(), 127, np.float32) * (1.0 if self.scale is None else self.scale)
        self.render_mode = None
        sizes = [table.num_envs for table in self.tables]
        self.bounds = np.cumsum([0, *sizes])
        # Which table each game slot of the batch belongs to.
        self.table_of_game = np.repeat(np.arange(len(self.tables)), sizes)
        super().__init__(int(self.bounds[-1]), spaces.Box(np.zeros_like(high, self.dtype), high.astype(self.dtype), dtype=self.dtype),
                         spaces.Discrete(NUM_ACTIONS))
        self._actions = np.zeros(self.num_envs, np.int64)
        self._returns = np.zeros(self.num_envs, np.float64)
        self.reset_table_stats()

    @staticmethod
    def _table_seed(seed: int | None, index: int) -> int | None:
        return None if seed is None else seed + 1000 * index

    def _opponent_for(self, opponent, table: MixtureTable, seed: int | None, index: int):
        opponent_seed = None if seed is None else self._table_seed(seed, index) + 1
        if opponent is None:
            return HeuristicPolicy(table.num_players, opponent_seed)
        if callable(getattr(opponent, "act", None)):
            return opponent
        if callable(opponent):
            return opponent(table.num_players, dict(table.rules), opponent_seed)
        raise ValueError(f"opponent must be None, a policy with act(observations, action_masks) or a function "
                         f"(num_players, rules, seed) -> policy, got {type(opponent).__name__}")

    # ------------------------------------------------------------ the VecEnv

    def _universal(self, per_table: list[np.ndarray]) -> np.ndarray:
        """Each table's per-count rows, converted and stacked in this env's format."""
        out = np.empty((self.num_envs, universal_size()), self.dtype)
        for index, (table, rows) in enumerate(zip(self.tables, per_table, strict=True)):
            out[self.bounds[index]: self.bounds[index + 1]] = universal_observation(rows, table.num_players, table.rules)
        if self.scale is not None:
            out *= self.scale
        return out

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        self._seeds = []
        observations = [batch.reset(seed=self._table_seed(seed, index))[0] for index, batch in enumerate(self.batches)]
        self._returns[:] = 0.0
        return self._universal(observations)

    def step_async(self, actions) -> None:
        self._actions = np.asarray(actions)

    def step_wait(self):
        if self._actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {self._actions.shape}")
        results = [batch.step(self._actions[self.bounds[index]: self.bounds[index + 1]]) for index, batch in enumerate(self.batches)]
        rewards = np.concatenate([result[2] for result in results])
        terminated = np.concatenate([result[3] for result in results])
        truncated = np.concatenate([result[4] for result in results])
        dones = terminated | truncated
        infos = [{} for _ in range(self.num_envs)]
        self._returns += rewards
        if dones.any():
            terminal = self._universal([result[5] for result in results])
            for game in np.flatnonzero(dones):
                infos[game]["terminal_observation"] = terminal[game]
                infos[game]["TimeLimit.truncated"] = bool(truncated[game] and not terminated[game])
                infos[game]["table"] = int(self.table_of_game[game])
            self._count_episodes(np.flatnonzero(dones))
        return self._universal([result[0] for result in results]), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, 75) bool: what MaskablePPO asks for before each step."""
        for batch in self.batches:
            batch.check_usable("action_masks()")
        return np.concatenate([batch.masks for batch in self.batches])

    # ------------------------------------------------------------ per-table statistics

    def _count_episodes(self, games: np.ndarray) -> None:
        tables = self.table_of_game[games]
        np.add.at(self._episodes, tables, 1)
        np.add.at(self._wins, tables, self._returns[games] > 0)
        np.add.at(self._return_sums, tables, self._returns[games])
        self._returns[games] = 0.0

    def reset_table_stats(self) -> None:
        """Start the per-table episode counts afresh."""
        self._episodes = np.zeros(len(self.tables), np.int64)
        self._wins = np.zeros(len(self.tables), np.int64)
        self._return_sums = np.zeros(len(self.tables), np.float64)

    def table_stats(self) -> list[dict]:
        """Per table since the last ``reset_table_stats``: num_players, rules, episodes, wins (episodes whose return
        was positive), win_rate and mean_return (None before its first episode)."""
        return [{"num_players": table.num_players, "rules": dict(table.rules), "episodes": int(episodes), "wins": int(wins),
                 "win_rate": float(wins / episodes) if episodes else None,
                 "mean_return": float(total / episodes) if episodes else None}
                for table, episodes, wins, total in zip(self.tables, self._episodes, self._wins, self._return_sums, strict=True)]
