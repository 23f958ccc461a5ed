"""The README's Python examples run as a newcomer would copy them (training shortened)."""

from __future__ import annotations

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_readme_has_the_engine_aec_and_training_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    code = BLOCKS[index].replace("learn(100_000)", "learn(1_000)")
    exec(compile(code, f"README block {index}", "exec"), {"__name__": "readme"})
