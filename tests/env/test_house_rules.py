"""Scenario tests of the house rules (docs/rules.md §15), each on a stacked deck.

Every rule and every interaction §15 names gets a round dealt by
``hpuno_env.scenarios.stacked_deck`` (so the hands, the starting card and the
top of the draw pile are known), a few decisions through ``VectorEngine``, and
checks of ``game_state``, ``legal_mask``, events and observations against the
page. Conventions as in tests/env/test_scenarios.py: ``game(n, ...)`` deals with
dealer ``n - 1``, so ``player_0`` is dealt first and starts after a number
card; hands listed in full (seven cards) are exact.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import hpuno_env
from hpuno_env import ACTION_LABELS, CARD_LABELS, VectorEngine, kernel, observation_layout
from hpuno_env.cards import CARD_INDEX, DECK_COPIES, DECK_SIZES
from hpuno_env.scenarios import stacked_deck
from test_scenarios import P, act, acts, game, hand, legal, sizes, state  # the stacked-deck helpers

# ---------------------------------------------------------------- helpers


def current(eng) -> str:
    return state(eng)["current"]


def kinds(eng) -> list[int]:
    return [event[0] for event in eng.events(0)]


def view(eng, viewer: int, field: str, other: int | None = None) -> np.ndarray:
    """Field of viewer's observation; with other, the part about that seat (others count to the left)."""
    row = eng.observe(np.array([viewer], dtype=np.int64))[0]
    values = row[observation_layout(eng.num_players)[field]]
    if other is None:
        return values
    k = (other - viewer - 1) % eng.num_players
    per_seat = len(values) // (eng.num_players - 1)
    return values[k * per_seat:(k + 1) * per_seat]


def card_counts(labels) -> np.ndarray:
    counts = np.zeros(len(CARD_LABELS), np.int8)
    for label in labels:
        counts[CARD_INDEX[label]] += 1
    return counts


# Cards that never match a yellow number on top (no colour, number or symbol in common).
NOT_ON_YELLOW = ["green:skip", "green:skip", "blue:skip", "blue:skip", "green:reverse", "green:reverse",
                 "blue:reverse", "blue:reverse", "red:skip", "red:skip", "red:reverse", "red:reverse"]
# player_1's plays in play_down: yellow numbers, no 0 or 7 (Seven-O), none that player_0 holds.
PLAY_DOWN = ["yellow:1", "yellow:2", "yellow:3", "yellow:4", "yellow:6", "yellow:8"]


def play_down(keep: list[str], calls_uno: bool = True, then_draw: list[str] | None = None, **options) -> VectorEngine:
    """A 2-player round in which player_1 plays yellow numbers until it holds only ``keep``
    (one or two cards) while player_0 draws cards it cannot play; then player_0 is to act,
    with a yellow number (``yellow:8`` or ``yellow:6``) on top.

    player_0 holds red:draw2, yellow:draw2, yellow:skip, yellow:9 x2, green:9, blue:9 (and only
    draws). With calls_uno, player_1 calls UNO before the play that leaves it one card.
    The draw pile goes on with ``then_draw`` (default: more cards no one can play on yellow)."""
    plays = PLAY_DOWN[: 7 - len(keep)]
    pile = NOT_ON_YELLOW[: len(plays)] + (NOT_ON_YELLOW[len(plays):] if then_draw is None else then_draw)
    eng = game(2, hands=[["red:draw2", "yellow:draw2", "yellow:skip", "yellow:9", "yellow:9", "green:9", "blue:9"],
                         plays + keep],
               starter="yellow:5", draw_pile=pile, **options)
    for card in plays:
        act(eng, "draw")  # player_0 draws a card it cannot play: the turn ends
        assert current(eng) == P(1)
        if calls_uno and len(hand(eng, 1)) == 2:
            act(eng, "uno")
        act(eng, f"play:{card}")
    assert current(eng) == P(0) and state(eng)["phase"] == "play" and sorted(hand(eng, 1)) == sorted(keep)
    return eng


# ---------------------------------------------------------------- options


@pytest.mark.parametrize("name, value", [
    ("deck", "muggle"), ("deck", 108), ("stacking", "all"), ("stacking", True), ("jump_in", "yes"), ("jump_in", 1),
    ("seven_zero", None), ("draw_until_playable", 0), ("forced_play", "True"),
])
def test_a_bad_house_rule_value_is_a_value_error_naming_it(name, value):
    with pytest.raises(ValueError, match=name):
        VectorEngine(num_games=1, num_players=2, **{name: value})
    with pytest.raises(ValueError, match=name):
        hpuno_env.raw_env(num_players=2, **{name: value})


def test_every_house_rule_is_off_by_default():
    options = hpuno_env.RulesOptions()
    assert (options.deck, options.stacking, options.jump_in, options.seven_zero,
            options.draw_until_playable, options.forced_play) == ("harry_potter", "none", False, False, False, False)


def test_every_env_takes_the_house_rules():
    """The AEC env, the flat env, both vector envs and the RLlib env pass the options to the engine."""
    from hpuno_env.flat_env import flat_env
    from hpuno_env.rllib import HPUnoMultiAgentEnv
    from hpuno_env.gym_env import HPUnoGymVectorEnv
    from hpuno_env.vector_env import HPUnoVecEnv

    rules = {"deck": "classic", "stacking": "mixed", "jump_in": True, "seven_zero": True,
             "draw_until_playable": True, "forced_play": True}
    engines = [
        hpuno_env.raw_env(num_players=3, **rules).engine,
        hpuno_env.env(num_players=3, **rules).unwrapped.engine,
        flat_env(num_players=3, **rules).unwrapped.engine,
        HPUnoVecEnv(num_envs=2, num_players=3, **rules).batch.engine,
        HPUnoGymVectorEnv(num_envs=2, num_players=3, **rules).batch.engine,
        HPUnoMultiAgentEnv({"num_players": 3, **rules}).games.engine,
    ]
    for engine in engines:
        assert {key: getattr(engine.options, key) for key in rules} == rules
    for make in (lambda: HPUnoVecEnv(num_envs=2, num_players=2, stacking="some"),
                 lambda: HPUnoMultiAgentEnv({"num_players": 2, "jump_in": "no"}),
                 lambda: flat_env(num_players=2, deck="wizard")):
        with pytest.raises(ValueError, match="stacking|jump_in|deck"):
            make()


