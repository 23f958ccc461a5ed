"""Duplicate evaluation plays each deal twice, the same game until the two policies choose differently."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

import agents
from agents.evaluate import duplicate_win_rate, win_rate
from agents.evaluation.duplicate import deal_seeds, duplicate_lineups, paired_interval, rounds_to_resolve, unpaired_interval
from agents.evaluation import tournament
from agents.evaluation.rounds import RowStreams, play_rounds
from hpuno_env.records import Recorder


class FirstLegal:
    """A policy without a random stream (and no ``seed`` method): the first legal action."""

    def act(self, observations, masks):
        return np.asarray(masks).argmax(axis=1)


class SeededWithoutRowDraws:
    """random-play behind a policy that does not say its draws are row-wise: asked one row at a time, reseeded."""

    def __init__(self, num_players: int):
        self.inner = agents.load("random-play", num_players)

    def seed(self, seed):
        self.inner.seed(seed)

    def act(self, observations, masks):
        return self.inner.act(observations, masks)


def recorded_plays(policies, deals: int, num_players: int, seed: int):
    """``duplicate_win_rate``'s games, each in a slot of its own, with the record of every one (play 2d + k: deal d, policy k)."""
    recorders = []

    def make(engine):
        recorders.extend(Recorder(engine, game=slot) for slot in range(engine.num_games))
        return recorders

    results = play_rounds(policies, duplicate_lineups(deals, num_players), num_players, seed, 2 * deals, make,
                          deal_seeds=deal_seeds(deals, seed))
    return results, [recorder.records[0] for recorder in recorders]


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_same_agent_twice_plays_every_deal_identically(num_players):
    results, records = recorded_plays([agents.load("heuristic", num_players, seed=3)] * 2 + [agents.load("random-play", num_players)],
                                      deals=12, num_players=num_players, seed=7)
    for deal in range(12):
        assert records[2 * deal]["rounds"] == records[2 * deal + 1]["rounds"]
    assert np.array_equal(results.won[0::2], results.won[1::2])
    result = duplicate_win_rate(agents.load("heuristic", num_players, seed=0), agents.load("heuristic", num_players, seed=1),
                                agents.load("heuristic", num_players), num_players, rounds=60, seed=2)
    assert result["difference"] == result["sd"] == result["half_width"] == result["differing"] == 0
    assert result["a"] == result["b"]


@pytest.mark.parametrize("num_players", [2, 3])
def test_two_agents_play_the_same_deal_until_they_choose_differently(num_players):
    """Both plays of a deal start from the same deck, dealer and generator, and their decisions agree up to the
    first one the evaluated seat makes differently (the opponents' noise is the same too)."""
    deals = 24
    policies = [agents.load("heuristic", num_players), agents.load("heuristic-v0", num_players), agents.load("heuristic", num_players)]
    results, records = recorded_plays(policies, deals, num_players, seed=11)
    diverged = 0
    for deal in range(deals):
        first, second = records[2 * deal]["rounds"][0], records[2 * deal + 1]["rounds"][0]
        assert (first["deck"], first["dealer"], first["generator"]) == (second["deck"], second["dealer"], second["generator"])
        common = next((k for k, pair in enumerate(zip(first["decisions"], second["decisions"])) if pair[0] != pair[1]), None)
        if common is None:
            assert first["decisions"] == second["decisions"]
            continue
        diverged += 1
        seat_a, seat_b = first["decisions"][common][0], second["decisions"][common][0]
        assert seat_a == seat_b == deal % num_players, (deal, common)  # the evaluated seat, choosing differently
    assert diverged > deals // 2


