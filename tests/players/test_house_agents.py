"""random-play and the heuristic under every house rule (docs/rules.md §15): legal, finished, sensible.

The default-rules behaviour of both agents is held by tests/players/test_players.py and
tests/players/test_shipped_agents.py; here the new decisions are checked: the
heuristic stacks a card it may stack (never a guilty Wild Draw Four), jumps in,
and swaps hands with the seat holding the fewest cards.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.evaluation.rounds import play_rounds, rotating_lineups
from agents.players.heuristic import HeuristicAgent
from agents.studies.house_rules_study import ALL_ON, RULES, NeverStacks, quantile_interval, study
from agents.players.random_play import RandomPlayAgent
from hpuno_env import VectorEngine, kernel
from hpuno_env.cards import ACCEPT, CARD_COLOR, CARD_RANK, NUM_CARD_TYPES, PASS, TARGET_BASE, UNO, WILD_DRAW4


@pytest.mark.parametrize("num_players", [2, 4])
@pytest.mark.parametrize("rules", list(RULES))
def test_agents_play_every_house_rule_to_the_end(rules, num_players):
    """Heuristic and random-play seated together finish every round (an illegal action would raise)."""
    policies = [HeuristicAgent(num_players, seed=0), RandomPlayAgent(num_players, seed=1)]
    results = play_rounds(policies, rotating_lineups(40, num_players), num_players, seed=3, **RULES[rules])
    assert not results.truncated.any()
    assert (results.winner >= 0).all()
    assert np.median(results.decisions) < 400, f"rounds far too long under {rules}: {np.median(results.decisions)}"


def test_heuristic_stacks_jumps_and_picks_the_smallest_hand_to_swap():
    num_players = 4
    engine = VectorEngine(num_games=64, num_players=num_players, seed=11, **ALL_ON)
    engine.reset()
    heuristic = HeuristicAgent(num_players, seed=0)
    seen = {"stack": 0, "wd4 stack": 0, "bluff refused": 0, "jump": 0, "swap target": 0}
    for _ in range(1500):
        observations, masks = engine.observe(), engine.legal_mask()
        actions = heuristic.act(observations, masks)
        s = engine.state
        for g in range(engine.num_games):
            phase, seat, action = int(s.phase[g]), int(s.current_player[g]), int(actions[g])
            hand = s.hands[g, seat]
            plays = np.flatnonzero(masks[g, :NUM_CARD_TYPES])
            call_first = masks[g, UNO] and action == UNO
            guilty = hand[CARD_COLOR == s.current_color[g]].any()  # a Wild Draw Four now would be a bluff
            if phase == kernel.STACK_PHASE and not call_first:
                draw2s = [c for c in plays if CARD_RANK[c] == 12 and CARD_COLOR[c] >= 0]
                if draw2s:
                    assert action in draw2s, "a Draw Two is stacked before anything else"
                    seen["stack"] += 1
                else:  # only a Wild Draw Four (stacking "mixed")
                    assert (action == WILD_DRAW4) == (not guilty)
                    seen["bluff refused" if guilty else "wd4 stack"] += 1
            elif phase == kernel.CHALLENGE_PHASE and masks[g, WILD_DRAW4] and not call_first:
                assert (action == WILD_DRAW4) == (not guilty)
                seen["bluff refused" if guilty else "wd4 stack"] += 1
            elif phase == kernel.JUMP_PHASE and not call_first:
                assert action != PASS and action in plays
                seen["jump"] += 1
            elif phase == kernel.TARGET and CARD_RANK[s.discard[g, s.discard_count[g] - 1]] == 7:
                sizes = s.hand_sizes[g]
                target = (seat + action - TARGET_BASE + 1) % num_players
                others = [q for q in range(num_players) if q != seat]
                assert sizes[target] == min(sizes[q] for q in others)
                seen["swap target"] += 1
        engine.step(actions)
    assert all(count > 0 for count in seen.values()), seen


def test_house_rules_study_figures_hold_together():
    result = study(RULES["all on"], 3, rounds=60, seed=1)
    assert result["rounds"] == 60 and result["truncated"] == 0
    for key in ("decisions_median", "decisions_p90", "turns_median", "turns_p90", "first_player_win",
                "heuristic_win", "round_points"):
        value, low, high = result[key]
        assert low <= value <= high, key
    assert result["turns_median"][0] <= result["decisions_median"][0]
    assert result["decisions_median"][0] <= result["decisions_p90"][0]
    assert 0 <= result["first_player_win"][0] <= 1 and result["round_points"][0] > 0


def test_quantile_interval_brackets_the_quantile():
    values = np.arange(1000)
    median, low, high = quantile_interval(values, 0.5)
    assert low < median < high and high - low < 80
    assert quantile_interval(values, 0.9)[0] == pytest.approx(899.1)


def test_the_never_stacking_heuristic_accepts_every_pending_draw():
    engine = VectorEngine(num_games=32, num_players=3, seed=5, stacking="mixed")
    engine.reset()
    agent = NeverStacks(3, seed=0)
    faced = 0
    for _ in range(600):
        masks = engine.legal_mask()
        actions = agent.act(engine.observe(), masks)
        stack = engine.state.phase == kernel.STACK_PHASE
        faced += int(stack.sum())
        assert (actions[stack] == ACCEPT).all()
        engine.step(actions)
    assert faced > 0
