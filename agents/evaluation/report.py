"""A tournament's reports: the ranked text table, the pictures (pairwise win rates, ratings) and the files written
to ``--out`` (results.csv, results.json, the pictures, the game records).

They read the plain-data result of ``agents.evaluation.tournament.run`` (or of ``run_duplicate``: the
``*_duplicate_*`` functions).
"""

from __future__ import annotations

import csv
import json
import math
import os
import re

import numpy as np

import hpuno_env
from hpuno_env import RulesOptions
from hpuno_env._output import FolderLock, file_problem, folder_problem


def _format_grid(header: list[str], lines: list[list[str]], right: set[int]) -> str:
    widths = [max(len(cell) for cell in column) for column in zip(header, *lines)]
    def fmt(cells):
        return "  ".join(cell.rjust(width) if index in right else cell.ljust(width) for index, (cell, width) in enumerate(zip(cells, widths))).rstrip()
    return "\n".join([fmt(header), fmt(["-" * width for width in widths])] + [fmt(line) for line in lines])


def format_report(result: dict) -> str:
    """The ranked table, the per-table results and the timing, as plain text."""
    config, timing = result["config"], result["timing"]
    unit = config["unit"]
    win_header, points_header = ("match win rate", "mean score") if unit == "match" else ("win rate", "mean points")
    ranked = _format_grid(
        ["rank", "agent", "rating (mu ± sigma)", f"{win_header} per seat [95%]", "fair", points_header, "seat-" + unit + "s"],
        [[str(entry["rank"]), entry["agent"], f"{entry['mu']:.2f} ± {entry['sigma']:.2f}",
          f"{entry['win_rate']:.3f} [{entry['low']:.3f}, {entry['high']:.3f}]", f"{entry['fair_share']:.3f}",
          f"{entry['mean_points']:+.1f}", f"{entry['seat_rounds']:,}"] for entry in result["ranking"]],
        right={0, 4, 5, 6},
    )
    per_table = _format_grid(
        ["table", "agent", "seats", f"{win_header} [95%]", "fair", points_header, "truncated"],
        [[row["table"], row["agent"], f"{row['seats']:.2f}".rstrip("0").rstrip("."), f"{row['win_rate']:.3f} [{row['low']:.3f}, {row['high']:.3f}]",
          f"{row['fair_share']:.3f}", f"{row['mean_points']:+.1f}", str(row["truncated"])] for row in result["rows"]],
        right={2, 4, 5, 6},
    )
    non_default = {name: value for name, value in config["rules"].items() if value != _default_rules()[name]}
    heading = (
        f"{len(config['agents'])} agents, {config['num_players']} players, {_count(config['rounds_per_table'], unit)} per table, "
        f"{_count(len(result['tables']), 'table')}, seed {config['seed']}, rules {non_default or 'default'}"
    )
    footer = (
        f"{_count(timing['rounds'], unit)} ({timing['truncated']:,} truncated) in {timing['playing_seconds']:.1f} s "
        f"({timing['rounds_per_second']:,.0f} {_plural(unit)}/s); rating {timing['rating_seconds']:.1f} s"
    )
    if "partial" in result:
        heading = f"PARTIAL: {partial_summary(result['partial'], unit)} (the ranking is of those {_plural(unit)} only)\n{heading}"
    return f"{heading}\n\n{ranked}\n\n{per_table}\n\n{footer}"


def partial_summary(done: dict, unit: str = "round") -> str:
    """What an interrupted tournament played, in words, from its result's ``partial``: the tables finished, the
    rounds played of the table cut short, and how many rounds were rated when the rating stopped early."""
    text = f"interrupted after {done['tables_finished']} of {done['tables_scheduled']} tables"
    if "cut_table" in done:
        cut = done["cut_table"]
        text += f" and {cut['rounds_played']:,} of {_count(cut['rounds_scheduled'], unit)} of {cut['table']}"
    if "rated_rounds" in done:
        text += f"; ratings from the first {_count(done['rated_rounds'], unit)} in the rating order"
    return text


