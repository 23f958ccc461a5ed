"""``hpuno-arena`` (``python -m agents.arena``): serve the arena's page and JSON API with uvicorn.

    hpuno-arena --port 8000 --records runs/arena --results runs/tournament --db runs/arena/arena.sqlite3

Binds to 127.0.0.1 unless ``--host`` says otherwise (then it warns: the
arena has no accounts, and anyone who reaches the port can start games).
Every option is checked, the records folder written to, the database
opened (its schema version checked) and the port bound
before the engine and torch are imported (seconds) or the address printed:
a refusal is one line within a second. Ctrl-C or SIGTERM stops it, every
live game saved as a record (an unfinished one marked so).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import socket
import sys
from typing import NoReturn

from .folders import RecordFolder
from .limits import IDLE_SECONDS, MAX_GAMES, MAX_GAMES_PER_CLIENT, MAX_RECORDS, SEARCH_WORKERS_MOST
from .store import DEFAULT_DB, Store, StoreError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
WILDCARD_HOSTS = ("0.0.0.0", "::", "")
RECORDS = os.path.join("runs", "arena")  # runs/ is in .gitignore: played games are not committed by accident
IDLE_MINUTES = IDLE_SECONDS // 60


def default_search_workers() -> int:
    """The search processes by default: the cores this process may use but one (the server's), at least 1, at most
    ``SEARCH_WORKERS_MOST``. A server pinned to one core searches in one process beside it, on that core."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(SEARCH_WORKERS_MOST, cores - 1))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hpuno-arena",
        description="Play Harry Potter UNO against agents, watch agents, replay records and read a tournament's "
        "leaderboard in a web browser.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                        help="a name of this machine the browser may reach it by, besides localhost and its IP "
                             "addresses (repeatable): requests naming another host are refused")
    parser.add_argument("--records", default=RECORDS, metavar="DIR",
                        help=f"where finished games are saved as records, and records are offered to replay (default {RECORDS})")
    parser.add_argument("--max-records", type=int, default=MAX_RECORDS, metavar="N",
                        help=f"the arena's own records it saves in --records at most (default {MAX_RECORDS:,})")
    parser.add_argument("--db", default=DEFAULT_DB, metavar="PATH",
                        help=f"the SQLite database of the ladder: finished games' records, ratings and bots, kept across "
                             f"restarts (made if missing; default {DEFAULT_DB})")
    parser.add_argument("--results", metavar="DIR",
                        help="a tournament's --out folder (results.json, PNG plots), or a folder of such folders, for the leaderboard")
    parser.add_argument("--max-games", type=int, default=MAX_GAMES, help=f"live games at once (default {MAX_GAMES})")
    parser.add_argument("--max-games-per-client", type=int, default=MAX_GAMES_PER_CLIENT, metavar="N",
                        help=f"live games one client address holds at once (default {MAX_GAMES_PER_CLIENT})")
    parser.add_argument("--idle-minutes", type=float, default=IDLE_MINUTES,
                        help=f"drop a game idle this long (default {IDLE_MINUTES})")
    parser.add_argument("--search-workers", type=int, default=default_search_workers(), metavar="N",
                        help="worker processes the search player searches in, beside the server (default: the cores "
                             f"this process may use but one, 1 to {SEARCH_WORKERS_MOST}: {default_search_workers()} here; "
                             "0: in the server's threads)")
    parser.add_argument("--allow-decks", action="store_true",
                        help="let a person's game take a seed or a stacked deck (a 'deck' list of card labels): for "
                             "tests and demonstrations, where nobody's cards need be secret")
    return parser


def refuse(parser: argparse.ArgumentParser, problem: str) -> NoReturn:
    """A problem with the options, in one line (``PROG: error: PROBLEM``, as ``agents._cli.exit_with_error`` writes
    it, without the usage that argparse would print first); exits with status 2."""
    parser.exit(2, f"{parser.prog}: error: {problem}\n")


