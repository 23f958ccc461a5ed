"""The rule-based player trained agents must beat, compiled: a score per legal action, the best one wins.

``heuristic_action`` chooses for one observation row; ``heuristic_actions``
for a batch (what ``agents.players.heuristic.HeuristicAgent`` calls);
``rollout.py`` calls ``heuristic_action`` inside its compiled rollouts. Its
weights, thresholds and constants are the table below, read by both.

It reads only its own observation (``hpuno_env.observation_layout``) and
plays as a careful human would. Each rule that is new since ``heuristic-v0``
(the first heuristic, kept for comparison) stayed only if taking it out lost
rounds against ``heuristic-v0`` in 40,000-round evaluations
(``agents.evaluation.rounds.win_rate``, 2 and 4 players); in all, it wins 57% of
2-player rounds against ``heuristic-v0`` and 29% in 4 players (one against
three; a fair share is 25%).

- **Plays before draws, coloured cards before wilds.** A wild is always
  playable, so it is kept for when nothing else plays; a Wild Draw Four is
  played only while holding no card of the current colour (a bluff only when
  there is nothing else at all: never drawing by choice).
- **Block the next seat.** By card counting (the cards I have not seen are
  the others' hands and the draw pile), each coloured card gets the chance
  that the next seat holds nothing to answer it: no card of its colour
  (none at all if that seat drew on the colour, the observation's "lacks"
  flag), of its rank, or wild. That chance, tiny while the seat holds many
  cards, decides the play as it nears going out.
- **Two players: take the extra turns.** Skip, Reverse and Draw Two give
  another turn, so they go first when another card can follow them (Draw
  Two first of all). Cards whose rank I also hold in another colour are kept:
  they are the way to switch colour later.
- **Attack a seat close to going out** with the Wild Draw Four and the
  Sorting Hat (whose target draws until a Gryffindor card, about four cards;
  the target is the seat with the fewest cards), and with three or more
  players with a Skip or Draw Two when the next seat is the one.
- **Colour**: the one I hold most of; among equals, the one the next seat is
  least likely to answer (with two players, never red after a Sorting Hat:
  its target, the other seat, ends up holding a red card).
- **UNO and catch** whenever allowed; a playable drawn card is played.
- **Challenge** a Wild Draw Four when its player probably held the colour it
  replaced: the chance that its other cards, drawn from the unseen ones,
  include that colour is at least ``CHALLENGE_HELD``, 0.6
  (``CHALLENGE_HELD_ENDGAME``, 0.3, when I hold two cards or fewer, since
  winning the challenge then lets me play for the win), and never when it
  showed it lacks that colour.

The Sorting Hat's colour is assumed to be red (the default
``gryffindor_color``: the option is not in the observation).

Under the house rules (docs/rules.md §15; the observation's ``house_rules``
flags, ``house_phase`` and ``pending_draw`` say which are in play), with
nothing changed where they are off:

- **Stacking** (``stacking``): facing a pending draw it stacks whenever it
  can (a stacked card costs nothing and sends the whole draw on), a Draw Two
  before a Wild Draw Four, but never a Wild Draw Four it would be guilty of (a
  challenge would make it draw everything), and a stacked Wild Draw Four
  before a challenge.
- **Jump-in** (``jump_in``): it always jumps (a card shed out of turn).
- **Seven-O** (``seven_zero``): a 7 or 0 is worth ``swap`` points per card
  the hand it gets is smaller than the one it gives (a 7's partner is the seat
  with the fewest cards, a 0 brings the hand of the seat before it), so a swap
  that would give it a bigger hand waits, even for a draw.
- **Classic deck** (``deck="classic"``): no Sorting Hats among the unseen cards.
- **Draw until playable** (``draw_until_playable``) and **forced play**
  (``forced_play``) ask nothing new of it: it draws only when no card plays,
  and plays a playable drawn card anyway.

Ties are broken by noise the caller adds to the scores (uniform in [0, 0.01)
per action): ``HeuristicAgent`` draws it from its own generator, a rollout
from each game's generator. The scores are float32; only the legal actions
are scored.

The compiled functions are cached on disk like the kernel's, keyed by this
file and every module of the package it imports (``kernel.stamped_function_cache``),
so an edit here or of a rule recompiles them.
"""

from __future__ import annotations

import numpy as np

