"""train.py end to end, small: it trains, checkpoints atomically, resumes and reports."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import agents

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_train(*args):
    result = subprocess.run(
        [sys.executable, str(ROOT / "train.py"), *args], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


def test_train_checkpoints_resumes_and_reports(tmp_path):
    out = tmp_path / "run"
    common = ["--envs", "16", "--eval-rounds", "40", "--checkpoint-every", "512", "--out", str(out)]
    first = run_train("--timesteps", "1024", *common)
    assert "win rate" in first and "vs random" in first and "vs heuristic" in first
    assert (out / "checkpoint.zip").exists() and (out / "agent.zip").exists()
    assert not any(name.endswith(".tmp.zip") for name in os.listdir(out))  # nothing half-written left behind
    second = run_train("--timesteps", "2048", "--resume", *common)
    assert "resumed from" in second and "at 1024 steps" in second
    assert "trained 2048 steps" in second
    policy = agents.load(str(out / "agent.zip"), num_players=2)
    assert policy.model.num_timesteps == 2048
