"""The search player's strength and time: win rates against the heuristic and against its blueprint.

    python benchmarks/bench_search.py --players 2 --rounds 300 --worlds 16 64
    python benchmarks/bench_search.py --players 4 --blueprint ppo_4p --rounds 300 --worlds 64
    python benchmarks/bench_search.py --players 2 --duplicate --rounds 2000 --worlds 64 256
    python benchmarks/bench_search.py --players 2 --blueprint ppo_2p --rollout blueprint+heuristic --duplicate --worlds 32
    python benchmarks/bench_search.py --players 2 --duplicate --evidence --rounds 2000 --worlds 64
    python benchmarks/bench_search.py --players 2 --duplicate --belief shipped --versus-uniform --rounds 600 --worlds 32
    python benchmarks/bench_search.py --players 2 --blueprint ppo_2p --rollout blueprint --others blueprint --duplicate --belief shipped --worlds 32

The benchmark names every option of the search player it loads: its own defaults are the heuristic blueprint
and uniform worlds (``--blueprint heuristic``, no ``--belief``), not ``agents.load("search")``'s (the table's
shipped agent, the shipped belief), which ``--blueprint ppo_2p --belief shipped`` (``ppo_4p`` at 4 players) give.

Each cell is ``agents.evaluation.rounds.win_rate``: the search player (``agents.load("search",
blueprint=..., worlds=...)``) in a rotating seat, the opponent in every other
seat, a fixed set of rounds all played to the end, with the Wilson 95%
interval; a fair share is 1 / players. The opponents are the heuristic and the
blueprint itself (one column when the blueprint is the heuristic). The time is
wall-clock seconds of the whole evaluation divided by the search player's
searched decisions (those with more than one legal action), so it includes
the opponents' share; "left" is the share of searched decisions where it
left the blueprint's action.

With ``--duplicate`` each cell is ``agents.evaluation.duplicate.duplicate_win_rate``
instead: every deal played once with the search player in the rotating seat
and once with its blueprint there, the heuristic (``--others blueprint``: the
blueprint) in every other seat both times; the cell gives both rates and the mean paired difference (search minus
blueprint, per deal) with its 95% interval, which resolves a small gain with
far fewer rounds than two separate win rates.

A duplicate cell of thousands of deals takes hours; ``--record FILE`` plays it
in chunks of ``--chunk-deals`` deals (chunk k's deals are those of seed
``seed + k``), appends each finished chunk to FILE as one JSON line, and on a
later run with the same options skips the chunks FILE holds: stopped at any
point, it resumes, and the table it prints pools every chunk recorded.
``--part K/N`` plays only the chunks k with k % N == K, so that N processes
(one a core) share a cell through one file.

    nohup python benchmarks/bench_search.py --players 2 --blueprint ppo_2p --rollout blueprint --others blueprint \
        --duplicate --belief shipped --worlds 32 --rounds 4000 --record search_2p.jsonl &
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import time
from pathlib import Path

import numpy as np

import agents
from agents.evaluation.duplicate import duplicate_win_rate, paired_interval
from agents.evaluation.rounds import wilson_interval, win_rate
from agents.players.search import BLUEPRINT_ROLLOUTS, COMPILED_ROLLOUTS


def search_player(args, worlds: int, belief: str | None = None):
    """The search player of a cell: the command's blueprint, gate, rollout and evidence, ``worlds`` worlds, its
    worlds dealt from ``belief`` (None: uniform)."""
    player = agents.load("search", args.players, seed=args.seed, blueprint=args.blueprint, worlds=worlds, gate=args.gate,
                         correct_gate=args.correct_gate, rollout=args.rollout, evidence=args.evidence, belief=belief)
    return timed(player)


def timed(player):
    """The player, each of its searched decisions' wall-clock seconds kept in ``player.search_seconds``."""
    search, player.search_seconds = player.search, []

    def timed_search(*args):
        start = time.perf_counter()
        action = search(*args)
        player.search_seconds.append(time.perf_counter() - start)
        return action

    player.search = timed_search
    return player


def median_ms(player) -> float:
    """The median wall-clock milliseconds of one searched decision, the search alone (opponents excluded)."""
    return 1000 * float(np.median(player.search_seconds)) if player.search_seconds else float("nan")


def cell(args, worlds: int, opponent: str) -> dict:
    player = search_player(args, worlds, args.belief)
    start = time.perf_counter()
    result = win_rate(player, agents.load(opponent, args.players, seed=args.seed + 1), args.players, rounds=args.rounds, seed=args.seed)
    seconds = time.perf_counter() - start
    result.update(ms_per_decision=1000 * seconds / max(player.decisions, 1), median_ms=median_ms(player),
                  left=player.changed / max(player.decisions, 1))
    return result


