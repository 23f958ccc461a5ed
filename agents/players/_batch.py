"""The batch check shared by every agent's ``act``.

Argument checks (ints, flags, seeds, indices) have one home for the whole project, ``hpuno_env._checks``;
this module adds only what is about agents: a batch of observations and masks of the agent's layout."""

from __future__ import annotations

import functools

import numpy as np

from hpuno_env.cards import NUM_ACTIONS
from hpuno_env.encoding import observation_size

# act() runs once per step per policy; building the layout each time would cost more than the check.
_observation_width = functools.lru_cache(maxsize=None)(observation_size)


def check_batch(observations, action_masks, num_players: int) -> np.ndarray:
    """Return the masks as a bool array (B, 75), or raise ValueError for a bad batch.

    Observations of another player count than the agent's ``num_players`` are
    refused: their width differs
    (``hpuno_env.observation_size``), and reading them with the wrong layout
    would silently pick actions from the wrong fields.
    """
    masks = np.asarray(action_masks).astype(bool, copy=False)
    observations = np.asarray(observations)
    if masks.ndim != 2 or masks.shape[1] != NUM_ACTIONS:
        raise ValueError(f"action_masks must have shape (B, {NUM_ACTIONS}), got {masks.shape}")
    if observations.ndim != 2 or observations.shape[0] != masks.shape[0]:
        raise ValueError(f"observations must have shape (B, obs_size) with B = {masks.shape[0]}, got {observations.shape}")
    if observations.shape[1] != _observation_width(num_players):
        raise ValueError(
            f"observations have width {observations.shape[1]}, but this agent plays {num_players}-player games, "
            f"whose observations have width {_observation_width(num_players)}: load the agent with the game's num_players"
        )
    if not masks.any(axis=1).all():
        raise ValueError(f"rows {np.flatnonzero(~masks.any(axis=1))[:10].tolist()} have no legal action")
    return masks
