"""The tables a run trains at: what the one training loop (agents/training/run.py) leaves to them.

A run trains one network at one table (``OneTable``: --players seats under the run's rules, in that count's
observation, against --opponent) or at a mixture of tables (``TableMixture`` in agents/training/universal.py:
--tables, in the universal observation, against the heuristic or a league at each table). Both are ``Tables``,
a list of ``TrainingTable`` (one, or the mixture's), and the loop asks the same of either, in this order:

- ``kernel_players`` and ``game_env``: the player count the rules kernel is loaded for, and the vec env the
  learner plays;
- ``warm_start``: fit a new network before PPO (the mixture also refits a resumed one to --teachers), recorded in
  config.json;
- ``install_opponents``: who plays the other seats; a league (agents/training/league.py) is kept in ``leagues``,
  one a table, its snapshots the learner frozen by ``frozen_learner`` into OUT/league/;
- ``add_to_config``: what config.json says of the tables;
- ``evaluate``: a point of the learning curve, written to ``evaluations_file`` (and the league's snapshot);
- ``final_evaluation``: the evaluation the agent file carries; ``export`` writes the agent (and each snapshot).

``evaluates_after_update`` says when a point of the curve is taken: a single table measures the weights that
played the step at which the point is due (before the update of that step's rollout), and may snapshot them; the
mixture measures, and snapshots, the weights that the update after that step leaves.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import partial

from tqdm import tqdm

from agents import players
from agents.evaluation.rounds import win_rate
from agents.players.trained import TrainedAgent
from agents.training.agent_file import export, live_agent
from agents.training.final_table import final_table
from agents.training.league import League
from agents.training.model import warm_started
from agents.training.opponents import install_opponents
from agents.training.options import CURVE_OPPONENTS, TrainingOptions
from agents.training.run_folder import EVALUATION_COLUMNS, snapshot_path
from hpuno_env import HPUnoVecEnv
from hpuno_env._checks import SEED_LIMIT
from hpuno_env.encoding import observation_scale


@dataclass(frozen=True)
class TrainingTable:
    """A table a run trains at: its label ("2"; at a mixture also "4 house": every house rule on, Harry Potter deck,
    or "4 house classic": on the classic deck), its player count and its rules options."""

    label: str
    num_players: int
    rules: dict


class Tables(ABC):
    """What the training loop asks of the tables of a run (module docstring): ``OneTable`` and ``TableMixture``."""

    evaluations_file, evaluation_columns = "evaluations.csv", EVALUATION_COLUMNS
    evaluates_after_update = False
    final_description = ""  # the final evaluation's size, after its rounds: "rounds a cell, seats rotated"

    def __init__(self, options: TrainingOptions, tables: list[TrainingTable]):
        self.options, self.tables = options, tables
        self.leagues: list[League] = []

    @property
    def league(self) -> League | None:
        """The first table's league, or None: its snapshots are every table's (a checkpoint records them)."""
        return self.leagues[0] if self.leagues else None

    @property
    @abstractmethod
    def kernel_players(self) -> int:
        """The player count the "rules kernel" step loads the compiled rules for."""

    @abstractmethod
    def game_env(self):
        """The vec env the learner plays (its games seeded with --seed)."""

    @abstractmethod
    def fit_description(self) -> str | None:
        """What the fit before PPO (``warm_start``) does, or None where there is none."""

    @abstractmethod
    def warm_start(self, model, config: dict) -> float:
        """The fit before PPO, recorded in ``config``; the seconds it took."""

    @abstractmethod
    def install_opponents(self, model, game_env, state: dict) -> None:
        """Who plays the other seats of ``game_env``; a league's snapshots those of the checkpoint ``state``."""

    @abstractmethod
    def add_to_config(self, config: dict, game_env) -> None:
        """What config.json says of the tables, beyond the options."""

    @abstractmethod
    def describe(self, game_env) -> str:
        """The tables, as the line that starts PPO names them."""

    @abstractmethod
    def evaluate(self, training, start: bool = False) -> dict[str, float]:
        """A point of the learning curve (``start``: the fitted network's), written to ``training.evaluations``;
        {name: win rate} for the progress bar."""

    @abstractmethod
    def final_evaluation(self, model, training) -> dict:
        """The final evaluation, its rows in ``training.evaluations``; what the agent file's metadata says of it."""

    @abstractmethod
    def export(self, model, path: str, **metadata) -> dict:
        """Write the live model as an agent file for these tables (the agent, or a league snapshot)."""

    @abstractmethod
    def loading_hint(self, path: str) -> str:
        """How to load the agent at ``path``."""

    def frozen_learner(self, model, name: str) -> list[TrainedAgent]:
        """The learner frozen as the league snapshot NAME (OUT/league/NAME.safetensors): its agent at each table."""
        self.export(model, snapshot_path(self.options.run.out, name), training={"league_snapshot": name})
        return self.snapshots(name, model.num_timesteps)

    def snapshots(self, name: str, timesteps: int) -> list[TrainedAgent]:
        """The saved snapshot NAME at each table, sampling from its policy (seeded with ``timesteps``, the step count
        it was taken at, and the table)."""
        path, seed = snapshot_path(self.options.run.out, name), self.options.run.seed
        agents = []
        for index, table in enumerate(self.tables):
            with warnings.catch_warnings():  # made under the run's rules; a universal one plays every table's
                warnings.simplefilter("ignore", UserWarning)
                agents.append(TrainedAgent.load(path, table.num_players, deterministic=False, rules_options=table.rules,
                                                seed=(seed + timesteps + index) % SEED_LIMIT))
        return agents

    def restore_snapshots(self, state: dict) -> None:
        """The league snapshots of a checkpoint's ``state``, back at every table."""
        for name in state.get("league_snapshots", []):
            for league, agent in zip(self.leagues, self.snapshots(name, 0), strict=True):
                league.add_snapshot(agent, name)
        for league in self.leagues:
            league.snapshots_added = state.get("snapshots_added", 0)


