"""Observation and state encodings: what a seat sees, as one int8 vector.

``observation_layout(num_players)`` is the documentation in code: an ordered
name -> slice map of the vector that ``kernel.observe_one`` writes for a seat
(it lives in the kernel beside the rest of the compiled rules, so that one
cache key covers them all: the kernel's on-disk cache is keyed by the contents
of kernel.py and of the modules it imports, ``kernel.RULES_SOURCE_FILES``, and
never pairs a new kernel with an old compiled observation). Other seats appear
in turn order counted to the left (``other 1`` is the next seat to the left,
whatever the direction of play).

Everything a strong human player knows, and nothing else: their own hand,
public facts (pile sizes, every discard still on the discard pile, hand sizes,
UNO calls, colours a seat showed it lacks by drawing instead of playing on
them, scores, the pending draw, the rules in play) and private knowledge
earned in play (the card just drawn, a hand shown to this seat by a Wild Draw
Four challenge, a hand this seat passed on by a Seven or a Zero).

Every entry is a small count or flag, so the vector is int8: a quarter of the
bytes of float32, and policies cast to float anyway. Match scores do not fit
int8, so they appear as percent of ``target_score`` (0..100, capped).
"""

from __future__ import annotations

import numpy as np

from .cards import CARD_COPIES, CARD_LABELS, DECK_SIZE, NUM_CARD_TYPES
from .kernel import HISTORY_ENTRY, HISTORY_LENGTH, NUM_HISTORY_KINDS, NUM_PHASES, SEAT_VALUED_KINDS

OBS_DTYPE = np.int8
# The observation layout's version, stored in every saved agent (agents.load
# refuses a file with another). Bump it whenever the meaning, order or size
# of any field of observation_layout (or what kernel.observe_one writes into
# it) changes: a trained network reads the vector by position, so an old
# agent would silently misread a new layout.
OBSERVATION_VERSION = 4
# The fields each version appended at the end of the layout. An earlier version's
# vector is a prefix of today's, so a checkpoint trained on it can continue
# (train.py --resume) with zero weights on the fields added since.
FIELDS_ADDED_IN_VERSION = {2: ("other_chose_color",), 3: ("pending_draw", "house_phase", "house_rules"), 4: ("history",)}


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
        ("other_chose_color", others * 4),  # per other seat: one-hot, the colour it last moved play into this round
        # Version 3: the house rules (docs/rules.md §15.9).
        ("pending_draw", 1),  # cards the next player must draw for Draw Two / Wild Draw Four cards played
        ("house_phase", 2),  # one-hot: phase "stack", phase "jump" (the "phase" one-hot is zeros then)
        ("house_rules", 8),  # the rules in play: classic deck, stacking Draw Two on Draw Two, Wild Draw Four
        #                      on Wild Draw Four, Wild Draw Four on Draw Two, jump_in, seven_zero,
        #                      draw_until_playable, forced_play
        # Version 4: the round's last public events, oldest first (the newest in the last slot), HISTORY_ENTRY
        # values an event (kind, actor, card, value: kernel.HIST_* and HISTORY_LENGTH say what each means).
        ("history", HISTORY_LENGTH * HISTORY_ENTRY),
    ]
    layout, start = {}, 0
    for name, size in fields:
        layout[name] = slice(start, start + size)
        start += size
    return layout


def observation_size(num_players: int) -> int:
    return max(s.stop for s in observation_layout(num_players).values())


def observation_size_in_version(num_players: int, version: int) -> int:
    """The observation's size for num_players in layout ``version`` (1 .. OBSERVATION_VERSION)."""
    if not 1 <= version <= OBSERVATION_VERSION:
        raise ValueError(f"observation layout versions are 1 to {OBSERVATION_VERSION}, got {version}")
    layout = observation_layout(num_players)
    added_later = [name for later, names in FIELDS_ADDED_IN_VERSION.items() if later > version for name in names]
    return observation_size(num_players) - sum(layout[name].stop - layout[name].start for name in added_later)


# Cards dealt to each seat at the start of a round (docs/rules.md, section 3.2): the unit
# of observation_scale's hand sizes.
STARTING_HAND = 7


def observation_scale(num_players: int) -> np.ndarray:
    """A fixed float32 factor per observation entry that brings each into about [0, 1].

    ``observation * observation_scale(n)`` is what the vector envs give with
    ``scale_observations=True``, and what an exported agent applies to the raw
    int8 view, so one vector serves both. It depends only on the layout:
    card-type counts are divided by that type's copies in the deck, the draw
    pile by the deck size, percents by 100, hand sizes by a starting hand (7,
    so a fresh hand is 1.0 and a long draw streak goes a little above), flags
    stay as they are.
    """
    others = num_players - 1
    per_card = 1.0 / CARD_COPIES.astype(np.float32)
    scales = {
        "hand": per_card,
        "discard_counts": per_card,
        "revealed_hands": np.tile(per_card, others),
        "draw_pile_size": 1.0 / DECK_SIZE,
        "my_score_pct": 1.0 / 100,
        "other_scores_pct": 1.0 / 100,
        "other_hand_sizes": 1.0 / STARTING_HAND,
        "pending_draw": 1.0 / 8,  # two Wild Draw Fours
        "history": np.tile(history_entry_scale(num_players), HISTORY_LENGTH),
    }
    layout = observation_layout(num_players)
    unscaled = set(layout) - set(scales) - set(_FLAG_FIELDS)
    if unscaled:  # a new field must say how it is scaled, not inherit 1.0 by accident
        raise AssertionError(f"observation_scale has no rule for fields {sorted(unscaled)}")
    scale = np.ones(observation_size(num_players), np.float32)
    for name, scale_of_field in scales.items():
        scale[layout[name]] = scale_of_field
    return scale


