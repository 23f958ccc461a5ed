"""Rollouts: play a batch of games to the end of the round with built-in policies, compiled.

``VectorEngine.rollout`` is the public face. A search plays thousands of
rounds out per decision; with a Python policy every decision of every
rollout is a round trip (engine -> numpy -> engine). Here the whole loop is
one compiled call: each step, every game's seat to act chooses with its
policy (``RANDOM``: uniform over the legal actions; ``RANDOM_PLAY``: a
uniform legal card, drawing only when none plays, UNO called on a coin
flip; ``HEURISTIC``: the rule-based player of ``agents.players.heuristic``), then the
kernel's ``step_games`` plays the batch.

The compiled heuristic is a second implementation of ``agents.players.heuristic``
(this package never imports ``agents``): it reads the same observation row,
scores every action with the same float32 arithmetic in the same order, and
breaks ties with the same kind of noise, so given the same noise it chooses
exactly what ``HeuristicAgent`` chooses (``tests/env/test_rollouts.py`` checks
that on recorded observations, and that ``HEURISTIC_WEIGHTS`` are
``agents.players.heuristic``'s weights). In rollouts the noise comes from each game's own
generator (``EngineState.rng``), drawn for the legal actions only.

The compiled functions here are cached on disk like the kernel's, keyed by
this file and every module of the package it imports (kernel.py, cards.py,
encoding.py ...: ``kernel.stamped_function_cache``), so an edit of a rule
recompiles the rollouts too.
"""

from __future__ import annotations

import numpy as np

from . import kernel
from .cards import (
    ACCEPT, CARD_COPIES, CATCH, CHALLENGE, COLOR_BASE, DRAW, KEEP, NUM_ACTIONS, NUM_CARD_TYPES, PASS, SORTING_HAT,
    TARGET_BASE, UNO, WILD, WILD_DRAW4,
)
from .encoding import observation_layout

SOURCE_FILES = kernel._rules_source_files(__name__)
SOURCE_HASH = kernel._rules_source_hash(SOURCE_FILES)
RolloutFunctionCache = kernel.stamped_function_cache(SOURCE_HASH)
jit = kernel._compiled(cache_class=RolloutFunctionCache, _nrt=False)
leaf = kernel._compiled(cache_class=RolloutFunctionCache, _nrt=False, inline="always")

RANDOM, RANDOM_PLAY, HEURISTIC = range(3)
POLICY_NAMES = ("random", "random-play", "heuristic")

# The heuristic's weights (agents.players.heuristic documents each), in the order the compiled code reads them.
HEURISTIC_WEIGHT_NAMES = ("block", "action_follow", "draw2", "rank_pair", "attack", "color_block", "swap")
HEURISTIC_WEIGHTS = {
    2: {"block": 20.0, "action_follow": 2.0, "draw2": 2.0, "rank_pair": -3.0, "attack": 20.0, "color_block": 0.5, "swap": 10.0},
    "more": {"block": 100.0, "action_follow": 0.0, "draw2": 0.0, "rank_pair": 0.0, "attack": 20.0, "color_block": 0.5, "swap": 10.0},
}
BLUFF_STACK = 0.25  # a Wild Draw Four stacked while holding the current colour (below accept's 0.5)
CLASSIC_DECK_FLAG, SEVEN_ZERO_FLAG = 0, 5  # positions in the observation's house_rules flags


def heuristic_weights(num_players: int, overrides: dict | None = None) -> np.ndarray:
    """The heuristic's weight vector (float32, HEURISTIC_WEIGHT_NAMES order) for num_players."""
    base = HEURISTIC_WEIGHTS[2 if num_players == 2 else "more"]
    unknown = sorted(set(overrides or {}) - set(base))
    if unknown:
        raise ValueError(f"weights has unknown names {unknown}; known: {sorted(base)}")
    merged = {**base, **(overrides or {})}
    return np.array([merged[name] for name in HEURISTIC_WEIGHT_NAMES], np.float32)


# Where each observation field starts: a + b * (num_players - 1) (the layout grows by field blocks per other seat).
def _field_starts() -> dict[str, tuple[int, int]]:
    two, three = observation_layout(2), observation_layout(3)
    starts = {name: (two[name].start - (three[name].start - two[name].start), three[name].start - two[name].start) for name in two}
    for players in range(2, 11):
        layout = observation_layout(players)
        assert all(layout[name].start == a + b * (players - 1) for name, (a, b) in starts.items())
    return starts


