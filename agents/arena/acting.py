"""How the arena's agents choose their moves: batched across the live games, or searched in worker processes.

A live game's agent seat asks ``Acting.act(policy, observation, mask)`` from the game's worker thread and waits
for its action. Three kinds of players are told apart:

- **a greedy trained agent** (``TrainedAgent`` with ``deterministic=True``): the decisions of every game waiting
  for the same network, player count and rules are gathered and answered by one ``act`` call (one forward pass for
  all of them). A greedy agent's action for a row depends on that row alone (it draws no random numbers), so each
  game gets the move it would get alone. No thread waits for company: the first game to ask acts at once, and the
  games that ask while a forward pass runs are answered together by the next one (``Batcher``).
- **the search player** (``SearchAgent`` over the heuristic or a shipped blueprint, as ``agents.load`` makes it): searched in a
  worker process (``SearchWorkers``), so its tens of milliseconds a decision never hold the server's GIL and the
  other games' moves go on meanwhile. What crosses to the worker is the seat's observation and legal mask (what
  that seat knows, nothing more) and the state of the game's player's random streams (its own and its
  blueprint's); the streams come back advanced, with the decision's numbers (``last_search``), so the game's own
  player is left exactly as if it had searched in the server.
- **any other player** (the heuristic, random players, a sampling agent): its own ``act`` in the game's thread:
  their random streams are the game's own, and their decisions take microseconds.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from agents.players import SHIPPED, HeuristicAgent, SearchAgent, TrainedAgent, load
from hpuno_env import VectorEngine, kernel
from hpuno_env.heuristic import heuristic_weights

# ---------------------------------------------------------------- batched inference


def batch_key(policy) -> tuple | None:
    """What a policy's decisions are batched under (None: not batched): a greedy trained agent's network, player
    count and, for a universal agent (whose input states the rules), the rules. Policies of one key compute the
    same function of a row, so one of them answers every row."""
    if type(policy) is not TrainedAgent or not policy.deterministic:
        return None
    rules = tuple(sorted(policy.rules.as_dict().items())) if policy.universal else None
    return id(policy.network), policy.num_players, repr(rules)


@dataclass(eq=False)
class Waiting:
    """One game's decision waiting in a ``Batcher``: its row, then its action (or the error of its batch)."""

    policy: object
    observation: np.ndarray
    mask: np.ndarray
    woken: threading.Event = field(default_factory=threading.Event)
    action: int | None = None
    error: BaseException | None = None


class Batcher:
    """Decisions of greedy trained agents, answered in batches by the threads that ask (no thread of its own).

    The first thread to ask while no batch runs leads: it takes every decision waiting (its own included), answers
    them with one ``act`` a key, wakes their threads, and hands the lead to the first decision that came in
    meanwhile, if any (that thread then answers the next batch). A decision is answered once, by exactly one
    batch; a failed ``act`` is raised in each game of its group."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waiting: list[Waiting] = []
        self._leading = False
        self.calls = 0  # act calls made (for tests and the benchmark's account)
        self.decisions = 0

    def act(self, policy, observation: np.ndarray, mask: np.ndarray) -> int:
        mine = Waiting(policy, observation, mask)
        with self._lock:
            self._waiting.append(mine)
            follow = self._leading
            self._leading = True
        if follow:
            mine.woken.wait()
            if mine.action is None and mine.error is None:
                follow = False  # handed the lead: mine is in the next batch
        if not follow:
            self._lead()
        if mine.error is not None:
            raise mine.error
        return mine.action

    def _lead(self) -> None:
        with self._lock:
            batch, self._waiting = self._waiting, []
        try:
            groups: dict[tuple, list[Waiting]] = {}
            for waiting in batch:
                groups.setdefault(batch_key(waiting.policy), []).append(waiting)
            for group in groups.values():
                self._answer(group)
        finally:  # whatever happened, no game is left waiting
            with self._lock:
                if self._waiting:
                    self._waiting[0].woken.set()  # the next leader (not answered: it takes the batch)
                else:
                    self._leading = False
            for waiting in batch:
                if waiting.action is None and waiting.error is None:
                    waiting.error = RuntimeError("the batch of this decision was not answered")
                waiting.woken.set()

    def _answer(self, group: list[Waiting]) -> None:
        try:
            observations = np.concatenate([waiting.observation for waiting in group])
            masks = np.concatenate([waiting.mask for waiting in group])
            actions = group[0].policy.act(observations, masks)
            self.calls += 1
            self.decisions += len(group)
            for waiting, action in zip(group, actions):
                waiting.action = int(action)
        except BaseException as error:  # every game of the group is told, then each raises it
            for waiting in group:
                waiting.error = error


# ---------------------------------------------------------------- search in worker processes


def search_spec(policy) -> dict | None:
    """The options a worker process makes ``policy``'s twin from (None: a player searched in the server): a
    ``SearchAgent`` over a blueprint a worker can load by name (``blueprint_name``), as ``agents.load("search")``
    makes it."""
    if type(policy) is not SearchAgent:
        return None
    blueprint = blueprint_name(policy.blueprint)
    if blueprint is None:
        return None
    return {"num_players": policy.num_players, "blueprint": blueprint, "belief": policy.belief_option,
            "worlds": policy.worlds, "rollout": policy.rollout, "gate": policy.gate,
            "correct_gate": policy.correct_gate, "rules": policy.rules,
            "evidence": policy.evidence}


def blueprint_name(blueprint) -> str | None:
    """The name ``agents.load`` makes the same blueprint from: ``"heuristic"`` with its default weights, a shipped
    greedy agent's name; None for any other."""
    if type(blueprint) is HeuristicAgent:
        default = np.array_equal(blueprint._weight_vector, heuristic_weights(blueprint.num_players, None))
        return "heuristic" if default else None
    if type(blueprint) is TrainedAgent and blueprint.deterministic:
        return next((name for name, path in SHIPPED.items() if path == blueprint.source), None)
    return None


