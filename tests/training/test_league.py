"""The training league: each opponent gets its documented share of the games, per seat with 3+ players."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.training.league import DEFAULT_WEIGHTS, League
from hpuno_env import SeatBatch
from hpuno_env.seat_batch import UniformRandomPolicy


def opponent_seat_draws(batch: SeatBatch, steps: int, seed: int) -> np.ndarray:
    """Play random learner moves; return every episode's assignment at the seats the opponents
    play, as the batch used it (one row per episode start, -1 at the learner's seat)."""
    rng = np.random.default_rng(seed)
    observations, masks = batch.reset(seed=seed)
    started = np.ones(batch.num_envs, bool)
    draws = []
    for _ in range(steps):
        seen = np.where(np.arange(batch.num_players) == batch.seats[:, None], -1, batch.assignment)
        draws.append(seen[started])
        observations, masks, _, terminated, truncated, _ = batch.step((rng.random(masks.shape) * masks).argmax(axis=1))
        started = terminated | truncated
    return np.concatenate(draws)


def test_each_opponent_gets_its_share_of_the_seats_drawn_per_seat():
    league = League(num_players=3, latest=UniformRandomPolicy(3, seed=0), seed=0)
    league.add_snapshot(UniformRandomPolicy(3, seed=1))
    league.add_snapshot(UniformRandomPolicy(3, seed=2))
    assert league.names == ["latest", "heuristic", "random-play", "snapshot-1", "snapshot-2"]
    expected = np.array([DEFAULT_WEIGHTS["latest"], DEFAULT_WEIGHTS["heuristic"], DEFAULT_WEIGHTS["random-play"],
                         DEFAULT_WEIGHTS["snapshots"] / 2, DEFAULT_WEIGHTS["snapshots"] / 2])
    assert np.allclose(league.shares(), expected / expected.sum())

    batch = SeatBatch(num_envs=64, num_players=3, learner_seat="random", seed=0, max_turns=45)
    league.install(batch)
    draws = opponent_seat_draws(batch, steps=400, seed=1)
    seats = draws[draws >= 0]
    assert len(draws) > 1000 and len(seats) == 2 * len(draws)  # two opponent seats per episode
    counts = np.bincount(seats, minlength=len(league.members))
    share = league.shares()
    tolerance = 4.5 * np.sqrt(len(seats) * share * (1 - share))  # binomial, 4.5 sigma
    assert (np.abs(counts - len(seats) * share) < tolerance).all(), (counts, len(seats) * share)
    # per seat, not per game: many episodes seat two different members
    pairs = np.sort(draws, axis=1)[:, 1:]
    assert (pairs[:, 0] != pairs[:, 1]).mean() > 0.5


def test_every_member_plays_its_rows():
    calls = {}

    class Counting(UniformRandomPolicy):
        def __init__(self, name):
            super().__init__(2, seed=len(calls))
            self.name = name
            calls[name] = 0

        def act(self, observations, action_masks):
            calls[self.name] += len(action_masks)
            return super().act(observations, action_masks)

    league = League(num_players=2, latest=Counting("latest"), rule_based=(), seed=3)
    league.add_snapshot(Counting("a"))
    league.add_snapshot(Counting("b"))
    batch = SeatBatch(num_envs=32, num_players=2, seed=0, max_turns=40)
    league.install(batch)
    observations, masks = batch.reset()
    for _ in range(100):
        observations, masks, *_ = batch.step(masks.argmax(axis=1))
    assert all(count > 100 for count in calls.values()), calls


def test_held_out_player_is_not_in_the_league_and_its_share_goes_to_the_others():
    league = League(num_players=2, held_out="heuristic", seed=0)
    assert league.names == ["random-play"] and league.shares().tolist() == [1.0]
    league.add_snapshot(UniformRandomPolicy(2))
    snapshots, random_play = DEFAULT_WEIGHTS["snapshots"], DEFAULT_WEIGHTS["random-play"]
    assert np.allclose(league.shares(), [random_play / (random_play + snapshots), snapshots / (random_play + snapshots)])


def test_snapshots_beyond_the_limit_push_out_the_oldest_and_reach_the_env():
    league = League(num_players=2, rule_based=("random-play",), max_snapshots=2, seed=0)
    batch = SeatBatch(num_envs=4, num_players=2, seed=0)
    league.install(batch)
    for _ in range(3):
        league.add_snapshot(UniformRandomPolicy(2))
    assert league.names == ["random-play", "snapshot-2", "snapshot-3"]
    assert batch.policies == league.policies and batch.assignment.max() < 3


@pytest.mark.parametrize("kwargs, message", [
    ({"weights": {"heuristc": 1.0}}, "heuristc"),
    ({"weights": {"heuristic": -1.0}}, "non-negative"),
    ({"weights": {"latest": 1.0}}, "no member"),  # no latest given: nobody would get a seat
    ({"held_out": "ppo_2p"}, "held_out"),
    ({"max_snapshots": 0}, "max_snapshots"),
])
def test_bad_league_options_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        League(num_players=2, **kwargs)


def test_a_snapshot_is_added_only_when_the_learner_beats_the_strongest_member():
    league = League(num_players=2, rule_based=("random-play",), seed=0)
    weak = league.consider_snapshot(agents.load("random", 2, seed=1), make_snapshot=lambda name: UniformRandomPolicy(2), rounds=100, seed=2, max_turns=2000)
    assert weak["added"] is None and weak["strongest"] == "random-play" and weak["results"]["random-play"]["win_rate"] < 0.5
    strong = league.consider_snapshot(agents.load("heuristic", 2, seed=1), make_snapshot=lambda name: UniformRandomPolicy(2), rounds=100, seed=2)
    assert strong["added"] == "snapshot-1" and strong["results"]["random-play"]["low"] > 0.5
    assert league.names == ["random-play", "snapshot-1"]
    # the snapshot (uniform random) is now in the pool, but the strongest is still random-play
    again = league.consider_snapshot(agents.load("heuristic", 2, seed=1), make_snapshot=lambda name: UniformRandomPolicy(2), rounds=100, seed=2)
    assert set(again["results"]) == {"random-play", "snapshot-1"} and again["strongest"] == "random-play"


def test_a_mixture_draws_one_player_per_game_with_its_share():
    from agents.training.league import Mixture

    mixture = Mixture({"heuristic": 3, "random-play": 1, "random": 0}, num_players=4, seed=0)
    assert [type(policy).__name__ for policy in mixture.policies] == [type(agents.load(name, 4)).__name__
                                                                      for name in ("heuristic", "random-play", "random")]
    batch = SeatBatch(num_envs=64, num_players=4, learner_seat="random", seed=0, max_turns=45)
    mixture.install(batch)
    draws = opponent_seat_draws(batch, steps=400, seed=1)
    games = np.array([row[row >= 0][0] for row in draws])
    assert len(draws) > 1000
    assert all((row[row >= 0] == row[row >= 0][0]).all() for row in draws)  # every opponent seat of a game: one player
    counts = np.bincount(games, minlength=3)
    expected = len(games) * np.array([0.75, 0.25, 0.0])
    assert counts[2] == 0 and (np.abs(counts - expected) < 4.5 * np.sqrt(len(games) * 0.75 * 0.25)).all(), (counts, expected)


@pytest.mark.parametrize("weights, message", [
    ({}, "at least one"),
    ({"heuristic": -1}, "non-negative"),
    ({"heuristic": 0}, "nobody"),
    ({"heuristic": float("nan")}, "non-negative"),
])
def test_bad_mixtures_are_refused(weights, message):
    from agents.training.league import Mixture

    with pytest.raises(ValueError, match=message):
        Mixture(weights, num_players=2)