def test_a_seeded_policy_without_row_draws_is_reseeded_row_by_row():
    policies = [SeededWithoutRowDraws(3), SeededWithoutRowDraws(3), SeededWithoutRowDraws(3)]
    results, records = recorded_plays(policies, deals=6, num_players=3, seed=1)
    assert all(records[2 * deal]["rounds"] == records[2 * deal + 1]["rounds"] for deal in range(6))
    small = duplicate_win_rate(*policies, num_players=3, rounds=6, seed=1, num_envs=2)
    assert small == duplicate_win_rate(*policies, num_players=3, rounds=6, seed=1, num_envs=64)
    assert small["a"]["wins"] == int(results.won[0::2][np.arange(6), np.arange(6) % 3].sum())


def test_row_streams_give_each_row_its_own_numbers():
    seeds = np.array([5, 9, 5, 123456789])
    together = RowStreams(seeds)
    first, second = together.random((4, 75), dtype=np.float32), together.gumbel(size=(4, 3))
    assert first.dtype == np.float32 and np.all((first >= 0) & (first < 1)) and np.isfinite(second).all()
    assert np.array_equal(first[0], first[2]) and not np.array_equal(first[0], first[1])
    alone = RowStreams(seeds[1:2])
    assert np.array_equal(alone.random((1, 75), dtype=np.float32)[0], first[1])
    assert np.array_equal(alone.gumbel(size=(1, 3))[0], second[1])
    uniform = RowStreams(np.arange(2000)).random(2000)
    assert abs(uniform.mean() - 0.5) < 0.03 and uniform.dtype == np.float64
    with pytest.raises(ValueError, match="one block per row"):
        RowStreams(seeds).random()
    with pytest.raises(ValueError, match="one block per row"):
        RowStreams(seeds).random((3, 2))


def test_the_result_does_not_depend_on_the_batch_and_one_seed_gives_one_result():
    def run(num_envs, seed=4):
        return duplicate_win_rate(agents.load("heuristic", 2), agents.load("random-play", 2), agents.load("heuristic", 2),
                                  rounds=40, seed=seed, num_envs=num_envs)

    first = run(256)
    assert run(3) == first
    assert run(256, seed=5) != first


def test_the_summary_adds_up_and_has_win_rates_keys():
    result = duplicate_win_rate(agents.load("heuristic", 3), agents.load("random-play", 3), agents.load("heuristic", 3),
                                num_players=3, rounds=30, seed=1)
    plain = win_rate(agents.load("heuristic", 3), agents.load("heuristic", 3), 3, rounds=30)
    assert set(result["a"]) == set(result["b"]) == set(plain)
    assert result["a"]["rounds"] == result["rounds"] == 30 and result["a"]["seat_rounds"] == [10, 10, 10]
    assert result["differing"] == result["a_only"] + result["b_only"]
    assert math.isclose(result["difference"], (result["a_only"] - result["b_only"]) / 30)
    assert math.isclose(result["difference"], result["win_rate_a"] - result["win_rate_b"])
    assert result["low"] <= result["difference"] <= result["high"]


def test_the_paired_interval_is_narrower_than_the_unpaired_one_on_a_real_pair():
    result = duplicate_win_rate(agents.load("heuristic", 2), agents.load("heuristic-v0", 2), agents.load("heuristic", 2),
                                rounds=600, seed=0)
    assert 0 < result["differing"] < 600
    assert result["half_width"] < 0.9 * result["unpaired_half_width"], result
    assert rounds_to_resolve(result["sd"]) < rounds_to_resolve(result["unpaired_sd"])


def test_a_policy_without_a_seed_method_and_whole_matches():
    result = duplicate_win_rate(FirstLegal(), FirstLegal(), agents.load("heuristic", 2), rounds=6, seed=0, episode="match")
    assert result["difference"] == 0 and result["rounds"] == 6 and result["a"]["win_rate"] == result["b"]["win_rate"]


