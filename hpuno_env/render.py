"""Pictures of a game for people: the engine's events in words, an ANSI table, an RGB image.

Everything here reads a ``game_state()`` dict and the engine's event tuples
(``kernel.EV_*``); nothing here knows the rules.
"""

from __future__ import annotations

import numpy as np

from . import kernel
from .cards import CARD_LABELS, COLORS

_PENALTY_REASONS = {
    kernel.REASON_DRAW2: "for a Draw Two",
    kernel.REASON_WD4: "for a Wild Draw Four",
    kernel.REASON_GUILTY: "as the bluff was caught",
    kernel.REASON_INNOCENT: "for a failed challenge",
    kernel.REASON_UNO: "for not calling UNO",
    kernel.REASON_START: "for the starting Draw Two",
}


def card_name(code: int) -> str:
    label = CARD_LABELS[code]
    return {"wild": "Wild", "wild_draw4": "Wild Draw Four", "sorting_hat": "Sorting Hat"}.get(label, label)


HISTORY_LINES = 8  # the recent events a picture of the table lists
HISTORY_EVENTS = 4 * HISTORY_LINES  # events kept to write them (a colour named joins its play's line)


def history_lines(events, agents, viewer: int | None) -> list[str]:
    """The last HISTORY_LINES sentences of recent events, as seat ``viewer`` saw them."""
    return describe_events(events, agents, viewer)[-HISTORY_LINES:]


def describe_events(events, agents, viewer: int | None = None) -> list[str]:
    """Turn one step's events into sentences as seat ``viewer`` saw them (None: a spectator, who sees no
    drawn card). A drawn card, and the card that ended a Sorting Hat's draw, are named only to their
    drawer; the rest of the table saw only how many cards were drawn."""
    lines: list[str] = []
    for kind, a, b, c in events:
        who = agents[a] if 0 <= a < len(agents) else ""
        if kind == kernel.EV_PLAY:
            lines.append(f"{who} played {card_name(b)}")
        elif kind == kernel.EV_COLOR:
            if lines and lines[-1].startswith(f"{who} played"):
                lines[-1] += f" ({COLORS[b]})"
            else:
                lines.append(f"{who} named {COLORS[b]}")
        elif kind == kernel.EV_DRAW:
            seen = card_name(b) if (viewer == a and b >= 0) else ("nothing" if b < 0 else "a card")
            lines.append(f"{who} drew {seen}")
        elif kind == kernel.EV_KEEP:
            lines.append(f"{who} kept the drawn card")
        elif kind == kernel.EV_TARGET:
            lines.append(f"{who} sent the Sorting Hat to {agents[b]}")
        elif kind == kernel.EV_HAT:
            if c < 0:
                until = "and the piles ran out"
            else:
                until = f"until {card_name(c)}" if viewer == a else "until a Gryffindor card"
            lines.append(f"{who} drew {b} {until}")
        elif kind == kernel.EV_PENALTY:
            lines.append(f"{who} drew {b} {_PENALTY_REASONS.get(c, '')}".rstrip())
        elif kind == kernel.EV_SKIPPED:
            lines.append(f"{who} was skipped")
        elif kind == kernel.EV_UNO:
            lines.append(f"{who} called UNO!")
        elif kind == kernel.EV_CATCH:
            lines.append(f"{who} caught {agents[b]} without UNO")
        elif kind == kernel.EV_PASS:
            lines.append(f"{who} let {agents[b]} go")
        elif kind == kernel.EV_CHALLENGE:
            lines.append(f"{who} challenged {agents[b]}: {'guilty' if c else 'innocent'}")
        elif kind == kernel.EV_ACCEPT:
            lines.append(f"{who} accepted the {'Draw Two' if c else 'Wild Draw Four'}")
        elif kind == kernel.EV_RESHUFFLE:
            lines.append(f"the discard pile ({a} cards) was shuffled into the draw pile")
        elif kind == kernel.EV_ROUND_END:
            lines.append(f"{who} won the round, scoring {b} points")
        elif kind == kernel.EV_MATCH_END:
            lines.append(f"{who} won the match")
        elif kind == kernel.EV_NEW_ROUND:
            lines.append(f"round {a}: {agents[b]} dealt, starting card {card_name(c)}")
        elif kind == kernel.EV_WD4_RETURN:
            lines.append("a starting Wild Draw Four went back into the pile")
        elif kind == kernel.EV_TRUNCATED:
            lines.append("the round hit max_turns and was cut short")
        elif kind == kernel.EV_DIRECTION:
            lines.append("play now goes " + ("left" if a > 0 else "right"))
        elif kind == kernel.EV_STACK:
            lines.append(f"{who} stacked on {c} cards to draw")
        elif kind == kernel.EV_JUMP:
            lines.append(f"{who} jumped in")
        elif kind == kernel.EV_NO_JUMP:
            lines.append(f"{who} did not jump in")
        elif kind == kernel.EV_SWAP:
            lines.append(f"{who} swapped hands with {agents[b]}")
        elif kind == kernel.EV_ROTATE:
            lines.append("every hand passed " + ("left" if a > 0 else "right"))
    return lines