def duplicate_chunk(args, worlds: int, seed: int, deals: int) -> dict:
    """``deals`` deals of seed ``seed``: the search player against its blueprint on the same deals
    (``--versus-uniform``: against the same search dealing uniform worlds), ``--others`` in the other seats. Returns
    the counts ``pooled`` adds up, and the time."""
    player = search_player(args, worlds, args.belief)
    reference = (search_player(args, worlds) if args.versus_uniform
                 else agents.load(args.blueprint, args.players, seed=args.seed))
    others = args.blueprint if args.others == "blueprint" else "heuristic"
    start = time.perf_counter()
    result = duplicate_win_rate(player, reference, agents.load(others, args.players, seed=args.seed + 1),
                                args.players, rounds=deals, seed=seed)
    return {"seed": seed, "deals": deals, "a_wins": result["a"]["wins"], "b_wins": result["b"]["wins"],
            "a_only": result["a_only"], "b_only": result["b_only"], "seconds": time.perf_counter() - start,
            "decisions": player.decisions, "changed": player.changed,
            "search_ms": [round(1000 * s, 2) for s in player.search_seconds]}


def pooled(chunks: list[dict]) -> dict:
    """One cell from its chunks: each player's win rate (Wilson 95%), the mean paired difference per deal with its
    95% interval (``paired_interval`` over every deal's difference, rebuilt from the counts: each is +1, -1 or 0),
    the evaluation's milliseconds per searched decision, the median of one search, the share that left the
    blueprint."""
    deals = sum(c["deals"] for c in chunks)
    a_only, b_only = sum(c["a_only"] for c in chunks), sum(c["b_only"] for c in chunks)
    paired = np.concatenate([np.ones(a_only), -np.ones(b_only), np.zeros(deals - a_only - b_only)])
    decisions = max(sum(c["decisions"] for c in chunks), 1)
    searches = [ms for c in chunks for ms in c["search_ms"]]
    rates = {}
    for side in ("a", "b"):
        wins = sum(c[f"{side}_wins"] for c in chunks)
        rates[side] = dict(zip(("win_rate", "low", "high"), (wins / deals, *wilson_interval(wins, deals))))
    return {**rates, **paired_interval(paired), "deals": deals, "chunks": len(chunks),
            "ms_per_decision": 1000 * sum(c["seconds"] for c in chunks) / decisions,
            "median_ms": float(np.median(searches)) if searches else float("nan"),
            "left": sum(c["changed"] for c in chunks) / decisions}


def cell_key(args, worlds: int) -> dict:
    """What makes two recorded chunks part of the same cell."""
    names = ("players", "blueprint", "gate", "correct_gate", "rollout", "evidence", "belief", "versus_uniform", "others",
             "seed", "chunk_deals")
    return {"worlds": worlds, **{name: getattr(args, name) for name in names}}


def recorded_chunks(path: Path | None, key: dict) -> dict[int, dict]:
    """The chunks of the cell ``key`` that the record file holds, by chunk number (none without a file)."""
    chunks = {}
    if path is None or not path.exists():
        return chunks
    with path.open() as lines:
        for number, line in enumerate(lines, 1):
            if not line.endswith("\n"):
                break  # the last chunk, still being written by another part
            try:
                entry = json.loads(line)
                if entry["cell"] == key:
                    chunks[int(entry["chunk"])] = entry["result"]
            except (ValueError, KeyError, TypeError) as error:
                raise SystemExit(f"{path}: line {number} is not a chunk this benchmark wrote ({error}); "
                                 "give another --record file") from None
    return chunks


