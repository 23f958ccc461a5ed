"""Players for hpuno-env behind one batched call: ``policy.act(observations, action_masks)``.

>>> import agents
>>> policy = agents.load("heuristic", num_players=4, seed=0)
>>> actions = policy.act(engine.observe(), engine.legal_mask())

``agents`` is a top-level import name of the ``hpuno-env`` distribution, beside
``hpuno_env`` (the environment, which never imports it). Its rooms, each
importing only the rooms listed before it:

- ``agents.players``: the players and the registry ``load`` reads;
- ``agents.evaluation``: win rates over fixed rounds, tournaments and their reports;
- ``agents.training``: MaskablePPO training (``hpuno-train``), its warm start, recipes, league, agent files;
- ``agents.studies``: research that trains and evaluates (exploitability, the house-rules study);
- ``agents.play``: a person against the agents in the terminal (``hpuno-play``).

``load`` takes a built-in name (``available()``), a shipped trained agent's
name, or the path of a saved agent file (``.safetensors``, written by
``agents.training.agent_file.export``; loading one never runs code from it, and an SB3
``.zip`` checkpoint is refused: ``python -m agents.training.export`` converts your own).
``agents.evaluate`` and ``agents.exploit`` are the stable import paths of
``agents.evaluation.rounds`` and ``agents.studies.exploit``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names __getattr__ gives, for type checkers and the API reference (read without importing)
    from .players import BUILT_IN, SHIPPED, available, load

__all__ = ["BUILT_IN", "SHIPPED", "available", "load"]


def __getattr__(name: str):
    # The players (torch, the engine) are imported on first use, not with the package: a command under agents/
    # checks its arguments and refuses bad ones before that import.
    if name in __all__:
        return getattr(importlib.import_module(".players", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
