"""Unit tests of the reference model itself (stacked decks, scripted chance)."""

import os
import random
import sys
from collections import Counter

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from reference_model import (
    ACTION_LABELS,
    CARD_LABELS,
    FULL_DECK,
    ReferenceGame,
    SeededChance,
)


class ScriptedChance:
    """Chance with fixed outcomes; fails loudly if asked something unscripted."""

    def __init__(self, dealer=0, decks=(), wd4_indices=(), reshuffle=None):
        self.dealer = dealer
        self.decks = list(decks)
        self.wd4_indices = list(wd4_indices)
        self.reshuffle_fn = reshuffle
        self.wd4_piles = []
        self.reshuffled = []

    def first_dealer(self, n):
        return self.dealer

    def deck(self):
        return list(self.decks.pop(0))

    def return_wd4(self, pile):
        self.wd4_piles.append(list(pile))
        return self.wd4_indices.pop(0)

    def reshuffle(self, cards):
        self.reshuffled.append(list(cards))
        if self.reshuffle_fn is None:
            return list(reversed(cards))
        return self.reshuffle_fn(cards)


def stacked_deck(n, dealer, hands, start, pile_top=()):
    """Deck (top first) dealing hands[seat] (7 cards each) to every seat, then
    `start` as the starting card, then `pile_top`, then the rest of the deck."""
    assert len(hands) == n and all(len(h) == 7 for h in hands)
    deal = []
    for r in range(7):
        for j in range(n):
            deal.append(hands[(dealer + 1 + j) % n][r])
    head = deal + [start] + list(pile_top)
    rest = Counter(FULL_DECK)
    rest.subtract(Counter(head))
    assert all(v >= 0 for v in rest.values()), "stacked deck uses a card too often"
    tail = []
    for label in FULL_DECK:
        if rest[label] > 0:
            tail.append(label)
            rest[label] -= 1
    deck = head + tail
    assert len(deck) == 112
    return deck


def game(n, hands, start, pile_top=(), dealer=0, **rules):
    chance = rules.pop("chance", None) or ScriptedChance(dealer)
    g = ReferenceGame(n, chance, **rules)
    g.reset(deck=stacked_deck(n, dealer, hands, start, pile_top), dealer=dealer)
    return g


# Hands used often: numbers only, no reds except where stated.
H_A = ["blue:1", "blue:2", "blue:3", "blue:4", "blue:5", "blue:6", "blue:7"]
H_B = ["green:1", "green:2", "green:3", "green:4", "green:5", "green:6", "green:7"]
H_C = ["yellow:1", "yellow:2", "yellow:3", "yellow:4", "yellow:5", "yellow:6", "yellow:7"]
H_D = ["blue:8", "blue:9", "green:8", "green:9", "yellow:8", "yellow:9", "blue:1"]


def test_labels():
    assert len(CARD_LABELS) == 55 and len(ACTION_LABELS) == 75
    assert len(FULL_DECK) == 112


def test_deal_and_number_start():
    g = game(3, [H_A, H_B, H_C], "red:5", dealer=2)
    s = g.state()
    # dealer 2: dealing starts at seat 0
    assert s["hands"]["player_0"] == sorted(H_A, key=CARD_LABELS.index)
    assert s["hands"]["player_1"] == sorted(H_B, key=CARD_LABELS.index)
    assert s["top"] == "red:5" and s["color"] == "red" and s["direction"] == 1
    assert s["current"] == "player_0" and s["phase"] == "play"
    assert s["dealer"] == "player_2" and s["round"] == 1
    assert len(s["draw_pile"]) == 112 - 21 - 1
    # nothing red or 5 in player_0's hand -> only draw
    assert g.legal_actions() == {"play:blue:5", "draw"}


def test_draw_two_start():
    g = game(3, [H_A, H_B, H_C], "red:draw2", pile_top=["red:1", "red:2"])
    s = g.state()
    assert s["hands"]["player_1"].count("red:1") == 1 and len(s["hands"]["player_1"]) == 9
    assert s["current"] == "player_2" and s["phase"] == "play"


