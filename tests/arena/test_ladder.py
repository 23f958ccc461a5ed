"""The ladder: which games it rates, how (openskill Plackett-Luce from each game's standing), the duplicate score
of a person on known deals, its payload and history, and its worker picking up what a restart left."""

from __future__ import annotations

import time

import numpy as np
import pytest
from ladder_helpers import SHELF, drawer, like, new_game, open_ladder, play_person
from openskill.models import PlackettLuce

from agents.arena import store as store_module
from agents.arena.games import ArenaError, make_game
from agents.arena.ladder import Ladder, play_deal, rate_table, seats_of, standing
from agents.arena.seats import seat_seeds
from agents.evaluation.duplicate import paired_interval
from agents.players import SHIPPED
from hpuno_env.cards import CARD_POINTS

MU, SIGMA = 25.0, 25 / 3


@pytest.fixture
def opened(tmp_path):
    store, ladder, bots = open_ladder(tmp_path / "arena.sqlite3")
    yield store, ladder, bots
    ladder.stop()
    store.close()


def finished(bots, choose, **fields):
    return play_person(new_game(bots, **fields), choose)


def test_a_winner_rises_and_the_others_fall(opened):
    store, ladder, bots = opened
    game = finished(bots, like("heuristic"), players=3, opponents=["random"], seed=1)
    won, ranks = standing(game.engine)
    assert ladder.add_finished(game)
    rows = {row["name"]: row for row in ladder.payload()["players"]}
    assert set(rows) == {"alice", "random"} and rows["random"]["games"] == 1 and rows["random"]["kind"] == "agent"
    alice = rows["alice"]
    assert alice["kind"] == "person" and alice["games"] == 1 and alice["sigma"] < SIGMA
    assert (alice["mu"] > MU) == won[0] and (alice["mu"] < MU) == (not won[0])
    assert (rows["random"]["mu"] > MU) == any(won[1:])
    assert store.seats(game.game_id)[0]["rank"] == ranks[0]


def test_a_game_stands_winner_first_then_by_points_left_in_hand(opened):
    _, _, bots = opened
    game = finished(bots, like("heuristic"), players=4, opponents=["random"], seed=3)
    won, ranks = standing(game.engine)
    hand_points = game.engine.state.hands[0].astype(np.int64) @ CARD_POINTS.astype(np.int64)
    assert sum(won) == 1 and ranks[won.index(True)] == 1
    losers = [seat for seat in range(4) if not won[seat]]
    for a in losers:
        for b in losers:
            assert (ranks[a] < ranks[b]) == (hand_points[a] < hand_points[b])
            assert ranks[a] > 1


def test_a_match_stands_by_match_score(opened):
    _, _, bots = opened
    game = finished(bots, like("heuristic"), players=3, opponents=["heuristic"], seed=4,
                    rules={"episode": "match", "target_score": 100})
    won, ranks = standing(game.engine)
    scores = game.engine.state.scores[0]
    assert ranks[won.index(True)] == 1 and scores[won.index(True)] == scores.max()
    assert sorted(ranks) == [1 + sum(s > score for s in scores) for score in sorted(scores, reverse=True)]


