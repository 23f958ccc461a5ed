"""benchmarks/bench_search_ceiling.py: a closed gate changes nothing; worlds that see every hand find better moves."""

import importlib.util
import math
import pathlib

import numpy as np

from hpuno_env import VectorEngine
from hpuno_env.cards import DRAW

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_search_ceiling", ROOT / "benchmarks" / "bench_search_ceiling.py")
ceiling = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ceiling)


def test_a_closed_gate_changes_no_decision():
    with np.errstate(invalid="ignore"):  # inf * 0 is nan, which no difference exceeds
        report = ceiling.measure(2, rounds=3, worlds=8, eval_worlds=8, gate=math.inf, seed=0)
    for kind in ceiling.KINDS:
        assert report[kind]["changed"] == 0 and report[kind]["gain"] == 0
    assert report["decisions_per_seat_and_round"] > 1


def test_true_hands_worlds_keep_every_hand_and_shuffle_only_the_pile():
    game = VectorEngine(4, 2, seed=1, auto_reset=False)
    game.reset()
    valuer = ceiling.Valuer(2, worlds=16)
    candidates = np.flatnonzero(game.legal_mask()[0])[:1]
    assert candidates[0] < DRAW  # a card is played: the pile stays as dealt
    valuer.engine.rollout = lambda policy, games: (np.full(len(games), -1), None)  # keep the worlds as dealt
    valuer.wins(game, 0, candidates, "true hands", seed=3)
    worlds = valuer.engine.state
    size = int(game.state.draw_count[0])
    assert (worlds.hands[:16, 1] == game.state.hands[0, 1]).all()  # the other seat's hand, exactly
    piles = np.sort(worlds.draw_pile[:16, :size], axis=1)
    assert len({tuple(row) for row in worlds.draw_pile[:16, :size]}) > 1 and (piles == piles[0]).all()


def test_over_a_trained_blueprint_a_closed_gate_plays_it_in_both_seats():
    # Every deal is played twice from one state; with the gate closed the searcher plays the blueprint's own moves,
    # so the pair can only differ if the base moves were another player's.
    with np.errstate(invalid="ignore"):
        row = ceiling.played_gain(2, deals=4, worlds=8, gate=math.inf, seed=0, kind="plain", blueprint="ppo_2p",
                                  correct_gate=True)
    assert row["gain"] == 0 and row["changed"] == 0