def test_skip_start_and_reverse_start():
    g = game(4, [H_A, H_B, H_C, H_D], "green:skip")
    assert g.state()["current"] == "player_2"
    g = game(4, [H_A, H_B, H_C, H_D], "green:reverse")
    s = g.state()
    assert s["current"] == "player_0" and s["direction"] == -1


def test_reverse_start_goes_right():
    hands = [H_B, H_A, H_C, H_D]  # dealer player_0 holds greens
    g = game(4, hands, "green:reverse")
    assert g.state()["current"] == "player_0"
    g.step("play:green:3")
    assert g.state()["current"] == "player_3"


def test_wd4_start_is_returned():
    chance = ScriptedChance(0, wd4_indices=[3])
    g = game(2, [H_A, H_B], "wild_draw4", pile_top=["red:9", "red:8", "red:7", "red:6"], chance=chance)
    s = g.state()
    assert chance.wd4_piles[0][:4] == ["red:9", "red:8", "red:7", "red:6"]
    assert s["top"] == "red:9" and s["color"] == "red"
    assert s["draw_pile"][:4] == ["red:8", "red:7", "wild_draw4", "red:6"]
    assert len(s["draw_pile"]) == 112 - 14 - 1


def test_wd4_start_returned_on_top_repeats():
    chance = ScriptedChance(0, wd4_indices=[0, 1])
    g = game(2, [H_A, H_B], "wild_draw4", pile_top=["red:9", "red:8"], chance=chance)
    s = g.state()
    # [wd4 back on top] -> turned again -> inserted at 1 -> red:9 turned
    assert chance.wd4_piles[1][:2] == ["red:9", "red:8"]
    assert s["top"] == "red:9"
    assert s["draw_pile"][:2] == ["wild_draw4", "red:8"]


def test_wild_start_color_then_play():
    g = game(3, [H_A, H_B, H_C], "wild")
    s = g.state()
    assert s["phase"] == "color" and s["current"] == "player_1" and s["color"] is None
    assert g.legal_actions() == {"color:red", "color:yellow", "color:green", "color:blue"}
    g.step("color:green")
    s = g.state()
    assert s["phase"] == "play" and s["current"] == "player_1" and s["color"] == "green"
    assert len(s["hands"]["player_1"]) == 7  # no one draws


def test_sorting_hat_start_no_draw():
    g = game(3, [H_A, H_B, H_C], "sorting_hat")
    g.step("color:blue")
    s = g.state()
    assert all(len(h) == 7 for h in s["hands"].values())
    assert s["current"] == "player_1" and s["phase"] == "play"


def _wd4_game(guilty):
    # player_1 (dealer's left) holds a WD4; top is red:5; guilty iff it holds a red
    p1 = ["wild_draw4", "red:1" if guilty else "blue:9", "green:1", "green:2", "green:3", "green:4", "green:5"]
    return game(3, [H_A, p1, H_C], "red:5", pile_top=["yellow:0", "blue:0", "green:0", "red:0", "red:2", "red:3", "red:4"])


def test_challenge_guilty():
    g = _wd4_game(True)
    assert "play:wild_draw4" in g.legal_actions()
    g.step("play:wild_draw4")
    assert g.state()["phase"] == "color" and g.state()["current"] == "player_1"
    g.step("color:blue")
    s = g.state()
    assert s["phase"] == "challenge" and s["current"] == "player_2" and s["color"] == "blue"
    g.step("challenge")
    s = g.state()
    assert len(s["hands"]["player_1"]) == 6 + 4
    assert len(s["hands"]["player_2"]) == 7
    assert s["current"] == "player_2" and s["phase"] == "play"
    assert s["top"] == "wild_draw4" and s["color"] == "blue"
    assert list(g.revealed) == [(2, 1)]


def test_challenge_innocent_and_accept():
    g = _wd4_game(False)
    g.step("play:wild_draw4")
    g.step("color:green")
    g.step("challenge")
    s = g.state()
    assert len(s["hands"]["player_2"]) == 13 and len(s["hands"]["player_1"]) == 6
    assert s["current"] == "player_0" and s["color"] == "green"

    g = _wd4_game(True)
    g.step("play:wild_draw4")
    g.step("color:green")
    g.step("accept")
    s = g.state()
    assert len(s["hands"]["player_2"]) == 11 and s["current"] == "player_0"


