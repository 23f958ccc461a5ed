"""The learning: MaskablePPO's ``learn`` with the ``Training`` callback, which does everything around it, for a
run at one table or at a mixture of tables alike.

Progress bar, the split of each PPO iteration's seconds (rollout, of which stepping the games, and update),
losses.csv and the learning curve (the run's tables take its points: agents/training/tables.py, and, in a league,
the snapshot the learner may earn there), atomic checkpoints every --checkpoint-every steps, and stopping on Ctrl-C.
The step size follows its schedule at every update (``agents.training.options.StepSize``).
"""

from __future__ import annotations

import math
import os
import signal
import time

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import VecEnvWrapper
from tqdm import tqdm

from agents.training.options import EvaluationOptions, RunOptions, update_threads
from agents.training.run_folder import LOSS_COLUMNS, UPDATE_COLUMNS, CsvLog


class TimedVecEnv(VecEnvWrapper):
    """Adds up the seconds spent stepping the games (engine and opponents): the env share of a rollout."""

    def __init__(self, venv):
        super().__init__(venv)
        self.seconds = 0.0

    def reset(self):
        return self.venv.reset()

    def step_wait(self):
        started = time.perf_counter()
        result = self.venv.step_wait()
        self.seconds += time.perf_counter() - started
        return result


