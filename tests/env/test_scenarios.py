"""Scenario tests: every rule of docs/rules.md, and every option, on stacked decks.

Each test deals a round from ``hpuno_env.scenarios.stacked_deck`` (so the
hands, the starting card and the top of the draw pile are known), plays a few
decisions through ``VectorEngine`` and checks the result against docs/rules.md:
``game_state``, ``legal_mask``, rewards and episode flags, events and
observations.

Conventions: ``game(n, ...)`` uses dealer ``n - 1`` unless told, so seat 0
(``player_0``) is dealt first and starts after a number card. Hands listed in
full (seven cards) are exact; shorter ones are topped up by ``stacked_deck``.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from hpuno_env import ACTION_LABELS, CARD_LABELS, VectorEngine, kernel
from hpuno_env.cards import CARD_COPIES, CARD_INDEX, CARD_POINTS
from hpuno_env.scenarios import stacked_deck

FULL_DECK = [label for i, label in enumerate(CARD_LABELS) for _ in range(int(CARD_COPIES[i]))]
FULL = Counter(FULL_DECK)
COLOR_ACTIONS = {"color:red", "color:yellow", "color:green", "color:blue"}


# ---------------------------------------------------------------- helpers


def P(seat: int) -> str:
    return f"player_{seat}"


def game(n, dealer=None, hands=None, starter=None, draw_pile=None, deck="harry_potter", **options) -> VectorEngine:
    """One game of n players dealt from a stacked deck (dealer n - 1 unless told)."""
    if dealer is None:
        dealer = n - 1
    eng = VectorEngine(num_games=1, num_players=n, seed=0, auto_reset=False, deck=deck, **options)
    eng.reset(options={"deck": stacked_deck(n, dealer, hands, starter, draw_pile, deck=deck), "dealer": dealer})
    return eng


def legal(eng) -> set[str]:
    return {ACTION_LABELS[i] for i in np.flatnonzero(eng.legal_mask()[0])}


def act(eng, label):
    """Take one legal action by label; returns (rewards of game 0, terminated, truncated)."""
    assert label in legal(eng), f"{label!r} is not legal here; legal: {sorted(legal(eng))}"
    rewards, terminated, truncated = eng.step(np.array([ACTION_LABELS.index(label)]))
    return rewards[0], bool(terminated[0]), bool(truncated[0])


def acts(eng, *labels):
    out = None
    for label in labels:
        out = act(eng, label)
    return out


def state(eng) -> dict:
    return eng.game_state(0)


def hand(eng, seat) -> list[str]:
    return state(eng)["hands"][P(seat)]


def sizes(eng) -> list[int]:
    s = state(eng)
    return [len(s["hands"][P(k)]) for k in range(eng.num_players)]


def ordered(cards) -> list[str]:
    return sorted(cards, key=CARD_LABELS.index)


def events(eng, kind) -> list[tuple]:
    return [e[1:] for e in eng.events(0) if e[0] == kind]


def assert_conserved(s: dict) -> None:
    """Hands, draw pile and discard pile hold the whole deck, each card once."""
    cards = Counter(s["draw_pile"]) + Counter(s["discard"])
    for h in s["hands"].values():
        cards += Counter(h)
    assert cards == FULL


def points(cards) -> int:
    return sum(int(CARD_POINTS[CARD_INDEX[c]]) for c in cards)


def hand_counts(cards) -> np.ndarray:
    counts = np.zeros(len(CARD_LABELS), np.int64)
    for c in cards:
        counts[CARD_INDEX[c]] += 1
    return counts


def deal_expected(deck, n, dealer):
    """docs/rules.md §3.2, independently of stacked_deck: card i goes to seat dealer+1+i."""
    hands = [[] for _ in range(n)]
    for i in range(7 * n):
        hands[(dealer + 1 + i) % n].append(deck[i])
    return [ordered(h) for h in hands]


def random_deck(seed, number_at=None):
    deck = list(FULL_DECK)
    random.Random(seed).shuffle(deck)
    if number_at is not None and not deck[number_at].split(":")[-1].isdigit():
        j = next(i for i in range(number_at + 1, len(deck)) if deck[i].split(":")[-1].isdigit())
        deck[number_at], deck[j] = deck[j], deck[number_at]
    return deck


# ================================================================ stacked_deck itself


@pytest.mark.parametrize("n,dealer", [(2, 0), (2, 1), (3, 2), (4, 1), (7, 3), (10, 9), (10, 0)])
def test_stacked_deck_is_a_permutation_and_deals_as_requested(n, dealer):
    hands = {0: ["red:0", "wild", "blue:draw2"], (dealer + 1) % n: ["green:7"] * 2, dealer: ["sorting_hat"] * 3 + ["yellow:skip"]}
    deck = stacked_deck(n, dealer, hands, starter="blue:4", draw_pile=["wild_draw4", "red:9", "red:9"])
    assert len(deck) == 112 and Counter(deck) == FULL
    eng = VectorEngine(num_games=1, num_players=n, seed=0, auto_reset=False)
    eng.reset(options={"deck": deck, "dealer": dealer})
    s = state(eng)
    for seat, cards in hands.items():
        assert not Counter(cards) - Counter(s["hands"][P(seat)]), (seat, cards, s["hands"][P(seat)])
    assert all(len(h) == 7 for h in s["hands"].values())
    assert s["top"] == "blue:4" and s["discard"] == ["blue:4"]
    assert s["draw_pile"][:3] == ["wild_draw4", "red:9", "red:9"]
    assert s["dealer"] == P(dealer) and s["current"] == P((dealer + 1) % n)
    assert_conserved(s)
    assert eng.round_deck(0) == deck


def test_stacked_deck_full_hands_are_exact_and_positions_follow_the_deal():
    hands = [
        ["red:1", "red:2", "red:3", "red:4", "red:5", "red:6", "red:7"],
        ["blue:1", "blue:2", "blue:3", "blue:4", "blue:5", "blue:6", "blue:7"],
        ["green:skip", "green:reverse", "green:draw2", "wild", "wild_draw4", "sorting_hat", "yellow:0"],
    ]
    deck = stacked_deck(3, 1, hands, starter="green:9", draw_pile=["yellow:9"])
    # dealer 1: seat 2 gets cards 0, 3, 6, ...; seat 0 cards 1, 4, ...; seat 1 cards 2, 5, ...
    assert deck[0::3][:7] == hands[2] and deck[1::3][:7] == hands[0] and deck[2::3][:7] == hands[1]
    assert deck[21] == "green:9" and deck[22] == "yellow:9"
    eng = VectorEngine(num_games=1, num_players=3, seed=0, auto_reset=False)
    eng.reset(options={"deck": deck, "dealer": 1})
    s = state(eng)
    for seat in range(3):
        assert s["hands"][P(seat)] == ordered(hands[seat])


def test_stacked_deck_is_deterministic_and_fillers_are_plain_numbers():
    a = stacked_deck(4, 2, [["red:5"]], starter="red:3")
    b = stacked_deck(4, 2, [["red:5"]], starter="red:3")
    assert a == b
    dealt = a[:28]
    fillers = Counter(dealt) - Counter(["red:5"])
    assert all(label.split(":")[-1].isdigit() for label in fillers.elements())
    assert not any(label.startswith("red:") for label in fillers.elements())  # red is the requested colour
    # no starter requested: a number card, never an action card or a wild
    c = stacked_deck(4, 2)
    assert c[28].split(":")[-1].isdigit()
    assert Counter(c) == FULL


def test_stacked_deck_accepts_none_and_dict_hands():
    d1 = stacked_deck(3, 0, [None, ["blue:skip"], None], starter="red:1")
    d2 = stacked_deck(3, 0, {1: ["blue:skip"]}, starter="red:1")
    assert d1 == d2 and d1[0] == "blue:skip"  # dealer 0: seat 1 gets the first card


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(hands=[["red:0"], ["red:0"]]), "red:0"),  # one copy only
        (dict(hands=[["red:5", "red:5"]], starter="red:5"), "red:5"),
        (dict(hands=[["wild"] * 3], draw_pile=["wild", "wild"]), "wild"),
        (dict(hands=[["blue:1"] * 2 + ["red:2"] * 2 + ["red:3"] * 2 + ["red:4"] * 2]), "at most 7"),
        (dict(hands=[["purple:3"]]), "purple:3"),
        (dict(starter="red:10"), "red:10"),
        (dict(draw_pile=["Wild"]), "Wild"),
        (dict(hands=[[], [], []]), "3 hands"),
        (dict(hands={5: ["red:1"]}), "seat 5"),
        (dict(hands=["red:1"]), "string"),
    ],
)
def test_stacked_deck_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        stacked_deck(2, 0, **kwargs)


def test_stacked_deck_bad_table():
    with pytest.raises(ValueError, match="num_players"):
        stacked_deck(11, 0)
    with pytest.raises(ValueError, match="dealer"):
        stacked_deck(3, 3)


# ================================================================ setup of a round


@pytest.mark.parametrize("n,dealer", [(2, 0), (2, 1), (3, 2), (4, 1), (6, 5), (10, 4)])
def test_deal_order_one_card_at_a_time_from_dealers_left(n, dealer):
    deck = random_deck(100 * n + dealer, number_at=7 * n)
    eng = VectorEngine(num_games=1, num_players=n, seed=0, auto_reset=False)
    eng.reset(options={"deck": deck, "dealer": dealer})
    s = state(eng)
    expected = deal_expected(deck, n, dealer)
    assert [s["hands"][P(k)] for k in range(n)] == expected
    assert s["discard"] == [deck[7 * n]] and s["top"] == deck[7 * n]
    assert s["draw_pile"] == deck[7 * n + 1 :]
    assert s["current"] == P((dealer + 1) % n) and s["phase"] == "play"
    assert s["dealer"] == P(dealer) and s["round"] == 1 and s["direction"] == 1


def test_number_start():
    eng = game(4, dealer=1, starter="blue:5")
    s = state(eng)
    assert s["current"] == P(2) and s["phase"] == "play"
    assert s["color"] == "blue" and s["top"] == "blue:5" and s["direction"] == 1
    assert sizes(eng) == [7, 7, 7, 7] and len(s["draw_pile"]) == 112 - 28 - 1
    assert s["scores"] == {P(k): 0 for k in range(4)}
    assert s["uno_called"] == {P(k): False for k in range(4)}


@pytest.mark.parametrize("n,dealer", [(4, 1), (3, 2), (2, 0)])
def test_draw_two_start(n, dealer):
    eng = game(n, dealer=dealer, starter="red:draw2", draw_pile=["green:1", "yellow:2", "blue:3"])
    s = state(eng)
    left = (dealer + 1) % n
    assert len(s["hands"][P(left)]) == 9
    assert not Counter(["green:1", "yellow:2"]) - Counter(s["hands"][P(left)])
    assert s["current"] == P((left + 1) % n) and s["phase"] == "play"
    assert s["draw_pile"][0] == "blue:3"
    assert s["top"] == "red:draw2" and s["color"] == "red"
    assert (left, 2, kernel.REASON_START) in events(eng, kernel.EV_PENALTY)
    assert (left, 0, 0) in events(eng, kernel.EV_SKIPPED)
    assert sum(sizes(eng)) == 7 * n + 2


@pytest.mark.parametrize("n,dealer", [(4, 1), (3, 2), (2, 0)])
def test_skip_start(n, dealer):
    eng = game(n, dealer=dealer, starter="green:skip")
    s = state(eng)
    assert s["current"] == P((dealer + 2) % n) and s["phase"] == "play" and s["direction"] == 1
    assert sizes(eng) == [7] * n
    assert events(eng, kernel.EV_SKIPPED) == [((dealer + 1) % n, 0, 0)]


def test_reverse_start_dealer_starts_and_play_goes_right():
    eng = game(4, dealer=1, hands={1: ["green:3"]}, starter="green:reverse")
    s = state(eng)
    assert s["current"] == P(1) and s["direction"] == -1 and s["phase"] == "play"
    act(eng, "play:green:3")
    assert state(eng)["current"] == P(0)


def test_reverse_start_two_players():
    eng = game(2, dealer=0, starter="yellow:reverse")
    s = state(eng)
    assert s["current"] == P(0) and s["direction"] == -1


@pytest.mark.parametrize("starter", ["wild", "sorting_hat"])
def test_wild_start_dealers_left_names_colour_then_plays(starter):
    eng = game(3, dealer=0, hands={1: ["green:3", "blue:4"]}, starter=starter)
    s = state(eng)
    pile_before = s["draw_pile"]
    assert s["current"] == P(1) and s["phase"] == "color" and s["color"] is None
    assert legal(eng) == COLOR_ACTIONS
    act(eng, "color:green")
    s = state(eng)
    assert s["current"] == P(1) and s["phase"] == "play" and s["color"] == "green"
    # a starting Sorting Hat sends no one drawing (and asks for no target)
    assert sizes(eng) == [7, 7, 7] and s["draw_pile"] == pile_before
    assert events(eng, kernel.EV_HAT) == [] and events(eng, kernel.EV_TARGET) == []
    assert "play:green:3" in legal(eng) and "play:blue:4" not in legal(eng)
    act(eng, "play:green:3")
    assert state(eng)["current"] == P(2)


@pytest.mark.parametrize("seed", range(5))
def test_wild_draw_four_start_goes_back_into_the_pile(seed):
    rest = ["blue:5", "green:1", "green:2", "yellow:3", "yellow:4"]
    deck = stacked_deck(3, 0, starter="wild_draw4", draw_pile=rest)
    eng = VectorEngine(num_games=1, num_players=3, seed=seed, auto_reset=False)
    eng.reset(options={"deck": deck, "dealer": 0})
    s = state(eng)
    assert s["top"] == "blue:5" and s["discard"] == ["blue:5"] and s["color"] == "blue"
    assert s["current"] == P(1) and s["phase"] == "play"
    assert len(s["draw_pile"]) == 112 - 21 - 1 and s["draw_pile"].count("wild_draw4") == 4
    assert_conserved(s)
    returns = events(eng, kernel.EV_WD4_RETURN)
    assert returns, "no EV_WD4_RETURN event"
    # the event counts from the top of the pile the Wild Draw Four went into, which
    # still held the card then turned as the starter
    where = returns[-1][0] - 1
    assert where >= 0 and s["draw_pile"][where] == "wild_draw4"
    assert s["draw_pile"][:where] + s["draw_pile"][where + 1 :] == deck[23:]


def test_two_wild_draw_fours_in_a_row_at_the_start():
    deck = stacked_deck(2, 1, starter="wild_draw4", draw_pile=["wild_draw4", "yellow:4", "green:8"])
    eng = VectorEngine(num_games=1, num_players=2, seed=3, auto_reset=False)
    eng.reset(options={"deck": deck, "dealer": 1})
    s = state(eng)
    assert s["top"] == "yellow:4" and s["color"] == "yellow" and s["current"] == P(0)
    assert s["draw_pile"].count("wild_draw4") == 4 and len(s["draw_pile"]) == 112 - 14 - 1
    assert_conserved(s)


def test_first_dealer_by_the_draw():
    dealers = []
    for seed in range(30):
        eng = VectorEngine(num_games=1, num_players=4, seed=seed, auto_reset=False)
        eng.reset()
        dealer = state(eng)["dealer"]
        assert dealer in {P(k) for k in range(4)}
        again = VectorEngine(num_games=1, num_players=4, seed=seed, auto_reset=False)
        again.reset()
        assert state(again)["dealer"] == dealer  # same seed, same dealer
        dealers.append(dealer)
    assert len(set(dealers)) > 1  # the draw does decide


def test_first_dealer_by_the_draw_leaves_a_stacked_deck_alone():
    deck = random_deck(7, number_at=21)
    for seed in range(6):
        eng = VectorEngine(num_games=1, num_players=3, seed=seed, auto_reset=False)
        eng.reset(options={"deck": deck})
        s = state(eng)
        dealer = int(s["dealer"].split("_")[1])
        assert [s["hands"][P(k)] for k in range(3)] == deal_expected(deck, 3, dealer)
        assert s["top"] == deck[21] and s["current"] == P((dealer + 1) % 3)


def test_reset_ignores_other_option_keys():
    eng = VectorEngine(num_games=1, num_players=2, seed=0, auto_reset=False)
    eng.reset(options={"deck": stacked_deck(2, 0, starter="red:4"), "dealer": 0, "render": True})
    assert state(eng)["top"] == "red:4"


# ================================================================ playing a card

MIXED = ["red:2", "blue:5", "blue:skip", "green:reverse", "yellow:draw2", "wild", "sorting_hat"]


def test_play_matches_colour_or_number_and_wilds_always():
    eng = game(2, hands=[MIXED], starter="red:5")
    assert legal(eng) == {"play:red:2", "play:blue:5", "play:wild", "play:sorting_hat", "draw"}


def test_play_by_colour_and_by_number_moves_the_card():
    eng = game(3, hands=[MIXED], starter="red:5")
    act(eng, "play:blue:5")
    s = state(eng)
    assert s["top"] == "blue:5" and s["color"] == "blue" and s["discard"] == ["red:5", "blue:5"]
    assert "blue:5" not in s["hands"][P(0)] and len(s["hands"][P(0)]) == 6
    assert s["current"] == P(1)
    assert events(eng, kernel.EV_PLAY) == [(0, CARD_INDEX["blue:5"], 0)]


@pytest.mark.parametrize("symbol", ["skip", "reverse", "draw2"])
def test_symbol_matches_symbol(symbol):
    third = ["blue:skip", "blue:reverse", "blue:draw2", "green:3", "yellow:4", "blue:6", "green:9"]
    eng = game(3, hands=[[f"red:{symbol}"], None, third], starter="red:1")
    act(eng, f"play:red:{symbol}")
    assert state(eng)["current"] == P(2)  # skip: 1 skipped; reverse: right of 0; draw2: 1 drew
    assert legal(eng) == {f"play:blue:{symbol}", "draw"}


def test_coloured_card_on_a_starting_wild_matches_by_colour_only():
    hand0 = ["green:3", "blue:3", "red:skip", "yellow:draw2", "blue:reverse", "red:1", "yellow:9"]
    eng = game(2, hands=[hand0], starter="wild")
    act(eng, "color:green")
    assert legal(eng) == {"play:green:3", "draw"}


def test_coloured_card_on_a_played_wild_matches_the_named_colour_only():
    hand1 = ["red:7", "green:5", "blue:5", "blue:1", "yellow:5", "red:5", "green:skip"]
    eng = game(2, hands=[["wild"], hand1], starter="red:5")
    acts(eng, "play:wild")
    s = state(eng)
    assert s["phase"] == "color" and s["color"] is None and s["current"] == P(0)
    assert legal(eng) == COLOR_ACTIONS
    act(eng, "color:blue")
    s = state(eng)
    assert s["current"] == P(1) and s["color"] == "blue" and s["top"] == "wild"
    assert events(eng, kernel.EV_COLOR) == [(0, 3, 0)]
    # the red 5 under the wild no longer counts: only blue cards
    assert legal(eng) == {"play:blue:5", "play:blue:1", "draw"}


def test_illegal_play_is_masked_and_raises_without_changing_anything():
    eng = game(2, hands=[MIXED], starter="red:5")
    before = state(eng)
    mask_before = eng.legal_mask()
    for label in ["play:blue:skip", "play:green:reverse", "play:red:9", "keep", "uno", "catch", "color:red", "target:1", "challenge"]:
        with pytest.raises(ValueError, match="illegal action"):
            eng.step(np.array([ACTION_LABELS.index(label)]))
        assert state(eng) == before
        assert (eng.legal_mask() == mask_before).all()
    with pytest.raises(ValueError):
        eng.step(np.array([75]))
    with pytest.raises(ValueError):
        eng.step(np.array([-1]))
    assert state(eng) == before


# ================================================================ drawing


def test_voluntary_draw_allowed_with_a_playable_card_by_default():
    eng = game(2, hands=[MIXED], starter="red:5", draw_pile=["green:1"])
    assert "draw" in legal(eng)
    act(eng, "draw")
    s = state(eng)
    assert "green:1" in s["hands"][P(0)] and s["current"] == P(1)
    assert events(eng, kernel.EV_DRAW) == [(0, CARD_INDEX["green:1"], 0)]


def test_voluntary_draw_false_masks_draw_while_a_card_is_playable():
    eng = game(2, hands=[MIXED], starter="red:5", voluntary_draw=False)
    assert "draw" not in legal(eng)
    assert legal(eng) == {"play:red:2", "play:blue:5", "play:wild", "play:sorting_hat"}


def test_voluntary_draw_false_allows_draw_with_nothing_playable():
    hand0 = ["blue:1", "blue:2", "green:3", "green:4", "yellow:6", "yellow:7", "blue:skip"]
    eng = game(2, hands=[hand0], starter="red:5", draw_pile=["red:8"], voluntary_draw=False)
    assert legal(eng) == {"draw"}
    act(eng, "draw")
    assert state(eng)["phase"] == "drawn" and legal(eng) == {"play:red:8", "keep"}


def test_drawn_playable_card_may_be_played_and_only_that_card():
    eng = game(3, hands=[["red:2", "red:3"]], starter="red:5", draw_pile=["red:7", "blue:1"])
    act(eng, "draw")
    s = state(eng)
    assert s["phase"] == "drawn" and s["current"] == P(0) and len(s["hands"][P(0)]) == 8
    assert legal(eng) == {"play:red:7", "keep"}  # not red:2 / red:3, though they match
    act(eng, "play:red:7")
    s = state(eng)
    assert s["top"] == "red:7" and s["current"] == P(1) and s["phase"] == "play"
    assert len(s["hands"][P(0)]) == 7 and "red:2" in s["hands"][P(0)]


def test_drawn_playable_card_may_be_kept():
    eng = game(3, hands=[["red:2"]], starter="red:5", draw_pile=["yellow:5"])
    act(eng, "draw")
    assert legal(eng) == {"play:yellow:5", "keep"}
    act(eng, "keep")
    s = state(eng)
    assert s["current"] == P(1) and s["phase"] == "play" and s["top"] == "red:5"
    assert "yellow:5" in s["hands"][P(0)] and len(s["hands"][P(0)]) == 8
    assert events(eng, kernel.EV_KEEP) == [(0, 0, 0)]


def test_drawn_unplayable_card_ends_the_turn():
    eng = game(3, hands=[["red:2"]], starter="red:5", draw_pile=["blue:9"])
    act(eng, "draw")
    s = state(eng)
    assert s["current"] == P(1) and s["phase"] == "play" and s["top"] == "red:5"
    assert "blue:9" in s["hands"][P(0)] and len(s["hands"][P(0)]) == 8


@pytest.mark.parametrize("wild", ["wild", "sorting_hat", "wild_draw4"])
def test_drawn_wild_is_playable(wild):
    eng = game(3, hands=[["red:2"]], starter="red:5", draw_pile=[wild])
    act(eng, "draw")
    assert state(eng)["phase"] == "drawn" and legal(eng) == {f"play:{wild}", "keep"}
    act(eng, f"play:{wild}")
    assert state(eng)["phase"] == "color" and state(eng)["current"] == P(0)


def test_drawn_wild_draw_four_unplayable_without_bluffing_when_holding_the_colour():
    eng = game(3, hands=[["red:2"]], starter="red:5", draw_pile=["wild_draw4"], wd4_bluffing=False)
    act(eng, "draw")
    s = state(eng)
    assert s["current"] == P(1) and s["phase"] == "play" and "wild_draw4" in s["hands"][P(0)]


# ================================================================ action cards


def test_skip_three_players():
    eng = game(3, hands=[["red:skip"]], starter="red:5")
    act(eng, "play:red:skip")
    s = state(eng)
    assert s["current"] == P(2) and sizes(eng) == [6, 7, 7]
    assert events(eng, kernel.EV_SKIPPED) == [(1, 0, 0)]


def test_skip_two_players_same_player_again():
    eng = game(2, hands=[["red:skip"]], starter="red:5")
    act(eng, "play:red:skip")
    assert state(eng)["current"] == P(0) and state(eng)["phase"] == "play"


@pytest.mark.parametrize("n", [3, 4, 5])
def test_reverse_flips_direction(n):
    eng = game(n, hands={0: ["red:reverse", "red:6"], n - 1: ["red:3"]}, starter="red:5")
    act(eng, "play:red:reverse")
    s = state(eng)
    assert s["direction"] == -1 and s["current"] == P(n - 1)
    assert events(eng, kernel.EV_DIRECTION) == [(-1, 0, 0)]
    act(eng, "play:red:3")
    assert state(eng)["current"] == P(n - 2)


def test_reverse_on_reverse_flips_back():
    eng = game(3, hands=[["red:reverse"], ["blue:2"], ["blue:reverse"]], starter="red:5")
    acts(eng, "play:red:reverse", "play:blue:reverse")
    s = state(eng)
    assert s["direction"] == 1 and s["current"] == P(0)


def test_two_player_reverse_acts_as_skip():
    eng = game(2, hands=[["red:reverse"]], starter="red:5")
    act(eng, "play:red:reverse")
    s = state(eng)
    assert s["current"] == P(0) and s["direction"] == -1
    assert events(eng, kernel.EV_SKIPPED) == [(1, 0, 0)]


def test_two_player_reverse_without_skip_option():
    eng = game(2, hands=[["red:reverse"]], starter="red:5", two_player_reverse_skips=False)
    act(eng, "play:red:reverse")
    s = state(eng)
    assert s["current"] == P(1) and s["direction"] == -1
    assert events(eng, kernel.EV_SKIPPED) == []


def test_two_player_reverse_option_does_not_touch_three_players():
    eng = game(3, hands=[["red:reverse"]], starter="red:5", two_player_reverse_skips=False)
    act(eng, "play:red:reverse")
    assert state(eng)["current"] == P(2)


@pytest.mark.parametrize("n", [2, 3, 4])
def test_draw_two(n):
    eng = game(n, hands=[["red:draw2"]], starter="red:5", draw_pile=["green:1", "wild", "yellow:9"])
    act(eng, "play:red:draw2")
    s = state(eng)
    assert not Counter(["green:1", "wild"]) - Counter(s["hands"][P(1)])
    assert len(s["hands"][P(1)]) == 9 and s["draw_pile"][0] == "yellow:9"
    assert s["current"] == P(2 % n)
    assert (1, 2, kernel.REASON_DRAW2) in events(eng, kernel.EV_PENALTY)


# ================================================================ wilds and the Wild Draw Four

GUILTY = ["wild_draw4", "red:2", "blue:3", "green:4", "yellow:6", "blue:7", "green:8"]
INNOCENT = ["wild_draw4", "blue:5", "wild", "green:4", "yellow:6", "blue:7", "sorting_hat"]  # no red
WD4_PILE = ["blue:1", "blue:2", "green:1", "green:2", "yellow:1", "yellow:2", "blue:4", "yellow:4"]


def wd4_game(hand0, **options):
    """3 players, red:5 starts, seat 0 plays a Wild Draw Four and names green."""
    eng = game(3, hands=[hand0], starter="red:5", draw_pile=WD4_PILE, **options)
    act(eng, "play:wild_draw4")
    s = state(eng)
    assert s["phase"] == "color" and s["current"] == P(0) and s["color"] is None
    act(eng, "color:green")
    return eng


def test_wild_draw_four_bluff_is_a_legal_action_by_default():
    eng = game(3, hands=[GUILTY], starter="red:5")
    assert "play:wild_draw4" in legal(eng)


def test_wild_draw_four_masked_without_bluffing_when_holding_the_colour():
    eng = game(3, hands=[GUILTY], starter="red:5", wd4_bluffing=False)
    assert "play:wild_draw4" not in legal(eng)
    assert "play:red:2" in legal(eng)


def test_wild_draw_four_without_bluffing_no_challenge_offered():
    # holds blue:5 (matches the number) and wilds: neither forbids the Wild Draw Four
    eng = game(3, hands=[INNOCENT], starter="red:5", draw_pile=WD4_PILE, wd4_bluffing=False)
    assert "play:wild_draw4" in legal(eng)
    acts(eng, "play:wild_draw4", "color:green")
    s = state(eng)
    assert s["phase"] == "play" and s["current"] == P(2) and s["color"] == "green"
    assert len(s["hands"][P(1)]) == 11 and not Counter(WD4_PILE[:4]) - Counter(s["hands"][P(1)])
    assert events(eng, kernel.EV_SKIPPED) == [(1, 0, 0)]


def test_wild_draw_four_offers_challenge_to_the_next_player_only():
    eng = wd4_game(GUILTY)
    s = state(eng)
    assert s["phase"] == "challenge" and s["current"] == P(1) and s["color"] == "green"
    assert legal(eng) == {"challenge", "accept"}


def test_wild_draw_four_accept():
    eng = wd4_game(GUILTY)
    act(eng, "accept")
    s = state(eng)
    assert len(s["hands"][P(1)]) == 11 and not Counter(WD4_PILE[:4]) - Counter(s["hands"][P(1)])
    assert s["current"] == P(2) and s["phase"] == "play"
    assert s["color"] == "green" and s["top"] == "wild_draw4"
    assert len(s["hands"][P(0)]) == 6
    assert events(eng, kernel.EV_ACCEPT) == [(1, 0, 0)]


def test_wild_draw_four_challenge_guilty():
    eng = wd4_game(GUILTY)
    act(eng, "challenge")
    s = state(eng)
    assert len(s["hands"][P(0)]) == 10 and not Counter(WD4_PILE[:4]) - Counter(s["hands"][P(0)])
    assert len(s["hands"][P(1)]) == 7
    assert s["current"] == P(1) and s["phase"] == "play"  # the challenger takes a normal turn
    assert s["color"] == "green" and s["top"] == "wild_draw4"
    assert events(eng, kernel.EV_CHALLENGE) == [(1, 0, 1)]
    assert (0, 4, kernel.REASON_GUILTY) in events(eng, kernel.EV_PENALTY)


def test_wild_draw_four_challenge_innocent():
    eng = wd4_game(INNOCENT)
    act(eng, "challenge")
    s = state(eng)
    assert len(s["hands"][P(1)]) == 13 and not Counter(WD4_PILE[:6]) - Counter(s["hands"][P(1)])
    assert len(s["hands"][P(0)]) == 6
    assert s["current"] == P(2) and s["phase"] == "play"
    assert s["color"] == "green" and s["top"] == "wild_draw4"
    assert events(eng, kernel.EV_CHALLENGE) == [(1, 0, 0)]
    assert (1, 6, kernel.REASON_INNOCENT) in events(eng, kernel.EV_PENALTY)


@pytest.mark.parametrize("held,guilty", [("blue:3", True), ("red:3", False)])
def test_wild_draw_four_guilt_is_the_colour_current_before_it(held, guilty):
    # a starting wild named blue: blue is the colour that counts, not the colour of any card
    hand0 = ["wild_draw4", held, "green:3", "yellow:4", "green:5", "yellow:6", "red:1"]
    eng = game(3, hands=[hand0], starter="wild", draw_pile=WD4_PILE)
    acts(eng, "color:blue", "play:wild_draw4", "color:red", "challenge")
    s = state(eng)
    if guilty:
        assert len(s["hands"][P(0)]) == 10 and s["current"] == P(1)
    else:
        assert len(s["hands"][P(1)]) == 13 and s["current"] == P(2)
    assert s["color"] == "red"


def revealed(eng, owner) -> tuple[int, np.ndarray]:
    """(seen flag, card counts) of owner's revealed hand in the acting player's observation."""
    obs = eng.observe()[0]
    layout = eng.observation_layout
    n = eng.num_players
    viewer = int(eng.current_player[0])
    k = (owner - viewer - 1) % n
    seen = obs[layout["revealed_seen"]]
    hands = obs[layout["revealed_hands"]].reshape(n - 1, len(CARD_LABELS))
    return int(seen[k]), hands[k].astype(np.int64)


def test_challenge_reveals_the_hand_to_the_challenger_guilty():
    eng = wd4_game(GUILTY)
    assert revealed(eng, 0)[0] == 0
    act(eng, "challenge")
    assert state(eng)["current"] == P(1)
    seen, counts = revealed(eng, 0)
    assert seen == 1
    assert (counts == hand_counts(GUILTY[1:])).all()  # as shown: before the 4 penalty cards
    obs = eng.observe()[0]
    assert obs[eng.observation_layout["revealed_seen"]].sum() == 1
    # it stays for the round: the challenger's next turn still shows it, and nobody else sees it
    act(eng, "draw")  # yellow:1 on green: not playable, turn over
    assert state(eng)["current"] == P(2) and revealed(eng, 0)[0] == 0
    act(eng, "draw")  # yellow:2
    assert state(eng)["current"] == P(0)
    act(eng, "draw")
    assert state(eng)["current"] == P(1)
    seen, counts = revealed(eng, 0)
    assert seen == 1 and (counts == hand_counts(GUILTY[1:])).all()


def test_challenge_reveals_the_hand_to_the_challenger_innocent():
    eng = wd4_game(INNOCENT)
    act(eng, "challenge")
    assert state(eng)["current"] == P(2)
    assert eng.observe()[0][eng.observation_layout["revealed_seen"]].sum() == 0  # not shown to seat 2
    acts(eng, "draw", "draw")  # blue:4, yellow:4: not green
    assert state(eng)["current"] == P(1)
    seen, counts = revealed(eng, 0)
    assert seen == 1 and (counts == hand_counts(INNOCENT[1:])).all()


# ================================================================ what the others showed of their hands


def others_view(eng, field: str, viewer: int) -> list[list[int]]:
    """viewer's observation of field (4 colour flags per other seat), one row per other seat in turn order to its left."""
    obs = eng.observe(np.array([viewer]))[0]
    return obs[eng.observation_layout[field]].reshape(eng.num_players - 1, 4).tolist()


