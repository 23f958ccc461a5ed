"""The universal observation (``hpuno_env.universal``) and the mixture env (``hpuno_env.mixture_env``).

The mapping is checked field by field over random engine positions of every player count and random rules: each
per-count field lands where ``universal_layout`` puts it, the seats a table lacks are zeros with presence 0, and the
table fields say the player count and the rules. The mixture env trains a MaskablePPO on 2-, 3- and 6-player
tables at once and pays episodes at every table.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hpuno_env import VectorEngine
from hpuno_env.cards import COLORS
from hpuno_env.encoding import FIELDS_ADDED_IN_VERSION, observation_layout, observation_size, observation_size_in_version
from hpuno_env.mixture_env import HeuristicPolicy, HPUnoMixtureVecEnv, MixtureTable
from hpuno_env.options import UNO_CATCH_MODES
from hpuno_env.seat_batch import UniformRandomPolicy
from hpuno_env.universal import (
    MAX_OTHERS, universal_layout, universal_observation, universal_positions, universal_scale, universal_size,
    universal_table_row,
)

SETTINGS = dict(deadline=None, database=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
TABLE_FIELDS = ["other_present", "player_count", "uno_penalty", "uno_catch", "play_rules", "gryffindor_color", "match_rules"]


@st.composite
def rules_st(draw):
    return {
        "uno_penalty": draw(st.integers(0, 6)),
        "uno_catch": draw(st.sampled_from(UNO_CATCH_MODES)),
        "wd4_bluffing": draw(st.booleans()),
        "two_player_reverse_skips": draw(st.booleans()),
        "voluntary_draw": draw(st.booleans()),
        "gryffindor_color": draw(st.sampled_from(COLORS)),
        "scoring": draw(st.sampled_from(["winner", "lowest"])),
        "episode": draw(st.sampled_from(["round", "match"])),
        "reward": draw(st.sampled_from(["win", "points"])),
        "target_score": draw(st.integers(1, 400)),
        "deck": draw(st.sampled_from(["harry_potter", "classic"])),
        "stacking": draw(st.sampled_from(["none", "draw2", "draw4", "both", "mixed"])),
        "jump_in": draw(st.booleans()),
        "seven_zero": draw(st.booleans()),
        "draw_until_playable": draw(st.booleans()),
        "forced_play": draw(st.booleans()),
    }


def random_positions(num_players: int, rules: dict, seed: int, steps: int, games: int = 16) -> VectorEngine:
    engine = VectorEngine(num_games=games, num_players=num_players, seed=seed, **rules)
    engine.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        mask = engine.legal_mask()
        engine.step((rng.random(mask.shape) * mask).argmax(axis=1))
    return engine


# The fields of ten players' observation in layout 3, the universal layout's base: it never holds a later field.
BASE = [name for name in observation_layout(10) if name not in FIELDS_ADDED_IN_VERSION[4]]


def test_the_layout_is_ten_players_then_the_table_fields():
    layout, ten = universal_layout(), observation_layout(10)
    assert list(layout) == BASE + TABLE_FIELDS
    assert all(layout[name] == ten[name] for name in BASE)
    base_size = observation_size_in_version(10, 3)
    assert universal_size() == max(piece.stop for piece in layout.values()) == base_size + sum(
        layout[name].stop - layout[name].start for name in TABLE_FIELDS)
    assert universal_scale().shape == (universal_size(),)
    assert (universal_scale()[:base_size] == __import__("hpuno_env").encoding.observation_scale(10)[:base_size]).all()


@pytest.mark.parametrize("num_players", range(2, 11))
def test_positions_are_one_to_one_and_in_order(num_players):
    positions = universal_positions(num_players)
    assert positions.shape == (observation_size(num_players),)
    kept = positions[: observation_size_in_version(num_players, 3)]
    assert (np.diff(kept) > 0).all() and kept[-1] < observation_size_in_version(10, 3)
    assert (positions[len(kept):] == -1).all()  # the history: not in the universal layout


@settings(**SETTINGS)
@given(num_players=st.integers(2, 10), rules=rules_st(), seed=st.integers(0, 2**31), steps=st.integers(0, 60))
def test_every_field_lands_where_documented(num_players, rules, seed, steps):
    engine = random_positions(num_players, rules, seed, steps)
    layout, per_count = universal_layout(), observation_layout(num_players)
    for seat in range(num_players):
        observations = engine.observe(np.full(engine.num_games, seat))
        universal = universal_observation(observations, num_players, rules)
        assert universal.shape == (engine.num_games, universal_size()) and universal.dtype == np.int8
        for name, piece in per_count.items():
            if name not in layout:
                continue
            field, size = universal[:, layout[name]], piece.stop - piece.start
            np.testing.assert_array_equal(field[:, :size], observations[:, piece], err_msg=name)
            # A per-seat field has nine seats' blocks: those of seats the table lacks are zero.
            assert not field[:, size:].any(), f"{name}: padded seats are not zero"
        check_table_fields(universal, num_players, rules)
        history = observations[:, per_count["history"]].astype(np.int64).sum()
        assert universal.astype(np.int64).sum() == observations.astype(np.int64).sum() - history + table_sum(num_players, rules) * len(universal)


def table_sum(num_players: int, rules: dict) -> int:
    return int(universal_table_row(num_players, rules).astype(np.int64).sum())


def check_table_fields(universal: np.ndarray, num_players: int, rules: dict) -> None:
    layout = universal_layout()

    def field(name):
        values = universal[:, layout[name]]
        assert (values == values[0]).all(), f"{name} differs between rows of one table"
        return values[0].tolist()

    assert field("other_present") == [1] * (num_players - 1) + [0] * (MAX_OTHERS - num_players + 1)
    assert field("player_count") == [int(count == num_players) for count in range(2, 11)]
    assert field("uno_penalty") == [rules.get("uno_penalty", 2)]
    assert field("uno_catch") == [int(mode == rules.get("uno_catch", "window")) for mode in UNO_CATCH_MODES]
    assert field("play_rules") == [int(rules.get(name, True)) for name in ("wd4_bluffing", "two_player_reverse_skips", "voluntary_draw")]
    assert field("gryffindor_color") == [int(color == rules.get("gryffindor_color", "red")) for color in COLORS]
    assert field("match_rules") == [int(rules.get("scoring") == "lowest"), int(rules.get("episode") == "match"), int(rules.get("reward") == "points")]


@pytest.mark.parametrize("num_players", [2, 5, 10])
def test_the_default_rules_and_a_rules_options_object_give_the_same_row(num_players):
    from hpuno_env.options import RulesOptions

    observations = random_positions(num_players, {}, 3, 20).observe()
    default = universal_observation(observations, num_players)
    assert (default == universal_observation(observations, num_players, RulesOptions())).all()
    assert (default == universal_observation(observations.astype(np.int64), num_players, {})).all()
    check_table_fields(default, num_players, {})


def test_bad_input_is_refused():
    observations = random_positions(3, {}, 0, 0).observe()
    with pytest.raises(ValueError, match=r"shape \(N, 710\) for 4 players, got \(16, 642\)"):
        universal_observation(observations, 4)
    with pytest.raises(ValueError, match="unknown rules option"):
        universal_observation(observations, 3, {"colour": "red"})
    with pytest.raises(ValueError, match="num_players"):
        universal_observation(observations, 11)
    with pytest.raises(ValueError, match="observations"):
        universal_observation(observations.astype(np.float32), 3)
    with pytest.raises(ValueError, match="rules must be"):
        universal_observation(observations, 3, "classic")


# ---------------------------------------------------------------- the mixture env


def test_the_mixture_env_steps_every_table_in_universal_observations():
    tables = [MixtureTable(2, 4), MixtureTable(3, 4, {"uno_penalty": 4}), MixtureTable(6, 4, {"stacking": "both", "jump_in": True})]
    env = HPUnoMixtureVecEnv(tables, seed=5, scale_observations=True)
    assert env.num_envs == 12 and env.observation_space.shape == (universal_size(),)
    env.seed(5)
    observations = env.reset()
    rng = np.random.default_rng(0)
    layout = universal_layout()
    for _ in range(300):
        masks = env.action_masks()
        assert masks.shape == (12, 75) and masks.any(axis=1).all()
        observations, rewards, dones, infos = env.step((rng.random(masks.shape) * masks).argmax(axis=1))
        assert observations.shape == (12, universal_size()) and observations.dtype == np.float32
        counts = observations[:, layout["player_count"]].argmax(axis=1) + 2
        assert counts.tolist() == [2] * 4 + [3] * 4 + [6] * 4
        for game in np.flatnonzero(dones):
            assert infos[game]["table"] == game // 4 and infos[game]["terminal_observation"].shape == (universal_size(),)
    stats = env.table_stats()
    assert [row["num_players"] for row in stats] == [2, 3, 6] and all(row["episodes"] > 0 for row in stats)
    assert observations[4, layout["uno_penalty"]][0] == pytest.approx(1.0)  # 4 cards, scaled by 1/4


def test_the_mixture_env_replays_with_a_seed_and_takes_opponent_factories():
    def run(opponent):
        env = HPUnoMixtureVecEnv([2, 4], num_envs_per_table=3, opponent=opponent, seed=1, observation_dtype=np.int8)
        env.seed(9)
        seen = [env.reset()]
        for _ in range(20):
            masks = env.action_masks()
            seen.append(env.step(masks.argmax(axis=1))[0])
        return np.stack(seen)

    assert (run(None) == run(None)).all()
    made = []

    def factory(num_players, rules, seed):
        made.append(num_players)
        return HeuristicPolicy(num_players, seed)

    assert (run(factory) == run(None)).all() and made == [2, 4]
    run(UniformRandomPolicy(seed=0))  # one policy, no player count: plays every table
    with pytest.raises(ValueError, match="opponent must be"):
        HPUnoMixtureVecEnv([2], opponent=3)
    with pytest.raises(ValueError, match="num_players"):
        HPUnoMixtureVecEnv([1])
    with pytest.raises(ValueError, match="unknown rules option"):
        HPUnoMixtureVecEnv([MixtureTable(2, 4, {"colour": 1})])


def test_maskable_ppo_learns_on_a_mixture_and_is_paid_at_every_table():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.vec_env import VecMonitor

    env = HPUnoMixtureVecEnv([2, 3, 6], num_envs_per_table=16, seed=0, scale_observations=True)
    paid_at = []

    class Episodes(BaseCallback):
        def _on_step(self) -> bool:
            paid_at.extend(info["table"] for info in self.locals["infos"] if "episode" in info)
            return True

    model = MaskablePPO("MlpPolicy", VecMonitor(env), n_steps=16, batch_size=256, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]}, device="cpu")
    model.learn(3 * 16 * 16 * 2, callback=Episodes())
    assert model.num_timesteps == 3 * 16 * 16 * 2
    assert set(paid_at) == {0, 1, 2}, f"episodes paid at tables {sorted(set(paid_at))}"
    assert all(row["episodes"] > 0 for row in env.table_stats())


def test_wins_only_pays_a_won_round_1_and_nothing_else_on_the_same_games():
    def rewards_of(wins_only):
        env = HPUnoMixtureVecEnv([2, 4], num_envs_per_table=4, seed=3, wins_only=wins_only)
        env.reset()
        paid, ended = [], []
        for _ in range(400):
            _, rewards, dones, _ = env.step(env.action_masks().argmax(axis=1))
            paid.append(rewards)
            ended.append(dones)
        return np.array(paid), np.array(ended), env.table_stats()

    plain, ended, plain_stats = rewards_of(False)
    wins, ended_too, stats = rewards_of(True)
    assert (ended == ended_too).all() and (plain < 0).any()  # the same games; some rounds lost
    np.testing.assert_array_equal(wins, np.maximum(plain, 0.0))
    assert [row["wins"] for row in stats] == [row["wins"] for row in plain_stats]
    with pytest.raises(ValueError, match="wins_only"):
        HPUnoMixtureVecEnv([2], wins_only="yes")
