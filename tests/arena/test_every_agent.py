"""Every agent the arena seats (``agents.available()`` less those that need options), watched at the tables it plays: each step answers, and a trained agent's
move carries its probability of each legal action (the legal ones exactly, summing to 1)."""

from __future__ import annotations

import pytest
from arena_helpers import bearer

from agents.arena.games import arena_agents
from agents.players import NEEDS_OPTIONS, SHIPPED, TrainedAgent, available
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


CASES = [(name, players, rules) for name in arena_agents() for players, rules in tables(name)]


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


def test_an_agent_that_needs_options_is_not_offered_and_is_refused_by_name(client):
    assert set(arena_agents()) == set(available()) - NEEDS_OPTIONS and NEEDS_OPTIONS <= set(available())
    assert not set(client.get("/api/catalogue").json()["agents"]) & NEEDS_OPTIONS
    for name in sorted(NEEDS_OPTIONS):
        answer = client.post("/api/watch", json={"players": 2, "agents": [name, "heuristic"], "seed": 7})
        assert answer.status_code == 400 and "needs options" in answer.json()["error"], answer.text
