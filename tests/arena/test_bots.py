"""Bots on the ladder: registering, secrets, a bot's turns and actions through the API, what a bot's view holds
(its own seat only), its clock and recorded timeouts, the limits, and the reference bot client playing a game."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from ladder_helpers import drawer, ladder_app, like, new_game, open_ladder, play_person
from starlette.testclient import TestClient
from test_api import labels_in

from agents.arena import bot_client
from agents.arena.games import ArenaError
from agents.arena.seats import MAX_SILENT_MOVES
from hpuno_env import ACTION_LABELS, CARD_LABELS


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def opened(tmp_path):
    store, ladder, bots = open_ladder(tmp_path / "arena.sqlite3")
    yield store, ladder, bots
    bots.stop_clock()
    store.close()


@pytest.fixture
def client(opened):
    with TestClient(ladder_app(opened[2])) as test_client:
        yield test_client


def bearer(secret: str) -> dict:
    return {"Authorization": f"Bearer {secret}"}


def register(client, name="zeta") -> str:
    response = client.post("/api/bots", json={"name": name})
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"token"}
    return response.json()["token"]


def seen_by(game, seat: int) -> set[str]:
    """Card labels ``seat`` may know now, from the engine: its hand, the discard pile, hands a challenge showed it."""
    state = game.engine.game_state(0)
    seen = set(state["hands"][game.agents[seat]]) | set(state["discard"])
    s = game.engine.state
    for owner in range(game.engine.num_players):
        if owner != seat and s.revealed_seen[0, seat, owner]:
            seen |= {CARD_LABELS[c] for c in range(len(CARD_LABELS)) if s.revealed[0, seat, owner, c]}
    return seen


def test_a_bot_is_registered_once_and_its_secret_opens_its_turns(client):
    secret = register(client)
    assert len(secret) >= 40
    assert client.get("/api/bots/turns", headers=bearer(secret)).json() == {"turns": []}
    taken = client.post("/api/bots", json={"name": "ZETA"})
    assert taken.status_code == 409 and "taken" in taken.json()["error"]
    assert client.get("/api/bots/turns").status_code == 401
    assert client.get("/api/bots/turns", headers=bearer(secret + "x")).status_code == 403
    assert client.get("/api/bots/turns", headers={"Authorization": secret}).status_code == 401


@pytest.mark.parametrize("body,status", [
    ({"name": "has space"}, 400), ({"name": "x" * 40}, 400), ({"name": 7}, 400), ({"name": "a", "extra": 1}, 400),
    ({}, 400), ([1], 400), ({"name": "a" * 2000}, 413)])
def test_bad_registrations_are_refused_and_make_nothing(client, opened, body, status):
    response = client.post("/api/bots", json=body)
    assert response.status_code == status and response.json()["error"]
    assert opened[0].players() == []


def test_the_long_poll_waits_for_a_turn_and_is_bounded(client):
    secret = register(client)
    start = time.monotonic()
    assert client.get("/api/bots/turns", params={"wait": 0.3}, headers=bearer(secret)).json() == {"turns": []}
    assert time.monotonic() - start >= 0.3
    for wait in ("100", "-1", "nan"):
        assert client.get("/api/bots/turns", params={"wait": wait}, headers=bearer(secret)).status_code in (400, 422)


@pytest.mark.parametrize("players,seed,rules", [(2, 1, {}), (4, 7, {"seven_zero": True, "jump_in": True, "stacking": "both"})])
def test_a_bot_plays_through_the_api_and_sees_only_its_own_seat(client, opened, players, seed, rules):
    store, ladder, bots = opened
    secret = register(client)
    opponents = ["bot:zeta"] + ["heuristic"] * (players - 2)
    game = new_game(bots, players=players, opponents=opponents, seed=seed, rules=rules)
    seen: set[str] = set()
    views = 0

    def bot_move(game, seat):
        nonlocal views
        [turn] = client.get("/api/bots/turns", headers=bearer(secret)).json()["turns"]
        view = turn["view"]
        assert turn["game"] == game.game_id and view["seat"] == seat == 1
        seen.update(seen_by(game, seat))
        assert not {"hands", "draw_pile", "discard", "seed", "deck"} & set(view), sorted(view)
        assert labels_in(view) <= seen, labels_in(view) - seen
        assert view["observation"] == game.engine.observe(np.full(1, seat))[0].tolist()
        assert view["legal"] == game.legal() and 0 < view["clock"] <= bots.move_seconds
        assert client.get(f"/api/games/{game.game_id}", headers=bearer(secret)).json()["hand"] == view["hand"]
        plays = [label for label in view["legal"] if label.startswith("play:")]
        answer = client.post(f"/api/games/{game.game_id}/actions", json={"action": (plays or view["legal"])[-1]},
                             headers=bearer(secret))
        assert answer.status_code == 200, answer.text
        assert labels_in(answer.json()) <= seen | seen_by(game, seat)
        views += 1

    def person(game):
        view = game.seat_view()
        assert labels_in(view) <= seen_by(game, 0), labels_in(view) - seen_by(game, 0)
        return drawer(game)

    play_person(game, person, bot_move)
    assert views > 3 and game.over and store.timeouts("zeta") == 0
    bot_decisions = [d for r in game.record()["rounds"] for d in r["decisions"] if d[0] == 1]
    assert len(bot_decisions) == views
    final = game.engine.game_state(0)["hands"]
    hidden = {card for agent, cards in final.items() if agent != game.agents[1] for card in cards} - seen
    assert not hidden & labels_in(client.get(f"/api/games/{game.game_id}", headers=bearer(secret)).json())


def test_a_bots_wrong_moves_are_refused_and_change_nothing(client, opened):
    _, _, bots = opened
    secret, other = register(client), register(client, "omega")
    game = new_game(bots, players=3, opponents=["bot:zeta", "heuristic"], seed=2)
    while game.bot_to_act() is None:
        with game.lock:
            game.person_acts(drawer(game))
    decisions = game.decisions
    url = f"/api/games/{game.game_id}/actions"
    illegal = next(label for label in ACTION_LABELS if label not in game.legal())
    assert client.post(url, json={"action": illegal}, headers=bearer(secret)).status_code == 409
    assert client.post(url, json={"action": "fly"}, headers=bearer(secret)).status_code == 400
    assert client.post(url, json={"action": "draw", "also": 1}, headers=bearer(secret)).status_code == 400
    assert client.post(url, json={"action": "draw"}, headers=bearer(other)).status_code == 404  # not its game
    assert client.post("/api/games/nothere/actions", json={"action": "draw"}, headers=bearer(secret)).status_code == 404
    assert client.post(url, json={"action": "draw"}).status_code == 401
    assert game.decisions == decisions and game.bot_to_act() == 1
    with game.lock:
        game.bot_acts(1, game.legal()[0])
    assert game.bot_to_act() is None and not game.over
    answer = client.post(url, json={"action": "draw"}, headers=bearer(secret))
    assert answer.status_code == 409 and "not your turn" in answer.json()["error"]


def test_a_silent_bot_has_the_fallback_play_for_it_recorded_and_is_taken_as_gone_after_three(tmp_path):
    clock = FakeClock()
    store, ladder, bots = open_ladder(tmp_path / "arena.sqlite3", move_seconds=10, clock=clock)
    bots.create("zeta", "127.0.0.1")
    ended = []
    bots.on_over = ended.append
    game = new_game(bots, players=2, opponents=["bot:zeta"], seed=3, clock=clock)

    def wait_out(game, seat):
        assert game.silent[seat] < MAX_SILENT_MOVES  # a gone bot's moves never wait
        assert bots.check_clocks() == 0
        clock.now += 9.9
        assert bots.check_clocks() == 0 and game.bot_to_act() == seat
        clock.now += 0.2
        assert bots.check_clocks() == 1

    play_person(game, drawer, wait_out)
    bot_moves = [d for r in game.record()["rounds"] for d in r["decisions"] if d[0] == 1]
    assert store.timeouts("zeta") == len(bot_moves) > MAX_SILENT_MOVES
    assert game.silent[1] == len(bot_moves)
    assert sum("Your clock ran out" in line for line in game.bot_logs[1]) == len(bot_moves)
    assert any("bot:zeta's clock ran out" in line for line in game.log)
    # the game ended in the person's move (theirs, or the replies to it, a gone bot's too): the server's to save
    assert ended == []
    store.close()


def test_the_clock_thread_plays_for_a_silent_bot(tmp_path):
    store, ladder, bots = open_ladder(tmp_path / "arena.sqlite3", move_seconds=0.05)
    bots.create("zeta", "127.0.0.1")
    game = new_game(bots, players=2, opponents=["bot:zeta"], seed=5)
    while game.bot_to_act() is None:
        with game.lock:
            game.person_acts(drawer(game))
    bots.start_clock()
    deadline = time.monotonic() + 10
    while game.bot_to_act() is not None and time.monotonic() < deadline:
        time.sleep(0.01)
    bots.stop_clock()
    assert game.bot_to_act() is None and store.timeouts("zeta") >= 1
    store.close()


def test_bot_seats_are_checked_and_a_bot_sits_in_a_bounded_number_of_games(tmp_path):
    store, ladder, bots = open_ladder(tmp_path / "arena.sqlite3", max_games_per_bot=1)
    bots.create("zeta", "127.0.0.1")
    with pytest.raises(ArenaError, match="no bot 'nobody'") as unknown:
        new_game(bots, players=3, opponents=["bot:nobody", "heuristic"])
    assert unknown.value.status == 404
    with pytest.raises(ArenaError, match="at most one seat"):
        new_game(bots, players=3, opponents=["bot:zeta", "bot:Zeta"])
    with pytest.raises(ArenaError, match="1 to 32 letters"):
        new_game(bots, players=2, opponents=["bot:no such"])
    first = new_game(bots, players=2, opponents=["bot:zeta"])
    with pytest.raises(ArenaError, match="1 live games already") as full:
        new_game(bots, players=2, opponents=["bot:zeta"], seed=1)
    assert full.value.status == 429
    del first  # a game the arena drops is no longer counted
    new_game(bots, players=2, opponents=["bot:zeta"], seed=2)
    store.close()


def test_a_game_a_bots_move_ends_is_handed_to_the_server_once_and_rated(client, opened):
    store, ladder, bots = opened
    secret = register(client)
    ended = []
    bots.on_over = lambda game: ended.append(ladder.add_finished(game))
    for seed in range(40):
        game = new_game(bots, players=2, opponents=["bot:zeta"], seed=seed)

        def bot_move(game, seat):
            view = client.get(f"/api/games/{game.game_id}", headers=bearer(secret)).json()
            plays = [label for label in view["legal"] if label.startswith("play:")]
            client.post(f"/api/games/{game.game_id}/actions", json={"action": (plays or view["legal"])[0]},
                        headers=bearer(secret))

        play_person(game, like("random-play"), bot_move)
        if ended:
            break
    assert ended == [True] and game.winner == game.agents[1]
    zeta = {row["name"]: row for row in ladder.payload()["players"]}["zeta"]
    assert zeta["kind"] == "bot" and zeta["games"] == 1 and zeta["mu"] > 25


def test_the_reference_bot_client_plays_a_game_over_the_api(client, opened):
    store, ladder, bots = opened
    secret = bot_client.register(client, "client-bot")
    game = new_game(bots, players=2, opponents=["bot:client-bot"], seed=11)
    moves = []
    runner = threading.Thread(target=lambda: moves.append(
        bot_client.play(client, secret, "ppo_2p", wait=0.2, until=lambda: game.over)))
    runner.start()
    deadline = time.monotonic() + 120
    while not game.over and time.monotonic() < deadline:
        with game.lock:
            if not game.over and game.bot_to_act() is None:
                game.person_acts(drawer(game))
        time.sleep(0.001)
    runner.join(30)
    assert game.over and not runner.is_alive()
    bot_moves = [d for r in game.record()["rounds"] for d in r["decisions"] if d[0] == 1]
    assert moves == [len(bot_moves)] and len(bot_moves) > 3 and store.timeouts("client-bot") == 0


def test_the_bot_client_chooses_as_its_agent_would_on_the_engines_observation(opened):
    _, _, bots = opened
    bots.create("zeta", "127.0.0.1")
    game = new_game(bots, players=2, opponents=["bot:zeta"], seed=4)
    while game.bot_to_act() is None:
        with game.lock:
            game.person_acts(drawer(game))
    view = json.loads(json.dumps(bots.turns("zeta")[0]["view"]))  # as it travels
    from agents.players import load

    agent = load("heuristic", num_players=2)
    expected = ACTION_LABELS[int(agent.act(game.engine.observe(), game.engine.legal_mask())[0])]
    assert bot_client.choose({}, "heuristic", view) == expected
