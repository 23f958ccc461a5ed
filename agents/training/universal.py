"""One agent for every table: ``python train.py --recipe universal`` (or ``--tables 2,3,6``) trains one MaskablePPO on
a mixture of tables (``hpuno_env.mixture_env.HPUnoMixtureVecEnv``) in the universal observation and exports a
universal agent file, which ``agents.load`` reads at any player count.

A skeleton of the recipe: PPO against the heuristic at every table, no warm start and no league yet. It runs in
chunks of ``--checkpoint-every`` steps, each ending with an atomic checkpoint (``--resume`` goes on from the
last), and every ``--eval-every`` steps writes the learner's win rate per table to table_evaluations.csv: against the
heuristic in ``--eval-rounds`` rounds of that table, and in training since the last evaluation. The final
evaluation (``--final-rounds`` per table) goes into the agent file's metadata.
"""

from __future__ import annotations

import os
import shlex
import sys
import time

import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecMonitor

from agents import players
from agents._cli import error_lines, rules_from_options
from agents.evaluation.rounds import win_rate
from agents.training.agent_file import export, live_agent
from agents.training.model import new_model
from agents.training.options import Args, learning_rate, training_device, update_threads
from agents.training.run_folder import CsvLog, FolderLock, checkpoint_state, prepare_folder, save_checkpoint, write_json
from hpuno_env.mixture_env import HPUnoMixtureVecEnv, MixtureTable
from hpuno_env.options import check_num_players
from hpuno_env.universal import universal_scale

# The tables of --recipe universal: every player count a table is likely to have, 7 and 9 left to generalisation.
UNIVERSAL_TABLES = "2,3,4,5,6,8,10"
UNIVERSAL_EVALUATION_COLUMNS = ["timesteps", "wall_seconds", "players", "opponent", "win_rate", "low", "high", "rounds",
                                "training_win_rate", "training_episodes"]


def parse_tables(text: str) -> list[int]:
    """'2,3,6' -> [2, 3, 6], each a checked player count; ValueError naming --tables."""
    try:
        counts = [check_num_players(int(part)) for part in text.split(",")]
    except ValueError as error:
        raise ValueError(f"--tables must be player counts 2..10 separated by commas, got {text!r} ({error})") from None
    if len(set(counts)) != len(counts):
        raise ValueError(f"--tables names a player count twice: {text!r}")
    return counts


def train_universal(args: Args, argv: list[str]) -> int:
    """One universal run in its run folder (held by a FolderLock); the exit status."""
    try:
        tables = parse_tables(args.tables or UNIVERSAL_TABLES)
    except ValueError as error:
        print(error_lines("train.py", str(error)), end="", file=sys.stderr)
        return 2
    lock = FolderLock(args.out)
    problem = prepare_folder(args.out, args.overwrite, league=False, lock=lock)
    if problem:
        print(error_lines("train.py", problem), end="", file=sys.stderr)
        return 2
    try:
        return _train_in_folder(args, argv, tables)
    finally:
        lock.release()


def _model(args: Args, env, device: str, checkpoint: str) -> MaskablePPO:
    if args.resume:
        model = MaskablePPO.load(checkpoint, device=device, learning_rate=learning_rate(args), n_envs=env.num_envs)
        model.set_env(env)  # checks the spaces: ValueError if they differ
        return model
    return new_model(args, env, device)


def _train_in_folder(args: Args, argv: list[str], tables: list[int]) -> int:
    torch.set_num_threads(update_threads(args.threads))
    device = training_device(args.device)
    rules = rules_from_options(args.rule, args.rules)
    per_table = max(1, args.envs // len(tables))
    game_env = HPUnoMixtureVecEnv([MixtureTable(count, per_table, rules) for count in tables], seed=args.seed, scale_observations=True)
    args.envs = game_env.num_envs  # new_model sizes the minibatch by it
    checkpoint = os.path.join(args.out, "checkpoint.zip")
    state = checkpoint_state(args.out) if args.resume else {}
    model = _model(args, VecMonitor(game_env), device, checkpoint)
    command = shlex.join(["python", "train.py", *argv])
    write_json(os.path.join(args.out, "config.json"), {"options": vars(args), "tables": tables, "rules_options": rules,
                                                        "command": command, "universal": True})
    evaluations = CsvLog(os.path.join(args.out, "table_evaluations.csv"), UNIVERSAL_EVALUATION_COLUMNS, append=args.resume)
    started = time.time() - state.get("wall_seconds", 0.0)
    next_evaluation = (model.num_timesteps // args.eval_every + 1) * args.eval_every if args.eval_every else None
    print(f"training {max(0, args.timesteps - model.num_timesteps)} steps on tables of {tables} players, "
          f"{game_env.num_envs} games, output {args.out}", flush=True)
    while model.num_timesteps < args.timesteps:
        chunk = min(args.checkpoint_every, args.timesteps - model.num_timesteps)
        model.learn(chunk, reset_num_timesteps=False)
        save_checkpoint(args.out, model, None, time.time() - started)
        if next_evaluation is not None and model.num_timesteps >= next_evaluation:
            next_evaluation += args.eval_every
            _evaluate(model, game_env, tables, rules, args.eval_rounds, args.seed, evaluations, time.time() - started)
    final = _evaluate(model, game_env, tables, rules, args.final_rounds, args.seed, evaluations, time.time() - started)
    path = os.path.join(args.out, "agent.safetensors")
    export(model, path, universal=True, rules_options=rules, observation_scale=universal_scale(),
           training={"command": command, "tables": tables, "wall_seconds": time.time() - started},
           evaluation={"rounds": args.final_rounds, "tables": final})
    print(f"\nagent: {path}  (agents.load({path!r}, num_players=N) for any N in 2..10)", flush=True)
    return 0


def _evaluate(model, game_env, tables, rules, rounds, seed, log: CsvLog, wall_seconds: float) -> dict:
    """The learner's win rate at each table against the heuristic (and in training since the last evaluation),
    written to table_evaluations.csv and printed; returns {players: result}."""
    torch.set_num_threads(1)
    training = {row["num_players"]: row for row in game_env.table_stats()}
    game_env.reset_table_stats()
    results = {}
    for count in tables:
        learner = live_agent(model, count, universal=True, rules_options=rules, observation_scale=universal_scale())
        opponent = players.load("heuristic", num_players=count, seed=seed + 7)
        result = win_rate(learner, opponent, count, rounds=rounds, seed=seed, **rules)
        results[str(count)] = {key: result[key] for key in ("win_rate", "low", "high", "rounds")}
        log.write({"timesteps": model.num_timesteps, "wall_seconds": wall_seconds, "players": count, "opponent": "heuristic",
                   **results[str(count)], "training_win_rate": training[count]["win_rate"],
                   "training_episodes": training[count]["episodes"]})
    print(f"{model.num_timesteps} steps: win rate against the heuristic by players "
          + ", ".join(f"{count}p {results[str(count)]['win_rate']:.1%} (fair {1 / count:.0%})" for count in tables), flush=True)
    return results
