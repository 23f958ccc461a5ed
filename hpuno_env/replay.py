"""``python -m hpuno_env.replay FILE``: step through a game record in the terminal, or draw it.

Shows the table after the deal and after every decision (the ANSI picture of
``render.py``, with the hand of the player to act, or of ``--viewer``), one
decision per Enter (``q`` then Enter, or end of input, stops); ``--all``
prints every step without waiting. ``--gif OUT.gif`` and ``--png DIR`` draw
the same steps with the ``rgb_array`` renderer instead (Pillow). The file is
a record from ``hpuno_env.records`` (``agents.play`` and the tournament write
them); a bad record is refused with the field or decision it breaks on.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import deque

from ._output import file_problem, folder_problem
from .records import Replay, load_record
from .render import describe_events, render_ansi, render_rgb

HISTORY_LINES = 8


def terminal_supports_color(stream=None) -> bool:
    """ANSI colours for a terminal, unless the NO_COLOR convention asks for none."""
    stream = sys.stdout if stream is None else stream
    return stream.isatty() and os.environ.get("NO_COLOR") is None


def read_line(prompt: str) -> str:
    """``input(prompt)``, with a closed stdin (``command <&-``: ``sys.stdin`` is None) taken as the end of
    the input (EOFError), like an exhausted one, rather than input()'s RuntimeError."""
    if sys.stdin is None or sys.stdin.closed:
        raise EOFError("stdin is closed")
    return input(prompt)


def frames(record, viewer: int | None = None):
    """(title, game_state, viewer's name, recent event lines) after the deal and each decision.

    ``viewer`` is the seat whose hand is shown (None: the player to act, or at the end the last one)."""
    replaying = Replay(record)
    engine = replaying.engine
    agents = engine.agents
    history: deque[str] = deque(maxlen=HISTORY_LINES)
    shown = 0 if viewer is None else viewer
    for decision in replaying:
        state = engine.game_state(0)
        if viewer is None and state["current"] is not None:
            shown = agents.index(state["current"])
        # The record knows every card: a drawn card is named as its drawer saw it.
        history.extend(describe_events(engine.events(0), agents, decision.seat))
        if decision.seat is None:
            title = f"round {decision.round}: the deal"
        else:
            title = f"round {decision.round}, decision {decision.number}: {agents[decision.seat]} chose {decision.action}"
        yield title, state, agents[shown], list(history)


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive int, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hpuno_env.replay",
        description="Step through a Harry Potter UNO game record (JSON from hpuno_env.records, "
        "agents.play or the tournament): one decision per Enter, q to stop.",
    )
    parser.add_argument("file", help="the record (JSON)")
    parser.add_argument("--all", action="store_true", help="print every step without waiting for Enter")
    parser.add_argument("--viewer", type=int, metavar="SEAT", help="show this seat's hand (default: the player to act)")
    parser.add_argument("--gif", metavar="OUT.gif", help="draw the steps into an animated GIF (rgb_array renderer)")
    parser.add_argument("--png", metavar="DIR", help="draw each step as DIR/step_00000.png")
    parser.add_argument("--max-frames", type=_positive_int, default=400, metavar="N",
                        help="draw at most the first N steps into --gif / --png (default 400)")
    parser.add_argument("--frame-ms", type=_positive_int, default=700, metavar="MS",
                        help="how long each GIF frame shows (default 700)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        record = load_record(args.file)
    except (OSError, ValueError) as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    if args.viewer is not None and not 0 <= args.viewer < record["num_players"]:
        parser.exit(2, f"{parser.prog}: error: --viewer must be a seat in [0, {record['num_players']}), got {args.viewer}\n")
    if args.gif is not None and not args.gif.lower().endswith(".gif"):
        parser.exit(2, f"{parser.prog}: error: --gif: the file name must end with .gif, got {args.gif}\n")
    for flag, problem in (("--png", args.png and folder_problem(args.png)), ("--gif", args.gif and file_problem(args.gif))):
        if problem:  # found now, not after drawing every step
            parser.exit(2, f"{parser.prog}: error: {flag}: {problem}\n")
    pictures = args.gif is not None or args.png is not None
    show_text = args.all or not pictures
    wait = not args.all and not pictures
    color = terminal_supports_color()
    images = []
    steps = 0
    stopped = False
    try:
        for title, state, viewer, history in frames(record, args.viewer):
            steps += 1
            if pictures and len(images) < args.max_frames:
                images.append(render_rgb(state, viewer, history))
            if show_text:
                print(f"== {title}")
                print(render_ansi(state, viewer, history, color=color))
                print()
                if wait and state["current"] is not None:
                    try:
                        answer = read_line("Enter: next decision, q: quit > ")
                    except EOFError:
                        answer = "q"
                    if answer.strip().lower() in ("q", "quit"):
                        stopped = True
                        break
    except ValueError as error:
        print(f"{parser.prog}: error: {args.file}: {error}", file=sys.stderr)
        return 1
    if pictures:
        _write_pictures(images, args)
        cut = f" (the first {len(images)} of {steps} steps; --max-frames)" if len(images) < steps else ""
        print(f"drew {len(images)} steps{cut}")
    print("stopped" if stopped else f"end of the record: {record['outcome']}")
    return 0


def _write_pictures(images, args) -> None:
    from PIL import Image

    pictures = [Image.fromarray(image) for image in images]
    if args.png is not None:
        os.makedirs(args.png, exist_ok=True)
        for index, picture in enumerate(pictures):
            picture.save(os.path.join(args.png, f"step_{index:05d}.png"))
        print(f"wrote {len(pictures)} PNG files to {args.png}")
    if args.gif is not None:
        folder = os.path.dirname(os.path.abspath(args.gif))
        os.makedirs(folder, exist_ok=True)
        pictures[0].save(args.gif, save_all=True, append_images=pictures[1:], duration=args.frame_ms, loop=0)
        print(f"wrote {args.gif}")


if __name__ == "__main__":
    sys.exit(main())
