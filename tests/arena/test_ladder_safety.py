"""The ladder's safety: only games played to their end count; a bot, and a seat replaying a stored game, see only
what that seat has seen; secrets are kept as digests and never written in a URL or a log; errors name no server
path."""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading

import httpx
import pytest
from arena_helpers import LOCAL, bearer, served
from ladder_helpers import drawer
from starlette.testclient import TestClient
from test_api import labels_in
from test_bots import FakeClock, seen_by

from agents.arena import bot_client, create_app
from agents.arena.ladder import Ladder
from hpuno_env.cards import CARD_LABELS
from hpuno_env.records import Replay


def ladder_app(tmp_path, **options):
    return create_app(records=str(tmp_path / "records"), db=tmp_path / "arena.sqlite3", allow_decks=True, **options)


def new_game(client, app, **body):
    answer = client.post("/api/games", json=body)
    assert answer.status_code == 200, answer.text
    return app.state.arena.games[answer.json()["game"]], answer.json()


def person_moves(client, game, token: str, moves: int | None = None) -> None:
    """The person draws (``drawer``) through the API ``moves`` times, or until a bot is to act or the game ends."""
    while not game.over and game.bot_to_act() is None and (moves is None or moves > 0):
        with game.lock:
            label = drawer(game)
        answer = client.post(f"/api/games/{game.game_id}/actions", json={"action": label}, headers=bearer(token))
        assert answer.status_code == 200, answer.text
        moves = None if moves is None else moves - 1


def ladder_state(store) -> tuple:
    return store.players(), store.duplicate_differences(), store.pending_duplicates(100)


def test_games_not_played_to_their_end_change_no_rating_and_no_duplicate(tmp_path):
    clock = FakeClock()
    app = ladder_app(tmp_path, clock=clock, idle_seconds=60, bot_move_seconds=10)
    client = TestClient(app, base_url=LOCAL)  # no lifespan: the test moves the clocks, and no worker replays deals
    arena = app.state.arena
    store = arena.ladder.store
    assert client.post("/api/bots", json={"name": "zeta"}).status_code == 200
    empty = ladder_state(store)

    idle, made = new_game(client, app, name="alice", seed=1)
    person_moves(client, idle, made["token"], 2)
    clock.now += 61
    arena.sweep()  # dropped idle: saved unfinished
    stopped, made = new_game(client, app, name="bob", seed=2, opponents=["bot:zeta"])
    person_moves(client, stopped, made["token"], 1)
    arena.stop()  # the arena stops mid-game: saved unfinished

    stored = {row["game"]: row for row in store.games()}
    assert [stored[game.game_id]["outcome"] for game in (idle, stopped)] == ["unfinished", "unfinished"]
    assert not any(stored[game.game_id]["rated"] for game in (idle, stopped))
    assert ladder_state(store) == empty and client.get("/api/ladder").json()["players"][0]["games"] == 0

    counted, made = new_game(client, app, name="dave", seed=4)  # played to its end: it counts
    person_moves(client, counted, made["token"])
    assert counted.over and stored_rated(store, counted.game_id)
    assert {row["name"]: row["games"] for row in store.players()} == {"zeta": 0, "dave": 1, "heuristic": 1}
    assert [seat for _, seat, _, _ in store.pending_duplicates(100)] == [0]


def test_a_bot_that_leaves_a_game_is_ranked_last_and_gets_no_duplicate(tmp_path):
    clock = FakeClock()
    app = ladder_app(tmp_path, clock=clock, bot_move_seconds=10)
    client = TestClient(app, base_url=LOCAL)
    arena = app.state.arena
    store = arena.ladder.store
    assert client.post("/api/bots", json={"name": "zeta"}).status_code == 200
    left, made = new_game(client, app, name="carol", seed=3, opponents=["bot:zeta"])  # the bot never answers
    for _ in range(5000):
        if left.over:
            break
        person_moves(client, left, made["token"])
        if left.bot_to_act() is not None:
            clock.now += 11
            assert arena.bots.check_clocks() == 1
    assert left.over and left.left_seats == [1] and left.record()["outcome"] == "terminated"
    assert stored_rated(store, left.game_id) and store.timeouts("zeta") > 0
    ranks = {row["name"]: row["rank"] for row in store.seats(left.game_id)}
    assert ranks["zeta"] > ranks["carol"]  # last, whoever the fallback's moves made the winner
    ratings = {row["name"]: row["mu"] for row in store.players()}
    assert ratings["zeta"] < ratings["carol"]
    assert store.pending_duplicates(100) == []  # none for the bot that left (nor for carol: a bot was at her table)