class OneTable(Tables):
    """One table of --players seats under the run's rules: the learner in a random seat, --opponent in the others;
    the curve against CURVE_OPPONENTS, the final table against the fixed players and the held-out one."""

    final_description = "rounds a cell, seats rotated"

    def __init__(self, options: TrainingOptions):
        run = options.run
        super().__init__(options, [TrainingTable(str(run.players), run.players, run.rules)])
        self.scale = observation_scale(run.players) if options.ppo.scale_observations else None
        self.learner, self.curve_opponents = None, {}

    @property
    def kernel_players(self) -> int:
        return self.options.run.players

    def game_env(self) -> HPUnoVecEnv:
        run, ppo = self.options.run, self.options.ppo
        return HPUnoVecEnv(num_envs=run.envs, num_players=run.players, learner_seat="random", seed=run.seed,
                           scale_observations=ppo.scale_observations, critic_sees_hands=ppo.critic == "hands", **run.rules)

    def fit_description(self) -> str | None:
        """What the warm start does (a new run's, unless --warm-start none), or None."""
        teacher = self.options.warm_start.teacher
        if teacher == "none" or self.options.run.resume:
            return None
        return f"the new network learns {teacher}'s choices before PPO"

    def warm_start(self, model, config: dict) -> float:
        """Fit the new network to --warm-start's decisions (config["warm_start"]); the seconds it took."""
        config["warm_start"] = warm_started(model, self.options.warm_start, self.options.run, self.options.ppo.scale_observations)
        return config["warm_start"]["seconds"]

    def install_opponents(self, model, game_env, state: dict) -> None:
        run = self.options.run
        learner = partial(live_agent, model, run.players, observation_scale=self.scale)  # (deterministic, seed=None)
        league = install_opponents(self.options.opponents, run, game_env, learner)
        self.leagues = [league] if league is not None else []
        self.restore_snapshots(state)
        self.learner = learner(True)
        self.curve_opponents = {name: players.load(name, num_players=run.players, seed=run.seed + 7) for name in CURVE_OPPONENTS}

    def add_to_config(self, config: dict, game_env) -> None:
        """config.json says nothing more of a single table than the options do."""

    def describe(self, game_env) -> str:
        ppo, run = self.options.ppo, self.options.run
        return f": {run.players} players, {run.envs} games, opponent {self.options.opponents.opponent}, critic {ppo.critic}"

    def evaluate(self, training, start: bool = False) -> dict[str, float]:
        """The curve's point against CURVE_OPPONENTS (and, in a league, a snapshot if the learner has earned one)."""
        run, opponents = self.options.run, self.options.opponents
        latest = {}
        for name, opponent in self.curve_opponents.items():
            result = win_rate(self.learner, opponent, run.players, rounds=self.options.evaluation.rounds, seed=run.seed + 1000,
                              **run.rules)
            latest[name] = result["win_rate"]
            training.evaluations.write({"timesteps": training.num_timesteps, "wall_seconds": training.wall_seconds(),
                                        "opponent": name, **result})
            training.logger.record(f"eval/win_rate_{name}", result["win_rate"])
        if self.league is not None:
            verdict = self.league.consider_snapshot(self.learner, lambda name: self.frozen_learner(training.model, name)[0],
                                                    rounds=opponents.league_rounds, seed=run.seed + 2000,
                                                    margin=opponents.league_margin, **run.rules)
            training.logger.record("league/snapshots", self.league.snapshots_added)
            if verdict["added"]:
                tqdm.write(f"league: {verdict['added']} added at {training.num_timesteps} steps (beat {verdict['strongest']} "
                           f"{verdict['results'][verdict['strongest']]['win_rate']:.1%})")
        return latest

    def final_evaluation(self, model, training) -> dict:
        """The final table (final_table.py), its row of this run ending the learning curve; the agent file's summary."""
        run = self.options.run
        table = final_table(self.options.evaluation.final_rounds, self.options.opponents.hold_out, run,
                            live_agent(model, run.players, observation_scale=self.scale))
        for column, result in table["this run"].items():  # the curve's last point (its only one with --eval-every 0)
            training.evaluations.write({"timesteps": model.num_timesteps, "wall_seconds": training.wall_seconds(),
                                        "opponent": column, **result})
        return {"table": {column: {k: r[k] for k in ("win_rate", "low", "high", "rounds")} for column, r in table["this run"].items()}}

    def export(self, model, path: str, **metadata) -> dict:
        run = self.options.run
        return export(model, path, num_players=run.players, rules_options=run.rules, observation_scale=self.scale, **metadata)

    def loading_hint(self, path: str) -> str:
        return f"agents.load({path!r}, num_players={self.options.run.players})"
