"""Evaluation is unbiased at any size: fixed rounds, every one to its end, seats rotated."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
import hpuno_env
from agents.evaluation.rounds import play_rounds, rotating_lineups, wilson_interval, win_rate
from hpuno_env import VectorEngine


def binomial_pmf(k: int, trials: int, p: float) -> float:
    return math.comb(trials, k) * p**k * (1 - p) ** (trials - k)


def wilson_coverage(trials: int, p: float) -> float:
    """The exact probability that the Wilson interval of Bin(trials, p) covers p
    (for small samples it is not exactly 95%, so the test asks for the true figure)."""
    return sum(
        binomial_pmf(k, trials, p) for k in range(trials + 1)
        if wilson_interval(k, trials)[0] <= p <= wilson_interval(k, trials)[1]
    )


def binomial_lower_quantile(trials: int, p: float, tail: float) -> int:
    """The largest c with P(Bin(trials, p) < c) <= tail."""
    below = 0.0
    for c in range(trials + 1):
        below += binomial_pmf(c, trials, p)
        if below > tail:
            return c
    return trials


@pytest.mark.parametrize("num_players", [2, 3, 4, 10])
@pytest.mark.parametrize("rounds, num_envs, seeds", [(10, 256, 60), (80, 8, 16)])
def test_an_agent_against_itself_wins_its_fair_share(num_players, rounds, num_envs, seeds):
    """Policy and opponent are one player: each seed's interval covers 1/n about as often as the
    Wilson interval should, and the pooled rate is 1/n within four standard errors. The old
    evaluation, which credited the learner a step late, gave 0% at rounds=10."""
    player = agents.load("random-play", num_players, seed=0)
    fair = 1 / num_players
    results = [win_rate(player, player, num_players, rounds=rounds, seed=seed, num_envs=num_envs) for seed in range(seeds)]
    assert all(result["rounds"] == rounds and result["truncated"] == 0 for result in results)
    covered = sum(result["low"] <= fair <= result["high"] for result in results)
    assert covered >= binomial_lower_quantile(seeds, wilson_coverage(rounds, fair), tail=0.001), covered
    pooled = sum(result["wins"] for result in results) / (seeds * rounds)
    assert abs(pooled - fair) <= 4 * math.sqrt(fair * (1 - fair) / (seeds * rounds)), pooled


def test_one_seed_gives_one_result_and_another_seed_another():
    def run(seed):
        policies = [agents.load("random-play", 3), agents.load("heuristic", 3)]
        return play_rounds(policies, rotating_lineups(50, 3), 3, seed=seed, num_envs=16)

    first, again, other = run(5), run(5), run(6)
    for field in ("won", "winner", "rewards", "points", "decisions", "truncated"):
        assert np.array_equal(getattr(first, field), getattr(again, field)), field
    assert not np.array_equal(first.decisions, other.decisions)
    assert win_rate(agents.load("heuristic", 2), agents.load("random-play", 2), rounds=40, seed=9, num_envs=8) == win_rate(
        agents.load("heuristic", 2), agents.load("random-play", 2), rounds=40, seed=9, num_envs=8
    )


class CountingEngine(VectorEngine):
    """The engine, counting every game it starts."""

    games_started = 0

    def reset(self, seed=None, options=None, games=None):
        CountingEngine.games_started += self.num_games if games is None else len(games)
        super().reset(seed=seed, options=options, games=games)


@pytest.mark.parametrize("rounds, num_envs", [(7, 16), (16, 16), (100, 16), (101, 7)])
def test_exactly_the_listed_rounds_are_started_and_every_seat_rotates(monkeypatch, rounds, num_envs):
    monkeypatch.setattr(hpuno_env, "VectorEngine", CountingEngine)  # what play_rounds builds its engine from
    CountingEngine.games_started = 0
    num_players = 4
    player = agents.load("random-play", num_players, seed=1)
    results = play_rounds([player, player], rotating_lineups(rounds, num_players), num_players, seed=2, num_envs=num_envs)
    assert CountingEngine.games_started == rounds
    assert results.rounds == rounds and (results.decisions > 0).all()
    slots = min(rounds, num_envs)
    assert np.array_equal(np.bincount(results.slot), [len(range(s, rounds, slots)) for s in range(slots)])
    assert (results.won.sum(axis=1) == 1).all() and (results.winner >= 0).all()
    assert np.array_equal(results.winner_policy, results.lineups[np.arange(rounds), results.winner])
    seat_rounds = win_rate(player, player, num_players, rounds=rounds, seed=2, num_envs=num_envs)["seat_rounds"]
    assert max(seat_rounds) - min(seat_rounds) <= 1 and sum(seat_rounds) == rounds
    if rounds % num_players == 0:
        assert seat_rounds == [rounds // num_players] * num_players


def test_policies_act_batched_once_per_step_on_their_own_seats():
    """Each policy is called at most once per step, only on rows where a seat it holds is to act."""

    class Recorder:
        def __init__(self, index):
            self.inner, self.index, self.calls = agents.load("random-play", 3, seed=index), index, []

        def act(self, observations, masks):
            self.calls.append(len(observations))
            return self.inner.act(observations, masks)

    recorders = [Recorder(0), Recorder(1), Recorder(2)]
    lineups = np.array([[0, 1, 2], [2, 1, 0], [1, 1, 0], [0, 0, 0]] * 5)
    results = play_rounds(recorders, lineups, 3, seed=3, num_envs=8)
    steps = int(max(results.decisions[results.slot == s].sum() for s in range(8)))
    assert all(len(recorder.calls) <= steps for recorder in recorders)
    assert sum(sum(recorder.calls) for recorder in recorders) == results.decisions.sum()
    assert (np.isin(results.winner_policy, [0, 1, 2])).all()


def test_truncated_rounds_are_counted_played_and_not_won():
    player = agents.load("random-play", 2, seed=0)
    results = play_rounds([player, player], rotating_lineups(200, 2), 2, seed=4, num_envs=32, max_turns=40)
    assert 0 < results.truncated.sum() < 200
    assert (results.decisions[results.truncated] == 40).all() and (results.decisions[~results.truncated] <= 40).all()
    assert not results.won[results.truncated].any() and (results.winner[results.truncated] == -1).all()
    assert (results.won[~results.truncated].sum(axis=1) == 1).all()
    assert (results.rewards[results.truncated] == 0).all() and (results.points[results.truncated] == 0).all()
    summary = win_rate(player, player, 2, rounds=200, seed=4, num_envs=32, max_turns=40)
    assert summary["truncated"] == results.truncated.sum() and summary["rounds"] == 200
    assert summary["wins"] == results.won[np.arange(200), np.arange(200) % 2].sum()
    assert summary["wins"] + results.won[np.arange(200), 1 - np.arange(200) % 2].sum() == 200 - summary["truncated"]


def test_points_are_the_points_reward_and_rewards_the_engines():
    """points: the winner's round points, minus each loser's hand points (zero-sum), the same as
    reward="points" pays times 100; with reward="win" the winner gets +1 and the others -1."""
    player = agents.load("random-play", 4, seed=0)
    lineups = rotating_lineups(60, 4)
    by_points = play_rounds([player, player], lineups, 4, seed=7, num_envs=16, reward="points")
    by_win = play_rounds([player, player], lineups, 4, seed=7, num_envs=16)
    assert np.array_equal(by_points.points, by_win.points) and np.array_equal(by_points.won, by_win.won)
    assert (by_points.points.sum(axis=1) == 0).all() and (by_points.points[by_points.won] > 0).any()
    assert np.allclose(by_points.rewards * 100, by_points.points)
    assert np.array_equal(by_win.rewards, np.where(by_win.won, 1.0, -1.0))


def test_match_episodes_play_whole_matches():
    player = agents.load("random-play", 3, seed=0)
    results = play_rounds([player, player], rotating_lineups(30, 3), 3, seed=8, num_envs=8, episode="match", target_score=150)
    assert not results.truncated.any() and (results.won.sum(axis=1) == 1).all()
    winners_score = results.points[np.arange(30), results.winner]
    assert (winners_score >= 150).all() and (results.points.max(axis=1) == winners_score).all()
    assert np.array_equal(results.rewards, np.where(results.won, 1.0, -1.0))
    assert results.decisions.mean() > 2 * play_rounds([player], np.zeros((30, 3), int), 3, seed=8).decisions.mean()
    lowest = play_rounds([player, player], rotating_lineups(30, 3), 3, seed=8, episode="match", target_score=100, scoring="lowest")
    assert (lowest.won.sum(axis=1) >= 1).all()
    assert np.array_equal(lowest.won, lowest.points == lowest.points.min(axis=1, keepdims=True))


def test_wilson_interval_known_values():
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == 1.0


def test_bad_arguments_are_refused():
    player = agents.load("random-play", 2)
    with pytest.raises(ValueError, match="lineups"):
        play_rounds([player], np.zeros((5, 3), int), 2)
    with pytest.raises(ValueError, match="lineups"):
        play_rounds([player], np.ones((5, 2), int), 2)
    with pytest.raises(TypeError, match="policies"):
        play_rounds([object()], np.zeros((5, 2), int), 2)
    with pytest.raises(ValueError, match="rounds"):
        win_rate(player, player, rounds=0)
    with pytest.raises(ValueError, match="num_envs"):
        win_rate(player, player, rounds=10, num_envs=0)
    with pytest.raises(ValueError, match="max_turns"):
        win_rate(player, player, rounds=10, max_turns=0)
