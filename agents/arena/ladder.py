"""The ladder: openskill ratings from the arena's live games, and a duplicate score for people and bots.

**Who is on it.** One rating per name: people (the name a person plays under), bots, and agents by their name in
``agents.available()`` (an agent file is not on the ladder). A name keeps one kind (``store.check_name``'s
rules; a person cannot take an agent's or a bot's name, nor ``"you"``, the arena's unnamed person).

**Which games count.** A live game played to its end (outcome ``terminated``: not one truncated, dropped idle or
saved unfinished when the arena stopped) with a person or a bot in it, every seat of which is on the ladder (a named
person, bots, agents by name). A game that does not count is stored all the same, and changes no rating and no
duplicate score. A bot that left a game (``SeatedGame.left_seats``: its clock played its moves to the end) is ranked
last in it whatever the fallback's moves made of its hand, and has no duplicate score for it: going silent never
saves a bot a loss.
Its standing (``standing``): the winners (the kernel's round or match winners) first, then the others by
their points: a round's losers by the card points left in their hands (fewer is better), a match's by their
match score (higher is better; lower under ``scoring="lowest"``). Seats on the same points share a rank.

**Ratings.** openskill's Plackett-Luce model, one table a game: each seat a player with its name's rating,
ranked by the standing. A name in several seats (an agent filling the table) takes the sum of their changes
and the product of their variance factors, as the tournament's ratings do (``agents.evaluation.tournament``).
Unlike a tournament's fixed agents, people and bots change, so the model keeps openskill's default ``tau``
(a little uncertainty added before every game). Games are rated in the order they end. Each name's rating after
each of its games is kept: its history. The ladder lists names by ``mu - 3 * sigma`` (openskill's ordinal: a
name with few games is not placed high on one lucky win).

**Duplicate score** (``duplicate_difference``): the luck of the deal taken out of a person's or a bot's result,
as poker programs are compared (``agents.evaluation.duplicate``). The game's deal (its record's first deck,
dealer and generator: ``hpuno_env.records.Replay``) is played again with the reference agent (``REFERENCE``) in
that seat and the same agents, seeded as in the live game, in the others; the result is the seat's win (1 or 0)
in the live game minus the reference's in the replay. Only a game whose other seats are all agents can be
replayed so. The ladder gives, per person and bot, the mean of these differences with a 95% interval
(``duplicate.paired_interval``). A replay takes as long as a game of agents (a search agent's far longer), so
``Ladder`` keeps the games to replay in the database and a worker thread (``start``) replays them after the
game has been answered; a restart finds the ones left.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence

import numpy as np
from openskill.models import PlackettLuce

from agents.evaluation.duplicate import paired_interval
from agents.evaluation.rounds import winning_seats
from agents.players import available
from hpuno_env import kernel
from hpuno_env.cards import CARD_POINTS
from hpuno_env.records import Replay

from .games import PERSON, AgentShelf, ArenaError, Game
from .seats import SeatedGame, seat_seeds
from .store import Store, check_name

REFERENCE = "heuristic"
MAX_REPLAY_DECISIONS = 100_000  # a replayed deal's decisions (a whole match of agents takes a few thousand)
DUPLICATES_A_PASS = 20  # replays the worker does between looks at whether it is stopped


def standing(engine) -> tuple[list[bool], list[int]]:
    """(won, ranks) of the finished game in slot 0 of ``engine``: the winning seats, and each seat's rank (1: best;
    equal points share a rank), as the module docstring says."""
    match = engine.options.episode == "match"
    won = winning_seats(engine, np.zeros(1, np.int64), kernel.EV_MATCH_END if match else kernel.EV_ROUND_END)[0]
    if match:
        scores = engine.state.scores[0].astype(np.int64)
        goodness = -scores if engine.options.scoring == "lowest" else scores
    else:
        goodness = -(engine.state.hands[0].astype(np.int64) @ CARD_POINTS.astype(np.int64))
    keys = [(not w, -int(g)) for w, g in zip(won, goodness)]
    return [bool(w) for w in won], [1 + sum(other < key for other in keys) for key in keys]


def final_standing(record: dict) -> tuple[list[bool], list[int]]:
    """``standing`` at the end of a finished game's record (replayed)."""
    replaying = Replay(record)
    for _ in replaying:
        pass
    return standing(replaying.engine)


