"""The random-play baseline: random cards, but never a pointless draw.

What other UNO environments (RLCard among them) call a random player: uniform
over the legal *plays*, so its rounds end in about a hundred decisions where
the uniformly random player (``random_agent``) draws and keeps for thousands.
Exactly:

- play or drawn phase: a card uniformly among the legal plays; ``draw`` only
  when no card can be played; after drawing a playable card it plays it
  (``keep`` is never chosen: the drawn card is always legal to play);
- ``uno``, whenever it is legal, is called with probability 1/2 (a uniform
  choice between calling and not calling; calling leaves the same player to
  act, and the play follows);
- colour, Sorting Hat target, challenge / accept and catch / pass: uniform
  among the legal actions.

Under the house rules (docs/rules.md §15) the same two rules cover the new
decisions: a stack play, a jump-in and a forced drawn card are plays, so it
stacks whenever it holds a card that may be stacked (uniform among them, never
``accept`` or ``challenge`` then), always jumps in, and picks a Seven's swap
partner uniformly (``target:``).
"""

from __future__ import annotations

import numpy as np

from hpuno_env.cards import NUM_CARD_TYPES, UNO

from ._base import SeededAgent
from ._batch import check_batch


class RandomPlayAgent(SeededAgent):
    """Plays a uniformly random legal card; draws only when it cannot play."""

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        candidates = masks.copy()
        candidates[:, UNO] = False
        plays = candidates[:, :NUM_CARD_TYPES]
        can_play = plays.any(axis=1)
        # Rows that can play choose among the plays only (no draw, no keep).
        candidates[can_play, NUM_CARD_TYPES:] = False
        actions = (self.rng.random(masks.shape) * candidates).argmax(axis=1)
        # Calling UNO is a coin flip wherever it is legal (the drawn-phase row keeps its play for after the call).
        call_uno = masks[:, UNO] & (self.rng.random(len(masks)) < 0.5)
        actions[call_uno] = UNO
        return actions
