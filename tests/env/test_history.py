"""The round's public history in the observation (layout 4, field ``history``): scenarios on stacked decks, what
each seat sees, the cards it must never show, and a long comparison with ``history_model.HistoryModel``.

Events are written with absolute seats as ``(kind, seat, card, value)``; ``seen_by`` turns them into what a seat's
``history_events`` gives (seats counted to its left).
"""

from __future__ import annotations

import numpy as np
import pytest
from history_model import HistoryModel
from test_scenarios import act, acts, game, uno_game

from hpuno_env import CARD_LABELS, VectorEngine, kernel
from hpuno_env.encoding import HISTORY_KINDS, history_events, observation_layout
from hpuno_env.options import ALL_HOUSE_RULES
from hpuno_env.scenarios import stacked_deck

SEAT_VALUED = {"catch", "pass", "swap"}


def seen_by(events, viewer: int, num_players: int) -> list[tuple]:
    """Absolute-seat events as ``history_events`` gives them to viewer."""
    def left(seat):
        return None if seat is None else (seat - viewer) % num_players
    return [(kind, left(seat), card, left(value) if kind in SEAT_VALUED else value) for kind, seat, card, value in events]


def history_of(eng: VectorEngine, viewer: int) -> list[tuple]:
    return history_events(eng.observe(np.full(eng.num_games, viewer))[0], eng.num_players)


def assert_every_seat_sees(eng: VectorEngine, events) -> None:
    for viewer in range(eng.num_players):
        assert history_of(eng, viewer) == seen_by(events, viewer, eng.num_players), f"seat {viewer}"


def three_player_round() -> VectorEngine:
    """Seat 0 starts on a red 5; the draw pile starts with a yellow 9, a blue 2 and a red 2, four cards for a
    Wild Draw Four's penalty, a yellow 7 and a yellow 2."""
    deck = stacked_deck(3, 2, hands=[
        ["red:7", "sorting_hat", "blue:3", "green:3", "green:4", "yellow:4", "yellow:5"],
        ["green:2", "wild_draw4", "green:8", "blue:8", "yellow:8", "yellow:1", "blue:1"],
        ["wild", "blue:9", "blue:6", "green:6", "yellow:6", "yellow:3", "green:9"],
    ], starter="red:5", draw_pile=["yellow:9", "blue:2", "red:2", "green:1", "green:7", "blue:4", "blue:7", "yellow:7",
                                   "yellow:2"])
    eng = VectorEngine(1, 3, seed=0, auto_reset=False)
    eng.reset(options={"deck": deck, "dealer": 2})
    return eng


def test_a_round_as_each_seat_sees_it():
    eng = three_player_round()
    assert_every_seat_sees(eng, [])  # a fresh round: nothing yet
    assert (eng.observe()[0, observation_layout(3)["history"]] == 0).all()
    acts(eng, "play:red:7", "draw", "play:wild", "color:blue", "play:sorting_hat", "color:green", "target:1",
         "play:wild_draw4", "color:yellow", "challenge")
    # seat 1 drew a yellow 9 (not playable on a red 7); the Hat made it draw a blue 2 and a red 2; it bluffed
    # the Wild Draw Four holding green, so seat 2's challenge finds it guilty and it draws 4
    expected = [
        ("play", 0, "red:7", 0), ("draw", 1, None, 1), ("play", 2, "wild", 0), ("color", 2, None, 4),
        ("play", 0, "sorting_hat", 0), ("color", 0, None, 3), ("sorting_hat", 1, None, 2),
        ("play", 1, "wild_draw4", 0), ("color", 1, None, 2), ("challenge", 2, None, 2), ("forced_draw", 1, None, 4),
    ]
    assert_every_seat_sees(eng, expected)
    # written out for seat 2: seat 0 is one to its left, seat 1 two
    assert history_of(eng, 2)[:4] == [("play", 1, "red:7", 0), ("draw", 2, None, 1), ("play", 0, "wild", 0),
                                      ("color", 0, None, 4)]
    # seat 2 plays on (guilty bluffer); seat 0 draws a playable card and keeps it, seat 1 draws one and plays it
    acts(eng, "play:yellow:6", "draw", "keep", "draw", "play:yellow:2")
    expected += [("play", 2, "yellow:6", 0), ("draw", 0, None, 1), ("keep", 0, None, 0), ("draw", 1, None, 1),
                 ("play", 1, "yellow:2", 0)]
    assert_every_seat_sees(eng, expected)


