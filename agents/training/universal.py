"""One agent for every table: ``python train.py --recipe universal`` (or ``--tables 2,3,6``) trains one MaskablePPO on
a mixture of tables (``hpuno_env.mixture_env.HPUnoMixtureVecEnv``) in the universal observation and exports a
universal agent file, which ``agents.load`` reads at any player count. This module is that case of the run's
tables (``TableMixture``, a ``agents.training.tables.Tables``): the run is train.py's one loop
(agents/training/run.py), with its schedule, checkpoints, resume and learning curve.

The tables are ``--tables`` under the run's rules and, for each count of ``--house-tables``, two with every
house rule on (``hpuno_env.options.ALL_HOUSE_RULES``), one on each deck; --envs games are shared among them equally,
or in proportion to ``--table-weights``.

A fresh network is first fitted to the ``--warm-start`` player's decisions at every table (the heuristic by
default; ``--warm-start-decisions`` shared equally among the tables), or at a table ``--teachers`` names to that
agent's (``--teachers 2=ppo_2p,4=ppo_4p``: the specialists distilled at their tables). ``--teachers`` with
``--resume`` fits the trained network again: to those agents at their tables and to its own greedy choices at the
others. Then PPO plays the heuristic at every table (or, with ``--opponent league``, a league at each table of the
heuristic, the learner's own snapshots and the shipped specialists: ``agents.training.league.specialist_league``),
the learner in a random seat, paid 1 for a won round and 0 otherwise (``HPUnoMixtureVecEnv(wins_only=True)``: with
-1 for a loss it learns to stall rounds it would likely lose). The step is ``--learning-rate`` for the first
ANNEAL_FROM of ``--timesteps``; with ``--final-learning-rate`` it then falls linearly to that value at the run's
end. Every ``--eval-every`` steps (after the update that passes them) the learner's win rate per table goes to
table_evaluations.csv: against the heuristic in ``--eval-rounds`` rounds of that table, and in training since the
last evaluation (the first row is the warm start's); in a league each of these evaluations also adds a snapshot
of the learner at every table. The final evaluation (``--final-rounds`` per table) goes into the agent file's
metadata.
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np
from sb3_contrib import MaskablePPO

from agents import players
from agents.evaluation.rounds import win_rate
from agents.training import imitation
from agents.training.agent_file import export, live_agent
from agents.training.league import specialist_league
from agents.training.options import TrainingOptions
from agents.training.run_folder import TABLE_EVALUATION_COLUMNS, run_config
from agents.training.tables import Tables, TrainingTable
from hpuno_env._checks import SEED_LIMIT
from hpuno_env.mixture_env import HPUnoMixtureVecEnv, MixtureTable
from hpuno_env.options import ALL_HOUSE_RULES, check_num_players
from hpuno_env.universal import universal_observation, universal_scale

# The tables of --recipe universal: every player count a table is likely to have, 7 and 9 left to generalisation.
UNIVERSAL_TABLES = "2,3,4,5,6,8,10"
# Who plays the other seats of a universal run: the heuristic, or a league at every table.
UNIVERSAL_OPPONENTS = ("heuristic", "league")
MAX_TABLE_WEIGHT = 100.0  # a table's share of the games at most 100 times another's
FIT_BATCH = 1024  # the warm start's minibatch, as train.py's
# The step stays at --learning-rate for this share of the run before any annealing: the champion recipe's shape.
ANNEAL_FROM = 0.25


def training_tables(counts: list[int], house_counts: list[int], rules: dict) -> list[TrainingTable]:
    """A table of each of ``counts`` under ``rules``, then two of each of ``house_counts`` with every house rule on."""
    tables = [TrainingTable(str(count), count, dict(rules)) for count in counts]
    for count in house_counts:
        tables.append(TrainingTable(f"{count} house", count, {**rules, **ALL_HOUSE_RULES}))
        tables.append(TrainingTable(f"{count} house classic", count, {**rules, **ALL_HOUSE_RULES, "deck": "classic"}))
    return tables


def parse_tables(text: str, flag: str = "--tables") -> list[int]:
    """'2,3,6' -> [2, 3, 6], each a checked player count ('' -> []); ValueError naming ``flag``."""
    if not text:
        return []
    try:
        counts = [check_num_players(int(part)) for part in text.split(",")]
    except ValueError as error:
        raise ValueError(f"{flag} must be player counts 2..10 separated by commas, got {text!r} ({error})") from None
    if len(set(counts)) != len(counts):
        raise ValueError(f"{flag} names a player count twice: {text!r}")
    return counts


def table_mixture(options: TrainingOptions, tables: str, house_tables: str, table_weights: str) -> TableMixture:
    """The mixture of --tables (default UNIVERSAL_TABLES) and --house-tables, its games shared by --table-weights,
    with --teachers checked (each agent loaded at its table); ValueError naming the flag, before anything is
    written."""
    run = options.run
    mixture = training_tables(parse_tables(tables or UNIVERSAL_TABLES), parse_tables(house_tables, "--house-tables"), run.rules)
    teachers = parse_teachers(options.warm_start.teachers, mixture)
    games = table_games(run.envs, parse_table_weights(table_weights, mixture))
    if options.opponents.opponent not in UNIVERSAL_OPPONENTS:
        raise ValueError(f"--opponent in a universal run must be one of {', '.join(UNIVERSAL_OPPONENTS)} "
                         f"(agents/training/universal.py), got {options.opponents.opponent!r}")
    return TableMixture(options, mixture, games, teachers)


class UniversalFormat:
    """Stored universal int8 rows -> the network's float32 inputs (scaled by ``universal_scale``), for imitation."""

    def __init__(self, space):
        self.space, self.scale = space, universal_scale()

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        return rows.astype(np.float32) * self.scale


