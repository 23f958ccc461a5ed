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
    assert env.metadata["name"] == "hpuno_v1" and env.metadata["is_parallelizable"] is False
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
    for _agent in env.agent_iter():
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


def history_of(text: str) -> list[str]:
    return text.split("last events:")[1].splitlines()[1:] if "last events:" in text else []


@pytest.mark.parametrize("rules", [{}, {"draw_until_playable": True}])
def test_a_render_names_only_the_cards_its_seat_saw_drawn(rules):
    """Every render is drawn for the seat to act: another seat's drawn card, and the card that ended another seat's
    Sorting Hat draw, stay unnamed; its own draws are named."""
    env = hpuno_env.raw_env(num_players=3, render_mode="ansi", **rules)
    rng = np.random.default_rng(0)
    own_draws_named = others_draws_hidden = 0
    for seed in range(12):
        env.reset(seed=seed)
        while env.agents:
            viewer = env.agent_selection
            for line in history_of(env.render()):
                who, _, rest = line.strip().partition(" drew ")
                if not rest or rest[0].isdigit() or rest.startswith("nothing"):
                    continue  # a penalty, a Sorting Hat's count, or an empty pile
                if who == viewer:
                    own_draws_named += rest != "a card"
                else:
                    assert rest == "a card", f"{viewer} was shown {line!r}"
                    others_draws_hidden += 1
            for line in history_of(env.render()):
                if "until" in line and not line.strip().startswith(viewer):
                    assert line.rstrip().endswith(("until a Gryffindor card", "and the piles ran out")), line
            observation, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert own_draws_named > 0 and others_draws_hidden > 0


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


def test_wins_only_pays_a_won_round_1_and_a_lost_or_forfeited_one_nothing():
    import agents

    def rewards_of(wins_only):
        env = HPUnoVecEnv(num_envs=16, num_players=2, learner_seat="random", seed=4, illegal_action="lose",
                          opponent=agents.load("heuristic", 2, seed=1), wins_only=wins_only)
        learner = agents.load("heuristic", 2, seed=2)
        observations = env.reset()
        paid, ended = [], []
        for step in range(200):
            masks = env.action_masks()
            actions = learner.act(observations.astype(np.int8), masks)
            if step == 5:
                actions[0] = np.flatnonzero(~masks[0])[0]  # an illegal move forfeits game 0's round
            observations, rewards, dones, _ = env.step(actions)
            paid.append(rewards)
            ended.append(dones)
        return np.array(paid), np.array(ended)

    plain, ended = rewards_of(False)
    wins, ended_too = rewards_of(True)
    assert (ended == ended_too).all() and plain[5, 0] < 0 and (plain < 0).sum() > 10 and (plain > 0).sum() > 10
    np.testing.assert_array_equal(wins, np.maximum(plain, 0.0))
    with pytest.raises(ValueError, match="wins_only"):
        SeatBatch(2, wins_only=1)


def test_opponent_can_be_swapped():
    import agents

    env = HPUnoVecEnv(num_envs=4, num_players=2, seed=0)
    env.set_opponent(agents.load("heuristic", 2))
    assert isinstance(env.batch.opponent, agents.players.HeuristicAgent)
    with pytest.raises(ValueError):
        env.set_opponent(object())


def test_an_opponent_for_another_player_count_is_refused():
    import agents

    with pytest.raises(ValueError, match="opponent.*num_players=4.*num_players=2"):
        HPUnoVecEnv(num_envs=4, num_players=2, opponent=agents.load("heuristic", 4))
    env = HPUnoVecEnv(num_envs=4, num_players=2, seed=0)
    before = env.batch.opponent
    with pytest.raises(ValueError, match=r"policies\[1\].*num_players=3"):
        env.set_opponents([agents.load("random", 2), agents.load("random", 3)], np.zeros(4, np.int64))
    assert env.batch.opponent is before  # nothing changed


