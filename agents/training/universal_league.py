"""``--opponent league`` in a universal run: at every table of the mixture, a league (``agents.training.league``)
of the heuristic, the learner's own snapshots and the shipped specialists made for that table.

Each table's league draws the player of every opponent seat afresh for each game, with ``WEIGHTS``: a group
without members (no snapshot yet; no specialist at most tables) gives its share to the others. A snapshot is the
learner frozen as a universal agent file, OUT/league/NAME.safetensors, taken at each of the run's evaluations and
added at every table (it plays any player count and rules); the oldest leaves beyond ``MAX_SNAPSHOTS``. The
snapshots play sampling from their policy, as train.py's league snapshots do.
"""

from __future__ import annotations

import os
import warnings

from agents.players.trained import TrainedAgent, shipped_for
from agents.training.agent_file import export
from agents.training.league import League
from hpuno_env._checks import SEED_LIMIT
from hpuno_env.universal import universal_scale

# Each group's share of the opponent seats at a table: the heuristic, the bar every table is measured by, keeps the
# largest; snapshots keep the learner from forgetting how to beat its own past play; the specialists (split among
# them) bring the strongest play known at their tables.
WEIGHTS = {"heuristic": 0.5, "snapshots": 0.3, "specialists": 0.2}
MAX_SNAPSHOTS = 8


class UniversalLeague:
    """One ``League`` per table of a ``HPUnoMixtureVecEnv``, installed in its ``SeatBatch``.

    Args:
        tables: the run's ``TrainingTable``s, in the env's order.
        game_env: the ``HPUnoMixtureVecEnv`` of those tables.
        out: the run folder; snapshots go to OUT/league/.
        seed: seeds each table's draws and players (table i with ``seed + 1000 * i``).
        rules: the run's rules options, recorded in each snapshot's file.
    """

    def __init__(self, tables: list, game_env, out: str, seed: int, rules: dict):
        self.tables, self.out, self.seed, self.rules = tables, out, seed, rules
        self.leagues = []
        for index, (table, batch) in enumerate(zip(tables, game_env.batches, strict=True)):
            specialists = shipped_for(table.num_players, table.rules)
            weights = {"heuristic": WEIGHTS["heuristic"], "snapshots": WEIGHTS["snapshots"],
                       **{name: WEIGHTS["specialists"] / len(specialists) for name in specialists}}
            league = League(table.num_players, rule_based=("heuristic", *specialists), weights=weights,
                            max_snapshots=MAX_SNAPSHOTS, seed=(seed + 1000 * index + 2) % SEED_LIMIT)
            league.install(batch)
            self.leagues.append(league)

    @property
    def members(self) -> list:
        """The members of the first table's league: its snapshots are every table's (``save_checkpoint`` reads them)."""
        return self.leagues[0].members

    @property
    def snapshots_added(self) -> int:
        return self.leagues[0].snapshots_added

    def members_by_table(self) -> dict[str, list[str]]:
        return {table.label: league.names for table, league in zip(self.tables, self.leagues, strict=True)}

    def take_snapshot(self, model, name: str) -> None:
        """Freeze the learner as OUT/league/NAME.safetensors and add it at every table."""
        path = self._path(name)
        export(model, path, universal=True, rules_options=self.rules, observation_scale=universal_scale(),
               training={"league_snapshot": name})
        self.add_snapshot(name, model.num_timesteps)

    def add_snapshot(self, name: str, timesteps: int = 0) -> None:
        """Add the snapshot saved as OUT/league/NAME.safetensors at every table."""
        for index, (table, league) in enumerate(zip(self.tables, self.leagues, strict=True)):
            with warnings.catch_warnings():  # a universal agent plays every table's rules: no "other rules" warning
                warnings.simplefilter("ignore", UserWarning)
                agent = TrainedAgent.load(self._path(name), table.num_players, deterministic=False, rules_options=table.rules,
                                          seed=(self.seed + timesteps + index) % SEED_LIMIT)
            league.add_snapshot(agent, name)

    def restore(self, state: dict) -> None:
        """The snapshots of a checkpoint's state, back in every table's league."""
        for name in state.get("league_snapshots", []):
            self.add_snapshot(name)
        for league in self.leagues:
            league.snapshots_added = state.get("snapshots_added", 0)

    def _path(self, name: str) -> str:
        return os.path.join(self.out, "league", name + ".safetensors")
