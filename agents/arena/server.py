"""The arena's web app: the JSON API (docs/arena.md) and the page in ``static/``.

A request's game work (a person's move and the agents' replies, an agent's
step, a new game, a replay's opening) runs in a worker thread
(``run_in_threadpool``), so a slow agent holds up its own game only, never
the event loop or the other games. Each game has a lock that every request
on it holds, so one game's requests run one at a time in arrival order
while different games run at once; the arena's tables of games and replays
(with their caps and idle expiry) have a lock of their own, never held
while a game moves. Games, watched games and replays live in memory under a
random id, each with a random secret sent back as
``Authorization: Bearer SECRET``; idle ones are dropped after
``idle_seconds``, and there are caps on live games (the arena's, and each client address's) and on each
route's request body.

With a database (``create_app(db=PATH)``, ``hpuno-arena --db PATH``) the
arena is a ladder: ``agents.arena.store`` keeps every finished game's record,
``agents.arena.ladder`` rates them, and ``agents.arena.bots`` seats bots in
people's games (``"opponents": ["bot:NAME"]``); a request that carries a bot's
secret on a game's routes is the bot's, in its own seat.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import os
import pathlib
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool

from agents.players import BUILT_IN, SHIPPED, TrainedAgent, available
from hpuno_env import ACTION_LABELS, CARD_LABELS
from hpuno_env._checks import check_finite, check_int, check_positive_int
from hpuno_env._reading import parse_json
from hpuno_env.cards import COLORS, DECKS
from hpuno_env.options import (
    MAX_PLAYERS, EPISODE_MODES, HOUSE_RULE_OPTIONS, REWARD_MODES, SCORING_MODES, STACKING_MODES, UNO_CATCH_MODES, RulesOptions,
)
from hpuno_env.records import MAX_RECORD_BYTES, load_record

from .bots import MOVE_SECONDS, Bots, client_address, ladder_routes, read_body
from .folders import MAX_PAGE, PAGE, RecordFolder
from .acting import prepare_search
from .games import MAX_REPLAY_FRAMES, AgentShelf, ArenaError, Game, arena_agents, ReplaySession, make_game, record_frames
from .ladder import Ladder
from .limits import IDLE_SECONDS, MAX_GAMES, MAX_GAMES_PER_CLIENT, MAX_RECORDS
from .seats import BOT_PREFIX, make_seated_game
from .store import Store

STATIC = pathlib.Path(__file__).resolve().parent / "static"
MAX_BODY_BYTES = 2 * 2**20  # a request body (an uploaded record is the biggest: a long match is a few hundred kB)
MAX_GAME_BODY_BYTES = 64 * 2**10  # a new game: rules, nine opponents' names or file paths, a stacked deck's 112 labels
MAX_ACTION_BODY_BYTES = 1024  # {"action": LABEL}
MAX_REPLAYS = 50
MAX_REPLAY_TOTAL = 200_000  # frames of all live replays together (a replay keeps 60-240 bytes a frame: 2-10 players)
STOP_WAIT = 10.0  # seconds the arena, stopping, waits for a game's request under way before saving the game
PLOT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.png")
RESULTS_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}")  # a subfolder of --results holding a results.json
RESULTS_ITSELF = "_"  # the name of the --results folder itself (no subfolder's name: those start with a letter or digit)
MAX_RESULT_SETS = 1000
LOCALHOST = "localhost"
ABSOLUTE_PATH = re.compile(r"(?<![\w.:/])(?:/[^\s'\"/]+)+/([^\s'\"/]+)")  # /a/b/c.json (its last part, c.json, kept)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes is answered 413 before the app reads it all."""

    def __init__(self, app, limit: int):
        self.app = app
        self.limit = limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            return await self._refuse(scope, receive, send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise ArenaError(f"the request body is over {self.limit} bytes", 413)
            return message

        return await self.app(scope, counted, send)

    async def _refuse(self, scope, receive, send):
        response = JSONResponse({"error": f"the request body is over {self.limit} bytes"}, status_code=413)
        await response(scope, receive, send)


class SameSite:
    """ASGI middleware against requests a web page of another site makes a visitor's browser send:

    - the ``Host`` header must name this machine (``localhost``, an IP address) or one of ``hosts``: a page whose
      own name resolves to this address (DNS rebinding) is refused (400), so it cannot read the arena's answers;
    - a state-changing request (not GET, HEAD or OPTIONS) that a browser marks as coming from another origin
      (``Origin`` other than this ``Host``, or ``Sec-Fetch-Site: cross-site``) is refused (403);
    - a request body must be JSON said so (``Content-Type: application/json``, which a cross-site form or
      ``fetch`` cannot send without the browser asking first): else 415."""

    def __init__(self, app, hosts: Sequence[str] = ()):
        self.app = app
        self.hosts = {LOCALHOST, *(host.lower() for host in hosts)}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        problem = self.problem(scope["method"], {name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]})
        if problem is None:
            return await self.app(scope, receive, send)
        response = JSONResponse({"error": problem[0]}, status_code=problem[1])
        await response(scope, receive, send)

    def problem(self, method: str, headers: dict[str, str]) -> tuple[str, int] | None:
        host = headers.get("host", "")
        if not self.allowed(host):
            return f"this arena answers requests to this machine's own names only, not to Host {host[:80]!r} (start it with --allow-host NAME to add one)", 400
        if method in ("GET", "HEAD", "OPTIONS"):
            return None
        origin = headers.get("origin")
        if headers.get("sec-fetch-site") == "cross-site" or (origin is not None and urlsplit(origin).netloc.lower() != host.lower()):
            return f"a request from another site ({(origin or 'cross-site')[:80]}) is refused", 403
        declared = headers.get("content-length", "0")
        has_body = declared != "0" or "transfer-encoding" in headers
        if has_body and headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return "a request body must be JSON, sent with the header Content-Type: application/json", 415
        return None

    def allowed(self, host: str) -> bool:
        """Whether a Host header names this machine: localhost, an IP address (which no other site's name can stand
        for) or one of ``hosts``; any port."""
        name = host.strip().lower()
        if name.startswith("["):  # an IPv6 address, [::1]:8000
            name = name[1:].partition("]")[0]
        elif name.count(":") == 1:
            name = name.partition(":")[0]
        if name in self.hosts:
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True


