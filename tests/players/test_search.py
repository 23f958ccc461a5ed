"""The search player (agents.players.search): legal, seeded, better than a weak blueprint, under the house rules."""

from __future__ import annotations


import numpy as np
import pytest

import agents
from agents.evaluation.rounds import win_rate
from hpuno_env import VectorEngine


def positions(num_players: int, games: int = 32, steps: int = 40, seed: int = 0):
    engine = VectorEngine(games, num_players, seed=seed)
    engine.reset()
    policy = agents.load("random-play", num_players, seed=seed)
    for _ in range(steps):
        engine.step(policy.act(engine.observe(), engine.legal_mask()))
    return engine.observe(), engine.legal_mask()


@pytest.mark.parametrize("num_players", [2, 3])
def test_search_plays_legal_actions_and_repeats_under_a_seed(num_players):
    observations, masks = positions(num_players)
    first = agents.load("search", num_players, seed=3, worlds=8).act(observations, masks)
    assert masks[np.arange(len(masks)), first].all()
    again = agents.load("search", num_players, seed=3, worlds=8).act(observations, masks)
    assert np.array_equal(first, again)


@pytest.mark.parametrize("blueprint", ["heuristic", "ppo_2p"])
def test_a_closed_gate_plays_the_blueprint(blueprint):
    observations, masks = positions(2, seed=1)
    searched = agents.load("search", 2, seed=5, worlds=8, gate=1e9, blueprint=blueprint).act(observations, masks)
    assert np.array_equal(searched, agents.load(blueprint, 2, seed=5).act(observations, masks))


@pytest.mark.parametrize("num_players, rules, blueprint, belief", [
    (2, None, "ppo_2p.safetensors", "belief_2p"), (4, None, "ppo_4p.safetensors", "belief_4p"),
    (3, None, "ppo_universal.safetensors", "belief_any"),
    (2, {"deck": "classic", "stacking": "both"}, "ppo_2p_classic_stacking.safetensors", "belief_any"),
    (2, {"seven_zero": True}, "ppo_universal.safetensors", "belief_any")])
def test_with_no_options_the_search_improves_the_tables_shipped_agent_in_belief_worlds(num_players, rules, blueprint, belief):
    player = agents.load("search", num_players, seed=0, rules_options=rules)
    assert player.blueprint.source.endswith(blueprint) and belief in player.belief.describe()["source"]
    assert player.rollout == "heuristic" and player.worlds == 64 and player.gate == 2.0 and player.correct_gate
    assert agents.load("search", 2, belief="uniform").belief is None
    assert agents.load("search", 2, evidence=True).belief is None  # evidence deals the worlds instead


def test_search_improves_a_weak_blueprint():
    """Over random play, heuristic rollouts in 16 uniform worlds must find far better moves."""
    player = agents.load("search", 2, seed=0, blueprint="random", worlds=16, belief="uniform", correct_gate=False)
    result = win_rate(player, agents.load("random", 2, seed=1), num_players=2, rounds=40, seed=0)
    assert result["win_rate"] > 0.8, result
    assert player.changed > 0 and player.last_search["worlds"] == 16


def test_search_plays_under_the_house_rules():
    rules = {"stacking": "mixed", "jump_in": True, "seven_zero": True}
    player = agents.load("search", 3, seed=0, worlds=4, rules=rules)
    result = win_rate(player, agents.load("heuristic", 3, seed=1), num_players=3, rounds=12, seed=0, **rules)
    assert result["rounds"] == 12 and player.decisions > 0


@pytest.mark.parametrize("rules", [{"deck": "classic"}, {"stacking": "mixed"}, {"deck": "classic", "episode": "match"}])
def test_load_passes_the_rules_options_to_the_worlds_and_the_blueprint(rules):
    """agents.load's rules_options reach the search: worlds dealt from the game's deck, stacked by its rules."""
    player = agents.load("search", 2, seed=0, worlds=4, rules_options=rules)
    assert player.rules["deck"] == rules.get("deck", "harry_potter") and player.rules["episode"] == "round"
    result = win_rate(player, agents.load("heuristic", 2, seed=1), num_players=2, rounds=6, seed=0, **rules)
    assert result["rounds"] == 6 and player.decisions > 0
    with pytest.warns(UserWarning, match="stacking='mixed'"):  # a trained blueprint made under other rules says so
        agents.load("search", 2, seed=0, blueprint="ppo_2p", rules_options={"stacking": "mixed"})


def test_search_with_evidence_plays_legal_actions_and_deals_its_worlds_by_it():
    observations, masks = positions(2, seed=4)
    player = agents.load("search", 2, seed=3, worlds=8, evidence=True)
    chosen = player.act(observations, masks)
    assert masks[np.arange(len(masks)), chosen].all() and player.evidence and "evidence=True" in repr(player)
    with pytest.raises(ValueError, match="evidence"):
        agents.load("search", 2, evidence="yes")