class RowCheckingPolicy:
    """An opponent that checks it is handed exactly the rows it plays: the waiting
    games whose current seat the batch's assignment gives to policy `index`."""

    def __init__(self, batch: SeatBatch, index: int):
        self.batch, self.index, self.calls, self.rows = batch, index, 0, 0
        self.rng = np.random.default_rng(index)

    def act(self, observations, action_masks):
        current = self.batch.engine.current_player
        waiting = (current >= 0) & (current != self.batch.seats)
        mine = np.flatnonzero(waiting & (self.batch.assignment[self.batch._rows, np.maximum(current, 0)] == self.index))
        assert (observations == self.batch.engine.observe()[mine]).all()
        assert (action_masks == self.batch.engine.legal_mask()[mine]).all()
        self.calls += 1
        self.rows += len(mine)
        return (self.rng.random(action_masks.shape) * action_masks).argmax(axis=1)


def test_per_slot_and_seat_opponents_get_exactly_their_rows_in_one_call():
    batch = SeatBatch(num_envs=12, num_players=3, learner_seat="random", seed=0, max_turns=60)
    policies = [RowCheckingPolicy(batch, index) for index in range(3)]
    assignment = np.arange(12 * 3).reshape(12, 3) % 3  # each policy plays some seats of every game
    batch.set_opponents(policies, assignment)
    observations, masks = batch.reset(seed=1)
    rng = np.random.default_rng(0)
    for _ in range(100):
        observations, masks, *_ = batch.step((rng.random(masks.shape) * masks).argmax(axis=1))
    assert all(policy.calls > 50 and policy.rows > policy.calls for policy in policies)
    assert batch.opponent is None and (batch.assignment == assignment).all()


def test_opponents_drawn_per_episode_by_a_function():
    drawn_for = []

    def draw(games):
        drawn_for.append(len(games))
        return np.random.default_rng(len(drawn_for)).integers(0, 2, (len(games), 2))

    import agents

    env = HPUnoVecEnv(num_envs=16, num_players=2, seed=0, max_turns=30)
    env.set_opponents([agents.load("random", 2), agents.load("heuristic", 2)], draw)
    assert drawn_for == [16]  # every slot at once
    env.reset()
    episodes = 16
    for _ in range(200):
        masks = env.action_masks()
        env.step_async(masks.argmax(axis=1))
        episodes += env.step_wait()[2].sum()
    # reset draws 16 again; then one row per new episode (rounds the opponents finish before the
    # learner's first decision are dealt again and drawn again, so at least that many)
    assert sum(drawn_for) >= 16 + episodes and sum(drawn_for[:2]) == 32


@pytest.mark.parametrize("assignment, message", [
    (np.zeros((4, 3), np.int64), r"shape \(4, 2\)"),
    (np.full(4, 2), "indices into the 2 policies"),
    (np.zeros(4, np.float32), "integer indices"),
    (lambda games: np.full(len(games), -1), r"assignment\(games\)"),
])
def test_bad_assignments_are_refused_and_change_nothing(assignment, message):
    env = HPUnoVecEnv(num_envs=4, num_players=2, seed=0)
    before = (env.batch.policies, env.batch.assignment.copy())
    with pytest.raises(ValueError, match=message):
        env.set_opponents([env.batch.opponent, env.batch.opponent], assignment)
    assert env.batch.policies is before[0] and (env.batch.assignment == before[1]).all()


def test_observations_float32_by_default_int8_or_scaled_on_request():
    from hpuno_env.encoding import observation_scale

    def first(**kwargs):
        return HPUnoVecEnv(num_envs=8, num_players=4, seed=3, **kwargs).reset()

    raw = first(observation_dtype=np.int8)
    assert raw.dtype == np.int8 and (first() == raw.astype(np.float32)).all()
    scaled = first(scale_observations=True)
    assert scaled.dtype == np.float32 and np.allclose(scaled, raw * observation_scale(4))
    assert 0 <= scaled.min() and scaled.max() <= 2.0  # a fresh deal: about [0, 1] (hand sizes 7 + a draw two)
    gym_env = HPUnoGymVectorEnv(num_envs=8, num_players=4, seed=3, scale_observations=True)
    assert np.allclose(gym_env.reset()[0], scaled) and gym_env.observation_space.contains(scaled)
    with pytest.raises(ValueError, match="scale_observations"):
        HPUnoVecEnv(num_envs=2, observation_dtype=np.int8, scale_observations=True)
    with pytest.raises(ValueError, match="observation_dtype"):
        HPUnoVecEnv(num_envs=2, observation_dtype=np.float64)