def rate_table(model: PlackettLuce, before: dict[str, tuple[float, float]], names: Sequence[str],
               ranks: Sequence[int]) -> dict[str, tuple[float, float]]:
    """The ratings after one game of the names seated in ``names`` (one a seat) ranked ``ranks`` (module docstring)."""
    teams = [[model.rating(mu=before[name][0], sigma=before[name][1])] for name in names]
    updated = model.rate(teams, ranks=list(ranks))
    mu_change = dict.fromkeys(names, 0.0)
    variance_factor = dict.fromkeys(names, 1.0)
    for name, [rating] in zip(names, updated):
        mu_change[name] += rating.mu - before[name][0]
        variance_factor[name] *= (rating.sigma / before[name][1]) ** 2
    return {name: (before[name][0] + mu_change[name], before[name][1] * variance_factor[name] ** 0.5) for name in mu_change}


def play_deal(record: dict, policies: dict) -> list[bool]:
    """The winning seats of the record's first deal played again by ``policies`` (seat -> agent) to its end."""
    first = record["rounds"][0]
    engine = Replay({**record, "outcome": "unfinished", "rounds": [{**first, "decisions": []}]}).engine  # at the deal
    action = np.zeros(1, np.int64)
    for _ in range(MAX_REPLAY_DECISIONS):
        if engine.state.phase[0] == kernel.OVER:
            return standing(engine)[0]
        seat = int(engine.current_player[0])
        action[0] = int(policies[seat].act(engine.observe(), engine.legal_mask())[0])
        engine.step(action)
    raise ValueError(f"the deal did not end in {MAX_REPLAY_DECISIONS} decisions")


def seats_of(game: Game) -> list[tuple[str | None, str]]:
    """Each seat's ladder name and kind in a live game: the person's name (None: unnamed; always so in a plain
    ``Game``), each bot's of a ``SeatedGame``, each agent's name of ``agents.available()`` (None for an agent
    file: it is not on the ladder)."""
    known = set(available())
    bots = game.bots if isinstance(game, SeatedGame) else {}
    person_name = game.person_name if isinstance(game, SeatedGame) else None
    return [(person_name, "person") if seat == game.person else (bots[seat], "bot") if seat in bots
            else (name if name in known else None, "agent") for seat, name in enumerate(game.names)]


