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

from agents.players import BUILT_IN, SHIPPED, SearchAgent, TrainedAgent, available, load
from agents.players.trained import other_rules_warning
from hpuno_env import ACTION_LABELS, VectorEngine, kernel
from hpuno_env.cards import CARD_LABELS, TARGET_BASE
from hpuno_env.options import RulesOptions, check_num_players
from hpuno_env.records import Recorder, Replay, check_record
from hpuno_env.render import describe_events

PERSON = "you"  # the person's name in a record's players list and in the views
HISTORY_LINES = 200  # event sentences a view repeats (the page keeps its own log as well)
MAX_REPLAY_FRAMES = 20_000  # a replay's frames are kept in memory: a long match has a few thousand
MAX_SHELVED = 16  # trained networks kept loaded (the shipped ones are 1-4 MB each); the least recently used goes first
ACTION_INDEX = {label: index for index, label in enumerate(ACTION_LABELS)}


class ArenaError(ValueError):
    """A request the arena refuses; ``status`` is the HTTP status it answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


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


def checked_seed(seed) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ArenaError(f"seed must be an integer in [0, 2**63) or null, got {seed!r}")
    return seed


def agent_file(name) -> str | None:
    """The agent file an opponent's name stands for (a shipped agent's, or the name read as a path), None for a
    built-in player; ArenaError for anything else. Checked for every seat before any agent is loaded."""
    if not isinstance(name, str) or not name or len(name) > 4096 or "\0" in name:
        raise ArenaError(f"an opponent must be an agent name ({', '.join(available())}) or a file path, got {str(name)[:80]!r}")
    if name in BUILT_IN:
        return None
    if name in SHIPPED:
        return SHIPPED[name]
    if os.path.isfile(name):
        return name
    raise ArenaError(f"unknown agent {name[:200]!r}: not one of {available()} and no such file")


class AgentShelf:
    """Trained networks read once and shared, the ``size`` most recently used kept (a network holds no game
    state, and its forward pass under ``no_grad`` writes nothing, so games in different threads may call it at
    once). A network is shelved under its file (resolved: every spelling of a path is one file, and a file
    changed on disk is read again) and the player count it was loaded for; each game gets its own
    ``TrainedAgent`` around it, told the game's rules."""

    def __init__(self, size: int = MAX_SHELVED):
        self.size = size
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
    seed: int | None
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
        action = int(policy.act(observation, mask)[0])
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
    seed = checked_seed(seed)
    agents_wanted = num_players - 1 if person else num_players
    if not isinstance(names, list) or not names:
        raise ArenaError(f"opponents must be a list of agent names (one name fills every seat), got {names!r}")
    if len(names) == 1:
        names = names * agents_wanted
    if len(names) != agents_wanted:
        raise ArenaError(f"{agents_wanted} agents are needed for {num_players} players, got {len(names)} names")
    if deck is not None and (not isinstance(deck, list) or not all(isinstance(card, str) for card in deck)):
        raise ArenaError("deck must be a list of card labels, top first")
    seeds = np.random.SeedSequence(seed).generate_state(num_players) if seed is not None else [None] * num_players
    table = ([PERSON] if person else []) + list(names)
    first = 1 if person else 0
    players, told = shelf.table(table[first:], num_players, [None if s is None else int(s) for s in seeds[first:]], rules)
    engine = VectorEngine(1, num_players, seed=seed, auto_reset=False, **rules)
    game = Game(game_id=new_secret()[:12], token=new_secret(), names=table, engine=engine,
                policies=dict(enumerate(players, start=first)), seed=seed, person=0 if person else None, warnings=told)
    game.start(deck)
    return game


# ---------------------------------------------------------------- replays


@dataclass
class Frame:
    """One step of a replayed record: where it stands, the table then, and what the step did."""

    title: str
    round: int
    number: int
    seat: int | None
    action: str | None
    state: dict
    events: list
    shown: dict[int, dict[str, list[str]]]  # per seat shown a hand by a challenge: those hands (most frames: none)


class ReplaySession:
    """A record played again once, its frames kept, to be stepped through both ways from any seat."""

    def __init__(self, record, name: str):
        try:
            check_record(record)
            replaying = Replay(record)
            agents = replaying.engine.agents
            self.frames: list[Frame] = []
            for decision in replaying:
                if len(self.frames) >= MAX_REPLAY_FRAMES:
                    raise ArenaError(f"the record has more than {MAX_REPLAY_FRAMES} decisions: too long to show here", 413)
                state = replaying.engine.game_state(0)
                # a frame keeps counts of the piles, not their cards
                state["draw_pile_size"] = len(state.pop("draw_pile"))
                state["discard_size"] = len(state.pop("discard"))
                who = None if decision.seat is None else agents[decision.seat]
                title = (f"round {decision.round}: the deal" if who is None
                         else f"round {decision.round}, decision {decision.number}: {who} chose {decision.action}")
                s = replaying.engine.state
                shown = {seat: shown_hands(s, agents, seat) for seat in map(int, np.flatnonzero(s.revealed_seen[0].any(axis=1)))}
                self.frames.append(Frame(title, decision.round, decision.number, decision.seat, decision.action,
                                         state, replaying.engine.events(0), shown))
        except ArenaError:
            raise
        except ValueError as error:
            raise ArenaError(f"{name}: not a game record this arena can replay: {error}") from None
        self.replay_id = new_secret()[:12]
        self.token = new_secret()
        self.name = name
        self.agents = agents
        self.players = record.get("players")
        self.touched = time.monotonic()

    def outline(self) -> dict:
        return {
            "replay": self.replay_id,
            "name": self.name,
            "players": self.agents,
            "names": self.players,
            "frames": len(self.frames),
            "decisions": [[f.round, f.number, f.seat, f.action] for f in self.frames],
        }

    def frame(self, index, viewer) -> dict:
        """Frame ``index`` as seat ``viewer`` saw it (None: the spectator, who sees every hand)."""
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.frames):
            raise ArenaError(f"frame must be in [0, {len(self.frames)}), got {index!r}", 404)
        if viewer is not None and (isinstance(viewer, bool) or not isinstance(viewer, int) or not 0 <= viewer < len(self.agents)):
            raise ArenaError(f"viewer must be a seat in [0, {len(self.agents)}) or 'spectator', got {viewer!r}")
        frame = self.frames[index]
        state = dict(frame.state)
        hands = state.pop("hands")
        state["hand_sizes"] = {agent: len(cards) for agent, cards in hands.items()}
        if viewer is None:
            state["hands"] = hands
        else:
            state["hand"] = hands[self.agents[viewer]]
            state["you"] = self.agents[viewer]
            state["shown"] = frame.shown.get(viewer, {})
        start = max(0, index - 12)
        history = []
        for earlier in self.frames[start : index + 1]:
            history.extend(describe_events(earlier.events, self.agents, viewer))
        state.update(index=index, title=frame.title, seat=frame.seat, action=frame.action, viewer=viewer,
                     events=describe_events(frame.events, self.agents, viewer), history=history,
                     over=state["phase"] == "over", players=self.agents, names=self.players)
        return state

