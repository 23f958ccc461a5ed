"""The uniformly random legal player: the baseline every other agent must beat."""

from __future__ import annotations

import numpy as np

from ._base import SeededAgent
from ._batch import check_batch


class RandomAgent(SeededAgent):
    """Picks uniformly among the legal actions of each row."""

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        scores = self.rng.random(masks.shape) * masks
        return scores.argmax(axis=1)
