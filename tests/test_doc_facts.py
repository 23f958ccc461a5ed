"""Every figure the README and the documentation state about the code is the code's: the observation's sizes, fields
and layout version (the universal observation's too), the action count, the agents' names, the console commands, the model cards' input counts and
networks, the engine's bytes a game, and the modules, functions, paths and notebooks the pages name. Each check parses the Markdown as a reader sees it and compares it with the code, so an edit of either
that leaves the other behind fails here."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import pathlib
import re
import tomllib

import pytest

import agents
import hpuno_env
from hpuno_env.encoding import FIELDS_ADDED_IN_VERSION, OBSERVATION_VERSION, observation_layout, observation_size
from hpuno_env.universal import UNIVERSAL_BASE_VERSION, UNIVERSAL_VERSION, universal_layout, universal_size

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
# The changelog (CHANGELOG.md, included by docs/changelog.md) keeps what each release changed, old names included.
PAGES = [README] + sorted(page for page in DOCS.rglob("*.md") if page.name != "changelog.md")
NUM_ACTIONS = len(hpuno_env.ACTION_LABELS)
PLAYER_COUNTS = range(2, 11)
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "eleven": 11, "twelve": 12}


def text(page: pathlib.Path) -> str:
    return page.read_text()


def section(page: pathlib.Path, heading: str) -> str:
    """The text under ``heading`` (a whole ``## ...`` line) up to the next heading of that level."""
    level = heading.split(" ", 1)[0]
    after = text(page).split(f"\n{heading}\n", 1)
    assert len(after) == 2, f"{page.name} has no section {heading!r}"
    return re.split(rf"\n{level} ", after[1], maxsplit=1)[0]


def table_rows(markdown: str) -> list[list[str]]:
    """The body rows of every pipe table in ``markdown``, each a list of stripped cells (no header, no rule)."""
    rows, inside = [], False
    for line in markdown.splitlines():
        line = line.strip()
        if not (line.startswith("|") and line.endswith("|")):
            inside = False
        elif re.fullmatch(r"\|[-:| ]+\|", line):
            inside = True
        elif inside:
            rows.append([cell.strip() for cell in line[1:-1].split("|")])
    return rows


def python_blocks(page: pathlib.Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text(page), re.S | re.M)


def backticked(page: pathlib.Path) -> list[str]:
    """Inline code spans of the page's prose and tables (fenced blocks left out)."""
    prose = re.sub(r"^```.*?^```", "", text(page), flags=re.S | re.M)
    return re.findall(r"`([^`\n]+)`", prose)


# ---------------------------------------------------------------- the observation

ENVIRONMENT = DOCS / "environment.md"


def size_expression(expression: str, others: int) -> int:
    """A size cell of the observation table: an integer, ``O`` (the other seats) or a product such as ``4·O``."""
    assert re.fullmatch(r"[0-9O·*+ ]+", expression), f"size {expression!r} is not a number, O or a product"
    return int(eval(expression.replace("·", "*").replace("O", str(others)), {"__builtins__": {}}))  # digits and O only


def observation_table() -> list[tuple[list[str], str]]:
    rows = table_rows(section(ENVIRONMENT, "## Observation"))
    return [(re.findall(r"`(\w+)`", row[0]), row[1]) for row in rows if row[0].startswith("`")]


@pytest.mark.parametrize("num_players", PLAYER_COUNTS)
def test_the_observation_table_is_observation_layout_field_by_field(num_players):
    """Every field of ``observation_layout``, in order, with its size; a row may name consecutive fields and give
    their total."""
    layout = list(observation_layout(num_players).items())
    position = 0
    for names, size in observation_table():
        assert names, "a row without a field name"
        fields = layout[position: position + len(names)]
        assert [name for name, _ in fields] == names, f"the table has {names} where the layout has {[n for n, _ in fields]}"
        stated = size_expression(size, num_players - 1)
        actual = sum(piece.stop - piece.start for _, piece in fields)
        assert stated == actual, f"{names}: the table says {size} = {stated} with {num_players} players, the layout {actual}"
        position += len(names)
    assert position == len(layout), f"the table lacks {[name for name, _ in layout[position:]]}"



def universal_table() -> list[tuple[list[str], str]]:
    rows = table_rows(section(ENVIRONMENT, "## The universal observation"))
    return [(re.findall(r"`(\w+)`", row[0]), row[1]) for row in rows if row[0].startswith("`")]


def test_the_universal_table_is_universal_layout_field_by_field():
    """Every field of ``universal_layout``, in order, with its size (nine other seats); and the stated total."""
    layout = list(universal_layout().items())
    position = 0
    for names, size in universal_table():
        fields = layout[position: position + len(names)]
        assert [name for name, _ in fields] == names, f"the table has {names} where the layout has {[n for n, _ in fields]}"
        actual = sum(piece.stop - piece.start for _, piece in fields)
        assert size_expression(size, others=9) == actual, f"{names}: the table says {size}, the layout {actual}"
        position += len(names)
    assert position == len(layout), f"the universal table lacks {[name for name, _ in layout[position:]]}"
    stated = re.search(r"One int8 vector of \*\*(\d+)\*\* entries", section(ENVIRONMENT, "## The universal observation"))
    assert stated and int(stated.group(1)) == universal_size()
    version = re.search(r"`hpuno_env\.universal\.UNIVERSAL_VERSION` \((\d+), built on\s+observation layout (\d+)\)", text(ENVIRONMENT))
    assert version and (int(version.group(1)), int(version.group(2))) == (UNIVERSAL_VERSION, UNIVERSAL_BASE_VERSION)


def test_the_stated_observation_sizes_are_the_codes():
    sizes = re.search(r"^Sizes: (.*?)\. ", section(ENVIRONMENT, "## Observation"), re.M | re.S)
    assert sizes, "environment.md states the sizes in a 'Sizes: N (P players), ...' sentence"
    pairs = re.findall(r"(\d+) \((\d+)(?: players)?\)", sizes.group(1))
    assert len(pairs) >= 3
    for size, players in pairs:
        assert int(size) == observation_size(int(players)), f"{size} entries with {players} players"
    # The observation space row: Box(0, 127, (A + B·(n-2),), int8).
    formula = re.search(r"Box\(0, 127, \((\d+) \+ (\d+)·\(n-2\),\), int8\)", text(ENVIRONMENT))
    assert formula, "environment.md's observation space row"
    for num_players in PLAYER_COUNTS:
        assert int(formula.group(1)) + int(formula.group(2)) * (num_players - 2) == observation_size(num_players)


def test_every_entries_with_players_sentence_is_the_codes():
    """Prose such as "an int8 vector (318 entries with 2 players, 454 with 4)", anywhere."""
    found = 0
    for page in PAGES:
        for match in re.finditer(r"(\d+) entries with (\d+) players((?:, \d+ with \d+)*)", text(page)):
            pairs = [(match.group(1), match.group(2))] + re.findall(r", (\d+) with (\d+)", match.group(3))
            for size, players in pairs:
                assert int(size) == observation_size(int(players)), f"{page.name}: {size} entries with {players} players"
                found += 1
    assert found >= 2, "the README states the sizes"


def test_the_shapes_in_the_examples_comments_are_the_codes():
    """A comment such as ``# (4096, 454) int8, (4096, 75) bool`` in an example for num_players=4."""
    found = 0
    for page in PAGES:
        for block in python_blocks(page):
            players = set(re.findall(r"num_players=(\d+)", block))
            comments = [line.split("#", 1)[1] for line in block.splitlines() if "#" in line]
            for games, size, dtype in (shape for comment in comments
                                       for shape in re.findall(r"\((\d+), (\d+)\) (int8|float32|bool)", comment)):
                if dtype == "bool":
                    assert int(size) == NUM_ACTIONS, f"{page.name}: a mask of {size} actions"
                    continue
                assert len(players) == 1, f"{page.name}: an observation shape in a block of several player counts"
                assert int(size) == observation_size(int(next(iter(players)))), f"{page.name}: observations ({games}, {size})"
                found += 1
    assert found >= 3


def test_the_layout_version_is_the_codes():
    header = dict((row[0], row[1]) for row in table_rows(text(ENVIRONMENT).split("\n## ", 1)[0]))
    assert re.fullmatch(rf"`hpuno_v1`, observation layout {OBSERVATION_VERSION}", header["Version"]), header["Version"]
    assert re.search(rf"This is layout\s+version {OBSERVATION_VERSION} ", text(ENVIRONMENT)), "environment.md's observation section"
    for page in PAGES:
        for version in re.findall(r"(?:current|today's) observation layout(?: version)? (\d+)", text(page)):
            assert int(version) == OBSERVATION_VERSION, page.name


def test_the_version_history_has_every_layout_and_the_fields_each_appended():
    rows = table_rows(section(ENVIRONMENT, "## Version history"))
    versions = [int(re.search(r"observation layout (\d+)", row[0]).group(1)) for row in rows]
    assert versions == list(range(OBSERVATION_VERSION, 0, -1)), "newest first, every layout version"
    for version, row in zip(versions, rows, strict=True):
        named = set(re.findall(r"`(\w+)`", row[1]))
        added = set(FIELDS_ADDED_IN_VERSION.get(version, ()))
        assert added <= named, f"layout {version}'s row does not name {added - named}"
        assert not (named & set(observation_layout(2))) - added, f"layout {version}'s row names fields it did not add"
    # rules.md §15.9 dates the house rules' fields to their layout version.
    house = re.search(r"observation layout version (\d+), appended", text(DOCS / "rules.md"))
    assert house and "pending_draw" in FIELDS_ADDED_IN_VERSION[int(house.group(1))]


# ---------------------------------------------------------------- actions


def test_every_stated_action_count_is_the_codes():
    found = 0
    for page in PAGES:
        for count in re.findall(r"Discrete\((\d+)\)|\b(\d+) actions\b", text(page)):
            assert int(count[0] or count[1]) == NUM_ACTIONS, f"{page.name}: {count} actions"
            found += 1
    assert found >= 3


def test_the_actions_table_is_action_labels():
    covered = []
    for index, labels, _ in table_rows(section(ENVIRONMENT, "## Actions")):
        if "-" in index:
            first, last = map(int, index.split("-"))
            indices = list(range(first, last + 1))
        else:
            indices = [int(i) for i in index.split(",")]
        covered += indices
        named = re.findall(r"`([^`]+)`", labels)
        actual = [hpuno_env.ACTION_LABELS[i] for i in indices]
        if ".." in labels:  # `target:1` .. `target:9`
            assert [named[0], named[-1]] == [actual[0], actual[-1]], index
        elif "<" in labels:  # `play:<colour>:<rank>`
            pattern = re.escape(named[0]).replace("<colour>", "(red|yellow|green|blue)").replace("<rank>", r"[a-z0-9]+")
            assert all(re.fullmatch(pattern, label) for label in actual), index
        else:
            assert named[: len(actual)] == actual, f"{index}: the table says {named}, ACTION_LABELS {actual}"
    assert covered == list(range(NUM_ACTIONS))


# ---------------------------------------------------------------- agents and commands


def test_the_readmes_list_of_agents_is_agents_available():
    stated = re.search(r"print\(agents\.available\(\)\)\s+# (.*)", text(README))
    assert stated, "README.md prints agents.available() with its names in a comment"
    assert [name.strip() for name in stated.group(1).split(",")] == agents.available()


def test_the_evaluation_page_names_every_agent():
    loading = section(DOCS / "evaluation.md", "## Loading and comparing agents").split("```", 1)[0]
    named = set(re.findall(r'`"([\w-]+)"`', loading))
    assert named == set(agents.available()), f"evaluation.md names {sorted(named)}"


def test_the_agents_page_has_a_row_for_every_agent():
    rows = table_rows(text(DOCS / "agents" / "index.md").split("\n## ", 1)[0])
    named = [re.fullmatch(r"`([\w-]+)`", row[0]).group(1) for row in rows]
    assert sorted(named) == sorted(agents.available())


def test_the_readmes_console_commands_are_the_packages():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    stated = re.search(r"and (\w+) commands: (.*?) \(also", text(README), re.S)
    assert stated, "README.md's install section lists the commands"
    names = re.findall(r"`(hpuno-[\w-]+)`", stated.group(2))
    assert NUMBER_WORDS[stated.group(1)] == len(names)
    assert sorted(names) == sorted(scripts)
    for page in PAGES:
        for command in re.findall(r"^\$?\s*(hpuno-[a-z]+) ", text(page), re.M) + \
                re.findall(r"`(hpuno-[a-z]+)[ `]", text(page)):
            assert command in scripts or command in {"hpuno-env", "hpuno-agent", "hpuno-record"}, \
                f"{page.name} runs {command}, which pyproject.toml does not install"


def _has_main(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    if spec.submodule_search_locations:  # a package runs its __main__.py
        return (pathlib.Path(spec.origin).parent / "__main__.py").is_file()
    source = pathlib.Path(spec.origin).read_text()
    return 'if __name__ == "__main__"' in source


def test_every_python_dash_m_runs_a_module_with_a_main():
    seen = set()
    for page in PAGES:
        for module in re.findall(r"python -m ((?:agents|hpuno_env)(?:\.\w+)*)", text(page)):
            assert _has_main(module), f"{page.name}: python -m {module} does nothing (no __main__ guard)"
            seen.add(module)
    assert "agents.evaluation.tournament" in seen


# ---------------------------------------------------------------- names and paths


def resolves(dotted: str) -> bool:
    """A module, or an attribute of one (``agents.evaluate.win_rate``), that exists."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            if importlib.util.find_spec(module) is None:
                continue
        except ModuleNotFoundError:
            continue
        target = importlib.import_module(module)
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


@pytest.mark.parametrize("page", PAGES, ids=[page.relative_to(ROOT).as_posix() for page in PAGES])
def test_every_named_module_and_function_exists(page):
    names = set()
    for span in backticked(page) + [line for block in python_blocks(page) for line in block.splitlines()]:
        names.update(re.findall(r"\b((?:agents|hpuno_env)(?:\.[A-Za-z_]\w*)+)", span))
    for block in python_blocks(page):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in {"agents", "hpuno_env"}:
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    missing = sorted(name for name in names if not resolves(name))
    assert not missing, f"{page.name} names what does not exist: {missing}"


# A bare file name (`render.py` after `hpuno_env/aec_env.py`) is one of these folders'.
CODE = [ROOT / folder for folder in ("hpuno_env", "agents", "benchmarks", "tests")]
PATH = re.compile(r"^((?:hpuno_env|agents|tests|benchmarks|notebooks|docs|checkpoints)/[\w./-]*|[\w-]+\.py)$")


@pytest.mark.parametrize("page", PAGES, ids=[page.relative_to(ROOT).as_posix() for page in PAGES])
def test_every_named_path_exists(page):
    missing = []
    for span in backticked(page):
        for word in span.split():
            word = word.rstrip(",;:)")
            if PATH.match(word) and "<" not in word and "*" not in word:
                if not (ROOT / word).exists() and ("/" in word or not any(any(folder.rglob(word)) for folder in CODE)):
                    missing.append(word)
    for target in re.findall(r"\]\(((?:\.\./)*(?:tests|agents|hpuno_env|benchmarks|notebooks)/[^)#]*)\)", text(page)):
        if not (page.parent / target).exists() and not (ROOT / target).exists():
            missing.append(target)
    assert not missing, f"{page.name} names paths that do not exist: {missing}"


# ---------------------------------------------------------------- the contributing page's layout and the notebooks

CONTRIBUTING = DOCS / "contributing.md"
NOTEBOOKS = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))


def layout_paths() -> list[str]:
    """The paths of the layout table's first column; a bare file name is in the folder of the path before it."""
    paths = []
    for row in table_rows(section(CONTRIBUTING, "## The layout")):
        folder = ""
        for path in re.findall(r"`([^`]+)`", row[0]):
            if "/" in path.rstrip("/"):
                folder = path.rsplit("/", 1)[0] + "/"
                paths.append(path)
            else:
                paths.append(folder + path if folder and not path.endswith("/") else path)
    return paths


def test_the_layout_table_lists_every_module_and_nothing_else():
    listed = {path for path in layout_paths() if path.endswith(".py")}
    modules = {path.relative_to(ROOT).as_posix() for package in ("hpuno_env", "agents") for path in (ROOT / package).rglob("*.py")}
    modules |= {path.name for path in ROOT.glob("*.py")}
    assert not modules - listed, f"the layout table lacks {sorted(modules - listed)}"
    assert not listed - modules, f"the layout table lists what does not exist: {sorted(listed - modules)}"


def test_the_layout_table_lists_every_test_folder_and_notebook():
    listed = set(layout_paths())
    folders = {path.relative_to(ROOT).as_posix() + "/" for path in (ROOT / "tests").iterdir()
               if path.is_dir() and any(path.glob("*.py"))}
    assert folders <= listed, f"the layout table lacks {sorted(folders - listed)}"
    assert {f"notebooks/{name}" for name in NOTEBOOKS} == {path for path in listed if path.endswith(".ipynb")}
    benchmarks = next(row[1] for row in table_rows(section(CONTRIBUTING, "## The layout")) if row[0] == "`benchmarks/`")
    named = set(re.findall(r"`([\w.]+\.py)`", benchmarks))
    assert named == {path.name for path in (ROOT / "benchmarks").glob("*.py")}, "the benchmarks row names every script"


def test_every_count_of_notebooks_is_the_number_of_notebooks():
    found = 0
    for page in PAGES:
        for word in re.findall(r"\b(\w+) (?:tutorial )?notebooks\b", text(page), re.I):
            if word.lower() in NUMBER_WORDS or word.isdigit():
                count = int(word) if word.isdigit() else NUMBER_WORDS[word.lower()]
                assert count == len(NOTEBOOKS), f"{page.name}: {word} notebooks, notebooks/ has {len(NOTEBOOKS)}"
                found += 1
        # "the notebooks in `notebooks/` (quickstart; train and evaluate; ...)": one item a notebook.
        for items in re.findall(r"`notebooks/`\]?(?:\([^)]*\))? \(([^)]*)\)", text(page)):
            assert len(items.split(";")) == len(NOTEBOOKS), f"{page.name} lists {items!r}"
            found += 1
    assert found >= 3


# ---------------------------------------------------------------- the model cards' figures


@pytest.mark.parametrize("name", sorted(agents.SHIPPED))
def test_the_model_cards_sizes_are_the_agent_files(name):
    """The card's input count, network shape and the prefix it reads are its agent file's (tests/test_docs.py checks
    the sha256, players, layout version and steps)."""
    card = text(DOCS / "agents" / f"{name}.md")
    players = re.search(r"^\| players \| (\d+|any)", card, re.M).group(1)  # "any": a universal agent
    described = agents.load(name, num_players=2 if players == "any" else int(players)).describe()
    network = described["network"]
    assert re.search(rf"^\| observation layout \| (universal, version )?{described['observation']['version']} \({network['input_size']} inputs",
                     card, re.M), f"{name}: the observation layout row"
    shape = "-".join(map(str, [network["input_size"], *network["hidden_sizes"], network["num_actions"]]))
    assert re.search(rf"^\| architecture \| MLP {shape}, {network['activation']},", card, re.M), f"{name}: MLP {shape}"
    for prefix in re.findall(r"the first (\d+) entries of the current observation", card):
        assert int(prefix) == described["observation"]["size"] < observation_size(int(players))


# ---------------------------------------------------------------- the engine's memory


def state_bytes_per_game(num_players: int, field: str | None = None) -> float:
    engine = hpuno_env.VectorEngine(num_games=64, num_players=num_players, seed=0)
    arrays = [getattr(engine.state, name) for name in engine.state._fields if field in (None, name)]
    return sum(array.nbytes for array in arrays) / 64


def test_the_engine_pages_memory_figures_are_the_state_records():
    page = text(DOCS / "engine.md")
    stated = re.search(r"about\s+(\d+\.\d) KB a game with 2 players, (\d+\.\d) KB with 4, of which (\d+\.\d) KB is the "
                       r"buffer of the last step's events\), so a batch\s+of ([\d,]+) games with 4 players takes about "
                       r"(\d+) MB", page)
    assert stated, "engine.md states the state's bytes a game"
    two, four, events, games, megabytes = stated.groups()
    assert float(two) == round(state_bytes_per_game(2) / 1000, 1)
    assert float(four) == round(state_bytes_per_game(4) / 1000, 1)
    assert float(events) == round(state_bytes_per_game(4, "events") / 1000, 1) == round(state_bytes_per_game(2, "events") / 1000, 1)
    assert int(megabytes) == round(int(games.replace(",", "")) * state_bytes_per_game(4) / 1e6)


BELIEF_CARD = DOCS / "agents" / "belief.md"
BELIEF_RUNS = {(2, 4): DOCS / "agents" / "belief_calibration_2_4.json",
               (3, 6, 10): DOCS / "agents" / "belief_calibration_3_6_10.json"}


def test_the_belief_cards_calibration_tables_are_its_runs_numbers():
    """Each whole-round row of the card (players, opponent, decisions, then sq err, log-loss and Brier for each belief
    in the run's order: certain, then the files) is the JSON that bench_belief.py --out wrote."""
    import json

    rows = re.findall(r"^\| (\d+) \| ([a-z-]+) \| ([\d,]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", text(BELIEF_CARD), re.M)
    assert len(rows) == 15  # 2 and 4 players, then 3, 6 and 10: three kinds of opponent each
    checked = 0
    for tables, path in BELIEF_RUNS.items():
        runs = [row for row in json.loads(path.read_text()) if row["stage"] == "all"]
        for players, opponent, decisions, *cells in rows:
            if int(players) not in tables:
                continue
            found = [row for row in runs if row["players"] == int(players) and row["opponent"] == opponent]
            assert {row["decisions"] for row in found} == {int(decisions.replace(",", ""))}
            for metric, cell, digits in zip(("sq_err", "log_loss", "brier"), cells, (3, 3, 4)):
                stated = [float(value.strip(" *")) for value in cell.split("/")]
                beliefs = [row for row in found if row["belief"] == "certain"] + \
                          [row for row in found if row["belief"] != "certain"]
                if len(stated) < len(beliefs):  # 2 and 4 players: certain, the table's own file and belief_any
                    own = f"belief_{players}p"
                    beliefs = [b for b in beliefs if b["belief"] == "certain" or own in b["belief"] or "any" in b["belief"]]
                assert stated == [round(b[metric], digits) for b in beliefs], (players, opponent, metric)
            checked += 1
    assert checked == 15