NONE, RED, YELLOW, GREEN, BLUE = [0, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]


def test_colour_choices_and_draws_show_in_the_others_observations():
    """other_chose_color: the colour a seat last moved play into (switching by number or symbol, or naming a wild);
    following the colour shows nothing. other_lacks_color: the colours a seat drew on by choice, until it plays one."""
    eng = game(4, dealer=3, starter="red:5", draw_pile=["yellow:1", "green:8"], hands={
        0: ["blue:5", "green:2", "red:1", "red:2", "red:3", "red:4", "red:6"],
        1: ["blue:7", "yellow:3", "yellow:4", "yellow:5", "yellow:6", "yellow:7", "yellow:8"],
        2: ["wild", "yellow:9", "red:7", "red:8", "red:9", "blue:9", "blue:8"],
        3: ["red:0", "blue:0", "blue:1", "blue:2", "blue:3", "blue:4", "blue:6"],
    })
    assert others_view(eng, "other_chose_color", 0) == [NONE, NONE, NONE]
    act(eng, "play:blue:5")  # on red:5: a switch to blue, by number
    act(eng, "play:blue:7")  # following blue: no choice shown
    assert others_view(eng, "other_chose_color", 2) == [NONE, BLUE, NONE]  # seat 2 sees seat 0 second to its left
    acts(eng, "play:wild", "color:green")
    act(eng, "draw")  # seat 3 draws yellow:1 on green: kept, its turn is over
    assert state(eng)["current"] == P(0)
    assert others_view(eng, "other_chose_color", 0) == [NONE, GREEN, NONE]
    assert others_view(eng, "other_lacks_color", 0) == [NONE, NONE, GREEN]
    assert others_view(eng, "other_chose_color", 3) == [BLUE, NONE, GREEN]  # the same facts from seat 3
    act(eng, "play:green:2")
    act(eng, "draw")  # seat 1 draws green:8 on green: playable, and plays it
    act(eng, "play:green:8")
    assert others_view(eng, "other_lacks_color", 0) == [NONE, NONE, GREEN]  # seat 1 played green: no flag stands
    assert others_view(eng, "other_chose_color", 0) == [NONE, GREEN, NONE]
    assert others_view(eng, "other_chose_color", 1) == [GREEN, NONE, BLUE]  # seat 0's blue stands: it followed green since
    act(eng, "play:blue:8")  # seat 2, on green:8: a switch to blue replaces its green
    assert others_view(eng, "other_chose_color", 0) == [NONE, BLUE, NONE]


