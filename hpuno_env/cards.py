"""The deck, the card and action labels, and their integer codes.

This module is the one home of every table that maps between the names
people read (``"red:7"``, ``"play:wild"``) and the small integers the kernel
works with. Card types and play actions share their codes: the action that
plays card type ``c`` is action ``c``.

Card type codes (55)::

    colour * 13 + rank     for red, yellow, green, blue (colour 0..3) and
                           rank 0..9, 10 = skip, 11 = reverse, 12 = draw2
    52 wild, 53 wild_draw4, 54 sorting_hat

Action codes (75)::

    0..54   play the card type of the same code
    55 draw, 56 keep, 57 uno, 58 challenge, 59 accept, 60 catch, 61 pass
    62..70  target:1 .. target:9  (seats to the left of the player)
    71..74  color:red, color:yellow, color:green, color:blue
"""

from __future__ import annotations

import numpy as np

COLORS = ("red", "yellow", "green", "blue")
RANKS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "skip", "reverse", "draw2")
NUM_COLORS = 4
RANKS_PER_COLOR = 13

SKIP_RANK, REVERSE_RANK, DRAW2_RANK = 10, 11, 12
WILD, WILD_DRAW4, SORTING_HAT = 52, 53, 54
NUM_CARD_TYPES = 55
DECK_SIZE = 112

CARD_LABELS: tuple[str, ...] = tuple(
    f"{color}:{rank}" for color in COLORS for rank in RANKS
) + ("wild", "wild_draw4", "sorting_hat")

# Action codes.
DRAW, KEEP, UNO, CHALLENGE, ACCEPT, CATCH, PASS = range(55, 62)
TARGET_BASE = 62  # target:k is TARGET_BASE + k - 1
MAX_TARGETS = 9
COLOR_BASE = 71  # color:<colour i> is COLOR_BASE + i
NUM_ACTIONS = 75

ACTION_LABELS: tuple[str, ...] = (
    tuple(f"play:{label}" for label in CARD_LABELS)
    + ("draw", "keep", "uno", "challenge", "accept", "catch", "pass")
    + tuple(f"target:{k}" for k in range(1, MAX_TARGETS + 1))
    + tuple(f"color:{color}" for color in COLORS)
)
assert len(ACTION_LABELS) == NUM_ACTIONS

CARD_INDEX = {label: code for code, label in enumerate(CARD_LABELS)}
ACTION_INDEX = {label: code for code, label in enumerate(ACTION_LABELS)}

# How many copies of each card type a deck holds, and what each is worth.
CARD_COPIES = np.array(
    [1 if rank == "0" else 2 for _ in COLORS for rank in RANKS] + [4, 4, 4], dtype=np.int8
)
CARD_POINTS = np.array(
    [int(rank) if rank.isdigit() else 20 for _ in COLORS for rank in RANKS] + [50, 50, 50],
    dtype=np.int16,
)
# The colour of each card type, -1 for the wilds.
CARD_COLOR = np.array([c for c in range(NUM_COLORS) for _ in RANKS] + [-1, -1, -1], dtype=np.int8)
# The rank of each coloured card type (0..12), -1 for the wilds.
CARD_RANK = np.array([r for _ in COLORS for r in range(RANKS_PER_COLOR)] + [-1, -1, -1], dtype=np.int8)
# A card's value in the draw for the first dealer: its number, symbols count as zero.
CARD_DEALER_VALUE = np.array(
    [int(rank) if rank.isdigit() else 0 for _ in COLORS for rank in RANKS] + [0, 0, 0], dtype=np.int8
)
assert int(CARD_COPIES.sum()) == DECK_SIZE

# The ordered full deck: every copy of every card type, in card-type order.
FULL_DECK = np.repeat(np.arange(NUM_CARD_TYPES, dtype=np.int8), CARD_COPIES)

# The decks of the rules option ``deck`` (docs/rules.md §15.1): the classic deck is the
# Harry Potter deck without its Sorting Hats, which come last in FULL_DECK, so its
# ordered cards are the first CLASSIC_DECK_SIZE of FULL_DECK.
DECKS = ("harry_potter", "classic")
CLASSIC_DECK_SIZE = 108
DECK_COPIES = {
    "harry_potter": CARD_COPIES,
    "classic": np.where(np.arange(NUM_CARD_TYPES) == SORTING_HAT, 0, CARD_COPIES).astype(np.int8),
}
DECK_SIZES = {deck: int(copies.sum()) for deck, copies in DECK_COPIES.items()}
assert DECK_SIZES["classic"] == CLASSIC_DECK_SIZE and (FULL_DECK[CLASSIC_DECK_SIZE:] == SORTING_HAT).all()


def deck_from_labels(labels, deck: str = "harry_potter") -> np.ndarray:
    """Turn a stacked deck (card labels, top first: 112 for the Harry Potter deck, 108 for
    the classic one) into card codes.

    Raises ``ValueError`` naming the problem unless the deck holds every card of
    that deck exactly once.
    """
    labels = list(labels)
    unknown = [label for label in labels if label not in CARD_INDEX]
    if unknown:
        raise ValueError(f"deck: unknown card labels {sorted(set(map(str, unknown)))[:5]}")
    codes = np.array([CARD_INDEX[label] for label in labels], dtype=np.int8)
    check_deck_codes(codes, deck)
    return codes


def check_deck_codes(codes: np.ndarray, deck: str = "harry_potter") -> None:
    """Raise ``ValueError`` unless ``codes`` is the full ``deck`` (a name of DECKS) in some order."""
    copies, size = DECK_COPIES[deck], DECK_SIZES[deck]
    if codes.shape != (size,):
        raise ValueError(f"deck: expected {size} cards, got {codes.shape[0] if codes.ndim else 0} (the {deck} deck)")
    if codes.min() < 0 or codes.max() >= NUM_CARD_TYPES:
        raise ValueError("deck: card codes must be in 0..54")
    counts = np.bincount(codes, minlength=NUM_CARD_TYPES)
    wrong = [c for c in range(NUM_CARD_TYPES) if counts[c] != copies[c]]
    if wrong:
        details = ", ".join(f"{CARD_LABELS[c]} x{counts[c]} (want {copies[c]})" for c in wrong[:5])
        raise ValueError(f"deck: wrong number of copies: {details} (the {deck} deck)")
