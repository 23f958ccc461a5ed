"""What the ladder's and the bots' tests share: a store, ladder and bots on a temporary file, people who play a
``SeatedGame`` in Python, and a small app with the ladder's routes and the bots' game routes."""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from agents.arena.bots import Bots, ladder_routes
from agents.arena.games import AgentShelf, ArenaError
from agents.arena.ladder import Ladder
from agents.arena.seats import make_seated_game, seat_seeds
from agents.arena.server import read_body
from agents.arena.store import Store
from hpuno_env import ACTION_LABELS

SHELF = AgentShelf()  # one for the tests: a trained network is read once


def open_ladder(path, **bot_options) -> tuple[Store, Ladder, Bots]:
    store = Store(path)
    ladder = Ladder(store, shelf=SHELF)
    return store, ladder, Bots(store, ladder, **bot_options)


def new_game(bots: Bots, players=2, opponents=("heuristic",), seed=0, name="alice", rules=None, **options):
    game = make_seated_game(SHELF, players, list(opponents), rules or {}, seed, person_name=name, is_bot=bots.is_bot, **options)
    if game.bots:
        bots.seat(game)
    return game


def like(agent: str):
    """A person who plays as ``agent`` would in seat 0, seeded as the arena seeds that seat (so as the ladder's
    duplicate replays seed the reference agent there)."""
    policies = {}

    def choose(game) -> str:
        if game.game_id not in policies:
            seed = seat_seeds(game.seed, game.engine.num_players)[0]
            policies[game.game_id] = SHELF.table([agent], game.engine.num_players, [seed], game.engine.options.as_dict())[0][0]
        return ACTION_LABELS[int(policies[game.game_id].act(game.engine.observe(), game.engine.legal_mask())[0])]

    return choose


def drawer(game) -> str:
    """A person who never plays a card when drawing is allowed, and keeps what they draw."""
    legal = game.legal()
    for wanted in ("draw", "keep", "accept", "pass"):
        if wanted in legal:
            return wanted
    return legal[0]


def play_person(game, choose, bot_move=None, limit: int = 5000):
    """Play ``game`` to its end: the person by ``choose(game)`` (under the game's lock), a bot by
    ``bot_move(game, seat)`` (without it: a move through the API takes it itself)."""
    for _ in range(limit):
        if game.over:
            return game
        seat = game.bot_to_act()
        if seat is not None:
            bot_move(game, seat)
            continue
        with game.lock:
            game.person_acts(choose(game))
    raise AssertionError(f"the game did not end in {limit} decisions")


def ladder_app(bots: Bots) -> FastAPI:
    """The ladder's routes, and a bot's action and view on the game routes as the arena's server hands them over."""
    app = FastAPI()

    @app.exception_handler(ArenaError)
    async def refused(request: Request, error: ArenaError):
        return JSONResponse({"error": str(error)}, status_code=error.status)

    app.include_router(ladder_routes(bots.ladder, bots))

    @app.get("/api/games/{game_id}")
    async def view(game_id: str, request: Request):
        return await run_in_threadpool(bots.view, game_id, request.headers.get("authorization"))

    @app.post("/api/games/{game_id}/actions")
    async def act(game_id: str, request: Request):
        return await run_in_threadpool(bots.act, game_id, request.headers.get("authorization"), await read_body(request))

    return app
