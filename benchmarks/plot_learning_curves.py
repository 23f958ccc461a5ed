"""Learning curves over wall-clock time from train.py's evaluations.csv files, as one picture.

    python benchmarks/plot_learning_curves.py checkpoints/ppo_2p checkpoints/ppo_4p --out docs/learning_curves.png
    python benchmarks/plot_learning_curves.py runs/universal --out docs/agents/universal_curves.png

Each run folder (or evaluations.csv) gives one panel: the win rate against each
curve opponent (heuristic, random-play) with its 95% Wilson band, over the
run's cumulative wall-clock minutes (warm start and every resumed stage
included, evaluations excluded as train.py counts them), and the fair share
as a dashed line. Rows of the final table (opponents the periodic evaluations
do not play) are left out.

A universal run (``train.py --recipe universal``: a folder with
table_evaluations.csv) gives one panel with a curve per table: the win rate
against the heuristic divided by that table's fair share (1 / players), so
tables of every size share one axis.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys

CURVE_OPPONENTS = ("heuristic", "random-play")


def read_curve(path: str) -> tuple[dict, set]:
    """({opponent: list of (minutes, win_rate, low, high)}, the rounds per point) from an evaluations.csv or a folder holding one."""
    if os.path.isdir(path):
        path = os.path.join(path, "evaluations.csv")
    with open(path, newline="") as file:
        rows = list(csv.DictReader(file))
    curves: dict = {name: [] for name in CURVE_OPPONENTS}
    rounds = set()
    for row in rows:
        if row["opponent"] in curves:
            curves[row["opponent"]].append((float(row["wall_seconds"]) / 60, float(row["win_rate"]), float(row["low"]), float(row["high"])))
            rounds.add(int(row["rounds"]))
    return curves, rounds


def read_table_curves(run: str) -> dict:
    """{table label: list of (minutes, win_rate / fair share)} from a universal run's table_evaluations.csv."""
    with open(os.path.join(run, "table_evaluations.csv"), newline="") as file:
        rows = list(csv.DictReader(file))
    curves: dict = {}
    for row in rows:
        curves.setdefault(row["table"], []).append((float(row["wall_seconds"]) / 60, float(row["win_rate"]) * int(row["players"])))
    return curves


def plot_tables(ax, run: str) -> None:
    """One universal run's panel: every table's curve relative to its fair share."""
    curves = read_table_curves(run)
    from matplotlib import colormaps

    pairs = colormaps["tab20"].colors  # ten hues, each dark then light: eleven tables and more see no colour twice
    colours = pairs[::2] + pairs[1::2]
    for index, (label, points) in enumerate(curves.items()):
        minutes, relative = zip(*points)
        ax.plot(minutes, relative, marker=".", label=label, color=colours[index % len(colours)])
    ax.axhline(1, color="grey", linestyle="--", label="fair share")
    ax.set(title=f"{os.path.basename(os.path.normpath(run))} (every table against heuristics)",
           xlabel="wall-clock minutes (2-core machine)", ylabel="win rate / fair share")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize="small", ncol=2)


def read_players(run: str) -> int:
    """The player count of a train.py run folder, from its config.json."""
    with open(os.path.join(run, "config.json")) as file:
        return json.load(file)["options"]["players"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="train.py output folders (or their evaluations.csv)")
    parser.add_argument("--players", type=int, nargs="+", help="each run's player count, for the fair-share line (default: read from config.json)")
    parser.add_argument("--out", default="learning_curves.png", help="the picture (default learning_curves.png)")
    args = parser.parse_args(argv)
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6 * len(args.runs), 4), layout="constrained")
    axes = figure.subplots(1, len(args.runs), squeeze=False)[0]
    for index, (run, ax) in enumerate(zip(args.runs, axes)):
        if os.path.isfile(os.path.join(run, "table_evaluations.csv")):
            plot_tables(ax, run)
            continue
        try:
            curves, rounds = read_curve(run)
            players = args.players[index] if args.players else read_players(run)
        except (OSError, KeyError, ValueError, IndexError) as error:
            parser.error(f"{run}: {error}")
        for name, points in curves.items():
            if points:
                minutes, rate, low, high = zip(*points)
                ax.plot(minutes, rate, marker=".", label=f"vs {name}")
                ax.fill_between(minutes, low, high, alpha=0.25)
        ax.axhline(1 / players, color="grey", linestyle="--", label=f"fair share {1 / players:.0%}")
        ax.set(title=f"{os.path.basename(os.path.normpath(run))} ({players} players)", xlabel="wall-clock minutes (2-core machine)",
               ylabel=f"win rate ({'/'.join(f'{r:,}' for r in sorted(rounds))} rounds a point, 95% band)")
        ax.grid(alpha=0.3)
        ax.legend(loc="center right")  # between the two curves, clear of both
    figure.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
