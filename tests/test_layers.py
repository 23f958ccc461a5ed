"""The import graph: ``hpuno_env`` never imports ``agents``, and ``agents/`` is in rooms, each importing only the rooms
below it (players < evaluation < training < studies < the front: ``agents/__init__``, ``play``, the ``arena``, the
stable paths ``belief``, ``evaluate`` and ``exploit``), with no cycle between modules. Read from the source, so a lazy import inside a function
counts as much as one at the top."""

from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
# agents._cli (command-line options) is below every room: it imports nothing of agents.
ROOMS = {"agents._cli": 0, "agents.players": 1, "agents.evaluation": 2, "agents.training": 3, "agents.studies": 4}
FRONT = 5


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: pathlib.Path, known: set[str] = frozenset()) -> set[str]:
    """Every module a file imports, absolute names, wherever in the file the import stands; ``from P import m``
    counts as importing P.m alone where P.m is one of the ``known`` modules."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            module = node.module if node.level == 0 else ".".join(filter(None, [base, node.module]))
            submodules = {f"{module}.{alias.name}" for alias in node.names} & known  # `from agents import players`
            found.update(submodules if len(submodules) == len(node.names) else submodules | {module})
    return found


def room(module: str) -> int:
    for prefix, level in ROOMS.items():
        if module == prefix or module.startswith(prefix + "."):
            return level
    return FRONT


def graph(package: str) -> dict[str, set[str]]:
    files = sorted((ROOT / package).rglob("*.py"))
    modules = {module_name(path): path for path in files}
    return {name: {m for m in imported_modules(path, set(modules)) if m in modules and m != name} for name, path in modules.items()}


def test_hpuno_env_never_imports_agents():
    for path in sorted((ROOT / "hpuno_env").rglob("*.py")):
        assert not [m for m in imported_modules(path) if m == "agents" or m.startswith("agents.")], path


def test_no_module_of_agents_imports_a_room_above_its_own():
    upward = [(name, imported) for name, imports in graph("agents").items() for imported in imports
              if room(imported) > room(name)]
    assert upward == []


def test_the_rooms_exist_and_every_module_of_agents_is_in_one_or_the_front():
    modules = graph("agents")
    assert {room(name) for name in modules} == {0, 1, 2, 3, 4, FRONT}
    front = sorted(name for name in modules if room(name) == FRONT)
    front_rooms = sorted({name if name == "agents" else ".".join(name.split(".")[:2]) for name in front})
    assert front_rooms == ["agents", "agents.arena", "agents.belief", "agents.evaluate", "agents.exploit", "agents.play"]


def test_nothing_outside_the_arena_imports_it():
    importers = [(name, imported) for name, imports in graph("agents").items() for imported in imports
                 if imported.startswith("agents.arena") and not name.startswith("agents.arena")]
    assert importers == []


@pytest.mark.parametrize("package", ["agents", "hpuno_env"])
def test_no_import_cycle(package):
    edges = graph(package)
    # A package's __init__ importing its own modules is how a room exposes them; a module importing its package's
    # __init__ back is the cycle that matters.
    done, stack = set(), []

    def visit(name):
        if name in stack:
            raise AssertionError(f"import cycle: {' -> '.join(stack[stack.index(name):] + [name])}")
        if name in done:
            return
        stack.append(name)
        for imported in edges[name]:
            visit(imported)
        stack.pop()
        done.add(name)

    for name in edges:
        visit(name)