def streams(policy: SearchAgent) -> list:
    """The random streams a search player draws from: its own, its blueprint's and, when another, its rollouts'."""
    owners = [policy, policy.blueprint] + ([policy._others] if policy._others is not policy.blueprint else [])
    return [owner.rng for owner in owners]


def stream_states(policy: SearchAgent) -> list[dict]:
    return [stream.bit_generator.state for stream in streams(policy)]


def set_stream_states(policy: SearchAgent, states: list[dict]) -> None:
    for stream, state in zip(streams(policy), states, strict=True):
        stream.bit_generator.state = state


MAX_TWINS = 16  # search players a worker keeps (one a table's player count and rules; the least recently used goes)
_twins: OrderedDict[str, SearchAgent] = OrderedDict()  # in a worker process: reused (its engines are big to make)


def twin(spec: dict) -> SearchAgent:
    """The worker's search player of ``spec`` (``search_spec``), made at its first decision."""
    key = repr(sorted(spec.items()))
    if key not in _twins:
        options = {name: value for name, value in spec.items() if name != "num_players"}
        _twins[key] = load("search", num_players=spec["num_players"], seed=0, **options)
        while len(_twins) > MAX_TWINS:
            _twins.popitem(last=False)
    _twins.move_to_end(key)
    return _twins[key]


def search_in_worker(spec: dict, states: list[dict], observation: np.ndarray, mask: np.ndarray) -> dict:
    """A worker process's side of one decision: the twin, given the game's player's streams, acts on the seat's
    observation; returns the action, the streams' states after it and what the decision changed in the player."""
    player = twin(spec)
    set_stream_states(player, states)
    decisions, changed = player.decisions, player.changed
    action = int(player.act(observation, mask)[0])
    searched = player.decisions != decisions
    return {"action": action, "states": stream_states(player), "pid": os.getpid(), "searched": searched,
            "last_search": player.last_search if searched else None, "changed": player.changed - changed}


def prepare_search() -> None:
    """Play the search player until it has searched once: its compiled functions are built then (about a minute
    on 2 cores the first time on a machine; later starts load them from numba's cache in a second or two)."""
    agent = load("search", num_players=2, seed=0)
    engine = VectorEngine(1, 2, seed=0, auto_reset=False)
    engine.reset(seed=0)
    while agent.last_search is None and int(engine.state.phase[0]) != kernel.OVER:
        engine.step(agent.act(engine.observe(), engine.legal_mask()))


def warm_worker() -> int:
    """A worker's first search (its compiled functions loaded from numba's cache); returns its process id."""
    prepare_search()
    return os.getpid()


class SearchWorkers:
    """``size`` worker processes searching for the live games (``concurrent.futures.ProcessPoolExecutor``, started at
    the first search or by ``warm``; spawned, not forked: the server runs threads). ``close`` ends them; a search
    asked for after that, or when a worker died, is made in the asking thread (the same move: the game's player is
    changed only by a finished search)."""

    def __init__(self, size: int):
        self.size = size
        self._pool: concurrent.futures.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()
        self._closed = False
        self.last_pid: int | None = None  # the worker that made the last search (tests read it)

    def _executor(self) -> concurrent.futures.ProcessPoolExecutor | None:
        with self._lock:
            if self._pool is None and not self._closed:
                self._pool = concurrent.futures.ProcessPoolExecutor(self.size, mp_context=multiprocessing.get_context("spawn"))
            return self._pool

    def warm(self) -> list[int]:
        """Start every worker and search once in each (a minute on a new machine, seconds later); their pids."""
        pool = self._executor()
        return [] if pool is None else sorted({future.result() for future in [pool.submit(warm_worker) for _ in range(self.size)]})

    def act(self, spec: dict, policy: SearchAgent, observation: np.ndarray, mask: np.ndarray) -> int | None:
        """The search player's action, searched in a worker; None when no worker can (closed, or a worker died)."""
        pool = self._executor()
        if pool is None:
            return None
        try:
            answer = pool.submit(search_in_worker, spec, stream_states(policy), observation, mask).result()
        except concurrent.futures.process.BrokenProcessPool:
            with self._lock:
                if self._pool is pool:
                    self._pool = None  # the next search starts a new pool
            pool.shutdown(wait=False, cancel_futures=True)
            return None
        set_stream_states(policy, answer["states"])
        if answer["searched"]:
            policy.decisions += 1
            policy.changed += answer["changed"]
            policy.last_search = answer["last_search"]
        self.last_pid = answer["pid"]
        return answer["action"]

    def close(self) -> None:
        """End the workers (a search under way finishes first); later searches run in the asking thread."""
        with self._lock:
            pool, self._pool, self._closed = self._pool, None, True
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class Acting:
    """Every agent decision of the live games (module docstring): greedy trained agents batched (``batcher``), the
    search player in ``search_workers`` worker processes (0: in the game's thread), other players in the game's
    thread."""

    def __init__(self, search_workers: int = 0):
        self.batcher = Batcher()
        self.search = SearchWorkers(search_workers) if search_workers > 0 else None

    def act(self, policy, observation: np.ndarray, mask: np.ndarray) -> int:
        if batch_key(policy) is not None:
            return self.batcher.act(policy, observation, mask)
        spec = None if self.search is None else search_spec(policy)
        if spec is not None:
            action = self.search.act(spec, policy, observation, mask)
            if action is not None:
                return action
        return int(policy.act(observation, mask)[0])

    def warm(self) -> None:
        if self.search is not None:
            self.search.warm()

    def close(self) -> None:
        if self.search is not None:
            self.search.close()
