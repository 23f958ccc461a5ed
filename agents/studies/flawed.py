"""Deliberately exploitable players, to prove that ``hpuno-exploit`` finds a flaw when there is one.

Each is the heuristic with one planted flaw, applied by narrowing the action mask the heuristic chooses from
(so it plays its usual best among what the flaw leaves):

- ``flawed-never-challenge``: never challenges a Wild Draw Four (always accepts), so bluffed ones go unpunished;
- ``flawed-always-blue``: names blue whenever it names a colour, whatever it holds;
- ``flawed-never-uno``: never calls UNO, so it can be caught going down to one card.

A flaw never takes away a row's last legal action. ``hpuno-exploit flawed-never-uno`` (and ``best_response``)
take these names besides ``agents.load``'s.
"""

from __future__ import annotations

import numpy as np

from agents import players
from hpuno_env.cards import ACTION_INDEX, COLORS, NUM_ACTIONS
from hpuno_env.options import check_num_players

COLOR_ACTIONS = np.array([ACTION_INDEX[f"color:{color}"] for color in COLORS])


def _without(label: str):
    """A flaw that never takes the action ``label``."""
    code = ACTION_INDEX[label]

    def narrow(masks: np.ndarray) -> np.ndarray:
        masks[:, code] = False
        return masks

    return narrow


def _always_names(color: str):
    """A flaw that names ``color`` whenever it may name a colour (where ``color`` is legal then)."""
    code = ACTION_INDEX[f"color:{color}"]

    def narrow(masks: np.ndarray) -> np.ndarray:
        naming = masks[:, code].copy()  # a copy: the next line clears the column it views
        masks[np.ix_(naming, COLOR_ACTIONS)] = False
        masks[naming, code] = True
        return masks

    return narrow


FLAWS = {
    "flawed-never-challenge": _without("challenge"),
    "flawed-always-blue": _always_names("blue"),
    "flawed-never-uno": _without("uno"),
}


class FlawedHeuristic:
    """The heuristic choosing among the actions its ``flaw`` (a name in ``FLAWS``) leaves legal."""

    def __init__(self, flaw: str, num_players: int = 2, seed: int | None = None):
        if flaw not in FLAWS:
            raise ValueError(f"unknown flaw {flaw!r}: one of {sorted(FLAWS)}")
        self.flaw, self.num_players = flaw, check_num_players(num_players)
        self.heuristic = players.HeuristicAgent(num_players, seed)

    def seed(self, seed: int | None) -> None:
        self.heuristic.seed(seed)

    def act(self, observations, action_masks) -> np.ndarray:
        masks = np.array(action_masks, dtype=bool, copy=True)
        if masks.ndim != 2 or masks.shape[1] != NUM_ACTIONS:
            return self.heuristic.act(observations, action_masks)  # the heuristic's own check names the problem
        narrowed = FLAWS[self.flaw](masks.copy())
        keep = narrowed.any(axis=1)  # a row left with nothing keeps its whole mask
        masks[keep] = narrowed[keep]
        return self.heuristic.act(observations, masks)

    def __repr__(self) -> str:
        return f"FlawedHeuristic({self.flaw!r}, num_players={self.num_players})"


def flawed_agent(name: str, num_players: int = 2, seed: int | None = None) -> FlawedHeuristic:
    """The flawed player ``name`` (a key of ``FLAWS``)."""
    return FlawedHeuristic(name, num_players, seed)
