"""Rollout speed: rounds played out with the heuristic, a Python loop against the compiled one.

    python benchmarks/bench_rollouts.py                     # 2 and 4 players, batches of 64 and 1024
    python benchmarks/bench_rollouts.py --batches 256 --seconds 5 --repeats 5

Both sides play the same batch of fresh rounds (``VectorEngine`` without
auto-reset, one seed) to the end with the heuristic in every seat:

- ``python loop``: what a search does without ``VectorEngine.rollout``:
  ``engine.step_observe`` and ``HeuristicAgent.act`` on the games still
  playing, once per decision of the batch;
- ``compiled``: ``engine.rollout("heuristic")``, the whole round in one call
  (``hpuno_env.rollout``, calling the same ``hpuno_env.heuristic``).

A cell is decisions per second: the two sides take turns, ``--repeats``
times, each turn playing batches for at least ``--seconds``, and each side's
best turn counts (on a shared machine the slowest turns measure the other
jobs). The ratio is compiled over python loop, measured in the same run. The
compiled code is compiled (or loaded from numba's cache) before timing.
"""

from __future__ import annotations

import argparse
import functools
import platform
import time

import numpy as np

import agents
from hpuno_env import VectorEngine


def python_loop(engine: VectorEngine, policy, seed: int) -> int:
    """Play the batch's rounds to their end with policy.act per step; returns the decisions taken."""
    engine.reset(seed=seed)
    observations, masks = engine.observe(), engine.legal_mask()
    decisions = 0
    actions = np.full(engine.num_games, -1, np.int64)
    while True:
        playing = masks.any(axis=1)  # a finished round (no auto-reset) has no legal action
        if not playing.any():
            return decisions
        actions[:] = -1
        actions[playing] = policy.act(observations[playing], masks[playing])
        decisions += int(playing.sum())
        observations, masks, *_ = engine.step_observe(actions, partial=True)


def compiled(engine: VectorEngine, seed: int) -> int:
    engine.reset(seed=seed)
    _, decisions = engine.rollout("heuristic")
    return int(decisions.sum())


def rate(play, seconds: float) -> float:
    decisions, start = 0, time.perf_counter()
    seed = 0
    while time.perf_counter() - start < seconds:
        decisions += play(seed)
        seed += 1
    return decisions / (time.perf_counter() - start)


def best_rates(sides: list, seconds: float, repeats: int) -> list[float]:
    """Each side's best rate over repeats turns, the sides taking turns."""
    best = [0.0] * len(sides)
    for _ in range(repeats):
        for index, play in enumerate(sides):
            best[index] = max(best[index], rate(play, seconds))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--batches", type=int, nargs="+", default=[64, 1024], help="games per batch")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per turn (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="turns per side (default 3)")
    args = parser.parse_args(argv)
    print(f"# rollouts, heuristic in every seat; {platform.processor() or platform.machine()}, numpy {np.__version__}")
    print("| players | batch | python loop (decisions/s) | compiled (decisions/s) | ratio |")
    print("|---|---|---|---|---|")
    for num_players in args.players:
        for batch in args.batches:
            engine = VectorEngine(batch, num_players, seed=0, auto_reset=False)
            policy = agents.load("heuristic", num_players, seed=0)
            compiled(engine, 0)  # compile or load the rollout before timing
            sides = [functools.partial(python_loop, engine, policy), functools.partial(compiled, engine)]
            slow, fast = best_rates(sides, args.seconds, args.repeats)
            print(f"| {num_players} | {batch} | {slow:,.0f} | {fast:,.0f} | {fast / slow:.1f}x |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