def test_vec_normalize_keeps_normalised_observations_in_the_rollout_buffer():
    # With int8 observations, VecNormalize's floats were truncated to integers in
    # MaskablePPO's buffer (the policy acted on 8.06, the update learned from 8).
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import VecNormalize

    env = VecNormalize(HPUnoVecEnv(num_envs=8, num_players=2, seed=0), norm_reward=False)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(128)
    stored = model.rollout_buffer.observations
    assert stored.dtype == np.float32 and (stored != np.round(stored)).any() and stored.min() < 0


def test_the_environment_package_never_imports_agents():
    # hpuno_env stands alone: agents builds on it, never the other way round.
    import subprocess
    import sys

    script = """
import importlib, pkgutil, sys
import numpy as np
import hpuno_env
for module in pkgutil.iter_modules(hpuno_env.__path__):
    try:
        importlib.import_module("hpuno_env." + module.name)
    except ImportError as error:  # an optional extra that is not installed here (ray for hpuno_env.rllib)
        missing = error if isinstance(error, ModuleNotFoundError) else error.__cause__
        if not isinstance(missing, ModuleNotFoundError) or missing.name.split(".")[0] in ("hpuno_env", "agents"):
            raise
for make in (hpuno_env.HPUnoVecEnv, hpuno_env.HPUnoGymVectorEnv):
    env = make(num_envs=2, num_players=2, seed=0)
    env.reset()
batch = hpuno_env.SeatBatch(2, 3, seed=0)
observations, masks = batch.reset()
batch.step(masks.argmax(axis=1))
aec = hpuno_env.env(num_players=2, render_mode="ansi")
aec.reset(seed=0)
aec.render()
print(sorted(name for name in sys.modules if name == "agents" or name.startswith("agents.")))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("module", ["hpuno_env.seat_batch", "hpuno_env.gym_env", "hpuno_env.flat_env"])
def test_framework_free_adapters_never_import_a_training_framework(module):
    # SB3 (and torch with it) comes only with hpuno_env.vector_env: the Gymnasium, flat and RLlib
    # adapters stand on seat_batch, which must not pull it in.
    import subprocess
    import sys

    script = f"""
import sys
import {module}
import hpuno_env
hpuno_env.SeatBatch(2, 2, seed=0).reset()
hpuno_env.HPUnoGymVectorEnv(num_envs=2, num_players=2, seed=0).reset(seed=0)
print(sorted(name for name in ("stable_baselines3", "sb3_contrib", "ray", "torch") if name in sys.modules))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_sb3_vec_env_conventions():
    env = HPUnoVecEnv(num_envs=8, num_players=3, seed=0, max_turns=50)
    observations = env.reset()
    assert observations.shape == (8, env.observation_space.shape[0]) and observations.dtype == np.float32
    assert env.observation_space.dtype == np.float32 and env.observation_space.contains(observations[0])
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
        for _step in range(50):
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

    if not callable(getattr(pettingzoo, "make", None)):
        # PettingZoo 1.26 (what AgileRL pins) has no registry: the env module imported above
        # without registering, and env() is the way in.
        assert not hasattr(pettingzoo, "aec_registry")
        env = hpuno_env.env(num_players=3)
        env.reset(seed=0)
        assert env.unwrapped.metadata["name"] == "hpuno_v1" and len(env.agents) == 3
        return
    env = pettingzoo.make("aec", "hpuno/hpuno-v1", num_players=3)
    env.reset(seed=0)
    assert env.unwrapped.metadata["name"] == "hpuno_v1" and len(env.agents) == 3


@pytest.mark.parametrize("size", [1, 35, 60, 112])
def test_the_rgb_picture_shows_a_hand_of_any_size_inside_the_frame(size):
    from hpuno_env.render import render_rgb

    env = hpuno_env.raw_env(num_players=2, render_mode="rgb_array")
    env.reset(seed=0)
    state = env.game_state()
    state["hands"]["player_0"] = (["red:1", "blue:2", "wild", "sorting_hat"] * 28)[:size]
    image = render_rgb(state, "player_0", [])
    hand_rows = image[-100:-16]
    background = np.array([20, 90, 50], np.uint8)
    assert (hand_rows[:, -19:] == background).all()  # the right margin stays clear
    drawn_columns = np.flatnonzero((hand_rows != background).any(axis=(0, 2)))
    assert drawn_columns.min() == 20 and (size == 1 or drawn_columns.max() > 800)  # spread over the width
