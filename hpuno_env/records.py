"""Game records: a game saved as a JSON document, and played again from it state by state.

A record holds what it takes to rebuild every state of one game (an episode:
one round with ``episode="round"``, a whole match with ``episode="match"``)
in a fresh 1-game engine, wherever it was played (any slot of a big batch)::

    {
      "format": "hpuno-record", "version": 1,
      "num_players": 3,
      "options": {...every field of RulesOptions...},
      "seed": 1,                 # for reference: the seed of the engine that played it (or null)
      "slot": 0,                 # for reference: the game slot it was played in
      "players": ["human", "heuristic", "heuristic"],   # for reference: who sat where (or null)
      "outcome": "terminated",   # or "truncated" (max_turns), or "unfinished" (stopped early)
      "rounds": [
        {"round": 1, "dealer": 2,
         "deck": ["red:7", ...],           # the 112 cards (108: classic deck) the round was dealt from, top first
         "generator": [w0, w1, w2, w3],    # the game's random generator at the deal
         "decisions": [[0, "play:red:3"], [1, "draw"], ...]},   # [seat, action label], in order
        ...
      ]
    }

Chance after the deck is laid down (a starting Wild Draw Four put back at a
random place, every reshuffle of the discard pile, the next round's shuffle)
comes from the game's own xoshiro128** generator, so its state at the deal
replays all of it exactly: ``replay`` sets it, deals the recorded deck with
the recorded dealer, and applies the decisions. In a match the engine deals
later rounds itself; their deck, dealer and generator in the record must be
what it deals (a check that the record is one consistent game).

``Recorder`` records one game slot of a running ``VectorEngine`` at the cost
of a few array reads per step; ``replay`` yields ``game_state()`` after the
deal and after every decision; ``save_record`` / ``load_record`` write and
read the JSON. A record that is corrupt or does not fit together raises
``ValueError`` naming the field or the decision, before anything reaches the
kernel. ``python -m hpuno_env.replay FILE`` shows a record in the terminal.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from typing import NamedTuple
from collections.abc import Iterator

import numpy as np

from . import kernel
from ._checks import check_index, check_positive_int
from ._output import write_atomically
from ._reading import is_json_int, read_json_file
from .cards import ACTION_INDEX, ACTION_LABELS, deck_from_labels
from .engine import VectorEngine
from .options import HOUSE_RULE_OPTIONS, RulesOptions, check_num_players

FORMAT = "hpuno-record"
VERSION = 1
OUTCOMES = ("terminated", "truncated", "unfinished")
_OPTION_NAMES = tuple(field.name for field in dataclasses.fields(RulesOptions))
_WORD = 0xFFFFFFFF
MAX_RECORD_BYTES = 64 * 2**20  # a 10,000-decision round's record is about 200 kB


# ---------------------------------------------------------------- the generator at the deal


def _rotate_left(word: int, bits: int) -> int:
    return ((word << bits) | (word >> (32 - bits))) & _WORD


def previous_generator_state(words) -> list[int]:
    """The xoshiro128** state one output before ``words`` (the kernel's ``next_u32`` undone).

    The generator's step is invertible: this lets a recorder that sees the
    state only after a deal recover the state the deal started from."""
    a0, a1, a2, a3 = (int(word) for word in words)
    s3_mixed = _rotate_left(a3, 32 - 11)  # s3 ^ s1, before the rotation
    s0 = a0 ^ s3_mixed
    # a1 ^ a2 = s1 ^ (s1 << 9); undo the shifted xor by xoring in the shifts of 9, 18 and 27.
    mixed = a1 ^ a2
    s1 = (mixed ^ (mixed << 9) ^ (mixed << 18) ^ (mixed << 27)) & _WORD
    s2 = a1 ^ s1 ^ s0
    s3 = s3_mixed ^ s1
    return [s0, s1, s2, s3]


def _dealt_round(engine: VectorEngine, game: int) -> dict:
    """The round game ``game`` was just dealt (by a reset or by the last step), as a record's round.

    The deal's only chance is putting back a starting Wild Draw Four (one
    generator output each, logged as EV_WD4_RETURN), so the generator at the
    deal is the state now, stepped back once per return."""
    state = engine.state
    count = int(state.event_count[game])
    kinds = state.events[game, :count, 0]
    if not (kinds == kernel.EV_NEW_ROUND).any():
        # The kernel keeps MAX_EVENTS events a step (room for the longest step, kernel.py); the deal's come
        # last, so if its NEW_ROUND were missing the returns could not be counted.
        raise RuntimeError(f"game {game}: the step's event log overflowed before the deal; this round cannot be recorded")
    generator = engine.generator_state(game)
    for _ in range(int((kinds == kernel.EV_WD4_RETURN).sum())):
        generator = previous_generator_state(generator)
    return {
        "round": int(state.round_number[game]),
        "dealer": int(state.dealer[game]),
        "deck": engine.round_deck(game),
        "generator": generator,
        "decisions": [],
    }


def _ending(engine: VectorEngine, game: int) -> str:
    """How the game that the last step finished ended: "terminated" or "truncated" (max_turns).

    Read from the step's events (a state cannot tell: a round cut right after its
    last card, before the wild's colour, leaves an empty hand too). An auto-reset
    logs its deal after them, so they are there whenever the deal's are."""
    kinds = engine.state.events[game, : int(engine.state.event_count[game]), 0]
    if (kinds == kernel.EV_TRUNCATED).any():
        return "truncated"
    if (kinds == kernel.EV_ROUND_END).any():
        return "terminated"
    raise RuntimeError(f"game {game}: the step's event log overflowed before the round's end; this game cannot be recorded")