def stored_rated(store, game_id: str) -> bool:
    return {row["game"]: row["rated"] for row in store.games()}[game_id]


def test_two_bots_at_one_table_each_see_only_their_own_seat(tmp_path):
    app = ladder_app(tmp_path)
    with TestClient(app, base_url=LOCAL) as client:
        secrets = {name: client.post("/api/bots", json={"name": name}).json()["token"] for name in ("zeta", "omega")}
        game, made = new_game(client, app, players=4, seed=7, opponents=["bot:zeta", "bot:omega", "heuristic"],
                           rules={"seven_zero": True, "stacking": "both"})
        seen = {1: set(), 2: set()}
        answers = 0
        for _ in range(5000):
            if game.over:
                break
            seat = game.bot_to_act()
            if seat is None:
                person_moves(client, game, made["token"])
                continue
            name = game.bots[seat]
            other = secrets["omega" if name == "zeta" else "zeta"]
            assert client.get("/api/bots/turns", headers=bearer(other)).json()["turns"] == []  # the other bot waits
            seen[seat] |= seen_by(game, seat)
            [turn] = client.get("/api/bots/turns", headers=bearer(secrets[name])).json()["turns"]
            view = client.get(f"/api/games/{game.game_id}", headers=bearer(secrets[name])).json()
            for shown in (turn["view"], view):
                assert shown["seat"] == seat and not {"hands", "draw_pile", "discard", "seed", "deck"} & set(shown)
                assert labels_in(shown) <= seen[seat], labels_in(shown) - seen[seat]
            answer = client.post(f"/api/games/{game.game_id}/actions", json={"action": view["legal"][-1]},
                                 headers=bearer(secrets[name]))
            assert answer.status_code == 200, answer.text
            seen[seat] |= seen_by(game, seat)
            assert labels_in(answer.json()) <= seen[seat], labels_in(answer.json()) - seen[seat]
            answers += 1
        assert game.over and answers > 10
        for seat, name in game.bots.items():  # the last view too: the others' hands at the end stay unseen
            final = client.get(f"/api/games/{game.game_id}", headers=bearer(secrets[name])).json()
            assert labels_in(final) <= seen[seat] | seen_by(game, seat)
        assert not labels_in(client.get("/api/ladder").json()) and not labels_in(client.get("/api/ladder/zeta").json())


def seen_as_replayed(record: dict) -> list[list[set[str]]]:
    """For each frame of a record (its deal, then one a decision), the cards each seat had seen up to it: its
    hands, the discard piles, the hands its challenges showed it."""
    replaying = Replay(record)
    num_players = record["num_players"]
    seen = [set() for _ in range(num_players)]
    frames = []
    for _ in replaying:
        engine = replaying.engine
        state, s = engine.game_state(0), engine.state
        for seat in range(num_players):
            seen[seat] |= set(state["hands"][engine.agents[seat]]) | set(state["discard"])
            for owner in range(num_players):
                if owner != seat and s.revealed_seen[0, seat, owner]:
                    seen[seat] |= {CARD_LABELS[c] for c in range(len(CARD_LABELS)) if s.revealed[0, seat, owner, c]}
        frames.append([set(cards) for cards in seen])
    return frames


def test_a_stored_game_replays_to_each_seat_only_what_that_seat_had_seen(tmp_path):
    app = ladder_app(tmp_path)
    with TestClient(app, base_url=LOCAL) as client:
        live, made = new_game(client, app, players=3, seed=5, name="alice", rules={"seven_zero": True})
        assert client.post("/api/replays", json={"game": live.game_id}).status_code == 404  # live: in no store yet
        person_moves(client, live, made["token"])
        assert live.over
        opened = client.post("/api/replays", json={"game": live.game_id})
        assert opened.status_code == 200, opened.text
        opened = opened.json()
        record = app.state.arena.ladder.store.record(live.game_id)
        seen = seen_as_replayed(record)
        assert opened["frames"] == len(seen) > 10
        url, headers = f"/api/replays/{opened['replay']}/frames", bearer(opened["token"])
        for index in range(opened["frames"]):
            for seat in range(3):
                frame = client.get(f"{url}/{index}?viewer={seat}", headers=headers).json()
                assert "hands" not in frame and frame["hand"] == sorted(frame["hand"], key=CARD_LABELS.index)
                assert labels_in(frame) <= seen[index][seat], (index, seat, labels_in(frame) - seen[index][seat])
        assert "hands" in client.get(f"{url}/0?viewer=spectator", headers=headers).json()  # a finished game's spectator
        for body in ({"game": "nothere"}, {"game": 3}):
            assert client.post("/api/replays", json=body).status_code == 404


