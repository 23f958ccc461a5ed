"""``hpuno-arena`` (``python -m agents.arena``): serve the arena's page and JSON API with uvicorn.

    hpuno-arena --port 8000 --records runs/arena --results runs/tournament

Binds to 127.0.0.1 unless ``--host`` says otherwise (then it warns: the
arena has no accounts, and anyone who reaches the port can start games).
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import uvicorn

from .server import IDLE_SECONDS, MAX_GAMES, create_app

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")
RECORDS = os.path.join("runs", "arena")  # runs/ is in .gitignore: played games are not committed by accident


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hpuno-arena",
        description="Play Harry Potter UNO against agents, watch agents, replay records and read a tournament's "
        "leaderboard in a web browser.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    parser.add_argument("--records", default=RECORDS, metavar="DIR",
                        help=f"where finished games are saved as records, and records are offered to replay (default {RECORDS})")
    parser.add_argument("--results", metavar="DIR",
                        help="a tournament's --out folder (results.json, PNG plots), or a folder of such folders, for the leaderboard")
    parser.add_argument("--max-games", type=int, default=MAX_GAMES, help=f"live games at once (default {MAX_GAMES})")
    parser.add_argument("--idle-minutes", type=float, default=IDLE_SECONDS / 60,
                        help=f"drop a game idle this long (default {IDLE_SECONDS // 60:.0f})")
    parser.add_argument("--allow-decks", action="store_true",
                        help="let POST /api/games stack the deck (a 'deck' list of card labels): for tests and demonstrations")
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not 0 < args.port < 65536:
        parser.error(f"--port must be in [1, 65535], got {args.port}")
    if args.max_games < 1 or args.idle_minutes <= 0:
        parser.error("--max-games and --idle-minutes must be positive")
    if args.host not in LOCAL_HOSTS:
        print(f"warning: the arena listens on {args.host}, not only on this machine: anyone who can reach port "
              f"{args.port} can start games and read the records in {args.records}", file=sys.stderr)
    torch.set_num_threads(1)  # one small network call per move: a second thread only contends
    app = create_app(records=args.records, results=args.results, max_games=args.max_games,
                     idle_seconds=args.idle_minutes * 60, allow_decks=args.allow_decks)
    print(f"hpuno arena: http://{args.host}:{args.port}/", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
