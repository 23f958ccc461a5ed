"""The arena under hostile or careless requests: what it loads, keeps and writes stays bounded, a refused request
changes nothing, and a bad parameter is a 4xx naming it."""

from __future__ import annotations

import json
import os
import shutil
import threading
import tracemalloc
from urllib.parse import quote

import numpy as np
import pytest
from arena_helpers import LOCAL, bearer, play_through
from starlette.testclient import TestClient

from agents.arena import create_app, server

from agents.arena.games import MAX_SHELVED, ReplaySession
from agents.players import SHIPPED, TrainedAgent, load
from hpuno_env import RulesOptions, VectorEngine
from hpuno_env.records import Recorder, load_record, replay

UNIVERSAL = SHIPPED["ppo_universal"]


@pytest.fixture
def loads(monkeypatch):
    """Every agent file read (TrainedAgent.load), by path."""
    read = []
    original = TrainedAgent.load.__func__

    def counted(cls, path, *args, **kwargs):
        read.append(path)
        return original(cls, path, *args, **kwargs)

    monkeypatch.setattr(TrainedAgent, "load", classmethod(counted))
    return read


def spellings(path: str, tmp_path) -> list[str]:
    """Names of one file: the path, with doubled slashes, through a symbolic link, with a ./ in it."""
    link = tmp_path / "link.safetensors"
    link.symlink_to(path)
    folder, name = os.path.split(path)
    return [path, "/" + path, "//" + path, str(link), os.path.join(folder, ".", name), os.path.join(folder, "..", os.path.basename(folder), name)]


def test_every_spelling_of_one_agent_file_shares_one_network(client, tmp_path, loads):
    networks = set()
    for name in [*spellings(UNIVERSAL, tmp_path), "ppo_universal"]:
        created = client.post("/api/watch", json={"players": 3, "agents": [name, "heuristic", name], "seed": 1})
        assert created.status_code == 200, created.text
        game = client.app.state.arena.games[created.json()["game"]]
        networks |= {id(game.policies[0].network), id(game.policies[2].network)}
    assert len(networks) == 1 and len(loads) == 1 and len(client.app.state.arena.shelf) == 1


def test_a_table_refused_for_one_name_loads_no_agent(client, tmp_path, loads):
    names = spellings(UNIVERSAL, tmp_path)
    for count in range(60):
        body = {"players": 3, "opponents": [names[count % len(names)], "nobody-like-this"]}
        response = client.post("/api/games", json=body)
        assert response.status_code == 400 and "nobody-like-this" in response.json()["error"], response.text
    assert loads == [] and len(client.app.state.arena.shelf) == 0 and client.app.state.arena.games == {}


def test_the_shelf_keeps_the_most_recently_used_networks_only(client, tmp_path):
    copies = []
    for index in range(MAX_SHELVED + 4):
        copies.append(str(tmp_path / f"copy{index}.safetensors"))
        shutil.copyfile(SHIPPED["ppo_2p"], copies[-1])
        assert client.post("/api/watch", json={"players": 2, "agents": [copies[-1], "heuristic"]}).status_code == 200
    assert len(client.app.state.arena.shelf) == MAX_SHELVED


def test_an_agent_file_changed_on_disk_is_read_again(client, tmp_path, loads):
    path = tmp_path / "agent.safetensors"
    shutil.copyfile(SHIPPED["ppo_2p"], path)
    assert client.post("/api/watch", json={"players": 2, "agents": [str(path), "heuristic"]}).status_code == 200
    shutil.copyfile(SHIPPED["ppo_2p_classic_stacking"], path)
    created = client.post("/api/watch", json={"players": 2, "agents": [str(path), "heuristic"]}).json()
    assert len(loads) == 2
    game = client.app.state.arena.games[created["game"]]
    assert game.policies[0].metadata["rules_options"]["deck"] == "classic"


