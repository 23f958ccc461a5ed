"""The learning: MaskablePPO's ``learn`` with the ``Training`` callback, which does everything around it.

Progress bar, the split of each PPO iteration's seconds (rollout, of which stepping the games, and update),
losses.csv and evaluations.csv, the periodic evaluation against the curve's fixed players (and, in a league, the
snapshot the learner may earn there), atomic checkpoints, and stopping on Ctrl-C.
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

from agents.evaluation.rounds import win_rate
from agents.players.trained import TrainedAgent
from agents.training.league import League
from agents.training.options import Args, update_threads
from agents.training.run_folder import EVALUATION_COLUMNS, LOSS_COLUMNS, UPDATE_COLUMNS, CsvLog


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
    periodic evaluation (and league snapshots), atomic checkpoints, stopping on Ctrl-C."""

    def __init__(self, args: Args, learner: TrainedAgent, curve_opponents: dict, league: League | None, timed_env: TimedVecEnv,
                 save_checkpoint, make_snapshot, wall_offset: float, rules: dict, evaluate_at_start: bool = False):
        super().__init__()
        self.args, self.learner, self.curve_opponents, self.league = args, learner, curve_opponents, league
        self.timed_env, self.save_checkpoint, self.make_snapshot, self.rules = timed_env, save_checkpoint, make_snapshot, rules
        self.losses = CsvLog(os.path.join(args.out, "losses.csv"), LOSS_COLUMNS, append=args.resume)
        self.evaluations = CsvLog(os.path.join(args.out, "evaluations.csv"), EVALUATION_COLUMNS, append=args.resume)
        self.started = time.perf_counter()
        self.wall_offset = wall_offset  # seconds the run had taken before PPO in this process (a resume, a warm start)
        self.evaluate_at_start = evaluate_at_start  # the learning curve's point at step 0 (after a warm start)
        self.stop_requested = False
        self.latest_evaluation: dict = {}
        # seconds spent in this process: rollouts (of which stepping the games), updates, evaluations
        self.rollout_seconds = self.env_seconds = self.update_seconds = self.eval_seconds = 0.0
        self.steps_trained = 0
        self.update_threads = update_threads(args.threads)
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
        self.next_checkpoint = self.num_timesteps + self.args.checkpoint_every
        every = self.args.eval_every
        self.next_evaluation = (self.num_timesteps // every + 1) * every if every else None
        # SB3 trains whole rollouts: the run ends at the first multiple of a rollout past --timesteps
        rollout = self.model.n_steps * self.training_env.num_envs
        end = self.num_timesteps + math.ceil(max(0, self.args.timesteps - self.num_timesteps) / rollout) * rollout
        self.bar = tqdm(total=end, initial=self.num_timesteps, unit="step", unit_scale=True, dynamic_ncols=True,
                        smoothing=0.05, disable=not self.args.progress, desc="training")
        if self.evaluate_at_start:
            self.evaluate()

    # ---- timing: a PPO iteration is a rollout (env + policy) then an update
    def _on_rollout_start(self) -> None:
        torch.set_num_threads(1)
        now = time.perf_counter()
        if self._phase == "update":
            self._end_iteration(now)
        self._phase, self._phase_started = "rollout", now
        self._env_at_start, self._eval_at_start, self._steps_at_start = self.timed_env.seconds, self.eval_seconds, self.num_timesteps

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
        if self.next_evaluation is not None and self.num_timesteps >= self.next_evaluation:
            self.next_evaluation += self.args.eval_every
            self.evaluate()
        if self.num_timesteps >= self.next_checkpoint:
            self.next_checkpoint = self.num_timesteps + self.args.checkpoint_every
            self.save_checkpoint(self.wall_seconds())
        return not self.stop_requested

    def evaluate(self) -> None:
        """The learning curve's point (and, in a league, a snapshot if the learner has earned one)."""
        started = time.perf_counter()
        self.bar.set_postfix_str(f"evaluating against {', '.join(self.curve_opponents)}", refresh=True)
        for name, opponent in self.curve_opponents.items():
            result = win_rate(self.learner, opponent, self.args.players, rounds=self.args.eval_rounds, seed=self.args.seed + 1000, **self.rules)
            self.latest_evaluation[name] = result["win_rate"]
            self.evaluations.write({"timesteps": self.num_timesteps, "wall_seconds": self.wall_seconds(), "opponent": name, **result})
            self.logger.record(f"eval/win_rate_{name}", result["win_rate"])
        if self.league is not None:
            verdict = self.league.consider_snapshot(self.learner, self.make_snapshot, rounds=self.args.league_rounds,
                                                    seed=self.args.seed + 2000, margin=self.args.league_margin, **self.rules)
            self.logger.record("league/snapshots", self.league.snapshots_added)
            if verdict["added"]:
                tqdm.write(f"league: {verdict['added']} added at {self.num_timesteps} steps (beat {verdict['strongest']} "
                           f"{verdict['results'][verdict['strongest']]['win_rate']:.1%})")
        self.bar.set_postfix_str("  ".join(f"{name} {rate:.0%}" for name, rate in self.latest_evaluation.items()))
        self.eval_seconds += time.perf_counter() - started