def test_the_interval_arithmetic():
    interval = paired_interval(np.array([1.0, 0.0, -1.0, 0.0]))
    assert interval["difference"] == 0 and math.isclose(interval["sd"], math.sqrt(2 / 3))
    assert math.isclose(interval["half_width"], 1.959963984540054 * math.sqrt(2 / 3) / 2)
    assert paired_interval(np.array([1.0]))["half_width"] == 0
    assert math.isclose(unpaired_interval(0.5, 0.5, 100)["unpaired_sd"], math.sqrt(0.5))
    assert rounds_to_resolve(0.5) == math.ceil((1.959963984540054 * 50) ** 2)


@pytest.mark.parametrize("bad", [[0, 1], [-1, 0, 0, 0], [0, 0, 0, 2**32], [0.5, 0, 0, 0]])
def test_bad_deal_seeds_are_refused(bad):
    policies = [agents.load("random", 2)]
    with pytest.raises(ValueError, match="deal_seeds"):
        play_rounds(policies, np.zeros((4, 2), np.int64), 2, deal_seeds=bad)


def test_bad_arguments_are_refused():
    policy = agents.load("random", 2)
    with pytest.raises(ValueError, match="rounds"):
        duplicate_win_rate(policy, policy, policy, rounds=0)
    with pytest.raises(TypeError, match="policies\\[1\\]"):
        duplicate_win_rate(policy, object(), policy, rounds=2)


# ------------------------------------------------------------ the command: hpuno-tournament A B --duplicate


def test_the_command_prints_and_writes_the_paired_table(tmp_path, capsys):
    out = tmp_path / "results"
    argv = ["heuristic", "heuristic-v0", "--duplicate", "--opponent", "random-play", "--players", "3", "--rounds", "30",
            "--seed", "2", "--rule", "uno_penalty=4", "--out", str(out)]
    assert tournament.main(argv) == 0
    printed = capsys.readouterr().out
    assert "duplicate: heuristic and heuristic-v0, each alone against 2x random-play on the same 30 deals" in printed
    assert "paired difference (heuristic - heuristic-v0)" in printed and "deals with different outcomes" in printed
    report = json.loads((out / "results.json").read_text())
    assert report["command"].startswith("hpuno-tournament heuristic heuristic-v0 --duplicate")
    assert report["config"]["rules"]["uno_penalty"] == 4 and report["config"]["opponent"] == "random-play"
    expected = duplicate_win_rate(agents.load("heuristic", 3, seed=2), agents.load("heuristic-v0", 3, seed=2),
                                  agents.load("random-play", 3, seed=2), 3, rounds=30, seed=2, uno_penalty=4)
    paired = report["duplicate"]
    assert (paired["agent_a"], paired["agent_b"]) == ("heuristic", "heuristic-v0")
    assert {key: paired[key] for key in expected} == json.loads(json.dumps(expected))
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["agent"] for row in rows] == ["heuristic", "heuristic-v0"]
    assert float(rows[1]["win_rate"]) == pytest.approx(expected["win_rate_b"]) and float(rows[0]["difference"]) == pytest.approx(expected["difference"])


@pytest.mark.parametrize("argv, message", [
    (["heuristic", "random", "random-play", "--duplicate"], "exactly two agents"),
    (["heuristic", "random", "--duplicate", "--opponent", "grandmaster"], "unknown agent"),
    (["heuristic", "random", "--duplicate", "--rounds", "0"], "--rounds"),
    (["heuristic", "random", "--duplicate", "--out", "unused", "--plot"], "no pictures"),
])
def test_the_command_refuses_bad_duplicate_input(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        tournament.main(argv)
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in error and "Traceback" not in error


def test_run_duplicate_takes_policy_objects():
    result = tournament.run_duplicate({"first": FirstLegal(), "again": FirstLegal()}, agents.load("heuristic", 2), rounds=4, seed=1)
    assert result["duplicate"]["opponent"] == "HeuristicAgent" and result["duplicate"]["difference"] == 0
    assert "paired difference (first - again)" in tournament.format_duplicate_report(result)
    with pytest.raises(ValueError, match="exactly two"):
        tournament.run_duplicate(["heuristic", "random", "random-play"], "heuristic", rounds=2)
