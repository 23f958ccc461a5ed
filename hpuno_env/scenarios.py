"""Stacked decks for scenario tests and demonstrations.

``stacked_deck`` builds a full deck (112 card labels, or 108 for the classic deck; top first: the form
``VectorEngine.reset(options={"deck": deck, "dealer": dealer})`` and the AEC
environment's ``reset`` take) that deals exactly the cards you ask for.

The deal follows docs/rules.md §3.2 ("The deal"): seven rounds of one card each,
starting with the dealer's left (seat ``dealer + 1``) and going up in seat
order; the next card is the starting card; the draw pile is what follows, top
first. So ``stacked_deck`` places

* seat ``k``'s ``r``-th card at position ``r * n + (k - dealer - 1) % n``,
* the starting card at position ``7 * n``,
* ``draw_pile`` right after it, then the rest of the deck.

Cards you leave out (short hands, no starter, the rest of the draw pile) are
filled in deterministically from what is left of the deck, choosing cards
that interfere as little as possible: number cards before action cards before
wilds, of the colours and ranks the request mentions least. A missing starter
becomes such a number card, so the round starts plainly. Fillers are still
real cards: give a seat its full seven cards when the test depends on it.

Example::

    >>> import numpy as np
    >>> from hpuno_env import ACTION_LABELS, VectorEngine
    >>> from hpuno_env.scenarios import stacked_deck
    >>> deck = stacked_deck(
    ...     3, dealer=2,
    ...     hands=[["red:7", "blue:3"], ["red:draw2"]],   # seats 0 and 1; seat 2 all fillers
    ...     starter="red:5",
    ...     draw_pile=["sorting_hat"],                      # the first card anyone draws
    ... )
    >>> eng = VectorEngine(num_games=1, num_players=3, seed=0, auto_reset=False)
    >>> eng.reset(options={"deck": deck, "dealer": 2})
    >>> state = eng.game_state(0)
    >>> state["current"], state["top"], state["draw_pile"][0]
    ('player_0', 'red:5', 'sorting_hat')
    >>> {"red:7", "blue:3"} <= set(state["hands"]["player_0"])
    True
    >>> _ = eng.step(np.array([ACTION_LABELS.index("play:red:7")]))
    >>> eng.game_state(0)["current"]
    'player_1'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from ._checks import check_index, is_int
from .cards import CARD_COLOR, CARD_INDEX, CARD_LABELS, CARD_RANK, DECK_COPIES, DECK_SIZES, DECKS
from .options import check_num_players

__all__ = ["stacked_deck"]

HAND_SIZE = 7


def _labels(what: str, cards) -> list[str]:
    if cards is None:
        return []
    if isinstance(cards, str):
        raise ValueError(f"{what} must be a list of card labels, got the string {cards!r}")
    cards = list(cards)
    unknown = [c for c in cards if c not in CARD_INDEX]
    if unknown:
        raise ValueError(f"{what}: unknown card label(s) {unknown[:5]} (labels are e.g. 'red:7', 'blue:draw2', 'wild')")
    return cards


def _hands_by_seat(num_players: int, hands) -> list[list[str]]:
    by_seat: list[list[str]] = [[] for _ in range(num_players)]
    if hands is None:
        return by_seat
    if isinstance(hands, Mapping):
        items = list(hands.items())
    elif isinstance(hands, Sequence) and not isinstance(hands, str):
        if len(hands) > num_players:
            raise ValueError(f"hands: {len(hands)} hands given for {num_players} players")
        items = list(enumerate(hands))
    else:
        raise ValueError(f"hands must be a list (one hand per seat) or a dict seat -> hand, got {type(hands).__name__}")
    for seat, hand in items:
        if not is_int(seat) or not 0 <= seat < num_players:
            raise ValueError(f"hands: seat {seat!r} is not a seat in [0, {num_players})")
        cards = _labels(f"hands[{seat}]", hand)
        if len(cards) > HAND_SIZE:
            raise ValueError(f"hands[{seat}] has {len(cards)} cards; a dealt hand has at most {HAND_SIZE}")
        by_seat[seat] = cards
    return by_seat


def stacked_deck(
    num_players: int, dealer: int, hands=None, starter: str | None = None, draw_pile=None, deck: str = "harry_potter",
) -> list[str]:
    """A full deck (112 labels, top first; 108 for the classic deck) that deals the requested cards.

    Args:
        num_players: seats, 2..10.
        dealer: the dealer's seat; dealing starts with seat ``dealer + 1``.
        hands: seat ``k``'s dealt cards as ``hands[k]`` (a list of up to 7
            labels), either a list of hands by seat (shorter than
            ``num_players`` is fine, ``None`` entries mean "any") or a dict
            ``{seat: hand}``. Missing cards are filled in.
        starter: the label of the starting card (the first discard); ``None``
            picks a non-interfering number card.
        draw_pile: the first cards of the draw pile after the starter, top first.
        deck: the rules option ``deck``: ``"harry_potter"`` (112 cards) or ``"classic"``
            (108 cards, no Sorting Hat; docs/rules.md §15.1).

    Returns:
        112 (or 108) card labels, top of the deck first: every card of the deck exactly once.

    Raises:
        ValueError: a bad label, a hand of more than 7 cards, or more copies of
            a card requested than the deck holds (``cards.CARD_COPIES``).
    """
    num_players = check_num_players(num_players)
    if deck not in DECKS:
        raise ValueError(f"deck must be one of {DECKS}, got {deck!r}")
    copies, deck_size = DECK_COPIES[deck], DECK_SIZES[deck]
    dealer = check_index(dealer, "dealer", num_players, "a seat")
    by_seat = _hands_by_seat(num_players, hands)
    if starter is not None:
        _labels("starter", [starter])
    pile = _labels("draw_pile", draw_pile)
    requested = _requested_cards(by_seat, starter, pile, copies)
    dealt = HAND_SIZE * num_players
    if dealt + 1 + len(pile) > deck_size:
        raise ValueError(f"draw_pile: {len(pile)} cards do not fit after dealing {dealt} cards and the starter")
    spare = _spare_cards(requested, copies)

    # Fill hands round by round, so fillers spread over seats evenly.
    full_hands = [list(hand) for hand in by_seat]
    for _ in range(HAND_SIZE):
        for seat in range(num_players):
            if len(full_hands[seat]) < HAND_SIZE:
                full_hands[seat].append(spare.pop())
    if starter is None:
        starter = spare.pop()

    cards: list[str] = []
    for r in range(HAND_SIZE):
        for j in range(num_players):
            cards.append(full_hands[(dealer + 1 + j) % num_players][r])
    cards.append(starter)
    cards.extend(pile)
    cards.extend(reversed(spare))
    assert len(cards) == deck_size
    return cards


def _requested_cards(by_seat: list[list[str]], starter: str | None, pile: list[str], copies: np.ndarray) -> Counter:
    """How many of each card the scenario asks for, or ValueError if that is more than the deck holds."""
    requested = Counter(card for hand in by_seat for card in hand)
    requested.update(pile)
    if starter is not None:
        requested[starter] += 1
    too_many = [
        f"{label} x{count} (the deck holds {int(copies[CARD_INDEX[label]])})"
        for label, count in requested.items()
        if count > copies[CARD_INDEX[label]]
    ]
    if too_many:
        raise ValueError("stacked_deck: more copies requested than the deck holds: " + ", ".join(sorted(too_many)))
    return requested


def _spare_cards(requested: Counter, copies: np.ndarray) -> list[str]:
    """The cards not requested, the least interfering last (``pop()`` takes it first): number cards,
    then actions, then wilds; colours mentioned least first; ranks not mentioned first."""
    color_mentions = Counter(int(CARD_COLOR[CARD_INDEX[c]]) for c in requested.elements())
    rank_mentions = Counter(int(CARD_RANK[CARD_INDEX[c]]) for c in requested.elements())

    def order(code: int):
        color, rank = int(CARD_COLOR[code]), int(CARD_RANK[code])
        kind = 2 if color < 0 else (0 if rank <= 9 else 1)
        return (kind, color_mentions[color] if color >= 0 else 0, rank_mentions[rank] > 0, color, -rank, code)

    spare: list[str] = []
    for code in sorted(range(len(CARD_LABELS)), key=order):
        label = CARD_LABELS[code]
        spare.extend([label] * (int(copies[code]) - requested[label]))
    spare.reverse()
    return spare
