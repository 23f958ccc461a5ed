"""The uniformly random legal player: the baseline every other agent must beat."""

from __future__ import annotations

import numpy as np

from ._checks import check_batch


class RandomAgent:
    """Picks uniformly among the legal actions of each row."""

    def __init__(self, num_players: int = 4, seed: int | None = None):
        self.num_players = num_players
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the agent's random stream (used by the training envs' reset(seed))."""
        self.rng = np.random.default_rng(seed)

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        scores = self.rng.random(masks.shape) * masks
        return scores.argmax(axis=1)
