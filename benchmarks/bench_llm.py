"""A language model's report card: its duplicate win rate against the ladder, its illegal answers, tokens and time.

    OPENAI_API_KEY=... python benchmarks/bench_llm.py --base-url http://127.0.0.1:8080/v1 --model qwen3-8b \\
        --players 2 --rounds 200 --out runs/llm
    python benchmarks/bench_llm.py --stub --model good --rounds 20      # against the stand-in server, no model
    python benchmarks/bench_llm.py --show-prompt                         # the full prompt of one decision

For each ``--model`` and each reference player R (``--references``; by default ``random-play``, ``heuristic``,
the shipped agents made for this table, and ``search``), ``agents.evaluate.duplicate_win_rate(llm, R,
opponent=R)``: every deal played twice, once with the language model alone in the rotating evaluated seat and once
with R there, R in every other seat, on the same cards and random streams. The row gives the model's win rate,
R's own on the same deals (about the fair share 1/N), their paired difference with its 95% interval, and from the
player's ``stats`` over those games: illegal answers and fallbacks per decision, prompt and completion tokens per
decision, seconds per decision (each decision's latency: ``stats["seconds"] / decisions``), decisions per round,
tokens per round, and the wall-clock seconds of the row.

``--stub`` starts ``agents.players.llm_stub.ChatStub`` on 127.0.0.1 and asks it instead (``--model`` then names
its behaviour, e.g. ``good``): the harness's own time and the tokens of the prompts, with no model. The API key
comes only from ``OPENAI_API_KEY`` (never an option: it would stay in the shell's history and the results).
``--option NAME=VALUE`` gives the player other options (``timeout``, ``concurrency``, ``cache``, ``temperature``,
``max_tokens``, ``fallback``, ...). ``--out DIR`` writes ``llm_report.json``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import sys
import time
import warnings

import torch

import agents
from hpuno_env import VectorEngine
from agents._cli import parse_agent_options, parse_rules
from agents.evaluate import duplicate_win_rate
from agents.players import SHIPPED
from agents.players.llm_stub import ChatStub

NAME = "bench_llm.py"


def shipped_for(num_players: int, rules: dict) -> list[str]:
    """The shipped agents that load for this table without a warning that they were made under other rules."""
    names = []
    for name in sorted(SHIPPED):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                agents.load(name, num_players=num_players, rules_options=rules)
            except (ValueError, UserWarning):
                continue
        names.append(name)
    return names


def stats_delta(after: dict, before: dict) -> dict:
    return {key: after[key] - before[key] for key in after}


def measure(llm, reference: str, num_players: int, rounds: int, seed: int, rules: dict) -> dict:
    """One row: the model against ``reference`` on duplicate deals, and what its stats say of those games."""
    other = agents.load(reference, num_players=num_players, seed=seed, rules_options=rules)
    before, started = dict(llm.stats), time.perf_counter()
    result = duplicate_win_rate(llm, other, other, num_players=num_players, rounds=rounds, seed=seed, **rules)
    stats, wall = stats_delta(llm.stats, before), time.perf_counter() - started
    decisions = max(1, stats["decisions"])
    return {
        "reference": reference, "rounds": rounds, "win_rate": result["win_rate_a"], "reference_win_rate": result["win_rate_b"],
        "difference": result["difference"], "low": result["low"], "high": result["high"], "stats": stats,
        "illegal_answers_per_decision": stats["illegal_answers"] / decisions, "fallback_rate": stats["fallbacks"] / decisions,
        "prompt_tokens_per_decision": stats["prompt_tokens"] / decisions,
        "completion_tokens_per_decision": stats["completion_tokens"] / decisions,
        "seconds_per_decision": stats["seconds"] / decisions, "decisions_per_round": stats["decisions"] / rounds,
        "tokens_per_round": (stats["prompt_tokens"] + stats["completion_tokens"]) / rounds, "wall_seconds": wall,
    }


HEADER = ("| model | against | rounds | model win rate | its own | difference [95%] | illegal / decision | fallbacks / decision "
          "| prompt tokens / decision | completion tokens / decision | s / decision | decisions / round | tokens / round | wall s |")


def row(model: str, entry: dict) -> str:
    return (f"| {model} | {entry['reference']} | {entry['rounds']:,} | {entry['win_rate']:.3f} | {entry['reference_win_rate']:.3f} | "
            f"{entry['difference']:+.3f} [{entry['low']:+.3f}, {entry['high']:+.3f}] | {entry['illegal_answers_per_decision']:.3f} | "
            f"{entry['fallback_rate']:.3f} | {entry['prompt_tokens_per_decision']:.0f} | {entry['completion_tokens_per_decision']:.1f} | "
            f"{entry['seconds_per_decision']:.4f} | {entry['decisions_per_round']:.1f} | {entry['tokens_per_round']:,.0f} | "
            f"{entry['wall_seconds']:.1f} |")


def machine() -> str:
    model = platform.machine()
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), model)
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


def show_prompt(num_players: int, seed: int, rules: dict, decisions: int) -> str:
    """The messages of the first request of the decision after ``decisions`` heuristic moves of a seeded game."""
    game = VectorEngine(num_games=1, num_players=num_players, seed=seed, **rules)
    game.reset(seed=seed)
    mover = agents.load("heuristic", num_players=num_players, seed=seed)
    for _ in range(decisions):
        game.step(mover.act(game.observe(), game.legal_mask()))
    player = agents.load("llm", num_players=num_players, base_url="http://127.0.0.1:1/v1", model="any", rules_options=rules)
    messages = player.prompt(game.observe()[0], game.legal_mask()[0])
    return "\n\n".join(f"[{message['role']}]\n{message['content']}" for message in messages)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=NAME, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", default=[], help="a model's name on the server (repeatable)")
    parser.add_argument("--base-url", default=None, help="the API's root (default: OPENAI_BASE_URL)")
    parser.add_argument("--stub", action="store_true", help="ask the stand-in server on 127.0.0.1 (--model: its behaviour)")
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=100, help="deals per reference (each played twice)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--references", default=None, metavar="A,B,...",
                        help="the players compared with (default: random-play, heuristic, the shipped agents for the table, search)")
    parser.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE", help="a rules option, repeatable")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE", help="an option of the llm player, repeatable")
    parser.add_argument("--out", metavar="DIR", help="write DIR/llm_report.json")
    parser.add_argument("--show-prompt", action="store_true", help="print the full prompt of one decision and stop")
    parser.add_argument("--prompt-after", type=int, default=6, help="with --show-prompt: heuristic moves played first")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser()
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    try:
        rules = parse_rules(args.rule)
        options = parse_agent_options([f"llm:{text}" for text in args.option]).get("llm", {})
    except ValueError as error:
        parser.error(str(error))
    if args.show_prompt:
        print(show_prompt(args.players, args.seed, rules, args.prompt_after))
        return 0
    if not args.model:
        parser.error("name at least one --model")
    references = args.references.split(",") if args.references else (
        ["random-play", "heuristic", *shipped_for(args.players, rules), "search"])
    print(f"# a language model against the ladder, {args.players} players, {args.rounds:,} deals a row, seed {args.seed}")
    print(f"`{shlex.join(['python', 'benchmarks/' + NAME, *argv])}`; {datetime.date.today()}, {machine()}\n")
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    if not args.stub and args.base_url is None and not os.environ.get("OPENAI_BASE_URL"):
        parser.error("give --base-url (or set OPENAI_BASE_URL), or --stub")
    stub = ChatStub(lifetime=24 * 3600) if args.stub else None
    report = {"command": shlex.join(["python", "benchmarks/" + NAME, *argv]), "date": str(datetime.date.today()),
              "machine": machine(), "players": args.players, "rules": rules, "models": {}}
    try:
        for model in args.model:
            base_url = stub.base_url if stub else args.base_url
            with agents.load("llm", num_players=args.players, seed=args.seed, rules_options=rules, base_url=base_url,
                             model=model, **options) as llm:
                rows = report["models"][model] = []
                for reference in references:
                    rows.append(measure(llm, reference, args.players, args.rounds, args.seed, rules))
                    print(row(model, rows[-1]), flush=True)
    finally:
        if stub:
            stub.close()
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, "llm_report.json")
        with open(path, "w") as file:
            json.dump(report, file, indent=1)
        print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
