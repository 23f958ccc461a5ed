"""The arena's live games: a person against agents, agents watched by a spectator, and replayed records.

Each game is one 1-game ``VectorEngine`` (auto-reset off). The rules stay in
the engine: what a seat may do is the engine's legal mask, never recomputed
here. What leaves this module for a person is a *seat's view*, built from
the seat's own hand, the public table (top card, colour, hand sizes, scores)
and the engine's events told from that seat (``describe_events`` with the
seat as viewer): no other hand, no draw pile, no seed. Only a game with no
person in it (``watch``) or a finished record (``ReplaySession``) is ever
shown as a spectator sees it.

A ``Game`` is not safe to use from two threads at once: the server holds its
``lock`` around every call (reading a view included).
"""

from __future__ import annotations

import os
import secrets
import threading
from collections import OrderedDict
import time
from dataclasses import dataclass, field

import numpy as np

from agents.players import BUILT_IN, NEEDS_OPTIONS, SHIPPED, SearchAgent, TrainedAgent, available, load
from agents.players.trained import other_rules_warning
from hpuno_env import ACTION_LABELS, VectorEngine, kernel
from hpuno_env._checks import SEED_LIMIT, check_seed
from hpuno_env.cards import CARD_LABELS, TARGET_BASE
from hpuno_env.options import RulesOptions, check_num_players
from hpuno_env.records import Recorder, Replay, check_record
from hpuno_env.render import describe_events

from .acting import Acting
from .errors import ArenaError

PERSON = "you"  # the person's name in a record's players list and in the views
HISTORY_LINES = 200  # event sentences a view repeats (the page keeps its own log as well)
MAX_REPLAY_FRAMES = 20_000  # frames of one replay (a deal and its decisions): a long match has a few thousand
KEPT_EVERY = 64  # a replay keeps the game's state every this many decisions (a few kB each) and rebuilds the rest
HISTORY_FRAMES = 12  # a replayed frame's history: the events of this many frames before it, and its own
MAX_SHELVED = 16  # trained networks kept loaded (the shipped ones are 1-4 MB each); the least recently used goes first
ACTION_INDEX = {label: index for index, label in enumerate(ACTION_LABELS)}



def new_secret() -> str:
    return secrets.token_urlsafe(24)


def checked_rules(rules) -> dict:
    """The rules options of a request, checked by the engine's own ``RulesOptions`` (a bad name or value: 400)."""
    if rules is None:
        return {}
    if not isinstance(rules, dict):
        raise ArenaError(f"rules must be a JSON object of rules options, got {type(rules).__name__}")
    try:
        RulesOptions.from_kwargs(**rules)
    except (TypeError, ValueError) as error:
        raise ArenaError(f"rules: {error}") from None
    return dict(rules)


def checked_players(players) -> int:
    try:
        return check_num_players(players)
    except (TypeError, ValueError) as error:
        raise ArenaError(f"players: {error}") from None


def game_seed(seed) -> int:
    """A request's seed, checked as every seed is (``check_seed``); a game without one gets a random one (kept
    secret while the game is live: its record carries it)."""
    try:
        seed = check_seed(seed)
    except ValueError as error:
        raise ArenaError(str(error)) from None
    return secrets.randbelow(SEED_LIMIT) if seed is None else seed


def arena_agents() -> list[str]:
    """The agents the arena seats: every name of ``agents.available()`` that loads without options (a language
    model needs its server, which the arena is not told)."""
    return [name for name in available() if name not in NEEDS_OPTIONS]


def agent_file(name) -> str | None:
    """The agent file an opponent's name stands for (a shipped agent's, or the name read as a path), None for a
    built-in player; ArenaError for anything else. Checked for every seat before any agent is loaded."""
    if not isinstance(name, str) or not name or len(name) > 4096 or "\0" in name:
        raise ArenaError(f"an opponent must be an agent name ({', '.join(arena_agents())}) or a file path, got {str(name)[:80]!r}")
    if name in NEEDS_OPTIONS:
        raise ArenaError(f"{name!r} needs options (a model's server) that the arena does not take: "
                         f"one of {arena_agents()} or an agent file")
    if name in BUILT_IN:
        return None
    if name in SHIPPED:
        return SHIPPED[name]
    if os.path.isfile(name):
        return name
    raise ArenaError(f"unknown agent {name[:200]!r}: not one of {arena_agents()} and no such file")


