"""The players: every agent behind ``act(observations, action_masks)``, and the registry ``load`` reads.

Built-in players take a name (``BUILT_IN``); trained ones are agent files
(``trained``), the shipped ones named in ``SHIPPED``. This room imports
nothing else of ``agents``: evaluation, training and studies build on it.

The player classes load on first use (``BUILT_IN[name]``, ``players.HeuristicAgent``, ``load``): naming and
checking players costs no numba engine and no torch, so a command refuses a bad name or option at once.
"""

from __future__ import annotations

import difflib
import importlib
import os
from collections.abc import Iterator, Mapping

from hpuno_env.options import RulesOptions, check_num_players

from .shipped import SHIPPED

# The player classes: class name -> the module of this package that defines it.
_CLASSES = {"HeuristicAgent": "heuristic", "HeuristicV0Agent": "heuristic_v0", "RandomAgent": "random_agent",
            "RandomPlayAgent": "random_play", "SearchAgent": "search", "TrainedAgent": "trained",
            "LLMAgent": "llm"}


class _BuiltIn(Mapping):
    """Built-in player name -> its class, the class imported when it is looked up."""

    def __init__(self, classes: dict[str, str]):
        self._classes = classes

    def __getitem__(self, name: str) -> type:
        return _player_class(self._classes[name])

    def __contains__(self, name) -> bool:  # by name alone: Mapping's would import the class
        return name in self._classes

    def __iter__(self) -> Iterator[str]:
        return iter(self._classes)

    def __len__(self) -> int:
        return len(self._classes)


def _player_class(name: str) -> type:
    return getattr(importlib.import_module(f".{_CLASSES[name]}", __name__), name)


def __getattr__(name: str):
    if name in _CLASSES:
        return _player_class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


BUILT_IN = _BuiltIn({"random": "RandomAgent", "random-play": "RandomPlayAgent", "heuristic": "HeuristicAgent",
                     "heuristic-v0": "HeuristicV0Agent", "search": "SearchAgent", "llm": "LLMAgent"})
# Built-in players that take options in load(name, ..., **options); the others take none.
WITH_OPTIONS = {"search", "llm"}
# Built-in players that cannot load without options: a language model needs its server (base_url, model).
NEEDS_OPTIONS = {"llm"}

__all__ = ["BUILT_IN", "NEEDS_OPTIONS", "SHIPPED", "WITH_OPTIONS", "HeuristicAgent", "HeuristicV0Agent", "LLMAgent", "RandomAgent", "RandomPlayAgent",
           "SearchAgent", "TrainedAgent", "available", "check_name", "load"]


def available() -> list[str]:
    """Names ``load`` accepts besides file paths: the built-in players and the shipped trained agents."""
    return sorted(BUILT_IN) + sorted(SHIPPED)


def load(name_or_path: str, num_players: int = 4, seed: int | None = None, rules_options: dict | None = None, **options):
    """A policy with ``act(observations, action_masks) -> actions`` for games of num_players.

    rules_options: the rules it will play under; a trained agent made under other rules warns, and the
    search player plays its worlds under them. ``options`` go to players that take them: ``"search"``
    (``SearchAgent``: ``blueprint`` (a name or file, loaded here; default the table's shipped agent,
    ``default_blueprint``), ``belief`` (default ``"shipped"``, unless ``evidence=True``), ``correct_gate`` (default
    True), ``worlds``, ``rollout``, ``gate``, ``rules``, ``evidence``), ``"llm"`` (``LLMAgent``: ``base_url``, ``model``, ``api_key``, ``timeout``,
    ``max_retries``, ``temperature``, ``concurrency``, ``cache``, ...)."""
    num_players = check_num_players(num_players)
    if rules_options is not None:
        if not isinstance(rules_options, dict):
            raise TypeError(f"rules_options must be a dict or None, got {type(rules_options).__name__}")
        RulesOptions.from_kwargs(**rules_options)  # an unknown name or a bad value: ValueError naming it
    if options and name_or_path not in WITH_OPTIONS:
        raise ValueError(f"options {sorted(options)} given for {name_or_path!r}, which takes none (only {sorted(WITH_OPTIONS)} do)")
    if name_or_path == "search":
        return _load_search(num_players, seed, rules_options, options)
    if name_or_path == "llm":
        try:
            return BUILT_IN["llm"](num_players=num_players, seed=seed, rules=rules_options, **options)
        except TypeError as error:  # an unknown option name
            raise ValueError(f"'llm': {error}") from error
    if name_or_path in BUILT_IN:
        return BUILT_IN[name_or_path](num_players=num_players, seed=seed)
    if name_or_path in SHIPPED:
        return _player_class("TrainedAgent").load(SHIPPED[name_or_path], num_players=num_players, seed=seed, rules_options=rules_options)
    if os.path.exists(name_or_path):
        return _player_class("TrainedAgent").load(name_or_path, num_players=num_players, seed=seed, rules_options=rules_options)
    raise ValueError(_unknown(name_or_path))


def check_name(name_or_path: str) -> None:
    """``load``'s ValueError for a name it does not know (not a built-in player, a shipped agent or a file), found
    without loading anything: a command checks its agents' names before the engine and torch load."""
    if name_or_path not in BUILT_IN and name_or_path not in SHIPPED and not os.path.exists(name_or_path):
        raise ValueError(_unknown(name_or_path))


def _unknown(name: str) -> str:
    """The error for an unknown agent, with the names it may be a misspelling of (difflib's close matches)."""
    close = difflib.get_close_matches(name, available(), n=3) if isinstance(name, str) else []
    guess = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    return f"unknown agent {name!r}{guess}: not one of {available()} and no such file"


def _load_search(num_players: int, seed: int | None, rules_options: dict | None, options: dict):
    """The search player, its blueprint loaded by name or file under the rules it plays."""
    rules = options.pop("rules", rules_options)
    blueprint = options.pop("blueprint", None)
    if blueprint is None:
        blueprint = importlib.import_module(".search", __name__).default_blueprint(num_players, rules)
    if not options.get("evidence"):
        options.setdefault("belief", "shipped")
    options.setdefault("correct_gate", True)
    if isinstance(blueprint, str):
        if blueprint == "search":
            raise ValueError("blueprint must be another player than 'search'")
        blueprint = load(blueprint, num_players, seed=seed, rules_options=rules)
    try:
        return BUILT_IN["search"](num_players=num_players, seed=seed, blueprint=blueprint, rules=rules, **options)
    except TypeError as error:  # an unknown option name
        raise ValueError(f"'search': {error}") from error
