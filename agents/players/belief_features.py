"""What a belief reads from one seat's observation: the certain facts about the hidden cards, and the inputs of its
network (the observation and a summary of the round's history per seat).

Everything here is a function of the observation rows alone (and the table's rules), vectorised over a batch.

Certain facts (``TableFacts``), the hard constraints every belief keeps:

- the unseen copies of each card kind: the deck's copies less the viewer's hand and the discard pile;
- each other seat's hand size and the draw pile's size (they sum to the unseen cards);
- cards of a hand shown to the viewer by a challenge that the history does not show played since: held for sure.
  The observation keeps the hand as it was shown; its owner's plays in the history are taken off it (a play from
  before the showing is taken off too, which only weakens the fact). Only while the history holds the whole round
  and no hands moved in it (a Seven or a Zero): otherwise a play may have fallen out of it, and the shown cards
  count as nothing certain. What is left is capped by the hand's size and the unseen copies.

History features (``history_features``): the history's events, oldest first, are replayed with the colour in play
tracked (from each coloured card played and each colour named; unknown before the first of them), and summed per
other seat: draws by choice per colour in play (all, and since the seat's last play), cards played per colour and
of each wild, colours named, cards taken since its last play, Sorting Hat draws, bluffs found by a challenge, kept
and played drawn cards, and how many events ago it last played.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from hpuno_env.cards import CARD_COLOR, DECK_COPIES, NUM_CARD_TYPES, SORTING_HAT, WILD, WILD_DRAW4
from hpuno_env.encoding import HISTORY_KINDS, observation_layout, observation_scale, observation_size_in_version
from hpuno_env.kernel import HISTORY_ENTRY, HISTORY_LENGTH
from hpuno_env.universal import UNIVERSAL_BASE_VERSION, universal_observation, universal_scale, universal_size

MAX_OTHERS = 9  # a table-conditioned network has room for the other seats of ten players
_KIND = {name: code for code, name in enumerate(HISTORY_KINDS, start=1)}
# One seat's history summary: its columns, in order, with their widths.
SEAT_FEATURES = (
    ("draws_on_color", 4), ("draws_on_color_since_play", 4), ("plays_of_color", 4), ("plays_of_wilds", 3),
    ("named_colors", 4), ("taken_since_play", 1), ("hat_draws", 1), ("bluffs_found", 1), ("drawn_kept", 1),
    ("drawn_played", 1), ("events_since_play", 1),
)
SEAT_FEATURE_SIZE = sum(size for _, size in SEAT_FEATURES)
TABLE_FEATURES = 2  # events in the history / its length; a reshuffle among them
FEATURES_VERSION = 1  # bump whenever anything above or in history_features changes what a network reads


class TableFacts(NamedTuple):
    """The certain facts of a batch of B observations at a table of P players (module docstring)."""

    unseen: np.ndarray  # (B, 55) int64: copies of each kind neither in the viewer's hand nor on the discard pile
    sizes: np.ndarray  # (B, P - 1) int64: the other seats' hand sizes, in turn order to the viewer's left
    pile: np.ndarray  # (B,) int64: the draw pile's size
    known: np.ndarray  # (B, P - 1, 55) int64: cards each other seat holds for sure


def table_facts(observations: np.ndarray, num_players: int, deck: str = "harry_potter") -> TableFacts:
    """The certain facts of each observation row (int rows of ``observation_layout(num_players)``)."""
    layout = observation_layout(num_players)
    rows = np.asarray(observations, np.int64)
    others = num_players - 1
    unseen = np.maximum(DECK_COPIES[deck].astype(np.int64) - rows[:, layout["hand"]] - rows[:, layout["discard_counts"]], 0)
    sizes = rows[:, layout["other_hand_sizes"]]
    history = rows[:, layout["history"]]
    shown = rows[:, layout["revealed_hands"]].reshape(len(rows), others, NUM_CARD_TYPES) * rows[:, layout["revealed_seen"]][:, :, None]
    shown *= _whole_round_without_swaps(history)[:, None, None]
    known = np.maximum(shown - _plays_by_seat(history, others), 0)
    known = np.minimum(known, unseen[:, None, :])
    for seat in range(others):  # more shown cards than the hand holds: keep the first in card order
        excess = known[:, seat].sum(axis=1) - sizes[:, seat]
        for kind in range(NUM_CARD_TYPES):
            cut = np.minimum(np.maximum(excess, 0), known[:, seat, kind])
            known[:, seat, kind] -= cut
            excess -= cut
    over = known.sum(axis=1) - unseen  # two seats claiming the same copy (shown hands moved by swaps)
    if (over > 0).any():
        known = np.where((over > 0)[:, None, :], 0, known)
    return TableFacts(unseen, sizes, rows[:, layout["draw_pile_size"]][:, 0], known)


def _whole_round_without_swaps(history: np.ndarray) -> np.ndarray:
    """(B,) bool: the history holds the whole round (its oldest slot is empty) and no hands moved in it (a Seven or
    a Zero moves the records of shown hands with them): then every play since a hand was shown is in it."""
    kinds = history.reshape(len(history), HISTORY_LENGTH, HISTORY_ENTRY)[:, :, 0]
    return (kinds[:, 0] == 0) & ~np.isin(kinds, (_KIND["swap"], _KIND["rotate"])).any(axis=1)


def _plays_by_seat(history: np.ndarray, others: int) -> np.ndarray:
    """(B, others, 55): the cards each other seat played (plays, stacks, jumps) in the history rows."""
    events = history.reshape(len(history), HISTORY_LENGTH, HISTORY_ENTRY)
    kind, actor, card = events[..., 0], events[..., 1] - 2, events[..., 2] - 1  # actor: 0 the next seat to the left
    played = np.isin(kind, (_KIND["play"], _KIND["stack"], _KIND["jump"])) & (actor >= 0) & (card >= 0)
    counts = np.zeros((len(history), others, NUM_CARD_TYPES), np.int64)
    rows = np.broadcast_to(np.arange(len(history))[:, None], kind.shape)
    np.add.at(counts, (rows[played], actor[played], card[played]), 1)
    return counts


def history_features(observations: np.ndarray, num_players: int, seats: int) -> np.ndarray:
    """(B, seats * SEAT_FEATURE_SIZE + TABLE_FEATURES) float32: each other seat's history summary (module
    docstring), seats in turn order to the left, zeros for seats beyond the table's ``num_players - 1``."""
    rows = np.asarray(observations, np.int64)
    events = np.ascontiguousarray(rows[:, observation_layout(num_players)["history"]]).reshape(len(rows), HISTORY_LENGTH, HISTORY_ENTRY)
    B, others = len(rows), num_players - 1
    padded = np.zeros((B, seats, SEAT_FEATURE_SIZE), np.float32)
    padded[:, :others] = _replay_history(events, others, _COLUMN, _KIND_CODES, _CARD_COLOR, _WILD_KINDS)
    table = np.stack([(events[:, :, 0] > 0).sum(axis=1) / HISTORY_LENGTH, (events[:, :, 0] == _KIND["reshuffle"]).any(axis=1)], axis=1)
    return np.concatenate([padded.reshape(B, -1), table.astype(np.float32)], axis=1)