def test_wd4_no_bluffing_masks_and_skips_challenge():
    g2 = game(3, [H_A, ["wild_draw4", "red:1", "green:1", "green:2", "green:3", "green:4", "green:5"], H_C],
              "red:5", wd4_bluffing=False)
    assert "play:wild_draw4" not in g2.legal_actions()
    g3 = game(3, [H_A, ["wild_draw4", "blue:9", "green:1", "green:2", "green:3", "green:4", "green:5"], H_C],
              "red:5", wd4_bluffing=False)
    g3.step("play:wild_draw4")
    g3.step("color:green")
    s = g3.state()
    assert len(s["hands"]["player_2"]) == 11 and s["current"] == "player_0"


def _two_card_game(**rules):
    """3 players, player_1 gets down to two cards quickly: it holds red cards."""
    p1 = ["red:1", "red:2", "red:3", "red:4", "red:6", "red:7", "red:8"]
    return game(3, [["red:9"] + H_A[1:], p1, ["red:9"] + H_C[1:]], "red:5", **rules)


def _play_down_to_two(g):
    # player_1 plays red cards while the others draw/keep (they hold few reds)
    for card in ["red:1", "red:2", "red:3", "red:4", "red:6"]:
        assert g.state()["current"] == "player_1"
        g.step("play:" + card)
        for _ in range(2):  # player_2 then player_0: draw, then keep if asked
            g.step("draw")
            if g.state()["phase"] == "drawn":
                g.step("keep")
    assert len(g.state()["hands"]["player_1"]) == 2


def test_catch_window_catch():
    g = _two_card_game()
    _play_down_to_two(g)
    assert "uno" in g.legal_actions()
    g.step("play:red:7")
    s = g.state()
    assert s["phase"] == "catch" and s["current"] == "player_2"
    assert g.legal_actions() == {"catch", "pass"}
    g.step("pass")
    assert g.state()["current"] == "player_0" and g.state()["phase"] == "catch"
    g.step("catch")
    s = g.state()
    assert len(s["hands"]["player_1"]) == 3
    assert s["current"] == "player_2" and s["phase"] == "play"


def test_catch_window_all_pass_and_called_uno():
    g = _two_card_game()
    _play_down_to_two(g)
    g.step("play:red:7")
    g.step("pass")
    g.step("pass")
    s = g.state()
    assert len(s["hands"]["player_1"]) == 1 and s["current"] == "player_2"

    g = _two_card_game()
    _play_down_to_two(g)
    g.step("uno")
    s = g.state()
    assert s["uno_called"]["player_1"] and s["current"] == "player_1"
    assert "uno" not in g.legal_actions()
    g.step("play:red:7")
    s = g.state()
    assert s["phase"] == "play" and s["current"] == "player_2"
    assert s["uno_called"]["player_1"]  # stands until player_1's next turn begins
    for _ in range(2):
        g.step("draw")
        if g.state()["phase"] == "drawn":
            g.step("keep")
    assert g.state()["current"] == "player_1"
    assert not g.state()["uno_called"]["player_1"]


def test_uno_always_and_off():
    g = _two_card_game(uno_catch="always")
    _play_down_to_two(g)
    g.step("play:red:7")
    s = g.state()
    assert len(s["hands"]["player_1"]) == 3 and s["phase"] == "play"

    g = _two_card_game(uno_catch="off", uno_penalty=4)
    _play_down_to_two(g)
    assert "uno" not in g.legal_actions()
    g.step("play:red:7")
    assert len(g.state()["hands"]["player_1"]) == 1


def test_catch_window_after_reverse_goes_right():
    p1 = ["red:reverse", "red:1", "green:1", "green:2", "green:3", "green:4", "green:5"]
    g = game(4, [H_A, p1, H_C, H_D], "red:5")
    g.hands[1] = ["red:reverse", "green:1"]  # test-only shortcut: two cards left
    g.step("play:red:reverse")
    s = g.state()
    assert s["direction"] == -1 and s["phase"] == "catch"
    assert g.catch_order == [0, 3, 2]
    assert s["current"] == "player_0"
    g.step("pass"), g.step("pass"), g.step("pass")
    assert g.state()["current"] == "player_0" and g.state()["phase"] == "play"


