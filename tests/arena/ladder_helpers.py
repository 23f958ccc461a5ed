"""What the ladder's and the bots' tests share: a store, ladder and bots on a temporary file, people who play a
``SeatedGame`` in Python."""

from __future__ import annotations

from agents.arena.bots import Bots
from agents.arena.games import AgentShelf
from agents.arena.ladder import Ladder
from agents.arena.seats import make_seated_game, seat_seeds
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