class AgentShelf:
    """Trained networks read once and shared, the ``size`` most recently used kept (a network holds no game
    state, and its forward pass under ``no_grad`` writes nothing, so games in different threads may call it at
    once). A network is shelved under its file (resolved: every spelling of a path is one file, and a file
    changed on disk is read again) and the player count it was loaded for; each game gets its own
    ``TrainedAgent`` around it, told the game's rules. Its games' agents act through ``acting``
    (``agents.arena.acting``: greedy networks batched across the games, the search player in ``search_workers``
    worker processes)."""

    def __init__(self, size: int = MAX_SHELVED, search_workers: int = 0):
        self.size = size
        self.acting = Acting(search_workers)  # how its games' agents act: batched, searched in worker processes
        self._trained: OrderedDict[tuple, TrainedAgent] = OrderedDict()
        self._lock = threading.Lock()  # games are made in worker threads: one network file is read once

    def __len__(self) -> int:
        return len(self._trained)

    def table(self, names: list, num_players: int, seeds: list, rules: dict) -> tuple[list, list[str]]:
        """The players for ``names`` (one per agent seat) with their seeds, and the warnings of trained agents
        playing under other rules than they trained under. Every name is checked, then every file read, before
        anything is shelved or any player made: a refused table leaves the shelf as it was."""
        files = [agent_file(name) for name in names]
        keys = [None if path is None else shelf_key(path, num_players) for path in files]
        with self._lock:
            read = {}
            for name, path, key in zip(names, files, keys):
                if key is not None and key not in read:
                    read[key] = self._trained.get(key) or read_network(name, path, num_players)
            for key, shared in read.items():
                self._trained[key] = shared
                self._trained.move_to_end(key)
            while len(self._trained) > self.size:
                self._trained.popitem(last=False)
        players, warned = [], []
        for name, key, seed in zip(names, keys, seeds):
            if key is None:
                players.append(built_in(name, num_players, seed, rules))
                continue
            shared = read[key]
            agent = TrainedAgent(shared.network, num_players, shared.metadata, deterministic=True, seed=seed, source=name)
            agent.set_rules(rules)  # a universal agent's input states the table's rules
            players.append(agent)
            if not agent.universal:  # a universal agent trained under many rules
                warned.append(other_rules_warning(shared.metadata["rules_options"], rules, name))
        return players, sorted({message for message in warned if message})


def shelf_key(path: str, num_players: int) -> tuple:
    """A file as the shelf knows it: its resolved path and what tells a changed file (size, change time)."""
    resolved = os.path.realpath(path)
    try:
        status = os.stat(resolved)
    except OSError as error:
        raise ArenaError(f"opponent {path[:200]!r}: {error.strerror}") from None
    return resolved, status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, num_players


def read_network(name: str, path: str, num_players: int) -> TrainedAgent:
    """An agent file read for num_players; a refusal names the agent as it was asked for, never a server path."""
    try:
        return TrainedAgent.load(path, num_players=num_players)
    except (TypeError, ValueError, OSError) as error:
        raise ArenaError(f"opponent {name[:200]!r}: {str(error).replace(repr(path), repr(name))}") from None


def built_in(name: str, num_players: int, seed: int | None, rules: dict):
    try:
        return load(name, num_players=num_players, seed=seed, rules_options=rules)
    except (TypeError, ValueError) as error:
        raise ArenaError(f"opponent {name!r}: {error}") from None


def action_probabilities(policy, observation: np.ndarray, mask: np.ndarray) -> dict[str, float] | None:
    """A trained agent's probability of each legal action (``TrainedAgent.action_probabilities``: the masked
    softmax of its logits, a universal agent's input made under the table's rules); None for other players."""
    if not isinstance(policy, TrainedAgent):
        return None
    shares = policy.action_probabilities(observation, mask)[0]
    return {ACTION_LABELS[a]: round(float(shares[a]), 4) for a in np.flatnonzero(mask[0])}


def search_estimates(policy, searches_before: int) -> dict[str, float] | None:
    """The search player's win estimate for each candidate of the decision it just searched (wins over its worlds);
    None for other players, and for a decision it did not search (one legal action, a jump window)."""
    if not isinstance(policy, SearchAgent) or policy.decisions == searches_before or policy.last_search is None:
        return None
    search = policy.last_search
    return {ACTION_LABELS[a]: round(wins / search["worlds"], 4) for a, wins in zip(search["candidates"], search["wins"])}


def shown_hands(state, agents: list[str], seat: int) -> dict[str, list[str]]:
    """The hands a challenge showed ``seat`` this round (the engine's record of them, kept up as cards move)."""
    return {
        agents[owner]: [CARD_LABELS[c] for c in np.repeat(np.arange(len(CARD_LABELS)), state.revealed[0, seat, owner])]
        for owner in range(len(agents)) if owner != seat and state.revealed_seen[0, seat, owner]
    }


