"""The players: every agent behind ``act(observations, action_masks)``, and the registry ``load`` reads.

Built-in players take a name (``BUILT_IN``); trained ones are agent files
(``trained``), the shipped ones named in ``SHIPPED``. This room imports
nothing else of ``agents``: evaluation, training and studies build on it.
"""

from __future__ import annotations

import os

from hpuno_env.options import RulesOptions, check_num_players

from .heuristic import HeuristicAgent
from .heuristic_v0 import HeuristicV0Agent
from .llm import LLMAgent
from .random_agent import RandomAgent
from .random_play import RandomPlayAgent
from .search import SearchAgent
from .trained import SHIPPED, TrainedAgent

BUILT_IN = {"random": RandomAgent, "random-play": RandomPlayAgent, "heuristic": HeuristicAgent, "heuristic-v0": HeuristicV0Agent,
            "search": SearchAgent, "llm": LLMAgent}
# Built-in players that take options in load(name, ..., **options); the others take none.
WITH_OPTIONS = {"search", "llm"}

__all__ = ["BUILT_IN", "SHIPPED", "WITH_OPTIONS", "HeuristicAgent", "HeuristicV0Agent", "LLMAgent", "RandomAgent", "RandomPlayAgent",
           "SearchAgent", "TrainedAgent", "available", "load"]


def available() -> list[str]:
    """Names ``load`` accepts besides file paths: the built-in players and the shipped trained agents."""
    return sorted(BUILT_IN) + sorted(SHIPPED)


def load(name_or_path: str, num_players: int = 4, seed: int | None = None, rules_options: dict | None = None, **options):
    """A policy with ``act(observations, action_masks) -> actions`` for games of num_players.

    rules_options: the rules it will play under; a trained agent made under other rules warns, and the
    search player plays its worlds under them. ``options`` go to players that take them: ``"search"``
    (``SearchAgent``: ``blueprint`` (a name or file, loaded here; default ``"heuristic"``), ``worlds``,
    ``rollout``, ``gate``, ``rules``), ``"llm"`` (``LLMAgent``: ``base_url``, ``model``, ``api_key``, ``timeout``,
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
            return LLMAgent(num_players=num_players, seed=seed, rules=rules_options, **options)
        except TypeError as error:  # an unknown option name
            raise ValueError(f"'llm': {error}") from error
    if name_or_path in BUILT_IN:
        return BUILT_IN[name_or_path](num_players=num_players, seed=seed)
    if name_or_path in SHIPPED:
        return TrainedAgent.load(SHIPPED[name_or_path], num_players=num_players, seed=seed, rules_options=rules_options)
    if os.path.exists(name_or_path):
        return TrainedAgent.load(name_or_path, num_players=num_players, seed=seed, rules_options=rules_options)
    raise ValueError(f"unknown agent {name_or_path!r}: not one of {available()} and no such file")


def _load_search(num_players: int, seed: int | None, rules_options: dict | None, options: dict) -> SearchAgent:
    """The search player, its blueprint loaded by name or file under the rules it plays."""
    rules = options.pop("rules", rules_options)
    blueprint = options.pop("blueprint", "heuristic")
    if isinstance(blueprint, str):
        if blueprint == "search":
            raise ValueError("blueprint must be another player than 'search'")
        blueprint = load(blueprint, num_players, seed=seed, rules_options=rules)
    try:
        return SearchAgent(num_players=num_players, seed=seed, blueprint=blueprint, rules=rules, **options)
    except TypeError as error:  # an unknown option name
        raise ValueError(f"'search': {error}") from error