class Arena:
    """The live games and replays, with their caps and idle expiry, and the folders of records and results.

    Its methods run in worker threads: ``lock`` guards the tables (``games``, ``replays``, ``making``) and is
    held only for quick reads and writes of them; a game's own work is done under the game's ``lock``."""

    def __init__(self, records: str, results: str | None, max_games: int = MAX_GAMES, idle_seconds: float = IDLE_SECONDS,
                 allow_decks: bool = False, clock: Callable[[], float] = time.monotonic, max_records: int = MAX_RECORDS,
                 max_games_per_client: int = MAX_GAMES_PER_CLIENT, search_workers: int = 0):
        self.records = RecordFolder(records, max_records, clock)
        self.records.check_writable()  # refused at start, not after a game's last move
        self.results = pathlib.Path(results) if results else None
        self.max_games = max_games
        self.max_games_per_client = max_games_per_client
        self.idle_seconds = idle_seconds
        self.allow_decks = allow_decks  # a stacked deck in POST /api/games (tests, demonstrations)
        self.clock = clock
        self.games: dict[str, Game] = {}
        self.replays: dict[str, ReplaySession] = {}
        self.making = 0  # games being made now (outside the lock): they count against the cap already
        self.making_by_client: Counter[str] = Counter()  # the same, per client address (the per-client cap)
        self.opening = 0  # replays being opened now (outside the lock), counted as making is
        self.replay_frames = 0  # frames of the live replays and of those being opened
        self.lock = threading.Lock()
        self.shelf = AgentShelf(search_workers=search_workers)
        self.search_ready = threading.Event()  # set once the search player is compiled (prepare_search), or not prepared
        self.ladder: Ladder | None = None  # with a database (attach_ladder): finished games rated, bots seated
        self.bots: Bots | None = None

    def attach_ladder(self, ladder: Ladder, bots: Bots) -> None:
        """Keep every finished game in the ladder's store, rate it there, and seat bots in people's games."""
        self.ladder, self.bots = ladder, bots
        bots.on_over = self.save  # a game a bot's move or its clock ended (the game's lock held)

    def sweep(self) -> None:
        """Drop games and replays idle for ``idle_seconds`` (a played game's record is saved first)."""
        now = self.clock()
        with self.lock:
            idle = [game for game in self.games.values() if now - game.touched > self.idle_seconds]
            for game in idle:
                del self.games[game.game_id]
            for replay_id, replay in list(self.replays.items()):
                if now - replay.touched > self.idle_seconds:
                    del self.replays[replay_id]
                    self.replay_frames -= replay.frames
        for game in idle:  # out of the table already: no new request finds it; one under way finishes first
            with game.lock:
                self.save(game)

    def _reserve_game(self, client: str) -> None:
        """Count a game about to be made against the caps: the arena's (finished games make room first) and its
        client's (live games: unfinished ones)."""
        with self.lock:
            held = self.making_by_client[client] + sum(1 for game in self.games.values() if game.client == client and not game.over)
            if held >= self.max_games_per_client:
                raise ArenaError(f"this client holds {held} live games already, the most one client may hold at once "
                                 f"(--max-games-per-client {self.max_games_per_client}): finish one, or let one go idle", 429)
            if len(self.games) + self.making >= self.max_games:
                for game_id, _ in sorted(((i, g.touched) for i, g in self.games.items() if g.over), key=lambda item: item[1]):
                    del self.games[game_id]
                    if len(self.games) + self.making < self.max_games:
                        break
            if len(self.games) + self.making >= self.max_games:
                raise ArenaError(f"the arena holds {self.max_games} live games already: try again later", 429)
            self.making += 1
            self.making_by_client[client] += 1

    def add_game(self, body: dict, person: bool, client: str) -> Game:
        self.sweep()
        known = {"players", "opponents", "rules", "seed", "deck"} if person else {"players", "agents", "rules", "seed"}
        if person and self.ladder is not None:
            known.add("name")
        unknown = sorted(set(body) - known)
        if unknown:
            raise ArenaError(f"unknown field(s) {unknown}: a game takes {sorted(known)}")
        deck = body.get("deck")
        if deck is not None and not self.allow_decks:
            raise ArenaError("deck: this arena does not take stacked decks (start it with --allow-decks)", 403)
        if person and body.get("seed") is not None and not self.allow_decks:
            # a seed a person chooses would deal the same cards to a watched game, which shows every hand
            raise ArenaError("seed: a person's game is dealt at random on this arena (a watched game with the same seed "
                             "would show its hands); start the arena with --allow-decks to choose deals", 403)
        names = body.get("opponents", ["heuristic"]) if person else body.get("agents", ["heuristic"])
        self._reserve_game(client)
        try:  # made outside the lock: the agents' first replies (a person's game) may take a while
            game = self._make_game(body, names, person, deck)
            game.client = client
            if game.over:
                self.save(game)
            game.touched = self.clock()
            with self.lock:
                self.games[game.game_id] = game
        finally:
            with self.lock:
                self.making -= 1
                self.making_by_client[client] -= 1
                if not self.making_by_client[client]:
                    del self.making_by_client[client]
        return game

    def _make_game(self, body: dict, names, person: bool, deck) -> Game:
        """A game from a request's fields: on a ladder a person's game is a ``SeatedGame`` (a name, bots)."""
        players, rules, seed = body.get("players", 2), body.get("rules"), body.get("seed")
        if not person or self.ladder is None:
            if isinstance(names, list) and any(isinstance(name, str) and name.startswith(BOT_PREFIX) for name in names):
                raise ArenaError("bots take seats on an arena with a database only (hpuno-arena --db PATH)")
            return make_game(self.shelf, players, names, rules, seed, person, deck)
        name = body.get("name")
        person_name = None if name is None else self.ladder.check_person_name(name)
        game = make_seated_game(self.shelf, players, names, rules, seed, person_name=person_name,
                                is_bot=self.bots.is_bot, deck=deck, clock=self.clock)
        if game.bots:
            self.bots.seat(game)
        return game

    def game(self, game_id: str, authorization: str | None) -> Game:
        return self._live(self.games, game_id, authorization, "live game")

    def holds_game_secret(self, game_id: str, authorization: str | None) -> bool:
        """Whether ``authorization`` carries the secret of the live game ``game_id`` (read without the table's lock:
        a dict's get is atomic, and a game dropped meanwhile is refused by the request's own lookup)."""
        game = self.games.get(game_id)
        try:
            return game is not None and check_secret(game.token, authorization) is None
        except ArenaError:
            return False

    def view(self, game_id: str, authorization: str | None) -> dict:
        game = self.game(game_id, authorization)
        with game.lock:
            return game.seat_view() if game.person is not None else game.spectator_view()

    def act(self, game_id: str, authorization: str | None, body: dict) -> dict:
        """The person's action and the agents' replies, under the game's lock; the record saved at the end."""
        game = self.game(game_id, authorization)
        if set(body) != {"action"}:
            raise ArenaError(f"the body must be {{\"action\": LABEL}}, got the field(s) {sorted(body)}")
        with game.lock:
            game.person_acts(body["action"])
            if game.over:
                self.save(game)
            return game.seat_view()

    def step(self, game_id: str, authorization: str | None) -> dict:
        """One agent decision of a watched game, under the game's lock; the record saved at the end."""
        game = self.game(game_id, authorization)
        if game.person is not None:
            raise ArenaError("a person plays in this game: only a game of agents is stepped", 409)
        with game.lock:
            game.step_agent()
            if game.over:
                self.save(game)
            return game.spectator_view()

    def replay(self, replay_id: str, authorization: str | None) -> ReplaySession:
        return self._live(self.replays, replay_id, authorization, "replay")

    def _live(self, table: dict, key: str, authorization: str | None, what: str):
        """A live game or replay by its id, its secret checked and its idle clock restarted; else a 404."""
        with self.lock:
            found = table.get(key)
            if found is not None:
                check_secret(found.token, authorization)
                found.touched = self.clock()
        if found is None:
            raise ArenaError(f"no {what} {key[:40]!r} (unknown, or dropped after {self.idle_seconds:.0f} s idle)", 404)
        return found

    def add_replay(self, record, name: str) -> ReplaySession:
        """A record opened to replay, within the caps on live replays and on their frames all together."""
        self.sweep()
        frames = record_frames(record, name)  # checked and counted before anything is replayed
        with self.lock:
            if len(self.replays) + self.opening >= MAX_REPLAYS:
                raise ArenaError(f"the arena holds {MAX_REPLAYS} replays already: try again later", 429)
            if self.replay_frames + frames > MAX_REPLAY_TOTAL:
                raise ArenaError(f"the arena's replays hold {self.replay_frames:,} decisions already, and this record has "
                                 f"{frames - 1:,} (at most {MAX_REPLAY_TOTAL:,} all together): try again later", 429)
            self.opening += 1
            self.replay_frames += frames
        try:
            replay = ReplaySession(record, name)  # replayed outside the lock (a long match takes a moment)
        except BaseException:
            with self.lock:
                self.replay_frames -= frames
            raise
        finally:
            with self.lock:
                self.opening -= 1
        replay.touched = self.clock()
        with self.lock:
            self.replays[replay.replay_id] = replay
        return replay

    def open_replay(self, body: dict) -> dict:
        """A record to replay: uploaded (the body is the record), ``{"file": NAME}`` from the records folder, or
        ``{"game": ID}``, a finished game kept in the database (a live game is in no store: 404)."""
        if set(body) == {"game"} and self.ladder is not None:
            game_id = body["game"]
            record = self.ladder.store.record(game_id) if isinstance(game_id, str) else None
            if record is None:
                raise ArenaError(f"no finished game {str(game_id)[:40]!r} in the arena's database", 404)
            name = f"game {game_id}"
        elif set(body) == {"file"}:
            name = body["file"]
            if not self.records.has(name):
                raise ArenaError(f"no record {str(name)[:80]!r} in the records folder", 404)
            try:
                record = load_record(self.records.folder / name)
            except ValueError as error:
                raise ArenaError(str(error)) from None
        else:
            record, name = body, "uploaded record"
        replay = self.add_replay(record, name)
        return {"replay": replay.replay_id, "token": replay.token, **replay.outline()}

    def save(self, game: Game, stopping: bool = False) -> None:
        """A game's record into the records folder, once (the caller holds the game's lock): a played game
        when it ends or is dropped idle, a watched game when it ends, and any game when the arena stops (never
        one nobody moved in)."""
        if game.record_file is not None or game.record_error is not None or (game.person is None and not game.over and not stopping):
            return
        record = game.record()
        if record["outcome"] == "unfinished" and not any(r["decisions"] for r in record["rounds"]):
            return
        try:
            game.record_file = self.records.save(record, game.game_id)
        except OSError as error:  # the game goes on (or ends) all the same; its view says why there is no record
            game.record_error = f"the game's record was not saved: {error.strerror or error}"
        if self.ladder is not None:
            self.ladder.add_finished(game)

    def prepare_search(self) -> None:
        """The search player compiled ahead of its first game, and its worker processes started (run in a thread of
        its own at start)."""
        try:
            prepare_search()
            self.shelf.acting.warm()
        finally:
            self.search_ready.set()

    def stop(self) -> list[str]:
        """The arena stops: every live game's record saved (an unfinished one marked so). Returns their file names.
        A game whose request is still under way after STOP_WAIT seconds is left as it is."""
        with self.lock:
            games = list(self.games.values())
        saved = []
        for game in games:
            if game.lock.acquire(timeout=STOP_WAIT):
                try:
                    if game.record_file is None:
                        self.save(game, stopping=True)
                        saved += [game.record_file] if game.record_file else []
                finally:
                    game.lock.release()
        return saved

    def catalogue(self) -> dict:
        """What the page's forms offer: agents, rules, labels, the newest records (a page), the result sets."""
        records, total = self.records.page(0, PAGE)
        return {"agents": arena_agents(), "rules": rules_catalogue(), "actions": list(ACTION_LABELS), "cards": list(CARD_LABELS),
                "records": records, "records_total": total, "results": self.result_sets(), "person_seeds": self.allow_decks,
                "search_ready": self.search_ready.is_set(),
                "ladder": self.ladder is not None}

    def record_page(self, start: str, count: str) -> dict:
        first = whole_number(start, "start", 10**9)
        size = whole_number(count, "count", MAX_PAGE)
        if size < 1:
            raise ArenaError(f"count must be in [1, {MAX_PAGE}], got {size}")
        records, total = self.records.page(first, size)
        return {"records": records, "start": first, "total": total}

    def results_folder(self, name: str) -> pathlib.Path:
        if self.results is None:
            raise ArenaError("no --results folder was given to this arena", 404)
        if name != RESULTS_ITSELF and not RESULTS_NAME.fullmatch(name):
            raise ArenaError(f"no results {name[:60]!r}", 404)
        folder = self.results if name == RESULTS_ITSELF else self.results / name
        if not (folder / "results.json").is_file():
            raise ArenaError(f"no results.json in {name!r}", 404)
        return folder

    def result_sets(self) -> list[str]:
        """The folder itself (``RESULTS_ITSELF``) and its subfolders that hold a tournament's results.json (the
        first ``MAX_RESULT_SETS`` by name)."""
        if self.results is None or not self.results.is_dir():
            return []
        found = [RESULTS_ITSELF] if (self.results / "results.json").is_file() else []
        try:
            with os.scandir(self.results) as entries:
                names = sorted(entry.name for entry in entries if RESULTS_NAME.fullmatch(entry.name) and entry.is_dir())
        except OSError:
            names = []
        return found + [name for name in names[:MAX_RESULT_SETS] if (self.results / name / "results.json").is_file()]