def test_another_seats_drawn_card_never_shows():
    """Two rounds alike but for the card seat 1 draws (and keeps): seats 0 and 2 see the very same observation."""
    views = []
    for drawn in ("yellow:9", "blue:4"):
        deck = stacked_deck(3, 2, hands=[
            ["red:7", "green:3", "green:4", "yellow:4", "yellow:5", "blue:3", "green:2"],
            ["green:8", "blue:8", "yellow:8", "yellow:1", "blue:1", "green:1", "yellow:2"],
        ], starter="red:5", draw_pile=[drawn])
        eng = VectorEngine(1, 3, seed=0, auto_reset=False)
        eng.reset(options={"deck": deck, "dealer": 2})
        acts(eng, "play:red:7", "draw")
        assert CARD_LABELS.index(drawn) in [e[2] for e in eng.events(0) if e[0] == kernel.EV_DRAW]
        views.append(eng.observe(np.array([0]))[0].copy())
        views.append(eng.observe(np.array([2]))[0].copy())
        assert history_of(eng, 1)[-1] == ("draw", 0, None, 1)  # the drawer's own history names no card either
    np.testing.assert_array_equal(views[0], views[2])
    np.testing.assert_array_equal(views[1], views[3])


def test_uno_a_pass_and_a_catch():
    eng = uno_game(("red:7", "red:8"), extra_pile=["green:1", "green:2"], n=3)  # seat 0 to act with two cards
    acts(eng, "play:red:7", "pass", "catch")  # no call: seat 1 lets it go, seat 2 catches it
    tail = [("play", 0, "red:7", 0), ("pass", 1, None, 0), ("catch", 2, None, 0), ("forced_draw", 0, None, 2)]
    for viewer in range(3):
        assert history_of(eng, viewer)[-4:] == seen_by(tail, viewer, 3)
    called = uno_game(("red:7", "blue:1"), n=3)
    acts(called, "uno", "play:red:7")
    for viewer in range(3):
        assert history_of(called, viewer)[-2:] == seen_by([("uno", 0, None, 0), ("play", 0, "red:7", 0)], viewer, 3)


def test_a_stack_and_its_acceptance():
    eng = game(3, hands=[["red:draw2"], ["green:draw2"], ["blue:draw2"]], starter="red:5", stacking="draw2")
    acts(eng, "play:red:draw2", "play:green:draw2", "accept")
    assert_every_seat_sees(eng, [("play", 0, "red:draw2", 0), ("stack", 1, "green:draw2", 2), ("accept", 2, None, 2),
                                 ("forced_draw", 2, None, 4)])


def test_a_jump_shows_and_a_declined_jump_does_not():
    eng = game(4, hands=[["red:skip", "red:6"], [], [], ["red:skip", "red:6"]], starter="red:5", jump_in=True)
    act(eng, "play:red:skip")
    act(eng, "play:red:skip")  # seat 3 jumps in
    assert_every_seat_sees(eng, [("play", 0, "red:skip", 0), ("jump", 3, "red:skip", 0)])
    declined = game(4, hands=[["red:6"], [], [], ["red:6"]], starter="red:5", jump_in=True)
    acts(declined, "play:red:6", "pass")  # seat 3 could have jumped: that it held the twin stays its own
    assert_every_seat_sees(declined, [("play", 0, "red:6", 0)])


def test_a_seven_swap_and_a_zero_rotation():
    eng = game(3, hands=[["red:7", "blue:1"], ["red:0", "blue:2"]], starter="red:5", seven_zero=True)
    acts(eng, "play:red:7", "target:2")  # seat 0 swaps with seat 2
    acts(eng, "play:red:0")  # seat 1: every hand passes to the left
    assert_every_seat_sees(eng, [("play", 0, "red:7", 0), ("swap", 0, None, 2), ("play", 1, "red:0", 0),
                                 ("rotate", None, None, 1)])


