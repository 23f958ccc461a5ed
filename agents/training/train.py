"""Train a Harry Potter UNO player with MaskablePPO, evaluate it, export it as a safe agent file.

    python train.py                                  # 2 players: clone the heuristic, then PPO against random (a few minutes)
    python train.py --players 4 --opponent league --timesteps 3000000
    python train.py --opponent heuristic             # clone the heuristic first (the default), then PPO against it
    python train.py --warm-start none                # PPO from random weights
    python train.py --opponent self                  # self-play: opponents use the live weights
    python train.py --opponent heuristic=3,random-play=1 # a mixture: each game's opponents drawn by these weights
    python train.py --final-learning-rate 0           # anneal the learning rate linearly to 0 by --timesteps
    python train.py --out runs/ppo --resume          # continue from runs/ppo/checkpoint.zip
    python train.py --out runs/ppo --resume --critic hands   # continue with a critic that also sees the others' hands
    python train.py --out runs/ppo --overwrite       # start runs/ppo over (a new run where one is, is refused)
    python train.py --recipe champion --players 2    # a strong agent from scratch, in stages (agents/training/recipes.py)
    python train.py --recipe universal               # one agent for every table, 2 to 10 players (agents/training/universal.py)
    python train.py --device cuda --threads 0        # the network on the GPU; or PPO's update on every CPU core
    python train.py --precision auto                 # hidden layers in bfloat16 where the CPU or GPU has it natively
    python train.py --help                           # every option and its default

Reads top to bottom (``train``): options (``Args``, agents/training/options.py), the run folder and
config.json (run_folder.py), the environment and its opponents (opponents.py), the model (model.py: new or
resumed; a new one warm-started by behaviour cloning unless told not to, agents/training/imitation.py; with
--critic hands its critic also reads the other seats' hidden hands, agents/training/critic.py), learning
(learn.py: progress bar, logs, periodic evaluation, atomic checkpoints; Ctrl-C saves one and prints how to
resume), then the final evaluation table, which includes the shipped champions (final_table.py), and the
exported agent.

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

import dataclasses
import os
import platform
import shlex
import signal
import sys
import time
from functools import partial
from importlib.metadata import version

import numpy as np
import stable_baselines3
import torch
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import VecMonitor

import hpuno_env
from agents import players
from agents._cli import dataclass_parser, error_lines, exit_with_error, given_options, rules_from_options
from hpuno_env._output import program_name
from agents.training.agent_file import export, live_agent
from agents.training.final_table import evaluation_table, format_table, final_table
from agents.training.learn import TimedVecEnv, Training
from agents.training.model import new_model, report_resume, resumed_model, warm_started
from agents.training.opponents import install_opponents, make_snapshot
from agents.training.options import (
    CURVE_OPPONENTS, FIXED_OPPONENTS, Args, check_args, learning_rate, opponent_mixture, resume_options, training_device,
    update_threads,
)
from agents.training.precision import training_precision, use_precision
from agents.training.recipes import UNIVERSAL_OPTIONS, UNIVERSAL_RECIPE, command_line, recipe_for, stage_options
from agents.training.universal import train_universal
from agents.training.run_folder import (
    CHECKPOINT_STATE, EVALUATION_COLUMNS, LOSS_COLUMNS, UPDATE_COLUMNS, FolderLock, checkpoint_state, cut_logs,
    earlier_commands, prepare_folder, run_config, run_files, save_checkpoint, write_through_temporary, write_json,
)
from hpuno_env import HPUnoVecEnv
from hpuno_env.encoding import observation_scale

# What train.py (``from agents.training.train import *``), the tests and the notebooks reach for here.
__all__ = [
    "Args", "CHECKPOINT_STATE", "CURVE_OPPONENTS", "EVALUATION_COLUMNS", "FIXED_OPPONENTS", "HPUnoVecEnv", "LOSS_COLUMNS",
    "TimedVecEnv", "Training", "UPDATE_COLUMNS", "check_args", "checkpoint_state", "evaluation_table", "format_table",
    "learning_rate", "main", "opponent_mixture", "parse_args", "run_config", "run_files", "training_device",
    "update_threads", "write_through_temporary",
]


def command_name() -> str:
    """What this command calls itself: train.py, hpuno-train or python -m agents.training.train."""
    return program_name("agents.training.train", "hpuno-train")


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
    if args.recipe == UNIVERSAL_RECIPE or args.tables:
        given = given_options(Args, argv)
        defaults = UNIVERSAL_OPTIONS if args.recipe == UNIVERSAL_RECIPE else {} if args.resume else {"opponent": "heuristic"}
        for name, value in defaults.items():
            if name not in given:
                setattr(args, name, value)
        return train_universal(args, argv)
    if args.recipe != "none":
        return run_recipe(args, argv)
    return train(args, argv, recipe)


def train(args: Args, argv: list[str], recipe: dict | None = None) -> int:
    """One run of checked options in its run folder, which it holds (run_folder.FolderLock) so that no other
    train.py writes there meanwhile; the exit status."""
    lock = FolderLock(args.out)
    problem = prepare_folder(args.out, args.overwrite, league=args.opponent == "league", lock=lock)
    if problem:
        print(error_lines(command_name(), problem), end="", file=sys.stderr)
        return 2
    try:
        return train_in_folder(args, argv, recipe)
    finally:
        lock.release()


def train_in_folder(args: Args, argv: list[str], recipe: dict | None = None) -> int:
    """One run of checked options in its prepared folder, step by step (module docstring); the exit status."""
    threads = update_threads(args.threads)
    torch.set_num_threads(threads)  # the warm start's fit; the rollouts and evaluations switch to one (Training)
    device = training_device(args.device)
    precision = training_precision(args.precision, device)
    rules = rules_from_options(args.rule, args.rules)
    scale = observation_scale(args.players) if args.scale_observations else None

    # ---- config.json
    checkpoint_path = os.path.join(args.out, "checkpoint.zip")
    state = checkpoint_state(args.out) if args.resume else {}  # checked by parse_args
    config = run_record(args, argv, rules, device, precision, threads, recipe)

    # ---- environment: the learner takes a random seat each round; opponents play inside the batch
    game_env = HPUnoVecEnv(num_envs=args.envs, num_players=args.players, learner_seat="random", seed=args.seed,
                           scale_observations=args.scale_observations, critic_sees_hands=args.critic == "hands", **rules)
    timed_env = TimedVecEnv(game_env)
    env = VecMonitor(timed_env)

    # ---- model: resume from the checkpoint, or start fresh (and warm-start it)
    if args.resume:
        earlier_config = run_config(args.out)  # this command writes its own config.json only after the model is loaded
        try:
            model = resumed_model(args, argv, env, device, checkpoint_path, earlier_config)
        except ValueError as error:  # e.g. observation spaces differ (a checkpoint without config.json)
            problem = f"cannot resume {checkpoint_path} with these options: {str(error).splitlines()[0][:300]}"
            print(error_lines(command_name(), problem), end="", file=sys.stderr)
            return 2
        config["resumed_from_timesteps"] = model.num_timesteps
        config["commands"] = earlier_commands(earlier_config) + config["commands"]
        report_resume(args, model, checkpoint_path)
        config["options"]["warm_start"] = "none"  # config.json records what this command did
    else:
        model = new_model(args, env, device)
    use_precision(model.policy, precision)  # before the warm start, which fits the same layers
    if args.warm_start != "none" and not args.resume:
        try:
            config["warm_start"] = warm_started(model, args, rules)
        except KeyboardInterrupt:
            return 130
    warm_start_seconds = config["warm_start"]["seconds"] if "warm_start" in config else 0.0
    model.set_logger(configure(os.path.join(args.out, "tensorboard"), ["tensorboard"]))
    write_json(os.path.join(args.out, "config.json"), config)

    # ---- opponents; learner(deterministic, seed=None) is an agent of the live weights
    learner = partial(live_agent, model, args.players, observation_scale=scale)
    league = install_opponents(args, game_env, learner, state, rules)

    # ---- learn: progress bar, logs, evaluations, checkpoints; Ctrl-C stops after the current step
    curve_opponents = {name: players.load(name, num_players=args.players, seed=args.seed + 7) for name in CURVE_OPPONENTS}
    if args.resume:
        cut_logs(args.out, model.num_timesteps)
    training = Training(args, learner(True), curve_opponents, league, timed_env, partial(save_checkpoint, args.out, model, league),
                        partial(make_snapshot, model, args, rules, scale),
                        wall_offset=state.get("wall_seconds", 0.0) + warm_start_seconds, rules=rules,
                        evaluate_at_start=warm_start_seconds > 0)
    learn(args, model, training)
    if training.stop_requested:
        print(f"interrupted at {model.num_timesteps} steps; checkpoint saved to {checkpoint_path}\n"
              f"resume with: {resume_command(argv)}", flush=True)
        return 130
    timing = report_speed(model, training, warm_start_seconds, checkpoint_path)

    # ---- the final table, then the agent: weights and JSON metadata, loadable without running code
    table = final_table(args, learner(True), rules)
    for column, result in table["this run"].items():  # the curve's last point (its only one with --eval-every 0)
        training.evaluations.write({"timesteps": model.num_timesteps, "wall_seconds": training.wall_seconds(), "opponent": column, **result})
    export_agent(model, args, rules, scale, config, timing, table)
    return 0


def run_record(args: Args, argv: list[str], rules: dict, device: str, precision: str, threads: int, recipe: dict | None) -> dict:
    """What config.json records of this command: its options and command line, the package versions, the machine's
    settings, and the --recipe stage it is."""
    command = shlex.join(["python", "train.py", *argv])
    return {
        "options": dataclasses.asdict(args), "rules_options": rules, "seed": args.seed, "command": command,
        "commands": [command],  # every command that made this checkpoint, oldest first
        "versions": {"hpuno-env": hpuno_env.__version__, "sb3-contrib": version("sb3-contrib"),
                     "stable-baselines3": stable_baselines3.__version__, "torch": torch.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "device": device, "precision": precision, "update_threads": threads,
        **({"recipe": recipe} if recipe else {}),
    }


def learn(args: Args, model, training: Training) -> None:
    """PPO up to --timesteps (whole rollouts), Ctrl-C asking ``training`` to stop; then a checkpoint, always."""
    signal.signal(signal.SIGINT, training.request_stop)
    remaining = max(0, args.timesteps - model.num_timesteps)
    print(f"training {remaining} steps: {args.players} players, {args.envs} games, opponent {args.opponent}, "
          f"critic {args.critic}, output {args.out}", flush=True)
    model.learn(remaining, callback=training, reset_num_timesteps=not args.resume, log_interval=1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    torch.set_num_threads(1)  # the final table
    training.save_checkpoint(training.wall_seconds())


def report_speed(model, training: Training, warm_start_seconds: float, checkpoint_path: str) -> dict:
    """Learner steps per second end to end, split between rollout (env / policy) and update: printed, logged to
    TensorBoard, and returned for the agent file's metadata."""
    busy = training.rollout_seconds + training.update_seconds
    timing = {
        "steps": training.steps_trained, "rollout_seconds": training.rollout_seconds, "env_seconds": training.env_seconds,
        "update_seconds": training.update_seconds, "evaluation_seconds": training.eval_seconds,
        "steps_per_second": training.steps_trained / busy if busy else None,
        "warm_start_seconds": warm_start_seconds, "wall_seconds": training.wall_seconds(),
    }
    print(f"trained {model.num_timesteps} steps; saved {checkpoint_path}")
    if busy:
        print(f"learner steps/s: {timing['steps_per_second']:,.0f} end to end ({training.steps_trained} steps in {busy:.1f} s: "
              f"rollout {training.rollout_seconds / busy:.0%} [games {training.env_seconds / busy:.0%}, policy "
              f"{(training.rollout_seconds - training.env_seconds) / busy:.0%}], update {training.update_seconds / busy:.0%}; "
              f"evaluations took {training.eval_seconds:.1f} s more)")
        model.logger.record("time/learner_steps_per_second", timing["steps_per_second"])
        model.logger.dump(model.num_timesteps)
    return timing


def export_agent(model, args: Args, rules: dict, scale, config: dict, timing: dict, table: dict) -> None:
    """OUT/agent.safetensors: the weights, with the commands, config, timing and this run's row of the final table."""
    recipe = config.get("recipe")
    if recipe:  # the recipe's wall-clock so far, its warm start, stages and evaluations included
        recipe["wall_seconds"] = time.time() - recipe["started"]
    agent_path = os.path.join(args.out, "agent.safetensors")
    summary = {column: {k: r[k] for k in ("win_rate", "low", "high", "rounds")} for column, r in table["this run"].items()}
    export(model, agent_path, num_players=args.players, rules_options=rules, observation_scale=scale,
           training={"command": config["command"], "commands": config["commands"], "config": config, "timing": timing},
           evaluation={"rounds": args.final_rounds, "table": summary})
    print(f"\nagent: {agent_path}  (agents.load({agent_path!r}, num_players={args.players}))")


def resume_command(argv: list[str]) -> str:
    return shlex.join(["python", "train.py", *[a for a in argv if a not in ("--resume", "--no-resume")], "--resume"])


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
