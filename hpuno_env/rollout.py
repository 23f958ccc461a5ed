"""Rollouts: play a batch of games to the end of the round with built-in policies, compiled.

``VectorEngine.rollout`` is the public face. A search plays thousands of
rounds out per decision; with a Python policy every decision of every
rollout is a round trip (engine -> numpy -> engine). Here the whole loop is
one compiled call: each step, every game's seat to act chooses with its
policy (``RANDOM``: uniform over the legal actions; ``RANDOM_PLAY``: a
uniform legal card, drawing only when none plays, UNO called on a coin
flip; ``HEURISTIC``: the rule-based player, ``heuristic.heuristic_action``,
the code ``agents.players.heuristic.HeuristicAgent`` runs), then the
kernel's ``step_games`` plays the batch.

The heuristic reads the seat's observation row (``kernel.observe_one``, the
row ``VectorEngine.observe`` gives) and breaks ties with noise from each
game's own generator (``EngineState.rng``), drawn for the legal actions only
and not at all when one action is legal; so given those uniform draws, it
chooses what ``HeuristicAgent`` chooses (``tests/env/test_rollouts.py``).

The compiled functions here are cached on disk like the kernel's, keyed by
this file and every module of the package it imports (kernel.py, cards.py,
heuristic.py ...: ``kernel.stamped_function_cache``), so an edit of a rule
or of the heuristic recompiles the rollouts too.
"""

from __future__ import annotations

import numpy as np

from . import kernel
from .cards import NUM_ACTIONS, NUM_CARD_TYPES, UNO
from .heuristic import heuristic_action

SOURCE_FILES = kernel._rules_source_files(__name__)
SOURCE_HASH = kernel._rules_source_hash(SOURCE_FILES)
RolloutFunctionCache = kernel.stamped_function_cache(SOURCE_HASH)
jit = kernel._compiled(cache_class=RolloutFunctionCache, _nrt=False)
leaf = kernel._compiled(cache_class=RolloutFunctionCache, _nrt=False, inline="always")

RANDOM, RANDOM_PLAY, HEURISTIC = range(3)
POLICY_NAMES = ("random", "random-play", "heuristic")

F32 = np.float32


@leaf
def _uniform_float(s, g):
    """A float32 in [0, 1) from game g's generator (24 random bits, as numpy's float32 draws)."""
    return F32(kernel.next_u32(s, g) >> 8) * F32(1.0 / 16777216.0)


@leaf
def _pick_legal(s, g, mask, first, stop):
    """A uniform pick among the legal actions in [first, stop) (-1 if none)."""
    count = 0
    for action in range(first, stop):
        if mask[action]:
            count += 1
    if count == 0:
        return -1
    chosen = kernel.random_below(s, g, count)
    for action in range(first, stop):
        if mask[action]:
            if chosen == 0:
                return action
            chosen -= 1
    return -1


@leaf
def choose(s, p, g, policy, weights, mask, row, noise, scratch):
    """The action of game g's seat to act under policy (RANDOM, RANDOM_PLAY or HEURISTIC)."""
    if policy == RANDOM:
        return _pick_legal(s, g, mask, 0, NUM_ACTIONS)
    if policy == RANDOM_PLAY:
        call_uno = mask[UNO]
        mask[UNO] = False
        action = _pick_legal(s, g, mask, 0, NUM_CARD_TYPES)
        if action < 0:
            action = _pick_legal(s, g, mask, NUM_CARD_TYPES, NUM_ACTIONS)
        if call_uno and kernel.random_below(s, g, 2) == 1:
            action = UNO
        return action
    only = -1
    for action in range(NUM_ACTIONS):
        if mask[action]:
            if only >= 0:
                only = -2
                break
            only = action
    if only >= 0:  # one legal action: the heuristic's choice whatever it scores (no tie-break drawn)
        return only
    row[:] = 0
    kernel.observe_one(s, p, g, s.current_player[g], row, False)
    for action in range(NUM_ACTIONS):
        noise[action] = _uniform_float(s, g) * F32(0.01) if mask[action] else F32(0.0)
    return heuristic_action(row, mask, p.num_players, weights, noise, scratch)


@jit
def rollout_games(s, p, playing, seat_policies, weights, max_steps, winners, decisions, actions, rewards, terminated,
                  truncated, bad, scratch_mask, masks, observations, noise, scratch):
    """Play every game g with playing[g] to the end of its round: seat k of game g plays with
    seat_policies[g, k]. winners[g]: the round's winner, -1 if truncated (max_turns) or still
    going after max_steps steps of the batch; decisions[g]: decisions taken. playing is cleared."""
    for _ in range(max_steps):
        anyone = False
        for g in range(playing.shape[0]):
            actions[g] = -1
            if not playing[g]:
                continue
            if s.phase[g] == kernel.OVER:
                playing[g] = False
                continue
            anyone = True
            mask = masks[g]
            mask[:] = False
            kernel.legal_mask_one(s, p, g, mask)
            actions[g] = choose(s, p, g, seat_policies[g, s.current_player[g]], weights, mask, observations[0], noise, scratch)
        if not anyone:
            return
        kernel.step_games(s, p, actions, rewards, terminated, truncated, False, bad, True, scratch_mask, False, observations, masks)
        for g in range(playing.shape[0]):
            if actions[g] < 0:
                continue
            decisions[g] += 1
            if truncated[g]:
                playing[g] = False
                continue
            for e in range(s.event_count[g]):
                if s.events[g, e, 0] == kernel.EV_ROUND_END:
                    winners[g] = s.events[g, e, 1]
                    playing[g] = False