from . import kernel
from ._checks import check_finite
from .cards import (
    ACCEPT, CARD_COPIES, CATCH, CHALLENGE, COLOR_BASE, DRAW, KEEP, NUM_ACTIONS, NUM_CARD_TYPES, PASS, SORTING_HAT,
    TARGET_BASE, UNO, WILD, WILD_DRAW4,
)
from .encoding import observation_layout

SOURCE_FILES = kernel._rules_source_files(__name__)
SOURCE_HASH = kernel._rules_source_hash(SOURCE_FILES)
HeuristicFunctionCache = kernel.stamped_function_cache(SOURCE_HASH)
jit = kernel._compiled(cache_class=HeuristicFunctionCache, _nrt=False)
leaf = kernel._compiled(cache_class=HeuristicFunctionCache, _nrt=False, inline="always")

# Scores are in "points of preference": a coloured play starts at 100, a wild at 60, a draw at 10.
# The two sets differ where measurement said so (2 players: extra turns rule; 3+: the next seat does).
# The compiled code reads them as a float32 vector in this order (WEIGHT_NAMES).
WEIGHTS_TWO_PLAYERS = {
    "block": 20.0,  # times the chance the next seat cannot answer the card
    "action_follow": 2.0,  # Skip / Reverse / Draw Two when another card can follow it (2 players)
    "draw2": 2.0,  # a Draw Two on top of that (2 players)
    "rank_pair": -3.0,  # the card's rank is also in my hand in another colour: keep it
    "attack": 20.0,  # per threat point (4 - hand size, at least 0) of the victim: WD4, Hat; 3+ players: Skip, Draw Two
    "color_block": 0.5,  # colour choice: times the chance the next seat cannot answer the colour
    "swap": 10.0,  # Seven-O: per card the hand a 7 or 0 brings is smaller than the one it gives
}
WEIGHTS_MORE_PLAYERS = {
    **WEIGHTS_TWO_PLAYERS,
    "block": 100.0,
    "action_follow": 0.0,
    "draw2": 0.0,
    "rank_pair": 0.0,
}
WEIGHT_NAMES = tuple(WEIGHTS_TWO_PLAYERS)
assert tuple(WEIGHTS_MORE_PLAYERS) == WEIGHT_NAMES
CHALLENGE_HELD = 0.6  # challenge when the offender held the replaced colour with at least this chance
CHALLENGE_HELD_ENDGAME = 0.3  # the same when I hold two cards or fewer
BLUFF_STACK = 0.25  # below accept (0.5): a Wild Draw Four stacked while holding the colour is never played
GRYFFINDOR = 0  # red: the Sorting Hat's target ends up holding one (the option is not in the observation)
# Positions in the observation's ``house_rules`` flags (encoding.py, layout version 3).
CLASSIC_DECK_FLAG, SEVEN_ZERO_FLAG = 0, 5


def heuristic_weights(num_players: int, overrides: dict | None = None) -> np.ndarray:
    """The weight vector (float32, WEIGHT_NAMES order) for num_players, with entries overridden by name."""
    base = WEIGHTS_TWO_PLAYERS if num_players == 2 else WEIGHTS_MORE_PLAYERS
    overrides = overrides or {}
    unknown = sorted(set(overrides) - set(base))
    if unknown:
        raise ValueError(f"weights has unknown names {unknown}; known: {sorted(base)}")
    # NaN or inf would make every comparison of scores false: the choice would be no rule's.
    merged = {**base, **{name: check_finite(value, f"weights[{name!r}]") for name, value in overrides.items()}}
    return np.array([merged[name] for name in WEIGHT_NAMES], np.float32)


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

F32 = np.float32


@leaf
def _threat(size):
    """How close a seat is to going out: 3 with one card, 2 with two, 1 with three, else 0."""
    return max(F32(0.0), F32(4.0) - size)


@leaf
def _first_max(values, start, count):
    best = 0
    for k in range(1, count):
        if values[start + k] > values[start + best]:
            best = k
    return best


