"""How the arena's agents act (``agents.arena.acting``): greedy trained agents of waiting games answered by one
``act`` call with the moves each game gets alone, and the search player searched in a worker process with the
moves it makes in the server, while other games move on; and a person's move answered without a look in the
ladder's store."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest
from arena_helpers import LOCAL, bearer, choose
from starlette.testclient import TestClient

from agents.arena import create_app
from agents.arena.acting import Acting, Batcher
from agents.arena.games import AgentShelf, make_game
from agents.players import SearchAgent, load

WAIT = 60  # seconds: far beyond any answer here (a worker process starts in a few), so a stuck test fails


def watched_games(shelf: AgentShelf, seeds, agents=("ppo_4p",), players: int = 4):
    return [make_game(shelf, players, list(agents), None, seed, person=False) for seed in seeds]


def played_out(game) -> list:
    while not game.over:
        game.step_agent()
    return game.record()["rounds"]


def test_waiting_games_are_answered_by_one_act_call_with_their_own_moves():
    shelf = AgentShelf()
    games = watched_games(shelf, range(8))
    batcher = shelf.acting.batcher
    real_act = games[0].policies[0].act
    calls = []

    def first_waits_for_the_others(observations, masks):
        calls.append(len(observations))
        if len(calls) == 1:  # the first game leads: the other seven come in meanwhile
            deadline = time.monotonic() + WAIT
            while len(batcher._waiting) < len(games) - 1:
                assert time.monotonic() < deadline, "the other games never asked"
                time.sleep(0.001)
        return real_act(observations, masks)

    for game in games:  # one network in every seat: whichever seat's policy answers a batch, the moves are the same
        for policy in game.policies.values():
            policy.act = first_waits_for_the_others
    threads = [threading.Thread(target=game.step_agent) for game in games]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert calls == [1, len(games) - 1], calls
    alone = watched_games(AgentShelf(), range(8))
    for game in alone:
        game.acting = None
        game.step_agent()
    assert [game.last_move["action"] for game in games] == [game.last_move["action"] for game in alone]


def test_games_played_at_once_are_recorded_as_each_is_played_alone():
    shelf = AgentShelf()
    games = watched_games(shelf, range(100, 112))
    threads = [threading.Thread(target=played_out, args=(game,)) for game in games]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    alone = watched_games(AgentShelf(), range(100, 112))
    for game in alone:
        game.acting = None
    assert [game.record() for game in games] == [(played_out(game), game.record())[1] for game in alone]
    batcher = shelf.acting.batcher
    assert batcher.decisions == sum(len(entry["decisions"]) for game in games for entry in game.record()["rounds"])
    assert batcher.calls <= batcher.decisions


def test_a_failed_batch_is_raised_in_each_of_its_games():
    batcher = Batcher()
    policy = load("ppo_4p", num_players=4)
    game = watched_games(AgentShelf(), [1])[0]

    def broken(observations, masks):
        raise RuntimeError("the network failed")

    policy.act = broken
    with pytest.raises(RuntimeError, match="the network failed"):
        batcher.act(policy, game.engine.observe(), game.engine.legal_mask())
    assert not batcher._leading and not batcher._waiting  # the next decision leads at once


def test_a_sampling_or_search_player_is_not_batched():
    shelf = AgentShelf()
    for name in ("heuristic", "random", "search"):
        game = watched_games(shelf, [3], agents=(name,), players=2)[0]
        game.step_agent()
    assert shelf.acting.batcher.decisions == 0


def searched_game(acting: Acting | None, seed: int):
    """A watched 2-player game of the search player against the heuristic, played to its end."""
    shelf = AgentShelf()
    game = watched_games(shelf, [seed], agents=("search", "heuristic"), players=2)[0]
    game.acting = acting
    searches = []
    while not game.over:
        move = game.step_agent()
        if move["win_estimates"] is not None:
            searches.append(move["win_estimates"])
    return game.record(), searches, game.policies[0]


def test_the_search_player_searches_in_a_worker_process_with_the_moves_it_makes_in_the_server():
    acting = Acting(search_workers=1)
    try:
        record, searches, player = searched_game(acting, seed=5)
    finally:
        acting.close()
    assert acting.search.last_pid != os.getpid()
    here, searched_here, player_here = searched_game(None, seed=5)
    assert record == here and searches == searched_here and searches
    assert (player.decisions, player.changed) == (player_here.decisions, player_here.changed)
    assert player.rng.bit_generator.state == player_here.rng.bit_generator.state
    assert isinstance(player, SearchAgent)


def test_the_worker_is_given_the_seats_observation_and_mask_only(monkeypatch):
    import agents.arena.acting as acting_module

    sent = []
    real_submit = acting_module.concurrent.futures.ProcessPoolExecutor.submit

    def recorded(pool, function, *arguments):
        sent.append(arguments)
        return real_submit(pool, function, *arguments)

    monkeypatch.setattr(acting_module.concurrent.futures.ProcessPoolExecutor, "submit", recorded)
    acting = Acting(search_workers=1)
    try:
        game = watched_games(AgentShelf(), [9], agents=("search", "heuristic"), players=2)[0]
        game.acting = acting
        while not sent:
            observation, mask = game.engine.observe(), game.engine.legal_mask()
            game.step_agent()
    finally:
        acting.close()
    spec, states, observation_sent, mask_sent = sent[0]
    assert np.array_equal(observation_sent, observation) and np.array_equal(mask_sent, mask)
    assert set(spec) == {"num_players", "blueprint", "belief", "worlds", "rollout", "gate", "correct_gate", "rules",
                         "evidence"}
    assert (spec["blueprint"], spec["belief"]) == ("ppo_2p", "shipped")  # the worker loads the same player by name
    assert all(set(state) == {"bit_generator", "state", "has_uint32", "uinteger"} for state in states)


def test_a_games_search_does_not_hold_up_another_games_moves(records):
    with TestClient(create_app(records=str(records), allow_decks=True, search_workers=1), base_url=LOCAL) as client:
        arena = client.app.state.arena
        arena.shelf.acting.search.warm()  # the worker started and compiled before the clock matters
        slow = client.post("/api/watch", json={"players": 2, "agents": ["search", "heuristic"], "seed": 4}).json()
        game, step = arena.games[slow["game"]], f"/api/games/{slow['game']}/step"
        while int(game.engine.current_player[0]) != 0 or game.engine.legal_mask()[0].sum() < 2:
            assert client.post(step, headers=bearer(slow["token"])).status_code == 200
        searcher = game.policies[0]
        searcher.worlds = 4096  # a search of a second or more (its twin in the worker searches as many worlds)
        decisions = searcher.decisions
        stepping = threading.Thread(target=client.post, args=(step,), kwargs={"headers": bearer(slow["token"])})
        stepping.start()
        other = client.post("/api/games", json={"players": 2, "opponents": ["heuristic"], "seed": 6}).json()
        view = client.get(f"/api/games/{other['game']}", headers=bearer(other["token"])).json()
        for _ in range(3):
            answer = client.post(f"/api/games/{other['game']}/actions", json={"action": choose(view["legal"])},
                                 headers=bearer(other["token"]))
            assert answer.status_code == 200, answer.text
            view = answer.json()
        assert stepping.is_alive(), "the search ended before the other game's three moves: no overlap to see"
        stepping.join(WAIT)
        assert searcher.decisions == decisions + 1 and arena.shelf.acting.search.last_pid != os.getpid()
    assert arena.shelf.acting.search._pool is None  # the workers ended with the server


def test_a_persons_move_is_answered_without_asking_the_store_about_bots(tmp_path, monkeypatch):
    app = create_app(records=str(tmp_path / "records"), allow_decks=True, db=str(tmp_path / "arena.sqlite3"))
    with TestClient(app, base_url=LOCAL) as client:
        asked = []
        bots = app.state.arena.bots
        real = bots.holds_bot_secret
        monkeypatch.setattr(bots, "holds_bot_secret", lambda authorization: asked.append(authorization) or real(authorization))
        created = client.post("/api/games", json={"players": 2, "opponents": ["heuristic"], "seed": 1}).json()
        view = client.get(f"/api/games/{created['game']}", headers=bearer(created["token"])).json()
        answer = client.post(f"/api/games/{created['game']}/actions", json={"action": choose(view["legal"])},
                             headers=bearer(created["token"]))
        assert answer.status_code == 200 and not asked
        wrong = client.get(f"/api/games/{created['game']}", headers=bearer("not-the-secret"))
        assert wrong.status_code == 403 and asked == ["Bearer not-the-secret"]


def test_a_search_whose_worker_died_is_made_in_the_server_and_the_next_in_a_new_worker():
    acting = Acting(search_workers=1)
    try:
        first = acting.search.warm()
        os.kill(first[0], signal.SIGKILL)
        record, searches, _ = searched_game(acting, seed=5)
        assert acting.search.last_pid not in (first[0], os.getpid())
    finally:
        acting.close()
    here, searched_here, _ = searched_game(None, seed=5)
    assert record == here and searches == searched_here