def table_assignments(text: str, tables: list[TrainingTable], flag: str, value_name: str) -> dict[str, str]:
    """'2=a,4=b' -> {table label: value text}; ValueError naming ``flag`` for an unknown table, an empty value or a
    table named twice."""
    labels = [table.label for table in tables]
    named = {}
    for part in filter(None, (part.strip() for part in text.split(","))):
        label, _, value = (piece.strip() for piece in part.partition("="))
        if label not in labels or not value:
            raise ValueError(f"{flag} takes TABLE={value_name} for tables {', '.join(labels)}, got {part!r}")
        if label in named:
            raise ValueError(f"{flag} names table {label!r} twice")
        named[label] = value
    return named


def parse_teachers(text: str, tables: list[TrainingTable]) -> dict[str, str]:
    """'2=ppo_2p,4=ppo_4p' -> {table label: agent}, each agent loaded once at its table to check it; ValueError naming
    --teachers."""
    named = table_assignments(text, tables, "--teachers", "AGENT")
    by_label = {table.label: table for table in tables}
    for label, name in named.items():
        table = by_label[label]
        try:
            players.load(name, num_players=table.num_players, rules_options=table.rules)
        except ValueError as error:
            raise ValueError(f"--teachers {label}={name}: {error}") from None
    return named


def parse_table_weights(text: str, tables: list[TrainingTable]) -> list[float]:
    """'8=3,10=3' -> each table's weight in the order of ``tables`` (1 for a table not named); ValueError naming
    --table-weights."""
    weights = {table.label: 1.0 for table in tables}
    for label, value in table_assignments(text, tables, "--table-weights", "WEIGHT").items():
        try:
            weight = float(value)
        except ValueError:
            weight = math.nan
        if not 0 < weight <= MAX_TABLE_WEIGHT:
            raise ValueError(f"--table-weights takes TABLE=WEIGHT with weights in (0, {MAX_TABLE_WEIGHT:g}], got {label}={value}")
        weights[label] = weight
    return [weights[table.label] for table in tables]


def table_games(envs: int, weights: list[float]) -> list[int]:
    """Each table's games: ``envs`` shared in proportion to ``weights``, at least one a table."""
    total = sum(weights)
    return [max(1, round(envs * weight / total)) for weight in weights]


def table_teachers(model: MaskablePPO, options: TrainingOptions, tables: list[TrainingTable],
                   named: dict[str, str]) -> list[tuple[str, object] | None]:
    """Each table's (teacher name, player): ``named``'s agent there (``parse_teachers``); else the --warm-start player
    (a new run; None for none) or the model's own greedy play (--resume), which keeps those tables as they are while
    others move."""
    teachers = []
    for index, table in enumerate(tables):
        seed = options.run.seed + 100 * index
        if table.label in named or not options.run.resume:
            name = named.get(table.label, options.warm_start.teacher)
            teachers.append(None if name == "none" else
                            (name, players.load(name, num_players=table.num_players, seed=seed, rules_options=table.rules)))
        else:
            teachers.append(("itself", live_agent(model, table.num_players, universal=True, rules_options=table.rules,
                                                  observation_scale=universal_scale())))
    return teachers


