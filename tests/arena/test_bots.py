"""Bots on the ladder: registering, secrets, a bot's turns and actions through the arena's API, what a bot's view
holds (its own seat only), its clock and recorded timeouts, the limits, the reference bot client playing a game,
and the arena's server with a database: people's named games with bots in them, rated and kept across a restart."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
from ladder_helpers import drawer, like, new_game, open_ladder, play_person
from starlette.testclient import TestClient
from test_api import labels_in

from agents.arena import bot_client, create_app
from agents.arena.games import ArenaError
from agents.arena.seats import MAX_SILENT_MOVES
from hpuno_env import ACTION_LABELS, CARD_LABELS


class FakeClock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def ladder_arena(tmp_path):
    """The arena's app on a database in ``tmp_path`` (seeded deals allowed: the same games every run)."""
    return create_app(records=str(tmp_path / "records"), db=tmp_path / "arena.sqlite3", allow_decks=True)


@pytest.fixture
def app(tmp_path):
    return ladder_arena(tmp_path)


@pytest.fixture
def client(app):
    with TestClient(app, base_url="http://localhost") as test_client:
        yield test_client


@pytest.fixture
def opened(app, client):
    arena = app.state.arena
    return arena.ladder.store, arena.ladder, arena.bots


def http_game(client, app, **body):
    """A person's game made through ``POST /api/games``: (the live game, the person's secret)."""
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 200, answer.text
    return app.state.arena.games[answer.json()["game"]], answer.json()["token"]


def person_over_http(client, token, choose):
    """A person who acts through ``POST /api/games/ID/actions``, choosing by ``choose(game)``."""
    def act(game):
        with game.lock:
            label = choose(game)
        answer = client.post(f"/api/games/{game.game_id}/actions", json={"action": label}, headers=bearer(token))
        assert answer.status_code == 200, answer.text
    return act


def play_over_http(game, person, bot_move, limit: int = 5000):
    for _ in range(limit):
        if game.over:
            return
        seat = game.bot_to_act()
        if seat is None:
            person(game)
        else:
            bot_move(game, seat)
    raise AssertionError(f"the game did not end in {limit} decisions")


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
def test_a_bot_plays_through_the_api_and_sees_only_its_own_seat(client, app, opened, players, seed, rules):
    store, ladder, bots = opened
    secret = register(client)
    opponents = ["bot:zeta"] + ["heuristic"] * (players - 2)
    game, _ = http_game(client, app, players=players, opponents=opponents, seed=seed, rules=rules)
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


def test_a_bots_wrong_moves_are_refused_and_change_nothing(client, app):
    secret, other = register(client), register(client, "omega")
    game, _ = http_game(client, app, players=3, opponents=["bot:zeta", "heuristic"], seed=2)
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


def bot_over_http(client, secret):
    """A bot that looks at its game and plays its first card (else its first legal action) through the API."""
    def move(game, seat):
        view = client.get(f"/api/games/{game.game_id}", headers=bearer(secret)).json()
        plays = [label for label in view["legal"] if label.startswith("play:")]
        answer = client.post(f"/api/games/{game.game_id}/actions", json={"action": (plays or view["legal"])[0]},
                             headers=bearer(secret))
        assert answer.status_code == 200, answer.text
    return move


def test_a_named_persons_game_with_a_bot_is_stored_and_rated_whichever_seat_ends_it(client, app, opened):
    store, ladder, bots = opened
    secret = register(client)
    ended_by = set()
    for seed in range(40):
        game, token = http_game(client, app, name="alice", opponents=["bot:zeta"], seed=seed)
        play_over_http(game, person_over_http(client, token, like("random-play")), bot_over_http(client, secret))
        ended_by.add(game.winner == game.agents[1])
        if ended_by == {True, False}:
            break
    assert ended_by == {True, False}
    stored = store.games(1000)
    assert len(stored) == seed + 1 and all(row["outcome"] == "terminated" and row["rated"] for row in stored)
    assert store.record(game.game_id) == game.record()
    rows = {row["name"]: row for row in client.get("/api/ladder").json()["players"]}
    assert rows["zeta"]["kind"] == "bot" and rows["alice"]["kind"] == "person"
    assert rows["zeta"]["games"] == rows["alice"]["games"] == seed + 1


def test_the_reference_bot_client_plays_a_game_over_the_api(client, app, opened):
    store, ladder, bots = opened
    secret = bot_client.register(client, "client-bot")
    game, token = http_game(client, app, opponents=["bot:client-bot"], seed=11)
    person = person_over_http(client, token, drawer)
    moves = []
    runner = threading.Thread(target=lambda: moves.append(
        bot_client.play(client, secret, "ppo_2p", wait=0.2, until=lambda: game.over)))
    runner.start()
    deadline = time.monotonic() + 120
    while not game.over and time.monotonic() < deadline:
        if game.bot_to_act() is None:
            person(game)
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


def test_a_restart_on_the_same_database_keeps_the_ladder_the_bots_and_the_finished_games(tmp_path):
    with TestClient(ladder_arena(tmp_path), base_url="http://localhost") as client:
        app = client.app
        secret = register(client)
        game, token = http_game(client, app, name="alice", opponents=["bot:zeta"], seed=1)
        play_over_http(game, person_over_http(client, token, drawer), bot_over_http(client, secret))
        ladder_before = client.get("/api/ladder").json()
        record = game.record()
    assert {row["name"] for row in ladder_before["players"]} == {"alice", "zeta"}
    with TestClient(ladder_arena(tmp_path), base_url="http://localhost") as client:
        store = client.app.state.arena.ladder.store
        assert client.get("/api/ladder").json() == ladder_before
        assert client.get("/api/bots/turns", headers=bearer(secret)).json() == {"turns": []}
        assert client.post("/api/bots", json={"name": "zeta"}).status_code == 409
        assert store.record(game.game_id) == record and store.games()[0]["rated"]
        again, _ = http_game(client, client.app, name="alice", opponents=["bot:zeta"], seed=2)
        assert again.bots == {1: "zeta"}


@pytest.mark.parametrize("body,status,words", [
    ({"name": "heuristic"}, 409, "an agent's"), ({"name": "zeta"}, 409, "a bot's"), ({"name": "has space"}, 400, "name"),
    ({"opponents": ["bot:nobody"]}, 404, "no bot"), ({"name": "alice", "opponents": ["bot:zeta", "bot:zeta"], "players": 3}, 400, "one seat")])
def test_a_game_with_a_bad_name_or_bot_is_refused_and_makes_nothing(client, app, body, status, words):
    register(client)
    answer = client.post("/api/games", json=body)
    assert answer.status_code == status and words in answer.json()["error"], answer.text
    assert app.state.arena.games == {} and app.state.arena.ladder.store.games() == []


def test_an_arena_without_a_database_takes_no_names_or_bots(tmp_path):
    with TestClient(create_app(records=str(tmp_path)), base_url="http://localhost") as client:
        assert "unknown field(s) ['name']" in client.post("/api/games", json={"name": "alice"}).json()["error"]
        assert "database" in client.post("/api/games", json={"opponents": ["bot:zeta"]}).json()["error"]
        assert client.get("/api/ladder").status_code == 404
