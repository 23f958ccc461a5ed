"""A universal agent file (metadata ``"layout": "universal"``): exported from a model trained on the mixture env, it
loads at every player count 2..10, converts each batch of per-count observations before its network, agrees with
the model it came from, and plays only legal actions in the engine and in the AEC env."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

import agents
import hpuno_env
from hpuno_env import VectorEngine
from hpuno_env.mixture_env import HPUnoMixtureVecEnv
from hpuno_env.universal import UNIVERSAL_VERSION, universal_observation, universal_scale, universal_size
from agents.players.trained import TrainedAgent
from agents.training.agent_file import export, live_agent

RULES = [{}, {"uno_penalty": 4, "stacking": "both"}, {"jump_in": True, "seven_zero": True, "gryffindor_color": "blue"}]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    env = HPUnoMixtureVecEnv([2, 3, 6], num_envs_per_table=8, seed=0, scale_observations=True)
    model = MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=64, n_epochs=1, seed=0, policy_kwargs={"net_arch": [16]}, device="cpu")
    model.learn(192)
    path = tmp_path_factory.mktemp("universal") / "universal.safetensors"
    metadata = export(model, path, universal=True, observation_scale=universal_scale(), training={"tables": [2, 3, 6]})
    return model, path, metadata


def test_the_metadata_says_universal(trained):
    _, _, metadata = trained
    assert metadata["num_players"] == "any"
    assert metadata["observation"]["layout"] == "universal" and metadata["observation"]["version"] == UNIVERSAL_VERSION
    assert metadata["observation"]["size"] == metadata["network"]["input_size"] == universal_size()


@pytest.mark.parametrize("num_players", range(2, 11))
def test_it_loads_and_plays_legally_at_every_player_count(trained, num_players):
    model, path, _ = trained
    rules = RULES[num_players % len(RULES)]
    agent = agents.load(str(path), num_players=num_players, seed=0, rules_options=rules)
    assert isinstance(agent, TrainedAgent) and agent.universal and "universal v1" in repr(agent)
    engine = VectorEngine(num_games=16, num_players=num_players, seed=num_players, **rules)
    engine.reset()
    for _ in range(40):
        observations, masks = engine.observe(), engine.legal_mask()
        actions = agent.act(observations, masks)
        assert masks[np.arange(len(masks)), actions].all()
        engine.step(actions)
    # The network's input is the universal observation under these rules: the model chooses the same.
    inputs = universal_observation(observations, num_players, rules).astype(np.float32) * universal_scale()
    expected, _ = model.predict(inputs, action_masks=masks, deterministic=True)
    assert (expected == agent.act(observations, masks)).all()
    assert (live_agent(model, num_players, universal=True, rules_options=rules, observation_scale=universal_scale())
            .act(observations, masks) == expected).all()


@pytest.mark.parametrize("num_players", [2, 5])
def test_its_action_probabilities_are_the_models_masked_softmax_under_the_tables_rules(trained, num_players):
    model, path, _ = trained
    rules = RULES[num_players % len(RULES)]
    agent = agents.load(str(path), num_players=num_players, rules_options=rules)
    engine = VectorEngine(num_games=16, num_players=num_players, seed=num_players, **rules)
    engine.reset()
    observations, masks = engine.observe(), engine.legal_mask()
    shares = agent.action_probabilities(observations, masks)
    inputs = universal_observation(observations, num_players, rules).astype(np.float32) * universal_scale()
    with torch.no_grad():
        expected = model.policy.get_distribution(torch.as_tensor(inputs), action_masks=masks).distribution.probs.numpy()
    assert np.allclose(shares, expected, atol=1e-5) and (shares[~masks] == 0).all()
    assert np.allclose(shares.sum(axis=1), 1) and (shares.argmax(axis=1) == agent.act(observations, masks)).all()


@pytest.mark.parametrize("num_players", [2, 5, 10])
def test_it_plays_the_aec_env(trained, num_players):
    _, path, _ = trained
    agent = agents.load(str(path), num_players=num_players, seed=1)
    env = hpuno_env.env(num_players=num_players)
    env.reset(seed=num_players)
    for decisions, _ in enumerate(env.agent_iter()):
        observation, _, termination, truncation, _ = env.last()
        if termination or truncation:
            action = None
        else:
            action = int(agent.act(observation["observation"][None], observation["action_mask"][None])[0])
            assert observation["action_mask"][action]
        env.step(action)
        if decisions > 300:
            break


def test_a_universal_file_with_a_per_count_size_or_a_player_count_is_refused(trained, tmp_path):
    import json

    import safetensors.torch

    _, path, metadata = trained
    tensors = safetensors.torch.load_file(str(path))
    for change, message in ((("num_players", 2), "universal agent's num_players"),
                            (("observation", {**metadata["observation"], "version": 99}), "universal layout version 99"),
                            (("observation", {**metadata["observation"], "layout": "other"}), "observation layout 'other'")):
        broken = tmp_path / "broken.safetensors"
        safetensors.torch.save_file(tensors, str(broken), metadata={"hpuno_agent": json.dumps({**metadata, change[0]: change[1]})})
        with pytest.raises(ValueError, match=message):
            agents.load(str(broken), num_players=2)
    with pytest.raises(ValueError, match="without num_players"):
        export(trained[0], tmp_path / "x.safetensors", num_players=2, universal=True)