@dataclass
class Game:
    """One live game: a person in ``person`` (None: agents only, watched), agents in the other seats."""

    game_id: str
    token: str
    names: list[str]
    engine: VectorEngine
    policies: dict
    seed: int
    person: int | None
    warnings: list[str] = field(default_factory=list)
    log: list[str] = field(default_factory=list)  # the events in words, told from the person's seat
    since_turn: int = 0  # where in ``log`` the person's last decision begins
    touched: float = field(default_factory=time.monotonic)
    # held by every request that reads or moves the game: its requests run in worker threads, one at a time
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    record_file: str | None = None
    record_error: str | None = None  # why the record could not be saved (the folder full, or not writable)
    last_move: dict | None = None
    winner: str | None = None  # of the last round ended (of the match, once it ends)
    client: str | None = None  # the address that made the game: the arena's per-client cap counts its live games
    acting: Acting | None = None  # how the agents act (None: each policy's own ``act`` in this thread)

    def __post_init__(self):
        self.agents = self.engine.agents
        self.recorder = Recorder(self.engine, seed=self.seed, players=self.names)
        self._action = np.zeros(1, np.int64)

    # ------------------------------------------------------------ playing

    def start(self, deck: list[str] | None = None) -> None:
        options = {"deck": deck} if deck is not None else None
        try:
            self.engine.reset(seed=self.seed, options=options)
        except ValueError as error:
            raise ArenaError(f"deck: {error}") from None
        self.recorder.after_reset()
        self._tell()
        if self.person is not None:
            self.play_agents()

    @property
    def over(self) -> bool:
        return int(self.engine.state.phase[0]) == kernel.OVER

    def legal(self) -> list[str]:
        return [ACTION_LABELS[a] for a in np.flatnonzero(self.engine.legal_mask()[0])]

    def _step(self, action: int) -> None:
        self._action[0] = action
        self.engine.step(self._action)
        self.recorder.after_step(self._action)
        self._tell()

    def _tell(self) -> None:
        events = self.engine.events(0)
        self.log.extend(describe_events(events, self.agents, self.person))
        for kind, a, _, _ in events:
            if kind in (kernel.EV_ROUND_END, kernel.EV_MATCH_END):
                self.winner = self.agents[a]

    def person_acts(self, label) -> None:
        """The person's decision (an action label), then the agents' replies up to the person's next one."""
        if self.person is None:
            raise ArenaError("this game has no person in it: it is watched (POST .../step)", 409)
        if not isinstance(label, str) or label not in ACTION_INDEX:
            raise ArenaError(f"action must be an action label such as 'draw' or 'play:red:7', got {str(label)[:80]!r}")
        if self.over:
            raise ArenaError(f"the game is over: {label} cannot be played", 409)
        if int(self.engine.current_player[0]) != self.person:
            raise ArenaError(f"it is not your turn: {label} cannot be played now", 409)
        action = ACTION_INDEX[label]
        if not self.engine.legal_mask()[0, action]:
            raise ArenaError(f"{label} is not legal now (legal: {', '.join(self.legal())})", 409)
        self.since_turn = len(self.log)
        self._step(action)
        self.play_agents()

    def play_agents(self) -> None:
        """Agents act until the person's turn or the end of the game."""
        while not self.over and int(self.engine.current_player[0]) != self.person:
            self.step_agent()

    def step_agent(self) -> dict:
        """One agent decision; returns who chose what (and a trained agent's probabilities, or the search player's win
        estimate of each candidate)."""
        if self.over:
            raise ArenaError("the game is over", 409)
        seat = int(self.engine.current_player[0])
        if seat == self.person:
            raise ArenaError("it is the person's turn", 409)
        observation, mask = self.engine.observe(), self.engine.legal_mask()
        policy = self.policies[seat]
        probabilities = action_probabilities(policy, observation, mask) if self.person is None else None
        searches_before = getattr(policy, "decisions", 0)
        action = self.acting.act(policy, observation, mask) if self.acting is not None else int(policy.act(observation, mask)[0])
        estimates = search_estimates(policy, searches_before) if self.person is None else None
        if self.person is None:  # a watched game's news is the last move's
            self.since_turn = len(self.log)
        self._step(action)
        self.last_move = {"seat": seat, "player": self.agents[seat], "agent": self.names[seat],
                          "action": ACTION_LABELS[action], "probabilities": probabilities, "win_estimates": estimates}
        return self.last_move

    def record(self) -> dict:
        current = self.recorder.current_record()
        return current if current is not None else self.recorder.records[-1]

    # ------------------------------------------------------------ views

    def public(self) -> dict:
        """What every seat sees: the table without any hidden card."""
        state = self.engine.game_state(0)
        s = self.engine.state
        return {
            "game": self.game_id,
            "players": self.agents,
            "names": self.names,
            "phase": state["phase"],
            "current": state["current"],
            "top": state["top"],
            "color": state["color"],
            "direction": state["direction"],
            "pending_draw": state["pending_draw"],
            "hand_sizes": {agent: len(cards) for agent, cards in state["hands"].items()},
            "uno_called": state["uno_called"],
            "draw_pile_size": int(s.draw_count[0]),
            "discard_size": int(s.discard_count[0]),
            "scores": state["scores"],
            "round": state["round"],
            "dealer": state["dealer"],
            "options": {"episode": self.engine.options.episode, "target_score": self.engine.options.target_score},
            "over": self.over,
            "winner": self.winner if self.over else None,
            "record": self.record_file,
            "record_error": self.record_error,
            "warnings": self.warnings,
        }

    def seat_view(self) -> dict:
        """The person's view: their hand, the public table, and what they saw happen (told from their seat)."""
        seat = self.person
        view = self.public()
        s = self.engine.state
        view["seat"] = seat
        view["you"] = self.agents[seat]
        view["hand"] = [CARD_LABELS[c] for c in np.repeat(np.arange(len(CARD_LABELS)), s.hands[0, seat])]
        mine = not self.over and int(self.engine.current_player[0]) == seat
        view["legal"] = self.legal() if mine else []
        view["targets"] = {label: self.target_of(label) for label in view["legal"] if label.startswith("target:")}
        view["shown"] = shown_hands(s, self.agents, seat)
        view["events"] = self.log[self.since_turn:] if mine or self.over else []
        view["history"] = self.log[-HISTORY_LINES:]
        return view

    def spectator_view(self) -> dict:
        """Every hand, for a game of agents only (nobody at the table can read it)."""
        view = self.public()
        view["hands"] = self.engine.game_state(0)["hands"]
        view["legal"] = self.legal() if not self.over else []
        view["events"] = self.log[self.since_turn:]
        view["history"] = self.log[-HISTORY_LINES:]
        view["last_move"] = self.last_move
        return view

    def target_of(self, label: str) -> str:
        """The seat a ``target:k`` action names (k seats to the acting player's left)."""
        seat = int(self.engine.current_player[0])
        return self.agents[(seat + ACTION_INDEX[label] - TARGET_BASE + 1) % len(self.agents)]


