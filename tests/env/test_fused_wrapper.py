"""``hpuno_env.env()`` (one ``FusedClassicWrapper``) behaves as PettingZoo's three stock classic wrappers do.

The stock stack is built here the way ``env()`` used to build it::

    OrderEnforcingWrapper(AssertOutOfBoundsWrapper(TerminateIllegalWrapper(raw_env(n), illegal_reward=-1)))

Random traces (2, 3 and 4 players, many seeds, some with short ``max_turns`` so
rounds are truncated, some rendering as text) drive both envs with the same calls: legal, illegal and
out-of-range actions, actions of the wrong type, ``None`` for live and finished
agents, ``last``, ``observe``, ``state``, ``render``, attribute reads,
``agent_iter`` iterators, calls before ``reset`` and after the game is over,
and resets. After every call the test compares the call's outcome (return
value, or exception type and message), the warnings it emitted (PettingZoo's
``EnvLogger`` queue and Python warnings), and the env as a user sees it
(``agents``, ``agent_selection``, ``rewards``, ``_cumulative_rewards``,
``terminations``, ``truncations``, ``infos``, the acting agent's observation
and ``game_state()``). Values are compared with their types (``0`` is not
``0.0``) and arrays with their dtypes.

The one intended difference: ``last()`` after every agent has finished raises
the raw env's clear ``ValueError`` ("the game is over ... call reset()") where
the stock stack fails with ``KeyError``.

A coverage count at the end makes sure the traces reached every kind of event
(illegal-move terminations, natural ends, truncations, dead steps, order errors).
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np
import pytest
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

import hpuno_env
from hpuno_env import ACTION_LABELS
from hpuno_env.wrappers import FusedClassicWrapper

NUM_ACTIONS = len(ACTION_LABELS)
DRAW = ACTION_LABELS.index("draw")
ATTRIBUTES = ("agents", "agent_selection", "rewards", "terminations", "truncations", "infos",
              "num_agents", "max_num_agents", "possible_agents", "_cumulative_rewards", "render_mode", "_skip_agent_selection")


def stock_env(num_players: int, **options):
    raw = hpuno_env.raw_env(num_players=num_players, **options)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)))


def snapshot(value):
    """A comparable form of a value that keeps types: arrays by dtype, shape and bytes, dicts in order."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return ("dict", [(key, snapshot(item)) for key, item in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [snapshot(item) for item in value])
    if value is None or isinstance(value, (bool, int, float, str, np.generic)):
        return (type(value).__name__, value)
    # agent_iter's iterable: compared by the PettingZoo class it is (the fused env's is a subclass)
    return ("object", next(c.__name__ for c in type(value).__mro__ if c.__module__.startswith(("pettingzoo", "builtins"))))


def outcome(call):
    """(result snapshot or exception type and message, EnvLogger messages, Python warnings) of call()."""
    EnvLogger.flush()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returned", snapshot(call()))
        except Exception as error:  # every exception is part of the behaviour compared
            result = ("raised", type(error).__name__, str(error))
    return result, list(EnvLogger.mqueue), [(w.category.__name__, str(w.message)) for w in caught]


def visible_state(env):
    """What a user can read from the env, each read as an outcome (a read before reset raises)."""
    state = {name: outcome(lambda name=name: getattr(env, name)) for name in ATTRIBUTES}
    raw = env.unwrapped
    if raw.agents:
        state["observation"] = outcome(lambda: raw.observe(raw.agent_selection))  # unwrapped: no wrapper bookkeeping
    state["game_state"] = outcome(raw.game_state)
    # read from the raw env: the wrappers refuse private names (ATTRIBUTES checks that they do alike)
    state["skip_agent_selection"] = outcome(lambda: getattr(raw, "_skip_agent_selection", "never set"))
    return state


