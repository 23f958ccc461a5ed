"""How long a round's public history is: the events ``kernel.record_history`` keeps, per table and player.

    python benchmarks/bench_history.py                       # 2, 3, 4, 6, 10 players, 2,000 rounds each
    python benchmarks/bench_history.py --players 2 4 --rounds 500

Each round is played to its end by the compiled rollout (``VectorEngine.rollout``) with one built-in policy in
every seat (the heuristic, random-play); the round's ``history_count`` is then every public event it recorded
(the observation shows the last ``kernel.HISTORY_LENGTH`` of them). The report gives, per table and policy, the
median, the 90th and 99th percentiles and the share of rounds whose whole history fits in the ring. This is what
``HISTORY_LENGTH`` is chosen from.
"""

from __future__ import annotations

import argparse
import platform

import numpy as np

from hpuno_env import VectorEngine, kernel


def round_history_lengths(num_players: int, policy: str, rounds: int, seed: int) -> np.ndarray:
    """Public events recorded by each of ``rounds`` fresh rounds played out by ``policy`` in every seat."""
    engine = VectorEngine(rounds, num_players, seed=seed, auto_reset=False)
    engine.reset()
    winners, _ = engine.rollout(policy)
    finished = winners >= 0
    return engine.state.history_count[finished].astype(np.int64)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 3, 4, 6, 10])
    parser.add_argument("--policies", nargs="+", default=["heuristic", "random-play"])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    ring = kernel.HISTORY_LENGTH
    print(f"# Public events per round (ring of {ring}), {args.rounds} rounds a cell, seed {args.seed}; "
          f"{platform.processor() or platform.machine()}\n")
    print(f"| players | policy | median | 90th pct | 99th pct | rounds that fit in {ring} |")
    print("|---|---|---|---|---|---|")
    for num_players in args.players:
        for policy in args.policies:
            lengths = round_history_lengths(num_players, policy, args.rounds, args.seed)
            median, p90, p99 = np.percentile(lengths, [50, 90, 99])
            print(f"| {num_players} | {policy} | {median:.0f} | {p90:.0f} | {p99:.0f} | {np.mean(lengths <= ring):.1%} |")


if __name__ == "__main__":
    main()
