"""Stable-Baselines3's vector env over a ``SeatBatch``: ``HPUnoVecEnv``.

``HPUnoVecEnv`` is a ``stable_baselines3`` ``VecEnv`` with ``action_masks()``,
which sb3-contrib's ``MaskablePPO`` trains on directly: ``num_envs`` games in
one engine, the learner in one seat of each, the other seats played inside the
batch by opponent policies (``seat_batch.SeatBatch`` says how rewards,
opponents, autoreset and failures work).

Observations are float32 by default (int8 with ``observation_dtype=np.int8``,
a quarter of the memory): SB3's ``VecNormalize`` and MaskablePPO's rollout
buffer keep the observation space's dtype, so int8 would silently truncate
normalised values to integers. ``scale_observations=True`` multiplies by
``encoding.observation_scale``, a fixed vector that brings every entry to about
[0, 1]. ``illegal_action="lose"`` is for frameworks that probe with unmasked
actions: an illegal learner action then loses the round (-1) as in the wrapped
PettingZoo ``env()``, instead of raising ``ValueError``.

This module imports Stable-Baselines3 (and with it torch); the framework-free
pieces live in ``seat_batch`` and the Gymnasium vector env in ``gym_env``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from .cards import NUM_ACTIONS
from .encoding import hidden_hands
from .seat_batch import Assignment, ObservationFormat, SeatBatch

__all__ = ["HPUnoVecEnv"]


class SharedAttributes:
    """SB3's per-env attribute access for a VecEnv whose games all share one object's attributes."""

    def close(self) -> None:
        pass

    def get_images(self):
        return [None] * self.num_envs

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices

    def get_attr(self, attr_name, indices=None):
        value = getattr(self, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._indices(indices)]
        result = getattr(self, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]


class HPUnoVecEnv(SharedAttributes, VecEnv):
    """Stable-Baselines3 VecEnv: one learner seat per game, opponents inside the batch.

    Arguments as ``SeatBatch`` (``illegal_action`` and ``wins_only`` too), plus ``observation_dtype`` (float32 by default, or np.int8)
    and ``scale_observations`` (``ObservationFormat``). With ``critic_sees_hands=True`` each observation is followed
    by the other seats' hidden hands (``encoding.hidden_hands``, scaled like ``hand``; zeros in a terminal
    observation), for a policy whose critic reads them and whose actor reads only the first
    ``observation_size(num_players)`` entries (``agents.training.critic.HandsCriticPolicy``).

    >>> from sb3_contrib import MaskablePPO
    >>> env = HPUnoVecEnv(num_envs=64, num_players=2, seed=0)
    >>> model = MaskablePPO("MlpPolicy", env).learn(10_000)
    """

    def __init__(self, num_envs: int = 64, num_players: int = 2, learner_seat: int | str = 0, opponent=None, seed: int | None = None,
                 observation_dtype=np.float32, scale_observations: bool = False, illegal_action: str = "raise",
                 critic_sees_hands: bool = False, wins_only: bool = False, **rule_options):
        self.batch = SeatBatch(num_envs, num_players, learner_seat, opponent, seed, illegal_action, wins_only, **rule_options)
        self.observation_format = ObservationFormat(self.batch.num_players, observation_dtype, scale_observations, critic_sees_hands)
        self.render_mode = None
        super().__init__(num_envs, self.observation_format.space, spaces.Discrete(NUM_ACTIONS))
        self._actions = np.zeros(num_envs, np.int64)

    @property
    def num_players(self) -> int:
        return self.batch.num_players

    def _observations(self, observations: np.ndarray) -> np.ndarray:
        """The learner's observations in this env's format (with critic_sees_hands: then the others' hands now)."""
        if not self.observation_format.critic_sees_hands:
            return self.observation_format(observations)
        return self.observation_format(observations, hidden_hands(self.batch.engine.state.hands, self.batch.seats, self.batch.num_players))

    def set_opponent(self, opponent) -> None:
        """``SeatBatch.set_opponent``."""
        self.batch.set_opponent(opponent)

    def set_opponents(self, policies: Sequence, assignment: Assignment) -> None:
        """``SeatBatch.set_opponents``: several opponents, per game slot and seat."""
        self.batch.set_opponents(policies, assignment)

    def reset(self) -> np.ndarray:
        seed = self._seeds[0] if self._seeds and self._seeds[0] is not None else None
        self._seeds = []
        observations, _ = self.batch.reset(seed=seed)
        return self._observations(observations)

    def step_async(self, actions) -> None:
        self._actions = actions  # checked by SeatBatch.step

    def step_wait(self):
        observations, _, rewards, terminated, truncated, terminal = self.batch.step(self._actions)
        dones = terminated | truncated
        infos = [{} for _ in range(self.num_envs)]
        if dones.any():
            terminal = self.observation_format(terminal)  # with critic_sees_hands: zeros, the round's hands are gone
            for game in np.flatnonzero(dones):
                infos[game]["terminal_observation"] = terminal[game]
                infos[game]["TimeLimit.truncated"] = bool(truncated[game] and not terminated[game])
        return self._observations(observations), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, 75) bool: what MaskablePPO asks for before each step."""
        self.batch.check_usable("action_masks()")
        return self.batch.masks.copy()
