"""The one training loop: a train.py run in its prepared run folder, step by step, at one table or at a mixture
of tables alike (``Tables``, agents/training/tables.py, holds what differs): the rules kernel, the environment,
the model (new, or resumed), the warm start, the opponents and config.json, learning (learn.py: PPO with its
schedule, the learning curve, checkpoints), the final evaluation, and the exported agent.

``agents.training.train`` (the command) checks the options, slices them (``TrainingOptions``), builds the tables
and holds the folder, then calls ``train_in_folder``; this module is where torch, stable-baselines3 and the rules
kernel load, so a refused command never loads them.
"""

from __future__ import annotations

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
from sb3_contrib import MaskablePPO
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import VecMonitor

import hpuno_env
from agents import players
from agents._cli import error_lines
from agents.evaluation.rounds import win_rate
from agents.training.learn import TimedVecEnv, Training
from agents.training.model import new_model, report_resume, resumed_model
from agents.training.options import RunOptions, TrainingOptions, training_device, update_threads
from agents.training.precision import training_precision, use_precision
from agents.training.run_folder import (
    checkpoint_state, command_name, cut_logs, earlier_commands, resume_command, run_config, save_checkpoint, write_json,
)
from agents.training.tables import Tables
from hpuno_env import HPUnoVecEnv, VectorEngine


def train_in_folder(options: TrainingOptions, tables: Tables, argv: list[str], recipe: dict | None = None) -> int:
    """One run of checked options at its ``tables`` in its prepared folder, step by step (module docstring); the
    exit status."""
    run = options.run
    threads = update_threads(run.threads)
    torch.set_num_threads(threads)  # the warm start's fit; the rollouts and evaluations switch to one (Training)
    device = training_device(run.device)
    precision = training_precision(run.precision, device)

    # ---- config.json
    checkpoint_path = os.path.join(run.out, "checkpoint.zip")
    state = checkpoint_state(run.out) if run.resume else {}  # checked by parse_args
    config = run_record(run, argv, device, precision, threads, recipe)

    # ---- the steps, each announced on its own line before its progress bar; the first loads the compiled rules
    fit = tables.fit_description()
    steps = Steps(["rules kernel", *(["warm start"] if fit else []), "PPO", "final evaluation"])
    if not kernel_loaded(tables.kernel_players, run, steps):
        return 130

    # ---- environment: the learner takes a random seat each round; opponents play inside the batch
    game_env = tables.game_env()
    timed_env = TimedVecEnv(game_env)
    env = VecMonitor(timed_env)

    # ---- model: resume from the checkpoint, or start fresh (and warm-start it)
    model = start_model(options, env, device, checkpoint_path, config)
    if model is None:
        return 2
    use_precision(model.policy, precision)  # before the warm start, which fits the same layers
    fit_seconds = 0.0
    if fit:
        steps.start("warm start", fit)
        try:
            fit_seconds = tables.warm_start(model, config)
        except KeyboardInterrupt:
            return 130
    model.set_logger(configure(os.path.join(run.out, "tensorboard"), ["tensorboard"]))

    # ---- opponents (a league's snapshots those of the checkpoint), then config.json
    tables.install_opponents(model, game_env, state)
    tables.add_to_config(config, game_env)
    write_json(os.path.join(run.out, "config.json"), config)

    # ---- learn: progress bar, logs, evaluations, checkpoints; Ctrl-C stops after the current step
    if run.resume:
        cut_logs(run.out, model.num_timesteps)
    training = Training(run, options.evaluation, tables, timed_env, partial(save_checkpoint, run.out, model, tables.league),
                        wall_offset=state.get("wall_seconds", 0.0) + fit_seconds,
                        evaluate_at_start=fit_seconds > 0)  # the fitted network's point of the curve, at step 0
    steps.start("PPO", f"learning by playing, to {run.timesteps:,} steps")
    learn(run, model, training, tables.describe(game_env))
    if training.stop_requested:
        print(f"interrupted at {model.num_timesteps} steps; checkpoint saved to {checkpoint_path}\n"
              f"resume with: {resume_command(argv)}", flush=True)
        return 130
    timing = report_speed(model, training, fit_seconds, checkpoint_path)

    # ---- the final evaluation, then the agent: weights and JSON metadata, loadable without running code
    steps.start("final evaluation", f"{options.evaluation.final_rounds:,} {tables.final_description}")
    evaluation = tables.final_evaluation(model, training)
    export_agent(model, tables, config, timing, {"rounds": options.evaluation.final_rounds, **evaluation})
    return 0


