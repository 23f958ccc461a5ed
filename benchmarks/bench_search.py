"""The search player's strength and time: win rates against the heuristic and against its blueprint.

    python benchmarks/bench_search.py --players 2 --rounds 300 --worlds 16 64
    python benchmarks/bench_search.py --players 4 --blueprint ppo_4p --rounds 300 --worlds 64
    python benchmarks/bench_search.py --players 2 --duplicate --rounds 2000 --worlds 64 256
    python benchmarks/bench_search.py --players 2 --blueprint ppo_2p --rollout blueprint+heuristic --duplicate --worlds 32
    python benchmarks/bench_search.py --players 2 --duplicate --evidence --rounds 2000 --worlds 64
    python benchmarks/bench_search.py --players 2 --duplicate --belief shipped --versus-uniform --rounds 600 --worlds 32
    python benchmarks/bench_search.py --players 2 --blueprint ppo_2p --rollout blueprint --others blueprint --duplicate --belief shipped --worlds 32

Each cell is ``agents.evaluation.rounds.win_rate``: the search player (``agents.load("search",
blueprint=..., worlds=...)``) in a rotating seat, the opponent in every other
seat, a fixed set of rounds all played to the end, with the Wilson 95%
interval; a fair share is 1 / players. The opponents are the heuristic and the
blueprint itself (one column when the blueprint is the heuristic). The time is
wall-clock seconds of the whole evaluation divided by the search player's
searched decisions (those with more than one legal action), so it includes
the opponents' share; "left" is the share of searched decisions where it
left the blueprint's action.

With ``--duplicate`` each cell is ``agents.evaluation.duplicate.duplicate_win_rate``
instead: every deal played once with the search player in the rotating seat
and once with its blueprint there, the heuristic (``--others blueprint``: the
blueprint) in every other seat both times; the cell gives both rates and the mean paired difference (search minus
blueprint, per deal) with its 95% interval, which resolves a small gain with
far fewer rounds than two separate win rates.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time

import numpy as np

import agents
from agents.evaluation.duplicate import duplicate_win_rate
from agents.evaluation.rounds import win_rate
from agents.players.search import BLUEPRINT_ROLLOUTS, COMPILED_ROLLOUTS


def search_player(args, worlds: int, belief: str | None = None):
    """The search player of a cell: the command's blueprint, gate, rollout and evidence, ``worlds`` worlds, its
    worlds dealt from ``belief`` (None: uniform)."""
    player = agents.load("search", args.players, seed=args.seed, blueprint=args.blueprint, worlds=worlds, gate=args.gate,
                         rollout=args.rollout, evidence=args.evidence, belief=belief)
    return timed(player)


def timed(player):
    """The player, each of its searched decisions' wall-clock seconds kept in ``player.search_seconds``."""
    search, player.search_seconds = player.search, []

    def timed_search(*args):
        start = time.perf_counter()
        action = search(*args)
        player.search_seconds.append(time.perf_counter() - start)
        return action

    player.search = timed_search
    return player


def median_ms(player) -> float:
    """The median wall-clock milliseconds of one searched decision, the search alone (opponents excluded)."""
    return 1000 * float(np.median(player.search_seconds)) if player.search_seconds else float("nan")


def cell(args, worlds: int, opponent: str) -> dict:
    player = search_player(args, worlds, args.belief)
    start = time.perf_counter()
    result = win_rate(player, agents.load(opponent, args.players, seed=args.seed + 1), args.players, rounds=args.rounds, seed=args.seed)
    seconds = time.perf_counter() - start
    result.update(ms_per_decision=1000 * seconds / max(player.decisions, 1), median_ms=median_ms(player),
                  left=player.changed / max(player.decisions, 1))
    return result