# ---------------------------------------------------------------- recording


class Recorder:
    """Records the games played in one slot of a running ``VectorEngine``.

    Call ``after_reset(games)`` after every ``engine.reset`` and
    ``after_step(actions)`` after every ``engine.step`` / ``step_observe``
    (with the same arguments). Recording starts at the next fresh game in the
    slot: a reset of it, or an auto-reset inside a step. Each finished game
    is appended to ``records``; ``current_record()`` is the one in progress.

    Args:
        engine: the engine to watch (any number of games, auto-reset or not).
        game: the slot to record.
        seed: stored in each record for reference (replay does not need it).
        players: stored for reference: the name of who sits in each seat.
        max_records: stop after this many finished records (None: never).
    """

    def __init__(self, engine: VectorEngine, game: int = 0, seed: int | None = None, players=None, max_records: int | None = None):
        if not isinstance(engine, VectorEngine):
            raise TypeError(f"engine must be a VectorEngine, got {type(engine).__name__}")
        game = check_index(game, "game", engine.num_games, "a slot")
        if max_records is not None:
            max_records = check_positive_int(max_records, "max_records")
        self.engine = engine
        self.game = game
        self.seed = seed
        self.players = _checked_players(players, engine.num_players, "players")
        self.max_records = max_records
        self.records: list[dict] = []
        self._record: dict | None = None
        self._to_act = -1

    @property
    def done(self) -> bool:
        """True once ``max_records`` records are finished."""
        return self.max_records is not None and len(self.records) >= self.max_records

    def current_record(self) -> dict | None:
        """A copy of the game being recorded (outcome ``"unfinished"``), or None."""
        return copy.deepcopy(self._record)

    def after_reset(self, games=None) -> None:
        """The engine was reset (all games, or those in ``games``): a game in progress
        in the slot ends unfinished, and the fresh one is recorded."""
        if games is not None and self.game not in np.asarray(games).reshape(-1):
            return
        if self._record is not None:
            self._finish("unfinished")
        self._begin()

    def after_step(self, actions) -> None:
        """The engine stepped with ``actions`` (the whole batch's, -1 for a game left idle)."""
        action = int(actions[self.game])
        if action < 0:
            return
        state, g = self.engine.state, self.game
        if self._record is None:
            if state.turns[g] == 0 and state.round_number[g] == 1:  # an auto-reset dealt a fresh game
                self._begin()
            return
        decisions = self._record["rounds"][-1]["decisions"]
        decisions.append([self._to_act, ACTION_LABELS[action]])
        if state.turns[g] == 0:  # the step ended the round and dealt another
            if state.round_number[g] == 1:  # a fresh match: the recorded game is over (auto-reset)
                self._finish(_ending(self.engine, g))
                self._begin()
            else:
                self._record["rounds"].append(_dealt_round(self.engine, g))
                self._to_act = int(state.current_player[g])
        elif state.phase[g] == kernel.OVER:
            self._finish(_ending(self.engine, g))
        elif state.turns[g] != len(decisions):
            raise RuntimeError(
                f"Recorder of game {g} missed a step: the round has {int(state.turns[g])} decisions, "
                f"the record {len(decisions)}; call after_step after every engine step"
            )
        else:
            self._to_act = int(state.current_player[g])

    def _begin(self) -> None:
        if self.done:
            return
        engine = self.engine
        self._record = {
            "format": FORMAT,
            "version": VERSION,
            "num_players": engine.num_players,
            "options": engine.options.as_dict(),
            "seed": self.seed,
            "slot": self.game,
            "players": self.players,
            "outcome": "unfinished",
            "rounds": [_dealt_round(engine, self.game)],
        }
        self._to_act = int(engine.state.current_player[self.game])

    def _finish(self, outcome: str) -> None:
        self._record["outcome"] = outcome
        self.records.append(self._record)
        self._record = None


