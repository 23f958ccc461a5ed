"""What the arena's API and browser tests share: a person's way of choosing among the legal actions, and
playing a game through the API to its end."""

from __future__ import annotations

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