def test_colour_choices_start_over_each_round():
    eng = VectorEngine(num_games=1, num_players=3, seed=0, auto_reset=False, episode="match", target_score=500)
    eng.reset(options={"deck": stacked_deck(3, 2, {0: ["wild"]}, "red:5"), "dealer": 2})
    acts(eng, "play:wild", "color:blue")
    assert others_view(eng, "other_chose_color", 1)[1] == BLUE
    # the round runs to its end with random legal play; the next round's deal shows no choices
    rng = np.random.default_rng(0)
    round_number = int(eng.state.round_number[0])
    while int(eng.state.round_number[0]) == round_number:
        legal_now = np.flatnonzero(eng.legal_mask()[0])
        eng.step(np.array([rng.choice(legal_now)]))
    assert all(row == NONE for viewer in range(3) for row in others_view(eng, "other_chose_color", viewer))


# ================================================================ the Sorting Hat

HAT_PILE = ["blue:1", "green:2", "red:3", "yellow:4"]


def test_sorting_hat_colour_then_target_then_draw_until_red():
    eng = game(4, hands=[["sorting_hat"]], starter="blue:5", draw_pile=HAT_PILE)
    act(eng, "play:sorting_hat")
    assert state(eng)["phase"] == "color" and legal(eng) == COLOR_ACTIONS
    act(eng, "color:yellow")
    s = state(eng)
    assert s["phase"] == "target" and s["current"] == P(0) and s["color"] == "yellow"
    assert legal(eng) == {"target:1", "target:2", "target:3"}
    act(eng, "target:2")
    s = state(eng)
    assert len(s["hands"][P(2)]) == 10 and not Counter(HAT_PILE[:3]) - Counter(s["hands"][P(2)])
    assert s["draw_pile"][0] == "yellow:4"
    assert s["current"] == P(1) and s["phase"] == "play" and s["color"] == "yellow"
    assert events(eng, kernel.EV_TARGET) == [(0, 2, 0)]
    assert events(eng, kernel.EV_HAT) == [(2, 3, CARD_INDEX["red:3"])]