@leaf
def _count_cards(row, others, next_seat, classic, unseen, color_counts, unseen_color, may_hold, rank_sum, rank_hand):
    """Fill the count arrays from my hand and the discard pile; returns (my hand size, unseen cards).

    Integers throughout (exact in float32). The cards I have not seen are the full deck (no Hats
    in the classic one) less my hand and the discard pile; a colour the next seat drew on counts
    as absent from its hand (may_hold 0)."""
    lacks = LACKS_A + LACKS_B * others
    for rank in range(13):
        rank_hand[rank] = F32(0.0)
        rank_sum[rank] = F32(0.0)
    my_size = 0
    total_unseen = 0
    for color in range(4):
        may = 1 - row[lacks + 4 * next_seat + color]
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
            rank_sum[rank] += F32(hidden * may)  # per rank: unseen cards the next seat may hold
        color_counts[color] = F32(held_color)
        unseen_color[color] = F32(unseen_of_color)
        my_size += held_color
        total_unseen += unseen_of_color
    for card in range(WILD, NUM_CARD_TYPES):
        copies = 0 if classic and card == SORTING_HAT else COPIES_INT[card]
        unseen[card] = F32(max(copies - row[card] - row[DISCARD_A + card], 0))
        total_unseen += int(unseen[card])
        my_size += row[card]
    return my_size, total_unseen


@leaf
def _color_blocks(row, mask, num_players, unseen_color, may_hold, unseen_wild, unseen_total, next_size, color_block):
    """The chance the next seat cannot answer each colour I might name (0 where naming is not legal)."""
    # pow is the costly part: only when a colour is to be named.
    naming = mask[COLOR_BASE] or mask[COLOR_BASE + 1] or mask[COLOR_BASE + 2] or mask[COLOR_BASE + 3]
    for color in range(4):
        answers = unseen_color[color] * may_hold[color] + unseen_wild
        chance = min(max(F32(1.0) - answers / unseen_total, F32(0.0)), F32(1.0))
        color_block[color] = chance ** next_size if naming else F32(0.0)
    if num_players == 2:
        # Two players: the Sorting Hat I just played (not a starting Hat: no one drew) will
        # leave the next seat holding a Gryffindor card.
        discards = 0
        for card in range(NUM_CARD_TYPES):
            discards += row[DISCARD_A + card]
        if row[TOP_A + SORTING_HAT] == 1 and discards > 1:
            color_block[GRYFFINDOR] = F32(0.0)


@leaf
def _colored_play_score(card, num_players, weights, unseen, may_hold, unseen_color, rank_sum, rank_hand, color_counts,
                        unseen_wild, unseen_total, next_size, next_threat, wilds):
    """The score of playing coloured card type card (0..51)."""
    w_block, w_follow, w_draw2, w_pair, w_attack = weights[0], weights[1], weights[2], weights[3], weights[4]
    color, rank = card // 13, card % 13
    # The chance the next seat cannot answer it: by its colour, its rank in another colour, or a wild.
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
        is_action = rank >= 10  # Skip, Reverse, Draw Two
        can_follow = (color_counts[color] - F32(1.0) + same_rank_left + wilds) > 0
        extra = F32(0.0)
        if is_action and can_follow:
            extra += w_follow
        if rank == 12:
            extra += w_draw2
        play = F32(play + extra)
    elif rank == 10 or rank == 12:  # a Skip or Draw Two makes a seat close to going out miss its turn
        play = play + w_attack * next_threat
    return play


@leaf
def _challenge_score(row, mask, others, previous_seat, unseen_color, unseen_total, my_size):
    """1 to challenge a Wild Draw Four, 0 to accept: the chance the offender's other cards, drawn from
    the unseen ones, held the colour its Wild Draw Four replaced (none if it drew on that colour)."""
    replaced = _first_max(row, PREV_COLOR_A + PREV_COLOR_B * others, 4)
    offender_size = F32(row[SIZES_A + previous_seat])
    share = unseen_color[replaced] / unseen_total
    if not mask[CHALLENGE] or row[LACKS_A + LACKS_B * others + 4 * previous_seat + replaced] == 1:
        held = F32(0.0)
    else:
        held = F32(1.0) - (F32(1.0) - share) ** offender_size
    threshold = CHALLENGE_HELD_ENDGAME if my_size <= 2 else CHALLENGE_HELD
    return F32(1.0) if held >= threshold else F32(0.0)


@leaf
def _best_legal(scores, mask, noise):
    """The legal action of the highest score plus noise (the first of equals)."""
    best, best_score = -1, F32(0.0)
    for action in range(NUM_ACTIONS):
        if mask[action]:
            score = scores[action] + noise[action]
            if best < 0 or score > best_score:
                best, best_score = action, score
    return best