def duplicate_cell(args, worlds: int) -> dict:
    """The search player against its blueprint on the same deals (``--versus-uniform``: against the same search
    dealing uniform worlds), ``--others`` in the other seats."""
    player = search_player(args, worlds, args.belief)
    reference = (search_player(args, worlds) if args.versus_uniform
                 else agents.load(args.blueprint, args.players, seed=args.seed))
    start = time.perf_counter()
    others = args.blueprint if args.others == "blueprint" else "heuristic"
    result = duplicate_win_rate(player, reference, agents.load(others, args.players, seed=args.seed + 1),
                                args.players, rounds=args.rounds, seed=args.seed)
    seconds = time.perf_counter() - start
    result.update(ms_per_decision=1000 * seconds / max(player.decisions, 1), median_ms=median_ms(player),
                  left=player.changed / max(player.decisions, 1))
    return result


def print_duplicate_table(args) -> None:
    reference = "the same search with uniform worlds" if args.versus_uniform else "its blueprint"
    print(f"# search against {reference} in duplicate, {args.players} players, blueprint {args.blueprint}, gate {args.gate}, "
          f"rollout {args.rollout}, evidence {args.evidence}, belief {args.belief}, "
          f"{args.rounds} deals a cell (each played twice), the {args.others} in the other seats, seed {args.seed}; "
          f"{datetime.date.today()}, {platform.machine()}")
    print("| worlds | search [95%] | reference [95%] | search − reference (points) [95%] | ms / decision | median ms / search | left blueprint |")
    print("|---|---|---|---|---|---|---|")
    for worlds in args.worlds:
        r = duplicate_cell(args, worlds)
        a, b = r["a"], r["b"]
        print(f"| {worlds} | {a['win_rate']:.1%} [{100 * a['low']:.1f}, {100 * a['high']:.1f}] | "
              f"{b['win_rate']:.1%} [{100 * b['low']:.1f}, {100 * b['high']:.1f}] | "
              f"{100 * r['difference']:+.1f} [{100 * r['low']:+.1f}, {100 * r['high']:+.1f}] | "
              f"{r['ms_per_decision']:.1f} | {r['median_ms']:.1f} | {r['left']:.1%} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--blueprint", default="heuristic")
    parser.add_argument("--worlds", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--gate", type=float, default=2.0)
    parser.add_argument("--rollout", default="heuristic", choices=[*COMPILED_ROLLOUTS, *BLUEPRINT_ROLLOUTS],
                        help="who plays the worlds out (agents.players.search)")
    parser.add_argument("--evidence", action="store_true",
                        help="worlds deal a seat that drew by choice on a colour none of it (SearchAgent's evidence)")
    parser.add_argument("--belief", default=None,
                        help="deal the search's worlds from a belief: 'shipped', 'certain' or a belief file (SearchAgent's belief)")
    parser.add_argument("--versus-uniform", action="store_true",
                        help="with --duplicate --belief: the reference is the same search dealing uniform worlds, not the blueprint")
    parser.add_argument("--others", default="heuristic", choices=["heuristic", "blueprint"],
                        help="with --duplicate: who plays the other seats (default: the heuristic)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duplicate", action="store_true", help="each cell in duplicate against the blueprint (module docstring)")
    args = parser.parse_args(argv)
    if args.versus_uniform and not (args.duplicate and args.belief):
        parser.error("--versus-uniform compares belief worlds with uniform ones: give --duplicate and --belief")
    if args.duplicate:
        print_duplicate_table(args)
        return 0
    opponents = ["heuristic"] if args.blueprint == "heuristic" else ["heuristic", args.blueprint]
    print(f"# search, {args.players} players, blueprint {args.blueprint}, gate {args.gate}, rollout {args.rollout}, "
          f"evidence {args.evidence}, {args.rounds} rounds a cell, "
          f"seed {args.seed}; {datetime.date.today()}, {platform.machine()}")
    print("| worlds | opponent | win rate [95%] | ms / decision | median ms / search | left blueprint |")
    print("|---|---|---|---|---|---|")
    for worlds in args.worlds:
        for opponent in opponents:
            r = cell(args, worlds, opponent)
            print(f"| {worlds} | {opponent} | {r['win_rate']:.1%} [{100 * r['low']:.1f}, {100 * r['high']:.1f}] | "
                  f"{r['ms_per_decision']:.1f} | {r['median_ms']:.1f} | {r['left']:.1%} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
