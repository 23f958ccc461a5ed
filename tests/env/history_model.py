"""The round's public history as docs/environment.md describes it, rebuilt in plain Python from each step's events.

``HistoryModel`` follows one game of a ``VectorEngine``: after every ``reset`` and ``step`` it reads the game's
events (``engine.events(g)``) and keeps the round's public events with absolute seats; ``view(seat)`` is what the
observation's ``history`` field must then be for that seat. It is written from the documentation's table of
event kinds, not from ``kernel.record_history``.
"""

from __future__ import annotations

import numpy as np

from hpuno_env import kernel

RING = 64  # the history field holds the last 64 events
KINDS = {"play": 1, "draw": 2, "keep": 3, "color": 4, "forced_draw": 5, "sorting_hat": 6, "uno": 7, "catch": 8,
         "pass": 9, "challenge": 10, "accept": 11, "stack": 12, "jump": 13, "swap": 14, "rotate": 15, "reshuffle": 16}
SEAT_VALUED = {"catch", "pass", "swap"}


class HistoryModel:
    """The public events of one game's round: (kind, seat or None, card code or None, value) tuples, seats absolute."""

    def __init__(self, num_players: int):
        self.num_players = num_players
        self.events: list[list] = []

    def after_step(self, step_events: list[tuple[int, int, int, int]]) -> None:
        """Take in one step's (or reset's) events."""
        starts = [i for i, event in enumerate(step_events) if event[0] == kernel.EV_NEW_ROUND]
        if starts:  # a new round: its history starts empty, with the events after the deal
            self.events = []
            step_events = step_events[starts[-1] + 1:]
        drawing = None  # this step's draw by choice, while it goes on
        after_stack_or_jump = False
        for kind, a, b, c in step_events:
            if kind == kernel.EV_DRAW and drawing is not None and drawing[1] == a:
                drawing[3] += 1 if b >= 0 else 0
                continue
            if kind == kernel.EV_PLAY and after_stack_or_jump:
                after_stack_or_jump = False
                continue
            entry = self._entry(kind, a, b, c)
            if entry is None:
                continue
            self.events.append(entry)
            if entry[0] == "draw":
                drawing = entry
            elif entry[0] != "reshuffle":
                drawing = None
            after_stack_or_jump = entry[0] in ("stack", "jump")

    @staticmethod
    def _entry(kind: int, a: int, b: int, c: int) -> list | None:
        """One event as the history keeps it, or None for an event it leaves out."""
        table = {
            kernel.EV_PLAY: ["play", a, b, 0],
            kernel.EV_DRAW: ["draw", a, None, 1 if b >= 0 else 0],  # the card drawn is never shown
            kernel.EV_KEEP: ["keep", a, None, 0],
            kernel.EV_COLOR: ["color", a, None, b + 1],
            kernel.EV_PENALTY: ["forced_draw", a, None, b],
            kernel.EV_HAT: ["sorting_hat", a, None, b],  # the cards drawn are never shown
            kernel.EV_UNO: ["uno", a, None, 0],
            kernel.EV_CATCH: ["catch", a, None, b],
            kernel.EV_PASS: ["pass", a, None, b],
            kernel.EV_CHALLENGE: ["challenge", a, None, 1 + c],
            kernel.EV_ACCEPT: ["accept", a, None, 1 + c],
            kernel.EV_STACK: ["stack", a, b, c],
            kernel.EV_JUMP: ["jump", a, b, 0],
            kernel.EV_SWAP: ["swap", a, None, b],
            kernel.EV_ROTATE: ["rotate", None, None, 1 if a > 0 else 2],
            kernel.EV_RESHUFFLE: ["reshuffle", None, None, min(a, 127)],
        }
        return table.get(kind)

    def view(self, seat: int) -> np.ndarray:
        """(RING * 4,) int64: the history field of seat's observation."""
        P = self.num_players
        out = np.zeros((RING, 4), np.int64)
        shown = self.events[-RING:]
        for i, (kind, actor, card, value) in enumerate(shown):
            row = RING - len(shown) + i
            out[row] = [
                KINDS[kind],
                0 if actor is None else 1 + (actor - seat) % P,
                0 if card is None else card + 1,
                1 + (value - seat) % P if kind in SEAT_VALUED else value,
            ]
        return out.reshape(-1)
