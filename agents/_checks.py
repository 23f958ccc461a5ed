"""Input checks shared by every agent's ``act``."""

from __future__ import annotations

import numpy as np

from hpuno_env.cards import NUM_ACTIONS


def check_batch(observations, action_masks) -> np.ndarray:
    """Return the masks as a bool array (B, 75), or raise ValueError for a bad batch."""
    masks = np.asarray(action_masks).astype(bool, copy=False)
    observations = np.asarray(observations)
    if masks.ndim != 2 or masks.shape[1] != NUM_ACTIONS:
        raise ValueError(f"action_masks must have shape (B, {NUM_ACTIONS}), got {masks.shape}")
    if observations.ndim != 2 or observations.shape[0] != masks.shape[0]:
        raise ValueError(f"observations must have shape (B, obs_size) with B = {masks.shape[0]}, got {observations.shape}")
    if not masks.any(axis=1).all():
        raise ValueError(f"rows {np.flatnonzero(~masks.any(axis=1))[:10].tolist()} have no legal action")
    return masks
