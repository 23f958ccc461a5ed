"""Train a Harry Potter UNO player with MaskablePPO, evaluate it, export it as a safe agent file.

    python train.py                                  # 2 players: clone the heuristic, then PPO against random (runs/ppo; 3-9 minutes on 2 cores)
    python train.py --players 4 --opponent league --timesteps 3000000 --out runs/league_4p
    python train.py --opponent heuristic --out runs/vs_heuristic     # clone the heuristic first (the default), then PPO against it
    python train.py --warm-start none --out runs/from_scratch       # PPO from random weights (that play a card when they can)
    python train.py --opponent self --out runs/self_play            # self-play: opponents use the live weights
    python train.py --opponent heuristic=3,random-play=1 --out runs/mixture   # each game's opponents drawn by these weights
    python train.py --final-learning-rate 0 --out runs/annealed     # anneal the learning rate linearly to 0 by --timesteps
    python train.py --out runs/ppo --resume --timesteps 600000      # continue the first command's run, to 600k steps
    python train.py --out runs/ppo --resume --critic hands   # continue with a critic that also sees the others' hands
    python train.py --out runs/ppo --overwrite       # start runs/ppo over (a new run where one is, is refused)
    python train.py --recipe champion --players 2 --out runs/champion_2p   # a strong agent from scratch, in stages (agents/training/recipes.py)
    python train.py --recipe universal --out runs/universal   # one agent for every table, 2 to 10 players (agents/training/universal.py)
    python train.py --device auto --threads 0 --out runs/every_core   # the network on the GPU if there is one; PPO's update on every CPU core
    python train.py --precision auto --out runs/bfloat16   # hidden layers in bfloat16 where the CPU or GPU has it natively
    python train.py --help                           # every option and its default

Reads top to bottom: this module checks the options (``Args``, agents/training/options.py; a bad one is refused
before torch or the rules kernel load), hands them on in slices (run, PPO, warm start, opponents, evaluation:
``training_options``), builds the tables the run trains at (one table of --players, tables.py, or the mixture of
--tables, universal.py) and holds the run folder (run_folder.py); ``train_in_folder`` (agents/training/run.py) is
the one loop either runs: the environment, the model (model.py: new or resumed; a new one warm-started by
behaviour cloning unless told not to, agents/training/imitation.py; with --critic hands its critic also reads the
other seats' hidden hands, agents/training/critic.py), the opponents (opponents.py, or a league at each table:
league.py) and config.json, learning (learn.py: progress bar, logs, the learning curve, atomic checkpoints; Ctrl-C
saves one and prints how to resume), then the final evaluation (a single table's includes the shipped champions:
final_table.py) and the exported agent.

Writes into --out:
  checkpoint.zip     SB3 checkpoint for --resume; loading it unpickles, so resume only your own runs
  checkpoint.json    that checkpoint's step count, wall-clock seconds and league snapshots
  agent.safetensors  the trained agent: agents.load(path, num_players) reads it without running code
  config.json        every option, the rules options, package versions, the seed and the command
  losses.csv         one row per PPO iteration: losses, rollout (env / policy) and update seconds, steps/s
  evaluations.csv    the learning curve: win rates against heuristic and random-play by steps and wall-clock
                     (every --eval-every steps), then the final table's row for this run
  tensorboard/       the same scalars: tensorboard --logdir OUT/tensorboard
  league/            frozen snapshots of the learner (--opponent league)
"""

from __future__ import annotations

import importlib
import shlex
import sys
import time

from agents._cli import dataclass_parser, error_lines, exit_with_error, given_options
from agents.training.options import (
    CURVE_OPPONENTS, FIXED_OPPONENTS, Args, check_args, learning_rate, opponent_mixture, resume_options, training_device,
    training_options, update_threads,
)
from agents.training.recipes import UNIVERSAL_OPTIONS, UNIVERSAL_RECIPE, command_line, recipe_for, stage_options
from agents.training.run_folder import (
    CHECKPOINT_STATE, EVALUATION_COLUMNS, LOSS_COLUMNS, UPDATE_COLUMNS, FolderLock, checkpoint_state, prepare_folder,
    command_name, resume_command, run_config, run_files, write_through_temporary,
)

