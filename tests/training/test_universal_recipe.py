"""train.py --tables / --recipe universal: a smoke run of a few thousand steps on three tables, resumed, with
per-table evaluations and a universal agent file that loads at any player count."""

from __future__ import annotations

import csv

import numpy as np
import pytest

import agents
from agents.training.train import main
from agents.training.universal import parse_tables
from hpuno_env import VectorEngine

SMALL = ["--tables", "2,3,6", "--envs", "24", "--n-steps", "32", "--batch-size", "256", "--net-arch", "32",
         "--checkpoint-every", "1536", "--eval-every", "1536", "--eval-rounds", "20", "--final-rounds", "20", "--no-progress"]


def test_a_universal_run_checkpoints_resumes_and_exports(tmp_path):
    out = str(tmp_path / "run")
    assert main([*SMALL, "--out", out, "--timesteps", "1536"]) == 0
    assert main([*SMALL, "--out", out, "--timesteps", "3072", "--resume"]) == 0
    with open(f"{out}/table_evaluations.csv") as file:
        rows = list(csv.DictReader(file))
    assert {row["players"] for row in rows} == {"2", "3", "6"}
    assert max(int(row["timesteps"]) for row in rows) == 3072
    agent = agents.load(f"{out}/agent.safetensors", num_players=4, seed=0)
    assert agent.describe()["evaluation"]["tables"].keys() == {"2", "3", "6"}
    engine = VectorEngine(num_games=8, num_players=4, seed=0)
    engine.reset()
    masks = engine.legal_mask()
    assert masks[np.arange(8), agent.act(engine.observe(), masks)].all()


def test_bad_tables_are_refused():
    assert parse_tables("2,10") == [2, 10]
    for text in ("2,11", "two", "2,2"):
        with pytest.raises(ValueError, match="--tables"):
            parse_tables(text)