def test_a_draw_until_playable_through_a_reshuffle_is_one_draw():
    reds = ["red:1", "red:2", "red:3", "red:4", "red:6", "red:7", "red:8", "red:9", "red:2", "red:1"]
    not_on_red = [f"{color}:{rank}" for color in ("yellow", "green", "blue") for rank in (2, 3, 4, 6, 7, 8, 9)
                  for _ in range(2)][:41]
    eng = game(10, hands=[[red] for red in reds], starter="red:5", draw_pile=not_on_red, draw_until_playable=True)
    for red in reds:
        act(eng, f"play:{red}")
    act(eng, "draw")  # 41 unplayable cards, the discards but the top reshuffled, then a red
    expected = [("play", seat, red, 0) for seat, red in enumerate(reds)] + [("draw", 0, None, 42), ("reshuffle", None, None, 10)]
    assert_every_seat_sees(eng, expected)


def test_the_ring_keeps_the_last_64_and_a_new_round_starts_empty():
    eng = VectorEngine(1, 2, seed=3, auto_reset=False, max_turns=10_000)
    eng.reset()
    model = HistoryModel(2)
    model.after_step(eng.events(0))
    rng = np.random.default_rng(0)
    while eng.state.history_count[0] <= 80 and eng.current_player[0] >= 0:
        eng.step(np.array([rng.choice(np.flatnonzero(eng.legal_mask()[0]))]))
        model.after_step(eng.events(0))
    assert len(model.events) > 64 or eng.current_player[0] < 0
    for seat in range(2):
        np.testing.assert_array_equal(eng.observe(np.array([seat]))[0, observation_layout(2)["history"]], model.view(seat))
    eng.reset()
    assert history_of(eng, 0) == []


# ---------------------------------------------------------------- every step of random play


def walk(num_players: int, rules: dict, steps: int, seed: int, num_games: int = 12, **engine_options):
    """Random play (biased toward cards, so challenges, catches and stacks happen): after every step, every seat's
    history is the model's. Returns the history kinds seen."""
    eng = VectorEngine(num_games, num_players, seed=seed, **engine_options, **rules)
    eng.reset()
    models = [HistoryModel(num_players) for _ in range(num_games)]
    for g, model in enumerate(models):
        model.after_step(eng.events(g))
    rng = np.random.default_rng(seed)
    part = observation_layout(num_players)["history"]
    kinds_seen = set()
    for _ in range(steps):
        masks = eng.legal_mask()
        keys = rng.random(masks.shape) + masks * (rng.random((len(masks), 1)) < 0.6) * np.r_[np.ones(55), np.zeros(20)]
        eng.step(np.where(masks, keys, -1).argmax(1))
        for g, model in enumerate(models):
            model.after_step(eng.events(g))
        for seat in range(num_players):
            views = eng.observe(np.full(num_games, seat))[:, part].reshape(num_games, -1, 4)
            for g, model in enumerate(models):
                np.testing.assert_array_equal(views[g].reshape(-1), model.view(seat), err_msg=f"game {g}, seat {seat}")
            # no card of a draw, a forced draw, a Hat's draw or anything but a play, a stack or a jump
            carded = views[..., 2] > 0
            assert np.isin(views[..., 0][carded], [1, 12, 13]).all()
        kinds_seen |= {kind for model in models for kind, *_ in model.events}
    return kinds_seen


@pytest.mark.parametrize("num_players,rules", [(2, {}), (3, {}), (4, ALL_HOUSE_RULES), (7, {})])
def test_every_seats_history_is_the_models(num_players, rules):
    kinds = walk(num_players, rules, steps=250, seed=num_players)
    assert {"play", "draw", "color", "forced_draw", "challenge", "catch", "pass", "uno"} <= kinds, kinds
    if rules:
        assert {"stack", "jump", "swap", "rotate"} <= kinds, kinds


def test_every_seats_history_is_the_models_across_rounds_of_a_match():
    """Auto-reset and match episodes: a round dealt inside a step starts its history with that round's events."""
    kinds = walk(3, {"episode": "match", "target_score": 200}, steps=600, seed=5, num_games=6, max_turns=300)
    assert "reshuffle" in kinds and "sorting_hat" in kinds and "keep" in kinds


def test_history_kinds_are_the_kernels():
    assert [getattr(kernel, f"HIST_{name.upper()}") for name in
            ("play", "draw", "keep", "color", "forced", "hat", "uno", "catch", "pass", "challenge", "accept", "stack",
             "jump", "swap", "rotate", "reshuffle")] == list(range(1, len(HISTORY_KINDS) + 1))