# What the compiled replay reads, passed to it (numba would freeze module globals into its cached code): the first
# column of each summary, the event kinds' codes, each card kind's colour (-1: a wild) and the wilds' card kinds.
_COLUMN = np.cumsum([0] + [size for _, size in SEAT_FEATURES])[:-1].astype(np.int64)
_KIND_CODES = np.array([_KIND[name] for name in ("play", "stack", "jump", "draw", "forced_draw", "sorting_hat", "color",
                                                 "keep", "challenge")], np.int64)
_CARD_COLOR = CARD_COLOR.astype(np.int64)
_WILD_KINDS = np.array([WILD, WILD_DRAW4, SORTING_HAT], np.int64)


@numba.njit(cache=True)
def _replay_history(events, others, column, codes, card_color, wild_kinds):
    """(B, others, SEAT_FEATURE_SIZE) float32: the history's events, oldest first, replayed per row with the colour
    in play tracked, summed per other seat (the module docstring; columns at ``column`` in SEAT_FEATURES' order)."""
    play, stack, jump, draw, forced_draw, hat, named, keep, challenge = codes
    (draws_on_color, draws_since_play, plays_of_color, plays_of_wilds, named_colors, taken_since_play, hat_draws,
     bluffs_found, drawn_kept, drawn_played, events_since_play) = column
    count, length = events.shape[0], events.shape[1]
    out = np.zeros((count, others, events_since_play + 1), np.float32)
    taken = np.zeros(others, np.float32)
    last_play = np.zeros(others, np.int64)
    for b in range(count):
        color, previous_kind, previous_actor, bluffer = -1, 0, 0, -1
        taken[:] = 0
        last_play[:] = -1
        for index in range(length):
            kind, actor, card, value = events[b, index, 0], events[b, index, 1], events[b, index, 2], events[b, index, 3]
            seat = actor - 2  # 0: the next seat to the viewer's left; -1 the viewer; -2 no seat
            played = (kind == play or kind == stack or kind == jump) and card > 0
            kind_color = card_color[card - 1] if card > 0 else -1  # read only where a card was played
            if seat >= 0:
                if kind == draw and color >= 0:
                    out[b, seat, draws_on_color + color] += 1
                    out[b, seat, draws_since_play + color] += 1
                if played and kind_color >= 0:
                    out[b, seat, plays_of_color + kind_color] += 1
                if played and kind_color < 0:
                    wild = 1 if card - 1 == wild_kinds[1] else (2 if card - 1 == wild_kinds[2] else 0)
                    out[b, seat, plays_of_wilds + wild] += 1
                if kind == named:
                    out[b, seat, named_colors + max(value - 1, 0)] += 1
                if kind == hat:
                    out[b, seat, hat_draws] += 1
                if kind == keep:
                    out[b, seat, drawn_kept] += 1
                if played and previous_kind == draw and previous_actor == actor:
                    out[b, seat, drawn_played] += 1
            if kind == challenge and value == 2 and bluffer >= 0:
                out[b, bluffer, bluffs_found] += 1
            if played and seat >= 0:
                last_play[seat] = index
                taken[seat] = 0
                for c in range(4):
                    out[b, seat, draws_since_play + c] = 0
            if (kind == draw or kind == forced_draw or kind == hat) and seat >= 0:
                taken[seat] += value
            if played and card - 1 == wild_kinds[1]:
                bluffer = seat if seat >= 0 else -1
            if played:
                color = kind_color  # a wild's colour is unknown until it is named
            if kind == named:
                color = value - 1
            if kind > 0:
                previous_kind, previous_actor = kind, actor
        for seat in range(others):
            out[b, seat, taken_since_play] = taken[seat]
            since = length - 1 - last_play[seat] if last_play[seat] >= 0 else length
            out[b, seat, events_since_play] = since / length
    return out