def checked(parser: argparse.ArgumentParser, argv) -> argparse.Namespace:
    """The options, each checked (exit 2 with one line naming the option otherwise); the records folder made."""
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        refuse(parser, f"--port must be in [1, 65535], got {args.port}")
    for option, value in (("--max-games", args.max_games), ("--max-games-per-client", args.max_games_per_client),
                          ("--max-records", args.max_records)):
        if value < 1:
            refuse(parser, f"{option} must be a positive int, got {value}")
    if args.search_workers < 0:
        refuse(parser, f"--search-workers must be 0 or more, got {args.search_workers}")
    if not math.isfinite(args.idle_minutes) or args.idle_minutes <= 0:
        refuse(parser, f"--idle-minutes must be a positive number of minutes, got {args.idle_minutes}")
    if args.results is not None and not os.path.isdir(args.results):
        refuse(parser, f"--results {args.results}: no such folder (a tournament's --out folder, or a folder of them)")
    try:
        RecordFolder(args.records).check_writable()
    except ValueError as error:
        refuse(parser, f"--records: {error}")
    try:
        Store(args.db).close()  # made, or its schema version checked, before anything is served
    except StoreError as error:
        refuse(parser, f"--db: {error}")
    return args


def bound_socket(parser: argparse.ArgumentParser, host: str, port: int) -> socket.socket:
    """The listening address, bound now (uvicorn serves on this socket): a port in use is refused here, before
    anything is printed or imported."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio turns Nagle off (TCP_NODELAY) only on sockets that say they are TCP
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a restart reuses the port at once
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        refuse(parser, f"--port {port}: cannot listen on {host}:{port} ({error.strerror}); another program "
                     f"(another hpuno-arena?) may hold it: choose a free port with --port")
    return sock


def results_warning(folder: str | None) -> str | None:
    """A warning when --results holds no tournament's results.json yet (the leaderboard stays empty until it does)."""
    if folder is None or os.path.isfile(os.path.join(folder, "results.json")):
        return None
    with os.scandir(folder) as entries:
        if any(entry.is_dir() and os.path.isfile(os.path.join(entry.path, "results.json")) for entry in entries):
            return None
    return (f"warning: --results {folder} holds no results.json, in itself or in a subfolder: the leaderboard is "
            "empty until a tournament writes one there (hpuno-tournament ... --out DIR)")


class Stopped(Exception):
    """SIGTERM, which uvicorn sends on to the process once it has shut the server down (and saved the games)."""


def on_sigterm(number, frame):
    raise Stopped


def serve(app, sock: socket.socket) -> None:
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def served_until_stopped(app, sock: socket.socket) -> int:
    """Serve until Ctrl-C or SIGTERM: uvicorn stops the server (the app saves its live games) and raises the
    signal again; the exit status is then the shell's for that signal (130, 143), 0 when uvicorn returns."""
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        serve(app, sock)
    except KeyboardInterrupt:
        return 130
    except Stopped:
        return 143
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def main(argv=None) -> int:
    parser = build_parser()
    args = checked(parser, argv)
    sock = bound_socket(parser, args.host, args.port)
    hosts = list(args.allow_host) + ([] if args.host in WILDCARD_HOSTS else [args.host])
    if args.host not in LOCAL_HOSTS:
        print(f"warning: the arena listens on {args.host}, not only on this machine: anyone who can reach port "
              f"{args.port} can start games and read the records in {args.records}", file=sys.stderr)
    warning = results_warning(args.results)
    if warning:
        print(warning, file=sys.stderr)
    import torch  # imported once the options are good: a refusal above takes no time

    from .server import create_app

    torch.set_num_threads(1)  # one small network call per move: a second thread only contends
    app = create_app(records=args.records, results=args.results, max_games=args.max_games, idle_seconds=args.idle_minutes * 60,
                     allow_decks=args.allow_decks, max_records=args.max_records, hosts=hosts, prepare_search=True,
                     db=args.db, max_games_per_client=args.max_games_per_client, search_workers=args.search_workers)
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"hpuno arena: http://{shown}:{args.port}/ (Ctrl-C stops it)", flush=True)
    status = served_until_stopped(app, sock)
    saved = app.state.saved_at_stop
    print(f"hpuno arena: stopped; {len(saved)} live game(s) saved in {args.records}{': ' if saved else ''}{', '.join(saved)}",
          file=sys.stderr)
    return status
