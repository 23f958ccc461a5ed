"""Trained players: a MaskablePPO policy saved by ``train.py``, acting greedily on masked logits."""

from __future__ import annotations

import os

import numpy as np

from ._checks import check_batch

WEIGHTS_DIR = os.path.join(os.path.dirname(__file__), "weights")
# Shipped trained agents: name -> file. Filled by train.py --ship.
SHIPPED = {
    os.path.splitext(name)[0]: os.path.join(WEIGHTS_DIR, name)
    for name in (sorted(os.listdir(WEIGHTS_DIR)) if os.path.isdir(WEIGHTS_DIR) else [])
    if name.endswith(".zip")
}


class TrainedAgent:
    """Wraps a MaskablePPO model; ``act`` picks the most likely legal action (or samples)."""

    def __init__(self, model, num_players: int, deterministic: bool = True):
        self.model = model
        self.num_players = num_players
        self.deterministic = deterministic

    @classmethod
    def load(cls, path: str, num_players: int, seed: int | None = None, deterministic: bool = True) -> "TrainedAgent":
        from sb3_contrib import MaskablePPO

        try:
            model = MaskablePPO.load(path, device="cpu")
        except Exception as error:  # a corrupt or foreign file: say which and why
            raise ValueError(f"cannot load agent from {path!r}: {type(error).__name__}: {error}") from error
        if seed is not None:
            model.set_random_seed(seed)
        from hpuno_env import observation_size

        expected = observation_size(num_players)
        got = model.observation_space.shape[0]
        if got != expected:
            raise ValueError(f"agent {path!r} was trained for observations of size {got}, but {num_players} players need {expected}")
        return cls(model, num_players, deterministic)

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks)
        actions, _ = self.model.predict(np.asarray(observations), action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions, dtype=np.int64)
