"""Careless input gets a clear error naming what is wrong, and changes nothing.

Found by using the package as a new user would: an action of the wrong type
(``None`` for an agent still playing, a float, a bool, a string), ``step`` or
``last`` once the game is over, the engine stepped or read before ``reset``,
and player counts given as numpy integers or as nonsense.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

import hpuno_env
from hpuno_env import VectorEngine
from hpuno_env.options import check_num_players


def raw_view(env) -> dict:
    """Everything a raw env user can read, copied (to compare before and after a refused call)."""
    return copy.deepcopy({
        "game": env.game_state(),
        "agents": env.agents,
        "agent_selection": env.agent_selection,
        "rewards": env.rewards,
        "cumulative": env._cumulative_rewards,
        "terminations": env.terminations,
        "truncations": env.truncations,
        "infos": {agent: info["action_mask"].tolist() for agent, info in env.infos.items()},
        "observations": {agent: env.observe(agent)["observation"].tolist() for agent in env.possible_agents},
        "state": env.state().tolist(),
    })


def started_raw_env(num_players: int = 3, seed: int = 4):
    env = hpuno_env.raw_env(num_players=num_players)
    env.reset(seed=seed)
    return env


def legal_actions(env) -> np.ndarray:
    return np.flatnonzero(env.observe(env.agent_selection)["action_mask"])


def finish_game(env) -> None:
    """Play a short round to its end (legal plays, draws only when stuck), dead steps included."""
    for _agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        plays = legal[legal != hpuno_env.ACTION_LABELS.index("draw")]
        env.step(int((plays if len(plays) else legal)[0]))


# ------------------------------------------------------------ actions of the wrong type


def test_none_for_an_agent_still_playing_is_a_clear_type_error():
    env = started_raw_env()
    before = raw_view(env)
    with pytest.raises(TypeError, match=r"action must be an int .*got None.*only of an agent that is terminated or truncated"):
        env.step(None)
    assert raw_view(env) == before


@pytest.mark.parametrize("make_action", [
    lambda legal: 1.5,
    lambda legal: legal + 0.9,
    lambda legal: float(legal),
    lambda legal: True,
    lambda legal: False,
    lambda legal: np.True_,
    lambda legal: str(legal),
    lambda legal: "3",
    lambda legal: np.float32(legal),
    lambda legal: np.float64(2),
    lambda legal: np.array([legal]),
    lambda legal: [legal],
], ids=["1.5", "legal+0.9", "float(legal)", "True", "False", "np.True_", "str(legal)", "'3'", "np.float32",
        "np.float64", "1-element array", "list"])
def test_actions_that_are_not_integers_are_refused_not_rounded(make_action):
    env = started_raw_env()
    legal = int(legal_actions(env)[0])
    action = make_action(legal)
    before = raw_view(env)
    with pytest.raises(TypeError, match=r"action must be an int in \[0, 75\) for player_\d, got .* of type"):
        env.step(action)
    assert raw_view(env) == before


@pytest.mark.parametrize("convert", [int, np.int64, np.int32, np.uint8, np.array], ids=["int", "np.int64", "np.int32", "np.uint8", "0-d array"])
def test_integer_actions_of_every_kind_are_taken(convert):
    reference, env = started_raw_env(), started_raw_env()
    legal = int(legal_actions(env)[-1])
    reference.step(legal)
    env.step(convert(legal))
    assert raw_view(env) == raw_view(reference)


def test_an_integer_that_is_not_a_legal_action_is_still_a_value_error():
    env = started_raw_env()
    before = raw_view(env)
    for action in (-1, 75, np.int64(1000)):
        with pytest.raises(ValueError, match="illegal action"):
            env.step(action)
    assert raw_view(env) == before


# ------------------------------------------------------------ the game's start and end


def test_step_and_last_after_the_game_is_over_say_so_and_dead_steps_still_work():
    env = hpuno_env.raw_env(num_players=3, max_turns=30)
    env.reset(seed=2)
    finish_game(env)  # the dead steps with None remove every agent
    assert env.agents == []
    before = copy.deepcopy(env.game_state())
    for call in (lambda: env.step(None), lambda: env.step(0), lambda: env.last(), lambda: env.last(observe=False)):
        with pytest.raises(ValueError, match=r"after the game is over.*call reset\(\)"):
            call()
    assert env.game_state() == before
    env.reset(seed=3)  # and reset starts a new game
    assert env.agents == env.possible_agents and env.last()[2] is False


def test_step_and_last_before_reset_say_call_reset_first():
    env = hpuno_env.raw_env(num_players=2)
    for call in (lambda: env.step(0), lambda: env.last()):
        with pytest.raises(ValueError, match=r"before reset\(\): call reset\(\) first"):
            call()
    env.reset(seed=0)
    env.step(int(legal_actions(env)[0]))


def test_wrapped_env_keeps_pettingzoos_answers_at_the_end_and_ours_for_last():
    env = hpuno_env.env(num_players=2, max_turns=20)
    env.reset(seed=1)
    finish_game(env)
    env.step(None)  # PettingZoo's OrderEnforcingWrapper: a warning, nothing else
    with pytest.raises(ValueError, match="after the game is over"):
        env.last()


# ------------------------------------------------------------ the engine before reset


def engine_arrays(engine) -> list:
    return [array.copy() for array in engine.state]


def some_actions(engine) -> np.ndarray:
    """A legal action per game once the games are dealt (zeros before: refused anyway)."""
    try:
        return engine.legal_mask().argmax(axis=1)
    except ValueError:
        return np.zeros(engine.num_games, np.int64)


@pytest.mark.parametrize("call", [
    lambda engine: engine.step(some_actions(engine)),
    lambda engine: engine.step_observe(some_actions(engine)),
    lambda engine: engine.step(np.full(engine.num_games, -1), partial=True),
    lambda engine: engine.observe(),
    lambda engine: engine.legal_mask(),
    lambda engine: engine.state_vector(),
    lambda engine: engine.game_state(0),
], ids=["step", "step_observe", "partial step", "observe", "legal_mask", "state_vector", "game_state"])
def test_engine_used_before_reset_says_call_reset_first(call):
    engine = VectorEngine(num_games=3, num_players=2, seed=0)
    before = engine_arrays(engine)
    with pytest.raises(ValueError, match=r"before reset\(\): call reset\(\) first \(game\(s\) \[0, 1, 2\] not dealt yet\)"):
        call(engine)
    assert all((a == b).all() for a, b in zip(engine_arrays(engine), before))
    engine.reset(games=[0, 2])  # game 1 still never dealt
    with pytest.raises(ValueError, match=r"call reset\(\) first \(game\(s\) \[1\] not dealt yet\)"):
        call(engine)
    engine.reset(games=[1])
    call(engine)  # every game dealt: it works


# ------------------------------------------------------------ player counts


@pytest.mark.parametrize("num_players", [np.int64(4), np.int32(3), np.uint8(2), 10])
def test_numpy_integer_player_counts_are_accepted_everywhere(num_players):
    for make in (hpuno_env.env, hpuno_env.raw_env):
        env = make(num_players=num_players)
        env.reset(seed=0)
        assert env.possible_agents == [f"player_{i}" for i in range(int(num_players))]
        assert env.unwrapped.engine.num_players == int(num_players) and type(env.unwrapped.engine.num_players) is int
    engine = VectorEngine(num_games=2, num_players=num_players, seed=0)
    engine.reset()
    assert engine.observe().shape == (2, hpuno_env.observation_size(int(num_players)))
    assert check_num_players(num_players) == int(num_players) and type(check_num_players(num_players)) is int


@pytest.mark.parametrize("num_players", [True, np.True_, 4.0, np.float64(4), "4", None, 1, 0, -3, 11, np.int64(11)])
def test_bad_player_counts_are_a_value_error_naming_num_players(num_players):
    for make in (hpuno_env.env, hpuno_env.raw_env, VectorEngine, check_num_players):
        with pytest.raises(ValueError, match=r"num_players must be an int in \[2, 10\], got"):
            make(num_players=num_players) if make is not check_num_players else make(num_players)


# ------------------------------------------------------------ one strictness everywhere (hpuno_env._checks)


def dealt_engine(num_games: int = 3, **kwargs) -> VectorEngine:
    engine = VectorEngine(num_games=num_games, num_players=2, seed=0, **kwargs)
    engine.reset()
    return engine


@pytest.mark.parametrize("flag", ["False", "no", 0, 1, None, 1.0])
def test_flags_must_be_true_or_false(flag):
    with pytest.raises(ValueError, match=r"auto_reset must be True or False"):
        VectorEngine(num_games=2, num_players=2, auto_reset=flag)
    engine = dealt_engine()
    before = engine_arrays(engine)
    with pytest.raises(ValueError, match=r"partial must be True or False"):
        engine.step(engine.legal_mask().argmax(axis=1), partial=flag)
    assert all((a == b).all() for a, b in zip(engine_arrays(engine), before))


def test_numpy_bools_are_flags():
    engine = VectorEngine(num_games=2, num_players=2, seed=0, auto_reset=np.False_)
    engine.reset()
    engine.step(engine.legal_mask().argmax(axis=1), partial=np.True_)
    assert engine.auto_reset is False


@pytest.mark.parametrize("make_actions", [
    lambda legal: legal + 0.7,
    lambda legal: [str(a) for a in legal],
    lambda legal: legal.reshape(2, 2),
    lambda legal: legal.astype(bool),
], ids=["floats", "strings", "2x2", "bools"])
def test_vector_envs_refuse_actions_that_are_not_ints_of_the_right_shape(make_actions):
    from hpuno_env import HPUnoGymVectorEnv, HPUnoVecEnv

    for env in (HPUnoVecEnv(num_envs=4, num_players=2, seed=0), HPUnoGymVectorEnv(num_envs=4, num_players=2, seed=0)):
        env.reset()
        legal = env.batch.masks.argmax(axis=1)
        before = engine_arrays(env.batch.engine)
        with pytest.raises(ValueError, match=r"actions must be ints of shape \(4,\)"):
            if isinstance(env, HPUnoVecEnv):
                env.step_async(make_actions(legal))
                env.step_wait()
            else:
                env.step(make_actions(legal))
        assert all((a == b).all() for a, b in zip(engine_arrays(env.batch.engine), before))
        assert env.batch.broken is None


@pytest.mark.parametrize("games", [[0.7], [True], ["0"], [[0, 1]], [-1], [3]], ids=["0.7", "True", "'0'", "nested", "-1", "3"])
def test_reset_games_must_be_int_indices_in_range(games):
    engine = dealt_engine()
    before = engine_arrays(engine)
    with pytest.raises(ValueError, match=r"games must be .*indices in \[0, 3\)"):
        engine.reset(games=games)
    assert all((a == b).all() for a, b in zip(engine_arrays(engine), before))
    engine.reset(games=[np.int64(1)])
    engine.reset(games=np.array([], np.int64))
    engine.reset(games=[])


def test_rules_options_take_numpy_ints_and_bools_and_refuse_strings_and_floats():
    options = hpuno_env.RulesOptions(uno_penalty=np.int64(4), wd4_bluffing=np.bool_(False), max_turns=np.int32(100))
    assert options.uno_penalty == 4 and type(options.uno_penalty) is int
    assert options.wd4_bluffing is False and type(options.max_turns) is int
    engine = VectorEngine(num_games=1, num_players=2, target_score=np.int64(100))
    assert engine.options.as_dict()["target_score"] == 100
    for name, value in (("uno_penalty", "4"), ("uno_penalty", 4.0), ("uno_penalty", True), ("wd4_bluffing", 1),
                        ("wd4_bluffing", "false"), ("max_turns", np.float64(100))):
        with pytest.raises(ValueError, match=name):
            hpuno_env.RulesOptions(**{name: value})


@pytest.mark.parametrize("seed", [-1, 2**32, 2**40, "1", "3", 1.0, 1.5, True, [1, 2]])
def test_bad_seeds_are_refused_when_given(seed):
    """The engine, its worlds and the Gymnasium env take one kind of seed, checked the same way."""
    import gymnasium

    with pytest.raises(ValueError, match=r"seed must be None or an int in \[0, 2\*\*32\)"):
        VectorEngine(num_games=1, num_players=2, seed=seed)
    engine = dealt_engine()
    before = engine_arrays(engine)
    with pytest.raises(ValueError, match=r"seed must be None or an int"):
        engine.reset(seed=seed)
    with pytest.raises(ValueError, match=r"seed must be None or an int"):
        engine.determinize(0, 2, seed=seed)
    assert all((a == b).all() for a, b in zip(engine_arrays(engine), before))
    with pytest.raises(ValueError, match=r"seed must be None or an int"):
        gymnasium.make("hpuno/HPUno-v1").reset(seed=seed)


def test_reset_options_must_be_a_dict():
    engine = dealt_engine()
    before = engine_arrays(engine)
    for options in ("deck", ["deck"], 3):
        with pytest.raises(ValueError, match=r"options must be a dict or None"):
            engine.reset(options=options)
        with pytest.raises(ValueError, match=r"options must be a dict or None"):
            hpuno_env.env(num_players=2).reset(options=options)
    assert all((a == b).all() for a, b in zip(engine_arrays(engine), before))


def test_the_gymnasium_vector_env_refuses_options_it_would_ignore():
    import gymnasium

    envs = gymnasium.make_vec("hpuno/HPUno-v1", num_envs=2, vectorization_mode="vector_entry_point")
    with pytest.raises(ValueError, match=r"options takes no keys here, got \['deck'\]"):
        envs.reset(options={"deck": "x"})
    assert envs.reset(seed=3)[0].shape[0] == 2


def test_copies_and_rollouts_check_their_game_lists_and_policies():
    engine = dealt_engine()
    with pytest.raises(ValueError, match="games is empty"):
        engine.clone(games=[])
    with pytest.raises(ValueError, match=r"games must be ints"):
        engine.clone(games=[[0]])  # a 2-D list is refused, not flattened
    for policies in (None, 3, "greedy", ["heuristic"]):
        with pytest.raises(ValueError, match="policies must be one of"):
            engine.rollout(policies)
    winners, decisions = engine.rollout(games=[])
    assert winners.shape == decisions.shape == (0,)


def test_a_view_no_game_shows_is_refused_by_load_view():
    engine = dealt_engine()
    layout = hpuno_env.observation_layout(engine.num_players)
    row = engine.observe()[0]
    for field, value, message in (("top_card", 0, "top_card must name exactly one card"),
                                  ("discard_counts", 0, "the top card is not among the discard pile"),
                                  ("other_hand_sizes", -3, "negative entries")):
        bad = row.copy()
        bad[layout[field]] = value
        with pytest.raises(ValueError, match=message):
            engine.load_view(0, bad)


@pytest.mark.parametrize("game", [-1, 3, 1.0, True, "0"])
def test_reading_a_game_checks_its_index(game):
    engine = dealt_engine()
    for read in (engine.game_state, engine.events, engine.round_deck, engine.last_reshuffle, engine.generator_state):
        with pytest.raises(ValueError, match=r"game must be an index in \[0, 3\)"):
            read(game)
    assert engine.game_state(np.int64(2)) == engine.game_state(2)


def test_reset_with_a_seed_and_games_reseeds_only_those_games():
    engine = dealt_engine(num_games=3)
    for _ in range(5):
        engine.step(engine.legal_mask().argmax(axis=1))
    untouched = [engine.generator_state(g) for g in (1, 2)]
    engine.reset(seed=9, games=[0])
    assert [engine.generator_state(g) for g in (1, 2)] == untouched
    fresh = VectorEngine(num_games=3, num_players=2)
    fresh.reset(seed=9)
    assert engine.game_state(0) == fresh.game_state(0)  # game 0 got the stream seed 9 gives game 0


def test_agents_and_evaluation_share_the_checks():
    import agents
    from agents.evaluation.rounds import win_rate

    assert agents.load("random", num_players=2, seed=np.int64(3)).rng.integers(100) == agents.load("random", num_players=2, seed=3).rng.integers(100)
    for seed in ("3", 3.0, -1):
        with pytest.raises(ValueError, match="seed must be"):
            agents.load("heuristic", num_players=2, seed=seed)
    player = agents.load("random", num_players=2, seed=0)
    for rounds in (10.0, "10", True):
        with pytest.raises(ValueError, match="rounds must be a positive int"):
            win_rate(player, player, 2, rounds=rounds, seed=0)
    assert win_rate(player, player, 2, rounds=np.int64(4), seed=np.int64(0))["rounds"] == 4
