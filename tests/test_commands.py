"""The commands as a person meets them: a refused command line answers at once, before the engine (numba) and torch
load; and every example command line in a command's ``--help`` runs (or, where it cannot run here, parses)."""

from __future__ import annotations

import os
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