def duplicate_cell(args, worlds: int) -> dict:
    """The cell of ``worlds`` worlds, ``--rounds`` deals: one chunk of seed ``--seed`` without ``--record``; with it,
    this part's chunks the file lacks are played and appended one by one, and every recorded chunk pooled (the
    module docstring)."""
    if args.record is None:
        return pooled([duplicate_chunk(args, worlds, args.seed, args.rounds)])
    key = cell_key(args, worlds)
    count = -(-args.rounds // args.chunk_deals)
    part, parts = args.part
    try:
        for k in range(part, count, parts):
            if k not in recorded_chunks(args.record, key):
                result = duplicate_chunk(args, worlds, args.seed + k, args.chunk_deals)
                with args.record.open("a") as record:
                    record.write(json.dumps({"cell": key, "chunk": k, "result": result}) + "\n")
                print(f"# chunk {k + 1}/{count} of {worlds} worlds recorded in {args.record}", flush=True)
    except KeyboardInterrupt:
        print(f"# stopped; the same command resumes from the chunks recorded in {args.record}", flush=True)
    chunks = recorded_chunks(args.record, key)  # with those other parts have recorded meanwhile
    if not chunks:
        raise SystemExit(f"# no chunk of {worlds} worlds recorded yet in {args.record}")
    return pooled([chunks[k] for k in sorted(chunks)])


def print_duplicate_table(args) -> None:
    reference = "the same search with uniform worlds" if args.versus_uniform else "its blueprint"
    print(f"# search against {reference} in duplicate, {args.players} players, blueprint {args.blueprint}, gate {args.gate}"
          f"{' corrected' if args.correct_gate else ''}, "
          f"rollout {args.rollout}, evidence {args.evidence}, belief {args.belief}, "
          f"{args.rounds} deals a cell (each played twice), the {args.others} in the other seats, seed {args.seed}; "
          f"{datetime.date.today()}, {platform.machine()}")
    print("| worlds | deals | search [95%] | reference [95%] | search − reference (points) [95%] | ms / decision | median ms / search | left blueprint |")
    print("|---|---|---|---|---|---|---|---|")
    for worlds in args.worlds:
        r = duplicate_cell(args, worlds)
        a, b = r["a"], r["b"]
        print(f"| {worlds} | {r['deals']} | {a['win_rate']:.1%} [{100 * a['low']:.1f}, {100 * a['high']:.1f}] | "
              f"{b['win_rate']:.1%} [{100 * b['low']:.1f}, {100 * b['high']:.1f}] | "
              f"{100 * r['difference']:+.1f} [{100 * r['low']:+.1f}, {100 * r['high']:+.1f}] | "
              f"{r['ms_per_decision']:.1f} | {r['median_ms']:.1f} | {r['left']:.1%} |", flush=True)


def part_of(text: str) -> tuple[int, int]:
    """``--part K/N`` as (K, N), 0 <= K < N."""
    try:
        part, parts = (int(n) for n in text.split("/"))
    except ValueError:
        part, parts = -1, 0
    if not 0 <= part < parts:
        raise argparse.ArgumentTypeError(f"must be K/N with 0 <= K < N, got {text!r}")
    return part, parts


def check_record(parser, args) -> None:
    """Refuse a record file that cannot be appended to or that holds other lines, before any round is played."""
    if args.record is None:
        return
    if not args.duplicate:
        parser.error("--record keeps the chunks of duplicate cells: give --duplicate")
    if args.chunk_deals < 1 or args.chunk_deals % args.players:
        parser.error(f"--chunk-deals must be a positive multiple of --players ({args.players}), got {args.chunk_deals}")
    try:
        args.record.open("a").close()
    except OSError as error:
        parser.error(f"--record {args.record}: {error.strerror}")
    for worlds in args.worlds:
        recorded_chunks(args.record, cell_key(args, worlds))  # a file this benchmark did not write: refused now


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--blueprint", default="heuristic")
    parser.add_argument("--worlds", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--gate", type=float, default=2.0)
    parser.add_argument("--correct-gate", action="store_true",
                        help="the gate grows with the number of candidates (SearchAgent's correct_gate)")
    parser.add_argument("--rollout", default="heuristic", choices=[*COMPILED_ROLLOUTS, *BLUEPRINT_ROLLOUTS],
                        help="who plays the worlds out (agents.players.search)")
    parser.add_argument("--evidence", action="store_true",
                        help="worlds deal a seat that drew by choice on a colour none of it (SearchAgent's evidence)")
    parser.add_argument("--belief", default=None,
                        help="deal the search's worlds from a belief: 'shipped', 'certain' or a belief file (SearchAgent's belief)")
    parser.add_argument("--versus-uniform", action="store_true",
                        help="with --duplicate --belief: the reference is the same search dealing uniform worlds, not the blueprint")
    parser.add_argument("--others", default="heuristic", choices=["heuristic", "blueprint"],
                        help="with --duplicate: who plays the other seats (default: the heuristic)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--duplicate", action="store_true", help="each cell in duplicate against the blueprint (module docstring)")
    parser.add_argument("--record", type=Path, default=None,
                        help="with --duplicate: play in chunks, append each to this JSON-lines file, skip those it holds")
    parser.add_argument("--chunk-deals", type=int, default=100, help="with --record: deals a chunk (a multiple of --players)")
    parser.add_argument("--part", type=part_of, default=(0, 1), help="with --record: play only the chunks k with k %% N == K (K/N)")
    args = parser.parse_args(argv)
    check_record(parser, args)
    if args.versus_uniform and not (args.duplicate and args.belief):
        parser.error("--versus-uniform compares belief worlds with uniform ones: give --duplicate and --belief")
    if args.duplicate:
        print_duplicate_table(args)
        return 0
    opponents = ["heuristic"] if args.blueprint == "heuristic" else ["heuristic", args.blueprint]
    print(f"# search, {args.players} players, blueprint {args.blueprint}, gate {args.gate}, rollout {args.rollout}, "
          f"evidence {args.evidence}, {args.rounds} rounds a cell, "
          f"seed {args.seed}; {datetime.date.today()}, {platform.machine()}")
    print("| worlds | opponent | win rate [95%] | ms / decision | median ms / search | left blueprint |")
    print("|---|---|---|---|---|---|")
    for worlds in args.worlds:
        for opponent in opponents:
            r = cell(args, worlds, opponent)
            print(f"| {worlds} | {opponent} | {r['win_rate']:.1%} [{100 * r['low']:.1f}, {100 * r['high']:.1f}] | "
                  f"{r['ms_per_decision']:.1f} | {r['median_ms']:.1f} | {r['left']:.1%} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
