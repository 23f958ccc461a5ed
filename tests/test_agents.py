"""Agents behind one batched act(observations, masks) call, and loading them."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.evaluate import win_rate
from hpuno_env import VectorEngine
from hpuno_env.cards import CATCH, KEEP, NUM_CARD_TYPES, UNO


@pytest.mark.parametrize("name", ["random", "random-play", "heuristic", "heuristic-v0"])
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
    assert {"random", "random-play", "heuristic", "heuristic-v0"} <= set(agents.available())
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


@pytest.mark.parametrize("name", ["random", "random-play", "heuristic", "heuristic-v0"])
def test_act_refuses_observations_of_another_player_count(name):
    """A 2-player agent handed 4-player observations (width 431, not 303) must not guess."""
    policy = agents.load(name, num_players=2, seed=0)
    engine = VectorEngine(num_games=3, num_players=4, seed=0)
    engine.reset()
    with pytest.raises(ValueError, match=r"observations have width 431.*2-player.*303"):
        policy.act(engine.observe(), engine.legal_mask())


def test_random_play_plays_when_it_can_and_flips_a_coin_for_the_rest():
    engine = VectorEngine(num_games=256, num_players=3, seed=2)
    engine.reset()
    policy = agents.load("random-play", num_players=3, seed=1)
    chosen = {"uno": 0, "uno legal": 0, "catch": 0, "catch legal": 0}
    for _ in range(400):
        masks = engine.legal_mask()
        actions = policy.act(engine.observe(), masks)
        can_play = masks[:, :NUM_CARD_TYPES].any(axis=1)
        assert (actions[can_play & (actions != UNO)] < NUM_CARD_TYPES).all()  # never draw or keep while a card plays
        assert not (actions == KEEP).any()
        chosen["uno legal"] += int(masks[:, UNO].sum())
        chosen["uno"] += int((actions == UNO).sum())
        chosen["catch legal"] += int(masks[:, CATCH].sum())
        chosen["catch"] += int((actions == CATCH).sum())
        engine.step(actions)
    assert chosen["uno legal"] > 100 and chosen["catch legal"] > 100
    assert abs(chosen["uno"] / chosen["uno legal"] - 0.5) < 0.1 and abs(chosen["catch"] / chosen["catch legal"] - 0.5) < 0.1


def test_heuristic_beats_random():
    result = win_rate(agents.load("heuristic", 2, seed=1), agents.load("random", 2, seed=2), num_players=2, rounds=300, num_envs=64, seed=3)
    assert result["win_rate"] > 0.8


# Saved agent files (export, load, refusals) are tested in test_trained_agents.py.


def test_shipped_trained_agent_loads_and_beats_random():
    assert "ppo_2p" in agents.available()
    trained = agents.load("ppo_2p", num_players=2, seed=0)
    result = win_rate(trained, agents.load("random", 2, seed=5), num_players=2, rounds=300, num_envs=64, seed=6)
    assert result["win_rate"] > 0.9