# ---------------------------------------------------------------- checking


def _checked_players(players, num_players: int, where: str):
    if players is None:
        return None
    if not isinstance(players, (list, tuple)) or len(players) != num_players or not all(isinstance(p, str) for p in players):
        raise ValueError(f"{where} must be None or a list of {num_players} names (str), got {players!r}")
    return list(players)


def check_record(record) -> None:
    """Raise ``ValueError`` naming the field unless ``record`` is a well-formed record.

    Checks the form (fields, types, labels, decks); whether the decisions fit
    the game is checked by ``replay``, which names the decision."""
    if not isinstance(record, dict):
        raise ValueError(f"record must be a JSON object (dict), got {type(record).__name__}")
    required = ("format", "version", "num_players", "options", "seed", "outcome", "rounds")
    missing = [name for name in required if name not in record]
    if missing:
        raise ValueError(f"record: missing field(s) {missing}")
    if record["format"] != FORMAT:
        raise ValueError(f"record field 'format' must be {FORMAT!r}, got {record['format']!r}")
    if record["version"] != VERSION:
        raise ValueError(f"record field 'version': this hpuno-env reads version {VERSION}, got {record['version']!r}")
    try:
        num_players = check_num_players(record["num_players"])
    except ValueError as error:
        raise ValueError(f"record field 'num_players': {error}") from None
    options = record["options"]
    if not isinstance(options, dict):
        raise ValueError(f"record field 'options' must be an object, got {type(options).__name__}")
    # Every option is stored, so that a changed default cannot change an old record; a record made
    # before the house rules existed lacks them, and was played with them off (their defaults).
    missing = [name for name in _OPTION_NAMES if name not in options and name not in HOUSE_RULE_OPTIONS]
    if missing:
        raise ValueError(f"record field 'options': missing {missing}")
    try:
        RulesOptions.from_kwargs(**options)
    except ValueError as error:
        raise ValueError(f"record field 'options': {error}") from None
    if record["seed"] is not None and not is_json_int(record["seed"]):
        raise ValueError(f"record field 'seed' must be an int or null, got {record['seed']!r}")
    if record.get("slot") is not None and not (is_json_int(record["slot"]) and record["slot"] >= 0):
        raise ValueError(f"record field 'slot' must be a non-negative int or null, got {record['slot']!r}")
    _checked_players(record.get("players"), num_players, "record field 'players'")
    if record["outcome"] not in OUTCOMES:
        raise ValueError(f"record field 'outcome' must be one of {OUTCOMES}, got {record['outcome']!r}")
    rounds = record["rounds"]
    if not isinstance(rounds, list) or not rounds:
        raise ValueError("record field 'rounds' must be a non-empty list")
    for index, entry in enumerate(rounds):
        _check_round(entry, index, num_players, options.get("deck", "harry_potter"))


def _check_round(entry, index: int, num_players: int, deck_name: str) -> None:
    where = f"record field 'rounds[{index}]"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}' must be an object, got {type(entry).__name__}")
    missing = [name for name in ("round", "dealer", "deck", "generator", "decisions") if name not in entry]
    if missing:
        raise ValueError(f"{where}': missing field(s) {missing}")
    if entry["round"] != index + 1 or not is_json_int(entry["round"]):
        raise ValueError(f"{where}.round' must be {index + 1}, got {entry['round']!r}")
    if not (is_json_int(entry["dealer"]) and 0 <= entry["dealer"] < num_players):
        raise ValueError(f"{where}.dealer' must be a seat in [0, {num_players}), got {entry['dealer']!r}")
    deck = entry["deck"]
    if not isinstance(deck, list) or not all(isinstance(label, str) for label in deck):
        raise ValueError(f"{where}.deck' must be a list of card labels")
    try:
        deck_from_labels(deck, deck_name)
    except ValueError as error:
        raise ValueError(f"{where}.deck': {error}") from None
    generator = entry["generator"]
    if (
        not isinstance(generator, list) or len(generator) != 4
        or not all(is_json_int(word) and 0 <= word <= _WORD for word in generator) or not any(generator)
    ):
        raise ValueError(f"{where}.generator' must be 4 ints in [0, 2**32), not all 0, got {generator!r}")
    decisions = entry["decisions"]
    if not isinstance(decisions, list):
        raise ValueError(f"{where}.decisions' must be a list of [seat, action label]")
    for number, decision in enumerate(decisions):
        if (
            not isinstance(decision, list) or len(decision) != 2
            or not (is_json_int(decision[0]) and 0 <= decision[0] < num_players)
            or not isinstance(decision[1], str) or decision[1] not in ACTION_INDEX
        ):
            raise ValueError(
                f"{where}.decisions[{number}]' (round {index + 1}, decision {number + 1}) must be "
                f"[seat in [0, {num_players}), action label], got {decision!r}"
            )


