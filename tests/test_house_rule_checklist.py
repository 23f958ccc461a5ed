"""docs/contributing.md's checklist for a new house rule stays true: every house rule is named in every place it lists,
it lists every place checked here, and no module of the package names house rules in its code without being one."""

from __future__ import annotations

import ast
import dataclasses
import pathlib
import re

import pytest

from hpuno_env.options import HOUSE_RULE_OPTIONS, RulesOptions
from test_doc_facts import CONTRIBUTING, section, table_rows

ROOT = pathlib.Path(__file__).resolve().parent.parent
# place -> the files that name every house rule. The checklist's table holds the same, row by row.
PLACES = {
    "options": ("hpuno_env/options.py",),
    "kernel": ("hpuno_env/kernel.py",),
    "encoding": ("hpuno_env/encoding.py",),
    "rules page": ("docs/rules.md",),
    "reference model": ("tests/env/reference_model.py", "tests/env/test_agreement.py"),
    "scenarios": ("tests/env/test_house_rules.py",),
    "heuristic": ("hpuno_env/heuristic.py",),
    "studies": ("agents/studies/house_rules_study.py", "docs/house_rules_study.md"),
    "the env's docs": ("hpuno_env/aec_env.py", "docs/environment.md"),
    "text view": ("hpuno_env/text_view.py",),
}
# places for the house rules with named values (a string option, as deck and stacking) only
NAMED_VALUE_PLACES = {"the arena's form": ("agents/arena/server.py",)}
DEFAULTS = {field.name: field.default for field in dataclasses.fields(RulesOptions)}
NAMED_VALUE_RULES = tuple(name for name in HOUSE_RULE_OPTIONS if isinstance(DEFAULTS[name], str))


def checklist() -> dict[str, tuple[str, ...]]:
    """The checklist's table: place -> the paths its files column names."""
    rows = table_rows(section(CONTRIBUTING, "## A new house rule"))
    return {row[0]: tuple(re.findall(r"`([\w./]+\.(?:py|md))`", row[1])) for row in rows}


def test_the_checklist_lists_every_place_checked_here():
    assert checklist() == {**PLACES, **NAMED_VALUE_PLACES}


def test_the_house_rules_and_their_named_values():
    assert HOUSE_RULE_OPTIONS and set(HOUSE_RULE_OPTIONS) <= set(DEFAULTS)
    assert NAMED_VALUE_RULES == ("deck", "stacking")


@pytest.mark.parametrize("place", [*PLACES, *NAMED_VALUE_PLACES])
def test_every_house_rule_is_named_in_every_place(place):
    files = PLACES.get(place) or NAMED_VALUE_PLACES[place]
    rules = HOUSE_RULE_OPTIONS if place in PLACES else NAMED_VALUE_RULES
    missing = [(path, name) for path in files for name in rules
               if not re.search(rf"\b{name}\b", (ROOT / path).read_text())]
    assert missing == [], f"{place}: house rules not named there (docs/contributing.md, 'A new house rule')"


def named_in_code(path: pathlib.Path) -> set[str]:
    """The house rules a module names in its code: as a name, an attribute, a keyword or a string (docstrings and
    comments aside)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    named = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            named.add(node.id)
        elif isinstance(node, ast.Attribute):
            named.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            named.add(node.arg)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            named.add(node.value)
    return named & set(HOUSE_RULE_OPTIONS)


def test_every_module_that_names_house_rules_in_its_code_is_a_place():
    """A module of the package that handles house rules by name (two or more of them, ``deck`` aside: it is also
    ``reset``'s stacked deck) is a place a new house rule touches."""
    listed = {path for files in (*PLACES.values(), *NAMED_VALUE_PLACES.values()) for path in files}
    found = [str(path.relative_to(ROOT)) for folder in ("hpuno_env", "agents") for path in sorted((ROOT / folder).rglob("*.py"))
             if len(named_in_code(path) - {"deck"}) >= 2]
    assert "hpuno_env/kernel.py" in found  # the check sees what it looks for
    assert [path for path in found if path not in listed] == [], "add it to the checklist in docs/contributing.md"
