"""Every agent ``agents.available()`` names, watched at the tables it plays: each step answers, and a trained agent's
move carries its probability of each legal action (the legal ones exactly, summing to 1)."""

from __future__ import annotations

import pytest
from arena_helpers import bearer

from agents.players import SHIPPED, TrainedAgent, available
from agents.players.trained import NOT_GAME_RULES, is_universal

STEPS = 16  # decisions watched per table: every agent of the table decides several times


def tables(name: str) -> list[tuple[int, dict]]:
    """(players, rules) of the tables an agent plays: a trained agent's player count under the rules it trained
    under (a universal one at 2 and 4 players, defaults and its other rules); a built-in player at 2 and 4."""
    if name not in SHIPPED:
        return [(2, {}), (4, {})]
    metadata = TrainedAgent.load(SHIPPED[name], 2 if "4p" not in name else 4).metadata
    if is_universal(metadata):
        return [(2, {}), (4, {}), (4, {"stacking": "both", "jump_in": True, "seven_zero": True})]
    rules = {key: value for key, value in metadata["rules_options"].items() if key not in NOT_GAME_RULES}
    return [(metadata["num_players"], rules)]


CASES = [(name, players, rules) for name in available() for players, rules in tables(name)]


@pytest.mark.parametrize("name,players,rules", CASES, ids=[f"{n}-{p}p-{len(r)}rules" for n, p, r in CASES])
def test_every_agent_is_watched_with_its_probabilities(client, name, players, rules):
    created = client.post("/api/watch", json={"players": players, "agents": [name, "heuristic"] + ["random"] * (players - 2),
                                              "rules": rules, "seed": 7})
    assert created.status_code == 200, created.text
    url, secret = f"/api/games/{created.json()['game']}", bearer(created.json()["token"])
    view = client.get(url, headers=secret).json()
    moves = decided = 0
    while not view["over"] and moves < STEPS:
        legal = set(view["legal"])
        answer = client.post(f"{url}/step", headers=secret)
        assert answer.status_code == 200, answer.text
        view = answer.json()
        move = view["last_move"]
        moves += 1
        if move["agent"] != name or name not in SHIPPED:
            assert move["probabilities"] is None, move
            continue
        decided += 1
        shares = move["probabilities"]
        assert set(shares) == legal and move["action"] in shares, (shares, legal)
        assert abs(sum(shares.values()) - 1) <= 5e-5 * len(shares) + 1e-9, shares  # each share rounded to 4 places
        assert all(0 <= share <= 1 for share in shares.values())
        assert shares[move["action"]] == max(shares.values()), move  # the greedy agent's choice: its likeliest action
    assert moves == STEPS or view["over"]
    assert decided or name not in SHIPPED, f"{name} made no decision in {moves}"