def test_search_options_are_checked():
    with pytest.raises(ValueError, match="worlds"):
        agents.load("search", 2, worlds=1)
    with pytest.raises(ValueError, match="rollout"):
        agents.load("search", 2, rollout="greedy")
    with pytest.raises(ValueError, match="search"):
        agents.load("search", 2, depth=3)
    with pytest.raises(ValueError, match="takes none"):
        agents.load("heuristic", 2, worlds=8)
    assert "search" in agents.available()


def test_blueprint_rollouts_step_the_worlds_with_the_blueprint():
    observations, masks = positions(2, games=4, seed=2)
    player = agents.load("search", 2, seed=0, worlds=4, rollout="blueprint", blueprint="random-play")
    actions = player.act(observations, masks)
    assert masks[np.arange(len(masks)), actions].all()


def test_blueprint_and_heuristic_rollouts_give_the_blueprint_only_the_players_own_seat():
    observations, masks = positions(2, games=4, seed=2)
    in_worlds, calls, others = [False], [], []

    class Recorder:  # random-play, noting at each call in the worlds how many playing worlds have seat 0 to act
        inner = agents.load("random-play", 2, seed=1)

        def act(self, rows, row_masks):
            if in_worlds[0]:
                engine = next(iter(player._engines.values()))
                playing = engine.legal_mask().any(axis=1)
                calls.append((len(rows), int((engine.current_player[playing] == 0).sum())))
            return self.inner.act(rows, row_masks)

    player = agents.load("search", 2, seed=0, worlds=4, rollout="blueprint+heuristic", blueprint=Recorder())
    play_out, heuristic_act = player._play_out, player._others.act
    player._play_out = lambda *args: (in_worlds.__setitem__(0, True), play_out(*args), in_worlds.__setitem__(0, False))[1]
    player._others.act = lambda rows, row_masks: (others.append(len(rows)), heuristic_act(rows, row_masks))[1]
    actions = player.act(observations, masks)
    assert masks[np.arange(len(masks)), actions].all()
    assert calls and others and all(rows == own for rows, own in calls)


def test_a_non_finite_gate_and_unknown_rules_options_are_refused():
    for gate in (float("nan"), -1.0, "2"):
        with pytest.raises(ValueError, match="gate must be a number >= 0"):
            agents.load("search", 2, gate=gate)
    assert agents.load("search", 2, gate=float("inf")).gate == float("inf")  # never leaves the blueprint
    for name in ("search", "heuristic", "random", "ppo_2p"):
        with pytest.raises(ValueError, match="bogus"):
            agents.load(name, 2, rules_options={"bogus": 1})
        with pytest.raises(ValueError, match="stacking"):
            agents.load(name, 2, rules_options={"stacking": "sometimes"})
    with pytest.raises(TypeError, match="rules_options must be a dict"):
        agents.load("heuristic", 2, rules_options=5)


def test_search_deals_its_worlds_from_a_belief():
    """belief=...: the worlds come from the belief's odds (``world_weights``): ones for the certain belief, which
    then deals as the uniform worlds do; a learned belief's weigh kinds up and down; bad combinations refused."""
    from agents.belief import load_belief
    from agents.players.search import world_weights

    observations, masks = positions(2, seed=4)
    player = agents.load("search", 2, seed=3, worlds=8, belief="shipped")
    chosen = player.act(observations, masks)
    assert masks[np.arange(len(masks)), chosen].all() and "belief=" in repr(player)
    certain = world_weights(load_belief(2, name_or_path="certain"), observations[0])
    np.testing.assert_allclose(certain[1], 1.0, atol=1e-9)
    learned = world_weights(load_belief(2), observations[0])
    assert learned.shape == (2, 55) and (learned >= 0).all() and not np.allclose(learned[1], 1.0)
    with pytest.raises(ValueError, match="not both"):
        agents.load("search", 2, belief="shipped", evidence=True)
    with pytest.raises(ValueError, match="belief must be"):
        agents.load("search", 2, belief=3)
    with pytest.raises(ValueError, match="cannot read belief file"):
        agents.load("search", 2, belief="/no/such.safetensors")


def test_a_corrected_gate_grows_with_the_candidates_and_leaves_the_blueprint_less():
    from agents.players.search import corrected_gate

    assert corrected_gate(2.0, 2) == 2.0 and corrected_gate(float("inf"), 9) == float("inf")
    gates = [corrected_gate(2.0, count) for count in range(2, 12)]
    assert all(a < b for a, b in zip(gates, gates[1:])) and gates[3] == pytest.approx(2.528, abs=1e-3)  # Šidák, 5
    observations, masks = positions(2, games=32, seed=6)
    plain = agents.load("search", 2, seed=3, worlds=16, blueprint="random-play", gate=1.0, correct_gate=False)
    strict = agents.load("search", 2, seed=3, worlds=16, blueprint="random-play", gate=1.0, correct_gate=True)
    plain.act(observations, masks)
    strict.act(observations, masks)
    assert 0 < strict.changed < plain.changed  # the same worlds: every strict leave is a plain one too
    assert "correct_gate=True" in repr(strict)
    with pytest.raises(ValueError, match="correct_gate"):
        agents.load("search", 2, correct_gate="yes")
