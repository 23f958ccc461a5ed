"""The shipped universal agent, ``ppo_universal``: it loads by name at every player count 2..10, under the default
rules and with every house rule on (both decks), and plays only legal actions in the engine (whole rounds, every
seat) and in the AEC env. Its strength is bounded in tests/players/test_shipped_agents.py."""

from __future__ import annotations

import numpy as np
import pytest

import agents
import hpuno_env
from hpuno_env import VectorEngine
from hpuno_env.options import ALL_HOUSE_RULES

HOUSE_CLASSIC = {**ALL_HOUSE_RULES, "deck": "classic"}


def play_rounds_in_every_seat(agent, num_players: int, rules: dict, games: int = 8) -> int:
    """The agent in every seat of ``games`` games until each has finished a round; the decisions it made."""
    engine = VectorEngine(num_games=games, num_players=num_players, seed=num_players, **rules)
    engine.reset()
    finished = np.zeros(games, bool)
    decisions = 0
    while not finished.all():
        observations, masks = engine.observe(), engine.legal_mask()
        actions = agent.act(observations, masks)
        assert masks[np.arange(games), actions].all(), "an illegal action"
        _, terminated, truncated = engine.step(actions)
        finished |= terminated | truncated
        decisions += games
        assert decisions < 400_000, "rounds that never end"
    return decisions


@pytest.mark.parametrize("num_players", range(2, 11))
def test_it_plays_whole_rounds_at_every_player_count(num_players):
    agent = agents.load("ppo_universal", num_players=num_players, seed=0)
    assert agent.universal and agent.num_players == num_players
    assert play_rounds_in_every_seat(agent, num_players, {}) > 0


@pytest.mark.parametrize("num_players, rules", [(2, ALL_HOUSE_RULES), (4, ALL_HOUSE_RULES), (2, HOUSE_CLASSIC),
                                                (4, HOUSE_CLASSIC), (7, ALL_HOUSE_RULES)])
def test_it_plays_whole_rounds_with_every_house_rule(num_players, rules):
    agent = agents.load("ppo_universal", num_players=num_players, seed=0, rules_options=rules)
    assert play_rounds_in_every_seat(agent, num_players, rules) > 0


@pytest.mark.parametrize("num_players, rules", [(3, {}), (10, {}), (4, HOUSE_CLASSIC)])
def test_it_plays_the_aec_env(num_players, rules):
    agent = agents.load("ppo_universal", num_players=num_players, seed=1, rules_options=rules or None)
    env = hpuno_env.env(num_players=num_players, **rules)
    env.reset(seed=num_players)
    for decisions, _ in enumerate(env.agent_iter()):
        observation, _, termination, truncation, _ = env.last()
        action = None
        if not (termination or truncation):
            action = int(agent.act(observation["observation"][None], observation["action_mask"][None])[0])
            assert observation["action_mask"][action]
        env.step(action)
        if decisions > 500:
            break


def test_its_file_says_how_it_was_made_and_how_it_played_every_table():
    described = agents.load("ppo_universal", num_players=5).describe()
    assert described["num_players"] == "any"
    assert described["training"]["command"].startswith("python train.py --recipe universal")
    tables = described["evaluation"]["tables"]
    assert {"2", "3", "4", "5", "6", "8", "10", "2 house", "4 house", "2 house classic", "4 house classic"} <= set(tables)
    assert all(0 <= tables[label]["low"] <= tables[label]["win_rate"] <= tables[label]["high"] <= 1 for label in tables)