def test_sorting_hat_target_does_not_lose_a_turn():
    eng = game(4, hands=[["sorting_hat"]], starter="blue:5", draw_pile=HAT_PILE)
    acts(eng, "play:sorting_hat", "color:red", "target:1")
    s = state(eng)
    assert len(s["hands"][P(1)]) == 10 and s["current"] == P(1) and s["phase"] == "play"
    assert events(eng, kernel.EV_SKIPPED) == []


def test_sorting_hat_targets_count_to_the_left_whatever_the_direction():
    hands = {0: ["red:reverse"], 3: ["sorting_hat"]}
    eng = game(4, hands=hands, starter="red:5", draw_pile=HAT_PILE)
    act(eng, "play:red:reverse")
    assert state(eng)["current"] == P(3)
    acts(eng, "play:sorting_hat", "color:green", "target:1")
    s = state(eng)
    assert events(eng, kernel.EV_TARGET) == [(3, 0, 0)]
    assert len(s["hands"][P(0)]) == 9 and s["current"] == P(2)


@pytest.mark.parametrize("k", [1, 5, 9])
def test_sorting_hat_ten_players_targets(k):
    eng = game(10, hands=[["sorting_hat"]], starter="blue:5", draw_pile=["red:3"])
    acts(eng, "play:sorting_hat", "color:blue")
    assert legal(eng) == {f"target:{j}" for j in range(1, 10)}
    act(eng, f"target:{k}")
    assert len(hand(eng, k)) == 8