_STARTS = _field_starts()
TOP_A = _STARTS["top_card"][0]
COLOR_A = _STARTS["current_color"][0]
DIRECTION_A = _STARTS["direction_left"][0]
DISCARD_A = _STARTS["discard_counts"][0]
SIZES_A = _STARTS["other_hand_sizes"][0]
LACKS_A, LACKS_B = _STARTS["other_lacks_color"]
PREV_COLOR_A, PREV_COLOR_B = _STARTS["wd4_prev_color"]
PENDING_A, PENDING_B = _STARTS["pending_draw"]
HOUSE_RULES_A, HOUSE_RULES_B = _STARTS["house_rules"]
assert _STARTS["hand"] == (0, 0) and _STARTS["other_hand_sizes"][1] == 0
COPIES_INT = CARD_COPIES.astype(np.int64)
GRYFFINDOR = 0  # red: what agents.players.heuristic assumes (the option is not in the observation)

F32 = np.float32


@leaf
def _threat(size):
    return max(F32(0.0), F32(4.0) - size)


@leaf
def _first_max(values, start, count):
    best = 0
    for k in range(1, count):
        if values[start + k] > values[start + best]:
            best = k
    return best


@leaf
def heuristic_action(row, mask, num_players, weights, noise, scratch):
    """agents.players.heuristic's choice for one observation row (int8) and mask (bools), given tie-break
    noise (75 float32: added to the scores; only the legal entries are read). scratch: >= 256 float32."""
    others = num_players - 1
    w_block, w_follow, w_draw2, w_pair, w_attack, w_color_block, w_swap = (
        weights[0], weights[1], weights[2], weights[3], weights[4], weights[5], weights[6])
    house_rules = HOUSE_RULES_A + HOUSE_RULES_B * others
    classic = row[house_rules + CLASSIC_DECK_FLAG] == 1
    stacking = row[PENDING_A + PENDING_B * others] > 0
    scores = scratch[0:NUM_ACTIONS]
    unseen = scratch[80:80 + NUM_CARD_TYPES]
    color_counts = scratch[140:144]
    unseen_color = scratch[144:148]
    may_hold = scratch[148:152]
    rank_sum = scratch[152:165]  # per rank: unseen cards the next seat may hold, over the colours
    rank_hand = scratch[165:178]  # per rank: my cards of that rank
    color_block = scratch[178:182]

    # Card counts, in one pass: integers (exact in float32, as numpy's float32 sums of them are).
    left = row[DIRECTION_A] == 1
    next_seat = 0 if left else others - 1
    previous_seat = others - 1 if left else 0
    next_size = F32(row[SIZES_A + next_seat])
    next_threat = _threat(next_size)
    lacks = LACKS_A + LACKS_B * others
    for rank in range(13):
        rank_hand[rank] = F32(0.0)
        rank_sum[rank] = F32(0.0)
    my_size = 0
    total_unseen = 0
    for color in range(4):
        may = 1 - row[lacks + 4 * next_seat + color]  # the next seat did not show it lacks the colour
        may_hold[color] = F32(may)
        held_color = 0
        unseen_of_color = 0
        for rank in range(13):
            card = color * 13 + rank
            held = row[card]
            hidden = max(COPIES_INT[card] - held - row[DISCARD_A + card], 0)
            unseen[card] = F32(hidden)
            held_color += held
            unseen_of_color += hidden
            rank_hand[rank] += F32(held)
            rank_sum[rank] += F32(hidden * may)
        color_counts[color] = F32(held_color)
        unseen_color[color] = F32(unseen_of_color)
        my_size += held_color
        total_unseen += unseen_of_color
    for card in range(WILD, NUM_CARD_TYPES):
        copies = 0 if classic and card == SORTING_HAT else COPIES_INT[card]  # the classic deck has no Hats
        unseen[card] = F32(max(copies - row[card] - row[DISCARD_A + card], 0))
        total_unseen += int(unseen[card])
        my_size += row[card]
    wilds = F32(row[WILD]) + F32(row[WILD_DRAW4]) + F32(row[SORTING_HAT])
    current = _first_max(row, COLOR_A, 4)
    holds_current = color_counts[current] > 0
    # The chances the next seat cannot answer (agents.players.heuristic's _block_chances).
    unseen_total = F32(max(total_unseen, 1))
    unseen_wild = unseen[WILD] + unseen[WILD_DRAW4] + unseen[SORTING_HAT]
    # Only the legal actions are scored (the others cannot win the argmax): pow is the costly part.
    naming = mask[COLOR_BASE] or mask[COLOR_BASE + 1] or mask[COLOR_BASE + 2] or mask[COLOR_BASE + 3]
    for color in range(4):
        answers = unseen_color[color] * may_hold[color] + unseen_wild
        chance = min(max(F32(1.0) - answers / unseen_total, F32(0.0)), F32(1.0))
        color_block[color] = chance ** next_size if naming else F32(0.0)
    if num_players == 2:
        discards = 0
        for card in range(NUM_CARD_TYPES):
            discards += row[DISCARD_A + card]
        if row[TOP_A + SORTING_HAT] == 1 and discards > 1:
            color_block[GRYFFINDOR] = F32(0.0)

    # Coloured plays.
    for card in range(52):
        if not mask[card]:
            scores[card] = F32(0.0)
            continue
        color, rank = card // 13, card % 13
        coloured = unseen[card] * may_hold[color]
        same_color = unseen_color[color] * may_hold[color]
        same_rank = rank_sum[rank] - coloured
        answers = same_color + same_rank + unseen_wild
        chance = min(max(F32(1.0) - answers / unseen_total, F32(0.0)), F32(1.0))
        block = chance ** next_size
        play = F32(100.0) + w_block * block
        same_rank_left = rank_hand[rank] - F32(1.0)
        if same_rank_left > 0:
            play = F32(play + w_pair)
        if num_players == 2:
            is_action = rank >= 10
            can_follow = (color_counts[color] - F32(1.0) + same_rank_left + wilds) > 0
            extra = F32(0.0)
            if is_action and can_follow:
                extra += w_follow
            if rank == 12:
                extra += w_draw2
            play = F32(play + extra)
        elif rank == 10 or rank == 12:
            play = play + w_attack * next_threat
        scores[card] = play
    max_threat = F32(0.0)
    smallest = F32(row[SIZES_A])
    for k in range(others):
        max_threat = max(max_threat, _threat(F32(row[SIZES_A + k])))
        smallest = min(smallest, F32(row[SIZES_A + k]))
    # Seven-O: a 7 or 0 (not the last card) trades my hand, less the card, for another.
    if row[house_rules + SEVEN_ZERO_FLAG] == 1 and my_size > 1:
        kept = F32(my_size - 1)
        seven_gain = w_swap * (kept - smallest)
        zero_gain = w_swap * (kept - F32(row[SIZES_A + previous_seat]))
        for color in range(4):
            scores[color * 13 + 7] = F32(scores[color * 13 + 7] + seven_gain)
            scores[color * 13] = F32(scores[color * 13] + zero_gain)
    scores[WILD] = F32(60.0)
    scores[SORTING_HAT] = F32(60.0) + w_attack * max_threat
    scores[WILD_DRAW4] = F32(5.0) if holds_current else F32(55.0) + w_attack * next_threat
    if stacking and holds_current:  # a stack is never a guilty Wild Draw Four
        scores[WILD_DRAW4] = F32(BLUFF_STACK)
    scores[DRAW] = F32(10.0)
    scores[KEEP] = F32(1.0)
    scores[UNO] = F32(1000.0)
    scores[CATCH] = F32(1000.0)
    scores[PASS] = F32(0.0)
    for color in range(4):
        scores[COLOR_BASE + color] = (F32(200.0) + color_counts[color]) + w_color_block * color_block[color]
    for k in range(9):
        scores[TARGET_BASE + k] = F32(200.0) - F32(row[SIZES_A + k]) if k < others else F32(0.0)
    # Challenge when the offender probably held the colour its Wild Draw Four replaced.
    replaced = _first_max(row, PREV_COLOR_A + PREV_COLOR_B * others, 4)
    offender_size = F32(row[SIZES_A + previous_seat])
    share = unseen_color[replaced] / unseen_total
    if not mask[CHALLENGE] or row[lacks + 4 * previous_seat + replaced] == 1:
        held = F32(0.0)
    else:
        held = F32(1.0) - (F32(1.0) - share) ** offender_size
    threshold = 0.3 if my_size <= 2 else 0.6
    scores[CHALLENGE] = F32(1.0) if held >= threshold else F32(0.0)
    scores[ACCEPT] = F32(0.5)

    best, best_score = -1, F32(0.0)
    for action in range(NUM_ACTIONS):
        if mask[action]:
            score = scores[action] + noise[action]
            if best < 0 or score > best_score:
                best, best_score = action, score
    return best


@jit
def heuristic_actions(observations, masks, num_players, weights, noise, scratch, out):
    """heuristic_action for every row: out[i] from observations[i], masks[i], noise[i]."""
    for i in range(observations.shape[0]):
        out[i] = heuristic_action(observations[i], masks[i], num_players, weights, noise[i], scratch)


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
    kernel.observe_one(s, p, g, s.current_player[g], row)
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