def universal_demonstrations(tables: list[TrainingTable], teachers: list, decisions: int, seed: int) -> list:
    """Each teacher's decisions at its table (``decisions`` shared equally), in universal observations; None where a
    table has no teacher."""
    parts = []
    for index, (table, teacher) in enumerate(zip(tables, teachers, strict=True)):
        if teacher is None:
            parts.append(None)
            continue
        part = imitation.collect(teacher[1], table.num_players, max(1, decisions // len(tables)), seed=seed + 100 * index + 1,
                                 **table.rules)
        # the critic learns the return of a learner paid only what it wins, as the PPO that follows
        parts.append(dataclasses.replace(part.paid_wins_only(),
                                         observations=universal_observation(part.observations, table.num_players, table.rules)))
    return parts


def joined(parts: list) -> imitation.Demonstrations:
    present = [part for part in parts if part is not None]
    return imitation.Demonstrations(*(np.concatenate([getattr(part, name) for part in present])
                                      for name in ("observations", "masks", "actions", "returns")))


def fit_to_teachers(model: MaskablePPO, options: TrainingOptions, tables: list[TrainingTable], named: dict[str, str]) -> dict:
    """Fit the model to each table's teacher (``table_teachers``); config.json's record of it, with the agreement
    on other games, per table."""
    started = time.perf_counter()
    run, warm = options.run, options.warm_start
    teachers = table_teachers(model, options, tables, named)
    names = {table.label: teacher[0] for table, teacher in zip(tables, teachers, strict=True) if teacher is not None}
    if not names:
        return {}
    print(f"fitting to teachers: collecting {warm.decisions:,} decisions over {len(names)} tables "
          f"({', '.join(f'{label}: {name}' for label, name in names.items())})", flush=True)
    fitted = joined(universal_demonstrations(tables, teachers, warm.decisions, run.seed + 11))
    held_out = universal_demonstrations(tables, teachers, max(warm.decisions // 10, 512 * len(tables)), run.seed + 13)
    observation_format = UniversalFormat(model.observation_space)
    print(f"fitting to teachers: {warm.epochs} epochs, {time.perf_counter() - started:.0f} s so far", flush=True)
    fitting = imitation.Progress("bar" if run.progress else "lines", f"fitting to teachers ({warm.epochs} epochs)",
                                 warm.epochs * math.ceil(len(fitted) / FIT_BATCH), "batch")
    try:
        history = imitation.fit(model, fitted, 0, epochs=warm.epochs, batch_size=FIT_BATCH, seed=run.seed + 12,
                                progress=fitting.update, observation_format=observation_format)
    finally:
        fitting.close()
    by_table = {table.label: imitation.agreement(model, part, 0, observation_format=observation_format)
                for table, part in zip(tables, held_out, strict=True) if part is not None}
    share = imitation.agreement(model, joined(held_out), 0, observation_format=observation_format)
    seconds = time.perf_counter() - started
    print(f"fitting to teachers: agrees with them on {share:.1%} of decisions of other games ("
          + ", ".join(f"{label}: {value:.1%}" for label, value in by_table.items()) + f"; {seconds:.0f} s)", flush=True)
    return {"teachers": names, "decisions": len(fitted), "epochs": history, "agreement": share, "agreement_by_table": by_table,
            "seconds": seconds, "timesteps": int(model.num_timesteps)}




class TableMixture(Tables):
    """A run at a mixture of tables (module docstring): the ``Tables`` case of --tables and --recipe universal."""

    evaluations_file, evaluation_columns = "table_evaluations.csv", TABLE_EVALUATION_COLUMNS
    evaluates_after_update = True
    final_description = "rounds a table against the heuristic"

    def __init__(self, options: TrainingOptions, tables: list[TrainingTable], games: list[int], teachers: dict[str, str]):
        super().__init__(options, tables)
        self.games, self.teachers = games, teachers
        self.mixture_env: HPUnoMixtureVecEnv | None = None

    @property
    def kernel_players(self) -> int:
        return self.tables[0].num_players  # the kernel compiled for one table serves every count and rules

    def game_env(self) -> HPUnoMixtureVecEnv:
        # wins_only: the learner's return is its win rate; with -1 for a loss it learns to stall rounds at tables of
        # three or more, where it wins less than half of them (HPUnoMixtureVecEnv).
        self.mixture_env = HPUnoMixtureVecEnv([MixtureTable(table.num_players, count, table.rules)
                                               for table, count in zip(self.tables, self.games, strict=True)],
                                              seed=self.options.run.seed, scale_observations=True, wins_only=True)
        return self.mixture_env

    def fit_description(self) -> str | None:
        """What the fit before PPO does: a new network's, to --warm-start and --teachers; a resumed one's, to
        --teachers given now; or None."""
        if self.options.run.resume:
            return "the network learns the --teachers' choices again before PPO" if self.teachers else None
        if self.options.warm_start.teacher == "none" and not self.teachers:
            return None
        return "the new network learns its teachers' choices at every table before PPO"

    def warm_start(self, model, config: dict) -> float:
        """Fit the network to each table's teacher (config["warm_start"], or on --resume one more of config["refits"]);
        the seconds it took."""
        record = fit_to_teachers(model, self.options, self.tables, self.teachers)
        if self.options.run.resume:
            config["refits"] = [record]  # after the earlier commands' (add_to_config)
        else:
            config["warm_start"] = record
        return record.get("seconds", 0.0)

    def install_opponents(self, model, game_env, state: dict) -> None:
        """--opponent league: a league at each table (``specialist_league``, table i seeded with seed + 1000 i + 2);
        else the mixture's own heuristic plays every table."""
        if self.options.opponents.opponent != "league":
            return
        seed = self.options.run.seed
        self.leagues = [specialist_league(table.num_players, table.rules, (seed + 1000 * index + 2) % SEED_LIMIT)
                        for index, table in enumerate(self.tables)]
        for league, batch in zip(self.leagues, game_env.batches, strict=True):
            league.install(batch)
        self.restore_snapshots(state)

    def add_to_config(self, config: dict, game_env) -> None:
        """The tables, their games and leagues; and, on --resume, the fits of the commands before."""
        config["options"]["envs"] = game_env.num_envs  # the games of every table together
        config.update(tables=[dataclasses.asdict(table) for table in self.tables], universal=True,
                      table_games={table.label: count for table, count in zip(self.tables, self.games, strict=True)})
        if self.leagues:
            config["league"] = {table.label: league.names for table, league in zip(self.tables, self.leagues, strict=True)}
        earlier = run_config(self.options.run.out) if self.options.run.resume else {}
        if "warm_start" in earlier:
            config["warm_start"] = earlier["warm_start"]
        if "refits" in earlier or "refits" in config:
            config["refits"] = [*earlier.get("refits", []), *config.get("refits", [])]

    def describe(self, game_env) -> str:
        return f" on tables {', '.join(table.label for table in self.tables)}, {game_env.num_envs} games"

    def evaluate(self, training, start: bool = False) -> dict[str, float]:
        """The curve's point at every table; in a league (but for the point after a fit), a snapshot at every table."""
        results = self.table_results(training.model, training, self.options.evaluation.rounds)
        if self.leagues and not start:
            name = f"snapshot-{self.league.snapshots_added + 1}"
            for league, agent in zip(self.leagues, self.frozen_learner(training.model, name), strict=True):
                league.add_snapshot(agent, name)
        return {label: result["win_rate"] for label, result in results.items()}

    def final_evaluation(self, model, training) -> dict:
        return {"tables": self.table_results(model, training, self.options.evaluation.final_rounds)}

    def table_results(self, model, training, rounds: int) -> dict:
        """The learner's win rate at each table against the heuristic (and in training since the last evaluation),
        written to table_evaluations.csv and printed; returns {table label: result}."""
        seed = self.options.run.seed
        trained = self.mixture_env.table_stats()  # in the order of the tables
        self.mixture_env.reset_table_stats()
        results = {}
        for table, stats in zip(self.tables, trained, strict=True):
            learner = live_agent(model, table.num_players, universal=True, rules_options=table.rules, observation_scale=universal_scale())
            opponent = players.load("heuristic", num_players=table.num_players, seed=seed + 7)
            result = win_rate(learner, opponent, table.num_players, rounds=rounds, seed=seed, **table.rules)
            results[table.label] = {key: result[key] for key in ("win_rate", "low", "high", "rounds")}
            training.evaluations.write({"timesteps": model.num_timesteps, "wall_seconds": training.wall_seconds(),
                                        "table": table.label, "players": table.num_players, "opponent": "heuristic",
                                        **results[table.label], "training_win_rate": stats["win_rate"],
                                        "training_episodes": stats["episodes"]})
        print(f"{model.num_timesteps} steps: win rate against the heuristic by table "
              + ", ".join(f"{table.label}: {results[table.label]['win_rate']:.1%} (fair {1 / table.num_players:.0%})"
                          for table in self.tables), flush=True)
        return results

    def export(self, model, path: str, **metadata) -> dict:
        return export(model, path, universal=True, rules_options=self.options.run.rules, observation_scale=universal_scale(),
                      **metadata)

    def loading_hint(self, path: str) -> str:
        return f"agents.load({path!r}, num_players=N) for any N in 2..10"