def test_sorting_hat_first_card_red_draws_one():
    eng = game(3, hands=[["sorting_hat"]], starter="blue:5", draw_pile=["red:skip", "red:1"])
    acts(eng, "play:sorting_hat", "color:blue", "target:1")
    assert len(hand(eng, 1)) == 8 and "red:skip" in hand(eng, 1)
    assert state(eng)["draw_pile"][0] == "red:1"


def test_sorting_hat_wilds_are_not_gryffindor_cards():
    pile = ["wild", "sorting_hat", "wild_draw4", "red:9", "red:8"]
    eng = game(3, hands=[["sorting_hat"]], starter="blue:5", draw_pile=pile)
    acts(eng, "play:sorting_hat", "color:blue", "target:2")
    assert len(hand(eng, 2)) == 11 and state(eng)["draw_pile"][0] == "red:8"


def test_sorting_hat_two_players_no_target_choice():
    eng = game(2, hands=[["sorting_hat"]], starter="blue:5", draw_pile=HAT_PILE)
    acts(eng, "play:sorting_hat")
    act(eng, "color:green")
    s = state(eng)
    assert s["phase"] == "play" and s["current"] == P(1)
    assert len(s["hands"][P(1)]) == 10
    assert events(eng, kernel.EV_HAT) == [(1, 3, CARD_INDEX["red:3"])]


@pytest.mark.parametrize("n,color,drawn", [(3, "green", 3), (2, "yellow", 4), (3, "blue", 1)])
def test_sorting_hat_gryffindor_color_option(n, color, drawn):
    pile = ["blue:1", "red:2", "green:3", "yellow:4", "red:5"]
    eng = game(n, hands=[["sorting_hat"]], starter="blue:5", draw_pile=pile, gryffindor_color=color)
    acts(eng, "play:sorting_hat", "color:red")
    if n > 2:
        act(eng, "target:1")
    assert len(hand(eng, 1)) == 7 + drawn
    assert pile[drawn - 1].startswith(color)


def test_sorting_hat_stops_when_the_piles_run_out_and_then_draw_ends_the_turn():
    # 5 players: every red card is in seats 0, 2, 3, 4; the draw pile holds none
    reds = [c for c in FULL_DECK if c.startswith("red:")]
    assert len(reds) == 25
    hands = {0: ["sorting_hat"] + reds[:4], 2: reds[4:11], 3: reds[11:18], 4: reds[18:25]}
    eng = game(5, hands=hands, starter="blue:5")
    assert not any(c.startswith("red:") for c in state(eng)["draw_pile"])
    acts(eng, "play:sorting_hat", "color:blue", "target:1")
    s = state(eng)
    # 76 cards of the draw pile, then the reshuffled discard (the blue 5), then nothing
    assert len(s["hands"][P(1)]) == 7 + 76 + 1
    assert s["draw_pile"] == [] and s["discard"] == ["sorting_hat"]
    assert events(eng, kernel.EV_HAT) == [(1, 77, -1)]
    assert s["current"] == P(1) and s["phase"] == "play"
    assert_conserved(s)
    # both piles empty: a draw just ends the turn
    assert "draw" in legal(eng)
    act(eng, "draw")
    s = state(eng)
    assert events(eng, kernel.EV_DRAW) == [(1, -1, 0)]
    assert len(s["hands"][P(1)]) == 84 and s["current"] == P(2) and s["phase"] == "play"
    assert_conserved(s)


# ================================================================ the draw pile: reshuffle


def ten_player_reshuffle_game(pile_reds: list[str]):
    """10 players; red:5 starts, seat 0 plays red:6, seat 1 plays a Hat at seat 2.
    The draw pile is 41 cards: non-red except pile_reds at its bottom."""
    reds = [c for c in FULL_DECK if c.startswith("red:")]
    for c in ["red:5", "red:6"] + pile_reds:
        reds.remove(c)
    non_red = [c for c in FULL_DECK if not c.startswith("red:")]
    non_red.remove("sorting_hat")
    pile = non_red[: 41 - len(pile_reds)] + pile_reds
    hands = {0: ["red:6"], 1: ["sorting_hat"]}
    seat = 3
    while reds:
        hands[seat], reds = reds[:7], reds[7:]
        seat += 1
    eng = game(10, hands=hands, starter="red:5", draw_pile=pile)
    assert len(state(eng)["draw_pile"]) == 41
    acts(eng, "play:red:6", "play:sorting_hat", "color:blue", "target:1")
    return eng


