"""train.py --tables / --recipe universal: a smoke run of a few thousand steps on three tables, resumed, with
per-table evaluations and a universal agent file that loads at any player count."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import agents
from agents.training.options import learning_rate
from agents.training.run_folder import run_files
from agents.training.train import main, parse_args, run_tables
from agents.training.universal import parse_table_weights, parse_tables, parse_teachers, table_games, training_tables
from hpuno_env import VectorEngine

SMALL = ["--tables", "2,3,6", "--house-tables", "2", "--warm-start-decisions", "4000", "--envs", "25", "--n-steps", "32", "--batch-size", "256", "--net-arch", "32",
         "--checkpoint-every", "1536", "--eval-every", "1536", "--eval-rounds", "20", "--final-rounds", "20", "--no-progress"]


def test_a_universal_run_checkpoints_resumes_and_exports(tmp_path):
    out = str(tmp_path / "run")
    assert main([*SMALL, "--out", out, "--timesteps", "1536"]) == 0
    assert main([*SMALL, "--out", out, "--timesteps", "3072", "--resume"]) == 0
    with open(f"{out}/table_evaluations.csv") as file:
        rows = list(csv.DictReader(file))
    labels = {"2", "3", "6", "2 house", "2 house classic"}
    assert {row["table"] for row in rows} == labels
    assert {int(row["timesteps"]) for row in rows} == {0, 1600, 3200}  # 0: after the warm start
    with open(f"{out}/losses.csv") as file:  # train.py's one loop: the same logs as a single table's
        assert [int(row["timesteps"]) for row in csv.DictReader(file)] == [800, 1600, 2400, 3200]
    assert f"{out}/table_evaluations.csv" in run_files(out)  # --overwrite removes it with the rest of the run
    config = json.load(open(f"{out}/config.json"))
    assert config["warm_start"]["decisions"] == 4000 and len(config["commands"]) == 2
    agent = agents.load(f"{out}/agent.safetensors", num_players=4, seed=0)
    assert agent.describe()["evaluation"]["tables"].keys() == labels
    engine = VectorEngine(num_games=8, num_players=4, seed=0)
    engine.reset()
    masks = engine.legal_mask()
    assert masks[np.arange(8), agent.act(engine.observe(), masks)].all()


def test_bad_tables_are_refused():
    assert parse_tables("2,10") == [2, 10]
    for text in ("2,11", "two", "2,2"):
        with pytest.raises(ValueError, match="--tables"):
            parse_tables(text)
    assert parse_tables("", "--house-tables") == []


def test_the_step_is_constant_for_a_quarter_of_the_run_then_falls_to_the_final_one(tmp_path):
    argv = ["--tables", "2,3", "--out", str(tmp_path / "run"), "--learning-rate", "4e-4", "--timesteps", "1000"]
    assert learning_rate(run_tables(parse_args(argv), argv)[0].ppo) == 4e-4  # no final step: constant
    argv += ["--final-learning-rate", "0"]
    step = learning_rate(run_tables(parse_args(argv), argv)[0].ppo)  # a function of SB3's progress_remaining
    assert [step(1 - steps / 1000) for steps in (0, 250, 625, 1000, 2000)] == pytest.approx([4e-4, 4e-4, 2e-4, 0.0, 0.0])


def test_house_tables_without_tables_are_refused(capsys):
    with pytest.raises(SystemExit):
        main(["--house-tables", "2", "--out", "unused"])
    assert "--house-tables" in capsys.readouterr().err


TWO_TABLES = ["--tables", "2,3", "--warm-start-decisions", "8000", "--envs", "16", "--n-steps", "32", "--batch-size", "256",
              "--net-arch", "32", "--checkpoint-every", "512", "--eval-every", "512", "--eval-rounds", "20", "--final-rounds", "20",
              "--no-progress"]


def test_teachers_are_fitted_at_their_tables_and_again_on_a_resume(tmp_path):
    out = str(tmp_path / "run")
    assert main([*TWO_TABLES, "--teachers", "2=ppo_2p", "--out", out, "--timesteps", "512"]) == 0
    config = json.load(open(f"{out}/config.json"))
    assert config["warm_start"]["teachers"] == {"2": "ppo_2p", "3": "heuristic"}
    assert config["warm_start"]["agreement_by_table"].keys() == {"2", "3"}
    assert main([*TWO_TABLES, "--teachers", "3=random-play", "--out", out, "--timesteps", "1024", "--resume"]) == 0
    assert main([*TWO_TABLES, "--out", out, "--timesteps", "1536", "--resume"]) == 0  # no teachers: no fit
    config = json.load(open(f"{out}/config.json"))
    assert [refit["teachers"] for refit in config["refits"]] == [{"2": "itself", "3": "random-play"}]
    assert config["refits"][0]["timesteps"] == 512 and config["warm_start"]["teachers"]["2"] == "ppo_2p"
    with open(f"{out}/table_evaluations.csv") as file:
        steps = [int(row["timesteps"]) for row in csv.DictReader(file) if row["table"] == "2"]
    assert steps == [0, 512, 512, 1024, 1536]  # the first run's final point, then the refit's own at the same step


@pytest.mark.parametrize("text, message", [("5=heuristic", "TABLE=AGENT"), ("2=", "TABLE=AGENT"), ("2=heuristic,2=ppo_2p", "twice"),
                                           ("3=ppo_2p", "3=ppo_2p"), ("2=no_such_agent", "no_such_agent")])
def test_bad_teachers_are_refused_naming_the_flag(text, message):
    tables = training_tables([2, 3], [], {})
    with pytest.raises(ValueError, match=message):
        parse_teachers(text, tables)
    assert parse_teachers(" 2 = ppo_2p ", tables) == {"2": "ppo_2p"}


def test_table_weights_share_the_games_in_proportion():
    tables = training_tables([2, 8, 10], [2], {})
    weights = parse_table_weights("8=3, 10=3,2 house=0.5", tables)
    assert weights == [1, 3, 3, 0.5, 1]
    assert table_games(85, weights) == [10, 30, 30, 5, 10]
    assert table_games(3, weights) == [1, 1, 1, 1, 1]  # every table keeps a game
    assert parse_table_weights("", tables) == [1] * 5


@pytest.mark.parametrize("text, message", [("5=2", "TABLE=WEIGHT"), ("8=0", "TABLE=WEIGHT"), ("8=nan", "TABLE=WEIGHT"),
                                           ("8=1e9", "TABLE=WEIGHT"), ("8=two", "TABLE=WEIGHT"), ("8=2,8=3", "twice")])
def test_bad_table_weights_are_refused_naming_the_flag(text, message):
    with pytest.raises(ValueError, match=message):
        parse_table_weights(text, training_tables([2, 8], [], {}))


def test_a_weighted_run_records_each_tables_games(tmp_path, capsys):
    out = str(tmp_path / "run")
    assert main([*TWO_TABLES, "--table-weights", "3=3", "--out", out, "--timesteps", "512"]) == 0
    assert json.load(open(f"{out}/config.json"))["table_games"] == {"2": 4, "3": 12}
    assert main([*TWO_TABLES, "--table-weights", "4=3", "--out", str(tmp_path / "other"), "--timesteps", "512"]) == 2
    assert "--table-weights takes TABLE=WEIGHT" in capsys.readouterr().err and not (tmp_path / "other").exists()


def test_bad_teachers_stop_the_command_before_it_writes(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TWO_TABLES, "--teachers", "3=ppo_2p", "--out", str(out), "--timesteps", "512"]) == 2
    assert "--teachers 3=ppo_2p" in capsys.readouterr().err and not out.exists()


def test_a_league_run_plays_heuristic_snapshots_and_specialists_and_resumes_them(tmp_path):
    out = tmp_path / "run"
    assert main([*TWO_TABLES, "--opponent", "league", "--out", str(out), "--timesteps", "1024"]) == 0
    config = json.load(open(out / "config.json"))
    assert config["league"]["2"][:2] == ["heuristic", "ppo_2p"] and config["league"]["3"] == ["heuristic"]
    state = json.load(open(out / "checkpoint.json"))
    assert state["league_snapshots"] == ["snapshot-1"] and (out / "league" / "snapshot-1.safetensors").is_file()
    snapshot = agents.load(str(out / "league" / "snapshot-1.safetensors"), num_players=7)  # a universal agent
    assert snapshot.describe()["training"]["league_snapshot"] == "snapshot-1"
    assert main([*TWO_TABLES, "--out", str(out), "--timesteps", "2048", "--resume"]) == 0  # the league goes on
    state = json.load(open(out / "checkpoint.json"))
    assert state["league_snapshots"] == ["snapshot-1", "snapshot-2"] and state["snapshots_added"] == 2  # one per evaluation


def test_a_universal_run_takes_only_the_heuristic_or_a_league(tmp_path, capsys):
    assert main([*TWO_TABLES, "--opponent", "random", "--out", str(tmp_path / "run"), "--timesteps", "512"]) == 2
    assert "--opponent in a universal run" in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_the_universal_step_anneals_at_every_update_and_the_fitted_network_is_measured_with_no_eval_every(tmp_path):
    out = tmp_path / "run"
    assert main([*TWO_TABLES, "--eval-every", "0", "--learning-rate", "3e-4", "--final-learning-rate", "0",
                 "--out", str(out), "--timesteps", "2048"]) == 0
    with open(out / "losses.csv") as file:  # rollouts of 512 steps: the schedule at 512, 1024, 1536 and 2048 steps
        steps = [float(row["learning_rate"]) for row in csv.DictReader(file)]
    assert steps == pytest.approx([3e-4, 2e-4, 1e-4, 0.0], abs=1e-9)
    with open(out / "table_evaluations.csv") as file:  # the fitted network's point, then the final evaluation's
        assert [int(row["timesteps"]) for row in csv.DictReader(file)] == [0, 0, 2048, 2048]
