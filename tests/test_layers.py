"""The import graph: ``hpuno_env`` never imports ``agents`` and holds no learner code, and ``agents/`` is in rooms, each
importing only the rooms below it (players < evaluation < training < studies < the front: ``agents/__init__``,
``play``, the ``arena``, the stable paths ``belief``, ``evaluate`` and ``exploit``), with no cycle between modules.
Read from the source, so a lazy import inside a function counts as much as one at the top. One reference from
``hpuno_env`` to ``agents`` is allowed: ``hpuno_env.rllib``'s module ``__getattr__``, which resolves the learner's
names that hpuno-env 0.2 kept there (``MOVED_TO_LEARNER``) on first use, for RLlib checkpoints that name them there."""

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


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (of the module, a class or a function)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


# The one way hpuno_env reaches agents (module docstring): a module __getattr__ of this file, naming this module.
DEPRECATED_ALIASES = ("hpuno_env/rllib.py", "agents.training.rllib_learner")


def imports_by_name(tree: ast.Module) -> list[str | None]:
    """For each call of importlib.import_module or __import__, the module-level function it stands in (None: elsewhere)."""
    def within_the_package(call: ast.Call) -> bool:  # import_module(".name", __name__): a module of hpuno_env
        return (len(call.args) == 2 and ast.unparse(call.args[1]) == "__name__"
                and ast.unparse(call.args[0]).lstrip("f").strip("'\"").startswith("."))

    def calls(node: ast.AST) -> int:
        return sum(isinstance(call, ast.Call) and ast.unparse(call.func) in ("importlib.import_module", "__import__")
                   and not within_the_package(call) for call in ast.walk(node))

    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    inside = [name for function in functions for name in [function.name] * calls(function)]
    return inside + [None] * (calls(tree) - len(inside))


def test_hpuno_env_names_agents_only_in_the_deprecated_rllib_aliases():
    named, by_name = [], []
    for path in sorted((ROOT / "hpuno_env").rglob("*.py")):
        tree = ast.parse(path.read_text())
        skip = docstrings(tree)
        where = str(path.relative_to(ROOT))
        named += [(where, node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant) and id(node) not in skip
                  and isinstance(node.value, str) and node.value.startswith("agents.")]
        by_name += [(where, function) for function in imports_by_name(tree)]
    assert named in ([], [DEPRECATED_ALIASES]), named
    assert set(by_name) <= {(DEPRECATED_ALIASES[0], "__getattr__")}, by_name


def test_the_deprecated_rllib_aliases_name_what_the_learner_module_defines():
    def assigned(tree: ast.Module) -> set[str]:
        names = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        return names

    env_side = ast.parse((ROOT / "hpuno_env" / "rllib.py").read_text())
    moved = next(node.value for node in env_side.body if isinstance(node, ast.Assign)
                 and any(isinstance(target, ast.Name) and target.id == "MOVED_TO_LEARNER" for target in node.targets))
    moved_names = {element.value for element in ast.walk(moved) if isinstance(element, ast.Constant)}
    learner = assigned(ast.parse((ROOT / "agents" / "training" / "rllib_learner.py").read_text()))
    assert moved_names and moved_names <= learner
    assert not moved_names & assigned(env_side), "a moved name is defined in hpuno_env.rllib too"


# What learning is made of: a network (torch's or RLlib's modules), an optimiser, an algorithm and its config.
LEARNER_IMPORTS = ("torch.nn", "torch.optim", "ray.rllib.algorithms", "ray.rllib.core.rl_module", "ray.rllib.core.learner",
                   "ray.rllib.core.models", "sb3_contrib", "stable_baselines3")
ENV_SIDE_IMPORTS = ("stable_baselines3.common.vec_env",)  # SB3's VecEnv: what HPUnoVecEnv and the mixture env are
LEARNER_NAMES = {"PPOConfig", "AlgorithmConfig", "Learner", "TorchLearner", "RLModule", "TorchRLModule", "Module",
                 "MaskablePPO", "PPO"}


def test_hpuno_env_holds_no_learner_code():
    """The env package is envs, the engine and the env runner (as PettingZoo's packages are): no network, optimiser,
    learning algorithm or its config; those are agents.training's."""
    found = []
    for path in sorted((ROOT / "hpuno_env").rglob("*.py")):
        tree = ast.parse(path.read_text())
        where = str(path.relative_to(ROOT))
        for module in imported_modules(path):
            if any(module == name or module.startswith(name + ".") for name in LEARNER_IMPORTS) and not any(
                    module == name or module.startswith(name + ".") for name in ENV_SIDE_IMPORTS):
                found.append((where, "imports", module))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base).rpartition(".")[2] for base in node.bases]
                if any(base in LEARNER_NAMES or base.endswith(("Module", "Learner", "Config")) for base in bases):
                    found.append((where, "class", node.name))
            elif isinstance(node, (ast.Name, ast.Attribute)):
                name = node.id if isinstance(node, ast.Name) else node.attr
                if name in LEARNER_NAMES or name.endswith("TorchRLModule"):
                    found.append((where, "uses", name))
    assert found == []


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
