"""The training loop's fingerprints: the sha256 of the weights that short seeded ``train.py`` runs end with.

    python benchmarks/training_fingerprints.py               # run them all, compare with training_fingerprints.json
    python benchmarks/training_fingerprints.py --run league  # one of them (repeatable)
    python benchmarks/training_fingerprints.py --record      # run them and write training_fingerprints.json

Each run (``RUNS``) is a train.py command small enough to take seconds, yet going through every stage of a run:
the warm start (behaviour cloning of the heuristic), PPO, the periodic evaluations (and, in a league, the
snapshots they decide), checkpoints, the final evaluation and the export. It trains into a temporary folder,
on the CPU with one torch thread, so the same code on the same machine and packages gives the same bytes.

Two digests a run: ``agent``, of the tensors of the exported agent.safetensors (names, dtypes, shapes and bytes;
the file's JSON metadata holds wall-clock times, so the file itself differs run to run), and ``checkpoint``, of
the network and optimiser state in checkpoint.zip (``policy.pth`` and ``policy.optimizer.pth``, read with
``torch.load(weights_only=True)``: every tensor's bytes and every number). A change of the training loop that
is meant to change nothing (a refactor) must leave both as recorded: docs/contributing.md.

The check compares with the JSON recorded by ``--record`` (its commands, date, machine and package versions)
and exits 1 naming each run whose digests differ (or that failed); other packages or another CPU may change
the floating-point results, so it says so when the versions or machine differ from the recorded ones.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import zipfile
from importlib.metadata import version

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
from hpuno_env._reading import read_json_file  # noqa: E402  (the one home of reading a JSON file)

RECORD = os.path.join(HERE, "training_fingerprints.json")

# What every run shares: PPO in rollouts of 16 games x 32 decisions on a 32-unit network after a warm start of 2,000
# decisions (one pass), an evaluation and a checkpoint every 512 steps, 10-round evaluations, rounds capped at 500
# turns (an untrained greedy player cannot stall them), on the CPU with one thread.
SMALL = ["--timesteps", "1024", "--envs", "16", "--n-steps", "32", "--batch-size", "256", "--net-arch", "32",
         "--warm-start-decisions", "2000", "--warm-start-epochs", "1", "--checkpoint-every", "512", "--eval-every", "512",
         "--eval-rounds", "10", "--final-rounds", "10", "--rules", '{"max_turns": 500}', "--device", "cpu", "--threads", "1",
         "--no-progress"]
# name: train.py's options after SMALL ("--out" is added). The league run holds the heuristic out (so it warm-starts
# from heuristic-v0): its league is random-play and the snapshots the learner earns against it, at 0 and 512 steps.
RUNS = {
    "2 players": ["--players", "2", "--warm-start", "heuristic"],
    "4 players": ["--players", "4", "--warm-start", "heuristic", "--opponent", "heuristic"],
    "universal": ["--tables", "2,3", "--house-tables", "2", "--warm-start", "heuristic"],
    "universal league": ["--tables", "2,3", "--warm-start", "heuristic", "--opponent", "league"],
    "league": ["--players", "2", "--warm-start", "heuristic-v0", "--hold-out", "heuristic", "--opponent", "league",
               "--league-rounds", "40"],
}
PACKAGES = ("torch", "numpy", "numba", "stable-baselines3", "sb3-contrib", "safetensors")


def command(name: str, out: str) -> list[str]:
    return ["python", "train.py", *SMALL, *RUNS[name], "--out", out]


def recorded_command(name: str) -> str:
    """Run ``name``'s command as the record holds it, its folder written OUT."""
    return shlex.join(command(name, "OUT"))


def digest_value(value, sha) -> None:
    """Feeds ``value`` (nested dicts, lists, tensors, numbers, strings) into ``sha`` in one canonical order."""
    import torch

    if isinstance(value, dict):
        sha.update(b"{")
        for key in sorted(value, key=repr):
            sha.update(repr(key).encode() + b":")
            digest_value(value[key], sha)
        sha.update(b"}")
    elif isinstance(value, (list, tuple)):
        sha.update(b"[")
        for item in value:
            digest_value(item, sha)
        sha.update(b"]")
    elif isinstance(value, torch.Tensor):
        tensor = value.detach().cpu().contiguous()
        sha.update(f"tensor {tensor.dtype} {tuple(tensor.shape)}:".encode())
        sha.update(tensor.reshape(-1).view(torch.uint8).numpy().tobytes())
    else:
        sha.update(repr(value).encode())


def agent_digest(path: str) -> str:
    """sha256 of the tensors of an agent file (not its metadata)."""
    from safetensors.torch import load_file

    sha = hashlib.sha256()
    digest_value(load_file(path), sha)
    return sha.hexdigest()


