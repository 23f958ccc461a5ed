"""The documentation site: it builds with ``mkdocs build --strict`` (a broken link or a missing API reference
fails), its Python examples run as a reader would copy them, and each model card's facts are its agent file's."""

from __future__ import annotations

import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

import agents
from agents.players.trained import SHIPPED

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
# docs/frameworks.md's blocks are run, and what they make checked, by tests/env/test_frameworks.py.
RUN_ELSEWHERE = {DOCS / "frameworks.md"}
# A block that cannot run in the suite says so, visibly, in its first line.
OPT_OUT = "# not run by the tests:"


def python_blocks(page: pathlib.Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), re.S | re.M)


PAGES = sorted(page for page in DOCS.rglob("*.md") if page not in RUN_ELSEWHERE)
BLOCKS = [(page, index, block) for page in PAGES for index, block in enumerate(python_blocks(page))]


def mkdocs_build(config: pathlib.Path, site: pathlib.Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(config.parent)}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
                          capture_output=True, text=True, cwd=config.parent, env=environment, timeout=600)


def test_the_site_builds_strictly_with_every_page_and_the_api_reference(tmp_path):
    result = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, result.stderr[-4000:]
    built = {path.relative_to(tmp_path / "site").as_posix() for path in (tmp_path / "site").rglob("index.html")}
    for page in DOCS.rglob("*.md"):
        name = page.relative_to(DOCS).with_suffix("").as_posix()
        expected = "index.html" if name == "index" else (name[: -len("/index")] if name.endswith("/index") else name) + "/index.html"
        assert expected in built, f"{page.relative_to(ROOT)} was not built"
    reference = (tmp_path / "site" / "reference" / "index.html").read_text()
    for name in ("VectorEngine", "HPUnoGymVectorEnv", "TrainedAgent", "win_rate"):
        assert f"id=\"{name}" in reference or f".{name}\"" in reference, f"{name} missing from the API reference"
    assert "observation layout" in (tmp_path / "site" / "changelog" / "index.html").read_text(), "CHANGELOG.md included"


def test_a_broken_link_fails_the_build(tmp_path):
    """The strict build is a real check: the same site with one link to a missing page does not build."""
    for name in ("docs", "hpuno_env", "agents"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    for name in ("mkdocs.yml", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    with open(tmp_path / "docs" / "index.md", "a") as page:
        page.write("\nSee [the missing page](no-such-page.md).\n")
    result = mkdocs_build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert result.returncode != 0 and "no-such-page.md" in result.stderr


def test_the_pages_have_python_examples():
    pages = {page.name for page, _, _ in BLOCKS}
    assert {"environment.md", "engine.md", "training.md", "evaluation.md", "records.md"} <= pages


@pytest.mark.parametrize(("page", "index", "block"), BLOCKS, ids=[f"{p.relative_to(DOCS)}-{i}" for p, i, _ in BLOCKS])
def test_docs_example_runs(page, index, block):
    first_line = block.splitlines()[0]
    if first_line.startswith(OPT_OUT):
        assert len(first_line) > len(OPT_OUT) + 10, "a block that opts out says why"
        compile(block, f"{page.name} block {index}", "exec")  # it is still valid Python
        return
    code = block.replace("learn(100_000,", "learn(1_000,")  # the training example, shortened
    exec(compile(code, f"{page.relative_to(ROOT)} block {index}", "exec"), {"__name__": "docs"})


# ---------------------------------------------------------------- model cards


def card_facts(card: pathlib.Path) -> dict:
    """The card's first table: ``| name | value |`` rows."""
    return {name.strip(): value.strip() for name, value in re.findall(r"^\| ([a-z0-9 ]+) \| (.+) \|$", card.read_text(), re.M)}


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_model_card_matches_the_shipped_agent_file(name):
    card = DOCS / "agents" / f"{name}.md"
    facts = card_facts(card)
    path = pathlib.Path(SHIPPED[name])
    assert facts["file"].startswith(f"`agents/weights/{path.name}`")
    assert facts["sha256"] == f"`{hashlib.sha256(path.read_bytes()).hexdigest()}`", f"{card.name}: sha256 of {path.name}"
    players = facts["players"].split()[0].rstrip(",")  # a count, or "any" for a universal agent
    described = agents.load(name, num_players=2 if players == "any" else int(players)).describe()
    assert players == str(described["num_players"])
    version = re.match(r"(?:universal, version )?(\d+)", facts["observation layout"]).group(1)
    assert int(version) == described["observation"]["version"]
    assert int(facts["steps"].split()[0].replace(",", "")) == described["training"]["timesteps"]
    text = card.read_text()
    for section in ("## Training", "## Evaluation", "## Known limits", "## Reproducing"):
        assert section in text, f"{card.name} lacks {section}"
    for command in described["training"]["commands"]:
        assert command in text, f"{card.name} does not give the command {command!r}"


def test_every_shipped_agent_has_a_card_linked_from_the_readme_and_the_agents_page():
    readme = (ROOT / "README.md").read_text()
    index = (DOCS / "agents" / "index.md").read_text()
    for name in SHIPPED:
        assert f"(docs/agents/{name}.md)" in readme and f"({name}.md)" in index
