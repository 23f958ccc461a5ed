"""How fast train.py learns: learner steps/s end to end and the rollout / update split, one core against both.

    python benchmarks/bench_training.py                    # 2 players, 160k PPO steps per setting, twice each
    python benchmarks/bench_training.py --players 4 --steps 80000 --repeats 1

Each setting is one ``python train.py`` run with the same options and seed (``--warm-start none``, against the
heuristic, no periodic evaluations or checkpoints), differing only in ``--threads`` (torch threads in PPO's
update; the rollout always uses one), ``--precision`` (float32, and bfloat16 where the CPU has it natively) and,
where CUDA is available, ``--device cuda``. The settings run in turn,
interleaved ``--repeats`` times so a change in the machine's load falls on all of them; the first PPO iteration of
each run (warm-up) is left out. The two-thread setting runs with OpenMP's threads spinning while they wait
(``OMP_WAIT_POLICY=ACTIVE``) and sleeping (``PASSIVE``, what ``python train.py`` sets unless told). Read from each run's ``losses.csv``: learner steps / (rollout + update seconds),
the rollout's share split into the games (engine and opponents) and the policy (its forward pass and SB3's
bookkeeping), and the update's. The one-core setting is the anchor: the ratios to it are the figures to read.

The last column is what overlapping the rollout of iteration k+1 with the update of iteration k (one on each
core) could at most give over that setting: (rollout + update) / max(rollout, update).
"""

from __future__ import annotations

import argparse
import csv
import os
import pathlib
import platform
import shlex
import subprocess
import sys
import tempfile
import time

import torch

from agents.training.precision import native_bfloat16

ROOT = pathlib.Path(__file__).resolve().parent.parent


def settings(cuda: bool, cpu_bfloat16: bool) -> dict[str, tuple[list[str], dict]]:
    """{label: (train.py options, environment variables)}: the anchor (one core, float32) first. OpenMP's wait policy
    is read once, when torch loads: ACTIVE (spinning) threads wait for a descheduled partner on a shared machine.
    The bfloat16 settings run where the device has it natively (agents/training/precision.py)."""
    active, passive = {"OMP_WAIT_POLICY": "ACTIVE"}, {"OMP_WAIT_POLICY": "PASSIVE"}
    found = {"one core (--threads 1)": (["--threads", "1", "--device", "cpu", "--precision", "float32"], {}),
             "both cores (--threads 2, OMP_WAIT_POLICY=ACTIVE)": (["--threads", "2", "--device", "cpu", "--precision", "float32"], active),
             "both cores (--threads 2, OMP_WAIT_POLICY=PASSIVE)": (["--threads", "2", "--device", "cpu", "--precision", "float32"], passive)}
    if cpu_bfloat16:
        found["one core, bfloat16 (--precision bfloat16)"] = (["--threads", "1", "--device", "cpu", "--precision", "bfloat16"], {})
        found["both cores, bfloat16 (ACTIVE)"] = (["--threads", "2", "--device", "cpu", "--precision", "bfloat16"], active)
        found["both cores, bfloat16 (PASSIVE)"] = (["--threads", "2", "--device", "cpu", "--precision", "bfloat16"], passive)
    if cuda:
        found["GPU (--device cuda)"] = (["--threads", "1", "--device", "cuda", "--precision", "float32"], {})
        if native_bfloat16("cuda"):
            found["GPU, bfloat16 (--device cuda --precision bfloat16)"] = (["--threads", "1", "--device", "cuda", "--precision", "bfloat16"], {})
    return found


def run_once(options: list[str], environment: dict, args, folder: str) -> dict:
    """One train.py run; its iterations after the first, summed."""
    out = os.path.join(folder, "run")
    command = [sys.executable, str(ROOT / "train.py"), "--players", str(args.players), "--timesteps", str(args.steps),
               "--envs", str(args.envs), "--n-steps", str(args.n_steps), "--opponent", args.opponent, "--warm-start", "none",
               "--eval-every", "0", "--checkpoint-every", str(10 * args.steps), "--final-rounds", "1", "--hold-out", "none",
               "--seed", "0", "--no-progress", "--overwrite", "--out", out, *options]
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), **environment})
    if result.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed:\n{result.stderr[-2000:]}")
    wall = time.perf_counter() - started
    with open(os.path.join(out, "losses.csv"), newline="") as file:
        rows = list(csv.DictReader(file))[1:]  # the first iteration warms up (allocations, first calls)
    previous = [int(row["timesteps"]) for row in rows]
    first_steps = previous[0] - (previous[1] - previous[0]) if len(previous) > 1 else 0
    total = {key: sum(float(row[key]) for row in rows) for key in ("rollout_seconds", "env_seconds", "update_seconds")}
    return {**total, "steps": previous[-1] - first_steps, "iterations": len(rows), "wall": wall}


