"""``FusedClassicWrapper``: PettingZoo's three classic-game wrappers in one, without their per-call cost.

PettingZoo wraps its classic games as
``OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw, illegal_reward=-1)))``.
Each layer forwards every attribute it lacks through ``BaseWrapper.__getattr__``,
so one ``agent_iter`` / ``last`` / ``step`` decision cost about 36 such
lookups: two thirds of the wrapped env's time. This class does the same three
checks in one layer that reads the raw env directly on the hot path
(``agent_iter``, ``last``, ``observe``, ``step``), and over ``hpuno_env.raw_env``
hands a legal action straight to the raw env's own legal-move path
(``_play_if_legal``) so that no check is made twice; everything else (attribute
reads, ``reset``, ``render``, ``state``, ``close``, ``unwrapped``) is
``OrderEnforcingWrapper``'s own code, so it is what users of PettingZoo know,
and ``isinstance(env, OrderEnforcingWrapper)`` holds.

Behaviour is the stock stack's (``tests/env/test_fused_wrapper.py`` replays the same
random traces through both and compares every result, error and warning), with
one deliberate difference: ``last()`` once every agent has finished raises the
raw env's clear "game is over" ``ValueError`` where the stock stack fails with
``KeyError``.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator


class FusedClassicWrapper(OrderEnforcingWrapper):
    """``TerminateIllegalWrapper(illegal_reward)`` + ``AssertOutOfBoundsWrapper`` + ``OrderEnforcingWrapper``.

    - Order: ``step``, ``observe``, ``state``, ``render`` and ``agent_iter``
      before ``reset`` raise PettingZoo's ``AssertionError``; reading ``agents``,
      ``rewards``, ... before ``reset`` raises its ``AttributeError``; ``step``
      once every agent has finished warns and does nothing.
    - Bounds: an action outside ``action_space(agent)`` (or ``None`` for a live
      agent) fails ``assert ... "action is not in action space"``.
    - Illegal moves: an action the live agent's ``action_mask`` forbids ends
      the game (every agent terminated and truncated), ``illegal_reward`` to
      the mover and 0 to the others, with PettingZoo's warning.

    The wrapped env must give dict observations with an ``"action_mask"``
    (as ``raw_env`` does).
    """

    def __init__(self, env: AECEnv, illegal_reward: float):
        super().__init__(env)
        self._illegal_reward = float(illegal_reward)
        # Discrete(n) spaces starting at 0, by agent: an int action in [0, n) is in the space without asking it.
        self._discrete_sizes = {}
        for agent in env.possible_agents:
            space = env.action_space(agent)
            if isinstance(space, spaces.Discrete) and space.start == 0:
                self._discrete_sizes[agent] = int(space.n)
        # The wrapped env's "step this action if its mask allows it" (hpuno_env.raw_env has one), only
        # when it is the env itself: through another wrapper, that wrapper's step must run.
        hook = getattr(env, "_legal_step_hook", None) if env.unwrapped is env else None
        self._play_if_legal = hook() if callable(hook) else None

    # ------------------------------------------------------------ the hot path

    def step(self, action) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        env = self.env
        if not env.agents:
            self._has_updated = True
            EnvLogger.warn_step_after_terminated_truncated()
            return
        self._has_updated = True
        agent = env.agent_selection
        finished = env.terminations[agent] or env.truncations[agent]
        if type(action) is not int and isinstance(action, np.integer):  # what np.flatnonzero and rng.choice hand a loop
            action = int(action)
        # AssertOutOfBoundsWrapper; a plain int in range is the common case and needs no space lookup.
        if type(action) is int and 0 <= action < self._discrete_sizes.get(agent, 0):
            if not finished and self._play_if_legal is not None:
                # the raw env's own legal-move path: the mask test below and the step, its checks made once
                if not self._play_if_legal(action):
                    self._end_on_illegal_move(agent)
                return
        else:
            assert (action is None and finished) or env.action_space(agent).contains(action), "action is not in action space"
        # TerminateIllegalWrapper: a finished agent's step is the raw env's dead step, which is what the
        # stock wrapper calls too (directly, after an illegal move; through the raw step otherwise).
        if finished or env.observe(agent)["action_mask"][action]:
            env.step(action)
            return
        self._end_on_illegal_move(agent)

    def _end_on_illegal_move(self, agent) -> None:
        """TerminateIllegalWrapper's illegal move: every agent finished, ``illegal_reward`` to the mover, 0 to the others."""
        EnvLogger.warn_on_illegal_move()
        raw = self.env.unwrapped
        raw._cumulative_rewards[agent] = 0
        raw.terminations = dict.fromkeys(raw.agents, True)
        raw.truncations = dict.fromkeys(raw.agents, True)
        raw.rewards = dict.fromkeys(raw.truncations, 0)
        raw.rewards[agent] = self._illegal_reward
        raw._accumulate_rewards()
        raw._deads_step_first()

    def last(self, observe: bool = True):
        if not self._has_reset:
            # what AECEnv.last's first read, agent_selection, raises through OrderEnforcingWrapper
            raise AttributeError("agent_selection cannot be accessed before reset")
        return self.env.last(observe)

    def observe(self, agent):
        if not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self.env.observe(agent)

    def agent_iter(self, max_iter: int = 2**63) -> AECOrderEnforcingIterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _FusedIterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env)


class _FusedIterable(AECOrderEnforcingIterable):
    def __iter__(self):
        return _FusedIterator(self.env, self.max_iter)


class _FusedIterator(AECOrderEnforcingIterator):
    """``AECOrderEnforcingIterator`` reading the raw env's agents directly (no ``__getattr__``)."""

    def __next__(self):
        wrapper = self.env
        raw = wrapper.env
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return raw.agent_selection
