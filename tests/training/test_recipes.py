"""train.py --recipe: the stages a recipe runs, the options that replace its own, and a tiny champion run end to end."""

from __future__ import annotations

import csv
import json

import pytest

import agents
from agents.training import train
from agents.training.recipes import FIRST_STAGE_ONLY, command_line, recipe_for, stage_options


def stages_of(num_players: int, given: dict, done: int = 0) -> list[tuple[str, dict]]:
    return [(stage.name, options) for stage, options in stage_options(recipe_for("champion", num_players), given, done)]


def test_the_champion_recipe_clones_the_heuristic_plays_it_then_anneals_against_a_mixture():
    (first, warm), (second, annealed) = stages_of(2, {"players": 2})
    assert warm["warm_start"] == "heuristic" and warm["opponent"] == "heuristic" and warm.get("final_learning_rate") is None
    assert warm["timesteps"] == 5_000_000 and not warm["resume"] and warm["final_rounds"] == warm["eval_rounds"]
    assert annealed["resume"] and annealed["opponent"] == "heuristic=0.85,random-play=0.15"
    assert annealed["learning_rate"] == 3e-4 and annealed["final_learning_rate"] == 0.0 and annealed["timesteps"] == 30_000_000
    assert annealed["final_rounds"] == 20_000 and not set(FIRST_STAGE_ONLY) & set(annealed)
    assert (warm["seed"], annealed["seed"]) == (0, 1)  # the second stage deals other games
    assert warm["threads"] == annealed["threads"] == 0  # the update on every core
    assert warm["precision"] == annealed["precision"] == "auto"  # bfloat16 products where the machine has them
    four = stages_of(4, {"players": 4})
    assert [o["opponent"] for _, o in four] == ["heuristic", "heuristic=0.95,random-play=0.05"] and four[-1][1]["timesteps"] == 34_000_000
    assert recipe_for("champion", 6) == recipe_for("champion", 4)
    with pytest.raises(ValueError, match="unknown recipe 'best'"):
        recipe_for("best", 2)


def test_options_given_replace_the_recipes_in_every_stage_but_two_that_belong_to_one(tmp_path):
    rules = '{"stacking": "both", "jump_in": true, "seven_zero": true}'
    given = {"players": 2, "timesteps": 600, "rules": rules, "envs": 32, "seed": 5, "final_learning_rate": 1e-5, "final_rounds": 50,
             "opponent": "random-play", "overwrite": True}
    (_, first), (_, second) = stages_of(2, given)
    assert first["timesteps"] == 100 and second["timesteps"] == 600  # the stages' ends scale with --timesteps
    assert first["rules"] == second["rules"] == rules and first["envs"] == second["envs"] == 32
    assert first["opponent"] == second["opponent"] == "random-play" and (first["seed"], second["seed"]) == (5, 6)
    assert first.get("final_learning_rate") is None and second["final_learning_rate"] == 1e-5  # the annealed stage's
    assert first["final_rounds"] == first["eval_rounds"] and second["final_rounds"] == 50  # the last table's
    assert first["overwrite"] and "overwrite" not in second
    argv = command_line(second, train.Args)
    assert argv[argv.index("--rules") + 1] == rules and "--resume" in argv and "--overwrite" not in argv
    # what the stage's train.py reads (the house rules' options exist once that branch is in; these do today)
    known = stages_of(2, {**given, "rules": '{"uno_penalty": 4, "max_turns": 500}', "overwrite": False, "out": str(tmp_path / "run")})[0][1]
    assert train.parse_args(command_line(known, train.Args)).rules == '{"uno_penalty": 4, "max_turns": 500}'


def test_a_resumed_recipe_goes_on_with_the_stage_it_was_in():
    assert [name for name, _ in stages_of(2, {"players": 2, "resume": True}, done=3_000_000)] == [
        "against the heuristic", "annealed, heuristic and random-play"]
    (name, options), = stages_of(2, {"players": 2, "resume": True}, done=6_004_736)
    assert name == "annealed, heuristic and random-play" and options["resume"]
    assert len(stages_of(2, {"players": 2, "resume": True}, done=30_000_000)) == 1  # done: the last evaluates and exports


def test_a_tiny_champion_run_does_its_stages_in_one_command(tmp_path, capsys):
    out = tmp_path / "champion"
    argv = ["--recipe", "champion", "--timesteps", "3072", "--warm-start-decisions", "2000", "--warm-start-epochs", "1",
            "--envs", "16", "--n-steps", "32", "--threads", "1", "--eval-every", "1024", "--eval-rounds", "10", "--final-rounds", "12",
            "--rules", '{"max_turns": 500}', "--no-progress", "--out", str(out)]
    assert train.main(argv) == 0
    stdout = capsys.readouterr().out
    assert "stage 1 of 2 (against the heuristic)" in stdout and "stage 2 of 2 (annealed, heuristic and random-play)" in stdout
    assert "warm start: agrees with heuristic" in stdout and "recipe champion: 2 stage(s) in" in stdout

    config = json.loads((out / "config.json").read_text())
    first, second = config["commands"]
    assert "--opponent heuristic " in first and "--warm-start heuristic" in first and "--resume" not in first
    assert "--opponent heuristic=0.85,random-play=0.15" in second and "--resume" in second and "--final-learning-rate 0.0" in second
    assert config["recipe"]["name"] == "champion" and config["recipe"]["stage"] == 2 and config["rules_options"]["max_turns"] == 500
    assert config["update_threads"] == 1  # given: it replaces the recipe's (every core)
    with open(out / "losses.csv", newline="") as file:
        losses = list(csv.DictReader(file))
    # 512 steps a rollout: the first stage (to 3072 / 6) is one at a constant step, the second anneals it to 0 at 3072
    assert [int(row["timesteps"]) for row in losses] == [512, 1024, 1536, 2048, 2560, 3072]
    assert [float(row["learning_rate"]) for row in losses] == pytest.approx([3e-4, 2e-4, 1.5e-4, 1e-4, 5e-5, 0.0])
    with open(out / "evaluations.csv", newline="") as file:
        curve = [(row["timesteps"], row["opponent"], row["rounds"]) for row in csv.DictReader(file)]
    assert curve[:2] == [("0", "heuristic", "10"), ("0", "random-play", "10")]  # after the warm start
    assert ("1024", "heuristic", "10") in curve and ("3072", "heuristic", "12") in curve  # a periodic point, the final table
    assert ("512", "heuristic", "10") in curve  # the first stage's table

    agent = agents.load(str(out / "agent.safetensors"), num_players=2)
    training = agent.describe()["training"]
    assert training["timesteps"] == 3072 and training["commands"] == config["commands"]
    assert training["config"]["recipe"]["wall_seconds"] > 0 and training["config"]["recipe"]["command"].startswith("python train.py --recipe champion")

    # --resume goes on with the stage the checkpoint is in: here the last, to a longer --timesteps
    assert train.main([*argv, "--resume", "--timesteps", "4096"]) == 0
    stdout = capsys.readouterr().out
    assert "stage 1 of 2" not in stdout and "stage 2 of 2" in stdout and "resumed from" in stdout
    commands = json.loads((out / "config.json").read_text())["commands"]
    assert len(commands) == 3 and "--timesteps 4096" in commands[2] and "--resume" in commands[2]
    with open(out / "losses.csv", newline="") as file:
        assert [int(row["timesteps"]) for row in csv.DictReader(file)][-2:] == [3584, 4096]