_ANSI = {"red": "\x1b[31m", "yellow": "\x1b[33m", "green": "\x1b[32m", "blue": "\x1b[34m"}
_ANSI_RESET = "\x1b[0m"


def _paint(label: str, color: bool) -> str:
    hue = label.split(":")[0]
    return f"{_ANSI[hue]}{label}{_ANSI_RESET}" if color and hue in _ANSI else label


def direction_text(direction: int) -> str:
    """Play's direction in the rules' words (left: to the next seat up), with an arrow along the seat numbers."""
    return "left ->" if direction == 1 else "right <-"


def render_ansi(state: dict, viewer: str | None, history: list[str], color: bool = False) -> str:
    """The table as ``viewer`` sees it: the top card and colour, every hand size, the
    viewer's own hand, whose turn, and the last events in words."""
    top = _paint(state["top"], color)
    current_color = state["color"] or "(to be named)"
    lines = [
        f"round {state['round']}  dealer {state['dealer']}  play goes {direction_text(state['direction'])}  phase {state['phase']}",
        f"top card {top}  colour {_paint(current_color, color) if state['color'] else current_color}  "
        f"draw pile {len(state['draw_pile'])}  discards {len(state['discard'])}"
        + (f"  pending draw {state['pending_draw']}" if state.get("pending_draw") else ""),
    ]
    for agent, hand in state["hands"].items():
        marks = []
        if agent == state["current"]:
            marks.append("to act")
        if state["uno_called"][agent]:
            marks.append("UNO")
        mark = f" [{', '.join(marks)}]" if marks else ""
        lines.append(f"  {agent}: {len(hand):3d} cards, {state['scores'][agent]:4d} points{mark}")
    if viewer is not None:
        hand = " ".join(_paint(label, color) for label in state["hands"][viewer])
        lines.append(f"{viewer}'s hand: {hand}")
    if history:
        lines.append("last events:")
        lines.extend(f"  {line}" for line in history)
    return "\n".join(lines)


_RGB = {
    "red": (200, 40, 40),
    "yellow": (230, 190, 30),
    "green": (40, 150, 60),
    "blue": (40, 80, 200),
    None: (30, 30, 30),
}


def render_rgb(state: dict, viewer: str | None, history: list[str]) -> np.ndarray:
    """A picture of the table (H, W, 3) uint8, drawn with Pillow."""
    from PIL import Image, ImageDraw  # here, not at the top: import hpuno_env stays quick without Pillow's load

    width, height = 960, 540
    image = Image.new("RGB", (width, height), (20, 90, 50))
    draw = ImageDraw.Draw(image)

    def card(x, y, label, w=56, h=84):
        hue = label.split(":")[0] if ":" in label else None
        draw.rounded_rectangle((x, y, x + w, y + h), radius=8, fill=_RGB.get(hue, _RGB[None]), outline=(255, 255, 255), width=2)
        text = label.split(":")[1] if ":" in label else {"wild": "W", "wild_draw4": "W+4", "sorting_hat": "HAT"}[label]
        draw.text((x + 6, y + h // 2 - 6), text, fill=(255, 255, 255))

    card(440, 180, state["top"], w=80, h=120)
    draw.rounded_rectangle((540, 180, 620, 300), radius=8, fill=(60, 60, 60), outline=(255, 255, 255), width=2)
    draw.text((552, 232), f"{len(state['draw_pile'])} left", fill=(255, 255, 255))
    named = state["color"] or "?"
    draw.ellipse((380, 220, 420, 260), fill=_RGB.get(state["color"], _RGB[None]), outline=(255, 255, 255))
    draw.text((372, 266), f"colour {named}", fill=(255, 255, 255))
    draw.text((10, 10), f"round {state['round']}  phase {state['phase']}  play goes {direction_text(state['direction'])}", fill=(255, 255, 255))
    for i, (agent, hand) in enumerate(state["hands"].items()):
        marker = ">" if agent == state["current"] else " "
        uno = " UNO" if state["uno_called"][agent] else ""
        draw.text((10, 40 + 18 * i), f"{marker} {agent}: {len(hand)} cards, {state['scores'][agent]} pts{uno}", fill=(255, 255, 255))
    if viewer is not None:
        hand = state["hands"][viewer]
        step = min(60, (width - 40 - 56) // max(1, len(hand) - 1))  # the last card's 56 pixels inside the margin
        for i, label in enumerate(hand):
            card(20 + i * step, height - 100, label)
        draw.text((20, height - 120), f"{viewer}'s hand", fill=(255, 255, 255))
    for i, line in enumerate(history[-8:]):
        draw.text((660, 40 + 18 * i), line[:48], fill=(255, 255, 220))
    return np.asarray(image, dtype=np.uint8)
