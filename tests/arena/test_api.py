"""The arena's JSON API through Starlette's TestClient: whole games, house rules, what a seat may see, watching,
replays, the leaderboard's reading, and every refusal (a 4xx naming the problem, nothing changed)."""

from __future__ import annotations

import json
import re

import pytest
from arena_helpers import LOCAL, bearer, choose, play_through
from starlette.testclient import TestClient

from agents.arena import create_app
from hpuno_env import CARD_LABELS
from hpuno_env.records import Replay, load_record

COLOURED = re.compile(r"(red|yellow|green|blue):(\d|skip|reverse|draw2)\b")
# describe_events names the wilds in words (hands and legal actions use the labels)
WILD_WORDS = {"Wild Draw Four": "wild_draw4", "Sorting Hat": "sorting_hat", "Wild": "wild"}


def new_game(client, **fields) -> dict:
    body = {"players": 2, "opponents": ["heuristic"], "seed": 0, **fields}
    response = client.post("/api/games", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_whole_game_against_the_heuristic_ends_and_is_saved_as_a_record(client, records):
    created = new_game(client, seed=3)
    assert created["seat"] == 0 and len(created["token"]) >= 20
    view, phases = play_through(client, created)
    assert view["over"] and view["legal"] == [] and view["winner"] in view["players"]
    assert view["events"] and any("won the round" in line for line in view["events"])
    for key in ("phase", "current", "hand", "top", "color", "hand_sizes", "legal", "events", "scores", "over"):
        assert key in view
    record = load_record(records / view["record"])
    assert record["outcome"] == "terminated" and record["players"] == ["you", "heuristic"]
    assert sum(1 for decision in Replay(record) if decision.seat == 0) == len(phases)


def test_a_game_under_house_rules_with_four_players_and_a_trained_opponent(client, records):
    rules = {"stacking": "mixed", "jump_in": True, "seven_zero": True, "draw_until_playable": True, "forced_play": True,
             "uno_penalty": 4, "gryffindor_color": "blue"}
    created = new_game(client, players=4, opponents=["heuristic", "ppo_4p", "random"], rules=rules, seed=5)
    view, _ = play_through(client, created)
    assert view["over"] and view["names"] == ["you", "heuristic", "ppo_4p", "random"]
    record = load_record(records / view["record"])
    assert {name: record["options"][name] for name in rules} == rules


def test_a_match_plays_rounds_until_the_target_score(client):
    view, _ = play_through(client, new_game(client, rules={"episode": "match", "target_score": 60}, seed=2))
    assert view["over"] and view["round"] >= 1 and max(view["scores"].values()) >= 60


def seen_by_seat(game) -> set[str]:
    """Card labels seat 0 may know now, read from the engine itself: its hand, the discard pile, hands a
    challenge showed it. (Its own draws end up in its hand, and what it played in the pile.)"""
    state = game.engine.game_state(0)
    seen = set(state["hands"]["player_0"]) | set(state["discard"])
    s = game.engine.state
    for owner in range(1, game.engine.num_players):
        if s.revealed_seen[0, 0, owner]:
            seen |= {CARD_LABELS[c] for c in range(len(CARD_LABELS)) if s.revealed[0, 0, owner, c]}
    return seen


def labels_in(view) -> set[str]:
    """Every card an answer names: labels anywhere in it, and the wilds as describe_events words them."""
    text = json.dumps(view)
    found = {match.group(0) for match in COLOURED.finditer(text)}
    found |= {label for label in ("wild", "wild_draw4", "sorting_hat") if re.search(rf'[":]{label}"', text)}
    found |= {label for words, label in WILD_WORDS.items() if re.search(rf"\b{words}\b(?! Draw)", text)}
    return found


@pytest.mark.parametrize("players,seed,rules", [(3, 3, {}), (4, 7, {"seven_zero": True, "jump_in": True, "stacking": "both"})])
def test_a_seat_never_sees_a_card_it_has_not_seen(client, players, seed, rules):
    created = new_game(client, players=players, opponents=["heuristic"], seed=seed, rules=rules)
    game = client.app.state.arena.games[created["game"]]
    seen: set[str] = set()
    answers = 0

    def scan(view):
        nonlocal answers
        answers += 1
        seen.update(seen_by_seat(game))
        assert not {"hands", "draw_pile", "discard", "seed", "deck"} & set(view), sorted(view)
        assert labels_in(view) <= seen, labels_in(view) - seen
        assert set(view["hand"]) <= seen

    view, _ = play_through(client, created, on_answer=scan)
    assert answers > 3 and view["over"]
    # the opponents' hands at the end were never named to the seat unless it had seen those cards
    final = game.engine.game_state(0)["hands"]
    hidden = {card for agent, cards in final.items() if agent != "player_0" for card in cards} - seen
    assert not hidden & labels_in(view)


def test_a_person_game_refuses_what_is_not_the_persons_to_do(client):
    created = new_game(client)
    headers = bearer(created["token"])
    url = f"/api/games/{created['game']}"
    before = client.get(url, headers=headers).json()
    illegal = next(f"play:{card}" for card in CARD_LABELS if f"play:{card}" not in before["legal"])
    cases = [
        ({"action": illegal}, 409, "not legal"),
        ({"action": "fly:away"}, 400, "action label"),
        ({"action": 3}, 400, "action label"),
        ({"move": "draw"}, 400, "action"),
        ({"action": "draw", "also": 1}, 400, "action"),
    ]
    for body, status, words in cases:
        response = client.post(f"{url}/actions", json=body, headers=headers)
        assert response.status_code == status and words in response.json()["error"], (body, response.text)
    for raw, status in ((b"{not json", 400), (b"[1, 2]", 400), (b'{"action": 1' + b"0" * 60 + b"}", 400),
                        (b"[" * 500 + b"]" * 500, 400), (b"[" * 5000 + b"]" * 5000, 413)):  # an action's body: 1 kB at most
        response = client.post(f"{url}/actions", content=raw, headers={**headers, "Content-Type": "application/json"})
        assert response.status_code == status and response.json()["error"], raw[:20]
    assert client.get(url, headers=headers).json() == before
    assert client.post(f"{url}/step", headers=headers).status_code == 409


def test_secrets_unknown_games_and_watching_a_person_are_refused(client):
    created = new_game(client)
    url = f"/api/games/{created['game']}"
    assert client.get(url).status_code == 401
    assert client.get(url, headers=bearer("guess")).status_code == 403
    assert client.get(url, headers={"Authorization": created["token"]}).status_code == 403
    assert client.post(f"{url}/actions", json={"action": "draw"}).status_code == 401
    other = new_game(client)
    assert client.get(url, headers=bearer(other["token"])).status_code == 403
    response = client.get("/api/games/nope", headers=bearer(created["token"]))
    assert response.status_code == 404 and "no live game" in response.json()["error"]


@pytest.mark.parametrize("body,words", [
    ({"players": 11}, "players"),
    ({"players": "two"}, "players"),
    ({"rules": {"stacking": "sometimes"}}, "stacking"),
    ({"rules": {"no_such_rule": 1}}, "no_such_rule"),
    ({"rules": [1]}, "rules"),
    ({"opponents": ["nobody-like-this"]}, "unknown agent"),
    ({"opponents": ["heuristic", "heuristic"]}, "1 agents are needed"),
    ({"opponents": "heuristic"}, "opponents"),
    ({"seed": -1}, "seed"),
    ({"seed": 1.5}, "seed"),
    ({"seed": 2**40}, "seed"),
    ({"colour": "red"}, "unknown field"),
    ({"deck": ["red:1"] * 3}, "deck"),
])
def test_a_bad_new_game_is_a_400_naming_it_and_no_game_is_made(client, body, words):
    response = client.post("/api/games", json={"players": 2, "opponents": ["heuristic"], **body})
    assert response.status_code == 400 and words in response.json()["error"], response.text
    assert client.app.state.arena.games == {}


def test_an_agent_file_that_is_not_one_is_refused(client, tmp_path):
    fake = tmp_path / "agent.safetensors"
    fake.write_bytes(b"PK\x03\x04 not an agent at all")
    response = client.post("/api/games", json={"players": 2, "opponents": [str(fake)]})
    assert response.status_code == 400 and fake.name in response.json()["error"] and str(tmp_path) not in response.json()["error"]
    assert client.post("/api/games", json={"players": 2, "opponents": [str(tmp_path)]}).status_code == 400


def test_a_stacked_deck_needs_the_arena_to_allow_it(records):
    with TestClient(create_app(records=str(records)), base_url=LOCAL) as strict:
        response = strict.post("/api/games", json={"players": 2, "deck": list(CARD_LABELS)})
        assert response.status_code == 403 and "deck" in response.json()["error"]


def test_oversized_bodies_and_the_game_cap_are_refused(records):
    with TestClient(create_app(records=str(records), max_games=2, max_body=1000), base_url=LOCAL) as small:
        response = small.post("/api/games", content=b"{" + b" " * 2000 + b"}", headers={"Content-Type": "application/json"})
        assert response.status_code == 413
        for _ in range(2):
            assert small.post("/api/games", json={"players": 2}).status_code == 200
        response = small.post("/api/games", json={"players": 2})
        assert response.status_code == 429 and "2 live games" in response.json()["error"]
    with TestClient(create_app(records=str(records), max_games=1, allow_decks=True), base_url=LOCAL) as one:
        finished, _ = play_through(one, one.post("/api/games", json={"players": 2, "seed": 3}).json())
        assert finished["over"] and one.post("/api/games", json={"players": 2}).status_code == 200  # a finished game makes room


def test_idle_games_are_dropped_and_a_started_one_is_saved(records):
    now = [0.0]
    with TestClient(create_app(records=str(records), idle_seconds=60, clock=lambda: now[0], allow_decks=True), base_url=LOCAL) as client:
        created = client.post("/api/games", json={"players": 2, "seed": 1}).json()
        headers = bearer(created["token"])
        legal = client.get(f"/api/games/{created['game']}", headers=headers).json()["legal"]
        client.post(f"/api/games/{created['game']}/actions", json={"action": choose(legal)}, headers=headers)
        now[0] = 61.0
        client.post("/api/games", json={"players": 2})  # any new game sweeps the idle ones
        assert client.get(f"/api/games/{created['game']}", headers=headers).status_code == 404
        saved = list(records.iterdir())
        assert len(saved) == 1 and load_record(saved[0])["outcome"] == "unfinished"


def test_a_watched_game_shows_every_hand_and_a_trained_agents_probabilities(client):
    created = client.post("/api/watch", json={"players": 2, "agents": ["ppo_2p", "heuristic"], "seed": 4}).json()
    headers = bearer(created["token"])
    view = client.get(f"/api/games/{created['game']}", headers=headers).json()
    assert set(view["hands"]) == {"player_0", "player_1"} and view["last_move"] is None
    moves = []
    while not view["over"] and len(moves) < 400:
        view = client.post(f"/api/games/{created['game']}/step", headers=headers).json()
        moves.append(view["last_move"])
    assert view["over"]
    trained = [move for move in moves if move["agent"] == "ppo_2p"]
    assert trained and all(move["probabilities"] is None for move in moves if move["agent"] == "heuristic")
    for move in trained:
        assert move["action"] in move["probabilities"] and abs(sum(move["probabilities"].values()) - 1) < 1e-3
    assert client.post(f"/api/games/{created['game']}/step", headers=headers).status_code == 409
    assert client.post(f"/api/games/{created['game']}/actions", json={"action": "draw"}, headers=headers).status_code == 409


def test_a_watched_search_player_shows_its_candidates_win_estimates(client):
    created = client.post("/api/watch", json={"players": 2, "agents": ["search", "heuristic"], "seed": 2}).json()
    headers = bearer(created["token"])
    searched = []
    for _ in range(60):
        move = client.post(f"/api/games/{created['game']}/step", headers=headers).json()["last_move"]
        if move["agent"] == "search" and move["win_estimates"]:
            searched.append(move)
        if len(searched) >= 2:
            break
    assert searched, "the search player searched no decision in 60 moves"
    for move in searched:
        assert move["action"] in move["win_estimates"] and len(move["win_estimates"]) >= 2
        assert all(0 <= share <= 1 for share in move["win_estimates"].values()) and move["probabilities"] is None


def test_a_record_replays_from_the_folder_or_an_upload_from_any_seat(client, records):
    view, _ = play_through(client, new_game(client, seed=3))
    opened = client.post("/api/replays", json={"file": view["record"]}).json()
    headers = bearer(opened["token"])
    assert opened["frames"] == len(opened["decisions"]) > 2
    last = opened["frames"] - 1
    spectator = client.get(f"/api/replays/{opened['replay']}/frames/{last}", headers=headers).json()
    assert spectator["over"] and set(spectator["hands"]) == {"player_0", "player_1"}
    seat = client.get(f"/api/replays/{opened['replay']}/frames/1?viewer=1", headers=headers).json()
    assert "hands" not in seat and seat["you"] == "player_1" and seat["index"] == 1
    uploaded = client.post("/api/replays", json=load_record(records / view["record"]))
    assert uploaded.status_code == 200 and uploaded.json()["frames"] == opened["frames"]
    assert client.get(f"/api/replays/{opened['replay']}/frames/0").status_code == 401
    assert client.get(f"/api/replays/{opened['replay']}/frames/{last + 1}", headers=headers).status_code == 404
    assert client.get(f"/api/replays/{opened['replay']}/frames/0?viewer=7", headers=headers).status_code == 400
    assert client.get(f"/api/replays/{opened['replay']}/frames/0?viewer=x", headers=headers).status_code == 400


def test_corrupt_or_unknown_records_are_refused(client, records):
    view, _ = play_through(client, new_game(client, seed=3))
    record = load_record(records / view["record"])
    record["rounds"][0]["decisions"][0][1] = "play:wild" if record["rounds"][0]["decisions"][0][1] != "play:wild" else "draw"
    bad_decision = client.post("/api/replays", json=record)
    assert bad_decision.status_code == 400 and "decision 1" in bad_decision.json()["error"]
    assert client.post("/api/replays", json={"format": "hpuno-record"}).status_code == 400
    assert client.post("/api/replays", json={"file": "../../etc/passwd"}).status_code == 404
    assert client.post("/api/replays", json={"file": "missing.json"}).status_code == 404
    assert client.post("/api/replays", content=b"\xff\xfe", headers={"Content-Type": "application/json"}).status_code == 400


def test_the_leaderboard_links_each_known_agent_to_its_card(client):
    card = client.get("/api/agents/ppo_2p").json()
    assert card["kind"] == "trained" and card["num_players"] == 2 and card["training"]["timesteps"] > 0
    assert "evaluation" in card and card["rules_options"]["uno_penalty"] == 2
    assert client.get("/api/agents/ppo_4p").json()["num_players"] == 4
    built_in = client.get("/api/agents/heuristic").json()
    assert built_in["kind"] == "built-in" and built_in["description"]
    for name in ("nobody", "agents/weights/ppo_2p.safetensors", "..%2F..%2Fetc%2Fpasswd"):
        answer = client.get(f"/api/agents/{name}")
        assert answer.status_code == 404, name


def test_the_leaderboard_reads_a_results_folder(tmp_path, records):
    folder = tmp_path / "results" / "small"
    folder.mkdir(parents=True)
    ranking = [{"rank": 1, "agent": "heuristic", "mu": 30.0, "sigma": 4.0}]
    (folder / "results.json").write_text(json.dumps({"ranking": ranking, "pairwise": None}))
    (folder / "tournament_ratings.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "results" / "broken").mkdir()
    (tmp_path / "results" / "broken" / "results.json").write_text("{nope")
    with TestClient(create_app(records=str(records), results=str(tmp_path / "results")), base_url=LOCAL) as client:
        assert client.get("/api/catalogue").json()["results"] == ["broken", "small"]
        data = client.get("/api/results/small").json()
        assert data["results"]["ranking"] == ranking and data["plots"] == ["tournament_ratings.png"]
        assert client.get("/api/results/small/plots/tournament_ratings.png").content.startswith(b"\x89PNG")
        assert client.get("/api/results/small/plots/results.json").status_code == 404
        assert client.get("/api/results/broken").status_code == 422
        assert client.get("/api/results/..").status_code == 404
        assert client.get("/api/results/nothing").status_code == 404


def test_the_page_and_its_files_are_served(client):
    page = client.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    for name in ("app.js", "cards.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    catalogue = client.get("/api/catalogue").json()
    assert "heuristic" in catalogue["agents"] and "stacking" in catalogue["rules"]["choices"]


def test_a_watched_game_is_saved_as_a_record_when_it_ends_and_replays(client, records):
    created = client.post("/api/watch", json={"players": 3, "agents": ["heuristic", "random", "heuristic"], "seed": 6}).json()
    headers = bearer(created["token"])
    view = client.get(f"/api/games/{created['game']}", headers=headers).json()
    while not view["over"]:
        assert view["record"] is None and not list(records.glob("*.json"))  # saved when it ends, not before
        view = client.post(f"/api/games/{created['game']}/step", headers=headers).json()
    record = load_record(records / view["record"])
    assert record["outcome"] == "terminated" and record["players"] == ["heuristic", "random", "heuristic"]
    assert client.get("/api/catalogue").json()["records"] == [view["record"]]
    opened = client.post("/api/replays", json={"file": view["record"]}).json()
    assert opened["names"] == record["players"] and opened["frames"] == 1 + sum(1 for d in Replay(record) if d.seat is not None)
    last = client.get(f"/api/replays/{opened['replay']}/frames/{opened['frames'] - 1}", headers=bearer(opened["token"])).json()
    assert last["over"] and last["hands"] == view["hands"] and last["scores"] == view["scores"]


def test_a_seats_replay_shows_the_hands_its_challenges_showed_it_as_the_live_game_did(client, records):
    for seed in range(60):  # a game in which the person's challenge shows it a hand (choose challenges every Wild Draw Four)
        live = []
        view, _ = play_through(client, new_game(client, players=3, seed=seed), on_answer=live.append)
        if any(answer["shown"] for answer in live):
            break
    else:
        raise AssertionError("no seed in 0..59 has the person shown a hand")
    opened = client.post("/api/replays", json={"file": view["record"]}).json()
    headers = bearer(opened["token"])
    # frame k is the table after decision k: the person decided its i-th decision looking at the frame before it
    before_mine = [k - 1 for k, (_, _, seat, _) in enumerate(opened["decisions"]) if seat == 0]
    deciding = [answer for answer in live if not answer["over"]]
    assert len(before_mine) == len(deciding)
    for index, answer in zip(before_mine, deciding):
        frame = client.get(f"/api/replays/{opened['replay']}/frames/{index}?viewer=0", headers=headers).json()
        assert frame["shown"] == answer["shown"] and sorted(frame["hand"]) == sorted(answer["hand"]), index
    spectator = client.get(f"/api/replays/{opened['replay']}/frames/{before_mine[-1]}", headers=headers).json()
    assert "shown" not in spectator  # the spectator sees every hand already