def history_entry_scale(num_players: int) -> np.ndarray:
    """observation_scale of one history event: kind by the number of kinds, actor by the player count, card by
    the card codes, value by 8 (a Wild Draw Four stack's draw; a colour's, a seat's and most counts' range)."""
    return np.array([1 / NUM_HISTORY_KINDS, 1 / num_players, 1 / NUM_CARD_TYPES, 1 / 8], np.float32)


# The history's event kinds by code (kernel.HIST_*): HISTORY_KINDS[code - 1].
HISTORY_KINDS = ("play", "draw", "keep", "color", "forced_draw", "sorting_hat", "uno", "catch", "pass", "challenge",
                 "accept", "stack", "jump", "swap", "rotate", "reshuffle")
assert len(HISTORY_KINDS) == NUM_HISTORY_KINDS


def history_events(observation, num_players: int) -> list[tuple[str, int | None, str | None, int]]:
    """The round's history in one observation row, oldest first: (kind, actor, card, value) per event.

    kind: a name of ``HISTORY_KINDS``; actor: the seat counted to the viewer's left (0 the viewer itself, 1 the
    next seat to its left, ...), None for a table event (a reshuffle, a Zero's rotation); card: its label where the
    card is public, else None; value: as ``kernel.HIST_*`` says, a seat counted to the left for ``catch``, ``pass``
    and ``swap``.
    """
    row = np.asarray(observation)[observation_layout(num_players)["history"]].astype(np.int64)
    events = []
    for kind, actor, card, value in row.reshape(HISTORY_LENGTH, HISTORY_ENTRY):
        if kind == 0:
            continue
        events.append((HISTORY_KINDS[kind - 1], None if actor == 0 else int(actor - 1),
                       None if card == 0 else CARD_LABELS[card - 1], int(value - 1 if kind in SEAT_VALUED_KINDS else value)))
    return events


def hidden_hands(hands: np.ndarray, seats: np.ndarray, num_players: int) -> np.ndarray:
    """(games, (num_players - 1) * NUM_CARD_TYPES) int8: the other seats' hands, counted in turn order to the left
    of each game's ``seats`` as the ``other_*`` observation fields are.

    Hidden information: not part of any observation. Training may give it to a critic
    (``HPUnoVecEnv(critic_sees_hands=True)``; a critic only judges positions, the actor that plays never reads it).
    ``hands`` is the engine state's (games, players, card types) array.
    """
    games = np.arange(len(seats))[:, None]
    others = (np.asarray(seats)[:, None] + np.arange(1, num_players)) % num_players
    return hands[games, others].reshape(len(seats), -1).astype(OBS_DTYPE)


def hidden_hands_scale(num_players: int) -> np.ndarray:
    """``observation_scale`` for ``hidden_hands``: each count over that card type's copies, as for ``hand``."""
    return np.tile(1.0 / CARD_COPIES.astype(np.float32), num_players - 1)


# Observation fields that are 0/1 flags or one-hots: observation_scale leaves them as they are.
_FLAG_FIELDS = (
    "top_card", "current_color", "phase", "drawn_card", "direction_left", "my_uno_called", "other_uno_called",
    "other_lacks_color", "other_chose_color", "wd4_prev_color", "catch_offender", "revealed_seen",
    "house_phase", "house_rules",
)


def state_size(num_players: int) -> int:
    return num_players * NUM_CARD_TYPES + NUM_CARD_TYPES + 4 + NUM_PHASES + num_players + 1 + 1 + NUM_CARD_TYPES + num_players + num_players


def full_state(s, num_players: int, target_score: int) -> np.ndarray:
    """Full-information vector per game (every hand), for centralised critics.

    Layout: all hands (seat order, 55 each), top card one-hot, current colour
    one-hot, phase one-hot, player to act one-hot, direction_left, draw pile
    size, discard counts, scores percent of target, UNO calls.
    """
    G = s.hands.shape[0]
    top = s.discard[np.arange(G), np.maximum(s.discard_count - 1, 0)]
    parts = [
        s.hands.reshape(G, -1),
        np.eye(NUM_CARD_TYPES, dtype=np.int8)[top],
        (s.current_color[:, None] == np.arange(4)).astype(np.int8),
        (s.phase[:, None] == np.arange(NUM_PHASES)).astype(np.int8),  # the house rules' phases: zeros
        (s.current_player[:, None] == np.arange(num_players)).astype(np.int8),
        (s.direction > 0).astype(np.int8)[:, None],
        np.minimum(s.draw_count, 127).astype(np.int8)[:, None],
        s.discard_counts,
        np.minimum(100, s.scores * 100 // target_score).astype(np.int8),
        s.uno_called.astype(np.int8),
    ]
    return np.concatenate(parts, axis=1).astype(OBS_DTYPE)