@pytest.mark.parametrize("players", [2, 4])
def test_a_universal_agent_plays_each_tables_rules_from_the_shelf(client, players):
    tables = [{}, {"stacking": "both", "jump_in": True, "uno_penalty": 4}, {"seven_zero": True, "gryffindor_color": "green"}]
    for rules in tables:
        created = client.post("/api/watch", json={"players": players, "agents": ["ppo_universal"], "rules": rules, "seed": 3}).json()
        game = client.app.state.arena.games[created["game"]]
        fresh = load("ppo_universal", num_players=players, rules_options=rules)
        observation, mask = game.engine.observe(), game.engine.legal_mask()
        for policy in game.policies.values():
            assert policy.rules == RulesOptions(**rules)
            assert (policy.action_probabilities(observation, mask) == fresh.action_probabilities(observation, mask)).all()


def test_the_other_rules_warning_shows_in_every_game_it_applies_to_naming_no_server_path(client):
    for _ in range(3):
        created = client.post("/api/games", json={"players": 2, "opponents": ["ppo_2p"], "rules": {"deck": "classic"}}).json()
        view = client.get(f"/api/games/{created['game']}", headers=bearer(created["token"])).json()
        assert len(view["warnings"]) == 1 and "'ppo_2p'" in view["warnings"][0] and "deck='classic'" in view["warnings"][0]
        assert os.path.dirname(SHIPPED["ppo_2p"]) not in view["warnings"][0]
    created = client.post("/api/games", json={"players": 2, "opponents": ["ppo_2p"]}).json()
    assert client.get(f"/api/games/{created['game']}", headers=bearer(created["token"])).json()["warnings"] == []


def test_an_agent_refused_for_the_table_is_named_as_asked_not_by_its_server_path(client):
    response = client.post("/api/games", json={"players": 4, "opponents": ["ppo_2p"]})
    assert response.status_code == 400 and "'ppo_2p'" in response.json()["error"]
    assert os.path.dirname(SHIPPED["ppo_2p"]) not in response.json()["error"]


# ------------------------------------------------------------ records: bounded, listed a page at a time, off the loop


def test_the_catalogue_lists_a_page_of_records_newest_first_and_the_rest_page_by_page(client, records):
    records.mkdir(exist_ok=True)
    for index in range(1200):
        (records / f"r{index:05d}.json").write_text("{}")
    (records / "notes.txt").write_text("not a record")
    catalogue = client.get("/api/catalogue").json()
    assert catalogue["records"] == [f"r{index:05d}.json" for index in range(1199, 1099, -1)] and catalogue["records_total"] == 1200
    page = client.get("/api/records", params={"start": 100, "count": 1000}).json()
    assert page["records"] == [f"r{index:05d}.json" for index in range(1099, 99, -1)] and page["total"] == 1200
    assert client.get("/api/records", params={"start": 1190}).json()["records"] == [f"r{i:05d}.json" for i in range(9, -1, -1)]
    for params in ({"count": 1001}, {"count": 0}, {"start": "-1"}, {"start": "x"}, {"start": "²"}, {"count": "1" * 4400}):
        response = client.get("/api/records", params=params)
        assert response.status_code == 400 and response.json()["error"], params


def test_listing_the_records_folder_holds_up_no_other_request(client, records, monkeypatch):
    """The folder listing is held mid-way: meanwhile a game is made."""
    records.mkdir(exist_ok=True)
    entered, release = threading.Event(), threading.Event()
    listing = {"scandir": os.scandir, "listdir": os.listdir}

    def gated(kind):
        def call(path="."):
            if os.fspath(path) == str(records):
                entered.set()
                assert release.wait(30), "the test never released the listing"
            return listing[kind](path)
        return call

    monkeypatch.setattr(os, "scandir", gated("scandir"))
    monkeypatch.setattr(os, "listdir", gated("listdir"))
    answers = []
    lister = threading.Thread(target=lambda: answers.append(client.get("/api/catalogue")), daemon=True)
    lister.start()
    try:
        assert entered.wait(30)
        made = []
        maker = threading.Thread(target=lambda: made.append(client.post("/api/games", json={"players": 2})), daemon=True)
        maker.start()
        maker.join(20)
        assert made and made[0].status_code == 200, "a new game waited for the records folder's listing"
        assert lister.is_alive()
    finally:
        release.set()
    lister.join(30)
    assert answers[0].status_code == 200


