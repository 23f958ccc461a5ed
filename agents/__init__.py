"""Players for hpuno-env behind one batched call: ``policy.act(observations, action_masks)``.

>>> import agents
>>> policy = agents.load("heuristic", num_players=4, seed=0)
>>> actions = policy.act(engine.observe(), engine.legal_mask())

``load`` takes a built-in name (``available()``), a shipped trained agent's
name, or the path of a saved agent file (``.safetensors``, written by
``agents.trained.export``; loading one never runs code from it, and an SB3
``.zip`` checkpoint is refused: ``python -m agents.export`` converts your own).
"""

from __future__ import annotations

import os

from hpuno_env.options import check_num_players

from .heuristic import HeuristicAgent
from .heuristic_v0 import HeuristicV0Agent
from .random_agent import RandomAgent
from .random_play import RandomPlayAgent
from .search import SearchAgent
from .trained import SHIPPED, TrainedAgent

BUILT_IN = {"random": RandomAgent, "random-play": RandomPlayAgent, "heuristic": HeuristicAgent, "heuristic-v0": HeuristicV0Agent,
            "search": SearchAgent}
# Built-in players that take options in load(name, ..., **options); the others take none.
WITH_OPTIONS = {"search"}


def available() -> list[str]:
    """Names ``load`` accepts besides file paths: the built-in players and the shipped trained agents."""
    return sorted(BUILT_IN) + sorted(SHIPPED)


def load(name_or_path: str, num_players: int = 4, seed: int | None = None, rules_options: dict | None = None, **options):
    """A policy with ``act(observations, action_masks) -> actions`` for games of num_players.

    rules_options: the rules it will play under; a trained agent made under other rules warns.
    ``options`` go to players that take them: ``"search"`` (``agents.search.SearchAgent``:
    ``blueprint``, ``worlds``, ``rollout``, ``gate``, ``rules``)."""
    num_players = check_num_players(num_players)
    if options and name_or_path not in WITH_OPTIONS:
        raise ValueError(f"options {sorted(options)} given for {name_or_path!r}, which takes none (only {sorted(WITH_OPTIONS)} do)")
    if name_or_path in BUILT_IN:
        try:
            return BUILT_IN[name_or_path](num_players=num_players, seed=seed, **options)
        except TypeError as error:  # an unknown option name
            raise ValueError(f"{name_or_path!r}: {error}") from error
    if name_or_path in SHIPPED:
        return TrainedAgent.load(SHIPPED[name_or_path], num_players=num_players, seed=seed, rules_options=rules_options)
    if os.path.exists(name_or_path):
        return TrainedAgent.load(name_or_path, num_players=num_players, seed=seed, rules_options=rules_options)
    raise ValueError(f"unknown agent {name_or_path!r}: not one of {available()} and no such file")
