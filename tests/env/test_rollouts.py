"""Compiled rollouts: the compiled heuristic chooses what agents.players.heuristic chooses; rounds end as rounds do."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.players.heuristic import WEIGHTS_MORE_PLAYERS, WEIGHTS_TWO_PLAYERS
from hpuno_env import VectorEngine, rollout
from hpuno_env.cards import NUM_ACTIONS


def recorded_positions(num_players: int, games: int, steps: int, seed: int, **rules):
    """Observations and masks of the seat to act along rounds played by the heuristic and random-play."""
    engine = VectorEngine(games, num_players, seed=seed, **rules)
    engine.reset()
    players = [agents.load("heuristic", num_players, seed=seed), agents.load("random-play", num_players, seed=seed)]
    rng = np.random.default_rng(seed)
    views, masks = [], []
    observation, mask = engine.observe(), engine.legal_mask()
    for step in range(steps):
        views.append(observation)
        masks.append(mask)
        actions = players[step % 2].act(observation, mask)
        random_rows = rng.random(games) < 0.2  # some uniform moves too, for challenges, keeps and odd colours
        actions[random_rows] = (rng.random((games, NUM_ACTIONS)) * mask).argmax(axis=1)[random_rows]
        observation, mask, *_ = engine.step_observe(actions)
    return np.concatenate(views), np.concatenate(masks)


def test_the_weights_are_the_heuristics():
    assert rollout.HEURISTIC_WEIGHTS[2] == WEIGHTS_TWO_PLAYERS
    assert rollout.HEURISTIC_WEIGHTS["more"] == WEIGHTS_MORE_PLAYERS


HOUSE = [{"stacking": "mixed", "jump_in": True}, {"seven_zero": True, "deck": "classic"},
         {"stacking": "both", "seven_zero": True, "draw_until_playable": True, "forced_play": True}]


@pytest.mark.parametrize("num_players, rules", [(2, {}), (3, {}), (4, {}), (6, {}), (2, {"wd4_bluffing": False}), (4, {"voluntary_draw": False}),
                                                (2, HOUSE[0]), (4, HOUSE[0]), (2, HOUSE[1]), (3, HOUSE[1]), (4, HOUSE[2])])
def test_compiled_heuristic_chooses_what_agents_heuristic_chooses(num_players, rules):
    observations, masks = recorded_positions(num_players, games=64, steps=120, seed=num_players, **rules)
    agent = agents.load("heuristic", num_players, seed=11)
    expected = agent.act(observations, masks)
    # The agent's tie-break noise: its generator's first draw for the batch.
    noise = np.random.default_rng(11).random(masks.shape, dtype=np.float32) * 0.01
    chosen = np.zeros(len(masks), np.int64)
    rollout.heuristic_actions(observations, masks, num_players, rollout.heuristic_weights(num_players), noise,
                              np.zeros(256, np.float32), chosen)
    differing = np.flatnonzero(chosen != expected)
    assert differing.size == 0, f"{differing.size} of {len(masks)} differ, e.g. row {differing[:5]}"
    phases = observations[:, agents.players.heuristic.observation_layout(num_players)["phase"]].argmax(axis=1)
    assert len(np.unique(phases)) >= 4, "the recorded positions should cover several phases"


def test_rollouts_play_rounds_to_their_end():
    engine = VectorEngine(200, 3, seed=1, auto_reset=False)
    engine.reset()
    winners, decisions = engine.rollout("heuristic")
    assert (winners >= 0).all() and (decisions > 0).all()
    assert (engine.state.hand_sizes[np.arange(200), winners] == 0).all()
    assert not engine.legal_mask().any()
    # Over games are passed over.
    again, none = engine.rollout("random")
    assert (none == 0).all() and (again == -1).all()


def test_rollouts_repeat_from_the_same_state_and_only_touch_the_listed_games():
    engine = VectorEngine(50, 2, seed=3, auto_reset=False)
    engine.reset()
    twin = engine.clone()
    first = engine.rollout(["heuristic", "random-play"], games=np.arange(0, 50, 2))
    second = twin.rollout(["heuristic", "random-play"], games=np.arange(0, 50, 2))
    assert all(np.array_equal(a, b) for a, b in zip(first, second))
    assert engine.legal_mask()[1::2].any(axis=1).all()  # the odd games still wait for a move


def test_the_heuristic_beats_random_in_rollouts():
    engine = VectorEngine(400, 2, seed=5, auto_reset=False)
    engine.reset()
    winners, _ = engine.rollout(["heuristic", "random"])
    assert (winners == 0).mean() > 0.8
    engine.reset()
    winners, _ = engine.rollout(["random-play", "random"])
    assert 0.55 < (winners == 0).mean()


def test_bad_rollout_arguments():
    engine = VectorEngine(4, 2, seed=0, auto_reset=False)
    with pytest.raises(ValueError, match="reset"):
        engine.rollout()
    engine.reset()
    with pytest.raises(ValueError, match="policies"):
        engine.rollout("greedy")
    with pytest.raises(ValueError, match="policies"):
        engine.rollout(["random"] * 3)
    with pytest.raises(ValueError, match="weights"):
        engine.rollout(heuristic_weights={"speed": 1.0})