@leaf
def heuristic_action(row, mask, num_players, weights, noise, scratch):
    """The heuristic's choice for one observation row (int8) and mask (bools), given tie-break noise
    (75 float32: added to the scores; only the legal entries are read) and weights (heuristic_weights).
    scratch: >= 256 float32."""
    others = num_players - 1
    w_attack, w_color_block, w_swap = weights[4], weights[5], weights[6]
    house_rules = HOUSE_RULES_A + HOUSE_RULES_B * others
    scores = scratch[0:NUM_ACTIONS]
    unseen = scratch[80:80 + NUM_CARD_TYPES]
    color_counts, unseen_color, may_hold = scratch[140:144], scratch[144:148], scratch[148:152]
    rank_sum, rank_hand, color_block = scratch[152:165], scratch[165:178], scratch[178:182]

    # Others are listed in turn order to my left: index 0 is my left, others - 1 my right.
    left = row[DIRECTION_A] == 1
    next_seat = 0 if left else others - 1
    previous_seat = others - 1 if left else 0
    next_size = F32(row[SIZES_A + next_seat])
    next_threat = _threat(next_size)
    classic = row[house_rules + CLASSIC_DECK_FLAG] == 1
    my_size, total_unseen = _count_cards(row, others, next_seat, classic, unseen, color_counts, unseen_color, may_hold,
                                         rank_sum, rank_hand)
    wilds = F32(row[WILD]) + F32(row[WILD_DRAW4]) + F32(row[SORTING_HAT])
    holds_current = color_counts[_first_max(row, COLOR_A, 4)] > 0
    unseen_total = F32(max(total_unseen, 1))
    unseen_wild = unseen[WILD] + unseen[WILD_DRAW4] + unseen[SORTING_HAT]
    _color_blocks(row, mask, num_players, unseen_color, may_hold, unseen_wild, unseen_total, next_size, color_block)

    for card in range(52):  # only the legal plays: the others cannot win
        scores[card] = F32(0.0) if not mask[card] else _colored_play_score(
            card, num_players, weights, unseen, may_hold, unseen_color, rank_sum, rank_hand, color_counts,
            unseen_wild, unseen_total, next_size, next_threat, wilds)
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
    # Wilds: kept for when stuck, sooner as an attack on a seat close to going out.
    scores[WILD] = F32(60.0)
    scores[SORTING_HAT] = F32(60.0) + w_attack * max_threat
    scores[WILD_DRAW4] = F32(5.0) if holds_current else F32(55.0) + w_attack * next_threat
    if row[PENDING_A + PENDING_B * others] > 0 and holds_current:  # a stack is never a guilty Wild Draw Four
        scores[WILD_DRAW4] = F32(BLUFF_STACK)
    scores[DRAW], scores[KEEP], scores[PASS] = F32(10.0), F32(1.0), F32(0.0)
    scores[UNO], scores[CATCH] = F32(1000.0), F32(1000.0)
    for color in range(4):
        scores[COLOR_BASE + color] = (F32(200.0) + color_counts[color]) + w_color_block * color_block[color]
    for k in range(9):
        scores[TARGET_BASE + k] = F32(200.0) - F32(row[SIZES_A + k]) if k < others else F32(0.0)
    scores[CHALLENGE] = _challenge_score(row, mask, others, previous_seat, unseen_color, unseen_total, my_size)
    scores[ACCEPT] = F32(0.5)
    return _best_legal(scores, mask, noise)


@jit
def heuristic_actions(observations, masks, num_players, weights, noise, scratch, out):
    """heuristic_action for every row: out[i] from observations[i], masks[i], noise[i]."""
    for i in range(observations.shape[0]):
        out[i] = heuristic_action(observations[i], masks[i], num_players, weights, noise[i], scratch)


TIE_BREAK_NOISE = 0.01  # uniform in [0, TIE_BREAK_NOISE) added to every action's score


def batch_actions(observations, masks, num_players: int, weights: np.ndarray, rng: np.random.Generator,
                  scratch: np.ndarray) -> np.ndarray:
    """The heuristic's actions for a batch of int8 observation rows and bool masks (both C-contiguous), its
    tie-break noise drawn from ``rng`` as one (B, 75) float32 draw: seeded games depend on that shape.
    ``scratch``: at least 256 float32."""
    noise = rng.random((len(masks), NUM_ACTIONS), dtype=np.float32) * TIE_BREAK_NOISE
    actions = np.empty(len(masks), np.int64)
    heuristic_actions(observations, masks, num_players, weights, noise, scratch, actions)
    return actions