def checkpoint_digest(path: str) -> str:
    """sha256 of the network and optimiser state of an SB3 checkpoint."""
    import torch

    sha = hashlib.sha256()
    with zipfile.ZipFile(path) as archive:
        for member in ("policy.pth", "policy.optimizer.pth"):
            digest_value({member: torch.load(io.BytesIO(archive.read(member)), map_location="cpu", weights_only=True)}, sha)
    return sha.hexdigest()


def fingerprint(name: str) -> dict:
    """Trains run ``name`` into a temporary folder: its digests and seconds, or the error that stopped it."""
    with tempfile.TemporaryDirectory(prefix="hpuno-fingerprint-") as folder:
        out = os.path.join(folder, "run")
        argv = command(name, out)
        started = time.perf_counter()
        result = subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        if result.returncode != 0:
            return {"error": f"train.py exited with {result.returncode}: {(result.stderr or result.stdout)[-1500:]}"}
        return {"agent": agent_digest(os.path.join(out, "agent.safetensors")),
                "checkpoint": checkpoint_digest(os.path.join(out, "checkpoint.zip")), "seconds": round(seconds, 1)}


def machine() -> str:
    """The CPU model (where /proc/cpuinfo names it) and the cores seen."""
    model = platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    return f"{model}, {os.cpu_count()} cores"


def environment() -> dict:
    return {"machine": machine(), "python": platform.python_version(), **{name: version(name) for name in PACKAGES}}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    parser.add_argument("--record", action="store_true", help=f"write the digests to {os.path.relpath(RECORD, ROOT)} instead of checking them")
    parser.add_argument("--run", action="append", choices=list(RUNS), help="only this run (repeatable; default: every run)")
    return parser.parse_args(argv)


def read_record() -> dict:
    """The recorded fingerprints; ValueError naming the file if it is missing or not a record."""
    record = read_json_file(RECORD, "the training fingerprints")
    if not (isinstance(record, dict) and isinstance(record.get("runs"), dict) and isinstance(record.get("environment"), dict)):
        raise ValueError(f"{RECORD} is not a record of runs: write it with --record")
    return record


def mismatch(name: str, result: dict, record: dict) -> str | None:
    """How run ``name``'s result differs from the record, or None."""
    expected = record["runs"].get(name)
    if not isinstance(expected, dict):
        return "not in the record (--record writes every run)"
    if expected.get("command") != recorded_command(name):
        return f"its command is not the recorded one ({expected.get('command')}): record it again"
    differ = [part for part in ("agent", "checkpoint") if result[part] != expected.get(part)]
    if differ:
        return (f"the {' and '.join(differ)} digest{'s differ' if len(differ) > 1 else ' differs'} from the record "
                f"(recorded agent {expected.get('agent')}, checkpoint {expected.get('checkpoint')})")
    return None


def write_record(results: dict) -> None:
    record = {"date": datetime.date.today().isoformat(), "environment": environment(),
              "command": "python benchmarks/training_fingerprints.py --record",
              "runs": {name: {"command": recorded_command(name), **result} for name, result in results.items()}}
    with open(RECORD, "w") as file:
        json.dump(record, file, indent=2)
        file.write("\n")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.record and args.run:
        print("training_fingerprints.py: error: --record records every run: leave out --run", file=sys.stderr)
        return 2
    record = None
    if not args.record:
        try:
            record = read_record()
        except ValueError as error:
            print(f"training_fingerprints.py: error: {error}", file=sys.stderr)
            return 2
        here, then = environment(), record["environment"]
        changed = ", ".join(f"{key} {then.get(key)} -> {value}" for key, value in here.items() if value != then.get(key))
        if changed:
            print(f"note: recorded with other packages or on another machine ({changed}): the floating-point "
                  "results, and so the digests, may differ for that reason alone", flush=True)
    results, failed = {}, []
    for name in args.run or list(RUNS):
        results[name] = result = fingerprint(name)
        problem = result["error"] if "error" in result else mismatch(name, result, record) if record else None
        if "error" not in result:
            print(f"{name}: agent {result['agent']}  checkpoint {result['checkpoint']}  ({result['seconds']} s)", flush=True)
        if problem:
            failed.append(name)
            print(f"{name}: MISMATCH: {problem}", flush=True)
    if failed:
        print(f"training fingerprints {'not recorded' if args.record else 'differ'}: {', '.join(failed)}", file=sys.stderr)
        return 1
    if args.record:
        write_record(results)
        print(f"recorded {len(results)} run(s) in {os.path.relpath(RECORD, ROOT)}")
    else:
        print(f"the same bytes as recorded on {record['date']} for {len(results)} run(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
