"""A person's game with bots at the table: seat 0 a person (named on the ladder, or not), bots and agents elsewhere.

``SeatedGame`` is a ``games.Game`` whose other seats may be bots (``"bot:NAME"`` among the opponents): programs
outside the server that act through the API with their own secret (``agents.arena.bots``). The game moves its
agents until a person or a bot is to act, and waits there. Each bot seat keeps its own log of events told from
its seat (``describe_events`` with that seat as viewer) and gets its own view (``bot_view``): its hand, the public
table, what it saw happen, its observation vector (``hpuno_env.encoding``: what that seat knows, for a program's
agent) and the rules; never another seat's hand.

**The clock.** While a bot is to act, ``waiting_since`` holds when its wait began; ``agents.arena.bots`` plays
``play_fallback`` for it once its clock runs out: the fallback agent (``FALLBACK``, seeded as that seat) chooses,
the move is told to everyone as usual, and ``on_timeout`` records it. A bot silent for ``MAX_SILENT_MOVES`` moves
in a row is taken to be gone: its later moves of that game are the fallback's at once, so a person does not
wait out its clock on every move.

Like a ``Game``, a ``SeatedGame`` is used under its ``lock``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from hpuno_env.cards import CARD_LABELS
from hpuno_env.engine import VectorEngine
from hpuno_env.render import describe_events

from .games import (
    ACTION_INDEX, HISTORY_LINES, PERSON, AgentShelf, ArenaError, Game, checked_players, checked_rules, game_seed,
    new_secret, shown_hands,
)
from .store import check_name

BOT_PREFIX = "bot:"  # an opponent "bot:NAME" seats the bot NAME
FALLBACK = "heuristic"  # plays a silent bot's move when its clock runs out
MAX_SILENT_MOVES = 3


def seat_seeds(seed: int | None, num_players: int) -> list[int | None]:
    """Each seat's agent seed in a game of ``seed`` (None: unseeded agents), as ``games.make_game`` draws them."""
    if seed is None:
        return [None] * num_players
    return [int(word) for word in np.random.SeedSequence(seed).generate_state(num_players)]


def bot_name(opponent) -> str | None:
    """NAME of an opponent ``"bot:NAME"`` (checked as a ladder name), or None for an agent."""
    if isinstance(opponent, str) and opponent.startswith(BOT_PREFIX):
        return check_name(opponent[len(BOT_PREFIX):], "a bot's name")
    return None


@dataclass
class SeatedGame(Game):
    """A person in seat 0 (``person_name`` on the ladder, or unnamed), agents and bots (``bots``: seat -> name)."""

    person_name: str | None = None
    bots: dict[int, str] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic
    # (game, seat, action, decision number in the game) of each move played for a bot
    on_timeout: Callable[[SeatedGame, int, str, int], None] | None = None

    def __post_init__(self):
        super().__post_init__()
        self.bot_logs: dict[int, list[str]] = {seat: [] for seat in self.bots}
        self.bot_since = dict.fromkeys(self.bots, 0)  # where in a bot's log its last decision begins
        self.silent = dict.fromkeys(self.bots, 0)  # the bot's moves in a row its clock played
        self.waiting_since: float | None = None
        self.decisions = 0

    def _step(self, action: int) -> None:
        super()._step(action)
        self.decisions += 1

    def _tell(self) -> None:
        super()._tell()
        if self.bots:
            events = self.engine.events(0)
            for seat, log in self.bot_logs.items():
                log.extend(describe_events(events, self.agents, seat))

    @property
    def left_seats(self) -> list[int]:
        """The bots' seats taken to be gone (``MAX_SILENT_MOVES`` moves in a row played for them): the fallback
        agent, not the bot, played them to the end, and the ladder ranks them last."""
        return sorted(seat for seat, silent in self.silent.items() if silent >= MAX_SILENT_MOVES)

    def bot_to_act(self) -> int | None:
        """The bot seat to act now, or None (the game is over, or a person or an agent is to act)."""
        seat = None if self.over else int(self.engine.current_player[0])
        return seat if seat in self.bots else None

    def play_agents(self) -> None:
        """Agents act until a person's or a bot's turn (a bot gone silent: its fallback acts) or the end."""
        while not self.over:
            seat = int(self.engine.current_player[0])
            if seat == self.person:
                return
            if seat in self.bots:
                if self.silent[seat] < MAX_SILENT_MOVES:
                    self.waiting_since = self.clock()
                    return
                self.play_fallback(seat)
                continue
            self.step_agent()

    def bot_acts(self, seat: int, label) -> None:
        """Bot seat ``seat``'s decision (an action label), then the agents' replies up to the next person or bot."""
        if seat not in self.bots:
            raise ArenaError(f"seat {seat} of this game is not a bot's", 403)
        if not isinstance(label, str) or label not in ACTION_INDEX:
            raise ArenaError(f"action must be an action label such as 'draw' or 'play:red:7', got {str(label)[:80]!r}")
        if self.over:
            raise ArenaError(f"the game is over: {label} cannot be played", 409)
        if int(self.engine.current_player[0]) != seat:
            raise ArenaError(f"it is not your turn: {label} cannot be played now", 409)
        action = ACTION_INDEX[label]
        if not self.engine.legal_mask()[0, action]:
            raise ArenaError(f"{label} is not legal now (legal: {', '.join(self.legal())})", 409)
        self.silent[seat] = 0
        self.bot_since[seat] = len(self.bot_logs[seat])
        self._step(action)
        self.play_agents()

    def play_fallback(self, seat: int) -> str:
        """The fallback agent's move for the bot in ``seat``, which is to act (its clock ran out, or it is gone)."""
        self.bot_since[seat] = len(self.bot_logs[seat])
        decision = self.decisions
        move = self.step_agent()  # the bot seat's policy is the fallback agent
        self.silent[seat] += 1
        self.bot_logs[seat].append(f"Your clock ran out: {move['action']} was played for you.")
        self.log.append(f"{self.names[seat]}'s clock ran out: the arena played for it.")
        if self.on_timeout is not None:
            self.on_timeout(self, seat, move["action"], decision)
        return move["action"]

    def bot_view(self, seat: int) -> dict:
        """What the bot in ``seat`` sees: like a person's view, told from its seat, with its observation vector,
        the rules and ``clock`` (seconds left for its move while it is to act, else None)."""
        view = self.public()
        s = self.engine.state
        log = self.bot_logs[seat]
        mine = self.bot_to_act() == seat
        view["seat"] = seat
        view["you"] = self.agents[seat]
        view["hand"] = [CARD_LABELS[c] for c in np.repeat(np.arange(len(CARD_LABELS)), s.hands[0, seat])]
        view["legal"] = self.legal() if mine else []
        view["targets"] = {label: self.target_of(label) for label in view["legal"] if label.startswith("target:")}
        view["shown"] = shown_hands(s, self.agents, seat)
        view["events"] = log[self.bot_since[seat]:] if mine or self.over else []
        view["history"] = log[-HISTORY_LINES:]
        view["observation"] = self.engine.observe(np.full(1, seat))[0].tolist()
        view["rules"] = self.engine.options.as_dict()
        view["clock"] = None
        return view