def test_reshuffle_when_a_draw_needs_it():
    eng = ten_player_reshuffle_game(["red:9"])
    s = state(eng)
    assert len(s["hands"][P(2)]) == 7 + 41 and s["draw_pile"] == []
    assert s["discard"] == ["red:5", "red:6", "sorting_hat"] and events(eng, kernel.EV_RESHUFFLE) == []
    assert s["current"] == P(2)
    act(eng, "draw")
    s = state(eng)
    assert events(eng, kernel.EV_RESHUFFLE) == [(2, 0, 0)]
    assert s["discard"] == ["sorting_hat"] and s["top"] == "sorting_hat" and s["color"] == "blue"
    assert len(s["draw_pile"]) == 1 and len(s["hands"][P(2)]) == 49
    assert sorted(s["draw_pile"] + [CARD_LABELS[events(eng, kernel.EV_DRAW)[0][1]]]) == ["red:5", "red:6"]
    assert sorted(eng.last_reshuffle(0)) == ["red:5", "red:6"]
    assert s["current"] == P(3)  # a red card on blue: not playable, the turn ends
    assert_conserved(s)


def test_reshuffle_during_a_sorting_hat_draw():
    eng = ten_player_reshuffle_game([])
    s = state(eng)
    assert events(eng, kernel.EV_RESHUFFLE) == [(2, 0, 0)]
    (seat, count, last), = events(eng, kernel.EV_HAT)
    assert seat == 2 and count == 42 and CARD_LABELS[last] in ("red:5", "red:6")
    assert s["discard"] == ["sorting_hat"] and len(s["draw_pile"]) == 1
    assert_conserved(s)


# ================================================================ calling UNO

UNO_DRAWS = ["blue:8", "green:8", "yellow:8", "blue:9", "green:9", "yellow:9"] * 2 + ["blue:0", "green:0", "yellow:0"]
SHED = ["play:red:1", "play:red:2", "play:red:3", "play:red:4", "play:red:6"]


def uno_game(last_two, extra_pile=(), n=4, hands=None, **options):
    """red:5 starts; seat 0 sheds red 1, 2, 3, 4, 6 while the others draw unplayable cards,
    and is left to act holding last_two."""
    hands = dict(hands or {})
    hands[0] = ["red:1", "red:2", "red:3", "red:4", "red:6", *last_two]
    eng = game(n, hands=hands, starter="red:5", draw_pile=UNO_DRAWS[: 5 * (n - 1)] + list(extra_pile), **options)
    for label in SHED:
        assert state(eng)["current"] == P(0)
        assert "uno" not in legal(eng)  # 7..3 cards
        act(eng, label)
        for k in range(1, n):
            assert state(eng)["current"] == P(k) and state(eng)["phase"] == "play"
            act(eng, "draw")
    s = state(eng)
    assert s["current"] == P(0) and len(s["hands"][P(0)]) == 2 and s["top"] == "red:6"
    return eng


def test_uno_legal_with_two_cards_and_a_playable_card():
    eng = uno_game(("red:7", "blue:1"))
    assert "uno" in legal(eng)
    act(eng, "uno")
    s = state(eng)
    assert s["current"] == P(0) and s["phase"] == "play" and s["uno_called"][P(0)]
    assert "uno" not in legal(eng) and "play:red:7" in legal(eng)
    assert events(eng, kernel.EV_UNO) == [(0, 0, 0)]


def test_uno_not_legal_with_two_cards_and_nothing_playable():
    eng = uno_game(("blue:1", "green:1"))
    assert legal(eng) == {"draw"}


def test_uno_then_play_leaves_no_catch_window_and_the_call_stands_until_the_next_turn():
    eng = uno_game(("red:7", "red:8"), extra_pile=["blue:2", "green:2", "yellow:2"])
    acts(eng, "uno", "play:red:7")
    s = state(eng)
    assert s["phase"] == "play" and s["current"] == P(1) and len(s["hands"][P(0)]) == 1
    assert s["uno_called"][P(0)]
    for k in (1, 2, 3):
        assert state(eng)["current"] == P(k) and state(eng)["uno_called"][P(0)]
        act(eng, "draw")
    s = state(eng)
    assert s["current"] == P(0) and not s["uno_called"][P(0)]


def test_no_uno_call_opens_a_catch_window_all_pass():
    eng = uno_game(("red:7", "red:8"))
    act(eng, "play:red:7")
    s = state(eng)
    assert s["phase"] == "catch" and s["current"] == P(1) and len(s["hands"][P(0)]) == 1
    assert legal(eng) == {"catch", "pass"}
    obs = eng.observe()[0]
    assert obs[eng.observation_layout["catch_offender"]].tolist() == [0, 0, 1]  # seat 0 is 3 to seat 1's left
    act(eng, "pass")
    assert state(eng)["phase"] == "catch" and state(eng)["current"] == P(2)
    act(eng, "pass")
    assert state(eng)["phase"] == "catch" and state(eng)["current"] == P(3)
    act(eng, "pass")
    s = state(eng)
    assert s["phase"] == "play" and s["current"] == P(1) and len(s["hands"][P(0)]) == 1
    assert events(eng, kernel.EV_PASS) == [(3, 0, 0)]


@pytest.mark.parametrize("catcher", [1, 2, 3])
def test_catch_makes_the_offender_draw_two(catcher):
    eng = uno_game(("red:7", "red:8"), extra_pile=["green:1", "green:2", "green:3"])
    act(eng, "play:red:7")
    for _ in range(1, catcher):
        act(eng, "pass")
    assert state(eng)["current"] == P(catcher)
    act(eng, "catch")
    s = state(eng)
    assert s["hands"][P(0)] == ordered(["red:8", "green:1", "green:2"])
    assert s["phase"] == "play" and s["current"] == P(1)
    assert events(eng, kernel.EV_CATCH) == [(catcher, 0, 0)]
    assert (0, 2, kernel.REASON_UNO) in events(eng, kernel.EV_PENALTY)


def test_catch_with_uno_penalty_four():
    eng = uno_game(("red:7", "red:8"), extra_pile=["green:1", "green:2", "green:3", "green:4", "green:5"], uno_penalty=4)
    acts(eng, "play:red:7", "catch")
    assert hand(eng, 0) == ordered(["red:8", "green:1", "green:2", "green:3", "green:4"])


def pass_through_catch_window(eng) -> list[str]:
    """Every seat asked in the open catch window passes; returns who was asked, in order."""
    asked = []
    while state(eng)["phase"] == "catch":
        asked.append(state(eng)["current"])
        act(eng, "pass")
    return asked


def test_catch_window_order_follows_a_reverse():
    eng = uno_game(("red:reverse", "red:7"))
    act(eng, "play:red:reverse")
    assert state(eng)["direction"] == -1
    assert pass_through_catch_window(eng) == [P(3), P(2), P(1)]
    assert state(eng)["current"] == P(3)


def test_catch_window_asks_the_seat_about_to_be_skipped():
    eng = uno_game(("red:skip", "red:7"))
    act(eng, "play:red:skip")
    assert pass_through_catch_window(eng) == [P(1), P(2), P(3)]
    assert state(eng)["current"] == P(2)


def test_catch_window_before_a_draw_two_draw():
    eng = uno_game(("red:draw2", "red:7"), extra_pile=["green:1", "green:2", "green:3", "green:4"])
    before = sizes(eng)
    act(eng, "play:red:draw2")
    assert state(eng)["phase"] == "catch" and sizes(eng)[1] == before[1]
    act(eng, "catch")
    s = state(eng)
    assert s["hands"][P(0)] == ordered(["red:7", "green:1", "green:2"])  # the offender draws first
    assert not Counter(["green:3", "green:4"]) - Counter(s["hands"][P(1)])
    assert len(s["hands"][P(1)]) == before[1] + 2 and s["current"] == P(2)


def test_catch_window_before_a_wild_draw_four_challenge():
    eng = uno_game(("wild_draw4", "red:7"), extra_pile=["green:1", "green:2", "blue:1", "blue:2", "blue:3", "blue:4"])
    act(eng, "play:wild_draw4")
    assert state(eng)["phase"] == "color"
    act(eng, "color:blue")
    s = state(eng)
    assert s["phase"] == "catch" and s["current"] == P(1)
    acts(eng, "pass", "pass", "pass")
    s = state(eng)
    assert s["phase"] == "challenge" and s["current"] == P(1) and len(s["hands"][P(0)]) == 1
    act(eng, "challenge")  # seat 0 held red:7 while red was current: guilty
    s = state(eng)
    assert len(s["hands"][P(0)]) == 5 and s["current"] == P(1) and s["color"] == "blue"


def test_catch_window_after_a_sorting_hat_draw():
    eng = uno_game(("sorting_hat", "red:7"), extra_pile=["blue:1", "red:8"])
    before = sizes(eng)
    acts(eng, "play:sorting_hat", "color:blue", "target:2")
    s = state(eng)
    assert s["phase"] == "catch" and s["current"] == P(1)
    assert len(s["hands"][P(2)]) == before[2] + 2  # the Hat's drawing came first
    acts(eng, "pass", "pass", "pass")
    assert state(eng)["current"] == P(1) and state(eng)["phase"] == "play"


