"""How strong the shipped agents are: win rates against the fixed players, as Markdown tables.

    python benchmarks/bench_agents.py                  # 20,000 rounds per cell (a few CPU-minutes)
    python benchmarks/bench_agents.py --rounds 2000    # quicker, wider intervals

For each player count (2 and 4), each row's player sits in a rotating seat
(every seat equally often) and every other seat is a copy of the column's
player; a cell is ``agents.evaluation.rounds.win_rate``: a fixed set of rounds, each
played to its end, the win rate with its Wilson 95% interval. A fair share is
1/2 (2 players) or 1/4 (4 players). The rows are the shipped trained agent
for that player count (``ppo_2p``, ``ppo_4p``) and, for reference, the
rule-based ``heuristic``; the columns are ``heuristic``, ``heuristic-v0``,
``random-play`` and ``random``. Trained agents play greedily (the legal action
with the highest logit).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import torch

import agents
from agents.evaluation.rounds import win_rate
from agents.players.trained import shipped_for

OPPONENTS = ("heuristic", "heuristic-v0", "random-play", "random")


def rows_for(num_players: int) -> list[str]:
    """The shipped trained agent(s) for this player count and the default rules, then the heuristic as the reference row."""
    return [*shipped_for(num_players), "heuristic"]


def table(num_players: int, rows: list[str], rounds: int, seed: int) -> dict:
    """{row: {opponent: win_rate result}} with one seed for every cell (the same deals for every row)."""
    return {
        row: {
            column: win_rate(agents.load(row, num_players, seed=seed), agents.load(column, num_players, seed=seed + 1), num_players,
                             rounds=rounds, seed=seed)
            for column in OPPONENTS
        }
        for row in rows
    }


def markdown(results: dict) -> str:
    lines = ["| agent | " + " | ".join(f"vs {column}" for column in OPPONENTS) + " |", "|---|" + "---|" * len(OPPONENTS)]
    for row, cells in results.items():
        lines.append(f"| {row} | " + " | ".join(
            f"{r['win_rate']:.1%} [{100 * r['low']:.1f}, {100 * r['high']:.1f}]" for r in cells.values()) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=20_000, help="rounds per cell (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the players (default 0)")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4], help="player counts (default 2 4)")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be a positive integer, got {args.rounds}")
    torch.set_num_threads(1)  # small networks: more threads only contend on a shared machine
    print(f"Agents benchmark: {args.rounds:,} rounds per cell, seed {args.seed}, seats rotated, greedy trained agents; "
          f"Python {platform.python_version()}, torch {torch.__version__}\n")
    for num_players in args.players:
        started, cpu_started = time.perf_counter(), time.process_time()
        results = table(num_players, rows_for(num_players), args.rounds, args.seed)
        fair = f"the row in a rotating seat, {num_players - 1} cop{'y' if num_players == 2 else 'ies'} of the column's player"
        print(f"**{num_players} players** ({fair}; win rate [95% Wilson interval], fair share {1 / num_players:.0%}):\n")
        print(markdown(results))
        print(f"\n({time.perf_counter() - started:.0f} s wall, {time.process_time() - cpu_started:.0f} s CPU)\n", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
