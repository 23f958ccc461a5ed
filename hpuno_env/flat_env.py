"""The PettingZoo env with flat observations: one Box vector per agent, the legal mask only in ``infos``.

``hpuno_env.env()`` observes a Dict (``"observation"``, ``"action_mask"``), the
PettingZoo classic-games convention. Frameworks whose generic wrappers expect
a plain Box (SuperSuit's observation wrappers fail on a Dict with ``'Dict'
object has no attribute 'low'``) or give the Dict's keys nested names (TorchRL)
take this form instead:

>>> env = flat_env(num_players=2)                       # float32; observation_dtype=np.int8 for the raw view
>>> env.reset(seed=0)
>>> observation, reward, termination, truncation, info = env.last()
>>> observation.shape, observation.dtype, info["action_mask"].dtype
((307,), dtype('float32'), dtype('int8'))

It is ``env()`` underneath (an illegal move ends the game with -1 for its
player), with ``observe(agent)`` the vector alone and ``infos[agent]["action_mask"]``
(int8, 1 for the legal actions of the agent to act, all zeros for the others)
the mask, as TorchRL's ``PettingZooWrapper(use_mask=True)`` and Tianshou read it.
"""

from __future__ import annotations

import numpy as np
from pettingzoo.utils.wrappers import BaseWrapper

from .aec_env import env as classic_env
from .seat_batch import ObservationFormat


class FlatObservationWrapper(BaseWrapper):
    """Observations of a Dict-observing hpuno AEC env as its ``"observation"`` vector alone.

    Args:
        env: ``hpuno_env.env()`` or ``raw_env()``.
        observation_dtype: ``np.float32`` (default) or ``np.int8``.
        scale_observations: multiply by ``encoding.observation_scale`` (float32 only).
    """

    def __init__(self, env, observation_dtype=np.float32, scale_observations: bool = False):
        super().__init__(env)
        self.observation_format = ObservationFormat(len(env.possible_agents), observation_dtype, scale_observations)
        self.observation_spaces = dict.fromkeys(env.possible_agents, self.observation_format.space)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def observe(self, agent) -> np.ndarray:
        return self.observation_format(self.env.observe(agent)["observation"])


def flat_env(num_players: int = 4, render_mode: str | None = None, observation_dtype=np.float32,
             scale_observations: bool = False, **rule_options) -> FlatObservationWrapper:
    """``env()`` (PettingZoo classic wrapping) observing flat vectors; masks in ``infos[agent]["action_mask"]``."""
    return FlatObservationWrapper(classic_env(num_players=num_players, render_mode=render_mode, **rule_options),
                                  observation_dtype, scale_observations)