def network_inputs(observations: np.ndarray, num_players: int, rules: dict | None, universal: bool) -> np.ndarray:
    """(B, input size) float32: what a belief network reads. Per table: the observation of layout 3 (scaled as
    ``observation_scale``) and the history features; table-conditioned: the universal observation (scaled) and the
    history features with room for nine other seats."""
    rows = np.asarray(observations)
    if universal:
        base = universal_observation(rows, num_players, rules).astype(np.float32) * universal_scale()
        return np.concatenate([base, history_features(rows, num_players, MAX_OTHERS)], axis=1)
    size = observation_size_in_version(num_players, 3)
    base = rows[:, :size].astype(np.float32) * observation_scale(num_players)[:size]
    return np.concatenate([base, history_features(rows, num_players, num_players - 1)], axis=1)


def network_input_size(num_players: int | None) -> int:
    """The input size of a belief network for num_players (None: table-conditioned)."""
    if num_players is None:
        return universal_size() + MAX_OTHERS * SEAT_FEATURE_SIZE + TABLE_FEATURES
    return observation_size_in_version(num_players, 3) + (num_players - 1) * SEAT_FEATURE_SIZE + TABLE_FEATURES


assert UNIVERSAL_BASE_VERSION == 3  # network_inputs reads layout 3's fields in both forms