def make_game(shelf: AgentShelf, num_players, names, rules, seed, person: bool, deck=None) -> Game:
    """A new game from a request's fields, checked; ``names`` are the agents' seats (all but the person's)."""
    num_players = checked_players(num_players)
    rules = checked_rules(rules)
    seed = game_seed(seed)
    agents_wanted = num_players - 1 if person else num_players
    if not isinstance(names, list) or not names:
        raise ArenaError(f"opponents must be a list of agent names (one name fills every seat), got {str(names)[:80]!r}")
    if len(names) == 1:
        names = names * agents_wanted
    if len(names) != agents_wanted:
        raise ArenaError(f"{agents_wanted} agents are needed for {num_players} players, got {len(names)} names")
    if deck is not None and (not isinstance(deck, list) or not all(isinstance(card, str) for card in deck)):
        raise ArenaError("deck must be a list of card labels, top first")
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(num_players)]
    table = ([PERSON] if person else []) + list(names)
    first = 1 if person else 0
    players, told = shelf.table(table[first:], num_players, seeds[first:], rules)
    engine = VectorEngine(1, num_players, seed=seed, auto_reset=False, **rules)
    game = Game(game_id=new_secret()[:12], token=new_secret(), names=table, engine=engine,
                policies=dict(enumerate(players, start=first)), seed=seed, person=0 if person else None, warnings=told,
                acting=shelf.acting)
    game.start(deck)
    return game


# ---------------------------------------------------------------- replays


def record_frames(record, name: str) -> int:
    """The frames of a record (its deal and one per decision), the record checked first (400 naming the field),
    refused (413) past ``MAX_REPLAY_FRAMES``."""
    try:
        check_record(record)
    except ValueError as error:
        raise ArenaError(f"{name}: not a game record this arena can replay: {error}") from None
    frames = 1 + sum(len(entry["decisions"]) for entry in record["rounds"])
    if frames > MAX_REPLAY_FRAMES:
        raise ArenaError(f"the record has {frames - 1:,} decisions, more than the {MAX_REPLAY_FRAMES - 1:,} this arena replays", 413)
    return frames