def make_seated_game(shelf: AgentShelf, num_players, opponents, rules, seed, *, person_name: str | None = None,
                     is_bot: Callable[[str], bool], deck=None, clock: Callable[[], float] = time.monotonic) -> SeatedGame:
    """A person's new game from a request's fields, checked like ``games.make_game``'s; an opponent ``"bot:NAME"``
    seats the bot NAME (``is_bot(NAME)`` must hold; one seat a bot), the others are agents."""
    num_players = checked_players(num_players)
    rules = checked_rules(rules)
    seed = game_seed(seed)
    if person_name is not None:
        check_name(person_name, "name")
    if not isinstance(opponents, list) or not opponents:
        raise ArenaError(f"opponents must be a list of agent names (one name fills every seat), got {opponents!r}")
    if len(opponents) == 1:
        opponents = opponents * (num_players - 1)
    if len(opponents) != num_players - 1:
        raise ArenaError(f"{num_players - 1} agents are needed for {num_players} players, got {len(opponents)} names")
    if deck is not None and (not isinstance(deck, list) or not all(isinstance(card, str) for card in deck)):
        raise ArenaError("deck must be a list of card labels, top first")
    bots = {seat: bot_name(opponent) for seat, opponent in enumerate(opponents, start=1) if bot_name(opponent) is not None}
    if len(set(map(str.lower, bots.values()))) != len(bots):
        raise ArenaError("a bot takes at most one seat of a game")
    for name in bots.values():
        if not is_bot(name):
            raise ArenaError(f"no bot {name!r} on this arena (POST /api/bots makes one)", 404)
    seeds = seat_seeds(seed, num_players)
    # a bot's seat has the fallback agent, which plays for it when its clock runs out
    seated = [FALLBACK if seat in bots else name for seat, name in enumerate(opponents, start=1)]
    players, told = shelf.table(seated, num_players, seeds[1:], rules)
    policies = dict(enumerate(players, start=1))
    engine = VectorEngine(1, num_players, seed=seed, auto_reset=False, **rules)
    table = [person_name or PERSON] + [BOT_PREFIX + bots[seat] if seat in bots else name
                                      for seat, name in enumerate(opponents, start=1)]
    game = SeatedGame(game_id=new_secret()[:12], token=new_secret(), names=table, engine=engine, policies=policies,
                      seed=seed, person=0, warnings=told, person_name=person_name,
                      bots=bots, clock=clock, acting=shelf.acting)
    game.start(deck)
    return game
