"""How many rounds duplicate evaluation needs to resolve one point, against two independent win rates.

    python benchmarks/bench_duplicate.py --players 2 --rounds 4000 --pairs heuristic:heuristic-v0 ppo_2p:heuristic

Each row is ``agents.evaluate.duplicate_win_rate(A, B, opponent)``: ``rounds``
deals, each played once with A and once with B in the rotating evaluated seat,
the opponent in every other seat, on the same cards and random streams. From
the measured spreads it gives the rounds each method needs for a 95% half-width
of one point (0.01) on the difference A - B:

- paired (duplicate): sd of the per-deal differences (A won - B won), deals = (1.96 sd / 0.01)^2,
  each deal played twice;
- unpaired (two independent ``win_rate`` runs of n rounds each): sd = sqrt(pa(1-pa) + pb(1-pb)),
  n = (1.96 sd / 0.01)^2 rounds for each agent.

Both count the same games per agent, so their ratio is the saving in games. The
time columns price it: duplicate play asks every policy one row at a time (so
each deal's random streams are its own), which costs more per game than
``win_rate``'s batched calls; "s for ±1 pt" is the seconds each method would
take for that precision on this machine, from the seconds measured here (the
unpaired one times two ``win_rate`` runs of ``rounds`` rounds on the same
policies). The paired 95% interval is the normal approximation (mean ± 1.96 sd / √n).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shlex
import sys
import time

import torch

import agents
from agents.evaluate import duplicate_win_rate, win_rate
from agents.evaluation.duplicate import rounds_to_resolve


def measure(pair: str, opponent: str, num_players: int, rounds: int, seed: int, num_envs: int) -> dict:
    name_a, _, name_b = pair.partition(":")
    policies = [agents.load(name, num_players, seed=seed) for name in (name_a, name_b, opponent)]
    started = time.perf_counter()
    result = duplicate_win_rate(*policies, num_players=num_players, rounds=rounds, seed=seed, num_envs=num_envs)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    for policy in policies[:2]:
        win_rate(policy, policies[2], num_players, rounds=rounds, seed=seed, num_envs=num_envs)
    return {**result, "a_name": name_a, "b_name": name_b, "seconds": seconds, "unpaired_seconds": time.perf_counter() - started}


def row(result: dict) -> str:
    paired, unpaired = rounds_to_resolve(result["sd"]), rounds_to_resolve(result["unpaired_sd"])
    return (f"| {result['a_name']} vs {result['b_name']} | {result['rounds']:,} | {result['win_rate_a']:.3f} | {result['win_rate_b']:.3f} | "
            f"{result['difference']:+.3f} ± {result['half_width']:.3f} | {result['differing'] / result['rounds']:.1%} | "
            f"{result['sd']:.3f} | {result['unpaired_sd']:.3f} | {paired:,} | {unpaired:,} | {paired / unpaired:.2f} | "
            f"{result['seconds'] * paired / result['rounds']:.1f} | {result['unpaired_seconds'] * unpaired / result['rounds']:.1f} |")


def machine() -> str:
    """The CPU model (where /proc/cpuinfo names it), cores seen and Python version."""
    model = platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=4000, help="deals per pair (each played twice)")
    parser.add_argument("--pairs", nargs="+", default=["heuristic:heuristic-v0", "ppo_2p:heuristic"], metavar="A:B")
    parser.add_argument("--opponent", default="heuristic")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--envs", type=int, default=256)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    torch.set_num_threads(1)
    command = shlex.join(["python", "benchmarks/bench_duplicate.py", *(sys.argv[1:] if argv is None else argv)])
    print(f"# duplicate vs unpaired, {args.players} players, opponent {args.opponent}, {args.rounds:,} deals a pair, seed {args.seed}")
    print(f"`{command}`; {datetime.date.today()}, {machine()}\n")
    print("| A vs B | deals | A win rate | B win rate | A - B [95%] | deals differing | sd paired | sd unpaired "
          "| deals for ±1 pt, paired | rounds per agent for ±1 pt, unpaired | ratio | s for ±1 pt, paired | s for ±1 pt, unpaired |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for pair in args.pairs:
        print(row(measure(pair, args.opponent, args.players, args.rounds, args.seed, args.envs)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
