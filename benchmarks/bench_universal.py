"""How the universal agent plays at every table: its win rate beside the heuristic's, in duplicate, as Markdown.

    python benchmarks/bench_universal.py                         # ppo_universal, 20,000 deals a table
    python benchmarks/bench_universal.py --agent runs/universal/agent.safetensors --rounds 2000 --json table.json

At each table (2, 3, 4, 5, 6, 8 and 10 players under the default rules; 2 and 4
players with every house rule on, ``hpuno_env.options.ALL_HOUSE_RULES``, on the
Harry Potter and the classic deck) every deal is played twice
(``agents.evaluation.duplicate``): once with the agent in the evaluated seat
(rotating, every seat equally often) and once with the heuristic there, the
other seats heuristics both times. Each rate has its Wilson 95% interval; the
difference is the mean paired difference per deal with its 95% interval. At
the specialists' tables (``ppo_2p``, ``ppo_4p``: 2 and 4 players, default rules)
the same deals are played a third way, with the specialist in the seat. Then
head to head: the agent in a rotating seat against copies of the specialist.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time

import torch

import agents
from agents.evaluation.duplicate import duplicate_win_rate
from agents.evaluation.rounds import win_rate
from hpuno_env.options import ALL_HOUSE_RULES

TABLES = (
    *((str(count), count, {}) for count in (2, 3, 4, 5, 6, 8, 10)),
    *((f"{count} house", count, dict(ALL_HOUSE_RULES)) for count in (2, 4)),
    *((f"{count} house classic", count, {**ALL_HOUSE_RULES, "deck": "classic"}) for count in (2, 4)),
)
SPECIALISTS = {2: "ppo_2p", 4: "ppo_4p"}  # the shipped agents of one table each (default rules)


def percent(result: dict, rate: str = "win_rate") -> str:
    return f"{result[rate]:.1%} [{100 * result['low']:.1f}, {100 * result['high']:.1f}]"


def points(difference: dict) -> str:
    return f"{100 * difference['difference']:+.1f} [{100 * difference['low']:+.1f}, {100 * difference['high']:+.1f}]"


def table_row(agent: str, label: str, num_players: int, rules: dict, rounds: int, seed: int) -> dict:
    """The agent and the heuristic (and the specialist, at its table) on the same deals of one table."""
    def load(name: str, offset: int):
        return agents.load(name, num_players, seed=seed + offset, rules_options=rules or None)

    against_heuristic = duplicate_win_rate(load(agent, 0), load("heuristic", 1), load("heuristic", 2), num_players,
                                           rounds=rounds, seed=seed, **rules)
    row = {"table": label, "players": num_players, "rules": rules, "rounds": rounds, "agent": against_heuristic["a"],
           "heuristic": against_heuristic["b"], "difference": _difference(against_heuristic)}
    specialist = SPECIALISTS.get(num_players) if not rules else None
    if specialist:
        against_specialist = duplicate_win_rate(load(agent, 0), load(specialist, 3), load("heuristic", 2), num_players,
                                                rounds=rounds, seed=seed, **rules)
        row.update(specialist=specialist, specialist_result=against_specialist["b"],
                   specialist_difference=_difference(against_specialist))
    return row


def _difference(result: dict) -> dict:
    return {key: result[key] for key in ("difference", "low", "high", "half_width")}


def head_to_head(agent: str, num_players: int, rounds: int, seed: int) -> dict:
    """The agent in a rotating seat, every other seat a copy of the specialist of this player count."""
    specialist = SPECIALISTS[num_players]
    result = win_rate(agents.load(agent, num_players, seed=seed), agents.load(specialist, num_players, seed=seed + 1),
                      num_players, rounds=rounds, seed=seed)
    return {"players": num_players, "specialist": specialist, "result": result}


def markdown(agent: str, rows: list[dict], duels: list[dict]) -> str:
    lines = [f"| table | {agent} | heuristic | difference (points) | specialist | {agent} − specialist (points) |",
             "|---|---|---|---|---|---|"]
    for row in rows:
        specialist = (f"{row['specialist']} {percent(row['specialist_result'])}", points(row["specialist_difference"])) \
            if "specialist" in row else ("", "")
        lines.append(f"| {row['table']} | {percent(row['agent'])} | {percent(row['heuristic'])} | "
                     f"{points(row['difference'])} | {specialist[0]} | {specialist[1]} |")
    lines += ["", f"| head to head | {agent}'s win rate | fair share |", "|---|---|---|"]
    for duel in duels:
        lines.append(f"| against {duel['players'] - 1} × {duel['specialist']} | {percent(duel['result'])} | "
                     f"{1 / duel['players']:.0%} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="ppo_universal", help="a universal agent: a shipped name or a file (default ppo_universal)")
    parser.add_argument("--rounds", type=int, default=20_000, help="deals per table (default 20000)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the deals and the players (default 0)")
    parser.add_argument("--json", help="also write every result to this JSON file")
    args = parser.parse_args(argv)
    if args.rounds < 1:
        parser.error(f"--rounds must be a positive integer, got {args.rounds}")
    try:  # not a universal agent, or no such file: the error now, before any work
        agents.load(args.agent, 3)
    except ValueError as error:
        parser.error(str(error))
    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        parser.error(f"--json {args.json!r}: no such folder")
    torch.set_num_threads(1)  # small batches: more threads only contend
    print(f"Universal agent benchmark: {args.agent}, {args.rounds:,} deals a table in duplicate, seed {args.seed}; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, torch {torch.__version__}", flush=True)
    started = time.perf_counter()
    rows = []
    for label, count, rules in TABLES:
        rows.append(table_row(args.agent, label, count, rules, args.rounds, args.seed))
        print(f"  table {label}: {percent(rows[-1]['agent'])} against the heuristic's {percent(rows[-1]['heuristic'])} "
              f"({time.perf_counter() - started:.0f} s so far)", flush=True)
    duels = [head_to_head(args.agent, count, args.rounds, args.seed) for count in SPECIALISTS]
    print("\n" + markdown(args.agent, rows, duels))
    print(f"\n({time.perf_counter() - started:.0f} s wall)")
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"agent": args.agent, "rounds": args.rounds, "seed": args.seed, "tables": rows, "head_to_head": duels},
                      file, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())
