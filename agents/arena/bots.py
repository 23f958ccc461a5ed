"""Bots on the ladder: programs that take a seat in a person's game and act through the HTTP API (docs/bots.md).

``Bots`` is what the server calls: ``create`` a bot (its secret returned once, kept only as a digest by the
``Store``), ``authenticate`` a request's ``Authorization: Bearer SECRET``, ``seat`` a new ``SeatedGame`` that
has bots in it, list a bot's ``turns`` (each game where it is to act, with its seat's view), let a bot ``act``
or read its ``view``, and ``check_clocks``: a bot that leaves its move longer than ``move_seconds`` has the
fallback agent's move played for it, recorded in the store as a timeout (``seats.SeatedGame.play_fallback``).
``start_clock`` runs ``check_clocks`` in a thread. A bot only ever gets its own seat's view
(``SeatedGame.bot_view``).

``ladder_routes(ladder, bots)`` is the API's part for the ladder and the bots, an ``APIRouter`` the app
includes: ``GET /api/ladder``, ``GET /api/ladder/NAME`` (a name's rating history), ``POST /api/bots``,
``GET /api/bots/turns`` (``?wait=S``: up to ``MAX_WAIT_SECONDS`` for a turn to come, polled on the event
loop). A bot's action and view use the game routes (``POST /api/games/ID/actions``, ``GET /api/games/ID``) with
its secret, which the server hands to ``Bots.act`` and ``Bots.view`` when ``Bots.holds_bot_secret`` says so.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
import weakref
from collections.abc import Callable

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from hpuno_env._reading import parse_json

from .games import ArenaError
from .ladder import Ladder
from .seats import SeatedGame
from .store import Store

MOVE_SECONDS = 10.0  # a bot's clock for one move
MAX_GAMES_PER_BOT = 20  # live games a bot sits in at once
MAX_WAIT_SECONDS = 20.0  # GET /api/bots/turns?wait=S
MAX_BOT_BODY_BYTES = 1024  # POST /api/bots: {"name": NAME}
SECRET_BYTES = 32


def bearer_secret(authorization: str | None) -> str:
    """The secret of an ``Authorization: Bearer SECRET`` header (401 without one)."""
    scheme, _, given = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not given.strip():
        raise ArenaError("this needs a bot's secret: send the header Authorization: Bearer SECRET", 401)
    return given.strip()


class Bots:
    """The bots of one arena: their secrets (in the store), the live games they sit in, and their clocks."""

    def __init__(self, store: Store, ladder: Ladder, move_seconds: float = MOVE_SECONDS,
                 clock: Callable[[], float] = time.monotonic, max_games_per_bot: int = MAX_GAMES_PER_BOT):
        if not move_seconds > 0:
            raise ValueError(f"a bot's clock must be positive seconds, got {move_seconds!r}")
        self.store = store
        self.ladder = ladder
        self.move_seconds = float(move_seconds)
        self.clock = clock
        self.max_games_per_bot = max_games_per_bot
        # the live games with a bot seat; a game the arena drops (idle) is gone from here with it
        self.games: weakref.WeakValueDictionary[str, SeatedGame] = weakref.WeakValueDictionary()
        self.lock = threading.Lock()
        self.on_over: Callable[[SeatedGame], None] | None = None  # a game a bot's move or clock ended (lock held)
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # ------------------------------------------------------------ names and secrets

    def create(self, name, client: str) -> str:
        """A new bot ``name``; returns its secret, which is shown this once (409 for a taken name)."""
        secret = secrets.token_urlsafe(SECRET_BYTES)
        self.store.add_bot(name, secret, client, *self.ladder.default)
        return secret

    def is_bot(self, name: str) -> bool:
        return self.store.kind_of(name) == "bot"

    def holds_bot_secret(self, authorization: str | None) -> bool:
        """Whether the request's ``Authorization`` header carries a bot's secret."""
        try:
            return self.store.bot_by_secret(bearer_secret(authorization)) is not None
        except ArenaError:
            return False

    def authenticate(self, authorization: str | None) -> str:
        """The bot whose secret the header carries (401 without a secret, 403 for one that is no bot's)."""
        name = self.store.bot_by_secret(bearer_secret(authorization))
        if name is None:
            raise ArenaError("this secret is no bot's", 403)
        return name

    # ------------------------------------------------------------ games

    def check_room(self, game_bots) -> None:
        """Refuse (429) a new game for a bot that sits in ``max_games_per_bot`` live games already."""
        with self.lock:
            self._check_room(game_bots)

    def _check_room(self, game_bots) -> None:
        for name in game_bots:
            if self._live_games_of(name) >= self.max_games_per_bot:
                raise ArenaError(f"the bot {name!r} sits in {self.max_games_per_bot} live games already: try again later", 429)

    def seat(self, game: SeatedGame) -> None:
        """Follow a new game that has bots in it: their turns, actions and clocks, its timeouts into the store."""
        with self.lock:
            self._check_room(game.bots.values())
            game.on_timeout = self._timed_out
            self.games[game.game_id] = game

    def _followed(self) -> list[tuple[str, SeatedGame]]:
        """The followed games now (a copy: another thread may add one meanwhile)."""
        with self.lock:
            return list(self.games.items())

    def _live_games_of(self, name: str) -> int:
        """Called with ``lock`` held."""
        return sum(1 for game in list(self.games.values())
                   if not game.over and name.lower() in map(str.lower, game.bots.values()))

    def _timed_out(self, game: SeatedGame, seat: int, action: str, decision: int) -> None:
        self.store.add_timeout(game.bots[seat], game.game_id, decision, action)

    def _game_of(self, game_id: str, name: str) -> tuple[SeatedGame, int]:
        game = self.games.get(game_id)
        seats = [] if game is None else [seat for seat, bot in game.bots.items() if bot.lower() == name.lower()]
        if not seats:
            raise ArenaError(f"the bot {name!r} sits in no live game {game_id[:40]!r}", 404)
        return game, seats[0]

    def _waiting_for(self, name: str) -> list[tuple[str, SeatedGame, int]]:
        """(id, game, seat) of the games where bot ``name`` seemed to be to act, read without their locks."""
        found = []
        for game_id, game in self._followed():
            seat = next((s for s, bot in game.bots.items() if bot.lower() == name.lower()), None)
            if seat is not None and game.bot_to_act() == seat:
                found.append((game_id, game, seat))
        return found

    def has_turn(self, name: str) -> bool:
        """Whether bot ``name`` seems to be to act somewhere (a look without the games' locks: ``turns`` is sure)."""
        return bool(self._waiting_for(name))

    def turns(self, name: str) -> list[dict]:
        """The live games where the bot ``name`` is to act, each with its seat's view."""
        found = []
        for game_id, game, seat in self._waiting_for(name):
            with game.lock:
                if game.bot_to_act() == seat:  # read again under the lock: the clock may have played meanwhile
                    found.append({"game": game_id, "view": self._view(game, seat)})
        return found

    def view(self, game_id: str, authorization: str | None) -> dict:
        game, seat = self._game_of(game_id, self.authenticate(authorization))
        with game.lock:
            return self._view(game, seat)

    def act(self, game_id: str, authorization: str | None, body: dict) -> dict:
        """The bot's action in its seat and the agents' replies; its view after them."""
        game, seat = self._game_of(game_id, self.authenticate(authorization))
        if set(body) != {"action"}:
            raise ArenaError(f"the body must be {{\"action\": LABEL}}, got the field(s) {sorted(body)}")
        with game.lock:
            game.bot_acts(seat, body["action"])
            game.touched = self.clock()
            if game.over and self.on_over is not None:
                self.on_over(game)
            return self._view(game, seat)

    def _view(self, game: SeatedGame, seat: int) -> dict:
        view = game.bot_view(seat)
        if game.bot_to_act() == seat and game.waiting_since is not None:
            view["clock"] = round(max(0.0, self.move_seconds - (self.clock() - game.waiting_since)), 3)
        return view

    # ------------------------------------------------------------ clocks

    def check_clocks(self) -> int:
        """Play the fallback move for every bot whose clock ran out (and the agents' replies); returns how many.
        A game busy with another request is looked at on the next check."""
        played = 0
        for _, game in self._followed():
            if game.bot_to_act() is None or not game.lock.acquire(blocking=False):
                continue
            try:
                seat = game.bot_to_act()
                if seat is None or game.waiting_since is None or self.clock() - game.waiting_since < self.move_seconds:
                    continue
                game.play_fallback(seat)
                game.play_agents()
                played += 1
                if game.over and self.on_over is not None:
                    self.on_over(game)
            finally:
                game.lock.release()
        return played

    def start_clock(self, interval: float | None = None) -> None:
        """Check the clocks in a thread every ``interval`` seconds (default: a tenth of a move's clock, at most 1)."""
        interval = min(1.0, self.move_seconds / 10) if interval is None else interval
        if self._ticker is None:
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick, args=(interval,), name="bot-clocks", daemon=True)
            self._ticker.start()

    def stop_clock(self) -> None:
        if self._ticker is not None:
            self._stop.set()
            self._ticker.join(10)
            self._ticker = None

    def _tick(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.check_clocks()


async def read_body(request: Request, limit: int | None = None) -> dict:
    """The request's JSON object, read with the project's bounded JSON reader (depth, huge numbers: 400); over
    ``limit`` bytes, 413 (every body is bounded by the app's own limit too)."""
    data = await request.body()
    if limit is not None and len(data) > limit:
        raise ArenaError(f"the request body is over {limit} bytes", 413)
    try:
        body = parse_json(data, "the request body")
    except ValueError as error:
        raise ArenaError(str(error)) from None
    if not isinstance(body, dict):
        raise ArenaError(f"the request body must be a JSON object, got {type(body).__name__}")
    return body


def client_address(request: Request) -> str:
    """Who a request comes from, for the per-client limits (bots made, live games held): its peer's address."""
    return request.client.host if request.client else "unknown"


def ladder_routes(ladder: Ladder, bots: Bots) -> APIRouter:
    """The ladder's and the bots' routes (module docstring); the app's ``ArenaError`` handler answers their errors."""
    router = APIRouter()

    @router.get("/api/ladder")
    async def ladder_payload():
        return await run_in_threadpool(ladder.payload)

    @router.get("/api/ladder/{name}")
    async def ladder_history(name: str):
        return await run_in_threadpool(ladder.history, name)

    @router.post("/api/bots")
    async def new_bot(request: Request):
        body = await read_body(request, MAX_BOT_BODY_BYTES)
        if set(body) != {"name"}:
            raise ArenaError(f"the body must be {{\"name\": NAME}}, got the field(s) {sorted(body)}")
        return {"token": await run_in_threadpool(bots.create, body["name"], client_address(request))}

    @router.get("/api/bots/turns")
    async def bot_turns(request: Request, wait: float = 0.0):
        if not 0 <= wait <= MAX_WAIT_SECONDS:
            raise ArenaError(f"wait must be in [0, {MAX_WAIT_SECONDS:g}] seconds, got {wait!r}")
        name = await run_in_threadpool(bots.authenticate, request.headers.get("authorization"))
        deadline = time.monotonic() + wait
        while True:
            if bots.has_turn(name) or time.monotonic() >= deadline:  # a look without the games' locks, then under them
                turns = await run_in_threadpool(bots.turns, name)
                if turns or time.monotonic() >= deadline:
                    return {"turns": turns}
            await asyncio.sleep(0.05)

    return router