def test_secrets_are_kept_as_digests_and_never_written_in_a_url_or_a_log(tmp_path, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    app = ladder_app(tmp_path)
    server = served(app, log_level="debug", log_config=None, access_log=True)  # every request logged, with its URL
    base = next(server)
    with httpx.Client(base_url=base, timeout=30) as client:
        secret = bot_client.register(client, "zeta")
        stop = threading.Event()
        runner = threading.Thread(target=bot_client.play, args=(client, secret, "heuristic"),
                                  kwargs={"wait": 0.2, "until": stop.is_set}, daemon=True)
        runner.start()
        try:
            created = client.post("/api/games", json={"players": 3, "seed": 6, "name": "erin",
                                                      "opponents": ["bot:zeta", "heuristic"]}).json()
            play_over_http(client, created)
        finally:
            stop.set()
            runner.join(30)
    next(server, None)  # the server stops
    logged = caplog.text + "".join(capfd.readouterr())
    assert "/api/bots/turns" in logged and f"/api/games/{created['game']}/actions" in logged  # the log is read
    for kept in (secret, created["token"]):
        assert kept not in logged
    files = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert any(path.name.startswith("arena.sqlite3") for path in files) and any(path.suffix == ".json" for path in files)
    written = b"".join(path.read_bytes() for path in files)
    for kept in (secret, created["token"]):
        assert kept.encode() not in written
    assert hashlib.sha256(secret.encode()).digest() in written  # the digest is what the database keeps


def play_over_http(client, created: dict, limit: int = 3000) -> dict:
    """A person plays by ``drawer``'s rule over HTTP, asking again while a bot is to act; returns the last view."""
    headers, url = bearer(created["token"]), f"/api/games/{created['game']}"
    for _ in range(limit):
        view = client.get(url, headers=headers).json()
        if view["over"]:
            return view
        legal = view["legal"]
        if not legal:  # a bot is to act
            continue
        wanted = next((label for label in ("draw", "keep", "accept", "pass") if label in legal), legal[0])
        assert client.post(f"{url}/actions", json={"action": wanted}, headers=headers).status_code == 200
    raise AssertionError(f"the game did not end in {limit} requests")


def test_ladder_and_bot_errors_name_no_server_path(tmp_path, monkeypatch):
    app = ladder_app(tmp_path)
    with TestClient(app, base_url=LOCAL, raise_server_exceptions=False) as client:
        secret = client.post("/api/bots", json={"name": "zeta"}).json()["token"]
        answers = [
            client.get("/api/ladder/nobody"), client.get("/api/ladder/no%20spaces"),
            client.post("/api/bots", json={"name": "zeta"}), client.post("/api/bots", json={"name": "../etc"}),
            client.post("/api/games", json={"players": 2, "opponents": ["bot:ghost"]}),
            client.post("/api/games", json={"players": 2, "name": "heuristic"}),
            client.post("/api/replays", json={"game": "nothere"}),
            client.get("/api/bots/turns", headers=bearer("wrong")), client.get("/api/bots/turns"),
            client.post("/api/games/nothere/actions", json={"action": "draw"}, headers=bearer(secret)),
        ]
        store = app.state.arena.ladder.store
        failing = sqlite3.OperationalError(f"disk I/O error on {store.path}")
        monkeypatch.setattr(store, "players", lambda: (_ for _ in ()).throw(failing))
        answers.append(client.get("/api/ladder"))
    assert [answer.status_code for answer in answers] == [404, 400, 409, 400, 404, 409, 404, 403, 401, 404, 500]
    for answer in answers:
        assert answer.json()["error"] and str(tmp_path) not in answer.text, answer.text
    assert "disk I/O error on arena.sqlite3" in answers[-1].json()["error"]


@pytest.mark.parametrize("outcome", ["unfinished", "truncated"])
def test_the_ladder_rates_only_a_terminated_outcome(outcome):
    seats = [("alice", "person"), ("heuristic", "agent")]
    assert Ladder.rated({"outcome": "terminated"}, seats) and not Ladder.rated({"outcome": outcome}, seats)
