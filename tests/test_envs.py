"""The PettingZoo AEC env and the SB3 / Gymnasium vector envs over the engine.

PettingZoo's api_test warns, for every env with a dict observation, that
"Observation space for each agent probably should be gymnasium.spaces.box or
gymnasium.spaces.discrete" and "Observation is not a NumPy array": those come
from its hard-coded expectations (its own classic envs trigger them too) and
are filtered here; no other warning is.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from pettingzoo.test import api_test, performance_benchmark, render_test, seed_test

import hpuno_env
from hpuno_env import ACTION_LABELS, HPUnoGymVectorEnv, HPUnoVecEnv, SeatBatch, VectorEngine

PETTINGZOO_DICT_OBS_WARNINGS = [
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Observation is not a NumPy array:UserWarning",
]


def first_legal(observation) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


# ------------------------------------------------------------------ PettingZoo AEC


@pytest.mark.filterwarnings(*PETTINGZOO_DICT_OBS_WARNINGS)
@pytest.mark.parametrize("num_players", [2, 3, 4, 7, 10])
def test_pettingzoo_api(num_players):
    for seed in range(3):
        env = hpuno_env.env(num_players=num_players)
        env.reset(seed=seed)
        api_test(env, num_cycles=400)


@pytest.mark.filterwarnings(*PETTINGZOO_DICT_OBS_WARNINGS)
def test_pettingzoo_api_with_short_rounds_crosses_game_ends():
    # max_turns=30 makes api_test's cycles cross several truncations and resets.
    api_test(hpuno_env.env(num_players=3, max_turns=30), num_cycles=400)


def test_pettingzoo_seed_test():
    seed_test(lambda: hpuno_env.env(num_players=4), num_cycles=300)


def test_pettingzoo_render_test(capsys):
    render_test(lambda render_mode=None: hpuno_env.env(num_players=3, render_mode=render_mode))
    assert "top card" in capsys.readouterr().out  # "human" printed the table


def test_performance_benchmark_runs(capsys):
    performance_benchmark(hpuno_env.env(num_players=2))
    assert "turns per second" in capsys.readouterr().out


def test_metadata_and_spaces():
    env = hpuno_env.raw_env(num_players=4)
    assert env.metadata["name"] == "hpuno_v0" and env.metadata["is_parallelizable"] is False
    assert env.observation_space("player_1") is env.observation_space("player_1")
    assert env.action_space("player_0").n == len(ACTION_LABELS) == 75
    env.reset(seed=3)
    assert env.state().shape == env.state_space.shape and env.state_space.contains(env.state())
    observation = env.observe(env.agent_selection)
    assert env.observation_space(env.agent_selection).contains(observation)
    assert (env.infos[env.agent_selection]["action_mask"] == observation["action_mask"]).all()


def test_bad_options_raise_value_error_naming_them():
    with pytest.raises(ValueError, match="uno_penalty"):
        hpuno_env.env(uno_penalty=-1)
    with pytest.raises(ValueError, match="no_such_rule"):
        hpuno_env.raw_env(no_such_rule=1)
    with pytest.raises(ValueError, match="num_players"):
        hpuno_env.raw_env(num_players=11)
    with pytest.raises(ValueError, match="render_mode"):
        hpuno_env.raw_env(render_mode="3d")


def test_reset_ignores_unknown_option_keys_and_uses_deck_and_dealer():
    env = hpuno_env.raw_env(num_players=2)
    env.reset(seed=0, options={"something_pettingzoo_passes": 1})
    engine = VectorEngine(num_players=2, seed=5)
    engine.reset()
    deck = engine.round_deck(0)
    env.reset(options={"deck": deck, "dealer": 1})
    state = env.game_state()
    assert state["dealer"] == "player_1"
    assert state["hands"]["player_0"] == sorted(deck[0:14:2], key=hpuno_env.CARD_LABELS.index)
    json.dumps(state)


def test_raw_env_illegal_action_raises_and_changes_nothing():
    env = hpuno_env.raw_env(num_players=3)
    env.reset(seed=1)
    before = env.game_state()
    illegal = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(ValueError, match="illegal action"):
        env.step(illegal)
    assert env.game_state() == before


def test_wrapped_env_illegal_action_ends_game_with_penalty():
    env = hpuno_env.env(num_players=3)
    env.reset(seed=1)
    agent = env.agent_selection
    illegal = int(np.flatnonzero(env.observe(agent)["action_mask"] == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env.step(illegal)
    assert all(env.terminations.values())
    assert env._cumulative_rewards[agent] == -1


def test_aec_and_engine_give_the_same_trajectory():
    env = hpuno_env.raw_env(num_players=4)
    env.reset(seed=11)
    engine = VectorEngine(num_games=1, num_players=4, seed=11, auto_reset=False)
    engine.reset()
    steps = 0
    while env.agents and steps < 3000:
        assert env.game_state() == engine.game_state(0)
        observation = env.observe(env.agent_selection)
        assert (observation["observation"] == engine.observe()[0]).all()
        assert (observation["action_mask"].astype(bool) == engine.legal_mask()[0]).all()
        action = first_legal(observation) if steps % 3 else int(np.flatnonzero(observation["action_mask"])[-1])
        _, terminated, truncated = engine.step(np.array([action]))
        env.step(action)
        steps += 1
        if terminated[0] or truncated[0]:
            break
    assert env.game_state() == engine.game_state(0)


def play_round(env, policy, seed):
    env.reset(seed=seed)
    for agent in env.agent_iter():
        observation, reward, terminated, truncated, _ = env.last()
        env.step(None if terminated or truncated else policy(observation))
    return env


def test_every_agent_gets_its_final_reward_even_when_an_opponent_ends_the_round():
    seen_winner_and_losers = False
    for seed in range(5):
        env = hpuno_env.env(num_players=3)
        finals = {}
        env.reset(seed=seed)
        for agent in env.agent_iter():
            observation, reward, terminated, truncated, _ = env.last()
            if terminated or truncated:
                finals[agent] = reward
                env.step(None)
            else:
                # Call UNO when allowed, else play the first playable card, draw only when stuck.
                mask = observation["action_mask"].copy()
                mask[ACTION_LABELS.index("draw")] = mask[ACTION_LABELS.index("draw")] and mask.sum() == 1
                uno = ACTION_LABELS.index("uno")
                env.step(uno if mask[uno] else int(np.flatnonzero(mask)[0]))
        assert set(finals) == {"player_0", "player_1", "player_2"}
        if sorted(finals.values()) == [-1, -1, 1]:
            seen_winner_and_losers = True
    assert seen_winner_and_losers


def test_ansi_render_tells_the_story_and_rgb_is_a_picture():
    env = hpuno_env.raw_env(num_players=3, render_mode="ansi")
    env.reset(seed=2)
    for _ in range(30):
        if not env.agents:
            break
        env.step(first_legal(env.observe(env.agent_selection)))
    text = env.render()
    assert "top card" in text and "last events" in text and "played" in text
    picture = hpuno_env.raw_env(num_players=3, render_mode="rgb_array")
    picture.reset(seed=2)
    image = picture.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3 and image.std() > 0


# ------------------------------------------------------------------ training envs


def test_seat_batch_rewards_reach_the_learner_when_an_opponent_ends_the_round():
    batch = SeatBatch(num_envs=32, num_players=2, seed=0, max_turns=400)
    observations, masks = batch.reset()
    total_done, nonzero_on_done = 0, 0
    for _ in range(600):
        actions = (np.random.default_rng(0).random(masks.shape) * masks).argmax(axis=1)
        observations, masks, rewards, terminated, truncated, _ = batch.step(actions)
        total_done += terminated.sum()
        nonzero_on_done += (rewards[terminated] != 0).sum()
        assert (rewards[~(terminated | truncated)] == 0).all()
        assert masks.any(axis=1).all() and (batch.engine.current_player == batch.seats).all()
    assert total_done > 0 and nonzero_on_done == total_done


def test_seat_batch_wins_and_losses_balance_against_a_copy_of_itself():
    # Learner (random seat) and opponent play the same heuristic: about half the rounds each.
    import agents

    batch = SeatBatch(num_envs=64, num_players=2, learner_seat="random", seed=3, opponent=agents.load("heuristic", 2, seed=1))
    learner = agents.load("heuristic", 2, seed=2)
    observations, masks = batch.reset()
    wins = games = 0
    for _ in range(1500):
        observations, masks, rewards, terminated, _, _ = batch.step(learner.act(observations, masks))
        wins += (rewards[terminated] > 0).sum()
        games += terminated.sum()
    assert games > 100 and 0.35 < wins / games < 0.65


def test_opponent_can_be_swapped():
    import agents

    env = HPUnoVecEnv(num_envs=4, num_players=2, seed=0)
    env.set_opponent(agents.load("heuristic", 2))
    assert isinstance(env.batch.opponent, agents.HeuristicAgent)
    with pytest.raises(ValueError):
        env.set_opponent(object())


def test_sb3_vec_env_conventions():
    env = HPUnoVecEnv(num_envs=8, num_players=3, seed=0, max_turns=50)
    observations = env.reset()
    assert observations.shape == (8, env.observation_space.shape[0]) and observations.dtype == np.int8
    saw_terminal = saw_truncation = False
    for _ in range(300):
        masks = env.action_masks()
        env.step_async((np.random.random(masks.shape) * masks).argmax(axis=1))
        observations, rewards, dones, infos = env.step_wait()
        assert rewards.dtype == np.float32 and dones.dtype == bool
        for done, info in zip(dones, infos):
            if done:
                saw_terminal = True
                assert info["terminal_observation"].shape == observations.shape[1:]
                saw_truncation |= info["TimeLimit.truncated"]
    assert saw_terminal and saw_truncation
    assert np.stack(env.env_method("action_masks")).shape == (8, 75)
    assert env.has_attr("action_masks") and env.get_attr("num_envs") == [8] * 8
    assert env.env_is_wrapped(object) == [False] * 8


def test_sb3_vec_env_seeding_reproduces_games():
    def rollout(seed):
        env = HPUnoVecEnv(num_envs=4, num_players=2)
        env.seed(seed)
        first = env.reset()
        trace = [first]
        for step in range(50):
            masks = env.action_masks()
            env.step_async(masks.argmax(axis=1))
            trace.append(env.step_wait()[0])
        return np.stack(trace)

    assert (rollout(7) == rollout(7)).all()
    assert not (rollout(7) == rollout(8)).all()


def test_maskable_ppo_trains_on_the_vec_env():
    from sb3_contrib import MaskablePPO

    env = HPUnoVecEnv(num_envs=16, num_players=2, seed=0)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, n_epochs=2, seed=0, verbose=0)
    model.learn(2048)
    assert model.num_timesteps >= 2048


def test_gymnasium_vector_env():
    env = HPUnoGymVectorEnv(num_envs=6, num_players=4, seed=0, learner_seat="random", max_turns=40)
    assert env.metadata["autoreset_mode"].name == "SAME_STEP"
    observations, infos = env.reset(seed=5)
    assert env.observation_space.contains(observations)
    saw_final = False
    for _ in range(200):
        masks = infos["action_mask"]
        actions = (np.random.random(masks.shape) * masks).argmax(axis=1)
        assert env.action_space.contains(actions)
        observations, rewards, terminated, truncated, infos = env.step(actions)
        assert observations.shape == (6, env.single_observation_space.shape[0])
        if "final_obs" in infos:
            saw_final = True
            assert infos["_final_obs"].tolist() == (terminated | truncated).tolist()
    assert saw_final


def test_registered_with_pettingzoo():
    import pettingzoo

    env = pettingzoo.make("aec", "hpuno/hpuno-v0", num_players=3)
    env.reset(seed=0)
    assert env.unwrapped.metadata["name"] == "hpuno_v0" and len(env.agents) == 3