def format_duplicate_report(result: dict) -> str:
    """``run_duplicate``'s result as plain text: each agent's win rate, the paired difference and how it compares."""
    config, paired = result["config"], result["duplicate"]
    unit, deals = config["unit"], paired["rounds"]
    names, copies = (paired["agent_a"], paired["agent_b"]), ("" if config["num_players"] == 2 else f"{config['num_players'] - 1}x ")
    table = _format_grid(
        ["agent", f"{'match win rate' if unit == 'match' else 'win rate'} [95%]", "fair", "mean score" if unit == "match" else "mean points"],
        [[name, f"{summary['win_rate']:.3f} [{summary['low']:.3f}, {summary['high']:.3f}]", f"{1 / config['num_players']:.3f}",
          f"{summary['mean_points']:+.1f}"] for name, summary in zip(names, (paired["a"], paired["b"]))],
        right={2, 3},
    )
    non_default = {name: value for name, value in config["rules"].items() if value != _default_rules()[name]}
    heading = (f"duplicate: {names[0]} and {names[1]}, each alone against {copies}{paired['opponent']} on the same "
               f"{_count(deals, 'deal')} ({config['num_players']} players, each deal played once by each), seed {config['seed']}, "
               f"rules {non_default or 'default'}")
    saving = (paired["half_width"] / paired["unpaired_half_width"]) ** 2 if paired["unpaired_half_width"] > 0 else math.nan
    lines = [
        f"paired difference ({names[0]} - {names[1]}): {paired['difference']:+.3f} [{paired['low']:+.3f}, {paired['high']:+.3f}] "
        f"(95%, normal approximation on the per-deal differences, sd {paired['sd']:.3f})",
        f"deals with different outcomes: {paired['differing']:,} of {deals:,} ({names[0]} alone won {paired['a_only']:,}, "
        f"{names[1]} alone won {paired['b_only']:,}); mean points difference {paired['points_difference']:+.1f}",
        f"unpaired, the same {_plural(unit)} would give ±{paired['unpaired_half_width']:.3f} (sd {paired['unpaired_sd']:.3f}): "
        f"duplicate needs {saving:.0%} as many {_plural(unit)} for the same interval",
    ]
    timing = result["timing"]
    footer = f"{_count(timing['rounds'], unit)} in {timing['playing_seconds']:.1f} s ({timing['rounds_per_second']:,.0f} {_plural(unit)}/s)"
    return "\n\n".join([heading, table, "\n".join(lines), footer])


def write_duplicate_outputs(result: dict, out_dir: str, command: str | None = None) -> list[str]:
    """Write ``run_duplicate``'s result into out_dir: results.csv (one row per agent: its win-rate summary and
    the paired difference) and results.json (everything, and the command). Returns the paths."""
    os.makedirs(out_dir, exist_ok=True)
    paired = result["duplicate"]
    # The paired keys that share a name with a win-rate summary's are renamed, not overwritten.
    common = {("difference_" + key if key in ("low", "high") else "deals" if key == "rounds" else key): value
              for key, value in paired.items() if not isinstance(value, (dict, list)) and key not in ("agent_a", "agent_b")}
    rows = [{"agent": paired[name], **{key: value for key, value in paired[side].items() if not isinstance(value, list)}, **common}
            for name, side in (("agent_a", "a"), ("agent_b", "b"))]
    csv_path, json_path = (os.path.join(out_dir, name) for name in OUTPUT_FILES)
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with open(json_path, "w") as handle:
        json.dump({"command": command, **result}, handle, indent=2)
        handle.write("\n")
    return [csv_path, json_path]


def _default_rules() -> dict:
    return RulesOptions().as_dict()


def plot_pairwise(result: dict, ax=None):
    """Heat map of ``result["pairwise"]``: row agent alone against copies of the column agent,
    each cell its win rate and 95% interval, coloured round the fair share. Returns the Figure."""
    from matplotlib.colors import TwoSlopeNorm  # matplotlib only for the pictures (--plot): it is slow to import
    from matplotlib.figure import Figure

    pairwise = result["pairwise"]
    labels = pairwise["agents"]
    size = len(labels)
    if ax is None:
        ax = Figure(figsize=(1.6 * size + 2.2, 1.2 * size + 1.6), layout="constrained").add_subplot()
    rates = np.array([[np.nan if value is None else value for value in line] for line in pairwise["win_rate"]])
    fair = pairwise["fair_share"]
    ax.set_facecolor("#e0e0e0")  # the empty diagonal (NaN is drawn transparent)
    image = ax.imshow(rates, cmap="RdBu", norm=TwoSlopeNorm(vcenter=fair, vmin=0.0, vmax=1.0))
    for i in range(size):
        for j in range(size):
            if i == j:
                continue
            dark = abs(rates[i, j] - fair) > 0.3
            ax.text(j, i, f"{rates[i, j]:.3f}\n[{pairwise['low'][i][j]:.3f}, {pairwise['high'][i][j]:.3f}]",
                    ha="center", va="center", fontsize=8, color="white" if dark else "black")
    ax.set_xticks(range(size), labels, rotation=30, ha="right")
    ax.set_yticks(range(size), labels)
    players = result["config"]["num_players"]
    ax.set_xlabel("opponent" if players == 2 else f"opponent ({players - 1} copies)")
    ax.set_ylabel("agent")
    ax.set_title(f"win rate, {players} players, {result['config']['rounds_per_table']:,} {result['config']['unit']}s per table (fair {fair:.2f})", fontsize=10)
    ax.figure.colorbar(image, ax=ax, shrink=0.8, label="win rate")
    return ax.figure


