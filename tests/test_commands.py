"""The commands as a person meets them: a refused command line answers at once, before the engine (numba) and torch
load; and every example command line in a command's ``--help`` runs (or, where it cannot run here, parses)."""

from __future__ import annotations

import io
import os
import shlex
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Runs a command's module as ``python -m`` does and, when it exits, says with which status and which of the heavy
# modules had been loaded by then.
RUN_AND_SAY_WHAT_LOADED = """
import runpy, sys
sys.argv = sys.argv[1:]
try:
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
except SystemExit as exit:
    print("EXIT", exit.code, sorted(name for name in ("numba", "torch") if name in sys.modules), file=sys.stderr)
"""


@pytest.mark.parametrize("argv, message", [
    (["agents.play", "--players", "11"], "--players must be in [2, 10], got 11"),
    (["agents.play", "--opponents", "heuristc"], "unknown agent 'heuristc'"),
    (["agents.play", "--record", "/proc/nope/game.json"], "--record"),
    (["agents.evaluation.tournament", "heuristic", "random", "--rounds", "0"], "--rounds must be a positive int"),
    (["agents.evaluation.tournament", "heuristic", "randon"], "unknown agent 'randon'"),
    (["agents.evaluation.tournament", "heuristic", "random", "--duplicate", "--opponent", "nobody"], "unknown agent 'nobody'"),
    (["agents.evaluation.tournament", "heuristic", "random", "--rounds", "1000000000"], "rounds=1,000,000,000 over 1 tables of 2 seats"),
    (["agents.studies.exploit", "heuristic", "--players", "11"], "--players must be in [2, 10], got 11"),
    (["agents.studies.exploit", "heuristc"], "unknown agent 'heuristc'"),
    (["agents.studies.exploit", "heuristic", "--rule", "stacking=sometimes"], "--rule: stacking must be one of"),
    (["hpuno_env.replay", "/no/such/record.json"], "cannot read record /no/such/record.json"),
    (["hpuno_env.replay", os.path.abspath(__file__), "--gif", "out.png"], "--gif: the file name must end with .gif"),
])
def test_a_refused_command_line_answers_before_the_engine_and_torch_load(argv, message):
    finished = subprocess.run([sys.executable, "-c", RUN_AND_SAY_WHAT_LOADED, *argv], capture_output=True, text=True,
                              timeout=120, cwd=ROOT)
    error = finished.stderr
    assert f"error: {message}" in error and "Traceback" not in error, error
    assert "EXIT 2 []" in error, error  # status 2, and neither numba nor torch loaded


# ------------------------------------------------------------ every example in a command's --help


