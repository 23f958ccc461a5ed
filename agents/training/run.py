"""One train.py run in its prepared run folder, step by step: the environment and its opponents, the model (new
and warm-started, or resumed), learning, the final evaluation table, and the exported agent.

``agents.training.train`` (the command) checks the options and holds the folder, then calls ``train_in_folder``;
this module is where torch, stable-baselines3 and the rules kernel load, so a refused command never loads them.
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
from agents._cli import error_lines, rules_from_options
from agents.evaluation.rounds import win_rate
from agents.training.agent_file import export, live_agent
from agents.training.final_table import final_table
from agents.training.learn import TimedVecEnv, Training
from agents.training.model import new_model, report_resume, resumed_model, warm_started
from agents.training.opponents import install_opponents, make_snapshot
from agents.training.options import CURVE_OPPONENTS, Args, training_device, update_threads
from agents.training.precision import training_precision, use_precision
from agents.training.run_folder import (
    checkpoint_state, command_name, cut_logs, earlier_commands, resume_command, run_config, save_checkpoint, write_json,
)
from hpuno_env import HPUnoVecEnv, VectorEngine
from hpuno_env.encoding import observation_scale

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

    # ---- the steps, each announced on its own line before its progress bar; the first loads the compiled rules
    steps = Steps(["rules kernel", *(["warm start"] if args.warm_start != "none" and not args.resume else []), "PPO",
                   "final evaluation"])
    if not kernel_loaded(args, rules, steps):
        return 130

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
        steps.start("warm start", f"the new network learns {args.warm_start}'s choices before PPO")
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
    steps.start("PPO", f"learning by playing, to {args.timesteps:,} steps")
    learn(args, model, training)
    if training.stop_requested:
        print(f"interrupted at {model.num_timesteps} steps; checkpoint saved to {checkpoint_path}\n"
              f"resume with: {resume_command(argv)}", flush=True)
        return 130
    timing = report_speed(model, training, warm_start_seconds, checkpoint_path)

    # ---- the final table, then the agent: weights and JSON metadata, loadable without running code
    steps.start("final evaluation", f"{args.final_rounds:,} rounds a cell, seats rotated")
    table = final_table(args, learner(True), rules)
    for column, result in table["this run"].items():  # the curve's last point (its only one with --eval-every 0)
        training.evaluations.write({"timesteps": model.num_timesteps, "wall_seconds": training.wall_seconds(), "opponent": column, **result})
    export_agent(model, args, rules, scale, config, timing, table)
    return 0


class Steps:
    """The run's steps in order: ``start(name, what)`` says which one begins ("[2/4] warm start: ...") on its own line,
    before any progress bar of it."""

    def __init__(self, names: list[str]):
        self.names = names

    def start(self, name: str, what: str) -> None:
        print(f"[{self.names.index(name) + 1}/{len(self.names)}] {name}: {what}", flush=True)


def kernel_loaded(args: Args, rules: dict, steps: Steps) -> bool:
    """The "rules kernel" step (``load_kernel``); False, having said that nothing was done, on Ctrl-C."""
    steps.start("rules kernel", "numba's compiled rules and heuristic, from its cache (seconds) or compiled (the first "
                                "run on a machine: 1-3 minutes on 2 cores)")
    try:
        print(f"  ready ({load_kernel(args.players, rules, args.seed):.0f} s)", flush=True)
    except KeyboardInterrupt:
        print(f"\ninterrupted while loading the rules kernel: nothing was trained or saved in {args.out}",
              file=sys.stderr, flush=True)
        return False
    return True


def load_kernel(num_players: int, rules: dict, seed: int) -> float:
    """Load the rules kernel's and the heuristic's compiled functions from numba's cache, or compile them (the first
    run on a machine; hpuno_env.kernel says so on stderr), by playing a few short rounds on the engines the run
    uses: the training env's, the warm start's and the evaluations'. Returns the seconds it took."""
    started = time.perf_counter()
    short = {**rules, "max_turns": 64}  # rounds cut short: the functions compiled are the same at any length
    heuristic = players.load("heuristic", num_players=num_players, seed=seed)
    win_rate(heuristic, players.load("random", num_players=num_players, seed=seed), num_players, rounds=num_players,
             seed=seed, num_envs=2, **short)
    engine = VectorEngine(num_games=2, num_players=num_players, seed=seed, **short)
    engine.reset()
    engine.step(heuristic.act(engine.observe(), engine.legal_mask()))
    env = HPUnoVecEnv(num_envs=2, num_players=num_players, learner_seat="random", opponent=heuristic, seed=seed, **short)
    env.reset()
    env.step(np.argmax(env.action_masks(), axis=1))
    return time.perf_counter() - started


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

