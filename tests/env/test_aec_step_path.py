"""The AEC env's step path: what each decision costs in calls, and what it must keep doing.

``benchmarks/bench_envs.py`` times the loop users write against RLCard; timings
depend on the machine, so the guard here counts instead: the Python function
calls and built-in calls that one decision of that loop makes inside the
environment (hpuno_env and PettingZoo code and what it calls). The rest checks
what the short path must keep: the engine's trajectory with rewards paid in the
middle of a match and truncated rounds, arrays that no later step changes, the
seeded streams of one game, and a subclass's own ``step``.
"""

from __future__ import annotations

import copy
import pickle
import sys
from collections import Counter

import numpy as np
import pytest

import hpuno_env
from hpuno_env import ACTION_LABELS, VectorEngine
from hpuno_env.wrappers import FusedClassicWrapper

# One decision of the user loop (agent_iter, last, step of a numpy integer) in env(): the iterator's
# __next__, the wrapper's and raw env's last and observe, the wrapper's step, the raw env's legal
# step, the engine's one-game step and the choice of the next agent: 8 Python calls.
MAX_PYTHON_CALLS_PER_DECISION = 9
MAX_BUILTIN_CALLS_PER_DECISION = 9
DRAW = ACTION_LABELS.index("draw")


def user_loop(env, rng, decisions_wanted: int) -> int:
    """The loop users write, over whole games, until at least decisions_wanted decisions."""
    decisions, game = 0, 0
    while decisions < decisions_wanted:
        env.reset(seed=100 + game)
        game += 1
        for _agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(observation["action_mask"])
                action = legal[rng.integers(len(legal))]
                decisions += 1
            env.step(action)
    return decisions


def calls_inside_the_env(run) -> tuple[int, Counter]:
    """(decisions, calls by kind) made by run() inside the env: calls whose stack, up to run's
    caller, passes through hpuno_env or PettingZoo code (the user's own numpy calls are not counted)."""
    top = sys._getframe()
    calls: Counter = Counter()

    def inside(frame) -> bool:
        while frame is not None and frame is not top:
            name = frame.f_code.co_filename
            if "hpuno_env" in name or "pettingzoo" in name:
                return True
            frame = frame.f_back
        return False

    def profile(frame, event, arg):
        if event in ("call", "c_call") and inside(frame):
            calls[event] += 1

    sys.setprofile(profile)
    try:
        decisions = run()
    finally:
        sys.setprofile(None)
    return decisions, calls


@pytest.mark.parametrize("num_players", [2, 4])
def test_a_decision_of_the_user_loop_makes_few_calls(num_players):
    env = hpuno_env.env(num_players=num_players, max_turns=400)
    user_loop(env, np.random.default_rng(0), 1)  # the first calls load the compiled kernel
    decisions, calls = calls_inside_the_env(lambda: user_loop(env, np.random.default_rng(1), 3000))
    python_calls, builtin_calls = calls["call"] / decisions, calls["c_call"] / decisions
    assert python_calls <= MAX_PYTHON_CALLS_PER_DECISION, f"{python_calls:.2f} Python calls per decision"
    assert builtin_calls <= MAX_BUILTIN_CALLS_PER_DECISION, f"{builtin_calls:.2f} built-in calls per decision"


