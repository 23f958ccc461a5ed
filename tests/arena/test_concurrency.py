"""The arena under concurrent requests: a slow agent holds up its own game only, and one game's requests run
one at a time (none lost, none doubled), checked through the game's record, and the cap on live games holds
when games are made at once."""

from __future__ import annotations

import threading
import time

from arena_helpers import LOCAL, bearer, choose, play_through
from starlette.testclient import TestClient

from agents.arena import create_app
from hpuno_env.records import Replay, load_record

WAIT = 30  # seconds: far beyond any answer here, so a stuck server fails the test instead of hanging it


class Gated:
    """An agent that says when it starts deciding, then waits for ``release`` (a slow agent, made to order)."""

    def __init__(self, agent, entered: threading.Event, release: threading.Event):
        self.agent, self.entered, self.release = agent, entered, release

    def act(self, observations, action_masks):
        self.entered.set()
        assert self.release.wait(WAIT), "the test never released the slow agent"
        return self.agent.act(observations, action_masks)


class Sleepy:
    """An agent that takes ``seconds`` over each decision: long enough for requests to overlap."""

    def __init__(self, agent, seconds: float):
        self.agent, self.seconds = agent, seconds

    def act(self, observations, action_masks):
        time.sleep(self.seconds)
        return self.agent.act(observations, action_masks)


def in_thread(call) -> tuple[threading.Thread, list]:
    answers: list = []
    thread = threading.Thread(target=lambda: answers.append(call()), daemon=True)
    thread.start()
    return thread, answers


def test_a_slow_agent_holds_up_its_own_game_only(client):
    arena = client.app.state.arena
    slow = client.post("/api/watch", json={"players": 2, "agents": ["heuristic"], "seed": 1}).json()
    entered, release = threading.Event(), threading.Event()
    game = arena.games[slow["game"]]
    game.policies = {seat: Gated(agent, entered, release) for seat, agent in game.policies.items()}
    slow_url, slow_secret = f"/api/games/{slow['game']}", bearer(slow["token"])
    stepping, stepped = in_thread(lambda: client.post(f"{slow_url}/step", headers=slow_secret))
    assert entered.wait(WAIT)
    try:
        # while the slow game's agent thinks: another game is made, read and played, and watched games step
        other = client.post("/api/games", json={"players": 3, "opponents": ["heuristic"], "seed": 2}).json()
        view = client.get(f"/api/games/{other['game']}", headers=bearer(other["token"])).json()
        moved = client.post(f"/api/games/{other['game']}/actions", json={"action": choose(view["legal"])},
                            headers=bearer(other["token"]))
        assert moved.status_code == 200, moved.text
        assert stepping.is_alive(), "the other game was answered only once the slow agent had decided"
        watched = client.post("/api/watch", json={"players": 2, "seed": 3}).json()
        assert client.post(f"/api/games/{watched['game']}/step", headers=bearer(watched["token"])).status_code == 200
        assert client.get("/api/catalogue").status_code == 200
        # a second request to the slow game waits its turn behind the first
        reading, read = in_thread(lambda: client.get(slow_url, headers=slow_secret))
        reading.join(0.3)
        assert stepping.is_alive() and reading.is_alive() and not read
    finally:
        release.set()
    stepping.join(WAIT)
    reading.join(WAIT)
    assert stepped[0].status_code == 200 and stepped[0].json()["last_move"] is not None
    assert read[0].status_code == 200 and read[0].json()["history"] == stepped[0].json()["history"]


def test_simultaneous_moves_in_one_game_are_made_one_at_a_time(client, records):
    arena = client.app.state.arena
    created = client.post("/api/games", json={"players": 3, "opponents": ["heuristic"], "seed": 5}).json()
    game = arena.games[created["game"]]
    game.policies = {seat: Sleepy(agent, 0.01) for seat, agent in game.policies.items()}
    url, secret = f"/api/games/{created['game']}", bearer(created["token"])
    answered = 0
    for _ in range(6):  # a few rounds of 4 clicks at once on the same action
        view = client.get(url, headers=secret).json()
        if view["over"]:
            break
        action, start = choose(view["legal"]), threading.Barrier(4)

        def click(action=action, start=start):
            start.wait(WAIT)
            return client.post(f"{url}/actions", json={"action": action}, headers=secret)

        threads = [in_thread(click) for _ in range(4)]
        for thread, _ in threads:
            thread.join(WAIT)
        codes = [answers[0].status_code for _, answers in threads]
        assert codes.count(200) >= 1 and set(codes) <= {200, 409}, [answers[0].text for _, answers in threads]
        answered += codes.count(200)
    # every move answered 200 is in the record once, and the record replays (each decision legal in turn)
    decisions = [d for d in Replay(game.record()) if d.seat == 0]
    assert len(decisions) == answered
    view, _ = play_through(client, created)
    assert view["over"]
    assert sum(1 for d in Replay(load_record(records / view["record"])) if d.seat == 0) >= answered


def test_the_game_cap_holds_when_games_are_made_at_once(records):
    with TestClient(create_app(records=str(records), max_games=3), base_url=LOCAL) as client:
        start = threading.Barrier(8)

        def make():
            start.wait(WAIT)
            return client.post("/api/games", json={"players": 4, "opponents": ["heuristic"]}).status_code

        threads = [in_thread(make) for _ in range(8)]
        for thread, _ in threads:
            thread.join(WAIT)
        codes = sorted(answers[0] for _, answers in threads)
        assert codes == [200] * 3 + [429] * 5 and len(client.app.state.arena.games) == 3
        assert client.app.state.arena.making == 0
