"""The README's Python examples run as a newcomer would copy them (training shortened)."""

from __future__ import annotations

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
TEXT = README.read_text()
# tests/test_frameworks.py runs the "Using other frameworks" blocks exactly as written and checks
# what they produce; running them here again would only double the suite's longest training.
FRAMEWORKS_SECTION = "## Using other frameworks"
if FRAMEWORKS_SECTION in TEXT:
    before, after = TEXT.split(FRAMEWORKS_SECTION, 1)
    TEXT = before + ("\n## " + after.split("\n## ", 1)[1] if "\n## " in after else "")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


def test_readme_has_the_engine_aec_and_training_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    code = BLOCKS[index].replace("learn(100_000)", "learn(1_000)")
    exec(compile(code, f"README block {index}", "exec"), {"__name__": "readme"})
