"""Agents behind one batched act(observations, masks) call, and loading them."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents.evaluation.rounds import win_rate
from hpuno_env import ACTION_LABELS, VectorEngine, observation_layout, observation_size
from hpuno_env.cards import CARD_INDEX, CATCH, KEEP, NUM_CARD_TYPES, UNO


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
        policy.act(np.zeros((3, 574)), np.ones((3, 74), bool))
    with pytest.raises(ValueError, match="no legal action"):
        policy.act(np.zeros((2, 574)), np.zeros((2, 75), bool))


@pytest.mark.parametrize("name", ["random", "random-play", "heuristic", "heuristic-v0"])
def test_act_refuses_observations_of_another_player_count(name):
    """A 2-player agent handed 4-player observations (width 710, not 574) must not guess."""
    policy = agents.load(name, num_players=2, seed=0)
    engine = VectorEngine(num_games=3, num_players=4, seed=0)
    engine.reset()
    with pytest.raises(ValueError, match=r"observations have width 710.*2-player.*574"):
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


def test_heuristic_beats_the_first_heuristic():
    """Over 40,000 rounds it wins 57% of 2-player rounds against heuristic-v0; 3,000 rounds must
    put the whole 95% interval above a fair share."""
    result = win_rate(agents.load("heuristic", 2, seed=1), agents.load("heuristic-v0", 2, seed=2), num_players=2, rounds=3000, seed=4)
    assert result["low"] > 0.5, result


def observation(num_players: int, **fields) -> np.ndarray:
    """One observation row with the named fields of hpuno_env.observation_layout set (the rest zero)."""
    layout = observation_layout(num_players)
    row = np.zeros(observation_size(num_players), np.int8)
    for name, values in fields.items():
        row[layout[name]] = values
    return row


def one_hot(size: int, *indices: int) -> np.ndarray:
    vector = np.zeros(size, np.int8)
    for index in indices:
        vector[index] += 1
    return vector


def heuristic_choice(num_players: int, legal: list[str], **fields) -> str:
    mask = np.isin(ACTION_LABELS, legal)[None]
    action = agents.load("heuristic", num_players, seed=0).act(observation(num_players, **fields)[None], mask)[0]
    return ACTION_LABELS[action]


PLAY_PHASE, COLOR_PHASE, CHALLENGE_PHASE = one_hot(7, 0), one_hot(7, 2), one_hot(7, 4)


def test_heuristic_two_players_takes_the_extra_turn_and_keeps_a_rank_pair():
    """Red Skip then red 5 beats red 5 alone; a 7 whose twin in blue it holds is kept for a colour switch."""
    hand = one_hot(55, CARD_INDEX["red:skip"], CARD_INDEX["red:5"], CARD_INDEX["red:7"], CARD_INDEX["blue:7"])
    common = dict(hand=hand, top_card=one_hot(55, CARD_INDEX["red:3"]), current_color=one_hot(4, 0), phase=PLAY_PHASE,
                  direction_left=1, draw_pile_size=80, other_hand_sizes=6)
    assert heuristic_choice(2, ["play:red:skip", "play:red:5", "play:red:7", "draw"], **common) == "play:red:skip"
    assert heuristic_choice(2, ["play:red:5", "play:red:7", "draw"], **common) == "play:red:5"


def test_heuristic_blocks_a_seat_about_to_go_out_and_names_its_best_colour():
    """The next seat has one card and drew on yellow: keep the colour yellow rather than switch to green."""
    hand = one_hot(55, CARD_INDEX["yellow:4"], CARD_INDEX["green:8"], CARD_INDEX["green:2"], CARD_INDEX["blue:1"])
    lacks = np.zeros(12, np.int8)
    lacks[1] = 1  # other 1 (the next seat while play goes left) drew on yellow
    chosen = heuristic_choice(4, ["play:yellow:4", "play:green:8", "draw"], hand=hand, top_card=one_hot(55, CARD_INDEX["yellow:8"]),
                              current_color=one_hot(4, 1), phase=PLAY_PHASE, direction_left=1, draw_pile_size=60,
                              other_hand_sizes=[1, 5, 5], other_lacks_color=lacks)
    assert chosen == "play:yellow:4"
    colour = heuristic_choice(4, ["color:red", "color:yellow", "color:green", "color:blue"], hand=hand,
                              top_card=one_hot(55, CARD_INDEX["wild"]), phase=COLOR_PHASE, other_hand_sizes=[5, 5, 5])
    assert colour == "color:green"


def test_heuristic_challenges_only_a_likely_bluff():
    """An offender with six other cards probably held the colour; one that drew on it did not."""
    common = dict(hand=one_hot(55, CARD_INDEX["red:1"], CARD_INDEX["red:2"], CARD_INDEX["blue:3"], CARD_INDEX["green:3"]),
                  top_card=one_hot(55, CARD_INDEX["wild_draw4"]), current_color=one_hot(4, 3), phase=CHALLENGE_PHASE,
                  wd4_prev_color=one_hot(4, 1), direction_left=1, other_hand_sizes=6)
    assert heuristic_choice(2, ["challenge", "accept"], **common) == "challenge"
    assert heuristic_choice(2, ["challenge", "accept"], **common, other_lacks_color=one_hot(4, 1)) == "accept"
    assert heuristic_choice(2, ["challenge", "accept"], **{**common, "other_hand_sizes": 1}) == "accept"


def test_heuristic_refuses_unknown_weights():
    with pytest.raises(ValueError, match="weights has unknown names"):
        agents.players.heuristic.HeuristicAgent(2, weights={"bluffing": 1.0})


def test_heuristic_reads_float_observations_of_the_raw_encoding_and_refuses_scaled_ones():
    engine = VectorEngine(num_games=32, num_players=3, seed=4)
    engine.reset()
    observations, masks = engine.observe(), engine.legal_mask()
    raw = agents.players.heuristic.HeuristicAgent(3, seed=1).act(observations, masks)
    as_floats = agents.players.heuristic.HeuristicAgent(3, seed=1).act(observations.astype(np.float32), masks)
    assert np.array_equal(raw, as_floats)
    with pytest.raises(ValueError, match="raw int8 encoding"):
        agents.players.heuristic.HeuristicAgent(3).act(observations * np.float32(0.5), masks)


# Saved agent files (export, load, refusals) are tested in test_trained_agents.py.


def test_shipped_trained_agent_loads_and_beats_random():
    assert "ppo_2p" in agents.available()
    trained = agents.load("ppo_2p", num_players=2, seed=0)
    result = win_rate(trained, agents.load("random", 2, seed=5), num_players=2, rounds=300, num_envs=64, seed=6)
    assert result["win_rate"] > 0.9


def test_a_misspelled_agent_name_is_answered_with_the_names_it_is_close_to():
    from agents.players import check_name

    with pytest.raises(ValueError, match=r"unknown agent 'heuristc' \(did you mean 'heuristic' or 'heuristic-v0'\?\): not one of"):
        agents.load("heuristc", 2)
    with pytest.raises(ValueError, match=r"unknown agent 'ppo_universe' \(did you mean 'ppo_universal'\?\)"):
        check_name("ppo_universe")  # what the commands check before anything loads
    with pytest.raises(ValueError) as error:
        agents.load("xyz", 2)
    assert "did you mean" not in str(error.value) and str(error.value).startswith("unknown agent 'xyz': not one of")
