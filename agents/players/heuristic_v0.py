"""``heuristic-v0``: the first rule-based player, frozen so later heuristics can be measured against it.

A fixed score per action, the best legal one wins.

It reads only its own observation (``hpuno_env.observation_layout``):
call UNO and catch whenever allowed; play rather than draw, coloured cards
before wilds and high-point cards first; never bluff a Wild Draw Four unless
there is nothing else; name the colour it holds most of; send the Sorting Hat
to the seat closest to going out; challenge a Wild Draw Four when its player
held enough cards to be likely guilty.
"""

from __future__ import annotations

import numpy as np

from hpuno_env.cards import (
    ACCEPT, CARD_COLOR, CARD_POINTS, CATCH, CHALLENGE, COLOR_BASE, DRAW, KEEP, NUM_ACTIONS,
    NUM_CARD_TYPES, PASS, SORTING_HAT, TARGET_BASE, UNO, WILD, WILD_DRAW4,
)
from hpuno_env.encoding import observation_layout

from ._base import SeededAgent
from ._batch import check_batch

COLORED = CARD_COLOR >= 0


class HeuristicV0Agent(SeededAgent):
    """The original ``heuristic`` (before issue 7), unchanged in play."""

    def __init__(self, num_players: int = 4, seed: int | None = None):
        super().__init__(num_players, seed)
        self.layout = observation_layout(num_players)

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        obs = np.asarray(observations).astype(np.int32)
        batch, others = len(obs), self.num_players - 1
        view = {name: obs[:, part] for name, part in self.layout.items()}
        hand = view["hand"]
        color_counts = np.stack([hand[:, CARD_COLOR == color].sum(axis=1) for color in range(4)], axis=1)
        current = view["current_color"].argmax(axis=1)
        holds_current = color_counts[np.arange(batch), current] > 0

        scores = np.zeros((batch, NUM_ACTIONS))
        # Plays: coloured cards first, most points first; wilds kept for later.
        scores[:, :NUM_CARD_TYPES][:, COLORED] = 100 + CARD_POINTS[COLORED] / 2
        scores[:, WILD] = scores[:, SORTING_HAT] = 60
        scores[:, WILD_DRAW4] = np.where(holds_current, 5, 55)  # a bluff only as a last resort
        scores[:, DRAW] = 10
        scores[:, KEEP] = 1
        scores[:, UNO] = scores[:, CATCH] = 1000
        scores[:, PASS] = 0
        # Colour: the one I hold most of.
        scores[:, COLOR_BASE:COLOR_BASE + 4] = 200 + color_counts
        # Sorting Hat: aim at the seat with the fewest cards.
        sizes = view["other_hand_sizes"]
        scores[:, TARGET_BASE:TARGET_BASE + others] = 200 - sizes
        # Challenge when the Wild Draw Four's player (the seat before me) held 3+ cards before it
        # and never showed it lacks the colour: then it more likely than not held one.
        left = view["direction_left"][:, 0] == 1
        offender = np.where(left, others - 1, 0)
        offender_size = sizes[np.arange(batch), offender] + 1
        prev = view["wd4_prev_color"].argmax(axis=1)
        lacks = view["other_lacks_color"].reshape(batch, others, 4)[np.arange(batch), offender, prev] == 1
        likely_guilty = (offender_size >= 3) & ~lacks
        scores[:, CHALLENGE] = np.where(likely_guilty, 2, 0)
        scores[:, ACCEPT] = 1
        # Random tie-breaks, then the best legal action.
        scores += self.rng.random(scores.shape) * 0.01
        scores[~masks] = -np.inf
        return scores.argmax(axis=1)