def without_paths(message: str) -> str:
    """A message with each absolute path cut to its last part: an answer names no folder of the server
    (an agent file under site-packages is named by its file name)."""
    return ABSOLUTE_PATH.sub(lambda match: match.group(1), message)


def whole_number(text: str, name: str, limit: int) -> int:
    """A request parameter that must be a whole number in [0, limit], written in ASCII digits (no sign, no '²')."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(limit)) or int(text) > limit:
        raise ArenaError(f"{name} must be a whole number in [0, {limit}], got {text[:40]!r}")
    return int(text)


def check_secret(token: str, authorization: str | None) -> None:
    if not authorization:
        raise ArenaError("this needs the game's secret: send the header Authorization: Bearer SECRET", 401)
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), token.encode()):
        raise ArenaError("wrong secret for this game", 403)


def rules_catalogue() -> dict:
    """Every rules option with its default (and its choices where it has a few), for the page's form."""
    choices = {"uno_catch": UNO_CATCH_MODES, "gryffindor_color": COLORS, "scoring": SCORING_MODES, "episode": EPISODE_MODES,
               "reward": REWARD_MODES, "deck": DECKS, "stacking": STACKING_MODES}
    return {"defaults": RulesOptions().as_dict(), "choices": {name: list(values) for name, values in choices.items()},
            "house_rules": list(HOUSE_RULE_OPTIONS)}