def test_uno_after_drawing_a_playable_card_two_players():
    # two players: seat 0 sheds skips (each one gives it another turn) down to one card
    hand0 = ["red:skip", "red:skip", "yellow:skip", "yellow:skip", "green:skip", "green:skip", "blue:1"]
    eng = game(2, hands=[hand0], starter="red:5", draw_pile=["green:4", "green:6"])
    acts(eng, "play:red:skip", "play:red:skip", "play:yellow:skip", "play:yellow:skip", "play:green:skip")
    assert "uno" in legal(eng)
    acts(eng, "uno", "play:green:skip")
    assert state(eng)["current"] == P(0) and hand(eng, 0) == ["blue:1"]
    assert "uno" not in legal(eng)  # one card
    act(eng, "draw")
    s = state(eng)
    assert s["phase"] == "drawn" and legal(eng) == {"play:green:4", "keep", "uno"}
    act(eng, "play:green:4")  # no call this time: seat 1 may catch
    s = state(eng)
    assert s["phase"] == "catch" and s["current"] == P(1)
    act(eng, "catch")
    assert len(hand(eng, 0)) == 3 and "green:6" in hand(eng, 0) and "blue:1" in hand(eng, 0)
    assert state(eng)["current"] == P(1)


def test_uno_catch_always_penalises_automatically():
    eng = uno_game(("red:7", "red:8"), extra_pile=["green:1", "green:2"], uno_catch="always")
    assert "uno" in legal(eng)
    act(eng, "play:red:7")
    s = state(eng)
    assert s["phase"] == "play" and s["current"] == P(1)
    assert s["hands"][P(0)] == ordered(["red:8", "green:1", "green:2"])
    assert (0, 2, kernel.REASON_UNO) in events(eng, kernel.EV_PENALTY)


def test_uno_catch_always_called_costs_nothing():
    eng = uno_game(("red:7", "red:8"), uno_catch="always")
    acts(eng, "uno", "play:red:7")
    assert hand(eng, 0) == ["red:8"] and state(eng)["current"] == P(1)


def test_uno_catch_off_no_action_no_window():
    eng = uno_game(("red:7", "red:8"), uno_catch="off")
    assert "uno" not in legal(eng)
    act(eng, "play:red:7")
    s = state(eng)
    assert s["phase"] == "play" and s["current"] == P(1) and s["hands"][P(0)] == ["red:8"]
    assert events(eng, kernel.EV_PENALTY) == []


# ================================================================ max_turns


def test_max_turns_truncates():
    eng = game(2, starter="red:5", max_turns=3)
    for i in range(3):
        label = "draw" if "draw" in legal(eng) else "keep"
        rewards, terminated, truncated = act(eng, label)
        if i < 2:
            assert not truncated and state(eng)["phase"] != "over"
    assert truncated and not terminated
    assert (rewards == 0).all()
    s = state(eng)
    assert s["phase"] == "over" and s["current"] is None
    assert legal(eng) == set()
    assert events(eng, kernel.EV_TRUNCATED) == [(0, 0, 0)]


def test_max_turns_counts_colour_decisions():
    eng = game(2, starter="wild", max_turns=1)
    rewards, terminated, truncated = act(eng, "color:red")
    assert truncated and not terminated and (rewards == 0).all()


# ================================================================ end of a round and scoring

SKIPS = ["red:skip", "red:skip", "yellow:skip", "yellow:skip", "green:skip", "green:skip"]
LOSER = ["red:7", "blue:0", "green:reverse", "yellow:reverse", "blue:draw2", "wild", "sorting_hat"]  # 167 points


def one_card_left(last, draw_pile=(), **options):
    """2 players, red:5 starts, dealer 1: seat 0 sheds six skips (calling UNO) and holds `last`."""
    eng = game(2, hands=[SKIPS + [last], LOSER], starter="red:5", draw_pile=list(draw_pile), **options)
    acts(eng, "play:red:skip", "play:red:skip", "play:yellow:skip", "play:yellow:skip", "play:green:skip")
    acts(eng, "uno", "play:green:skip")
    s = state(eng)
    assert s["current"] == P(0) and s["hands"][P(0)] == [last] and s["color"] == "green"
    return eng


def test_points_table():
    assert points(LOSER) == 167
    assert points(["red:0", "blue:9", "green:skip", "yellow:reverse", "red:draw2", "wild", "wild_draw4", "sorting_hat"]) == 9 + 60 + 150


@pytest.mark.parametrize("last", ["green:3", "blue:skip"])
def test_round_end_winner_scores_the_other_hands(last):
    eng = one_card_left(last)
    rewards, terminated, truncated = act(eng, f"play:{last}")
    assert terminated and not truncated
    assert rewards.tolist() == [1.0, -1.0]
    s = state(eng)
    assert s["phase"] == "over" and s["current"] is None and s["hands"][P(0)] == []
    assert s["scores"] == {P(0): 167, P(1): 0}
    assert events(eng, kernel.EV_ROUND_END) == [(0, 167, 0)]
    assert legal(eng) == set()
    assert_conserved(s)


def test_final_draw_two_makes_the_next_player_draw_and_counts():
    eng = one_card_left("green:draw2", draw_pile=["wild_draw4", "red:9", "blue:1"])
    rewards, terminated, _ = act(eng, "play:green:draw2")
    assert terminated and rewards.tolist() == [1.0, -1.0]
    s = state(eng)
    assert s["hands"][P(1)] == ordered(LOSER + ["wild_draw4", "red:9"])
    assert s["scores"][P(0)] == 167 + 59


def test_final_wild_draw_four_makes_the_next_player_draw_without_challenge():
    eng = one_card_left("wild_draw4", draw_pile=["wild", "red:9", "blue:1", "blue:skip", "yellow:1"])
    rewards, terminated, _ = act(eng, "play:wild_draw4")
    assert not terminated and state(eng)["phase"] == "color"  # the colour is still named
    rewards, terminated, _ = act(eng, "color:yellow")
    assert terminated and rewards.tolist() == [1.0, -1.0]
    s = state(eng)
    assert s["phase"] == "over" and s["color"] == "yellow"
    assert s["hands"][P(1)] == ordered(LOSER + ["wild", "red:9", "blue:1", "blue:skip"])
    assert s["scores"][P(0)] == 167 + 50 + 9 + 1 + 20
    assert events(eng, kernel.EV_CHALLENGE) == [] and events(eng, kernel.EV_ACCEPT) == []


def test_final_wild_colour_decision_then_round_ends():
    eng = one_card_left("wild")
    _, terminated, _ = act(eng, "play:wild")
    assert not terminated and legal(eng) == COLOR_ACTIONS
    rewards, terminated, _ = act(eng, "color:red")
    assert terminated and state(eng)["scores"][P(0)] == 167


def test_final_sorting_hat_two_players_target_draws_and_counts():
    eng = one_card_left("sorting_hat", draw_pile=["blue:1", "red:2", "blue:3"])
    acts(eng, "play:sorting_hat")
    rewards, terminated, _ = act(eng, "color:blue")
    assert terminated
    s = state(eng)
    assert s["hands"][P(1)] == ordered(LOSER + ["blue:1", "red:2"])
    assert s["scores"][P(0)] == 170


def test_reward_points_two_players():
    eng = one_card_left("green:3", reward="points")
    rewards, terminated, _ = act(eng, "play:green:3")
    assert terminated and rewards == pytest.approx([1.67, -1.67])


THREE_A = LOSER  # 167
THREE_B = ["yellow:1", "yellow:2", "yellow:3", "green:4", "green:5", "green:6", "yellow:7"]  # 28
THREE_DRAWS = ["blue:1", "blue:2", "blue:3", "blue:4", "blue:6", "blue:7"]  # seat 2's draws, 23


def three_player_hat_finish(**options):
    """3 players: seat 0 sheds six skips (seat 1 skipped, seat 2 draws), then a last Sorting Hat at seat 1."""
    hand0 = SKIPS + ["sorting_hat"]
    eng = game(3, hands=[hand0, THREE_A, THREE_B], starter="red:5", draw_pile=THREE_DRAWS + ["green:1", "red:8", "blue:9"], **options)
    for i, label in enumerate(["red:skip", "red:skip", "yellow:skip", "yellow:skip", "green:skip", "green:skip"]):
        if i == 5:
            act(eng, "uno")
        act(eng, f"play:{label}")
        assert state(eng)["current"] == P(2)
        act(eng, "draw")
    assert hand(eng, 0) == ["sorting_hat"] and state(eng)["current"] == P(0)
    acts(eng, "play:sorting_hat", "color:red")
    assert state(eng)["phase"] == "target"  # no round end before the target is chosen and draws
    return eng