def test_the_arena_saves_at_most_max_records_of_its_own_and_says_why_a_game_is_not_saved(records):
    with TestClient(create_app(records=str(records), max_records=3), base_url=LOCAL) as client:
        views = []
        for _ in range(5):  # a watched game cut short after one turn: a record per request
            created = client.post("/api/watch", json={"players": 2, "rules": {"max_turns": 1}}).json()
            view = client.get(f"/api/games/{created['game']}", headers=bearer(created["token"])).json()
            while not view["over"]:
                view = client.post(f"/api/games/{created['game']}/step", headers=bearer(created["token"])).json()
            views.append(view)
    assert len(list(records.glob("arena-*.json"))) == 3
    assert [view["record"] is not None for view in views] == [True] * 3 + [False] * 2
    assert all("--max-records" in view["record_error"] for view in views[3:])


# ------------------------------------------------------------ replays: bounded memory, each and all together


@pytest.fixture(scope="module")
def long_record() -> dict:
    """One round of 19,990 random decisions (cut short, as a record of a long game still going): about 380 kB."""
    engine = VectorEngine(1, 4, seed=0, auto_reset=False, max_turns=100_000)
    recorder = Recorder(engine, seed=0, players=["random"] * 4)
    engine.reset(seed=0)
    recorder.after_reset()
    rng, action = np.random.default_rng(0), np.zeros(1, np.int64)
    for _ in range(19_990):
        action[0] = rng.choice(np.flatnonzero(engine.legal_mask()[0]))
        engine.step(action)
        recorder.after_step(action)
    return recorder.current_record()


def test_a_long_record_is_replayed_in_a_few_megabytes(long_record):
    tracemalloc.start()
    try:
        session = ReplaySession(long_record, "long")
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert kept < 8 * 2**20 and peak < 16 * 2**20, (kept, peak)  # every frame kept whole: about 150 MB
    assert session.outline()["frames"] == 19_991


def test_every_frame_of_a_replay_is_the_game_as_it_stood(long_record):
    session = ReplaySession(long_record, "long")
    wanted = {0, 1, 63, 64, 65, 127, 128, 5000, 19_989, 19_990}
    states = {index: state for index, state in enumerate(replay(long_record)) if index in wanted}
    for index in sorted(wanted, reverse=True) + sorted(wanted):  # backwards, then forwards
        for viewer in (None, 2):
            frame = session.frame(index, viewer)
            expected = states[index]
            assert frame["top"] == expected["top"] and frame["scores"] == expected["scores"]
            assert frame["draw_pile_size"] == len(expected["draw_pile"]) and frame["current"] == expected["current"]
            if viewer is None:
                assert frame["hands"] == expected["hands"]
            else:
                assert frame["hand"] == expected["hands"]["player_2"] and "hands" not in frame
    assert session.frame(19_990, None)["history"] and len(session.frame(5, None)["history"]) >= 6


def test_the_replays_all_together_hold_a_bounded_number_of_decisions(client, long_record, monkeypatch):
    monkeypatch.setattr(server, "MAX_REPLAY_TOTAL", 30_000)
    first = client.post("/api/replays", json=long_record)
    assert first.status_code == 200, first.text
    second = client.post("/api/replays", json=long_record)
    assert second.status_code == 429 and "30,000" in second.json()["error"]
    assert len(client.app.state.arena.replays) == 1 and client.app.state.arena.replay_frames == 19_991