def plot_ratings(result: dict, ax=None):
    """The ranking's openskill ratings, mu with error bars of ±1.96 sigma (95%). Returns the Figure."""
    from matplotlib.figure import Figure  # only for the pictures (--plot), as in plot_pairwise

    ranking = result["ranking"][::-1]  # best at the top
    if ax is None:
        ax = Figure(figsize=(6, 0.5 * len(ranking) + 1.4), layout="constrained").add_subplot()
    positions = np.arange(len(ranking))
    ax.errorbar([entry["mu"] for entry in ranking], positions, xerr=[1.96 * entry["sigma"] for entry in ranking],
                fmt="o", capsize=4, color="tab:blue")
    ax.set_yticks(positions, [entry["agent"] for entry in ranking])
    ax.set_xlabel("openskill rating (mu, bars ±1.96 sigma)")
    ax.set_title(f"ratings from {result['timing']['rounds']:,} {result['config']['unit']}s, {result['config']['num_players']} players", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return ax.figure


def _plural(noun: str) -> str:
    return noun + ("es" if noun.endswith("ch") else "s")


def _count(number: int, noun: str) -> str:
    """'1 match', '2,000 matches', '3 tables'."""
    return f"{number:,} {noun if number == 1 else _plural(noun)}"


OUTPUT_FILES = ("results.csv", "results.json")
PICTURE_FILES = ("tournament_pairwise.png", "tournament_ratings.png")
RECORD_FILE = re.compile(r"\d+-.+-(round|match)\d+\.json")  # records/<table number>-<table name>-<unit><r>.json
LOCK_FILE = "tournament.lock"  # held (flock) by the tournament writing into the folder; the OS lets go of it when that process ends


def earlier_outputs(out_dir: str) -> list[str]:
    """The files a tournament wrote into ``out_dir``: its results, pictures and game records (a user's own files
    there are not among them)."""
    found = [os.path.join(out_dir, name) for name in (*OUTPUT_FILES, *PICTURE_FILES) if os.path.isfile(os.path.join(out_dir, name))]
    records = os.path.join(out_dir, "records")
    try:
        names = sorted(os.listdir(records))
    except OSError:
        return found
    return found + [os.path.join(records, name) for name in names
                    if RECORD_FILE.fullmatch(name) and os.path.isfile(os.path.join(records, name))]


def claim_outputs(out_dir: str, overwrite: bool) -> tuple[FolderLock | None, str | None]:
    """Hold ``out_dir`` (which ``outputs_problem`` found writable) for one tournament: its lock taken, so that no
    other tournament writes there meanwhile, then an earlier tournament's outputs refused or, with ``overwrite``,
    removed. Returns (the lock, held until its ``release``; None) or (None, why the folder cannot be used)."""
    lock = FolderLock(out_dir, LOCK_FILE)
    problem = lock.acquire()
    if problem:
        return None, problem
    earlier = earlier_outputs(out_dir)
    if earlier and not overwrite:
        lock.release()
        names = ", ".join(os.path.relpath(path, out_dir) for path in earlier[:3]) + (", ..." if len(earlier) > 3 else "")
        return None, (f"--out {out_dir} holds an earlier tournament's results ({names})\n"
                      "pass --overwrite to replace them, or choose another --out")
    for path in earlier:
        os.remove(path)
    return lock, None


def outputs_problem(out_dir: str, plot: bool, record: bool) -> str | None:
    """Why ``write_outputs`` could not write into ``out_dir`` (checked before any game is played), or None."""
    problem = folder_problem(out_dir)
    names = (*OUTPUT_FILES, *(PICTURE_FILES if plot else ()))
    for name in names:
        problem = problem or file_problem(os.path.join(out_dir, name))
    return problem or (folder_problem(os.path.join(out_dir, "records")) if record else None)


def write_outputs(result: dict, out_dir: str, plot: bool = False, command: str | None = None) -> list[str]:
    """Write results.csv (the per-table rows), results.json (everything, and the command; of the
    records only their list), with ``plot`` tournament_pairwise.png and tournament_ratings.png, and
    each of ``result["records"]`` that holds its record as ``records/<its file>`` into out_dir. Returns the paths."""
    os.makedirs(out_dir, exist_ok=True)
    paths = []
    csv_path = os.path.join(out_dir, OUTPUT_FILES[0])
    with open(csv_path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(result["rows"][0]))
        writer.writeheader()
        writer.writerows(result["rows"])
    paths.append(csv_path)
    json_path = os.path.join(out_dir, OUTPUT_FILES[1])
    records = result.get("records", [])
    listed = {"records": [{key: value for key, value in entry.items() if key != "record"} for entry in records]} if records else {}
    with open(json_path, "w") as handle:
        json.dump({"command": command, **result, **listed}, handle, indent=2)
        handle.write("\n")
    paths.append(json_path)
    for entry in records:
        if "record" in entry:  # not one ``run`` already wrote (its ``records_dir``)
            path = os.path.join(out_dir, "records", entry["file"])
            hpuno_env.records.save_record(entry["record"], path)
            paths.append(path)
    if plot:
        for name, draw in zip(PICTURE_FILES, (plot_pairwise, plot_ratings)):
            path = os.path.join(out_dir, name)
            draw(result).savefig(path, dpi=100)
            paths.append(path)
    return paths