def test_catch_window_before_draw_two():
    p1 = ["red:draw2", "red:1", "green:1", "green:2", "green:3", "green:4", "green:5"]
    g = game(3, [H_A, p1, H_C], "red:5", pile_top=["blue:0", "yellow:0"])
    g.hands[1] = ["red:draw2", "green:1"]
    g.step("play:red:draw2")
    assert g.state()["phase"] == "catch" and g.state()["current"] == "player_2"
    assert len(g.state()["hands"]["player_2"]) == 7  # nothing happened yet
    g.step("catch")
    s = g.state()
    assert s["hands"]["player_1"] == ["yellow:0", "green:1", "blue:0"]
    assert len(s["hands"]["player_2"]) == 9 and s["current"] == "player_0"


def test_sorting_hat_draws_until_red():
    p1 = ["sorting_hat", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]
    g = game(4, [H_A, p1, H_C, H_D], "green:9", pile_top=["blue:0", "wild", "yellow:0", "red:0"])
    g.step("play:sorting_hat")
    g.step("color:yellow")
    s = g.state()
    assert s["phase"] == "target" and s["current"] == "player_1"
    assert g.legal_actions() == {"target:1", "target:2", "target:3"}
    g.step("target:3")  # (1 + 3) % 4 = player_0
    s = g.state()
    assert len(s["hands"]["player_0"]) == 7 + 4
    assert "red:0" in s["hands"]["player_0"] and "wild" in s["hands"]["player_0"]
    assert s["current"] == "player_2" and s["color"] == "yellow"


def test_sorting_hat_two_players_and_gryffindor_option():
    p0 = ["sorting_hat", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]
    g = game(2, [p0, H_A], "green:9", dealer=1, pile_top=["red:0", "blue:0"], gryffindor_color="blue")
    g.step("play:sorting_hat")
    g.step("color:red")
    s = g.state()
    assert s["phase"] == "play" and s["current"] == "player_1"
    assert len(s["hands"]["player_1"]) == 9 and "blue:0" in s["hands"]["player_1"]


def test_two_player_reverse_acts_as_skip():
    p0 = ["green:reverse", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]
    g = game(2, [p0, H_A], "green:9", dealer=1)
    g.step("play:green:reverse")
    s = g.state()
    assert s["current"] == "player_0" and s["direction"] == -1

    g = game(2, [p0, H_A], "green:9", dealer=1, two_player_reverse_skips=False)
    g.step("play:green:reverse")
    s = g.state()
    assert s["current"] == "player_1" and s["direction"] == -1


def test_draw_and_drawn_phase():
    g = game(3, [H_A, H_B, H_C], "red:0", pile_top=["red:3", "blue:9"])
    assert g.legal_actions() == {"draw"}
    g.step("draw")
    s = g.state()
    assert s["phase"] == "drawn" and s["current"] == "player_1"
    assert g.legal_actions() == {"play:red:3", "keep"}
    g.step("keep")
    assert g.state()["current"] == "player_2"
    g.step("draw")  # blue:9 is not playable on red:5: the turn ends
    assert g.state()["current"] == "player_0" and g.state()["phase"] == "play"


def test_voluntary_draw_off():
    hands = [H_A, ["red:1"] + H_B[1:], H_C]
    g = game(3, hands, "red:0")
    assert g.legal_actions() == {"play:red:1", "draw"}
    g = game(3, hands, "red:0", voluntary_draw=False)
    assert g.legal_actions() == {"play:red:1"}


def test_reshuffle_when_pile_empty():
    g = game(3, [H_A, H_B, H_C], "red:5")
    g.discard = ["blue:0", "yellow:0", "red:5"]
    g.draw_pile = []
    g.step("draw")
    s = g.state()
    assert g.chance.reshuffled == [["blue:0", "yellow:0"]]
    assert s["discard"] == ["red:5"]
    assert "yellow:0" in s["hands"]["player_1"] and s["draw_pile"] == ["blue:0"]
    # both piles empty: a draw just ends the turn
    g.draw_pile = []
    g.step("draw")
    assert len(g.state()["hands"]["player_2"]) == 7 and g.state()["current"] == "player_0"