def help_text(*command: str) -> str:
    """What ``python COMMAND --help`` prints (COMMAND: ``-m module`` or a script's path)."""
    shown = subprocess.run([sys.executable, *command, "--help"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert shown.returncode == 0, shown.stderr
    return shown.stdout


def examples(text: str, name: str) -> list[list[str]]:
    """The example command lines in a help ``text`` that start with ``name`` (``hpuno-exploit``, ``python
    train.py``): each one's arguments after the name, its ``# comment`` dropped."""
    found = []
    for line in text.splitlines():
        if line.strip().startswith(name + " ") or line.strip() == name or line.strip().startswith(name + "  "):
            found.append(shlex.split(line, comments=True)[len(name.split()):])
    return found


def with_options(argv: list[str], options: dict[str, str]) -> list[str]:
    """``argv`` with each of ``options``' flags set to its value: replaced where given, else added."""
    argv = list(argv)
    for flag, value in options.items():
        if flag in argv:
            argv[argv.index(flag) + 1] = value
        else:
            argv += [flag, value]
    return argv


def test_every_example_in_hpuno_exploits_help_runs_with_a_tiny_budget(tmp_path, monkeypatch, capsys):
    from agents.studies import exploit

    found = examples(help_text("-m", "agents.studies.exploit"), "hpuno-exploit")
    assert len(found) == 6, found
    monkeypatch.chdir(tmp_path)  # the examples' --out folders (runs/...) are made here
    for argv in found:  # in order: the --resume example goes on from the run before it
        tiny = with_options(argv, {"--timesteps": "512" if "--resume" in argv else "256", "--envs": "4", "--rounds": "8",
                                   "--curve-points": "1", "--curve-rounds": "8", "--warm-start-decisions": "0",
                                   "--checkpoint-every": "256"})
        assert exploit.main(tiny) == 0, (argv, capsys.readouterr().err)
        assert "best response vs" in capsys.readouterr().out, argv


def test_every_example_in_hpuno_tournaments_help_runs_with_a_tiny_budget(tmp_path, monkeypatch, capsys):
    from agents.evaluation import tournament

    found = examples(help_text("-m", "agents.evaluation.tournament"), "hpuno-tournament")
    assert len(found) == 5, found
    monkeypatch.chdir(tmp_path)
    for argv in found:  # in order: the --overwrite example replaces the first one's result
        assert tournament.main(with_options(argv, {"--rounds": "8", "--envs": "8"})) == 0, (argv, capsys.readouterr().err)
    assert os.path.isfile(tmp_path / "runs" / "t" / "results.json") and len(os.listdir(tmp_path / "runs" / "t4" / "records")) == 6


def test_every_example_in_the_help_of_hpuno_play_and_hpuno_replay_runs(tmp_path, monkeypatch, capsys):
    from agents import play
    from hpuno_env import replay

    play_help, replay_help = help_text("-m", "agents.play"), help_text("-m", "hpuno_env.replay")
    played, replayed = examples(play_help, "hpuno-play"), examples(play_help + replay_help, "hpuno-replay")
    assert len(played) == 4 and len(replayed) == 4, (played, replayed)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the person leaves at the first question: the record is saved
    for argv in played:
        assert play.main(argv) == 0, (argv, capsys.readouterr().err)
    assert (tmp_path / "runs" / "games" / "game.json").is_file()  # what the replay examples show
    for argv in replayed:
        assert replay.main(argv) == 0, (argv, capsys.readouterr().err)
    assert (tmp_path / "game.gif").read_bytes()[:6] == b"GIF89a"


def test_every_example_in_the_training_scripts_help_passes_their_checks(tmp_path, monkeypatch, capsys):
    """train.py (hpuno-train: the same help) and train_rllib.py train for minutes at least: their examples are read by
    their own parsers and checks. A run is made first for the --resume examples to go on from (train_rllib.py's is
    its checkpoint's progress file alone, which is what its checks read)."""
    import dataclasses
    import importlib.util
    import json

    import torch

    from agents.training.train import parse_args

    found = examples(help_text(os.path.join(ROOT, "train.py")), "python train.py")
    assert found == examples(help_text("-m", "agents.training.train"), "python train.py") and len(found) >= 10
    monkeypatch.chdir(tmp_path)
    for argv in sorted(found, key=lambda argv: "--resume" in argv):  # the new runs' checks first, on an empty runs/
        if "--resume" in argv and not (tmp_path / "runs" / "ppo" / "checkpoint.zip").exists():
            made = subprocess.run([sys.executable, os.path.join(ROOT, "train.py"), "--out", "runs/ppo", "--overwrite",
                                   "--timesteps", "256", "--envs", "8", "--n-steps", "32", "--warm-start", "none",
                                   "--eval-every", "0", "--final-rounds", "8", "--no-progress"],
                                  capture_output=True, text=True, timeout=600)
            assert made.returncode == 0, made.stderr[-2000:]
        if "--help" in argv or (argv[:2] == ["--device", "cuda"] and not torch.cuda.is_available()):
            with pytest.raises(SystemExit) as exit_info:
                parse_args(argv)
            error = capsys.readouterr().err
            assert exit_info.value.code == (0 if "--help" in argv else 2) and "Traceback" not in error, (argv, error)
            assert "--help" in argv or "--device cuda: no CUDA device here" in error, error
            continue
        parse_args(argv)
    spec = importlib.util.spec_from_file_location("train_rllib_examples", os.path.join(ROOT, "train_rllib.py"))
    rllib = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = rllib  # dataclasses look their module up there
    spec.loader.exec_module(rllib)
    checkpoint = tmp_path / "runs" / "rllib" / rllib.CHECKPOINT
    found = examples(help_text(os.path.join(ROOT, "train_rllib.py")), "python train_rllib.py")
    assert len(found) >= 4, found
    for argv in sorted(found, key=lambda argv: "--resume" in argv):
        if "--resume" in argv and not checkpoint.exists():
            checkpoint.mkdir(parents=True)
            (checkpoint / rllib.PROGRESS).write_text(json.dumps({"iterations": 20, "options": dataclasses.asdict(rllib.Args())}))
        if "--help" in argv:
            with pytest.raises(SystemExit) as exit_info:
                rllib.parse_args(argv)
            assert exit_info.value.code == 0
            continue
        rllib.parse_args(argv)


def test_hpuno_arena_help_examples_parse():
    from agents.arena.cli import build_parser

    for argv in examples(help_text("-m", "agents.arena"), "hpuno-arena"):  # a server: started nowhere here
        build_parser().parse_args(argv)


# ------------------------------------------------------------ warnings


@pytest.mark.parametrize("argv", [
    ["agents.evaluation.tournament", "ppo_2p", "random", "--rule", "deck=classic", "--rounds", "4", "--envs", "4"],
    ["agents.play", "--opponents", "ppo_2p", "--rule", "deck=classic", "--record", "game.json"],
    ["agents.studies.exploit", "ppo_2p", "--rule", "deck=classic", "--timesteps", "64", "--envs", "2", "--rounds", "2",
     "--curve-points", "1", "--curve-rounds", "2", "--warm-start-decisions", "0"],
])
def test_an_agent_trained_under_other_rules_is_one_warning_line(argv, tmp_path):
    finished = subprocess.run([sys.executable, "-m", *argv], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                              stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": ROOT})
    assert finished.returncode == 0, finished.stderr[-2000:]
    said = [line for line in finished.stderr.splitlines() if "warn" in line.lower()]
    assert len(said) == 1 and said[0].startswith("warning: agent ") and "deck='classic'" in said[0], finished.stderr
