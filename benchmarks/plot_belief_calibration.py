"""The belief's calibration as a figure, from the JSON that ``bench_belief.py --out`` writes.

    python benchmarks/plot_belief_calibration.py docs/agents/belief_calibration_2_4.json \
        docs/agents/belief_calibration_3_6_10.json --out docs/agents/belief_calibration.png

One panel a table (player count): the Brier score of the events that decide moves (the next seat holds no card of
a colour; holds a Draw Two or a Wild Draw Four) by stage of the round (opening, middle, late), one line per belief
and kind of opponent. ``certain`` is the uniform belief over what is certain; the others are learned. Lower is
better.
"""

from __future__ import annotations

import argparse
import json
import os

STAGES = ("opening", "middle", "late")
MARKERS = {"heuristic": "o", "random-play": "s", "search": "^"}


def read_rows(paths: list[str]) -> list[dict]:
    rows = []
    for path in paths:
        with open(path, encoding="utf-8") as file:
            rows.extend(json.load(file))
    return rows


def belief_name(belief: str) -> str:
    """A belief's short name: ``certain`` or its file's stem."""
    if belief == "certain":
        return belief
    return os.path.splitext(os.path.basename(belief.rstrip(")").split("(")[-1]))[0]


def draw(rows: list[dict], out: str) -> None:
    from matplotlib.figure import Figure

    tables = sorted({row["players"] for row in rows})
    columns = 3
    rows_of_panels = -(-(len(tables) + 1) // columns)  # one slot more, for the legend
    figure = Figure(figsize=(4.2 * columns, 3.4 * rows_of_panels), layout="constrained")
    slots = list(figure.subplots(rows_of_panels, columns, sharey=True, squeeze=False).flat)
    axes, spare = slots[:len(tables)], slots[len(tables):]
    beliefs = sorted({belief_name(row["belief"]) for row in rows}, key=lambda name: (name != "certain", name))
    colours = {name: f"C{index}" for index, name in enumerate(beliefs)}
    for axis, players in zip(axes, tables):
        for belief in beliefs:
            for opponent, marker in MARKERS.items():
                points = {row["stage"]: row["brier"] for row in rows if row["players"] == players
                          and row["opponent"] == opponent and belief_name(row["belief"]) == belief}
                if all(stage in points for stage in STAGES):
                    axis.plot(STAGES, [points[stage] for stage in STAGES], marker=marker, color=colours[belief],
                              linestyle="--" if belief == "certain" else "-", label=f"{belief}, {opponent}")
        axis.set_title(f"{players} players")
        axis.set_xlabel("stage of the round")
    axes[0].set_ylabel("Brier score (lower is better)")
    legend = {}
    for axis in axes:
        legend.update(zip(*reversed(axis.get_legend_handles_labels())))
    for axis in spare:
        axis.axis("off")
    spare[0].legend(legend.values(), legend.keys(), loc="center", fontsize="small")
    figure.savefig(out, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="JSON files written by bench_belief.py --out")
    parser.add_argument("--out", required=True, help="the figure's file (.png or .svg)")
    args = parser.parse_args(argv)
    rows = read_rows(args.files)
    if not rows:
        parser.error("the files hold no rows")
    draw(rows, args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