class ReplaySession:
    """A record to step through both ways from any seat. It is played once when opened (every decision checked);
    what it keeps is the decisions (a few bytes each) and the game's state every ``KEPT_EVERY`` decisions (a few
    kB each). A frame is rebuilt when asked for, from the last kept state before it: at most ``KEPT_EVERY`` +
    ``HISTORY_FRAMES`` engine steps."""

    def __init__(self, record, name: str):
        frames = record_frames(record, name)
        try:
            replaying = Replay(record)
            self.agents = replaying.engine.agents
            self.rounds, self.numbers = np.zeros(frames, np.int32), np.zeros(frames, np.int32)
            self.seats, self.actions = np.full(frames, -1, np.int8), np.full(frames, -1, np.int16)
            self.kept = replaying.engine.clone(np.zeros(-(-frames // KEPT_EVERY), np.int64))  # slot k: frame k * KEPT_EVERY
            for index, decision in enumerate(replaying):
                self.rounds[index], self.numbers[index] = decision.round, decision.number
                if decision.seat is not None:
                    self.seats[index], self.actions[index] = decision.seat, ACTION_INDEX[decision.action]
                if index % KEPT_EVERY == 0:
                    self.kept.copy_games_into([index // KEPT_EVERY], replaying.engine, [0])
        except ValueError as error:
            raise ArenaError(f"{name}: not a game record this arena can replay: {error}") from None
        self.frames = frames
        self.cursor = self.kept.clone([0])  # the engine a frame is rebuilt in
        self.lock = threading.Lock()  # one rebuild at a time: requests for frames run in worker threads
        self.replay_id = new_secret()[:12]
        self.token = new_secret()
        self.name = name
        self.players = record.get("players")
        self.touched = time.monotonic()

    def decision(self, index: int) -> list:
        """[round, number, seat, action] of frame ``index`` (seat and action None at a deal)."""
        seat = int(self.seats[index])
        return [int(self.rounds[index]), int(self.numbers[index]), None if seat < 0 else seat,
                None if seat < 0 else ACTION_LABELS[self.actions[index]]]

    def outline(self) -> dict:
        return {
            "replay": self.replay_id,
            "name": self.name,
            "players": self.agents,
            "names": self.players,
            "frames": self.frames,
            "decisions": [self.decision(index) for index in range(self.frames)],
        }

    def _rebuild(self, first: int, last: int) -> list:
        """The cursor at frame ``last``; returns the events of frames ``first`` .. ``last`` (first <= last)."""
        start = first // KEPT_EVERY * KEPT_EVERY
        self.cursor.copy_games_into([0], self.kept, [first // KEPT_EVERY])
        events = [self.cursor.events(0)] if start == first else []
        action = np.zeros(1, np.int64)
        for index in range(start + 1, last + 1):
            action[0] = self.actions[index]
            self.cursor.step(action)
            if index >= first:
                events.append(self.cursor.events(0))
        return events

    def frame(self, index, viewer) -> dict:
        """Frame ``index`` as seat ``viewer`` saw it (None: the spectator, who sees every hand)."""
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < self.frames:
            raise ArenaError(f"frame must be in [0, {self.frames}), got {index!r}", 404)
        if viewer is not None and (isinstance(viewer, bool) or not isinstance(viewer, int) or not 0 <= viewer < len(self.agents)):
            raise ArenaError(f"viewer must be a seat in [0, {len(self.agents)}) or 'spectator', got {viewer!r}")
        with self.lock:
            events = self._rebuild(max(0, index - HISTORY_FRAMES), index)
            state = self.cursor.game_state(0)
            shown = shown_hands(self.cursor.state, self.agents, viewer) if viewer is not None else None
        # a frame shows counts of the piles, not their cards
        state["draw_pile_size"] = len(state.pop("draw_pile"))
        state["discard_size"] = len(state.pop("discard"))
        hands = state.pop("hands")
        state["hand_sizes"] = {agent: len(cards) for agent, cards in hands.items()}
        if viewer is None:
            state["hands"] = hands
        else:
            state["hand"] = hands[self.agents[viewer]]
            state["you"] = self.agents[viewer]
            state["shown"] = shown
        history = [line for step in events for line in describe_events(step, self.agents, viewer)]
        round_number, number, seat, action = self.decision(index)
        who = None if seat is None else self.agents[seat]
        title = (f"round {round_number}: the deal" if who is None
                 else f"round {round_number}, decision {number}: {who} chose {action}")
        state.update(index=index, title=title, seat=seat, action=action, viewer=viewer,
                     events=describe_events(events[-1], self.agents, viewer), history=history,
                     over=state["phase"] == "over", players=self.agents, names=self.players)
        return state