def test_plackett_luce_at_four_players_is_openskills_and_a_name_in_several_seats_adds_its_seats(opened):
    model = PlackettLuce()
    before = {"a": (30.0, 6.0), "b": (25.0, 8.0), "c": (20.0, 7.0), "d": (25.0, 3.0)}
    after = rate_table(model, before, ["a", "b", "c", "d"], [2, 1, 4, 3])
    direct = model.rate([[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before.values()], ranks=[2, 1, 4, 3])
    for name, [rating] in zip("abcd", direct):
        assert after[name] == pytest.approx((rating.mu, rating.sigma))
    assert after["b"][0] > before["b"][0] and after["c"][0] < before["c"][0]
    # an agent filling three seats takes the sum of the three seats' changes
    shared = rate_table(model, {"p": (MU, SIGMA), "h": (MU, SIGMA)}, ["p", "h", "h", "h"], [1, 2, 3, 4])
    seats = model.rate([[model.rating()] for _ in range(4)], ranks=[1, 2, 3, 4])
    assert shared["h"][0] == pytest.approx(MU + sum(rating.mu - MU for [rating] in seats[1:]))
    assert shared["h"][1] == pytest.approx(SIGMA * np.sqrt(np.prod([(r.sigma / SIGMA) ** 2 for [r] in seats[1:]])))
    assert shared["p"][0] == pytest.approx(seats[0][0].mu)


def test_a_person_who_plays_as_the_reference_scores_zero_on_every_deal(opened):
    store, ladder, bots = opened
    outcomes = []
    for seed in range(6):
        opponents = ["heuristic"] if seed % 2 else ["ppo_2p"]
        game = finished(bots, like("heuristic"), players=2, opponents=opponents, seed=seed)
        assert ladder.add_finished(game)
        outcomes.append(standing(game.engine)[0][0])
    assert ladder.compute_duplicates() == 6
    duplicate = {row["name"]: row for row in ladder.payload()["players"]}["alice"]["duplicate"]
    # the replay with the reference in the person's seat is the very same game: no difference, won or lost
    assert duplicate == {"mean": 0.0, "low": 0.0, "high": 0.0, "rounds": 6}
    assert True in outcomes and False in outcomes


def test_the_duplicate_score_is_the_persons_result_minus_the_references_on_the_same_deal(opened):
    store, ladder, bots = opened
    differences = []
    for seed in range(8):
        game = finished(bots, drawer, players=2, opponents=["heuristic"], seed=seed)
        assert ladder.add_finished(game)
        live_won = standing(game.engine)[0][0]
        # the reference's result on this deal, played live by a person who plays as it does (another name)
        reference = finished(bots, like("heuristic"), players=2, opponents=["heuristic"], seed=seed, name="ref")
        assert reference.record()["rounds"][0]["deck"] == game.record()["rounds"][0]["deck"]
        differences.append(float(live_won) - float(standing(reference.engine)[0][0]))
    ladder.compute_duplicates()
    duplicate = {row["name"]: row for row in ladder.payload()["players"]}["alice"]["duplicate"]
    interval = paired_interval(np.array(differences))
    assert duplicate == {"mean": round(interval["difference"], 4), "low": round(interval["low"], 4),
                         "high": round(interval["high"], 4), "rounds": 8}
    assert duplicate["mean"] < 0  # a person who never plays when they may draw loses deals the reference wins


def test_play_deal_replays_the_recorded_deal_exactly_with_the_same_players(opened):
    _, _, bots = opened
    game = finished(bots, like("heuristic"), players=3, opponents=["heuristic"], seed=9)
    seeds = seat_seeds(9, 3)
    policies = dict(enumerate(SHELF.table(["heuristic"] * 3, 3, seeds, {})[0]))
    assert play_deal(game.record(), policies) == standing(game.engine)[0]


def test_games_that_do_not_count_are_stored_but_not_rated(opened, tmp_path):
    store, ladder, bots = opened
    unnamed = finished(bots, drawer, seed=1, name=None)
    assert not ladder.add_finished(unnamed)
    abandoned = new_game(bots, seed=2)
    with abandoned.lock:
        abandoned.person_acts(drawer(abandoned))
    assert abandoned.record()["outcome"] == "unfinished"
    assert not ladder.add_finished(abandoned)
    agent_file = finished(bots, drawer, seed=3, opponents=[SHIPPED["ppo_2p"]])
    assert seats_of(agent_file) == [("alice", "person"), (None, "agent")]  # an agent file is not on the ladder
    assert not ladder.add_finished(agent_file)
    watched = make_game(SHELF, 2, ["heuristic", "random"], {}, 4, person=False)
    watched.play_agents()
    assert watched.over and seats_of(watched) == [("heuristic", "agent"), ("random", "agent")]
    assert not ladder.add_finished(watched)  # agents only
    assert ladder.payload() == {"players": []} and len(store.games()) == 4
    assert store.pending_duplicates(10) == []


def test_a_plain_arena_game_has_an_unnamed_person_and_its_agents_by_name():
    game = make_game(SHELF, 3, ["heuristic", "random"], {}, 0, person=True)
    assert seats_of(game) == [(None, "person"), ("heuristic", "agent"), ("random", "agent")]


def test_a_person_may_not_take_an_agents_or_a_bots_name(opened):
    _, ladder, bots = opened
    bots.create("zeta", "127.0.0.1")
    assert ladder.check_person_name("alice") == "alice"
    for name in ("heuristic", "PPO_2P", "you", "Zeta"):
        with pytest.raises(ArenaError) as refused:
            ladder.check_person_name(name)
        assert refused.value.status == 409
    with pytest.raises(ArenaError, match="1 to 32 letters"):
        ladder.check_person_name("no spaces please")


def test_each_name_has_its_rating_history_in_game_order(opened):
    _, ladder, bots = opened
    played = [finished(bots, like("heuristic"), opponents=["random"], seed=seed) for seed in (5, 6)]
    for game in played:
        ladder.add_finished(game)
    history = ladder.history("Alice")
    assert [entry["game"] for entry in history["history"]] == [game.game_id for game in played]
    latest = {row["name"]: row for row in ladder.payload()["players"]}["alice"]
    assert history["history"][-1]["mu"] == pytest.approx(latest["mu"], abs=1e-4)
    with pytest.raises(ArenaError) as unknown:
        ladder.history("nobody")
    assert unknown.value.status == 404


def test_the_worker_replays_what_a_restart_left_pending(tmp_path):
    path = tmp_path / "arena.sqlite3"
    store, ladder, bots = open_ladder(path)
    game = finished(bots, drawer, seed=7)
    ladder.add_finished(game)
    store.close()  # the arena stops before the duplicate is replayed

    store, ladder, _ = open_ladder(path)
    assert len(store.pending_duplicates(10)) == 1
    ladder.start()
    deadline = time.monotonic() + 60
    while store.pending_duplicates(10) and time.monotonic() < deadline:
        time.sleep(0.05)
    ladder.stop()
    duplicate = {row["name"]: row for row in ladder.payload()["players"]}["alice"]["duplicate"]
    assert duplicate is not None and duplicate["rounds"] == 1
    store.close()


def test_the_reference_agent_must_be_a_known_agent(tmp_path):
    store, _, _ = open_ladder(tmp_path / "arena.sqlite3")
    with pytest.raises(ValueError, match="reference agent"):
        Ladder(store, reference="/some/file.pt")


def test_a_game_the_store_refuses_is_said_and_the_answer_does_not_fail(opened, monkeypatch, capsys):
    store, ladder, bots = opened
    game = finished(bots, drawer, seed=1)
    monkeypatch.setattr(store_module, "MAX_STORED_RECORD_BYTES", 100)
    assert not ladder.add_finished(game)
    assert f"game {game.game_id} is not stored" in capsys.readouterr().err and store.games() == []