# ---------------------------------------------------------------- the classic deck (§15.1)


def test_classic_deck_has_108_cards_and_no_sorting_hat():
    eng = VectorEngine(num_games=64, num_players=4, seed=3, deck="classic", max_turns=300)
    eng.reset()
    rng = np.random.default_rng(0)
    for _ in range(400):
        s = eng.state
        assert (s.hands.sum(axis=(1, 2)) + s.draw_count + s.discard_count == 108).all()
        assert s.hands[:, :, CARD_INDEX["sorting_hat"]].sum() == 0
        mask = eng.legal_mask()
        assert not mask[:, ACTION_LABELS.index("play:sorting_hat")].any()
        assert not mask[:, ACTION_LABELS.index("target:1"):ACTION_LABELS.index("target:9") + 1].any()
        eng.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    deck = eng.round_deck(0)
    assert len(deck) == 108 and Counter(deck) == Counter(
        {label: int(DECK_COPIES["classic"][i]) for i, label in enumerate(CARD_LABELS) if DECK_COPIES["classic"][i]})


def test_classic_deck_stacked_deals_and_refuses_a_harry_potter_deck():
    deck = stacked_deck(3, 2, hands=[["red:7", "wild"]], starter="blue:3", draw_pile=["green:4"], deck="classic")
    assert len(deck) == DECK_SIZES["classic"] == 108 and "sorting_hat" not in deck
    eng = VectorEngine(num_games=1, num_players=3, seed=0, deck="classic")
    eng.reset(options={"deck": deck, "dealer": 2})
    assert {"red:7", "wild"} <= set(hand(eng, 0)) and state(eng)["top"] == "blue:3" and state(eng)["draw_pile"][0] == "green:4"
    with pytest.raises(ValueError, match="expected 108 cards"):
        eng.reset(options={"deck": stacked_deck(3, 2)})
    with pytest.raises(ValueError, match="sorting_hat"):
        eng.reset(options={"deck": deck[:-1] + ["sorting_hat"]})
    with pytest.raises(ValueError, match="sorting_hat"):
        stacked_deck(3, 2, hands=[["sorting_hat"]], deck="classic")
    harry_potter = VectorEngine(num_games=1, num_players=3, seed=0)
    with pytest.raises(ValueError, match="expected 112 cards"):
        harry_potter.reset(options={"deck": deck})


# ---------------------------------------------------------------- the pending draw


def test_pending_draw_counts_a_draw_two_until_drawn_also_without_stacking():
    """§15.2: from the play to the draw, through the catch window; a starting Draw Two never sets it."""
    eng = play_down(["yellow:draw2", "green:4"], calls_uno=False)
    act(eng, "draw")
    assert state(eng)["pending_draw"] == 0
    act(eng, "play:yellow:draw2")  # one card left, no call: the catch window comes before the draw
    assert (current(eng), state(eng)["phase"], state(eng)["pending_draw"]) == (P(0), "catch", 2)
    assert view(eng, 0, "pending_draw").tolist() == [2]
    before = sizes(eng)[0]
    act(eng, "pass")
    assert state(eng)["pending_draw"] == 0 and sizes(eng)[0] == before + 2 and current(eng) == P(1)

    eng = game(2, hands=[["red:draw2", "blue:4", "green:6"]], starter="red:5")
    act(eng, "play:red:draw2")
    assert state(eng)["pending_draw"] == 0 and current(eng) == P(0) and sizes(eng) == [6, 9]
    start = game(2, starter="red:draw2")
    assert state(start)["pending_draw"] == 0 and sizes(start) == [9, 7]


def test_pending_draw_counts_a_wild_draw_four_through_colour_catch_and_challenge():
    eng = play_down(["wild_draw4", "blue:4"], calls_uno=False)
    act(eng, "draw")
    act(eng, "play:wild_draw4")
    assert state(eng)["phase"] == "color" and state(eng)["pending_draw"] == 4
    assert view(eng, 1, "pending_draw")[0] == 4 and view(eng, 0, "pending_draw")[0] == 4
    act(eng, "color:blue")
    assert state(eng)["phase"] == "catch" and state(eng)["pending_draw"] == 4
    act(eng, "pass")
    assert state(eng)["phase"] == "challenge" and state(eng)["pending_draw"] == 4
    act(eng, "accept")
    assert state(eng)["pending_draw"] == 0


# ---------------------------------------------------------------- stacking (§15.2)

D2_ON_D2 = {"draw2", "both", "mixed"}
W4_ON_W4 = {"draw4", "both", "mixed"}


@pytest.mark.parametrize("mode", ["none", "draw2", "draw4", "both", "mixed"])
def test_each_stacking_mode_facing_a_draw_two(mode):
    eng = game(3, hands=[["red:draw2"], ["blue:draw2", "wild_draw4", "green:1", "green:2", "green:3", "yellow:1", "yellow:2"]],
               starter="red:5", stacking=mode)
    act(eng, "play:red:draw2")
    expected = ({"play:blue:draw2"} if mode in D2_ON_D2 else set()) | ({"play:wild_draw4"} if mode == "mixed" else set())
    if expected:
        assert state(eng)["phase"] == "stack" and current(eng) == P(1) and state(eng)["pending_draw"] == 2
        assert legal(eng) == expected | {"accept"}
        assert view(eng, 1, "house_phase").tolist() == [1, 0] and not view(eng, 1, "phase").any()
    else:  # nothing may be stacked: no decision, player_1 draws at once and is skipped
        assert current(eng) == P(2) and state(eng)["phase"] == "play" and sizes(eng)[1] == 9