class Ladder:
    """The ladder on a ``Store``: rates finished games, serves ``GET /api/ladder``, replays deals for duplicates."""

    def __init__(self, store: Store, shelf: AgentShelf | None = None, reference: str = REFERENCE):
        if reference not in available():
            raise ValueError(f"the ladder's reference agent must be one of {available()}, got {reference!r}")
        self.store = store
        self.shelf = shelf if shelf is not None else AgentShelf()
        self.reference = reference
        self.model = PlackettLuce()
        self.default = (float(self.model.mu), float(self.model.sigma))
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._worker: threading.Thread | None = None

    def check_person_name(self, name) -> str:
        """A name a person may play under: a ladder name not an agent's, a bot's or ``"you"`` (else 400 or 409)."""
        name = check_name(name)
        if name.lower() == PERSON or name.lower() in {agent.lower() for agent in available()}:
            raise ArenaError(f"the name {name!r} is an agent's: choose another", 409)
        kind = self.store.kind_of(name)
        if kind not in (None, "person"):
            raise ArenaError(f"the name {name!r} is a {kind}'s on the ladder: choose another", 409)
        return name

    @staticmethod
    def rated(record: dict, seats: Sequence[tuple[str | None, str]]) -> bool:
        """Whether the ladder rates this game (module docstring, "Which games count")."""
        return (record["outcome"] == "terminated" and all(name is not None for name, _ in seats)
                and any(kind != "agent" for _, kind in seats))

    def add_game(self, game_id: str, record: dict, seats: Sequence[tuple[str | None, str]],
                 left_seats: Sequence[int] = ()) -> bool:
        """Store a finished game (any outcome) and, if it counts, rate it and queue its duplicates; True if rated.
        ``left_seats``: bots that left it, ranked last (module docstring, "Which games count")."""
        rated = self.rated(record, seats)
        ranks = final_standing(record)[1] if record["outcome"] == "terminated" else None
        if ranks is not None and left_seats:
            last = max(ranks) + 1
            ranks = [last if seat in left_seats else rank for seat, rank in enumerate(ranks)]
        names = [name for name, _ in seats]
        rate = (lambda before: rate_table(self.model, before, names, ranks)) if rated else None
        duplicates = [seat for seat, (_, kind) in enumerate(seats) if kind != "agent" and seat not in left_seats
                      and all(other == "agent" for index, (_, other) in enumerate(seats) if index != seat)]
        rated = self.store.add_game(game_id, record, seats, ranks, rate, duplicates if rated else [], self.default)
        if rated and duplicates:
            self._wake.set()
        return rated

    def add_finished(self, game: Game) -> bool:
        """``add_game`` for a live game of the arena that has ended or is dropped (``seats_of`` its seats), under
        the game's lock. A game the store refuses (a record over its limit) is said on stderr and not stored:
        the person's answer does not fail for it."""
        try:
            left_seats = game.left_seats if isinstance(game, SeatedGame) else []
            return self.add_game(game.game_id, game.record(), seats_of(game), left_seats)
        except ArenaError as error:
            print(f"hpuno arena: game {game.game_id} is not stored: {error}", file=sys.stderr)
            return False

    def duplicate_difference(self, record: dict, seat: int, seats: list[dict]) -> float:
        """The seat's live result (1: it won) minus the reference agent's on the same deal (module docstring)."""
        num_players, rules = record["num_players"], record["options"]
        seeds = seat_seeds(record["seed"], num_players)
        names = [self.reference if s == seat else seats[s]["name"] for s in range(num_players)]
        players, _ = self.shelf.table(names, num_players, seeds, rules)  # a rules warning: told in the live game
        policies = dict(enumerate(players))
        won_by_reference = play_deal(record, policies)[seat]
        return float(seats[seat]["rank"] == 1) - float(won_by_reference)

    def compute_duplicates(self, limit: int = DUPLICATES_A_PASS) -> int:
        """Replay up to ``limit`` pending duplicates and store them; returns how many were done."""
        pending = self.store.pending_duplicates(limit)
        for game, seat, record, seats in pending:
            try:
                difference = self.duplicate_difference(record, seat, seats)
            except (ValueError, RuntimeError) as error:
                print(f"hpuno arena: the duplicate of game {game}, seat {seat} cannot be replayed: {error}", file=sys.stderr)
                difference = None
            self.store.set_duplicate(game, seat, difference)
        return len(pending)

    def start(self) -> None:
        """Start the worker thread that replays the pending duplicates (those left by a restart too)."""
        if self._worker is None:
            self._stop.clear()
            self._worker = threading.Thread(target=self._work, name="ladder-duplicates", daemon=True)
            self._worker.start()

    def stop(self, timeout: float = 10.0) -> None:
        if self._worker is not None:
            self._stop.set()
            self._wake.set()
            self._worker.join(timeout)
            self._worker = None

    def _work(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            if not self.compute_duplicates():
                self._wake.wait(60)

    def payload(self) -> dict:
        """``GET /api/ladder``: every name, best first (by ``mu - 3 sigma``), with its kind, rating, rated games and,
        for people and bots, its duplicate score (null until one of its deals has been replayed)."""
        differences = self.store.duplicate_differences()
        players = []
        for row in sorted(self.store.players(), key=lambda row: row["sigma"] * 3 - row["mu"]):
            found = differences.get(row["name"]) if row["kind"] != "agent" else None
            duplicate = None
            if found:
                interval = paired_interval(np.array(found, np.float64))
                duplicate = {"mean": round(interval["difference"], 4), "low": round(interval["low"], 4),
                             "high": round(interval["high"], 4), "rounds": len(found)}
            players.append({"name": row["name"], "kind": row["kind"], "mu": round(row["mu"], 4),
                            "sigma": round(row["sigma"], 4), "games": row["games"], "duplicate": duplicate})
        return {"players": players}

    def history(self, name) -> dict:
        """One name's rating after each of its rated games (the latest ``store.MAX_HISTORY``), oldest first."""
        name = check_name(name)
        kind = self.store.kind_of(name)
        if kind is None:
            raise ArenaError(f"no {name!r} on the ladder", 404)
        return {"name": name, "kind": kind, "history": self.store.history(name)}