def test_round_end_final_draw_two_and_scoring():
    p1 = ["red:draw2", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]
    g = game(3, [H_A, p1, H_C], "red:5", pile_top=["wild", "blue:skip"])
    g.hands[1] = ["red:draw2"]
    rewards, term, trunc = g.step("play:red:draw2")
    assert term and not trunc
    s = g.state()
    assert s["phase"] == "over" and s["current"] is None
    assert len(s["hands"]["player_2"]) == 9
    expected = sum(range(1, 8)) + sum(range(1, 8)) + 50 + 20
    assert s["scores"] == {"player_0": 0, "player_1": expected, "player_2": 0}
    assert rewards == [-1.0, 1.0, -1.0]
    assert g.legal_actions() == set()
    with pytest.raises(ValueError):
        g.step("draw")


def test_points_reward_and_final_wild_color():
    p1 = ["wild", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]
    g = game(3, [H_A, p1, H_C], "red:5", reward="points")
    g.hands[1] = ["wild"]
    rewards, term, trunc = g.step("play:wild")
    assert not term and g.state()["phase"] == "color"
    rewards, term, trunc = g.step("color:blue")
    assert term
    assert rewards == [-0.28, 0.56, -0.28]


def test_match_mode_next_round_and_lowest():
    p1 = ["red:1", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]
    chance = ScriptedChance(0, decks=[list(FULL_DECK)])
    g = game(3, [H_A, p1, H_C], "red:5", episode="match", scoring="lowest", target_score=20,
             chance=chance)
    g.hands[1] = ["red:1"]
    rewards, term, trunc = g.step("play:red:1")
    # lowest: player_0 28, player_2 28 -> match over (>= 20), player_1 (0) wins
    assert term and rewards == [-1.0, 1.0, -1.0]
    assert g.state()["scores"] == {"player_0": 28, "player_1": 0, "player_2": 28}

    chance = ScriptedChance(0, decks=[list(FULL_DECK)])
    g = game(3, [H_A, p1, H_C], "red:5", episode="match", target_score=500, chance=chance)
    g.hands[1] = ["red:1"]
    rewards, term, trunc = g.step("play:red:1")
    assert not term and rewards == [0.0, 0.0, 0.0]
    s = g.state()
    assert s["round"] == 2 and s["dealer"] == "player_1" and s["scores"]["player_1"] == 56
    # FULL_DECK unshuffled: dealing starts at player_2
    assert s["hands"]["player_2"][0] == "red:0"
    assert s["phase"] in ("play", "color")


def test_truncation():
    g = game(3, [H_A, H_B, H_C], "red:5", max_turns=3)
    assert g.step("draw")[1:] == (False, False)
    if g.state()["phase"] == "drawn":
        g.step("keep")
    else:
        g.step("draw")
    rewards, term, trunc = g.step(sorted(g.legal_actions())[0])
    assert trunc and not term and rewards == [0.0, 0.0, 0.0]
    assert g.state()["phase"] == "over" and g.state()["current"] is None


def test_illegal_action_changes_nothing():
    g = game(3, [H_A, H_B, H_C], "red:5")
    before = g.state()
    with pytest.raises(ValueError):
        g.step("play:red:0")
    with pytest.raises(ValueError):
        g.step("bogus")
    assert g.state() == before


def test_bad_options():
    with pytest.raises(ValueError, match="uno_catch"):
        ReferenceGame(2, SeededChance(0), uno_catch="sometimes")
    with pytest.raises(ValueError, match="colour_blind"):
        ReferenceGame(2, SeededChance(0), colour_blind=True)
    with pytest.raises(ValueError):
        ReferenceGame(11, SeededChance(0))
    g = ReferenceGame(2, SeededChance(0))
    with pytest.raises(ValueError):
        g.reset(deck=list(FULL_DECK)[:-1] + ["red:0"])


