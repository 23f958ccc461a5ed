"""One agent for every table: ``python train.py --recipe universal`` (or ``--tables 2,3,6``) trains one MaskablePPO on
a mixture of tables (``hpuno_env.mixture_env.HPUnoMixtureVecEnv``) in the universal observation and exports a
universal agent file, which ``agents.load`` reads at any player count.

The tables are ``--tables`` under the run's rules and, for each count of ``--house-tables``, two with every
house rule on (``hpuno_env.options.ALL_HOUSE_RULES``), one on each deck; --envs games are shared among them equally,
or in proportion to ``--table-weights``.

A fresh network is first fitted to the ``--warm-start`` player's decisions at every table (the heuristic by
default; ``--warm-start-decisions`` shared equally among the tables), or at a table ``--teachers`` names to that
agent's (``--teachers 2=ppo_2p,4=ppo_4p``: the specialists distilled at their tables). ``--teachers`` with
``--resume`` fits the trained network again: to those agents at their tables and to its own greedy choices at the
others. Then PPO plays the heuristic at every table (or, with ``--opponent league``, a league of the heuristic,
the learner's own snapshots and the shipped specialists: universal_league.py), the learner in a random seat, paid
1 for a won round and 0 otherwise (``HPUnoMixtureVecEnv(wins_only=True)``: with -1 for a loss it learns to stall
rounds it would likely lose). The step is ``--learning-rate`` for the first ANNEAL_FROM of ``--timesteps``; with
``--final-learning-rate`` it then falls linearly to that value at the run's end (set per chunk, so in steps).
The run goes in chunks of ``--checkpoint-every`` steps, each ending with an atomic checkpoint (``--resume`` goes
on from the last), and every ``--eval-every`` steps writes the learner's win rate per table to
table_evaluations.csv: against the heuristic in ``--eval-rounds`` rounds of that table, and in training since
the last evaluation (the first row is the warm start's). The final evaluation (``--final-rounds`` per table)
goes into the agent file's metadata.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import shlex
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.utils import ConstantSchedule
from stable_baselines3.common.vec_env import VecMonitor

from agents import players
from agents._cli import error_lines, rules_from_options
from agents.evaluation.rounds import win_rate
from agents.training import imitation
from agents.training.agent_file import export, live_agent
from agents.training.model import new_model
from agents.training.options import Args, training_device, update_threads
from agents.training.precision import training_precision, use_precision
from agents.training.run_folder import CsvLog, FolderLock, checkpoint_state, earlier_commands, prepare_folder, run_config, save_checkpoint, write_json
from agents.training.universal_league import UniversalLeague
from hpuno_env.mixture_env import HPUnoMixtureVecEnv, MixtureTable
from hpuno_env.options import ALL_HOUSE_RULES, check_num_players
from hpuno_env.universal import universal_observation, universal_scale

# The tables of --recipe universal: every player count a table is likely to have, 7 and 9 left to generalisation.
UNIVERSAL_TABLES = "2,3,4,5,6,8,10"
# Who plays the other seats of a universal run: the heuristic, or a league at every table (universal_league.py).
UNIVERSAL_OPPONENTS = ("heuristic", "league")
MAX_TABLE_WEIGHT = 100.0  # a table's share of the games at most 100 times another's
FIT_BATCH = 1024  # the warm start's minibatch, as train.py's
# The step stays at --learning-rate for this share of the run before any annealing: the champion recipe's shape.
ANNEAL_FROM = 0.25
UNIVERSAL_EVALUATION_COLUMNS = ["timesteps", "wall_seconds", "table", "players", "opponent", "win_rate", "low", "high", "rounds",
                                "training_win_rate", "training_episodes"]


@dataclass(frozen=True)
class TrainingTable:
    """A table of the mixture as the recipe names it: "4" (the run's rules), "4 house" (every house rule on, Harry
    Potter deck) or "4 house classic" (every house rule on, classic deck)."""

    label: str
    num_players: int
    rules: dict


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


def train_universal(args: Args, argv: list[str]) -> int:
    """One universal run in its run folder (held by a FolderLock); the exit status."""
    try:
        rules = rules_from_options(args.rule, args.rules)
        tables = training_tables(parse_tables(args.tables or UNIVERSAL_TABLES), parse_tables(args.house_tables, "--house-tables"),
                                 rules)
        teachers = parse_teachers(args.teachers, tables)  # before anything is written
        games = table_games(args.envs, parse_table_weights(args.table_weights, tables))
        if args.opponent not in UNIVERSAL_OPPONENTS:
            raise ValueError(f"--opponent in a universal run must be one of {', '.join(UNIVERSAL_OPPONENTS)} "
                             f"(agents/training/universal_league.py), got {args.opponent!r}")
    except ValueError as error:
        print(error_lines("train.py", str(error)), end="", file=sys.stderr)
        return 2
    lock = FolderLock(args.out)
    problem = prepare_folder(args.out, args.overwrite, league=args.opponent == "league", lock=lock)
    if problem:
        print(error_lines("train.py", problem), end="", file=sys.stderr)
        return 2
    try:
        return _train_in_folder(args, argv, tables, games, rules, teachers)
    finally:
        lock.release()


def _model(args: Args, env, device: str, checkpoint: str) -> MaskablePPO:
    if args.resume:
        model = MaskablePPO.load(checkpoint, device=device, learning_rate=args.learning_rate, n_envs=env.num_envs)
        model.set_env(env)  # checks the spaces: ValueError if they differ
        return model
    return new_model(args, env, device)


def step_size(args: Args, timesteps: int) -> float:
    """The step at ``timesteps`` into the run: --learning-rate to ANNEAL_FROM of --timesteps, then linear to
    --final-learning-rate at the end (constant without one)."""
    if args.final_learning_rate is None:
        return args.learning_rate
    done = min(1.0, max(0.0, (timesteps / args.timesteps - ANNEAL_FROM) / (1 - ANNEAL_FROM)))
    return args.learning_rate + done * (args.final_learning_rate - args.learning_rate)


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


def table_teachers(model: MaskablePPO, args: Args, tables: list[TrainingTable], named: dict[str, str]) -> list[tuple[str, object] | None]:
    """Each table's (teacher name, player): ``named``'s agent there (``parse_teachers``); else the --warm-start player
    (a new run; None for none) or the model's own greedy play (--resume), which keeps those tables as they are while
    others move."""
    teachers = []
    for index, table in enumerate(tables):
        seed = args.seed + 100 * index
        if table.label in named or not args.resume:
            name = named.get(table.label, args.warm_start)
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


def fit_to_teachers(model: MaskablePPO, args: Args, tables: list[TrainingTable], named: dict[str, str]) -> dict:
    """Fit the model to each table's teacher (``table_teachers``); config.json's record of it, with the agreement
    on other games, per table."""
    started = time.perf_counter()
    teachers = table_teachers(model, args, tables, named)
    names = {table.label: teacher[0] for table, teacher in zip(tables, teachers, strict=True) if teacher is not None}
    if not names:
        return {}
    print(f"fitting to teachers: collecting {args.warm_start_decisions:,} decisions over {len(names)} tables "
          f"({', '.join(f'{label}: {name}' for label, name in names.items())})", flush=True)
    fitted = joined(universal_demonstrations(tables, teachers, args.warm_start_decisions, args.seed + 11))
    held_out = universal_demonstrations(tables, teachers, max(args.warm_start_decisions // 10, 512 * len(tables)), args.seed + 13)
    observation_format = UniversalFormat(model.observation_space)
    print(f"fitting to teachers: {args.warm_start_epochs} epochs, {time.perf_counter() - started:.0f} s so far", flush=True)
    fitting = imitation.Progress("bar" if args.progress else "lines", f"fitting to teachers ({args.warm_start_epochs} epochs)",
                                 args.warm_start_epochs * math.ceil(len(fitted) / FIT_BATCH), "batch")
    try:
        history = imitation.fit(model, fitted, 0, epochs=args.warm_start_epochs, batch_size=FIT_BATCH, seed=args.seed + 12,
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


def _train_in_folder(args: Args, argv: list[str], tables: list[TrainingTable], games: list[int], rules: dict,
                     teachers: dict[str, str]) -> int:
    torch.set_num_threads(update_threads(args.threads))
    device = training_device(args.device)
    # wins_only: the learner's return is its win rate; with -1 for a loss it learns to stall rounds at tables of
    # three or more, where it wins less than half of them (HPUnoMixtureVecEnv).
    game_env = HPUnoMixtureVecEnv([MixtureTable(table.num_players, count, table.rules) for table, count in zip(tables, games, strict=True)], seed=args.seed,
                                  scale_observations=True, wins_only=True)
    args.envs = game_env.num_envs  # new_model sizes the minibatch by it
    checkpoint = os.path.join(args.out, "checkpoint.zip")
    state = checkpoint_state(args.out) if args.resume else {}
    started = time.time() - state.get("wall_seconds", 0.0)
    model = _model(args, VecMonitor(game_env), device, checkpoint)
    league = UniversalLeague(tables, game_env, args.out, args.seed, rules) if args.opponent == "league" else None
    if league is not None:
        league.restore(state)
    precision = training_precision(args.precision, device)
    use_precision(model.policy, precision)  # before the warm start, which fits the same layers
    command = shlex.join(["python", "train.py", *argv])
    config_path = os.path.join(args.out, "config.json")
    earlier = run_config(args.out) if args.resume else {}
    config = {"options": vars(args), "tables": [dataclasses.asdict(table) for table in tables],
              "table_games": {table.label: count for table, count in zip(tables, games, strict=True)},
              "rules_options": rules, "command": command, "universal": True,
              "precision": precision, "commands": [*earlier_commands(earlier), command],
              **{key: earlier[key] for key in ("warm_start", "refits") if key in earlier},
              **({"league": league.members_by_table()} if league is not None else {})}
    warm_started = not args.resume and (args.warm_start != "none" or bool(teachers))
    if warm_started:
        config["warm_start"] = fit_to_teachers(model, args, tables, teachers)
    elif teachers:
        config["refits"] = [*earlier.get("refits", []), fit_to_teachers(model, args, tables, teachers)]
    write_json(config_path, config)
    evaluations = CsvLog(os.path.join(args.out, "table_evaluations.csv"), UNIVERSAL_EVALUATION_COLUMNS, append=args.resume)
    evaluate = functools.partial(_evaluate, model, game_env, tables, seed=args.seed, log=evaluations)
    print(f"training {max(0, args.timesteps - model.num_timesteps)} steps on tables {', '.join(t.label for t in tables)}, "
          f"{game_env.num_envs} games, output {args.out}", flush=True)
    if (warm_started or teachers) and args.eval_every:  # a learning-curve point for the fitted weights alone
        evaluate(args.eval_rounds, time.time() - started)
    next_evaluation = (model.num_timesteps // args.eval_every + 1) * args.eval_every if args.eval_every else None
    while model.num_timesteps < args.timesteps:
        chunk = min(args.checkpoint_every, args.timesteps - model.num_timesteps)
        model.lr_schedule = ConstantSchedule(step_size(args, model.num_timesteps))
        model.learn(chunk, reset_num_timesteps=False)
        if next_evaluation is not None and args.timesteps > model.num_timesteps >= next_evaluation:  # the last: below
            next_evaluation += args.eval_every
            evaluate(args.eval_rounds, time.time() - started)
            if league is not None:
                league.take_snapshot(model, f"snapshot-{league.snapshots_added + 1}")
        save_checkpoint(args.out, model, league, time.time() - started)
    final = evaluate(args.final_rounds, time.time() - started)
    path = os.path.join(args.out, "agent.safetensors")
    export(model, path, universal=True, rules_options=rules, observation_scale=universal_scale(),
           training={"command": command, "commands": config["commands"], "tables": config["tables"],
                     "wall_seconds": time.time() - started},
           evaluation={"rounds": args.final_rounds, "tables": final})
    print(f"\nagent: {path}  (agents.load({path!r}, num_players=N) for any N in 2..10)", flush=True)
    return 0


def _evaluate(model, game_env, tables: list[TrainingTable], rounds, wall_seconds: float, *, seed: int, log: CsvLog) -> dict:
    """The learner's win rate at each table against the heuristic (and in training since the last evaluation),
    written to table_evaluations.csv and printed; returns {table label: result}."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # small batches of rounds: more threads only contend
    training = game_env.table_stats()  # in the order of the tables
    game_env.reset_table_stats()
    results = {}
    for table, trained in zip(tables, training, strict=True):
        learner = live_agent(model, table.num_players, universal=True, rules_options=table.rules, observation_scale=universal_scale())
        opponent = players.load("heuristic", num_players=table.num_players, seed=seed + 7)
        result = win_rate(learner, opponent, table.num_players, rounds=rounds, seed=seed, **table.rules)
        results[table.label] = {key: result[key] for key in ("win_rate", "low", "high", "rounds")}
        log.write({"timesteps": model.num_timesteps, "wall_seconds": wall_seconds, "table": table.label,
                   "players": table.num_players, "opponent": "heuristic", **results[table.label],
                   "training_win_rate": trained["win_rate"], "training_episodes": trained["episodes"]})
    print(f"{model.num_timesteps} steps: win rate against the heuristic by table "
          + ", ".join(f"{table.label}: {results[table.label]['win_rate']:.1%} (fair {1 / table.num_players:.0%})"
                      for table in tables), flush=True)
    torch.set_num_threads(threads)
    return results
