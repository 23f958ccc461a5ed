"""RLlib sampling speed: env steps/s of one env runner (``HPUnoEnvRunner`` against RLlib's own
``MultiAgentEnvRunner``, beside the bare engine), and how sampling scales with runner processes.

    pip install -e ".[rllib]"
    python benchmarks/bench_rllib.py                # about two minutes on 2 cores
    python benchmarks/bench_rllib.py --profile      # also where one runner's time goes (cProfile)

An env step is one decision in one game (RLlib's ``num_env_steps_sampled``).
Part 1 builds env runners in this process (no Ray) and times ``sample()``, the
policy network included (PPO's default 256x256 with masking, one torch
thread), at 1 to 256 games per runner:

* the engine alone: ``VectorEngine.step_observe`` with uniformly random legal
  actions, no network (``bench_engine.py``'s fused step), the ceiling;
* ``HPUnoEnvRunner``: all games in one ``VectorEngine``, one forward pass per
  step for every game's seat to act, episodes built once per ``sample()``
  (``hpuno_env.rllib_sampling``);
* one engine in RLlib's loop: the same runner made to sample with
  ``MultiAgentEnvRunner``'s own loop (its connectors and
  ``MultiAgentEpisode.add_env_step`` per game and step);
* RLlib's ``MultiAgentEnvRunner`` with its ``SyncVectorMultiAgentEnv`` over
  ``HPUnoMultiAgentEnv`` copies, one game each.

Part 2 starts local Ray and times every runner sampling at once.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_engine import bench_engine, print_header

from agents.training.rllib_learner import ppo_config
from hpuno_env.rllib import HPUnoEnvRunner

RUNNERS = ("HPUnoEnvRunner", "one engine, RLlib's loop", "RLlib's runner")


class RLlibLoopRunner(HPUnoEnvRunner):
    """``HPUnoEnvRunner`` sampling with RLlib's own loop (its one ``VectorEngine`` still steps every game)."""

    def _batched_sampling_applies(self, num_timesteps, random_actions) -> bool:
        return False


def runner_rate(kind: str, games: int, steps: int) -> float:
    """Env steps/s of one runner (``kind``, one of ``RUNNERS``) sampling ``steps`` env steps (after a warm-up)."""
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner

    config = ppo_config(2, runners=0, games_per_runner=games, batched=kind != RUNNERS[2])
    runner = dict(zip(RUNNERS, (HPUnoEnvRunner, RLlibLoopRunner, MultiAgentEnvRunner)))[kind](config=config)
    runner.sample(num_timesteps=4 * games)
    start = time.perf_counter()
    episodes = runner.sample(num_timesteps=steps)
    seconds = time.perf_counter() - start
    runner.stop()
    return sum(episode.env_steps() for episode in episodes) / seconds


def profile_runner(games: int, steps: int) -> str:
    """The top of a cProfile of one ``HPUnoEnvRunner.sample()``, by cumulative time, then by own time."""
    runner = HPUnoEnvRunner(config=ppo_config(2, runners=0, games_per_runner=games))
    runner.sample(num_timesteps=4 * games)
    profiler = cProfile.Profile()
    profiler.runcall(runner.sample, num_timesteps=steps)
    text = io.StringIO()
    stats = pstats.Stats(profiler, stream=text)
    stats.sort_stats("cumulative").print_stats(20)
    stats.sort_stats("tottime").print_stats(12)
    return text.getvalue()


def ray_rate(runners: int, games: int, steps_per_runner: int) -> float:
    """Env steps/s of ``runners`` runner processes sampling at once (Ray already started)."""
    algo = ppo_config(2, runners=runners, games_per_runner=games).build_algo()
    try:
        group = algo.env_runner_group
        group.foreach_env_runner(lambda runner: runner.sample(num_timesteps=4 * games), local_env_runner=False)
        start = time.perf_counter()
        counts = group.foreach_env_runner(
            lambda runner: sum(episode.env_steps() for episode in runner.sample(num_timesteps=steps_per_runner)),
            local_env_runner=False,
        )
        return sum(counts) / (time.perf_counter() - start)
    finally:
        algo.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=6000, help="env steps timed per measurement")
    parser.add_argument("--profile", action="store_true", help="print where a batched runner's time goes")
    args = parser.parse_args()
    torch.set_num_threads(1)
    import ray

    print_header("RLlib env runner benchmark", "; 2 players, PPO 256x256 with masking, one torch thread per process",
                 f"ray {ray.__version__}, torch {torch.__version__}, ")

    print("\n1. One runner, in this process: env steps/s (ratio: HPUnoEnvRunner / RLlib's runner)")
    print(f"{'games per runner':>17} {'engine alone':>13}" + "".join(f" {kind:>25}" for kind in RUNNERS) + f" {'ratio':>7}")
    for games in (1, 16, 64, 256):
        engine = bench_engine(2, games, seconds=0.5, warmup_steps=3, seed=0, fused=True)["decisions_per_s"]
        rates = [runner_rate(kind, games, max(args.steps, 8 * games)) for kind in RUNNERS]
        print(f"{games:>17} {engine:>13,.0f}" + "".join(f" {rate:>25,.0f}" for rate in rates)
              + f" {rates[0] / rates[2]:>6.1f}x", flush=True)

    if args.profile:
        print("\nWhere HPUnoEnvRunner's time goes (64 games):")
        print(profile_runner(64, args.steps))

    print("\n2. Runner processes sampling at once (local Ray, batched, 64 games each): env steps/s")
    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        for runners in range(1, int(ray.cluster_resources().get("CPU", 1)) + 1):
            rate = ray_rate(runners, 64, args.steps)
            print(f"{runners:>3} runner(s): {rate:>9,.0f}  ({rate / runners:,.0f} per runner)")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