class Trace:
    """Random calls applied to the stock-wrapped and the fused env alike, compared after each."""

    def __init__(self, num_players: int, seed: int, options: dict):
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.stock = stock_env(num_players, **options)
        self.fused = hpuno_env.env(num_players=num_players, **options)
        self.iterators = None  # (stock iterator, fused iterator) from the last agent_iter call
        self.coverage = Counter()
        # how often a live agent's step is not a legal action: rarely in some traces, so that rounds end by a win
        self.mischief = float(self.rng.choice([0.005, 0.05, 0.3]))

    def choose_action(self):
        """An action for the agent to act, of a randomly chosen kind, from the stock env's state."""
        raw = self.stock.unwrapped
        if not raw.agents:
            return int(self.rng.integers(-2, NUM_ACTIONS + 2)), "after_game"
        agent = raw.agent_selection
        if raw.terminations[agent] or raw.truncations[agent]:
            kind = self.rng.choice(["none", "none", "none", "int", "weird"])
            return {"none": None, "int": int(self.rng.integers(NUM_ACTIONS)), "weird": 1.5}[kind], f"dead_{kind}"
        mask = raw.observe(agent)["action_mask"]
        legal = np.flatnonzero(mask)
        kind = "legal" if self.rng.random() > self.mischief else self.rng.choice(["illegal", "out_of_range", "none", "weird", "numpy"])
        if kind == "legal":
            plays = legal[legal != DRAW]  # lean towards playing, so rounds end by a win within the trace
            pool = plays if len(plays) and self.rng.random() < 0.9 else legal
            return int(self.rng.choice(pool)), kind
        if kind == "illegal":
            return int(self.rng.choice(np.flatnonzero(mask == 0))), kind
        if kind == "out_of_range":
            return int(self.rng.choice([-1, NUM_ACTIONS, 1000])), kind
        if kind == "none":
            return None, kind
        first = int(legal[0])
        if kind == "numpy":
            return [np.int64(first), np.int32(first), np.array(first), np.uint8(first)][self.rng.integers(4)], kind
        weird = [True, False, first + 0.9, float(first), "3", np.float32(first), np.array([first]), [first]]
        return weird[self.rng.integers(len(weird))], kind

    def random_call(self):
        """(name, call on an env) of a randomly chosen kind: mostly steps, a reset now and then
        (often once the game is over)."""
        game_over = not self.stock.unwrapped.agents
        if self.rng.random() < (0.3 if game_over else 0.01):
            seed = int(self.rng.integers(1 << 30))
            options = {"unknown_key": 1} if self.rng.random() < 0.2 else None
            return "reset", lambda env: env.reset(seed=seed, options=options)
        roll = self.rng.random()
        if roll < 0.15 and self.iterators is not None:
            return "next", None
        if roll < 0.30:
            observe = bool(self.rng.random() < 0.8)
            return "last", lambda env: env.last(observe)
        if roll < 0.34:
            agent = f"player_{self.rng.integers(self.stock.unwrapped.engine.num_players)}"
            return "observe", lambda env: env.observe(agent)
        if roll < 0.35:
            return "state", lambda env: env.state()
        if roll < 0.355:
            return "render", lambda env: env.render()
        if roll < 0.37:
            name = ATTRIBUTES[self.rng.integers(len(ATTRIBUTES))]
            return f"attribute:{name}", lambda env: getattr(env, name)
        if roll < 0.39:
            max_iter = int(self.rng.integers(1, 6))
            return "agent_iter", lambda env: env.agent_iter(max_iter)
        action, kind = self.choose_action()
        return f"step:{kind}", lambda env: env.step(action)

    def compare(self, name: str, call) -> None:
        if name == "next":
            stock_result, fused_result = (outcome(lambda it=it: next(it)) for it in self.iterators)
        else:
            made = []  # what the call returned in each env: agent_iter's iterables, iterated in step by "next"

            def keep(env):
                made.append(call(env))
                return made[-1]

            stock_result, fused_result = outcome(lambda: keep(self.stock)), outcome(lambda: keep(self.fused))
            if name == "agent_iter" and len(made) == 2:
                self.iterators = (iter(made[0]), iter(made[1]))
        if name == "last" and stock_result[0][:2] == ("raised", "KeyError") and not self.stock.unwrapped.agents:
            # the intended difference: a clear error instead of KeyError once every agent has finished
            assert fused_result[0][:2] == ("raised", "ValueError") and "game is over" in fused_result[0][2], fused_result
            assert stock_result[1:] == fused_result[1:]
            self.coverage["last_after_game"] += 1
        else:
            assert stock_result == fused_result, (self.seed, name, stock_result, fused_result)
        assert visible_state(self.stock) == visible_state(self.fused), (self.seed, name)
        self.count(name, stock_result)

    def count(self, name: str, result) -> None:
        self.coverage[name.split(":")[0]] += 1
        if result[0][0] == "raised":
            self.coverage[f"raised {result[0][1]}"] += 1
        for message in result[1]:
            self.coverage["illegal move warning" if "Illegal move" in message else "step after end warning"] += 1
        raw = self.stock.unwrapped
        if raw.agents and name.startswith("step"):
            flags = (raw.terminations[raw.agent_selection], raw.truncations[raw.agent_selection])
            self.coverage[{(True, True): "illegal end", (True, False): "terminated", (False, True): "truncated"}.get(flags, "live")] += 1

    def run(self, calls: int) -> Counter:
        # A few calls before any reset: PettingZoo's order errors.
        for _ in range(int(self.rng.integers(0, 4))):
            name, call = self.random_call()
            if name != "next":
                self.compare(name, call)
        self.compare("reset", lambda env: env.reset(seed=self.seed))
        for _ in range(calls):
            name, call = self.random_call()
            self.compare(name, call)
        return self.coverage


@pytest.mark.parametrize("num_players", [2, 3, 4])
def test_fused_wrapper_matches_the_stock_wrappers_on_random_traces(num_players):
    coverage = Counter()
    for seed in range(12):
        options = {"max_turns": 40} if seed % 3 == 0 else {"render_mode": "ansi"} if seed % 3 == 1 else {}
        coverage += Trace(num_players, 1000 * num_players + seed, options).run(400)
    for needed in ("illegal end", "terminated", "truncated", "illegal move warning", "step after end warning",
                   "last_after_game", "raised AssertionError", "raised AttributeError", "raised ValueError", "next"):
        assert coverage[needed] > 0, (needed, coverage)


def test_env_is_the_fused_wrapper_and_looks_like_a_pettingzoo_wrapped_env():
    env = hpuno_env.env(num_players=3)
    assert isinstance(env, FusedClassicWrapper) and isinstance(env, wrappers.OrderEnforcingWrapper)
    assert isinstance(env.unwrapped, hpuno_env.raw_env)
    assert str(env) == str(stock_env(3)) == "hpuno_v1"
    env.reset(seed=0)
    assert env.state().shape == env.unwrapped.state_space.shape
    assert env.action_space("player_0").n == NUM_ACTIONS