class Training(BaseCallback):
    """Everything that happens while MaskablePPO learns: progress bar, timing split, logs,
    the learning curve's points (and league snapshots) asked of the run's ``tables``, atomic checkpoints, stopping
    on Ctrl-C."""

    def __init__(self, run: RunOptions, evaluation: EvaluationOptions, tables, timed_env: TimedVecEnv, save_checkpoint,
                 wall_offset: float, evaluate_at_start: bool = False):
        super().__init__()
        self.run, self.evaluation, self.tables = run, evaluation, tables
        self.timed_env, self.save_checkpoint = timed_env, save_checkpoint
        self.losses = CsvLog(os.path.join(run.out, "losses.csv"), LOSS_COLUMNS, append=run.resume)
        self.evaluations = CsvLog(os.path.join(run.out, tables.evaluations_file), tables.evaluation_columns, append=run.resume)
        self.started = time.perf_counter()
        self.wall_offset = wall_offset  # seconds the run had taken before PPO in this process (a resume, a warm start)
        self.evaluate_at_start = evaluate_at_start  # the learning curve's point at step 0 (after a warm start)
        self.stop_requested = False
        self.latest_evaluation: dict = {}
        # seconds spent in this process: rollouts (of which stepping the games), updates, evaluations
        self.rollout_seconds = self.env_seconds = self.update_seconds = self.eval_seconds = 0.0
        self.steps_trained = 0
        self.update_threads = update_threads(run.threads)
        self._phase, self._phase_started, self._env_at_start, self._eval_at_start, self._steps_at_start = None, 0.0, 0.0, 0.0, 0
        self._rollout, self._env = 0.0, 0.0

    def wall_seconds(self) -> float:
        return self.wall_offset + time.perf_counter() - self.started

    # ---- Ctrl-C: the first asks to stop after this step (checkpoint saved by main), a second aborts
    def request_stop(self, signum, frame) -> None:
        self.stop_requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)
        tqdm.write("\nCtrl-C: stopping after this step and saving a checkpoint (Ctrl-C again aborts without saving)")

    def _on_training_start(self) -> None:
        torch.set_num_threads(1)  # rollouts and evaluations; the update gets --threads (_on_rollout_end)
        self.next_checkpoint = self.num_timesteps + self.run.checkpoint_every
        every = self.evaluation.every
        self.next_evaluation = (self.num_timesteps // every + 1) * every if every else None
        # SB3 trains whole rollouts: the run ends at the first multiple of a rollout past --timesteps
        rollout = self.model.n_steps * self.training_env.num_envs
        end = self.num_timesteps + math.ceil(max(0, self.run.timesteps - self.num_timesteps) / rollout) * rollout
        self.bar = tqdm(total=end, initial=self.num_timesteps, unit="step", unit_scale=True, dynamic_ncols=True,
                        smoothing=0.05, disable=not self.run.progress, desc="training")
        if self.evaluate_at_start:
            self.evaluate(start=True)

    # ---- timing: a PPO iteration is a rollout (env + policy) then an update
    def _on_rollout_start(self) -> None:
        torch.set_num_threads(1)
        now = time.perf_counter()
        if self._phase == "update":
            self._end_iteration(now)
        self._phase, self._phase_started = "rollout", now
        self._env_at_start, self._eval_at_start, self._steps_at_start = self.timed_env.seconds, self.eval_seconds, self.num_timesteps
        if self.tables.evaluates_after_update and self._evaluation_due():
            self.evaluate()  # the weights the last update left (after the run's last update: the final evaluation)

    def _on_rollout_end(self) -> None:
        now = time.perf_counter()
        self._rollout = now - self._phase_started - (self.eval_seconds - self._eval_at_start)
        self._env = self.timed_env.seconds - self._env_at_start
        self._phase, self._phase_started = "update", now
        torch.set_num_threads(self.update_threads)  # SB3's train() follows this callback

    def _end_iteration(self, now: float) -> None:
        """The update that just finished closes an iteration: add up its seconds and log its row."""
        update = now - self._phase_started
        steps = self.num_timesteps - self._steps_at_start
        self.rollout_seconds += self._rollout
        self.env_seconds += self._env
        self.update_seconds += update
        self.steps_trained += steps
        values = self.logger.name_to_value  # the update's losses, not yet dumped
        episodes = list(self.model.ep_info_buffer)
        row = {
            "timesteps": self.num_timesteps, "wall_seconds": self.wall_seconds(), "rollout_seconds": self._rollout,
            "env_seconds": self._env, "update_seconds": update, "steps_per_second": steps / max(self._rollout + update, 1e-9),
            "train_win_rate": float(np.mean([e["r"] > 0 for e in episodes])) if episodes else None,
            "ep_rew_mean": float(np.mean([e["r"] for e in episodes])) if episodes else None,
            "ep_len_mean": float(np.mean([e["l"] for e in episodes])) if episodes else None,
        }
        for column in UPDATE_COLUMNS:
            row[column] = values.get(f"train/{column}")
        self.losses.write(row)
        for key in ("rollout_seconds", "env_seconds", "update_seconds", "steps_per_second"):
            self.logger.record(f"time/{key}", row[key])
        if row["train_win_rate"] is not None:
            self.logger.record("rollout/train_win_rate", row["train_win_rate"])

    def _on_training_end(self) -> None:
        now = time.perf_counter()
        if self._phase == "update":  # learn() ended after an update
            self._end_iteration(now)
        elif self._phase == "rollout":  # stopped mid-rollout (Ctrl-C): count what was played
            self.rollout_seconds += now - self._phase_started - (self.eval_seconds - self._eval_at_start)
            self.env_seconds += self.timed_env.seconds - self._env_at_start
            self.steps_trained += self.num_timesteps - self._steps_at_start
        self._phase = None
        self.bar.close()

    # ---- every vector step
    def _on_step(self) -> bool:
        self.bar.update(self.training_env.num_envs)
        if not self.tables.evaluates_after_update and self._evaluation_due():
            self.evaluate()  # the weights that played this step
        if self.num_timesteps >= self.next_checkpoint:
            self.next_checkpoint = self.num_timesteps + self.run.checkpoint_every
            self.save_checkpoint(self.wall_seconds())
        return not self.stop_requested

    def _evaluation_due(self) -> bool:
        """Has the run reached the step of its next point of the curve (which then moves on by --eval-every)?"""
        if self.next_evaluation is None or self.num_timesteps < self.next_evaluation:
            return False
        self.next_evaluation += self.evaluation.every
        return True

    def evaluate(self, start: bool = False) -> None:
        """The learning curve's point (``start``: the one after a warm start), taken by the run's tables."""
        started = time.perf_counter()
        self.bar.set_postfix_str("evaluating", refresh=True)
        self.latest_evaluation.update(self.tables.evaluate(self, start=start))
        self.bar.set_postfix_str("  ".join(f"{name} {rate:.0%}" for name, rate in self.latest_evaluation.items()))
        self.eval_seconds += time.perf_counter() - started