@pytest.mark.parametrize("n", [2, 3, 4, 7, 10])
def test_random_play_invariants(n):
    for seed in range(15):
        rules = dict(
            episode="match" if seed % 2 else "round",
            reward="points" if seed % 3 == 0 else "win",
            uno_catch=("window", "always", "off")[seed % 3],
            wd4_bluffing=seed % 4 != 1,
            voluntary_draw=seed % 5 != 2,
            scoring="lowest" if seed % 4 == 0 else "winner",
            target_score=200,
        )
        g = ReferenceGame(n, SeededChance(seed), **rules)
        g.reset()
        rng = random.Random(seed)
        done = False
        while not done:
            acts = g.legal_actions()
            assert acts and acts <= set(ACTION_LABELS)
            plays = sorted(a for a in acts if a.startswith("play:"))
            if "uno" in acts and rng.random() < 0.5:
                a = "uno"
            elif plays:
                a = rng.choice(plays)
            else:
                a = rng.choice(sorted(acts))
            rewards, term, trunc = g.step(a)
            s = g.state()
            cards = sum(len(h) for h in s["hands"].values()) + len(s["draw_pile"]) + len(s["discard"])
            assert cards == 112
            assert s["top"] == s["discard"][-1]
            done = term or trunc
            if not done:
                assert s["current"] is not None and s["phase"] != "over"
        assert s["phase"] == "over" and s["current"] is None and not g.legal_actions()
        assert term and any(r > 0 for r in rewards)


# ---------------------------------------------------------------- house rules (docs/rules.md §15)


def test_house_two_player_jump_on_a_skip_then_the_jumper_plays_again():
    # dealer 0: player_1 starts; each seat holds one red Skip
    hands = [["red:skip"] + H_A[1:], ["red:skip"] + H_B[1:]]
    g = game(2, hands, "red:3", jump_in=True)
    g.step("play:red:skip")  # player_0 is skipped, player_1 would play again
    s = g.state()
    assert s["phase"] == "jump" and s["current"] == "player_0"
    assert g.legal_actions() == {"play:red:skip", "pass"}
    g.step("play:red:skip")  # acts from player_0: player_1 is skipped
    s = g.state()
    assert s["phase"] == "play" and s["current"] == "player_0" and g.happened["jump play"] == 1


def test_house_zero_passes_every_hand_on_and_each_giver_knows_what_it_gave():
    hands = [H_A, ["red:0"] + H_B[1:], H_C]
    g = game(3, hands, "red:3", seven_zero=True)
    before = g.state()["hands"]
    g.step("play:red:0")  # player_1's hand goes to player_2, player_2's to player_0, player_0's to player_1
    s = g.state()
    assert s["hands"]["player_2"] == before["player_1"][1:]
    assert s["hands"]["player_0"] == before["player_2"] and s["hands"]["player_1"] == before["player_0"]
    assert s["current"] == "player_2" and s["phase"] == "play"
    assert g.revealed == {(1, 2): s["hands"]["player_2"], (2, 0): s["hands"]["player_0"], (0, 1): s["hands"]["player_1"]}


def test_house_challenge_on_a_stack_concerns_the_last_wild_draw_four():
    # player_1 holds no red (its Wild Draw Four is innocent); player_2 stacks while holding green: guilty
    g = game(3, [H_C, ["wild_draw4"] + H_A[1:], ["wild_draw4"] + H_B[1:]], "red:3", stacking="both")
    g.step("play:wild_draw4")
    g.step("color:green")
    assert g.state()["phase"] == "challenge" and g.state()["pending_draw"] == 4
    assert "play:wild_draw4" in g.legal_actions()
    g.step("play:wild_draw4")  # player_2 stacks on green while holding green cards
    g.step("color:blue")
    s = g.state()
    assert s["phase"] == "challenge" and s["current"] == "player_0" and s["pending_draw"] == 8
    g.step("challenge")
    s = g.state()
    assert len(s["hands"]["player_2"]) == 6 + 8 and s["pending_draw"] == 0
    assert s["current"] == "player_0" and s["phase"] == "play"