# ---------------------------------------------------------------- replaying


class Decision(NamedTuple):
    """Where a replay stands: the round, the decision's number in it (0: the deal),
    and who did what (None at a deal)."""

    round: int
    number: int
    seat: int | None
    action: str | None


class Replay:
    """A record played again in a fresh 1-game engine (``self.engine``, auto-reset off).

    Iterating steps through it: the first ``Decision`` is round 1's deal, then
    one per recorded decision; at each, ``self.engine`` holds the game exactly
    as it stood in the recorded game (``engine.game_state(0)``,
    ``engine.events(0)`` what the decision did). A decision that does not fit
    (the wrong seat, an illegal action, a round that ends too soon or not at
    all, a later deal unlike the record's) raises ``ValueError`` naming it.
    A ``Replay`` is stepped through once.
    """

    def __init__(self, record):
        check_record(record)
        self.record = record
        self._started = False
        first = record["rounds"][0]
        self.engine = VectorEngine(1, record["num_players"], seed=0, auto_reset=False, **record["options"])
        self.engine.set_generator_state(0, first["generator"])
        self.engine.reset(options={"deck": first["deck"], "dealer": first["dealer"]})

    def __iter__(self) -> Iterator[Decision]:
        if self._started:
            raise RuntimeError("a Replay is stepped through once: make a new Replay(record) to replay again")
        self._started = True
        return self._steps()

    def _steps(self) -> Iterator[Decision]:
        engine, state = self.engine, self.engine.state
        rounds = self.record["rounds"]
        action = np.zeros(1, np.int64)
        yield Decision(1, 0, None, None)
        for index, entry in enumerate(rounds):
            number = index + 1
            for count, (seat, label) in enumerate(entry["decisions"], start=1):
                where = f"round {number}, decision {count}"
                if state.phase[0] == kernel.OVER or state.round_number[0] != number:
                    raise ValueError(f"{where}: the round is already over (it ended at decision {count - 1})")
                if seat != state.current_player[0]:
                    raise ValueError(f"{where}: the record has player_{seat} acting, but it is player_{state.current_player[0]}'s turn")
                action[0] = ACTION_INDEX[label]
                try:
                    engine.step(action)
                except ValueError:
                    legal = [ACTION_LABELS[a] for a in np.flatnonzero(engine.legal_mask()[0])]
                    raise ValueError(f"{where}: {label} is not legal for player_{seat} here (legal: {', '.join(legal)})") from None
                yield Decision(number, count, seat, label)
            if index + 1 < len(rounds):
                self._check_next_deal(rounds[index + 1], number)
        outcome = self._outcome()
        if outcome != self.record["outcome"]:
            raise ValueError(
                f"record field 'outcome' is {self.record['outcome']!r}, but its decisions leave the game {outcome} "
                f"(round {len(rounds)} after decision {len(rounds[-1]['decisions'])})"
            )

    def _check_next_deal(self, entry: dict, finished: int) -> None:
        """After round ``finished``'s last decision the engine must have dealt the record's next round."""
        state = self.engine.state
        if state.phase[0] == kernel.OVER or state.round_number[0] != finished + 1 or state.turns[0] != 0:
            raise ValueError(
                f"round {finished}: its decisions end before the round does, or the game ended, "
                f"but the record goes on to round {finished + 1}"
            )
        dealt = _dealt_round(self.engine, 0)
        for name in ("dealer", "deck", "generator"):
            if dealt[name] != entry[name]:
                raise ValueError(f"record field 'rounds[{finished}].{name}': round {finished + 1} was dealt otherwise from the game before it")

    def _outcome(self) -> str:
        return "unfinished" if self.engine.state.phase[0] != kernel.OVER else _ending(self.engine, 0)


def replay(record) -> Iterator[dict]:
    """``game_state()`` after round 1's deal and after every decision of ``record``, exactly as it was."""
    replaying = Replay(record)
    for _ in replaying:
        yield replaying.engine.game_state(0)


# ---------------------------------------------------------------- files


def save_record(record, path) -> None:
    """Write ``record`` (checked first) as JSON to ``path``, atomically (a crash leaves no half file)."""
    check_record(record)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    write_atomically(path, (json.dumps(record, separators=(",", ":")) + "\n").encode())


def load_record(path) -> dict:
    """Read and check a record file; ``ValueError`` naming the file for a file that is not a regular one or
    larger than ``MAX_RECORD_BYTES``, for bad JSON (too deep, huge numbers: ``hpuno_env._reading``) or a bad record."""
    record = read_json_file(path, "record", MAX_RECORD_BYTES)
    try:
        check_record(record)
    except ValueError as error:
        raise ValueError(f"{os.fspath(path)}: {error}") from None
    return record
