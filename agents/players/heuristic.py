"""The rule-based player trained agents must beat, batched: ``HeuristicAgent``.

The rules, their weights and thresholds live once, compiled, in
``hpuno_env.heuristic`` (its docstring says what the player does and why);
rollouts (``VectorEngine.rollout("heuristic")``) run the same code. This
module is the agent around it: the batch check, the weights by name and the
tie-break noise from the agent's own generator.
"""

from __future__ import annotations

import numpy as np

from hpuno_env.encoding import OBS_DTYPE
from hpuno_env.heuristic import WEIGHT_NAMES, batch_actions, heuristic_weights

from ._base import SeededAgent
from ._batch import check_batch



class HeuristicAgent(SeededAgent):
    """``hpuno_env.heuristic``'s rules, batched; ``weights`` overrides entries of its weight table by name
    (``WEIGHTS_TWO_PLAYERS`` or ``WEIGHTS_MORE_PLAYERS`` there); unknown names and non-finite values are refused."""

    def __init__(self, num_players: int = 4, seed: int | None = None, weights: dict | None = None):
        super().__init__(num_players, seed)
        self._weight_vector = heuristic_weights(num_players, weights)
        self.weights = {name: float(value) for name, value in zip(WEIGHT_NAMES, self._weight_vector)}
        self._scratch = np.zeros(256, np.float32)

    def act(self, observations, action_masks) -> np.ndarray:
        masks = np.ascontiguousarray(check_batch(observations, action_masks, self.num_players))
        rows = _raw_observations(observations)
        return batch_actions(rows, masks, self.num_players, self._weight_vector, self.rng, self._scratch)


def _raw_observations(observations) -> np.ndarray:
    """The observations as the compiled heuristic reads them: the int8 encoding, C-contiguous.
    Another dtype (the gym envs' float32) is taken when it holds the same whole numbers."""
    array = np.asarray(observations)
    if array.dtype == OBS_DTYPE:
        return np.ascontiguousarray(array)
    converted = np.ascontiguousarray(array.astype(OBS_DTYPE))
    if not np.array_equal(converted, array):
        raise ValueError(f"observations must be the raw int8 encoding (whole numbers in [-128, 127], not scaled), "
                         f"got {array.dtype} values that are not")
    return converted