def create_app(records: str = "runs/arena", results: str | None = None, max_games: int = MAX_GAMES,
               idle_seconds: float = IDLE_SECONDS, allow_decks: bool = False, max_body: int = MAX_BODY_BYTES,
               clock: Callable[[], float] = time.monotonic, max_records: int = MAX_RECORDS, hosts: Sequence[str] = (),
               prepare_search: bool = False, db: str | os.PathLike | None = None,
               bot_move_seconds: float = MOVE_SECONDS, max_games_per_client: int = MAX_GAMES_PER_CLIENT,
               search_workers: int = 0) -> FastAPI:
    """The arena's app. It answers requests to localhost and IP addresses, and to the names in ``hosts`` (see
    ``SameSite``); with ``prepare_search`` it compiles the search player in a thread when it starts (the page says
    so while it does). One client address holds at most ``max_games_per_client`` live games. With ``db`` (a SQLite
    file, made if missing) it is a ladder (module docstring): bots get ``bot_move_seconds`` a move. The search
    player searches in ``search_workers`` worker processes (0: in the game's thread; ``agents.arena.acting``).
    ValueError (one line) when the records folder cannot be written;
    ``store.StoreError`` when ``db`` is no database this arena can use."""
    max_games, max_records = check_positive_int(max_games, "max_games"), check_positive_int(max_records, "max_records")
    max_games_per_client = check_positive_int(max_games_per_client, "max_games_per_client")
    idle_seconds = check_finite(idle_seconds, "idle_seconds", low=0, low_open=True)  # NaN: games that never expire
    search_workers = check_int(search_workers, "search_workers", low=0)
    arena = Arena(records, results, max_games, idle_seconds, allow_decks, clock, max_records, max_games_per_client,
                  search_workers)
    if not prepare_search:
        arena.search_ready.set()
    store = None if db is None else Store(db)
    if store is not None:
        ladder = Ladder(store, shelf=arena.shelf)
        arena.attach_ladder(ladder, Bots(store, ladder, move_seconds=bot_move_seconds, clock=clock))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        if prepare_search:
            threading.Thread(target=arena.prepare_search, name="prepare-search", daemon=True).start()
        if store is not None:
            arena.ladder.start()
            arena.bots.start_clock()
        try:
            yield
        finally:
            if store is not None:
                arena.bots.stop_clock()
            app.state.saved_at_stop = await run_in_threadpool(arena.stop)  # Ctrl-C, SIGTERM: live games kept as records
            await run_in_threadpool(arena.shelf.acting.close)  # the search workers end
            if store is not None:
                arena.ladder.stop()
                store.close()

    app = FastAPI(title="hpuno arena", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    app.state.saved_at_stop = []
    app.state.arena = arena

    @app.exception_handler(ArenaError)
    async def refused(request: Request, error: ArenaError):
        return JSONResponse({"error": without_paths(str(error))}, status_code=error.status)

    @app.exception_handler(Exception)
    async def failed(request: Request, error: Exception):  # a bug: the page shows what failed; the log has the traceback
        message = without_paths(f"{type(error).__name__}: {error}")[:500]
        return JSONResponse({"error": f"the arena failed on this request ({message})"}, status_code=500)

    add_game_routes(app, arena)
    if store is not None:
        app.include_router(ladder_routes(arena.ladder, arena.bots))
    add_replay_routes(app, arena)
    add_leaderboard_routes(app, arena)

    @app.get("/")
    async def page():
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.add_middleware(BodyLimit, limit=max_body)
    app.add_middleware(SameSite, hosts=hosts)
    return app


def add_game_routes(app: FastAPI, arena: Arena) -> None:
    @app.get("/api/catalogue")
    async def catalogue():
        return await run_in_threadpool(arena.catalogue)  # a folder listing (cached, but read now and then) off the loop

    @app.get("/api/records")
    async def records(start: str = "0", count: str = str(PAGE)):
        return await run_in_threadpool(arena.record_page, start, count)

    @app.post("/api/games")
    async def new_game(request: Request):
        body = await read_body(request, MAX_GAME_BODY_BYTES)
        game = await run_in_threadpool(arena.add_game, body, True, client_address(request))
        return {"game": game.game_id, "seat": game.person, "token": game.token}

    async def bots_request(game_id: str, authorization: str | None) -> bool:
        """Whether a game's request carries a bot's secret: then the bot acts or looks in its own seat. The game's
        own secret (a person's every move) is told at once, without asking the store."""
        if arena.bots is None or arena.holds_game_secret(game_id, authorization):
            return False
        return await run_in_threadpool(arena.bots.holds_bot_secret, authorization)

    @app.get("/api/games/{game_id}")
    async def game_view(game_id: str, request: Request):
        authorization = request.headers.get("authorization")
        if await bots_request(game_id, authorization):
            return await run_in_threadpool(arena.bots.view, game_id, authorization)
        # a view holds JSON's own types: sent as it is, not walked again by FastAPI's jsonable_encoder
        return JSONResponse(await run_in_threadpool(arena.view, game_id, authorization))

    @app.post("/api/games/{game_id}/actions")
    async def act(game_id: str, request: Request):
        authorization = request.headers.get("authorization")
        if await bots_request(game_id, authorization):
            return await run_in_threadpool(arena.bots.act, game_id, authorization, await read_body(request, MAX_ACTION_BODY_BYTES))
        arena.game(game_id, authorization)  # an unknown game or a wrong secret is answered before the body is read
        return JSONResponse(await run_in_threadpool(arena.act, game_id, authorization, await read_body(request, MAX_ACTION_BODY_BYTES)))

    @app.post("/api/watch")
    async def new_watch(request: Request):
        body = await read_body(request, MAX_GAME_BODY_BYTES)
        game = await run_in_threadpool(arena.add_game, body, False, client_address(request))
        return {"game": game.game_id, "token": game.token}

    @app.post("/api/games/{game_id}/step")
    async def step(game_id: str, request: Request):
        return JSONResponse(await run_in_threadpool(arena.step, game_id, request.headers.get("authorization")))


def add_replay_routes(app: FastAPI, arena: Arena) -> None:
    @app.post("/api/replays")
    async def new_replay(request: Request):
        return await run_in_threadpool(arena.open_replay, await read_body(request))

    @app.get("/api/replays/{replay_id}/frames/{index}")
    async def frame(replay_id: str, index: str, request: Request, viewer: str = "spectator"):
        replay = arena.replay(replay_id, request.headers.get("authorization"))
        number = whole_number(index, "frame", MAX_REPLAY_FRAMES)
        seat = None if viewer == "spectator" else whole_number(viewer, "viewer (a seat number, or 'spectator')", MAX_PLAYERS)
        return await run_in_threadpool(replay.frame, number, seat)


def model_card(name: str) -> dict:
    """What the leaderboard links an agent's name to: a shipped agent's file metadata (its training, its
    evaluation, the rules it was made under), or a built-in player's description. Names only, never paths."""
    if name in SHIPPED:
        for num_players in range(2, 11):  # a file is made for one player count (or any): the first that loads
            try:
                return {"name": name, "kind": "trained", **TrainedAgent.load(SHIPPED[name], num_players).describe()}
            except ValueError:
                continue
    if name in BUILT_IN:
        return {"name": name, "kind": "built-in", "description": (BUILT_IN[name].__doc__ or "").strip().splitlines()[0]}
    raise ArenaError(f"no agent card for {name[:60]!r}: one of {available()}", 404)


def add_leaderboard_routes(app: FastAPI, arena: Arena) -> None:
    @app.get("/api/results/{name}")
    async def results(name: str):
        folder = arena.results_folder(name)
        try:
            data = parse_json((folder / "results.json").read_bytes()[: MAX_RECORD_BYTES], "results.json")
        except (OSError, ValueError) as error:
            raise ArenaError(f"results.json of {name!r} cannot be read: {error}", 422) from None
        if not isinstance(data, dict) or "ranking" not in data:
            raise ArenaError(f"results.json of {name!r} is not a tournament's results", 422)
        plots = sorted(p.name for p in folder.iterdir() if PLOT_NAME.fullmatch(p.name))
        return {"name": name, "results": data, "plots": plots}

    @app.get("/api/agents/{name}")
    async def agent_card(name: str):
        return await run_in_threadpool(model_card, name)

    @app.get("/api/results/{name}/plots/{plot}")
    async def plot(name: str, plot: str):
        folder = arena.results_folder(name)
        if not PLOT_NAME.fullmatch(plot) or not (folder / plot).is_file():
            raise ArenaError(f"no plot {plot[:60]!r}", 404)
        return FileResponse(folder / plot, media_type="image/png")