def test_final_sorting_hat_target_still_draws_three_players():
    eng = three_player_hat_finish()
    rewards, terminated, _ = act(eng, "target:1")
    assert terminated and rewards.tolist() == [1.0, -1.0, -1.0]
    s = state(eng)
    assert s["hands"][P(1)] == ordered(THREE_A + ["green:1", "red:8"])
    assert s["scores"][P(0)] == 167 + 9 + 28 + 23
    assert events(eng, kernel.EV_HAT) == [(1, 2, CARD_INDEX["red:8"])]


def test_reward_points_three_players():
    eng = three_player_hat_finish(reward="points")
    rewards, terminated, _ = act(eng, "target:1")
    assert terminated
    assert rewards == pytest.approx([(176 + 51) / 100, -176 / 100, -51 / 100])


def greedy(eng) -> str:
    """A quick policy: call UNO, play the first playable card, else draw / keep."""
    moves = legal(eng)
    for preferred in ("uno", "accept", "pass", "target:1", "color:red"):
        if preferred in moves:
            return preferred
    plays = sorted(m for m in moves if m.startswith("play:"))
    if plays:
        return plays[0]
    return "draw" if "draw" in moves else "keep"


def play_out(eng, max_steps=60000):
    """Greedy play until the episode ends; checks every round end on the way."""
    n = eng.num_players
    for _ in range(max_steps):
        before = state(eng)
        rewards, terminated, truncated = act(eng, greedy(eng))
        ends = events(eng, kernel.EV_ROUND_END)
        if ends:
            (winner, round_points, _), = ends
            after = state(eng)
            if eng.options.scoring == "winner":
                assert after["scores"][P(winner)] == before["scores"][P(winner)] + round_points
            if not terminated:
                assert after["round"] == before["round"] + 1
                assert after["dealer"] == P((int(before["dealer"].split("_")[1]) + 1) % n)
                assert events(eng, kernel.EV_NEW_ROUND)[0][:2] == (after["round"], (int(before["dealer"].split("_")[1]) + 1) % n)
                assert all(len(h) >= 7 for h in after["hands"].values()) and after["phase"] in ("play", "color")
                if eng.options.reward == "win":
                    assert (rewards == 0).all()
        if terminated or truncated:
            return rewards, terminated, truncated
    raise AssertionError("episode did not end")


def test_match_episode_deals_the_next_round_in_the_same_step():
    eng = one_card_left("green:3", episode="match")
    rewards, terminated, truncated = act(eng, "play:green:3")
    assert not terminated and not truncated and (rewards == 0).all()
    s = state(eng)
    assert s["round"] == 2 and s["dealer"] == P(0) and s["scores"] == {P(0): 167, P(1): 0}
    assert s["phase"] in ("play", "color") and s["current"] is not None
    assert all(len(h) >= 7 for h in s["hands"].values())
    assert events(eng, kernel.EV_ROUND_END) == [(0, 167, 0)]
    assert events(eng, kernel.EV_NEW_ROUND)[0][:2] == (2, 0)
    assert_conserved(s)


def test_match_episode_ends_at_the_target_score():
    eng = one_card_left("green:3", episode="match", target_score=300)
    act(eng, "play:green:3")
    rewards, terminated, truncated = play_out(eng)
    assert terminated and not truncated
    s = state(eng)
    (winner, _, _), = events(eng, kernel.EV_MATCH_END)
    assert s["scores"][P(winner)] >= 300 and max(s["scores"].values()) == s["scores"][P(winner)]
    assert rewards.tolist() == [1.0 if k == winner else -1.0 for k in range(2)]
    assert s["phase"] == "over" and s["round"] >= 2


def test_match_episode_low_target_ends_after_one_round():
    eng = one_card_left("green:3", episode="match", target_score=100)
    rewards, terminated, _ = act(eng, "play:green:3")
    assert terminated and rewards.tolist() == [1.0, -1.0]
    assert events(eng, kernel.EV_MATCH_END) == [(0, 0, 0)]
    assert state(eng)["round"] == 1


def test_scores_accumulate_over_rounds_four_players():
    eng = game(4, episode="match", target_score=250)
    rewards, terminated, truncated = play_out(eng)
    assert terminated
    s = state(eng)
    (winner, _, _), = events(eng, kernel.EV_MATCH_END)
    assert s["scores"][P(winner)] >= 250
    assert rewards.tolist() == [1.0 if k == winner else -1.0 for k in range(4)]


def test_scoring_lowest_each_player_adds_own_hand():
    eng = one_card_left("green:3", scoring="lowest")
    rewards, terminated, _ = act(eng, "play:green:3")
    assert terminated and rewards.tolist() == [1.0, -1.0]
    assert state(eng)["scores"] == {P(0): 0, P(1): 167}


def test_scoring_lowest_match_lowest_total_wins():
    eng = one_card_left("green:3", scoring="lowest", episode="match", target_score=100)
    rewards, terminated, _ = act(eng, "play:green:3")
    assert terminated and rewards.tolist() == [1.0, -1.0]
    assert events(eng, kernel.EV_MATCH_END) == [(0, 0, 0)]


def test_scoring_lowest_match_played_out():
    eng = one_card_left("green:3", scoring="lowest", episode="match", target_score=400)
    rewards, terminated, _ = act(eng, "play:green:3")
    assert not terminated and state(eng)["scores"] == {P(0): 0, P(1): 167}
    rewards, terminated, truncated = play_out(eng)
    assert terminated
    scores = state(eng)["scores"]
    assert max(scores.values()) >= 400
    low = min(scores.values())
    assert rewards.tolist() == [1.0 if scores[P(k)] == low else -1.0 for k in range(2)]
    assert {e[0] for e in events(eng, kernel.EV_MATCH_END)} == {k for k in range(2) if scores[P(k)] == low}


def test_auto_reset_starts_a_fresh_match():
    eng = VectorEngine(num_games=1, num_players=2, seed=0)  # auto_reset on
    eng.reset(options={"deck": stacked_deck(2, 1, [SKIPS + ["green:3"], LOSER], starter="red:5"), "dealer": 1})
    acts(eng, "play:red:skip", "play:red:skip", "play:yellow:skip", "play:yellow:skip", "play:green:skip", "uno", "play:green:skip")
    rewards, terminated, _ = act(eng, "play:green:3")
    assert terminated and rewards.tolist() == [1.0, -1.0]
    s = state(eng)
    assert s["round"] == 1 and s["scores"] == {P(0): 0, P(1): 0} and s["phase"] in ("play", "color")


# ================================================================ bad input


@pytest.mark.parametrize("name", ["uno_penalties", "bluffing", "num_decks"])
def test_unknown_option_raises_naming_it(name):
    with pytest.raises(ValueError, match=name):
        VectorEngine(num_games=1, num_players=2, **{name: 1})


@pytest.mark.parametrize(
    "name,value",
    [
        ("uno_penalty", -1),
        ("uno_penalty", "2"),
        ("uno_catch", "sometimes"),
        ("wd4_bluffing", 1),
        ("two_player_reverse_skips", "yes"),
        ("voluntary_draw", None),
        ("gryffindor_color", "purple"),
        ("target_score", 0),
        ("scoring", "highest"),
        ("max_turns", 0),
        ("episode", "game"),
        ("reward", "score"),
    ],
)
def test_bad_option_value_raises_naming_it(name, value):
    with pytest.raises(ValueError, match=name):
        VectorEngine(num_games=1, num_players=2, **{name: value})


@pytest.mark.parametrize("n", [1, 11])
def test_bad_player_count(n):
    with pytest.raises(ValueError, match="num_players"):
        VectorEngine(num_games=1, num_players=n)


def bad_decks():
    good = stacked_deck(2, 0)
    duplicate = list(good)
    duplicate[duplicate.index("red:0")] = "wild"
    return {
        "short": good[:111],
        "long": good + ["red:1"],
        "duplicate": duplicate,
        "unknown": good[:-1] + ["purple:3"],
        "empty": [],
    }


@pytest.mark.parametrize("kind", ["short", "long", "duplicate", "unknown", "empty"])
def test_bad_deck_raises_and_changes_nothing(kind):
    eng = game(2, starter="red:4")
    before = state(eng)
    with pytest.raises(ValueError, match="deck"):
        eng.reset(options={"deck": bad_decks()[kind], "dealer": 0})
    assert state(eng) == before


@pytest.mark.parametrize("dealer", [2, -1, "0", True])
def test_bad_dealer_raises(dealer):
    eng = game(2, starter="red:4")
    before = state(eng)
    with pytest.raises(ValueError, match="dealer"):
        eng.reset(options={"deck": stacked_deck(2, 0), "dealer": dealer})
    assert state(eng) == before


def test_illegal_action_in_other_phases_raises_and_changes_nothing():
    eng = wd4_game(GUILTY)
    before = state(eng)
    for label in ["draw", "play:green:4", "pass", "color:red", "keep", "uno"]:
        with pytest.raises(ValueError, match="illegal"):
            eng.step(np.array([ACTION_LABELS.index(label)]))
        assert state(eng) == before
    with pytest.raises(ValueError):
        eng.step(np.array([ACTION_LABELS.index("accept")] * 2))  # wrong shape
    assert state(eng) == before
