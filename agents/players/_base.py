"""What every built-in agent shares: its player count and a reseedable random stream."""

from __future__ import annotations

import numpy as np

from hpuno_env._checks import check_int


class SeededAgent:
    """Base of the built-in agents: ``num_players`` (its observations' layout) and ``rng``.

    ``draws_per_row``: every draw ``act`` makes from ``rng`` is one block per row of its batch (``random`` or
    ``gumbel`` with the batch size first), so duplicate evaluation can give each row its own stream
    (``agents.evaluation.rounds.RowStreams``) and still ask about all rows at once."""

    draws_per_row = True

    def __init__(self, num_players: int = 4, seed: int | None = None):
        self.num_players = num_players
        self.seed(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the agent's random stream (used by the training envs' reset(seed) and the evaluation).
        A seed is None or a non-negative int (numpy's too); a string or a float is refused, not hashed."""
        self.rng = np.random.default_rng(None if seed is None else check_int(seed, "seed", low=0))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(num_players={self.num_players})"