@pytest.mark.parametrize("mode", ["none", "draw2", "draw4", "both", "mixed"])
def test_each_stacking_mode_facing_a_wild_draw_four(mode):
    eng = game(3, hands=[["wild_draw4"], ["blue:draw2", "wild_draw4", "green:1", "green:2", "green:3", "yellow:1", "yellow:2"]],
               starter="red:5", stacking=mode)
    acts(eng, "play:wild_draw4", "color:red")
    assert state(eng)["phase"] == "challenge" and current(eng) == P(1)
    assert legal(eng) == {"challenge", "accept"} | ({"play:wild_draw4"} if mode in W4_ON_W4 else set())
    rules = view(eng, 1, "house_rules").tolist()
    assert rules[1:4] == [mode in D2_ON_D2, mode in W4_ON_W4, mode == "mixed"] and rules[0] == 0


def test_a_stack_goes_round_and_the_first_who_does_not_stack_takes_it_all():
    eng = game(3, hands=[["red:draw2", "blue:draw2"], ["red:draw2"], ["green:draw2"]], starter="red:5", stacking="draw2")
    act(eng, "play:red:draw2")
    act(eng, "play:red:draw2")  # player_1 stacks the other red Draw Two: 4 pending, player_2 faces it
    assert (current(eng), state(eng)["phase"], state(eng)["pending_draw"]) == (P(2), "stack", 4)
    assert kernel.EV_STACK in kinds(eng)
    act(eng, "play:green:draw2")
    assert (current(eng), state(eng)["pending_draw"]) == (P(0), 6)
    assert legal(eng) == {"play:blue:draw2", "accept"}
    act(eng, "accept")  # player_0 takes the whole stack and is skipped
    assert sizes(eng) == [6 + 6, 6, 6] and state(eng)["pending_draw"] == 0
    assert (current(eng), state(eng)["phase"]) == (P(1), "play")


def test_a_player_with_nothing_to_stack_draws_the_whole_stack_at_once():
    eng = game(3, hands=[["red:draw2"], ["blue:draw2"], ["green:1", "green:2", "green:3", "green:4", "green:5", "green:6", "green:7"]],
               starter="red:5", stacking="both")
    acts(eng, "play:red:draw2", "play:blue:draw2")
    assert (current(eng), state(eng)["phase"]) == (P(0), "play")  # player_2 drew 4 at once and was skipped
    assert sizes(eng) == [6, 6, 11] and state(eng)["pending_draw"] == 0


def test_accepting_a_stack_skips_the_acceptor_even_after_an_earlier_wild_draw_four_of_theirs():
    """A regression: the acceptor had played the round's last Wild Draw Four."""
    eng = game(2, hands=[["wild_draw4", "green:5", "red:draw2", "blue:1", "blue:2", "blue:3", "blue:4"],
                         ["green:draw2", "yellow:1", "yellow:2", "yellow:3", "yellow:4", "yellow:5", "yellow:6"]],
               starter="green:9", stacking="draw2")
    acts(eng, "play:wild_draw4", "color:green", "accept")  # player_1 draws 4 and is skipped
    assert current(eng) == P(0)
    act(eng, "play:green:5")
    act(eng, "play:green:draw2")
    assert (current(eng), state(eng)["phase"]) == (P(0), "stack")
    act(eng, "accept")
    assert (current(eng), state(eng)["phase"]) == (P(1), "play") and sizes(eng)[0] == 5 + 2


def test_a_wild_draw_four_on_a_draw_two_only_when_mixed_and_never_a_draw_two_on_it():
    eng = game(3, hands=[["red:draw2"], ["wild_draw4"], ["blue:draw2", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]],
               starter="red:5", stacking="mixed")
    acts(eng, "play:red:draw2", "play:wild_draw4", "color:blue")
    assert (current(eng), state(eng)["phase"], state(eng)["pending_draw"]) == (P(2), "challenge", 6)
    assert legal(eng) == {"challenge", "accept"}  # a Draw Two never goes on a Wild Draw Four
    act(eng, "accept")
    assert sizes(eng)[2] == 13 and current(eng) == P(0)


