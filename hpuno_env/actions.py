"""What every adapter agrees on about a player's action: how one is read, named, judged and paid when illegal.

The PettingZoo env, the vector envs and the RLlib env take actions from
callers and must treat them alike:

- ``action_index`` reads one caller's action (a Python or numpy integer, or a
  0-d integer array) as an ``int``, and refuses ``None``, bools, floats and
  strings with ``TypeError`` rather than rounding or reading them as 0/1;
- ``illegal_actions`` says which of a batch's actions its masks forbid;
- ``action_name`` names an action in an error message;
- ``illegal_action`` (``ILLEGAL_ACTION_CHOICES``) is the option that says
  whether an illegal action raises or loses the round, and ``ILLEGAL_REWARD``
  is what losing it that way pays.
"""

from __future__ import annotations

import operator

import numpy as np

from ._checks import is_bool
from .cards import ACTION_LABELS, NUM_ACTIONS

# What an illegal move pays its player where it loses the round rather than raising: env() of aec_env,
# and illegal_action="lose" of the vector and RLlib envs (PettingZoo's classic games pay -1).
ILLEGAL_REWARD = -1.0

# What the learner's illegal action does: "raise" (ValueError, nothing changes) or "lose" (the learner
# loses the round, as in the wrapped PettingZoo env(): for frameworks that probe with unmasked actions).
ILLEGAL_ACTION_CHOICES = ("raise", "lose")


def check_illegal_action(illegal_action) -> str:
    """illegal_action itself, or ValueError naming it."""
    if not isinstance(illegal_action, str) or illegal_action not in ILLEGAL_ACTION_CHOICES:
        raise ValueError(f"illegal_action must be one of {ILLEGAL_ACTION_CHOICES}, got {illegal_action!r}")
    return illegal_action


def action_index(action, agent: str) -> int:
    """An integer action (a numpy integer or a 0-d integer array too) as an int, else TypeError naming ``agent``.

    Floats, bools and strings are refused rather than rounded or read as 0/1: they are
    always a caller's mistake. ``operator.index`` is Python's own "is an integer" test.
    Whether the action is in range and legal is the caller's next check.
    """
    if action is None:
        raise TypeError(f"action must be an int in [0, {NUM_ACTIONS}) for {agent}, who is still playing, got None "
                        "(None is the action only of an agent that is terminated or truncated)")
    if not is_bool(action):
        try:
            return operator.index(action)
        except TypeError:
            pass
    raise TypeError(f"action must be an int in [0, {NUM_ACTIONS}) for {agent}, got {action!r} of type {type(action).__name__}")


def action_name(action) -> str:
    """The action's label, or a phrase saying it is out of range."""
    return ACTION_LABELS[action] if 0 <= action < NUM_ACTIONS else f"action {action} out of range"


def illegal_actions(actions: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """(N,) bool: where ``actions[i]`` is outside [0, NUM_ACTIONS) or not legal under ``masks[i]``."""
    in_range = (actions >= 0) & (actions < NUM_ACTIONS)
    return ~(in_range & masks[np.arange(len(actions)), np.where(in_range, actions, 0)])
