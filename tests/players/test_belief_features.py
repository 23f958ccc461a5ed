"""The compiled replay of the round's history (``belief_features.history_features``) gives exactly what a plain
numpy replay gives, event by event, on rounds of every table and rules: the shipped beliefs were trained on these
features, so a difference of one count would change what they read."""

import numpy as np
import pytest

import agents
from agents.players.belief_features import SEAT_FEATURE_SIZE, SEAT_FEATURES, history_features
from hpuno_env import VectorEngine, observation_layout
from hpuno_env.cards import CARD_COLOR, SORTING_HAT, WILD, WILD_DRAW4
from hpuno_env.encoding import HISTORY_KINDS
from hpuno_env.kernel import HISTORY_ENTRY, HISTORY_LENGTH
from hpuno_env.options import ALL_HOUSE_RULES

KIND = {name: code for code, name in enumerate(HISTORY_KINDS, start=1)}
PLAYS = (KIND["play"], KIND["stack"], KIND["jump"])
TAKES = (KIND["draw"], KIND["forced_draw"], KIND["sorting_hat"])


def reference_features(observations: np.ndarray, num_players: int) -> np.ndarray:
    """(B, others, SEAT_FEATURE_SIZE): the seats' summaries replayed position by position over the batch in numpy."""
    rows = np.asarray(observations, np.int64)
    events = rows[:, observation_layout(num_players)["history"]].reshape(len(rows), HISTORY_LENGTH, HISTORY_ENTRY)
    B, others = len(rows), num_players - 1
    summary = {name: np.zeros((B, others, size), np.float32) for name, size in SEAT_FEATURES}
    state = {"color": np.full(B, -1), "previous": np.zeros((B, 2), np.int64), "bluffer": np.full(B, -1),
             "last_play": np.full((B, others), -1), "taken": np.zeros((B, others), np.float32)}
    for index in range(HISTORY_LENGTH):
        replay_position(summary, state, events[:, index], index)
    summary["taken_since_play"][..., 0] = state["taken"]
    last_play = state["last_play"]
    summary["events_since_play"][..., 0] = np.where(last_play >= 0, HISTORY_LENGTH - 1 - last_play, HISTORY_LENGTH) / HISTORY_LENGTH
    return np.concatenate([summary[name] for name, _ in SEAT_FEATURES], axis=2)


def replay_position(summary: dict, state: dict, position: np.ndarray, index: int) -> None:
    kind, actor, card, value = position.T
    B = len(kind)
    seat = actor - 2
    other = seat >= 0
    rows = np.arange(B)

    def add(name, where, column):
        where = where & other
        np.add.at(summary[name], (rows[where], seat[where], column[where]), 1)

    color = state["color"]
    played = np.isin(kind, PLAYS) & (card > 0)
    card_color = CARD_COLOR[np.maximum(card - 1, 0)]
    drew = kind == KIND["draw"]
    add("draws_on_color", drew & (color >= 0), np.maximum(color, 0))
    add("draws_on_color_since_play", drew & (color >= 0), np.maximum(color, 0))
    add("plays_of_color", played & (card_color >= 0), np.maximum(card_color, 0))
    wild_column = np.select([card - 1 == WILD, card - 1 == WILD_DRAW4, card - 1 == SORTING_HAT], [0, 1, 2], 0)
    add("plays_of_wilds", played & (card_color < 0), wild_column)
    add("named_colors", kind == KIND["color"], np.maximum(value - 1, 0))
    zero = np.zeros(B, np.int64)
    add("hat_draws", kind == KIND["sorting_hat"], zero)
    add("drawn_kept", kind == KIND["keep"], zero)
    after_own_draw = (state["previous"][:, 0] == KIND["draw"]) & (state["previous"][:, 1] == actor)
    add("drawn_played", played & after_own_draw, zero)
    bluffer = state["bluffer"]
    found = (kind == KIND["challenge"]) & (value == 2) & (bluffer >= 0)
    np.add.at(summary["bluffs_found"], (rows[found], bluffer[found], zero[found]), 1)
    mine = played & other
    state["last_play"][rows[mine], seat[mine]] = index
    state["taken"][rows[mine], seat[mine]] = 0
    summary["draws_on_color_since_play"][rows[mine], seat[mine]] = 0
    took = np.isin(kind, TAKES) & other
    state["taken"][rows[took], seat[took]] += value[took]
    state["bluffer"] = np.where(played & (card - 1 == WILD_DRAW4), np.where(other, seat, -1), bluffer)
    color = np.where(played, card_color, color)
    state["color"] = np.where(kind == KIND["color"], value - 1, color)
    state["previous"] = np.where((kind > 0)[:, None], np.stack([kind, actor], axis=1), state["previous"])


def views_of_rounds(num_players: int, rules: dict, player: str, steps: int) -> np.ndarray:
    """Every seat's view after each of ``steps`` steps of 32 games (rounds dealt again as they end)."""
    engine = VectorEngine(32, num_players, seed=num_players, **rules)
    engine.reset()
    policy = agents.load(player, num_players, seed=1)
    views = []
    for step in range(steps):
        views.append(engine.observe(np.full(32, step % num_players)))
        engine.step(policy.act(engine.observe(), engine.legal_mask()))
    return np.concatenate(views)


@pytest.mark.parametrize("num_players", [2, 3, 4, 6, 10])
@pytest.mark.parametrize("rules", [{}, ALL_HOUSE_RULES], ids=["default rules", "every house rule"])
@pytest.mark.parametrize("player", ["heuristic", "random-play"])
def test_the_compiled_replay_equals_the_numpy_replay(num_players, rules, player):
    views = views_of_rounds(num_players, rules, player, steps=150)
    features = history_features(views, num_players, num_players - 1)
    others = num_players - 1
    seats = features[:, : others * SEAT_FEATURE_SIZE].reshape(len(views), others, SEAT_FEATURE_SIZE)
    expected = reference_features(views, num_players)
    assert expected.any(axis=(1, 2)).mean() > 0.9  # rounds under way, not empty histories
    np.testing.assert_array_equal(seats, expected)
