"""Compiled rollouts: the rollout heuristic chooses what agents.players.heuristic chooses; rounds end as rounds do."""

from __future__ import annotations

import math

import numpy as np
import pytest

import agents
from agents.players.heuristic import HeuristicAgent
from hpuno_env import VectorEngine, observation_layout, rollout
from hpuno_env.cards import NUM_ACTIONS
from hpuno_env.heuristic import heuristic_weights


class GivenUniforms:
    """A stand-in for an agent's generator: its one draw per act is the given (B, 75) uniforms."""

    def __init__(self, uniforms):
        self.uniforms = uniforms

    def random(self, shape, dtype):
        assert shape == self.uniforms.shape and dtype == np.float32
        return self.uniforms


def rollout_choices(engine: VectorEngine, weights) -> tuple[np.ndarray, np.ndarray]:
    """What the rollout's heuristic (rollout.choose, on a copy of each game) chooses for every game's seat to
    act, and the uniforms it draws for its tie-breaks from the game's generator (0 where none is drawn)."""
    probe, twin = engine.clone(), engine.clone()
    mask, row = np.zeros(NUM_ACTIONS, np.bool_), np.zeros(engine.observation_size, np.int8)
    noise, scratch = np.zeros(NUM_ACTIONS, np.float32), np.zeros(256, np.float32)
    legal = engine.legal_mask()
    chosen = np.zeros(engine.num_games, np.int64)
    uniforms = np.zeros((engine.num_games, NUM_ACTIONS), np.float32)
    for g in range(engine.num_games):
        mask[:] = legal[g]
        chosen[g] = rollout.choose(probe.state, probe.params, g, rollout.HEURISTIC, weights, mask, row, noise, scratch)
        if legal[g].sum() > 1:  # one legal action is taken without a draw
            uniforms[g, legal[g]] = [rollout._uniform_float(twin.state, g) for _ in range(legal[g].sum())]
    return chosen, uniforms


HOUSE = [{"stacking": "mixed", "jump_in": True}, {"seven_zero": True, "deck": "classic"},
         {"stacking": "both", "seven_zero": True, "draw_until_playable": True, "forced_play": True}]


@pytest.mark.parametrize("num_players, rules", [(2, {}), (3, {}), (4, {}), (6, {}), (2, {"wd4_bluffing": False}), (4, {"voluntary_draw": False}),
                                                (2, HOUSE[0]), (4, HOUSE[0]), (2, HOUSE[1]), (3, HOUSE[1]), (4, HOUSE[2])])
def test_the_rollout_heuristic_chooses_what_the_batched_player_chooses(num_players, rules):
    """Along rounds of the heuristic, random-play and random moves: the rollout's choice (its own observation
    row, its noise from the game's generator) is the agent's on engine.observe() given the same uniforms."""
    engine = VectorEngine(48, num_players, seed=num_players, **rules)
    engine.reset()
    players = [agents.load("heuristic", num_players, seed=num_players), agents.load("random-play", num_players, seed=num_players)]
    rng = np.random.default_rng(num_players)
    weights = heuristic_weights(num_players)
    agent = HeuristicAgent(num_players)
    phases = []
    for step in range(90):
        observation, mask = engine.observe(), engine.legal_mask()
        if step % 6 == 0:
            chosen, uniforms = rollout_choices(engine, weights)
            agent.rng = GivenUniforms(uniforms)
            expected = agent.act(observation, mask)
            differing = np.flatnonzero(chosen != expected)
            assert differing.size == 0, f"step {step}: {differing.size} of {len(mask)} differ, e.g. games {differing[:5]}"
            phases.append(observation[:, observation_layout(num_players)["phase"]].argmax(axis=1))
        actions = players[step % 2].act(observation, mask)
        random_rows = rng.random(len(mask)) < 0.2  # some uniform moves too, for challenges, keeps and odd colours
        actions[random_rows] = (rng.random((len(mask), NUM_ACTIONS)) * mask).argmax(axis=1)[random_rows]
        engine.step(actions)
    assert len(np.unique(np.concatenate(phases))) >= 4, "the positions should cover several phases"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_heuristic_weights_are_refused(value):
    with pytest.raises(ValueError, match="weights\\['block'\\] must be a finite number"):
        HeuristicAgent(2, weights={"block": value})
    engine = VectorEngine(2, 2, seed=0, auto_reset=False)
    engine.reset()
    with pytest.raises(ValueError, match="weights\\['attack'\\] must be a finite number"):
        engine.rollout(heuristic_weights={"attack": value})


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