@pytest.mark.parametrize("query,words", [
    ("0?viewer=%C2%B2", "viewer"), ("0?viewer=" + "1" * 4400, "viewer"), ("0?viewer=-1", "viewer"), ("0?viewer=%201", "viewer"),
    ("1" * 4400, "frame"), ("%C2%B2", "frame"), ("-1", "frame"), ("0?viewer=7", "viewer"),
])
def test_a_bad_frame_or_viewer_is_a_400_naming_it(client, query, words):
    created = client.post("/api/watch", json={"players": 2, "rules": {"max_turns": 3}, "seed": 1}).json()
    headers = bearer(created["token"])
    view = client.get(f"/api/games/{created['game']}", headers=headers).json()
    while not view["over"]:
        view = client.post(f"/api/games/{created['game']}/step", headers=headers).json()
    opened = client.post("/api/replays", json={"file": view["record"]}).json()
    response = client.get(f"/api/replays/{opened['replay']}/frames/{query}", headers=bearer(opened["token"]))
    assert response.status_code == 400 and words in response.json()["error"], response.text


# ------------------------------------------------------------ a person's deal is nobody else's


def test_a_persons_game_is_dealt_at_random_and_no_seed_can_be_chosen_for_it(records):
    with TestClient(create_app(records=str(records)), base_url=LOCAL) as client:
        arena = client.app.state.arena
        refused = client.post("/api/games", json={"players": 3, "opponents": ["heuristic"], "seed": 5})
        assert refused.status_code == 403 and "--allow-decks" in refused.json()["error"] and arena.games == {}
        assert client.get("/api/catalogue").json()["person_seeds"] is False
        created = [client.post("/api/games", json={"players": 3}).json() for _ in range(2)]
        games = [arena.games[answer["game"]] for answer in created]
        assert games[0].engine.round_deck(0) != games[1].engine.round_deck(0)
        view, _ = play_through(client, created[0])
        record = load_record(records / view["record"])
        assert record["seed"] == games[0].seed  # the seed is told once the game is over, in its record
        # a watched game with that seed deals the same cards: once the game is over, as its record shows them
        watched = client.post("/api/watch", json={"players": 3, "seed": record["seed"]}).json()
        assert arena.games[watched["game"]].engine.round_deck(0) == record["rounds"][0]["deck"]


def test_with_allow_decks_a_persons_seed_deals_as_a_watched_games(client):
    person = client.post("/api/games", json={"players": 3, "seed": 5}).json()
    watched = client.post("/api/watch", json={"players": 3, "seed": 5}).json()
    games = client.app.state.arena.games
    assert games[person["game"]].engine.round_deck(0) == games[watched["game"]].engine.round_deck(0)
    assert client.get("/api/catalogue").json()["person_seeds"] is True


# ------------------------------------------------------------ the leaderboard of one tournament's folder