def summary(runs: list[dict]) -> dict:
    total = {key: sum(run[key] for run in runs) for key in ("rollout_seconds", "env_seconds", "update_seconds", "steps")}
    busy = total["rollout_seconds"] + total["update_seconds"]
    return {**total, "busy": busy, "steps_per_second": total["steps"] / busy,
            "each": [run["steps"] / (run["rollout_seconds"] + run["update_seconds"]) for run in runs],
            "overlap_bound": busy / max(total["rollout_seconds"], total["update_seconds"])}


def markdown(results: dict) -> str:
    anchor = next(iter(results.values()))["steps_per_second"]
    lines = ["| setting | learner steps/s | vs one core | rollout: games / policy | update | update s per 1k steps | overlap could give |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for label, r in results.items():
        busy = r["busy"]
        each = " / ".join(f"{rate:,.0f}" for rate in r["each"])
        lines.append(f"| {label} | {r['steps_per_second']:,.0f} ({each}) | {r['steps_per_second'] / anchor:.2f}x | "
                     f"{r['env_seconds'] / busy:.0%} / {(r['rollout_seconds'] - r['env_seconds']) / busy:.0%} | "
                     f"{r['update_seconds'] / busy:.0%} | {1000 * r['update_seconds'] / r['steps']:.3f} | {r['overlap_bound']:.2f}x |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2, help="seats per game (default 2)")
    parser.add_argument("--steps", type=int, default=160_000, help="PPO steps per run (default 160000)")
    parser.add_argument("--repeats", type=int, default=2, help="runs per setting, interleaved (default 2)")
    parser.add_argument("--envs", type=int, default=128, help="games per engine (train.py's default 128)")
    parser.add_argument("--n-steps", type=int, default=64, help="decisions per game per rollout (train.py's default 64)")
    parser.add_argument("--opponent", default="heuristic", help="train.py --opponent (default heuristic)")
    args = parser.parse_args(argv)
    if args.steps < 3 * args.envs * args.n_steps:
        parser.error(f"--steps must cover at least 3 rollouts ({3 * args.envs * args.n_steps}), got {args.steps}")

    cuda = torch.cuda.is_available()
    chosen = settings(cuda, native_bfloat16("cpu"))
    from importlib.metadata import version

    print(f"python {platform.python_version()}, torch {torch.__version__}, stable-baselines3 {version('stable-baselines3')}, "
          f"sb3-contrib {version('sb3-contrib')}, numba {version('numba')}; {os.cpu_count()} cores, "
          f"{torch.cuda.get_device_name(0) if cuda else 'no CUDA device'}; {platform.processor() or platform.machine()}")
    print(f"{args.players} players, {args.envs} games x {args.n_steps} steps per rollout, against {args.opponent}, "
          f"{args.steps} steps per run, {args.repeats} runs per setting")
    load_before = os.getloadavg()
    started = time.perf_counter()
    runs: dict[str, list[dict]] = {label: [] for label in chosen}
    with tempfile.TemporaryDirectory() as folder:
        for repeat in range(args.repeats):
            for label, (options, environment) in chosen.items():
                runs[label].append(run_once(options, environment, args, folder))
                r = runs[label][-1]
                print(f"  run {repeat + 1} {label}: {r['steps'] / (r['rollout_seconds'] + r['update_seconds']):,.0f} learner steps/s "
                      f"(update {r['update_seconds'] / (r['rollout_seconds'] + r['update_seconds']):.0%}; {r['wall']:.0f} s wall)", flush=True)
    results = {label: summary(label_runs) for label, label_runs in runs.items()}
    print(f"\nload average (1, 5, 15 min): {', '.join(f'{x:.1f}' for x in load_before)} before, "
          f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} after; {time.perf_counter() - started:.0f} s in all\n")
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
