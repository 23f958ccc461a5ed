"""The README's Python examples run as a newcomer would copy them (training shortened), its two commands are\n.ci/run's, and it stays a short user's guide (docs/ holds the rest)."""

from __future__ import annotations

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
TEXT = README.read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


def test_readme_has_the_engine_aec_and_training_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(index):
    code = BLOCKS[index].replace("learn(100_000,", "learn(1_000,")
    exec(compile(code, f"README block {index}", "exec"), {"__name__": "readme"})


def two_commands():
    """The shell lines of the README's "Two commands" section, in order."""
    section = TEXT.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for block in re.findall(r"```bash\n(.*?)```", section, re.S) for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_the_readmes_two_commands_to_the_letter_in_a_fresh_virtualenv():
    ci = (README.parent / ".ci" / "run").read_text()
    ci_lines = [line.strip() for line in ci.splitlines()]
    commands = two_commands()
    assert len(commands) == 2, commands
    assert commands[0].endswith("python train.py") and commands[1].endswith("python -m pytest")
    positions = [ci_lines.index(command) for command in commands]  # ValueError: .ci/run lacks a README command
    assert positions == sorted(positions), "the main job runs first, then the tests"
    venv_made = next(i for i, line in enumerate(ci_lines) if line.startswith("python3 -m venv"))
    activated = next(i for i, line in enumerate(ci_lines) if line.startswith("source") and "activate" in line)
    assert venv_made < activated < positions[0]


def test_readme_is_a_short_users_guide_without_development_history():
    lines = TEXT.splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move detail to docs/"
    for word in ("session", "git checkout", "busy host", "stage 4", "o2E"):
        assert word.lower() not in TEXT.lower(), f"README.md mentions {word!r}: development history belongs in docs/experiments.md"
    for section in ("## Install", "## Two commands", "## Shipped agents", "## Documentation", "## License"):
        assert section in TEXT


def test_readme_links_resolve_to_files():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", TEXT):
        if not target.startswith(("http://", "https://")):
            assert (README.parent / target).exists(), f"README.md links to {target}, which does not exist"
