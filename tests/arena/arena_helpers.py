"""What the arena's API and browser tests share: a person's way of choosing among the legal actions, playing a
game through the API to its end, and a real uvicorn server on a free port."""

from __future__ import annotations

import socket
import threading
import time

import uvicorn

LOCAL = "http://localhost"  # the base URL of the tests' clients: the arena answers this machine's names only

# A person who likes the interesting decisions: challenge every Wild Draw Four, play the Sorting Hat and the
# wilds when it can (so it names colours and Sorting Hat targets), call UNO, catch, then any play, then draw.
PREFERENCE = ("challenge", "play:sorting_hat", "play:wild_draw4", "play:wild", "target:1", "color:red", "color:blue",
              "uno", "catch", "stack", "jump")


def choose(legal: list[str]) -> str:
    """The action this test person takes among ``legal`` (labels), always the same for the same list."""
    for wanted in PREFERENCE:
        for label in legal:
            if label == wanted or (wanted in ("stack", "jump") and label.startswith("play:")):
                return label
    plays = [label for label in legal if label.startswith("play:")]
    return plays[0] if plays else ("draw" if "draw" in legal else legal[0])


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


def play_through(client, created: dict, on_answer=None, limit: int = 3000) -> tuple[dict, list[str]]:
    """Play a game made by POST /api/games to its end with ``choose``; returns the last view and the phases
    the person decided in. ``on_answer(view)`` sees every answer (the first GET included)."""
    headers = bearer(created["token"])
    response = client.get(f"/api/games/{created['game']}", headers=headers)
    assert response.status_code == 200, response.text
    view = response.json()
    phases = []
    for _ in range(limit):
        if on_answer:
            on_answer(view)
        if view["over"]:
            return view, phases
        assert view["legal"], view
        phases.append(view["phase"])
        response = client.post(f"/api/games/{created['game']}/actions", json={"action": choose(view["legal"])}, headers=headers)
        assert response.status_code == 200, response.text
        view = response.json()
    raise AssertionError(f"the game did not end in {limit} decisions")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def served(app, **config):
    """uvicorn serving ``app`` on a free port of 127.0.0.1 in a thread (``config``: more of ``uvicorn.Config``'s
    options, its log level "warning" unless given); yields the base URL."""
    port = free_port()
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, **{"log_level": "warning", **config}))
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uvicorn_server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    uvicorn_server.should_exit = True
    thread.join(timeout=10)
