"""One training loop and one league: a single table and a mixture of tables are two cases of the run's tables
(agents/training/tables.py), and only the loop (agents/training/run.py) calls PPO's ``learn``. Read from the source."""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
TRAINING = ROOT / "agents" / "training"
RLLIB_ADAPTER = "rllib_learner.py"  # RLlib's own league of frozen policies, over RLlib's policy ids


def trees() -> dict[str, ast.Module]:
    return {path.name: ast.parse(path.read_text()) for path in sorted(TRAINING.glob("*.py")) if path.name != RLLIB_ADAPTER}


def test_only_the_one_loop_calls_learn():
    calling = {name for name, tree in trees().items() for node in ast.walk(tree)
               if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "learn"}
    assert calling == {"run.py"}


def test_one_module_defines_the_league():
    leagues = {(name, node.name) for name, tree in trees().items() for node in ast.walk(tree)
               if isinstance(node, ast.ClassDef) and "League" in node.name}
    assert leagues == {("league.py", "League")}


def test_the_mixture_and_the_single_table_are_cases_of_the_run_tables():
    bases = {node.name: [base.id for base in node.bases if isinstance(base, ast.Name)]
             for tree in trees().values() for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    assert bases["OneTable"] == ["Tables"] and bases["TableMixture"] == ["Tables"]
