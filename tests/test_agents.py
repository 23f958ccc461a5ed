"""Agents behind one batched act(observations, masks) call, and loading them."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.evaluate import win_rate
from hpuno_env import HPUnoVecEnv, VectorEngine


@pytest.mark.parametrize("name", ["random", "heuristic"])
@pytest.mark.parametrize("num_players", [2, 4, 10])
def test_built_in_agents_choose_legal_actions(name, num_players):
    engine = VectorEngine(num_games=64, num_players=num_players, seed=1, max_turns=200)
    engine.reset()
    policy = agents.load(name, num_players=num_players, seed=0)
    for _ in range(300):
        masks = engine.legal_mask()
        actions = policy.act(engine.observe(), masks)
        assert actions.shape == (64,) and masks[np.arange(64), actions].all()
        engine.step(actions)


def test_available_and_bad_names():
    assert {"random", "heuristic"} <= set(agents.available())
    with pytest.raises(ValueError, match="unknown agent"):
        agents.load("grandmaster", num_players=2)
    with pytest.raises(ValueError, match="num_players"):
        agents.load("random", num_players=1)


def test_act_rejects_bad_batches():
    policy = agents.load("random", num_players=2)
    with pytest.raises(ValueError, match="action_masks"):
        policy.act(np.zeros((3, 303)), np.ones((3, 74), bool))
    with pytest.raises(ValueError, match="no legal action"):
        policy.act(np.zeros((2, 303)), np.zeros((2, 75), bool))


def test_heuristic_beats_random():
    result = win_rate(agents.load("heuristic", 2, seed=1), agents.load("random", 2, seed=2), num_players=2, rounds=300, num_envs=64, seed=3)
    assert result["win_rate"] > 0.8


def test_trained_agent_round_trip_and_corrupt_file(tmp_path):
    from sb3_contrib import MaskablePPO

    model = MaskablePPO("MlpPolicy", HPUnoVecEnv(num_envs=8, num_players=2, seed=0), n_steps=16, batch_size=64, seed=0)
    model.learn(256)
    path = tmp_path / "agent.zip"
    model.save(path)
    policy = agents.load(str(path), num_players=2)
    engine = VectorEngine(num_games=8, num_players=2, seed=0)
    engine.reset()
    masks = engine.legal_mask()
    assert masks[np.arange(8), policy.act(engine.observe(), masks)].all()
    with pytest.raises(ValueError, match="trained for observations"):
        agents.load(str(path), num_players=4)
    corrupt = tmp_path / "corrupt.zip"
    corrupt.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="cannot load agent"):
        agents.load(str(corrupt), num_players=2)


def test_shipped_trained_agent_loads_and_beats_random():
    assert "ppo_2p" in agents.available()
    trained = agents.load("ppo_2p", num_players=2, seed=0)
    result = win_rate(trained, agents.load("random", 2, seed=5), num_players=2, rounds=300, num_envs=64, seed=6)
    assert result["win_rate"] > 0.9
