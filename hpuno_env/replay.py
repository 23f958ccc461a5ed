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
import itertools
import os
import sys
from collections import deque

# The engine (hpuno_env.records, .render) loads on first use, through the package: a refused command line is
# answered before numba loads.
import hpuno_env

from ._output import file_problem, folder_problem, program_name
from ._reading import MAX_JSON_BYTES, open_regular_file


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
    replaying = hpuno_env.records.Replay(record)
    engine = replaying.engine
    agents = engine.agents
    events: deque[tuple] = deque(maxlen=hpuno_env.render.HISTORY_EVENTS)
    shown = 0 if viewer is None else viewer
    for decision in replaying:
        state = engine.game_state(0)
        if viewer is None and state["current"] is not None:
            shown = agents.index(state["current"])
        # The record knows every card; the events are told as the shown seat saw them.
        events.extend(engine.events(0))
        if decision.seat is None:
            title = f"round {decision.round}: the deal"
        else:
            title = f"round {decision.round}, decision {decision.number}: {agents[decision.seat]} chose {decision.action}"
        yield title, state, agents[shown], hpuno_env.render.history_lines(events, agents, shown)


MAX_FRAMES = 1000  # --max-frames' bound: a GIF keeps its (palette, cropped) frames until it is written


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive int, got {text}")
    return value


def _frame_count(text: str) -> int:
    value = _positive_int(text)
    if value > MAX_FRAMES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_FRAMES} (frames are drawn into memory for a GIF), got {text}")
    return value


EXAMPLES = """examples:
  hpuno-replay runs/games/game.json                         # one decision per Enter (hpuno-play writes such files)
  hpuno-replay runs/games/game.json --all --viewer 0        # every step at once, seat 0's hand shown
  hpuno-replay runs/games/game.json --gif game.gif --max-frames 60"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("hpuno_env.replay", "hpuno-replay"),
        description="Step through a Harry Potter UNO game record (JSON from hpuno_env.records, "
        "agents.play or the tournament): one decision per Enter, q to stop.",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", help="the record (JSON)")
    parser.add_argument("--all", action="store_true", help="print every step without waiting for Enter")
    parser.add_argument("--viewer", type=int, metavar="SEAT", help="show this seat's hand (default: the player to act)")
    parser.add_argument("--gif", metavar="OUT.gif", help="draw the steps into an animated GIF (rgb_array renderer)")
    parser.add_argument("--png", metavar="DIR", help="draw each step as DIR/step_00000.png")
    parser.add_argument("--max-frames", type=_frame_count, default=400, metavar="N",
                        help=f"draw at most the first N steps into --gif / --png (default 400, at most {MAX_FRAMES})")
    parser.add_argument("--frame-ms", type=_positive_int, default=700, metavar="MS",
                        help="how long each GIF frame shows (default 700)")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:  # a file that cannot be read is refused before the engine loads
        open_regular_file(args.file, "record", MAX_JSON_BYTES).close()
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    if args.gif is not None and not args.gif.lower().endswith(".gif"):
        parser.exit(2, f"{parser.prog}: error: --gif: the file name must end with .gif, got {args.gif}\n")
    try:
        record = hpuno_env.records.load_record(args.file)
    except (OSError, ValueError) as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    if args.viewer is not None and not 0 <= args.viewer < record["num_players"]:
        parser.exit(2, f"{parser.prog}: error: --viewer must be a seat in [0, {record['num_players']}), got {args.viewer}\n")
    for flag, path, check in (("--png", args.png, folder_problem), ("--gif", args.gif, file_problem)):
        problem = path is not None and check(path)  # "" too: found now, not after drawing every step
        if problem:  # checked once the record is: a refused record creates no --png folder
            parser.exit(2, f"{parser.prog}: error: {flag}: {problem}\n")
    pictures = args.gif is not None or args.png is not None
    show_text = args.all or not pictures
    wait = not args.all and not pictures
    color = terminal_supports_color()
    if pictures:
        try:
            drawn, steps = _draw_pictures(record, args)
        except ValueError as error:
            print(f"{parser.prog}: error: {args.file}: {error}", file=sys.stderr)
            return 1
        cut = f" (the first {drawn} of {steps} steps; --max-frames)" if drawn < steps else ""
        print(f"drew {drawn} steps{cut}")
    stopped = False
    try:
        for title, state, viewer, history in frames(record, args.viewer) if show_text else ():
                print(f"== {title}")
                print(hpuno_env.render.render_ansi(state, viewer, history, color=color))
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
    print("stopped" if stopped else f"end of the record: {record['outcome']}")
    return 0


def _draw_pictures(record, args) -> tuple[int, int]:
    """Draw the first --max-frames steps, streamed: each PNG is written as it is drawn, and the GIF writer takes
    the frames one at a time (keeping each as a cropped palette frame), so no list of full pictures is kept, and
    the steps after them are not replayed. The GIF is written to a temporary name and renamed, so a failure leaves
    no half file. Returns (drawn, steps)."""
    from PIL import Image  # here, not at the top: the text replay never loads Pillow

    steps = sum(1 + len(entry["decisions"]) for entry in record["rounds"])  # a frame after each deal and decision
    counts = {"drawn": 0}
    if args.png is not None:
        os.makedirs(args.png, exist_ok=True)

    def pictures():
        for _title, state, viewer, history in itertools.islice(frames(record, args.viewer), args.max_frames):
            picture = Image.fromarray(hpuno_env.render.render_rgb(state, viewer, history))
            if args.png is not None:
                picture.save(os.path.join(args.png, f"step_{counts['drawn']:05d}.png"))
            counts["drawn"] += 1
            yield picture

    stream = pictures()
    if args.gif is None:
        for _picture in stream:
            pass
    else:
        folder, name = os.path.split(os.path.abspath(args.gif))
        os.makedirs(folder, exist_ok=True)
        temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp.gif")
        try:
            next(stream).save(temporary, save_all=True, append_images=stream, duration=args.frame_ms, loop=0)
            os.replace(temporary, args.gif)
        finally:
            if os.path.exists(temporary):
                os.remove(temporary)
    if args.png is not None:
        print(f"wrote {counts['drawn']} PNG files to {args.png}")
    if args.gif is not None:
        print(f"wrote {args.gif}")
    return counts["drawn"], steps


if __name__ == "__main__":
    sys.exit(main())