def start_model(options: TrainingOptions, env, device: str, checkpoint_path: str, config: dict) -> MaskablePPO | None:
    """A new model, or with --resume the checkpoint's (``config`` then records the commands that made it); None, having
    said why, if the checkpoint cannot play these games."""
    run = options.run
    if not run.resume:
        return new_model(options.ppo, env, device, seed=run.seed, num_players=run.players,
                         untrained=options.warm_start.teacher == "none")
    earlier_config = run_config(run.out)  # this command writes its own config.json only after the model is loaded
    try:
        model = resumed_model(options.ppo, run.given, env, device, checkpoint_path, earlier_config)
    except ValueError as error:  # e.g. observation spaces differ (a checkpoint without config.json)
        problem = f"cannot resume {checkpoint_path} with these options: {str(error).splitlines()[0][:300]}"
        print(error_lines(command_name(), problem), end="", file=sys.stderr)
        return None
    config["resumed_from_timesteps"] = model.num_timesteps
    config["commands"] = earlier_commands(earlier_config) + config["commands"]
    report_resume(model, checkpoint_path, run.timesteps, options.opponents.opponent, options.warm_start.teacher)
    config["options"]["warm_start"] = "none"  # config.json records what this command did
    return model


class Steps:
    """The run's steps in order: ``start(name, what)`` says which one begins ("[2/4] warm start: ...") on its own line,
    before any progress bar of it."""

    def __init__(self, names: list[str]):
        self.names = names

    def start(self, name: str, what: str) -> None:
        print(f"[{self.names.index(name) + 1}/{len(self.names)}] {name}: {what}", flush=True)


def kernel_loaded(num_players: int, run: RunOptions, steps: Steps) -> bool:
    """The "rules kernel" step (``load_kernel``, at tables of ``num_players``); False, having said that nothing was
    done, on Ctrl-C."""
    steps.start("rules kernel", "numba's compiled rules and heuristic, from its cache (seconds) or compiled (the first "
                                "run on a machine: 1-3 minutes on 2 cores)")
    try:
        print(f"  ready ({load_kernel(num_players, run.rules, run.seed):.0f} s)", flush=True)
    except KeyboardInterrupt:
        print(f"\ninterrupted while loading the rules kernel: nothing was trained or saved in {run.out}",
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


def run_record(run: RunOptions, argv: list[str], device: str, precision: str, threads: int, recipe: dict | None) -> dict:
    """What config.json records of this command: its options and command line, the package versions, the machine's
    settings, and the --recipe stage it is."""
    command = shlex.join(["python", "train.py", *argv])
    return {
        "options": dict(run.recorded), "rules_options": run.rules, "seed": run.seed, "command": command,
        "commands": [command],  # every command that made this checkpoint, oldest first
        "versions": {"hpuno-env": hpuno_env.__version__, "sb3-contrib": version("sb3-contrib"),
                     "stable-baselines3": stable_baselines3.__version__, "torch": torch.__version__, "numpy": np.__version__,
                     "python": platform.python_version()},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "device": device, "precision": precision, "update_threads": threads,
        **({"recipe": recipe} if recipe else {}),
    }


def learn(run: RunOptions, model, training: Training, what: str) -> None:
    """PPO up to --timesteps (whole rollouts) at ``what`` tables, Ctrl-C asking ``training`` to stop; then a
    checkpoint, always."""
    signal.signal(signal.SIGINT, training.request_stop)
    remaining = max(0, run.timesteps - model.num_timesteps)
    print(f"training {remaining} steps{what}, output {run.out}", flush=True)
    model.learn(remaining, callback=training, reset_num_timesteps=not run.resume, log_interval=1)
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


def export_agent(model, tables: Tables, config: dict, timing: dict, evaluation: dict) -> None:
    """OUT/agent.safetensors: the weights, with the commands, config, timing and the final ``evaluation``."""
    recipe = config.get("recipe")
    if recipe:  # the recipe's wall-clock so far, its warm start, stages and evaluations included
        recipe["wall_seconds"] = time.time() - recipe["started"]
    agent_path = os.path.join(tables.options.run.out, "agent.safetensors")
    tables.export(model, agent_path, training={"command": config["command"], "commands": config["commands"], "config": config,
                                               "timing": timing}, evaluation=evaluation)
    print(f"\nagent: {agent_path}  ({tables.loading_hint(agent_path)})", flush=True)
