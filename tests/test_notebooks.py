"""The tutorial notebooks (notebooks/*.ipynb) run from top to bottom, at a small budget, so they cannot rot.

Each notebook reads ``HPUNO_NOTEBOOK_BUDGET``: ``small`` shrinks its training
and its numbers of rounds to a few seconds of play. The notebooks are run by
nbclient (installed with the ``nbmake`` dev extra) in a fresh kernel of this
Python, with the notebooks folder as the working directory.
"""

from __future__ import annotations

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = pathlib.Path(__file__).resolve().parent.parent / "notebooks"
NAMES = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))


def test_the_notebooks_are_there():
    assert NAMES == ["01_quickstart.ipynb", "02_train_and_evaluate.ipynb", "03_research.ipynb", "04_house_rules.ipynb",
                     "05_search.ipynb", "06_belief.ipynb"]


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_at_small_budget(name, monkeypatch):
    monkeypatch.setenv("HPUNO_NOTEBOOK_BUDGET", "small")  # the kernel inherits this process's environment
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel's inline backend draws the figures as PNG outputs
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    assert all(not cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), \
        f"{name} is committed with outputs: clear them (jupyter nbconvert --clear-output --inplace)"
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    figures = [output for cell in notebook.cells if cell.cell_type == "code" for output in cell.outputs
               if output.get("output_type") == "display_data" and "image/png" in output.get("data", {})]
    assert figures, f"{name} drew no figure"