def test_a_stacked_wild_draw_four_without_bluffing_needs_no_card_of_the_colour():
    """§15.2 Decision: with wd4_bluffing=False, phase "challenge" has accept and the stack play only."""
    no_red = ["wild_draw4", "green:7", "green:8", "yellow:7", "yellow:8", "blue:7", "blue:8"]
    eng = game(3, hands=[no_red, ["wild_draw4", "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]],
               starter="red:5", stacking="draw4", wd4_bluffing=False)
    acts(eng, "play:wild_draw4", "color:blue")
    assert state(eng)["phase"] == "challenge" and legal(eng) == {"accept", "play:wild_draw4"}
    holding_blue = game(3, hands=[no_red, ["wild_draw4", "blue:1", "green:2", "green:3", "green:4", "green:5", "green:6"]],
                        starter="red:5", stacking="draw4", wd4_bluffing=False)
    acts(holding_blue, "play:wild_draw4", "color:blue")  # player_1 holds blue: nothing to stack, draws 4 at once
    assert (current(holding_blue), state(holding_blue)["phase"]) == (P(2), "play") and sizes(holding_blue)[1] == 11


def stacked_wild_draw_fours(stacker_holds_current: bool) -> VectorEngine:
    """player_0 plays an innocent Wild Draw Four naming blue; player_1 stacks one, guilty when it holds blue."""
    second = ["wild_draw4", "blue:1" if stacker_holds_current else "green:1", "green:2", "green:3", "green:4", "green:5", "green:6"]
    eng = game(3, hands=[["wild_draw4", "red:1", "red:2", "red:3", "red:4", "red:6", "red:7"], second,
                         ["yellow:1", "yellow:2", "yellow:3", "yellow:4", "yellow:5", "yellow:6", "yellow:7"]],
               starter="green:9", stacking="draw4")
    acts(eng, "play:wild_draw4", "color:blue", "play:wild_draw4", "color:yellow")
    assert (current(eng), state(eng)["phase"], state(eng)["pending_draw"]) == (P(2), "challenge", 8)
    assert view(eng, 2, "wd4_prev_color").tolist() == [0, 0, 0, 1]  # blue was current before the stacked card
    return eng


def test_a_challenge_on_a_stack_guilty():
    """§15.2: the last Wild Draw Four's player draws the whole pending draw; the challenger plays."""
    eng = stacked_wild_draw_fours(stacker_holds_current=True)
    shown = hand(eng, 1)
    act(eng, "challenge")
    assert sizes(eng) == [6, 6 + 8, 7] and state(eng)["pending_draw"] == 0
    assert (current(eng), state(eng)["phase"]) == (P(2), "play")
    assert view(eng, 2, "revealed_seen", other=1).tolist() == [1]
    assert (view(eng, 2, "revealed_hands", other=1) == card_counts(shown)).all()


def test_a_challenge_on_a_stack_innocent():
    """§15.2: the challenger draws the pending draw plus 2 and is skipped."""
    eng = stacked_wild_draw_fours(stacker_holds_current=False)
    act(eng, "challenge")
    assert sizes(eng) == [6, 6, 7 + 10] and state(eng)["pending_draw"] == 0
    assert (current(eng), state(eng)["phase"]) == (P(0), "play")


def test_stacking_your_last_card_ends_the_round_and_the_next_player_draws_the_stack():
    eng = play_down(["red:draw2"], stacking="draw2")
    act(eng, "play:yellow:draw2")
    assert (current(eng), state(eng)["phase"], legal(eng)) == (P(1), "stack", {"play:red:draw2", "accept"})
    rewards, terminated, _ = act(eng, "play:red:draw2")
    assert terminated and rewards.tolist() == [-1.0, 1.0]
    assert sizes(eng) == [7 + 6 - 1 + 4, 0] and state(eng)["pending_draw"] == 0  # player_0 drew 6 by choice, then the 4


def test_uno_before_a_stack_play_and_a_catch_window_after_one_without_it():
    called = play_down(["red:draw2", "blue:draw2"], stacking="draw2")
    act(called, "play:yellow:draw2")
    assert legal(called) == {"play:red:draw2", "play:blue:draw2", "accept", "uno"}
    act(called, "uno")
    assert (current(called), state(called)["phase"]) == (P(1), "stack")
    act(called, "play:red:draw2")
    assert (current(called), state(called)["phase"], state(called)["pending_draw"]) == (P(0), "stack", 4)

    uncalled = play_down(["red:draw2", "blue:draw2"], stacking="draw2")
    acts(uncalled, "play:yellow:draw2", "play:blue:draw2")
    assert (current(uncalled), state(uncalled)["phase"]) == (P(0), "catch")  # before player_0 faces the stack
    act(uncalled, "catch")
    assert sizes(uncalled)[1] == 3 and (current(uncalled), state(uncalled)["phase"]) == (P(0), "stack")


def test_a_starting_draw_two_is_never_stacked_on():
    eng = game(2, hands=[["blue:draw2"]], starter="red:draw2", stacking="both")
    assert (current(eng), state(eng)["phase"], sizes(eng)) == (P(1), "play", [9, 7])


# ---------------------------------------------------------------- jump-in (§15.3)


def test_a_jump_on_a_skip_with_two_players():
    eng = game(2, hands=[["red:skip"], ["red:skip"]], starter="red:5", jump_in=True)
    act(eng, "play:red:skip")  # player_1 is skipped; player_0 would play again
    assert (current(eng), state(eng)["phase"], legal(eng)) == (P(1), "jump", {"play:red:skip", "pass"})
    assert view(eng, 1, "house_phase").tolist() == [0, 1]
    act(eng, "play:red:skip")  # from player_1's seat: player_0 is skipped, player_1 plays on
    assert (current(eng), state(eng)["phase"]) == (P(1), "play") and kernel.EV_JUMP in kinds(eng)
    passed = game(2, hands=[["red:skip"], ["red:skip"]], starter="red:5", jump_in=True)
    acts(passed, "play:red:skip", "pass")
    assert (current(passed), state(passed)["phase"]) == (P(0), "play")


def test_a_jump_on_a_skip_with_four_players_acts_from_the_jumper():
    eng = game(4, hands=[["red:skip"], [], [], ["red:skip"]], starter="red:5", jump_in=True)
    act(eng, "play:red:skip")  # player_1 skipped, player_2 next: player_3 may jump
    assert (current(eng), state(eng)["phase"]) == (P(3), "jump")
    act(eng, "play:red:skip")  # skips player_0 (after player_3); player_2 lost its turn
    assert (current(eng), state(eng)["phase"]) == (P(1), "play")
    skipped_jumps = game(4, hands=[["red:skip"], ["red:skip"]], starter="red:5", jump_in=True)
    act(skipped_jumps, "play:red:skip")
    assert current(skipped_jumps) == P(1)  # the skipped seat may be the jumper
    act(skipped_jumps, "play:red:skip")
    assert current(skipped_jumps) == P(3)


def test_a_jump_on_a_draw_two_with_two_players():
    eng = game(2, hands=[["red:draw2"], ["red:draw2"]], starter="red:5", jump_in=True)
    act(eng, "play:red:draw2")  # player_1 draws 2 and is skipped, then may jump
    assert (current(eng), state(eng)["phase"], sizes(eng), state(eng)["pending_draw"]) == (P(1), "jump", [6, 9], 0)
    act(eng, "play:red:draw2")
    assert sizes(eng) == [8, 8] and (current(eng), state(eng)["phase"]) == (P(1), "play")


def test_a_jump_on_a_draw_two_with_four_players():
    eng = game(4, hands=[["red:draw2"], [], [], ["red:draw2"]], starter="red:5", jump_in=True)
    act(eng, "play:red:draw2")
    assert (current(eng), state(eng)["phase"], sizes(eng)) == (P(3), "jump", [6, 9, 7, 7])
    act(eng, "play:red:draw2")  # player_0 (after the jumper) draws 2 and is skipped
    assert sizes(eng) == [8, 9, 7, 6] and current(eng) == P(1)


def test_a_jump_on_a_reverse_with_two_players():
    eng = game(2, hands=[["red:reverse"], ["red:reverse"]], starter="red:5", jump_in=True)
    act(eng, "play:red:reverse")  # with two players a Reverse skips: player_0 would go again
    assert (current(eng), state(eng)["phase"], state(eng)["direction"]) == (P(1), "jump", -1)
    act(eng, "play:red:reverse")
    assert (current(eng), state(eng)["phase"], state(eng)["direction"]) == (P(1), "play", 1)


def test_a_jump_on_a_reverse_with_four_players():
    eng = game(4, hands=[["red:reverse"], ["red:reverse"]], starter="red:5", jump_in=True)
    act(eng, "play:red:reverse")  # play goes right: player_3 is next, player_1 may jump
    assert (current(eng), state(eng)["phase"], state(eng)["direction"]) == (P(1), "jump", -1)
    act(eng, "play:red:reverse")  # flips again from player_1: player_2 plays, player_3 lost its turn
    assert (current(eng), state(eng)["phase"], state(eng)["direction"]) == (P(2), "play", 1)


def test_no_jump_for_the_next_player_the_cards_own_player_a_zero_or_a_wild():
    next_holds = game(3, hands=[["red:5"], ["red:5"]], starter="red:9", jump_in=True)
    act(next_holds, "play:red:5")
    assert (current(next_holds), state(next_holds)["phase"]) == (P(1), "play")
    own_copy = game(3, hands=[["red:5", "red:5"]], starter="red:9", jump_in=True)
    act(own_copy, "play:red:5")
    assert (current(own_copy), state(own_copy)["phase"]) == (P(1), "play")
    two_players = game(2, hands=[["red:5"], ["red:5"]], starter="red:9", jump_in=True)
    act(two_players, "play:red:5")
    assert state(two_players)["phase"] == "play"  # with two players a number is never jumped
    wild = game(3, hands=[["wild"], [], ["wild"]], starter="red:9", jump_in=True)
    acts(wild, "play:wild", "color:blue")
    assert (current(wild), state(wild)["phase"]) == (P(1), "play")


def test_the_starting_card_is_never_jumped():
    eng = game(3, hands=[[], [], ["red:5"]], starter="red:5", jump_in=True)
    assert (current(eng), state(eng)["phase"]) == (P(0), "play")


def test_a_jump_window_after_a_drawn_card_is_played_but_not_after_keep():
    played = game(3, hands=[["blue:1", "blue:2", "blue:3", "blue:4", "green:1", "green:2", "green:3"], [], ["red:6"]],
                  starter="red:9", draw_pile=["red:6"], jump_in=True)
    acts(played, "draw", "play:red:6")
    assert (current(played), state(played)["phase"]) == (P(2), "jump")
    kept = game(3, hands=[["blue:1", "blue:2", "blue:3", "blue:4", "green:1", "green:2", "green:3"], [], ["red:6"]],
                starter="red:9", draw_pile=["red:6"], jump_in=True)
    acts(kept, "draw", "keep")
    assert (current(kept), state(kept)["phase"]) == (P(1), "play")


def test_no_jump_while_a_stack_is_open_and_one_after_it_is_taken():
    eng = game(4, hands=[["red:draw2"], ["blue:draw2"], [], ["red:draw2"]], starter="red:5", jump_in=True, stacking="draw2")
    act(eng, "play:red:draw2")
    assert (current(eng), state(eng)["phase"]) == (P(1), "stack")  # player_3's copy waits
    act(eng, "accept")
    assert (current(eng), state(eng)["phase"]) == (P(3), "jump")
    act(eng, "play:red:draw2")  # player_0 faces it: nothing to stack, draws at once
    assert sizes(eng)[0] == 8 and current(eng) == P(1)


def test_a_draw_two_covered_by_a_stacked_wild_draw_four_is_not_jumped():
    eng = game(4, hands=[["red:draw2", "red:draw2"], ["wild_draw4"]], starter="red:5", jump_in=True, stacking="mixed")
    acts(eng, "play:red:draw2", "play:wild_draw4", "color:green", "accept")
    # player_2 took 6 and was skipped; player_0's red Draw Two would match the covered card: no jump
    assert (current(eng), state(eng)["phase"], sizes(eng)[2]) == (P(3), "play", 13)


def test_jumping_with_the_last_card_ends_the_round():
    eng = play_down(["yellow:skip"], jump_in=True)
    act(eng, "play:yellow:skip")  # player_1 is skipped and holds the other yellow Skip, its last card
    assert (current(eng), state(eng)["phase"], legal(eng)) == (P(1), "jump", {"play:yellow:skip", "pass"})
    rewards, terminated, _ = act(eng, "play:yellow:skip")
    assert terminated and rewards.tolist() == [-1.0, 1.0] and state(eng)["phase"] == "over"


def test_a_jump_with_an_uno_call_and_without_one_then_its_catch_window():
    called = play_down(["yellow:skip", "blue:4"], jump_in=True)
    act(called, "play:yellow:skip")
    assert legal(called) == {"play:yellow:skip", "pass", "uno"}
    acts(called, "uno", "play:yellow:skip")  # the jump skips player_0: player_1 plays on, its call standing
    assert (current(called), state(called)["phase"], sizes(called)[1]) == (P(1), "play", 1)

    uncalled = play_down(["yellow:skip", "blue:4"], jump_in=True)
    acts(uncalled, "play:yellow:skip", "play:yellow:skip")
    assert (current(uncalled), state(uncalled)["phase"]) == (P(0), "catch")  # a jump is a turn
    act(uncalled, "catch")
    assert sizes(uncalled)[1] == 3 and (current(uncalled), state(uncalled)["phase"]) == (P(1), "play")


# ---------------------------------------------------------------- Seven-O (§15.4)


def test_a_seven_swaps_hands_with_the_chosen_player():
    eng = game(3, hands=[["red:7", "blue:1"], ["green:1"], ["yellow:1", "yellow:2"]], starter="red:5", seven_zero=True)
    before = {seat: hand(eng, seat) for seat in range(3)}
    act(eng, "play:red:7")
    assert (current(eng), state(eng)["phase"], legal(eng)) == (P(0), "target", {"target:1", "target:2"})
    act(eng, "target:2")
    mine = list(before[0])
    mine.remove("red:7")
    assert hand(eng, 0) == before[2] and sorted(hand(eng, 2)) == sorted(mine) and hand(eng, 1) == before[1]
    assert (kernel.EV_SWAP, 0, 2, 0) in eng.events(0) and current(eng) == P(1)
    # Each knows the hand it gave away (§15.4 Decision), the third seat knows nothing new.
    assert (view(eng, 0, "revealed_hands", other=2) == card_counts(mine)).all()
    assert (view(eng, 2, "revealed_hands", other=0) == card_counts(before[2])).all()
    assert not view(eng, 1, "revealed_seen").any()


def test_a_seven_with_two_players_swaps_without_a_decision():
    eng = game(2, hands=[["red:7"]], starter="red:5", seven_zero=True)
    before = hand(eng, 1)
    act(eng, "play:red:7")
    assert hand(eng, 0) == before and len(hand(eng, 1)) == 6 and current(eng) == P(1)


def test_a_seven_swap_carries_the_revealed_hand_and_the_lacks_colour_marks():
    """§15.4: what is known about a hand moves with it, to the seat that now holds it."""
    eng = game(3, hands=[["wild_draw4", "blue:1", "blue:2", "green:3", "green:4", "yellow:1", "yellow:2"],
                         ["red:6", "blue:6", "blue:7", "blue:8", "yellow:6", "yellow:7", "yellow:8"],
                         ["red:1", "green:7", "green:8", "green:9", "yellow:3", "yellow:4", "yellow:9"]],
               starter="red:5", draw_pile=["blue:skip"], seven_zero=True)
    act(eng, "draw")  # player_0 draws blue:skip on red and cannot play it: it lacks red
    assert view(eng, 1, "other_lacks_color", other=0).tolist() == [1, 0, 0, 0]
    acts(eng, "play:red:6", "play:red:1", "play:wild_draw4", "color:green")
    shown = hand(eng, 0)  # as player_1 challenges
    act(eng, "challenge")  # innocent (player_0 held no red): player_1 draws 6, is skipped
    assert current(eng) == P(2) and (view(eng, 1, "revealed_hands", other=0) == card_counts(shown)).all()
    passed = hand(eng, 2)
    passed.remove("green:7")
    act(eng, "play:green:7")
    act(eng, "target:1")  # player_2 swaps with player_0 (one seat to its left)
    assert sorted(hand(eng, 2)) == sorted(shown) and sorted(hand(eng, 0)) == sorted(passed)
    # player_1's record of the shown hand is now about player_2, and player_0 has none any more
    assert view(eng, 1, "revealed_seen", other=2).tolist() == [1]
    assert (view(eng, 1, "revealed_hands", other=2) == card_counts(shown)).all()
    assert view(eng, 1, "revealed_seen", other=0).tolist() == [0]
    # the lacks-red mark went with player_0's old hand to player_2
    assert view(eng, 1, "other_lacks_color", other=2).tolist() == [1, 0, 0, 0]
    assert view(eng, 1, "other_lacks_color", other=0).tolist() == [0, 0, 0, 0]
    # the swappers know the hands they gave
    assert (view(eng, 2, "revealed_hands", other=0) == card_counts(passed)).all()
    assert (view(eng, 0, "revealed_hands", other=2) == card_counts(shown)).all()


def test_a_swap_carries_the_colour_last_chosen():
    eng = game(3, hands=[["blue:5"], ["blue:3"], ["blue:7"]], starter="red:5", seven_zero=True)
    act(eng, "play:blue:5")  # player_0 switched play into blue by the number
    act(eng, "play:blue:3")  # player_1 follows blue: chooses nothing
    assert view(eng, 1, "other_chose_color", other=0).tolist() == [0, 0, 0, 1]
    acts(eng, "play:blue:7", "target:1")  # player_2 swaps with player_0
    assert view(eng, 1, "other_chose_color", other=2).tolist() == [0, 0, 0, 1]
    assert view(eng, 1, "other_chose_color", other=0).tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("direction", [1, -1])
def test_a_zero_passes_every_hand_on_in_the_direction_of_play(direction):
    if direction == 1:
        eng = game(3, hands=[["red:0"], ["green:1"], ["yellow:1"]], starter="red:5", seven_zero=True)
        player = 0
    else:  # player_0 reverses: player_2 plays the Zero with play going right
        eng = game(3, hands=[["red:reverse"], ["green:1"], ["red:0"]], starter="red:5", seven_zero=True)
        act(eng, "play:red:reverse")
        player = 2
    before = {seat: hand(eng, seat) for seat in range(3)}
    before[player].remove("red:0")
    assert current(eng) == P(player)
    act(eng, "play:red:0")
    for seat in range(3):
        receiver = (seat + direction) % 3
        assert sorted(hand(eng, receiver)) == sorted(before[seat])
        # every player knows the hand it passed on
        assert view(eng, seat, "revealed_seen", other=receiver).tolist() == [1]
        assert (view(eng, seat, "revealed_hands", other=receiver) == card_counts(before[seat])).all()
    assert (kernel.EV_ROTATE, direction, 0, 0) in eng.events(0)
    assert current(eng) == P((player + direction) % 3)


@pytest.mark.parametrize("mode", ["window", "always"])
def test_a_swap_opens_no_catch_window(mode):
    """player_1 plays its 7 from two cards without calling UNO: the hands move, nobody is caught."""
    eng = play_down(["yellow:7", "blue:4"], calls_uno=False, seven_zero=True, uno_catch=mode)
    act(eng, "draw")
    act(eng, "play:yellow:7")
    assert sizes(eng) == [1, 7 + 5 + 1]  # player_0 now holds the blue 4; no penalty under any mode
    assert (current(eng), state(eng)["phase"]) == (P(0), "play") and kernel.EV_CATCH not in kinds(eng)


def test_a_swap_clears_the_uno_calls():
    eng = play_down(["yellow:7", "blue:4"], seven_zero=True)
    act(eng, "draw")
    act(eng, "uno")
    assert state(eng)["uno_called"][P(1)]
    act(eng, "play:yellow:7")
    assert not any(state(eng)["uno_called"].values())


def test_a_last_seven_ends_the_round_without_a_swap():
    eng = play_down(["yellow:7"], seven_zero=True)
    act(eng, "draw")
    rewards, terminated, _ = act(eng, "play:yellow:7")
    assert terminated and rewards.tolist() == [-1.0, 1.0] and sizes(eng)[1] == 0
    assert kernel.EV_SWAP not in kinds(eng)


def test_a_starting_seven_or_zero_swaps_nothing():
    for starter in ("red:7", "red:0"):
        eng = game(3, hands=[["blue:1"], ["green:1"], ["yellow:1"]], starter=starter, seven_zero=True)
        assert "blue:1" in hand(eng, 0) and "green:1" in hand(eng, 1) and state(eng)["phase"] == "play"


# ---------------------------------------------------------------- drawing until playable (§15.5) and forced play (§15.6)


def test_draw_until_playable_keeps_drawing_to_a_playable_card():
    eng = game(2, hands=[["blue:1", "blue:2", "blue:3", "green:1", "green:2", "green:3", "yellow:1"]],
               starter="red:5", draw_pile=["blue:7", "green:8", "red:9"], draw_until_playable=True)
    act(eng, "draw")
    assert (current(eng), state(eng)["phase"], legal(eng)) == (P(0), "drawn", {"play:red:9", "keep"})
    assert sizes(eng)[0] == 10 and [e[2] for e in eng.events(0) if e[0] == kernel.EV_DRAW] == [
        CARD_INDEX["blue:7"], CARD_INDEX["green:8"], CARD_INDEX["red:9"]]
    assert view(eng, 1, "other_lacks_color", other=0).tolist() == [1, 0, 0, 0]
    plain = game(2, hands=[["blue:1"]], starter="red:5", draw_pile=["blue:7", "green:8", "red:9"])
    act(plain, "draw")
    assert current(plain) == P(1) and sizes(plain)[0] == 8


# Ten players leave a draw pile of 41 cards; these cannot be played on a red 1 or a red 5.
NOT_ON_RED_1_OR_5 = [f"{color}:{rank}" for color in ("yellow", "green", "blue") for rank in (2, 3, 4, 6, 7, 8, 9)
                     for _ in range(2)][:41]


def test_draw_until_playable_when_nothing_is_left():
    eng = game(10, starter="red:5", draw_pile=NOT_ON_RED_1_OR_5, draw_until_playable=True, forced_play=True)
    assert len(state(eng)["draw_pile"]) == 41
    act(eng, "draw")  # 41 cards, none playable, and the discard pile is the starter alone: the turn ends
    assert sizes(eng)[0] == 48 and state(eng)["draw_pile"] == [] and current(eng) == P(1)
    assert state(eng)["phase"] == "play" and eng.events(0)[-1][:3] == (kernel.EV_DRAW, 0, -1)


def test_draw_until_playable_through_a_reshuffle():
    reds = ["red:1", "red:2", "red:3", "red:4", "red:6", "red:7", "red:8", "red:9", "red:2", "red:1"]
    eng = game(10, hands=[[red] for red in reds], starter="red:5", draw_pile=NOT_ON_RED_1_OR_5, draw_until_playable=True)
    for seat, red in enumerate(reds):
        assert current(eng) == P(seat)
        act(eng, f"play:{red}")
    act(eng, "draw")  # 41 unplayable cards, then the reshuffled discards: all red
    assert kernel.EV_RESHUFFLE in kinds(eng) and state(eng)["phase"] == "drawn" and current(eng) == P(0)
    drawn = [e[2] for e in eng.events(0) if e[0] == kernel.EV_DRAW]
    assert len(drawn) == 42 and CARD_LABELS[drawn[-1]].startswith("red:")
    assert sizes(eng)[0] == 6 + 42 and len(state(eng)["discard"]) == 1


def test_forced_play_makes_the_drawn_card_be_played():
    eng = game(2, hands=[["blue:1"]], starter="red:5", draw_pile=["red:9"], forced_play=True)
    act(eng, "draw")
    assert legal(eng) == {"play:red:9"}
    with pytest.raises(ValueError, match="illegal action"):
        eng.step(np.array([ACTION_LABELS.index("keep")]))
    assert "draw" in legal(game(2, hands=[["red:1"]], starter="red:5", forced_play=True))  # drawing stays a choice


def test_forced_play_with_an_uno_call():
    """player_1, one card left, draws a playable card: it must play it, and may call UNO first."""
    called = play_down(["blue:4"], forced_play=True, then_draw=["blue:reverse", "yellow:5"])
    act(called, "draw")
    act(called, "draw")
    assert (current(called), state(called)["phase"], legal(called)) == (P(1), "drawn", {"play:yellow:5", "uno"})
    acts(called, "uno", "play:yellow:5")
    assert (current(called), state(called)["phase"]) == (P(0), "play") and sizes(called)[1] == 1

    uncalled = play_down(["blue:4"], forced_play=True, then_draw=["blue:reverse", "yellow:5"])
    acts(uncalled, "draw", "draw", "play:yellow:5")
    assert (current(uncalled), state(uncalled)["phase"]) == (P(0), "catch")


def test_draw_until_playable_with_forced_play_plays_the_card_found():
    eng = game(2, hands=[["blue:1", "blue:2", "blue:3", "green:1", "green:2", "green:3", "yellow:1"]],
               starter="red:5", draw_pile=["blue:7", "green:8", "red:9"], draw_until_playable=True, forced_play=True)
    act(eng, "draw")
    assert legal(eng) == {"play:red:9"}
    act(eng, "play:red:9")
    assert state(eng)["top"] == "red:9" and current(eng) == P(1)


# ---------------------------------------------------------------- the observation (§15.9)


def test_the_observation_shows_the_rules_in_play():
    eng = game(2, deck="classic", stacking="both", jump_in=True, draw_until_playable=True)
    assert view(eng, 0, "house_rules").tolist() == [1, 1, 1, 0, 1, 0, 1, 0]
    assert not view(game(2), 0, "house_rules").any()


# ---------------------------------------------------------------- agents under other rules (§15.10)


def test_a_shipped_agent_of_layout_version_2_plays_under_house_rules_on_its_prefix():
    import agents
    from hpuno_env.encoding import observation_size_in_version

    policy = agents.load("ppo_2p", num_players=2)
    assert policy.describe()["observation"]["version"] == 2
    eng = VectorEngine(num_games=64, num_players=2, seed=5, stacking="both", jump_in=True, seven_zero=True)
    eng.reset()
    for _ in range(50):
        observations, masks = eng.observe(), eng.legal_mask()
        actions = policy.act(observations, masks)
        assert masks[np.arange(64), actions].all()
        # the version-3 fields never reach it: changing them changes nothing
        scrambled = observations.copy()
        scrambled[:, observation_size_in_version(2, 2):] = 1
        assert (policy.act(scrambled, masks) == actions).all()
        eng.step(actions)


def test_loading_an_agent_for_other_rules_warns_naming_them():
    import warnings

    import agents

    with pytest.warns(UserWarning, match=r"stacking='both' \(trained with 'none'\).*seven_zero=True"):
        agents.load("ppo_2p", num_players=2, rules_options={"stacking": "both", "seven_zero": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agents.load("ppo_2p", num_players=2, rules_options={"max_turns": 50, "episode": "match"})
        agents.load("ppo_2p", num_players=2)
        agents.load("heuristic", num_players=2, rules_options={"stacking": "both"})
    with pytest.raises(ValueError, match="stacking"):
        agents.load("ppo_2p", num_players=2, rules_options={"stacking": "sometimes"})


# ---------------------------------------------------------------- game records


def test_a_house_rules_game_on_the_classic_deck_is_recorded_and_replayed():
    from hpuno_env.records import Recorder, check_record, replay

    rules = {"deck": "classic", "stacking": "mixed", "jump_in": True, "seven_zero": True,
             "draw_until_playable": True, "forced_play": True}
    eng = VectorEngine(num_games=1, num_players=3, seed=4, auto_reset=False, max_turns=400, **rules)
    recorder = Recorder(eng)
    eng.reset()
    recorder.after_reset()
    rng = np.random.default_rng(1)
    states = [eng.game_state(0)]
    while eng.game_state(0)["phase"] != "over":
        mask = eng.legal_mask()[0]
        legal_actions = np.flatnonzero(mask)
        plays = legal_actions[legal_actions < 55]
        action = np.array([rng.choice(plays if len(plays) else legal_actions)])
        eng.step(action)
        recorder.after_step(action)
        states.append(eng.game_state(0))
    record = recorder.records[0]
    assert len(record["rounds"][0]["deck"]) == 108
    check_record(record)
    assert list(replay(record)) == states


def test_a_record_made_before_the_house_rules_replays_as_the_default_game():
    from hpuno_env.options import HOUSE_RULE_OPTIONS
    from hpuno_env.records import Recorder, check_record, replay

    eng = VectorEngine(num_games=1, num_players=2, seed=2, auto_reset=False, max_turns=300)
    recorder = Recorder(eng)
    eng.reset()
    recorder.after_reset()
    while eng.game_state(0)["phase"] != "over":
        action = np.array([np.flatnonzero(eng.legal_mask()[0])[0]])
        eng.step(action)
        recorder.after_step(action)
    record = recorder.records[0]
    final = eng.game_state(0)
    for name in HOUSE_RULE_OPTIONS:
        del record["options"][name]
    check_record(record)
    assert list(replay(record))[-1] == final
    del record["options"]["uno_penalty"]
    with pytest.raises(ValueError, match="uno_penalty"):
        check_record(record)


def test_a_draw_through_the_whole_pile_and_a_reshuffle_keeps_every_event():
    """Six seats play a red number each onto the red 5; the first then draws the 69 cards that do not play on a red 7,
    the discard pile is reshuffled, and the next card (red) plays: all 70 draws and the reshuffle are in the step's log."""
    played = ["red:1", "red:2", "red:3", "red:4", "red:6", "red:7"]
    sevens = [f"{color}:7" for color in ("yellow", "green", "blue") for _ in range(2)]
    unplayable = [f"{color}:{rank}" for color in ("yellow", "green", "blue")
                  for rank in ("0", "1", "2", "3", "4", "5", "6", "8", "9", "skip", "reverse", "draw2")
                  for _ in range(1 if rank == "0" else 2)]
    assert len(unplayable) == 69
    rest = (["red:0", "red:5", "red:8", "red:9", "red:1", "red:2", "red:3", "red:4", "red:6", "red:7", "red:8", "red:9"]
            + [f"red:{rank}" for rank in ("skip", "reverse", "draw2") for _ in range(2)]
            + ["wild"] * 4 + ["wild_draw4"] * 4 + ["sorting_hat"] * 4 + sevens)
    assert len(rest) == 36
    hands = [[played[seat], *rest[6 * seat: 6 * seat + 6]] for seat in range(6)]
    eng = game(6, hands=hands, starter="red:5", draw_pile=unplayable, draw_until_playable=True)
    for seat, card in enumerate(played):
        assert current(eng) == P(seat)
        act(eng, f"play:{card}")
    act(eng, "draw")
    drawn = [e[2] for e in eng.events(0) if e[0] == kernel.EV_DRAW]
    assert len(drawn) == 70 and [CARD_LABELS[c] for c in drawn[:69]] == unplayable
    assert CARD_LABELS[drawn[-1]].startswith("red:") and state(eng)["phase"] == "drawn"
    assert sorted(eng.last_reshuffle(0)) == ["red:1", "red:2", "red:3", "red:4", "red:5", "red:6"]  # all but the red 7
    assert sizes(eng)[0] == 6 + 70
