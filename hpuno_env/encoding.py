"""Observation and state encodings: what a seat sees, as one int8 vector.

``observation_layout(num_players)`` is the documentation in code: an ordered
name -> slice map of the vector that ``observe_games`` writes for the player
to act. Other seats appear in turn order counted to the left (``other 1`` is
the next seat to the left, whatever the direction of play).

Everything a strong human player knows, and nothing else: their own hand,
public facts (pile sizes, every discard still on the discard pile, hand sizes,
UNO calls, colours a seat showed it lacks by drawing instead of playing on
them, scores) and private knowledge earned in play (the card just drawn, a
hand shown to this seat by a Wild Draw Four challenge).

Every entry is a small count or flag, so the vector is int8: a quarter of the
bytes of float32, and policies cast to float anyway. Match scores do not fit
int8, so they appear as percent of ``target_score`` (0..100, capped).
"""

from __future__ import annotations

import numpy as np

from .cards import NUM_CARD_TYPES
from .kernel import CHALLENGE_PHASE, CATCH_PHASE, DRAWN, NUM_PHASES, jit

OBS_DTYPE = np.int8


def observation_layout(num_players: int) -> dict[str, slice]:
    """Name -> slice of the observation vector for a game of num_players."""
    others = num_players - 1
    fields = [
        ("hand", NUM_CARD_TYPES),  # copies of each card type in my hand
        ("top_card", NUM_CARD_TYPES),  # one-hot: the top discard
        ("current_color", 4),  # one-hot red, yellow, green, blue; zeros while a wild's colour is unnamed
        ("phase", NUM_PHASES),  # one-hot play, drawn, color, target, challenge, catch, over
        ("drawn_card", NUM_CARD_TYPES),  # one-hot: the card I just drew (drawn phase)
        ("direction_left", 1),  # 1 while play goes left (to higher seats)
        ("draw_pile_size", 1),
        ("discard_counts", NUM_CARD_TYPES),  # copies of each card type on the discard pile
        ("my_score_pct", 1),  # my match total, percent of target_score
        ("my_uno_called", 1),
        ("other_hand_sizes", others),  # others in turn order to my left
        ("other_uno_called", others),
        ("other_lacks_color", others * 4),  # per other seat: 4 flags, colours it drew on
        ("other_scores_pct", others),
        ("wd4_prev_color", 4),  # challenge phase: one-hot colour current before the Wild Draw Four
        ("catch_offender", others),  # catch phase: one-hot, the seat that did not call UNO
        ("revealed_seen", others),  # 1 if that seat's hand was shown to me this round
        ("revealed_hands", others * NUM_CARD_TYPES),  # per other seat: the hand it showed me
    ]
    layout, start = {}, 0
    for name, size in fields:
        layout[name] = slice(start, start + size)
        start += size
    return layout


def observation_size(num_players: int) -> int:
    return max(s.stop for s in observation_layout(num_players).values())


@jit
def observe_games(s, p, seats, out):
    """Write into out[g] the view of seat seats[g] of each game g (all zeros for seat -1)."""
    out[:, :] = 0
    for g in range(out.shape[0]):
        if seats[g] >= 0:
            observe_one(s, p, g, seats[g], out[g])


@jit
def observe_one(s, p, g, seat, row):
    """Write into row (zeroed) what seat knows of game g."""
    P = p.num_players
    others = P - 1
    C = NUM_CARD_TYPES
    for card in range(C):
        row[card] = s.hands[g, seat, card]
    top = s.discard[g, s.discard_count[g] - 1]
    row[C + top] = 1
    at = 2 * C
    if s.current_color[g] >= 0:
        row[at + s.current_color[g]] = 1
    at += 4
    row[at + s.phase[g]] = 1
    at += NUM_PHASES
    if s.phase[g] == DRAWN and seat == s.current_player[g]:  # only the drawer saw it
        row[at + s.drawn_card[g]] = 1
    at += C
    row[at] = 1 if s.direction[g] > 0 else 0
    row[at + 1] = s.draw_count[g]
    at += 2
    for i in range(s.discard_count[g]):
        row[at + s.discard[g, i]] += 1
    at += C
    row[at] = min(100, s.scores[g, seat] * 100 // p.target_score)
    row[at + 1] = s.uno_called[g, seat]
    at += 2
    for k in range(others):
        other = (seat + 1 + k) % P
        row[at + k] = min(127, s.hand_sizes[g, other])
        row[at + others + k] = s.uno_called[g, other]
        for color in range(4):
            row[at + 2 * others + 4 * k + color] = s.lacks_color[g, other, color]
        row[at + 6 * others + k] = min(100, s.scores[g, other] * 100 // p.target_score)
    at += 7 * others
    if s.phase[g] == CHALLENGE_PHASE and s.wd4_prev_color[g] >= 0:
        row[at + s.wd4_prev_color[g]] = 1
    at += 4
    if s.phase[g] == CATCH_PHASE and s.catch_offender[g] != seat:
        row[at + (s.catch_offender[g] - seat - 1) % P] = 1
    at += others
    for k in range(others):
        other = (seat + 1 + k) % P
        if s.revealed_seen[g, seat, other]:
            row[at + k] = 1
            for card in range(C):
                row[at + others + k * C + card] = s.revealed[g, seat, other, card]


def state_size(num_players: int) -> int:
    return num_players * NUM_CARD_TYPES + NUM_CARD_TYPES + 4 + NUM_PHASES + num_players + 1 + 1 + NUM_CARD_TYPES + num_players + num_players


def full_state(s, num_players: int, target_score: int) -> np.ndarray:
    """Full-information vector per game (every hand), for centralised critics.

    Layout: all hands (seat order, 55 each), top card one-hot, current colour
    one-hot, phase one-hot, player to act one-hot, direction_left, draw pile
    size, discard counts, scores percent of target, UNO calls.
    """
    G = s.hands.shape[0]
    rows = np.arange(G)
    top = s.discard[rows, np.maximum(s.discard_count - 1, 0)]
    parts = [
        s.hands.reshape(G, -1),
        np.eye(NUM_CARD_TYPES, dtype=np.int8)[top],
        (s.current_color[:, None] == np.arange(4)).astype(np.int8),
        np.eye(NUM_PHASES, dtype=np.int8)[s.phase],
        (s.current_player[:, None] == np.arange(num_players)).astype(np.int8),
        (s.direction > 0).astype(np.int8)[:, None],
        np.minimum(s.draw_count, 127).astype(np.int8)[:, None],
        (s.discard[:, :, None] == np.arange(NUM_CARD_TYPES)).__and__(
            np.arange(s.discard.shape[1])[None, :, None] < s.discard_count[:, None, None]
        ).sum(axis=1).astype(np.int8),
        np.minimum(100, s.scores * 100 // target_score).astype(np.int8),
        s.uno_called.astype(np.int8),
    ]
    return np.concatenate(parts, axis=1).astype(OBS_DTYPE)