@pytest.mark.parametrize("rules", [
    {"episode": "match", "reward": "points"},
    {"episode": "match", "reward": "win"},
    {"max_turns": 30},
    {},
])
def test_the_aec_env_follows_the_engine_step_by_step(rules):
    """Observations, masks, rewards (paid at every round's end in a points match), cumulative
    rewards and the end flags, against a one-game engine stepped with the same actions."""
    num_players = 3
    rng = np.random.default_rng(5)
    paid_in_a_match = False
    for seed in range(3):
        env = hpuno_env.raw_env(num_players=num_players, **rules)
        env.reset(seed=seed)
        engine = VectorEngine(num_games=1, num_players=num_players, seed=seed, auto_reset=False, **rules)
        engine.reset()
        cumulative = dict.fromkeys(env.possible_agents, 0.0)
        paid_before_the_end = False
        while True:
            agent = env.agent_selection
            observation = env.observe(agent)
            assert (observation["observation"] == engine.observe()[0]).all()
            assert observation["action_mask"].dtype == np.int8
            assert (observation["action_mask"].astype(bool) == engine.legal_mask()[0]).all()
            assert env.infos[agent]["action_mask"] is observation["action_mask"]
            assert env._cumulative_rewards == cumulative
            legal = np.flatnonzero(observation["action_mask"])
            playing = legal[legal != DRAW]  # drawing only when stuck keeps rounds short
            action = int(rng.choice(playing if len(playing) else legal))
            rewards, terminated, truncated = engine.step(np.array([action]))
            env.step(action)
            expected = {name: float(rewards[0, seat]) for seat, name in enumerate(env.possible_agents)}
            assert env.rewards == expected
            assert all(type(value) is float for value in env.rewards.values())
            cumulative[agent] = 0.0
            for name, value in expected.items():
                cumulative[name] += value
            assert env.terminations == dict.fromkeys(env.possible_agents, bool(terminated[0]))
            assert env.truncations == dict.fromkeys(env.possible_agents, bool(truncated[0]))
            if terminated[0] or truncated[0]:
                assert env._cumulative_rewards == cumulative
                break
            paid_before_the_end |= any(expected.values())
        paid_in_a_match |= paid_before_the_end
    assert paid_in_a_match == (rules.get("reward") == "points"), "a points match pays each round's end, no other game does"


def test_no_step_changes_an_array_an_earlier_step_returned():
    env = hpuno_env.env(num_players=2)
    env.reset(seed=3)
    kept = []
    for _agent in env.agent_iter(max_iter=400):
        observation, _, termination, truncation, info = env.last()
        kept.append((observation["observation"], observation["action_mask"],
                     observation["observation"].tobytes(), observation["action_mask"].tobytes()))
        env.step(None if termination or truncation else int(np.flatnonzero(observation["action_mask"])[0]))
    assert len({id(obs) for obs, *_ in kept}) == len(kept)
    for obs, mask, obs_bytes, mask_bytes in kept:
        assert obs.tobytes() == obs_bytes and mask.tobytes() == mask_bytes


def test_a_one_game_engine_seeds_game_0_as_a_batch_does():
    for seed in (0, 1, 12345, 2**32 - 1):
        one = VectorEngine(num_games=1, num_players=2, seed=seed)
        one.reset()
        batch = VectorEngine(num_games=3, num_players=2, seed=seed)
        batch.reset()
        assert one.generator_state(0) == batch.generator_state(0)
        one.reset(seed=seed + 1 if seed < 2**32 - 1 else 0)
        assert one.generator_state(0) != batch.generator_state(0)


def test_a_subclass_step_runs_under_the_wrapper():
    class CountingEnv(hpuno_env.raw_env):
        steps = 0

        def step(self, action):
            type(self).steps += 1
            super().step(action)

    env = FusedClassicWrapper(CountingEnv(num_players=2), illegal_reward=-1)
    env.reset(seed=0)
    for _ in range(20):
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert CountingEnv.steps == 20
    plain = hpuno_env.env(num_players=2)
    assert plain._play_if_legal is not None  # the stock raw env takes the short path


def test_copies_of_an_env_play_on_as_the_original_does():
    """A deep copy and a pickled copy, stepped with the original's actions, see what it sees."""
    env = hpuno_env.env(num_players=3)
    env.reset(seed=4)
    for _ in range(10):
        env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[-1]))
    twins = [copy.deepcopy(env), pickle.loads(pickle.dumps(env))]
    for step in range(60):
        observation, *_ = env.last()
        for twin in twins:
            seen, *_ = twin.last()
            assert twin.agent_selection == env.agent_selection
            assert seen["observation"].tobytes() == observation["observation"].tobytes(), step
            assert seen["action_mask"].tobytes() == observation["action_mask"].tobytes(), step
        legal = np.flatnonzero(observation["action_mask"])
        action = int(legal[step % len(legal)])
        for each in [env, *twins]:
            each.step(action)