def test_results_naming_one_tournaments_folder_are_read_under_every_name_the_catalogue_gives(tmp_path, records):
    folder = tmp_path / "one-tournament"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps({"ranking": [{"rank": 1, "agent": "heuristic", "mu": 30.0, "sigma": 4.0}]}))
    (folder / "tournament_ratings.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with TestClient(create_app(records=str(records), results=str(folder)), base_url=LOCAL) as client:
        names = client.get("/api/catalogue").json()["results"]
        assert len(names) == 1
        for name in names:  # as the page asks for them (a browser, as httpx, reads /api/results/. as /api/results)
            answer = client.get(f"/api/results/{quote(name)}")
            assert answer.status_code == 200 and answer.json()["plots"] == ["tournament_ratings.png"], answer.text
            assert client.get(f"/api/results/{quote(name)}/plots/tournament_ratings.png").content.startswith(b"\x89PNG")


# ------------------------------------------------------------ requests another site makes a browser send


@pytest.mark.parametrize("base,answered", [
    ("http://localhost", True), ("http://localhost:8000", True), ("http://127.0.0.1:8000", True), ("http://[::1]:8000", True),
    ("http://192.168.1.20", True), ("http://arena.lan:8000", True),  # arena.lan: given as one of the app's hosts
    ("http://evil.example", False), ("http://localhost.evil.example", False), ("http://127.0.0.1.evil.example:8000", False),
])
def test_only_this_machines_names_are_answered(records, base, answered):
    with TestClient(create_app(records=str(records), hosts=["arena.lan"]), base_url=base) as client:
        response = client.get("/api/catalogue")
        assert (response.status_code == 200) == answered, response.text
        if not answered:
            assert response.status_code == 400 and "--allow-host" in response.json()["error"]


@pytest.mark.parametrize("headers,status", [
    ({"Origin": "http://evil.example"}, 403), ({"Origin": "null"}, 403), ({"Origin": "http://localhost:9999"}, 403),
    ({"Sec-Fetch-Site": "cross-site"}, 403), ({"Content-Type": "text/plain"}, 415), ({"Content-Type": ""}, 415),
    ({"Content-Type": "application/x-www-form-urlencoded"}, 415),
    ({"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}, 200), ({"Content-Type": "application/json; charset=utf-8"}, 200),
])
def test_a_new_game_from_another_site_or_not_sent_as_json_is_refused(client, headers, status):
    body = json.dumps({"players": 2}).encode()
    for path in ("/api/games", "/api/watch"):
        response = client.post(path, content=body, headers={"Content-Type": "application/json", **headers})
        assert response.status_code == status, response.text
    assert len(client.app.state.arena.games) == (2 if status == 200 else 0)
    if status != 200:
        assert client.post("/api/replays", content=b'{"file": "x.json"}', headers={"Content-Type": "application/json", **headers}).status_code == status


# ------------------------------------------------------------ stopping the arena keeps the live games


def test_stopping_the_arena_saves_every_live_game_marked_unfinished(records):
    app = create_app(records=str(records))
    with TestClient(app, base_url=LOCAL) as client:
        played = client.post("/api/games", json={"players": 3}).json()
        view = client.get(f"/api/games/{played['game']}", headers=bearer(played["token"])).json()
        client.post(f"/api/games/{played['game']}/actions", json={"action": view["legal"][0]}, headers=bearer(played["token"]))
        watched = client.post("/api/watch", json={"players": 2}).json()
        for _ in range(3):
            client.post(f"/api/games/{watched['game']}/step", headers=bearer(watched["token"]))
        client.post("/api/watch", json={"players": 2})  # never stepped: nothing to keep
        assert not list(records.glob("*.json"))
    saved = sorted(records.glob("*.json"))
    assert sorted(path.name for path in saved) == sorted(app.state.saved_at_stop) and len(saved) == 2
    kept = {tuple(load_record(path)["players"]): load_record(path) for path in saved}
    assert {record["outcome"] for record in kept.values()} == {"unfinished"}
    assert sum(len(r["decisions"]) for r in kept[("heuristic", "heuristic")]["rounds"]) == 3


class Broken:
    """A player with a bug: its error names a file under the server's folders."""

    def act(self, observations, action_masks):
        raise RuntimeError(f"the size of tensor a must match at {os.path.join(os.path.dirname(SHIPPED['ppo_2p']), 'model.py')}")


def test_a_failure_is_answered_with_its_message_as_json_naming_no_server_folder(records):
    with TestClient(create_app(records=str(records)), base_url=LOCAL, raise_server_exceptions=False) as client:
        created = client.post("/api/watch", json={"players": 2}).json()
        client.app.state.arena.games[created["game"]].policies[0] = Broken()
        client.app.state.arena.games[created["game"]].policies[1] = Broken()
        response = client.post(f"/api/games/{created['game']}/step", headers=bearer(created["token"]))
    assert response.status_code == 500
    error = response.json()["error"]
    assert "RuntimeError: the size of tensor a must match at model.py" in error and os.path.dirname(SHIPPED["ppo_2p"]) not in error


@pytest.mark.parametrize("options,words", [
    ({"idle_seconds": float("nan")}, "idle_seconds"), ({"idle_seconds": float("inf")}, "idle_seconds"),
    ({"idle_seconds": 0}, "idle_seconds"), ({"max_games": 0}, "max_games"), ({"max_records": -1}, "max_records"),
])
def test_the_app_refuses_limits_that_are_no_limits(records, options, words):
    with pytest.raises(ValueError, match=words):
        create_app(records=str(records), **options)


def test_the_app_refuses_a_records_folder_it_cannot_write(tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(ValueError, match="cannot be written"):
        create_app(records=str(tmp_path / "a-file" / "records"))


def test_one_client_holds_at_most_max_games_per_client_live_games(records):
    app = create_app(records=str(records), max_games=10, max_games_per_client=2, allow_decks=True)
    other = TestClient(app, base_url=LOCAL, client=("10.0.0.2", 50000))  # another address
    with TestClient(app, base_url=LOCAL) as client:
        played = client.post("/api/games", json={"players": 2, "seed": 3}).json()
        assert client.post("/api/watch", json={"players": 2}).status_code == 200  # a watched game counts too
        refused = client.post("/api/games", json={"players": 2})
        assert refused.status_code == 429 and "2 live games" in refused.json()["error"]
        assert "--max-games-per-client 2" in refused.json()["error"] and len(app.state.arena.games) == 2
        assert other.post("/api/games", json={"players": 2}).status_code == 200
        assert other.post("/api/watch", json={"players": 2}).status_code == 200
        assert other.post("/api/watch", json={"players": 2}).status_code == 429
        finished, _ = play_through(client, played)
        assert finished["over"] and client.post("/api/games", json={"players": 2}).status_code == 200  # a finished game is no longer held
    assert app.state.arena.making_by_client == {}


def post_routes(routes):
    """The paths of the POST routes among ``routes``, those of included routers too."""
    for route in routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            yield from post_routes(included.routes)
        elif "POST" in (getattr(route, "methods", None) or ()):
            yield route.path


def test_every_post_route_bounds_its_body_and_an_oversized_one_changes_nothing(tmp_path):
    from agents.arena.bots import MAX_BOT_BODY_BYTES

    app = create_app(records=str(tmp_path / "records"), db=tmp_path / "arena.sqlite3", allow_decks=True)
    with TestClient(app, base_url=LOCAL) as client:
        bot = client.post("/api/bots", json={"name": "zeta"}).json()["token"]
        game = client.post("/api/games", json={"players": 2, "seed": 1}).json()
        bots_game = client.post("/api/games", json={"players": 2, "seed": 1, "opponents": ["bot:zeta"]}).json()
        watched = client.post("/api/watch", json={"players": 2}).json()
        limits = {
            ("/api/games", None): server.MAX_GAME_BODY_BYTES,
            ("/api/watch", None): server.MAX_GAME_BODY_BYTES,
            (f"/api/games/{game['game']}/actions", game["token"]): server.MAX_ACTION_BODY_BYTES,
            (f"/api/games/{bots_game['game']}/actions", bot): server.MAX_ACTION_BODY_BYTES,
            (f"/api/games/{watched['game']}/step", watched["token"]): server.MAX_BODY_BYTES,  # reads no body
            ("/api/replays", None): server.MAX_BODY_BYTES,
            ("/api/bots", None): MAX_BOT_BODY_BYTES,
        }
        posted = set(post_routes(app.routes))
        assert posted == {"/api/games", "/api/watch", "/api/games/{game_id}/actions", "/api/games/{game_id}/step",
                          "/api/replays", "/api/bots"}  # a new POST route needs its limit here
        arena = app.state.arena
        before = (len(arena.games), len(arena.replays), arena.ladder.store.players(),
                  [(g.game_id, len(g.log), g.over) for g in arena.games.values()])
        for (url, token), limit in limits.items():
            body = b'{"x": "' + b"a" * (limit - 8) + b'"}'
            headers = {"Content-Type": "application/json", **(bearer(token) if token else {})}
            assert len(body) == limit + 1
            answer = client.post(url, content=body, headers=headers)
            assert answer.status_code == 413 and f"over {limit} bytes" in answer.json()["error"], (url, answer.text)
            if limit < server.MAX_BODY_BYTES:  # a body of the limit itself is read (and refused for what it says)
                answer = client.post(url, content=body[:-3] + b'"}', headers=headers)
                assert answer.status_code == 400 and "['x']" in answer.json()["error"], (url, answer.text)
        assert before == (len(arena.games), len(arena.replays), arena.ladder.store.players(),
                          [(g.game_id, len(g.log), g.over) for g in arena.games.values()])
