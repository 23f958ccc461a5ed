"""The arena's SQLite store: what it keeps survives a reopen, other schema versions and other files are refused
untouched, writes from many threads (and two connections) all land, secrets are kept only as digests, and names
and sizes are bounded."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from agents.arena import store as store_module
from agents.arena.games import ArenaError
from agents.arena.store import SCHEMA_VERSION, Store, StoreError, secret_digest

RECORD = {"outcome": "terminated", "rounds": []}  # the store keeps a record as given: the ladder checks it
DEFAULT = (25.0, 25 / 3)
TWO = [("alice", "person"), ("heuristic", "agent")]


def plus_one(before):
    """A stand-in rating rule: every name's mu up by one (the ladder's openskill rule is tested in test_ladder)."""
    return {name: (mu + 1, sigma) for name, (mu, sigma) in before.items()}


def test_everything_stored_survives_closing_and_reopening(tmp_path):
    path = tmp_path / "arena.sqlite3"
    store = Store(path)
    store.add_bot("zeta", "s3cret-token", "127.0.0.1", *DEFAULT)
    store.add_game("g1", RECORD, TWO, [1, 2], plus_one, [0], DEFAULT)
    store.add_game("g2", {**RECORD, "outcome": "unfinished"}, [(None, "person"), ("heuristic", "agent")], None, None, [], DEFAULT)
    store.add_timeout("zeta", "g3", 7, "draw")
    store.close()

    again = Store(path)
    assert again.bot_by_secret("s3cret-token") == "zeta" and again.kind_of("ZETA") == "bot"
    assert again.record("g1") == RECORD and again.record("g2")["outcome"] == "unfinished"
    assert [game["game"] for game in again.games()] == ["g2", "g1"]
    assert [game["rated"] for game in again.games()] == [False, True]
    players = {row["name"]: row for row in again.players()}
    assert players["alice"]["mu"] == 26.0 and players["alice"]["games"] == 1 and players["zeta"]["games"] == 0
    assert [entry["game"] for entry in again.history("alice")] == ["g1"]
    assert again.seats("g1") == [{"seat": 0, "name": "alice", "kind": "person", "rank": 1},
                                 {"seat": 1, "name": "heuristic", "kind": "agent", "rank": 2}]
    assert [(game, seat) for game, seat, _, _ in again.pending_duplicates(10)] == [("g1", 0)]
    assert again.timeouts("zeta") == 1
    again.close()


def test_another_schema_version_is_refused_naming_the_file_and_both_versions(tmp_path):
    path = tmp_path / "arena.sqlite3"
    Store(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(StoreError) as refused:
        Store(path)
    message = str(refused.value)
    assert str(path) in message and f"version {SCHEMA_VERSION + 1}" in message and f"version {SCHEMA_VERSION}" in message
    assert "migrat" in message and path.read_bytes() == before


def test_a_file_that_is_not_an_arena_database_is_refused_and_left_alone(tmp_path):
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE notes (text TEXT)")
    before = other.read_bytes()
    with pytest.raises(StoreError, match="not an hpuno arena database"):
        Store(other)
    assert other.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite3"]
    text = tmp_path / "notes.txt"
    text.write_bytes(b"not a database at all, just some text that is long enough to have a header" * 20)
    with pytest.raises(StoreError, match="notes.txt"):
        Store(text)
    assert text.read_bytes().startswith(b"not a database")


def test_ratings_written_from_many_threads_and_two_connections_all_count(tmp_path):
    path = tmp_path / "arena.sqlite3"
    first, second = Store(path), Store(path)  # two connections on one file, as two processes would have
    threads, games_each = 8, 15
    errors = []

    def finish_games(worker: int):
        store = first if worker % 2 else second
        try:
            for number in range(games_each):
                store.add_game(f"w{worker}-{number}", RECORD, [(f"p{worker}", "person"), ("heuristic", "agent")], [1, 2],
                               plus_one, [0], DEFAULT)
        except Exception as error:  # any failure fails the test below
            errors.append(error)

    workers = [threading.Thread(target=finish_games, args=(worker,)) for worker in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    heuristic = next(row for row in first.players() if row["name"] == "heuristic")
    # every game's read-update-write of the shared name landed: none was lost to another's
    assert heuristic["games"] == threads * games_each and heuristic["mu"] == DEFAULT[0] + threads * games_each
    assert len(first.games(limit=1000)) == threads * games_each
    assert len(second.pending_duplicates(1000)) == threads * games_each


def test_a_failed_write_changes_nothing(tmp_path):
    store = Store(tmp_path / "arena.sqlite3")
    store.add_bot("zeta", "token-1", "10.0.0.1", *DEFAULT)

    def refuse(before):
        raise ArenaError("a rating rule that fails")

    with pytest.raises(ArenaError):
        store.add_game("g1", RECORD, TWO, [1, 2], refuse, [0], DEFAULT)
    assert store.games() == [] and store.kind_of("alice") is None and store.kind_of("heuristic") is None
    store.add_game("g1", RECORD, TWO, [1, 2], plus_one, [], DEFAULT)
    with pytest.raises(ArenaError, match="stored already") as again:
        store.add_game("g1", RECORD, TWO, [1, 2], plus_one, [], DEFAULT)
    assert again.value.status == 409 and {row["name"]: row["games"] for row in store.players()}["alice"] == 1


def test_a_game_whose_names_cannot_be_rated_is_stored_unrated(tmp_path, monkeypatch):
    store = Store(tmp_path / "arena.sqlite3")
    store.add_bot("zeta", "token-1", "10.0.0.1", *DEFAULT)
    # a person played as "Zeta" while a bot took the name: the game is kept, nobody's rating moves
    assert not store.add_game("g1", RECORD, [("Zeta", "person"), ("heuristic", "agent")], [1, 2], plus_one, [0], DEFAULT)
    assert store.games()[0]["rated"] is False and store.pending_duplicates(10) == []
    assert [(row["name"], row["games"]) for row in store.players()] == [("zeta", 0)]
    monkeypatch.setattr(store_module, "MAX_PLAYERS", 2)  # room for one new name, not the two this game brings
    assert not store.add_game("g2", RECORD, TWO, [1, 2], plus_one, [0], DEFAULT)
    assert store.add_game("g3", RECORD, [("heuristic", "agent"), ("zeta", "bot")], [1, 2], plus_one, [], DEFAULT)
    assert {row["name"]: row["games"] for row in store.players()} == {"zeta": 1, "heuristic": 1}


def test_a_bots_secret_is_kept_only_as_its_digest(tmp_path):
    path = tmp_path / "arena.sqlite3"
    store = Store(path)
    secret = "Qm9vLXRoaXMtaXMtYS1zZWNyZXQtdG9rZW4tZm9yLWEtdGVzdA"
    store.add_bot("zeta", secret, "192.0.2.7", *DEFAULT)
    store.close()
    on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir())  # the database and any WAL left beside it
    assert secret.encode() not in on_disk and b"192.0.2.7" not in on_disk
    assert secret_digest(secret) in on_disk
    assert Store(path).bot_by_secret(secret) == "zeta" and Store(path).bot_by_secret(secret + "x") is None


@pytest.mark.parametrize("name", ["", "a" * 33, "-dash", "has space", "bot:zeta", "é", None, 7, "x/y", "a;DROP TABLE bots"])
def test_bad_names_are_a_400_and_store_nothing(tmp_path, name):
    store = Store(tmp_path / "arena.sqlite3")
    with pytest.raises(ArenaError, match="1 to 32 letters") as refused:
        store.add_bot(name, "token", "127.0.0.1", *DEFAULT)
    assert refused.value.status == 400 and store.players() == []


def test_taken_names_and_the_bot_limits_are_refused(tmp_path, monkeypatch):
    store = Store(tmp_path / "arena.sqlite3")
    store.add_bot("Zeta", "token-0", "127.0.0.1", *DEFAULT)
    with pytest.raises(ArenaError, match="taken") as taken:
        store.add_bot("zeta", "token-1", "127.0.0.1", *DEFAULT)
    assert taken.value.status == 409
    monkeypatch.setattr(store_module, "MAX_BOTS_PER_CLIENT", 2)
    store.add_bot("second", "token-2", "127.0.0.1", *DEFAULT)
    with pytest.raises(ArenaError, match="this client has made 2 bots") as per_client:
        store.add_bot("third", "token-3", "127.0.0.1", *DEFAULT)
    assert per_client.value.status == 429
    store.add_bot("third", "token-3", "127.0.0.2", *DEFAULT)  # another client
    monkeypatch.setattr(store_module, "MAX_BOTS", 3)
    with pytest.raises(ArenaError, match="3 bots already"):
        store.add_bot("fourth", "token-4", "127.0.0.3", *DEFAULT)
    assert sorted(row["name"] for row in store.players()) == sorted(["Zeta", "second", "third"])


def test_an_oversized_record_is_refused(tmp_path, monkeypatch):
    store = Store(tmp_path / "arena.sqlite3")
    monkeypatch.setattr(store_module, "MAX_STORED_RECORD_BYTES", 100)
    with pytest.raises(ArenaError, match="over 100 bytes") as refused:
        store.add_game("g1", {**RECORD, "padding": "x" * 200}, TWO, None, None, [], DEFAULT)
    assert refused.value.status == 413 and store.games() == []
