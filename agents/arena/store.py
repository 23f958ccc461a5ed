"""The arena's database: finished games' records, the ladder's ratings and their history, the bots (SQLite).

``Store(path)`` opens (or makes) one SQLite file. What it keeps:

- ``games``: every finished game the arena hands it, with its record (``hpuno_env.records``'s JSON), its
  outcome and whether the ladder rated it; ``seats``: who sat where (a ladder name and its kind, or none);
- ``players``: one row per ladder name (``person``, ``agent`` or ``bot``; names are unique whatever their case)
  with its openskill rating and rated games; ``ratings``: each name's rating after each rated game (its history);
- ``duplicates``: per person or bot seat of a rated game, its result minus a reference agent's on the same
  deal (``pending`` until the ladder's worker has replayed the deal);
- ``bots``: each bot's name and the SHA-256 digest of its secret, never the secret; ``timeouts``: the moves a
  silent bot's clock played for it.

**The schema's version** is SQLite's ``user_version`` and the file is marked as this arena's by its
``application_id``. A file made by another version, or not by the arena at all, is refused at open with a
``StoreError`` naming the file and both versions: nothing here migrates a database.

**Concurrency.** One connection, opened with ``check_same_thread=False`` and used under one lock: the
arena's worker threads take turns for the few hundred microseconds a statement needs. Every write is one
``BEGIN IMMEDIATE`` transaction (a rating's read, update and write are one transaction, so two games ending
at once both count), in WAL mode with ``synchronous=FULL`` (a committed game survives a crash of the process
or of the machine) and a busy timeout, so that a second process on the same file waits its turn instead of
failing.

**Secrets.** A bot's secret is ``secrets.token_urlsafe(32)``: 256 random bits. The store keeps its SHA-256
digest (a unique index finds the bot from the ``Authorization`` header alone). A slow salted hash (scrypt,
PBKDF2) protects secrets people choose, which can be guessed; a random 256-bit secret cannot be, so one
SHA-256 is as safe here and needs no per-bot salt to look up.

**Limits.** Names: 1 to 32 letters, digits, ``_``, ``.`` or ``-``, starting with a letter or digit. At most
``MAX_PLAYERS`` names on the ladder and ``MAX_BOTS`` bots, ``MAX_BOTS_PER_CLIENT`` of them made from one
client address (kept as a salted digest, never the address). A record is at most ``MAX_STORED_RECORD_BYTES``
of JSON. The callers bound request bodies.

**SQL** is written here only, every value a bound parameter.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from .errors import ArenaError

SCHEMA_VERSION = 1
APPLICATION_ID = 0x48505541  # "HPUA": this file is an hpuno arena's database
DEFAULT_DB = os.path.join("runs", "arena", "arena.sqlite3")  # beside the records folder's default, runs/arena
KINDS = ("person", "agent", "bot")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
MAX_PLAYERS = 10_000
MAX_BOTS = 1_000
MAX_BOTS_PER_CLIENT = 5
MAX_STORED_RECORD_BYTES = 4 * 2**20  # a long match's record is a few hundred kB
MAX_HISTORY = 1_000  # ratings returned for one name's history (its latest)
BUSY_MS = 10_000

SCHEMA = """
CREATE TABLE players (
    name TEXT PRIMARY KEY COLLATE NOCASE,
    kind TEXT NOT NULL CHECK (kind IN ('person', 'agent', 'bot')),
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    games INTEGER NOT NULL DEFAULT 0,
    created REAL NOT NULL
);
CREATE TABLE bots (
    name TEXT PRIMARY KEY COLLATE NOCASE REFERENCES players (name),
    secret_sha256 BLOB NOT NULL UNIQUE,
    client TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE INDEX bots_by_client ON bots (client);
CREATE TABLE games (
    game TEXT PRIMARY KEY,
    finished REAL NOT NULL,
    outcome TEXT NOT NULL,
    rated INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE seats (
    game TEXT NOT NULL REFERENCES games (game),
    seat INTEGER NOT NULL,
    name TEXT COLLATE NOCASE,
    kind TEXT,
    rank INTEGER,
    PRIMARY KEY (game, seat)
);
CREATE TABLE ratings (
    game TEXT NOT NULL REFERENCES games (game),
    name TEXT NOT NULL COLLATE NOCASE REFERENCES players (name),
    mu REAL NOT NULL,
    sigma REAL NOT NULL,
    PRIMARY KEY (game, name)
);
CREATE INDEX ratings_by_name ON ratings (name);
CREATE TABLE duplicates (
    game TEXT NOT NULL REFERENCES games (game),
    seat INTEGER NOT NULL,
    name TEXT NOT NULL COLLATE NOCASE REFERENCES players (name),
    state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
    difference REAL,
    PRIMARY KEY (game, seat)
);
CREATE INDEX duplicates_by_state ON duplicates (state);
CREATE TABLE timeouts (
    id INTEGER PRIMARY KEY,
    bot TEXT NOT NULL COLLATE NOCASE REFERENCES bots (name),
    game TEXT NOT NULL,
    decision INTEGER NOT NULL,
    action TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX timeouts_by_bot ON timeouts (bot);
CREATE TABLE salt (value BLOB NOT NULL);
"""


class StoreError(ValueError):
    """A database file this arena cannot use (another schema version, not an arena database, unreadable)."""


def check_name(name, what: str = "name") -> str:
    """A ladder name: 1 to 32 letters, digits, ``_``, ``.`` or ``-``, starting with a letter or a digit (else 400)."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise ArenaError(f"{what} must be 1 to 32 letters, digits, '_', '.' or '-', starting with a letter or a digit, "
                         f"got {str(name)[:40]!r}")
    return name


def secret_digest(secret: str) -> bytes:
    """What the store keeps of a bot's secret (module docstring, "Secrets")."""
    return hashlib.sha256(secret.encode()).digest()


class Store:
    """One arena database file (module docstring). Safe to share between threads; ``close()`` when done."""

    def __init__(self, path, clock: Callable[[], float] = time.time):
        self.path = os.fspath(path)
        self.clock = clock
        self._lock = threading.RLock()
        folder = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(folder, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
        except (OSError, sqlite3.Error) as error:
            raise StoreError(f"{self.path}: cannot open the arena database: {error}") from None
        try:
            self._open()
        except sqlite3.DatabaseError as error:
            self._db.close()
            raise StoreError(f"{self.path}: not a database this arena can use: {error}") from None
        except StoreError:
            self._db.close()
            raise

    def _open(self) -> None:
        """Check the file's marks before writing anything to it; make the schema in a file with none."""
        db = self._db
        db.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
        if self._empty():
            if db.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                raise StoreError(f"{self.path}: SQLite cannot keep this file in WAL mode")
            with self._write():
                if self._empty():  # another process may have made it meanwhile
                    self._make_schema()
        application, version = self._marks()
        if application != APPLICATION_ID:
            raise StoreError(f"{self.path}: not an hpuno arena database (SQLite application_id {application}, "
                             f"the arena's is {APPLICATION_ID}): give --db a new file or an arena's")
        if version != SCHEMA_VERSION:
            raise StoreError(f"{self.path}: the arena database has schema version {version}, this hpuno-env reads "
                             f"version {SCHEMA_VERSION}: use the hpuno-env that made it, or a new --db file "
                             "(nothing is migrated)")
        if db.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
            raise StoreError(f"{self.path}: SQLite cannot keep this file in WAL mode")
        db.execute("PRAGMA synchronous = FULL")
        db.execute("PRAGMA foreign_keys = ON")
        self._salt = db.execute("SELECT value FROM salt").fetchone()[0]

    def _empty(self) -> bool:
        return self._marks() == (0, 0) and not self._db.execute("SELECT 1 FROM sqlite_master").fetchone()

    def _make_schema(self) -> None:
        db = self._db
        for statement in SCHEMA.split(";"):  # not executescript: it would commit the transaction first
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT INTO salt (value) VALUES (?)", (secrets.token_bytes(16),))
        db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _marks(self) -> tuple[int, int]:
        return (self._db.execute("PRAGMA application_id").fetchone()[0], self._db.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction under the lock: committed when the block ends, rolled back if it raises."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _read(self, sql: str, parameters: Sequence = ()) -> list[tuple]:
        with self._lock:
            return self._db.execute(sql, parameters).fetchall()

    # ------------------------------------------------------------ names and bots

    def kind_of(self, name: str) -> str | None:
        """The kind of the ladder name ``name`` (any case), or None if no one holds it."""
        rows = self._read("SELECT kind FROM players WHERE name = ?", (name,))
        return rows[0][0] if rows else None

    def add_bot(self, name: str, secret: str, client: str, mu: float, sigma: float) -> None:
        """A new bot ``name`` with ``secret`` (kept as its digest); a taken name is a 409, too many bots a 429."""
        name = check_name(name, "a bot's name")
        client_digest = hashlib.sha256(self._salt + client.encode()).hexdigest()[:32]
        with self._write() as db:
            if db.execute("SELECT 1 FROM players WHERE name = ?", (name,)).fetchone():
                raise ArenaError(f"the name {name!r} is taken on the ladder", 409)
            if db.execute("SELECT COUNT(*) FROM bots").fetchone()[0] >= MAX_BOTS:
                raise ArenaError(f"the arena holds {MAX_BOTS} bots already", 429)
            if db.execute("SELECT COUNT(*) FROM bots WHERE client = ?", (client_digest,)).fetchone()[0] >= MAX_BOTS_PER_CLIENT:
                raise ArenaError(f"this client has made {MAX_BOTS_PER_CLIENT} bots already", 429)
            self._add_player(db, name, "bot", mu, sigma)
            db.execute("INSERT INTO bots (name, secret_sha256, client, created) VALUES (?, ?, ?, ?)",
                       (name, secret_digest(secret), client_digest, self.clock()))

    def bot_by_secret(self, secret: str) -> str | None:
        """The name of the bot whose secret this is, or None."""
        rows = self._read("SELECT name FROM bots WHERE secret_sha256 = ?", (secret_digest(secret),))
        return rows[0][0] if rows else None

    def add_timeout(self, bot: str, game: str, decision: int, action: str) -> None:
        """A move the clock played for a silent bot."""
        with self._write() as db:
            db.execute("INSERT INTO timeouts (bot, game, decision, action, at) VALUES (?, ?, ?, ?, ?)",
                       (bot, game, int(decision), action, self.clock()))

    def timeouts(self, bot: str) -> int:
        return self._read("SELECT COUNT(*) FROM timeouts WHERE bot = ?", (bot,))[0][0]

    def _add_player(self, db: sqlite3.Connection, name: str, kind: str, mu: float, sigma: float) -> None:
        if db.execute("SELECT COUNT(*) FROM players").fetchone()[0] >= MAX_PLAYERS:
            raise ArenaError(f"the ladder holds {MAX_PLAYERS} names already", 429)
        db.execute("INSERT INTO players (name, kind, mu, sigma, created) VALUES (?, ?, ?, ?, ?)",
                   (name, kind, mu, sigma, self.clock()))

    # ------------------------------------------------------------ finished games

    def add_game(self, game: str, record: dict, seats: Sequence[tuple[str | None, str | None]], ranks: Sequence[int] | None,
                 rate: Callable[[dict[str, tuple[float, float]]], dict[str, tuple[float, float]]] | None,
                 duplicates: Sequence[int], default: tuple[float, float]) -> bool:
        """A finished game, in one transaction: its record and seats; if ``rate`` is given, the ratings of its
        names (``rate`` maps their ratings before, new names at ``default``, to their ratings after) and a
        pending duplicate for each seat in ``duplicates``. Returns whether it was rated: a game whose names
        cannot be rated (a name held by another kind meanwhile, or no room for a new name) is stored unrated.
        A game stored already is a 409 and changes nothing."""
        text = json.dumps(record, separators=(",", ":"))
        if len(text) > MAX_STORED_RECORD_BYTES:
            raise ArenaError(f"the game's record is over {MAX_STORED_RECORD_BYTES} bytes: not stored", 413)
        with self._write() as db:
            if db.execute("SELECT 1 FROM games WHERE game = ?", (game,)).fetchone():
                raise ArenaError(f"the game {game!r} is stored already", 409)
            if rate is not None and not self._can_rate(db, seats):
                rate = None
            db.execute("INSERT INTO games (game, finished, outcome, rated, record) VALUES (?, ?, ?, ?, ?)",
                       (game, self.clock(), record["outcome"], rate is not None, text))
            for seat, (name, kind) in enumerate(seats):
                db.execute("INSERT INTO seats (game, seat, name, kind, rank) VALUES (?, ?, ?, ?, ?)",
                           (game, seat, name, kind, None if ranks is None else int(ranks[seat])))
            if rate is not None:
                self._rate(db, game, seats, rate, default)
                for seat in duplicates:
                    db.execute("INSERT INTO duplicates (game, seat, name, state) VALUES (?, ?, ?, 'pending')",
                               (game, seat, seats[seat][0]))
        return rate is not None

    def _can_rate(self, db: sqlite3.Connection, seats) -> bool:
        """Whether every name of ``seats`` is free or held by its seat's kind, and the new ones fit on the ladder."""
        new = 0
        for name, kind in dict(seats).items():
            row = db.execute("SELECT kind FROM players WHERE name = ?", (name,)).fetchone()
            if row is not None and row[0] != kind:
                return False
            new += row is None
        return db.execute("SELECT COUNT(*) FROM players").fetchone()[0] + new <= MAX_PLAYERS

    def _rate(self, db: sqlite3.Connection, game: str, seats, rate, default: tuple[float, float]) -> None:
        """The ratings of a game's names (``_can_rate`` holds) before, through ``rate``, after; kept as history."""
        before = {}
        for name, kind in dict(seats).items():
            row = db.execute("SELECT mu, sigma FROM players WHERE name = ?", (name,)).fetchone()
            if row is None:
                self._add_player(db, name, kind, *default)
                row = default
            before[name] = (row[0], row[1])
        for name, (mu, sigma) in rate(before).items():
            db.execute("UPDATE players SET mu = ?, sigma = ?, games = games + 1 WHERE name = ?", (mu, sigma, name))
            db.execute("INSERT INTO ratings (game, name, mu, sigma) VALUES (?, ?, ?, ?)", (game, name, mu, sigma))

    def record(self, game: str) -> dict | None:
        rows = self._read("SELECT record FROM games WHERE game = ?", (game,))
        return json.loads(rows[0][0]) if rows else None

    def games(self, limit: int = 100) -> list[dict]:
        """The latest ``limit`` finished games, latest first: id, finish time, outcome, rated."""
        rows = self._read("SELECT game, finished, outcome, rated FROM games ORDER BY rowid DESC LIMIT ?", (int(limit),))
        return [{"game": g, "finished": f, "outcome": o, "rated": bool(r)} for g, f, o, r in rows]

    def seats(self, game: str) -> list[dict]:
        rows = self._read("SELECT seat, name, kind, rank FROM seats WHERE game = ? ORDER BY seat", (game,))
        return [{"seat": s, "name": n, "kind": k, "rank": r} for s, n, k, r in rows]

    # ------------------------------------------------------------ the ladder

    def players(self) -> list[dict]:
        """Every ladder name with its kind, rating and rated games."""
        rows = self._read("SELECT name, kind, mu, sigma, games FROM players")
        return [{"name": n, "kind": k, "mu": mu, "sigma": sigma, "games": g} for n, k, mu, sigma, g in rows]

    def history(self, name: str, limit: int = MAX_HISTORY) -> list[dict]:
        """``name``'s rating after each of its latest ``limit`` rated games, oldest first."""
        rows = self._read(
            "SELECT ratings.game, games.finished, ratings.mu, ratings.sigma FROM ratings JOIN games USING (game) "
            "WHERE ratings.name = ? ORDER BY games.rowid DESC LIMIT ?", (name, int(limit)))
        return [{"game": g, "finished": f, "mu": mu, "sigma": sigma} for g, f, mu, sigma in reversed(rows)]

    def pending_duplicates(self, limit: int) -> list[tuple[str, int, dict, list[dict]]]:
        """Up to ``limit`` duplicates still to compute, oldest first: (game, seat, record, seats)."""
        rows = self._read("SELECT duplicates.game, duplicates.seat, games.record FROM duplicates JOIN games USING (game) "
                          "WHERE duplicates.state = 'pending' ORDER BY games.rowid LIMIT ?", (int(limit),))
        return [(game, seat, json.loads(record), self.seats(game)) for game, seat, record in rows]

    def set_duplicate(self, game: str, seat: int, difference: float | None) -> None:
        """A duplicate's result: the seat's result minus the reference's, or None if its deal could not be replayed."""
        with self._write() as db:
            db.execute("UPDATE duplicates SET state = ?, difference = ? WHERE game = ? AND seat = ?",
                       ("failed" if difference is None else "done", difference, game, int(seat)))

    def duplicate_differences(self) -> dict[str, list[float]]:
        """Per name, its computed duplicate differences, oldest first."""
        found: dict[str, list[float]] = {}
        rows = self._read("SELECT players.name, duplicates.difference FROM duplicates JOIN players USING (name) "
                          "WHERE duplicates.state = 'done' ORDER BY duplicates.rowid")
        for name, difference in rows:
            found.setdefault(name, []).append(difference)
        return found
