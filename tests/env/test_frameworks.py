"""Other frameworks without glue: docs/frameworks.md's snippets, run exactly as written (each test
finds its block by a line in it; every block of the page is one test's), then checked: SuperSuit on
the flat PettingZoo env, TorchRL collecting masked episodes, Gymnasium's masked sampling and TorchRL's
GymWrapper on the Gymnasium vector env, SB3's VecNormalize + MaskablePPO learning, and one RLlib PPO
iteration."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest
import torch
from pettingzoo.test import api_test

from hpuno_env import HPUnoVecEnv
from hpuno_env.flat_env import flat_env

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)
# The line that names each block, one per test below.
MARKERS = ("import supersuit", "PettingZooWrapper", "HPUnoGymVectorEnv", "VecNormalize", "ppo_config")


def run_docs_block(marker: str) -> dict:
    """Execute the page's one Python block containing ``marker``; return its variables."""
    matches = [block for block in BLOCKS if marker in block]
    assert len(matches) == 1, f"expected one docs/frameworks.md block with {marker!r}, found {len(matches)}"
    namespace = {"__name__": "docs"}
    exec(compile(matches[0], f"docs/frameworks.md block with {marker!r}", "exec"), namespace)
    return namespace


def test_every_block_of_the_page_is_run_by_a_test():
    claimed = [sum(marker in block for marker in MARKERS) for block in BLOCKS]
    assert claimed == [1] * len(BLOCKS), "a docs/frameworks.md block no test runs, or one two tests run"


EXTRAS = {"supersuit": "frameworks", "torchrl": "frameworks", "ray": "rllib"}  # a package a block imports -> its extra


def test_every_block_needing_an_extra_names_it_beside_it():
    """A reader who copies one block learns there which extra it needs (the introduction is far above)."""
    text = PAGE.read_text()
    for block in BLOCKS:
        start = text.index(f"```python\n{block}")
        before = text[text.rfind("```", 0, start) + 3 if "```" in text[:start] else 0:start]  # the prose since the last block
        for package, extra in EXTRAS.items():
            if re.search(rf"^(import|from) {package}\b", block, re.M):
                assert f"`{extra}` extra" in before, f"the block importing {package} does not say it needs the {extra} extra"


def test_flat_env_observes_a_box_and_keeps_the_mask_in_infos():
    for dtype in (np.float32, np.int8):
        env = flat_env(num_players=3, observation_dtype=dtype)
        api_test(env, num_cycles=60)
        env.reset(seed=2)
        observation, _, _, _, info = env.last()
        assert observation.dtype == dtype and env.observation_space(env.agent_selection).contains(observation)
        assert info["action_mask"].dtype == np.int8 and info["action_mask"].any()
        raw = env.unwrapped.observe(env.agent_selection)
        assert np.array_equal(observation, raw["observation"].astype(dtype))
        assert np.array_equal(info["action_mask"], raw["action_mask"])
    with pytest.raises(ValueError, match="observation_dtype"):
        flat_env(2, observation_dtype=np.float64)


def test_supersuit_wraps_the_flat_env():
    found = run_docs_block("import supersuit")
    env, returns = found["env"], found["returns"]
    assert found["observation"].shape == (2 * 574,) and found["observation"].dtype == np.float32
    assert 0.0 <= found["observation"].min() and found["observation"].max() <= 1.0
    assert sorted(returns.values()) == [-1.0, 1.0], "the round's result, credited to both seats"
    api_test(env, num_cycles=60)


def test_torchrl_collects_masked_episodes():
    found = run_docs_block("PettingZooWrapper")
    rollout = found["rollout"]
    assert rollout["next", "done"][-1].item(), "the rollout ends with the round"
    for player in ("player_0", "player_1"):
        acting = rollout[player, "mask"].reshape(-1)  # the agent to act in each step
        actions = rollout[player, "action"].reshape(-1)[acting]
        masks = rollout[player, "action_mask"].reshape(len(acting), -1)[acting]
        assert acting.any() and masks[torch.arange(len(actions)), actions].all(), "an illegal action was taken"
        assert rollout[player, "observation"].dtype == torch.float32
    assert sorted(found["returns"]) == [-1.0, 1.0]


def test_gymnasium_masked_sampling_and_torchrl_gym_wrapper():
    found = run_docs_block("HPUnoGymVectorEnv")
    assert found["infos"]["action_mask"].dtype == np.int8
    assert found["steps"] == 100, "every masked sample was legal (an illegal one raises)"
    rollout = found["rollout"]
    rewards = rollout["next", "reward"].reshape(-1)
    assert set(rewards.tolist()) <= {-1.0, 0.0, 1.0} and rollout["next", "done"].any()


def test_vector_env_illegal_action_loses_the_round_or_raises():
    env = HPUnoVecEnv(num_envs=4, num_players=2, seed=0, illegal_action="lose")
    env.reset()
    masks = env.action_masks()
    actions = masks.argmax(axis=1)  # legal everywhere ...
    actions[[1, 3]] = [int(np.flatnonzero(~masks[g])[0]) for g in (1, 3)]  # ... but in games 1 and 3
    actions[3] = 75  # out of range loses too
    _, rewards, dones, infos = env.step(actions)
    assert dones.tolist() == [False, True, False, True] and rewards[[1, 3]].tolist() == [-1.0, -1.0]
    assert all("terminal_observation" in infos[g] and not infos[g]["TimeLimit.truncated"] for g in (1, 3))
    env.step(env.action_masks().argmax(axis=1))  # the forfeited games were dealt again

    strict = HPUnoVecEnv(num_envs=4, num_players=2, seed=0)
    strict.reset()
    before = strict.batch.engine.game_state(1)
    with pytest.raises(ValueError, match="illegal action"):
        strict.step(np.where(np.arange(4) == 1, int(np.flatnonzero(~strict.action_masks()[1])[0]), strict.action_masks().argmax(axis=1)))
    assert strict.batch.engine.game_state(1) == before
    with pytest.raises(ValueError, match="illegal_action"):
        HPUnoVecEnv(num_envs=4, illegal_action="ignore")


@pytest.fixture
def one_torch_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small network on a shared 2-core machine: more threads only contend
    yield
    torch.set_num_threads(threads)


def test_sb3_vecnormalize_and_maskable_ppo_learn(one_torch_thread):
    """VecNormalize keeps the observation space's dtype for MaskablePPO's rollout buffer: with the
    float32 default the buffer holds the normalised values the policy acted on (int8 would
    truncate them to integers), and the agent beats the random player clearly."""
    found = run_docs_block("VecNormalize")
    stored = found["model"].rollout_buffer.observations
    assert stored.dtype == np.float32 and not np.array_equal(stored, np.round(stored))
    result = found["result"]
    assert result["low"] > 0.55, f"win rate against random {result['win_rate']:.3f} (95% low {result['low']:.3f})"


def test_rllib_trains_one_iteration():
    found = run_docs_block("ppo_config")
    assert found["result"]["env_runners"]["num_env_steps_sampled"] >= 1024