# What train.py, the tests and the notebooks reach for here; and, imported when first asked for (they load torch and
# the rules kernel, which a refused command never needs), the names of _ON_FIRST_USE.
__all__ = [
    "Args", "CHECKPOINT_STATE", "CURVE_OPPONENTS", "EVALUATION_COLUMNS", "FIXED_OPPONENTS", "LOSS_COLUMNS", "UPDATE_COLUMNS",
    "check_args", "checkpoint_state", "learning_rate", "main", "opponent_mixture", "parse_args", "run_config", "run_files",
    "training_device", "training_options", "update_threads", "write_through_temporary",
]
_ON_FIRST_USE = {"HPUnoVecEnv": "hpuno_env", "TimedVecEnv": "agents.training.learn", "Training": "agents.training.learn",
                 "evaluation_table": "agents.training.final_table", "format_table": "agents.training.final_table"}


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        return getattr(importlib.import_module(_ON_FIRST_USE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_args(argv: list[str] | None = None) -> Args:
    """Args from the command line, every option checked; a bad one exits (status 2) with a message naming it."""
    parser = dataclass_parser(Args, __doc__, prog=command_name())
    args = Args(**vars(parser.parse_args(argv)))
    given = given_options(Args, argv)
    if args.resume:
        problem = resume_options(args, given)
        if problem:
            exit_with_error(parser, problem)
    if "warm_start" not in given and (args.resume or args.critic == "hands"):
        args.warm_start = "none"  # the default warm start is for fresh runs of a critic of observations
    problem = check_args(args)
    if problem:
        exit_with_error(parser, problem)
    return args


def main(argv: list[str] | None = None, *, recipe: dict | None = None) -> int:
    """train.py; ``recipe``: the --recipe stage this run is (recorded in config.json and the agent file), if any."""
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.recipe not in ("none", UNIVERSAL_RECIPE) and not args.tables:
        return run_recipe(args, argv)
    return train(args, argv, recipe)


def train(args: Args, argv: list[str], recipe: dict | None = None) -> int:
    """One run of checked options in its run folder, which it holds (run_folder.FolderLock) so that no other
    train.py writes there meanwhile; the exit status."""
    try:
        options, tables = run_tables(args, argv)  # a universal run's --tables and --teachers checked here
    except ValueError as error:
        print(error_lines(command_name(), str(error)), end="", file=sys.stderr)
        return 2
    lock = FolderLock(args.out)
    problem = prepare_folder(args.out, args.overwrite, league=args.opponent == "league", lock=lock)
    if problem:
        print(error_lines(command_name(), problem), end="", file=sys.stderr)
        return 2
    from agents.training.run import train_in_folder  # torch, stable-baselines3, the kernel: only for a run

    try:
        return train_in_folder(options, tables, argv, recipe)
    finally:
        lock.release()


def run_tables(args: Args, argv: list[str]):
    """The options in slices (``TrainingOptions``) and the tables they train at: one table of --players
    (agents/training/tables.py), or the mixture of --tables (agents/training/universal.py, ``args`` taking its
    defaults first); ValueError naming a bad universal option."""
    if args.recipe == UNIVERSAL_RECIPE or args.tables:
        from agents.training.universal import ANNEAL_FROM, table_mixture

        given = given_options(Args, argv)  # a universal run's defaults, where the command line does not say
        defaults = UNIVERSAL_OPTIONS if args.recipe == UNIVERSAL_RECIPE else {} if args.resume else {"opponent": "heuristic"}
        for name, value in defaults.items():
            if name not in given:
                setattr(args, name, value)
        options = training_options(args, argv, anneal_from=ANNEAL_FROM)
        return options, table_mixture(options, args.tables, args.house_tables, args.table_weights)
    from agents.training.tables import OneTable

    options = training_options(args, argv)
    return options, OneTable(options)


def run_recipe(args: Args, argv: list[str]) -> int:
    """--recipe: its stages, one train.py run each (the first fresh, the others resuming it), in this process."""
    recipe = recipe_for(args.recipe, args.players)
    given = {name: getattr(dataclass_parser(Args, None).parse_args(argv), name)  # as typed, before --resume fills in the rest
             for name in given_options(Args, argv) - {"recipe"}}
    given["players"] = args.players  # a resumed recipe's is its run's
    done = checkpoint_state(args.out).get("timesteps", 0) if args.resume else 0  # checked by parse_args
    stages = stage_options(recipe, given, done)
    started = time.time()
    for stage, options in stages:
        number = recipe.stages.index(stage) + 1
        stage_argv = command_line(options, Args)
        print(f"recipe {args.recipe}, stage {number} of {len(recipe.stages)} ({stage.name}): {shlex.join(['python', 'train.py', *stage_argv])}",
              flush=True)
        status = main(stage_argv, recipe={"name": args.recipe, "command": shlex.join(["python", "train.py", *argv]),
                                          "stage": number, "stages": [s.name for s in recipe.stages], "started": started})
        if status != 0:
            if status == 130:
                print(f"to go on with the recipe: {resume_command(argv)}", flush=True)
            return status
    print(f"recipe {args.recipe}: {len(stages)} stage(s) in {(time.time() - started) / 60:.1f} minutes of wall-clock", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
