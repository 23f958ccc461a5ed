"""Throughput of ``VectorEngine`` against RLCard's UNO, as one Markdown report.

    python benchmarks/bench_engine.py            # full run (a few minutes)
    python benchmarks/bench_engine.py --quick    # smoke run (well under a minute)

What it measures, in one process, so the ratios compare figures taken under
the same machine load:

1. Decisions per second of ``VectorEngine`` for each (players, games) pair.
   One timed step = ``observe()`` + ``legal_mask()`` + a uniformly random
   legal action per game (chosen from the current mask, vectorised) +
   ``step(actions)``. Decisions = games * steps. Random play makes long rounds
   (thousands of decisions); auto-reset starts new ones inside ``step``.
2. The anchor: RLCard's UNO (``rlcard.make("uno")``) stepped with random legal
   actions on one core, for the same player counts. ``rlcard`` is optional
   (``pip install rlcard``); without it the report says the anchor is missing.
3. Ratios engine / RLCard at the same player count (target: >= 30x at 4096 games).
4. Bytes of engine state per game.
5. Compile times in a fresh subprocess: cold (empty numba cache) and cached.
6. Every house rule on (docs/rules.md §15: ``ALL_HOUSE_RULES``) against the
   default rules, same batch, both paths, in steady state and timed in
   alternate chunks so that a change of machine load hits both alike. Target:
   house rules >= 80% of the default rules' decisions per second.
   ``--house-rules-only`` runs this section alone.

The engine runs on one core: NUMBA_NUM_THREADS=1 is set before numba is
imported (the kernel is single-threaded anyway).
"""

from __future__ import annotations

import os

os.environ["NUMBA_NUM_THREADS"] = "1"  # one core for the engine; must precede importing numba

import argparse
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np

import hpuno_env
from hpuno_env import VectorEngine
from hpuno_env.options import ALL_HOUSE_RULES


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=str, default=None, help="comma-separated batch sizes (default 1,256,4096,16384)")
    parser.add_argument("--players", type=str, default="2,4", help="comma-separated player counts")
    parser.add_argument("--seconds", type=float, default=None, help="minimum timed seconds per engine point (default 2)")
    parser.add_argument("--warmup-steps", type=int, default=None, help="untimed steps before each engine point (default 20)")
    parser.add_argument("--rlcard-seconds", type=float, default=None, help="timed seconds per RLCard point (default 5)")
    parser.add_argument("--state-players", type=str, default="2,4,10", help="player counts for the state-size table")
    parser.add_argument("--skip-compile", action="store_true", help="skip the cold/cached compile-time subprocesses")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--house-rules-games", type=int, default=4096, help="batch size of the house-rules comparison")
    parser.add_argument("--house-rules-only", action="store_true", help="run only the house-rules comparison (section 6)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: defaults become games 1,256,4096, 0.3 s per engine point, 5 warm-up steps, "
                             "0.5 s per RLCard point (compile times are still measured unless --skip-compile)")
    args = parser.parse_args()
    # (full-run default, --quick default) for the options left unset
    defaults = {"games": ("1,256,4096,16384", "1,256,4096"), "seconds": (2.0, 0.3),
                "warmup_steps": (20, 5), "rlcard_seconds": (5.0, 0.5)}
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    args.games = [int(x) for x in args.games.split(",")]
    args.players = [int(x) for x in args.players.split(",")]
    args.state_players = [int(x) for x in args.state_players.split(",")]
    return args


# ---------------------------------------------------------------- the engine


# Every house rule on (docs/rules.md §15), ALL_HOUSE_RULES, with the Harry Potter deck: the Sorting Hat's drawing stays in.
HOUSE_RULES_STEPS = (400, 25, 40)  # untimed warm-up steps, steps per timed chunk, chunks per engine


def bench_engine(num_players: int, num_games: int, seconds: float, warmup_steps: int, seed: int, fused: bool = False) -> dict:
    """Step num_games random-play games until at least `seconds` have been timed.
    fused: one ``step_observe`` call per step (step, then the new views and masks)
    instead of separate ``observe()``, ``legal_mask()`` and ``step()`` calls."""
    engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed)
    engine.reset()
    rng = np.random.default_rng(seed)
    # A pool of pre-drawn uniform keys: each step multiplies one of them by the
    # current legal mask and takes the argmax, i.e. a uniformly random legal action.
    pool_size = max(2, min(64, (64 << 20) // (num_games * 75 * 4)))  # at most ~64 MB of keys
    keys = rng.random((pool_size, num_games, 75), dtype=np.float32) + np.float32(1e-6)  # > 0: never pick illegal
    scratch = np.empty((num_games, 75), np.float32)

    current_mask = [engine.legal_mask()]

    def one_fused_step(k, times):
        t2 = time.perf_counter()
        np.multiply(keys[k % pool_size], current_mask[0], out=scratch)
        actions = scratch.argmax(axis=1)
        t3 = time.perf_counter()
        _, current_mask[0], _, terminated, truncated = engine.step_observe(actions)
        t4 = time.perf_counter()
        times += (0.0, 0.0, t3 - t2, t4 - t3)
        return int(terminated.sum()), int(truncated.sum())

    def one_step(k, times):
        if fused:
            return one_fused_step(k, times)
        t0 = time.perf_counter()
        engine.observe()
        t1 = time.perf_counter()
        mask = engine.legal_mask()
        t2 = time.perf_counter()
        np.multiply(keys[k % pool_size], mask, out=scratch)
        actions = scratch.argmax(axis=1)
        t3 = time.perf_counter()
        _, terminated, truncated = engine.step(actions)
        t4 = time.perf_counter()
        times += (t1 - t0, t2 - t1, t3 - t2, t4 - t3)
        return int(terminated.sum()), int(truncated.sum())

    times = np.zeros(4)
    for k in range(warmup_steps):  # compiles (or loads the cache) on the first step
        one_step(k, times)

    times[:] = 0.0
    steps, finished, truncated = 0, 0, 0
    start = time.perf_counter()
    while True:
        ended = one_step(steps, times)
        finished += ended[0]
        truncated += ended[1]
        steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and steps >= 3:
            break
    decisions = num_games * steps
    return {
        "path": "step_observe" if fused else "separate",
        "players": num_players,
        "games": num_games,
        "steps": steps,
        "seconds": elapsed,
        "decisions_per_s": decisions / elapsed,
        "rounds_finished": finished,
        "rounds_truncated": truncated,  # hit max_turns
        # per-phase time, ns per decision: observe, legal_mask, action choice, step
        "ns_per_decision": times / decisions * 1e9,
    }


# ---------------------------------------------------------------- the RLCard anchor


def load_rlcard():
    try:
        import rlcard
    except Exception as error:  # ImportError, or a numpy incompatibility in an old release
        return None, f"{type(error).__name__}: {error}"
    return rlcard, None


def make_rlcard_uno(rlcard, num_players: int, seed: int):
    """rlcard.make("uno") with num_players seats.

    RLCard 1.2.0 ignores config["game_num_players"] for UNO (Env.__init__ only
    applies game configs to blackjack and the hold'ems), so when the env comes
    back with the wrong count we configure its game directly. UnoGame, Round and
    the env's stepping are written for any count; only get_payoffs assumes two
    players, and this benchmark never calls it.
    """
    env = rlcard.make("uno", config={"seed": seed, "game_num_players": num_players})
    note = ""
    if env.num_players != num_players:
        env.game.configure({"game_num_players": num_players})
        env.num_players = num_players
        note = "game_num_players ignored by rlcard.make; set via env.game.configure"
    return env, note


def bench_rlcard(rlcard, num_players: int, seconds: float, seed: int) -> dict:
    env, note = make_rlcard_uno(rlcard, num_players, seed)
    choose = random.Random(seed).choice

    def play(budget_s):
        """Random legal actions until budget_s has passed; stop only at a game's end."""
        decisions, games = 0, 0
        state, _ = env.reset()
        start = time.perf_counter()
        while True:
            state, _ = env.step(choose(list(state["legal_actions"])))
            decisions += 1
            if env.is_over():
                games += 1
                elapsed = time.perf_counter() - start
                if elapsed >= budget_s:
                    return decisions, games, elapsed
                state, _ = env.reset()

    play(min(0.2, seconds))  # warm-up
    decisions, games, elapsed = play(seconds)
    assert len(env.game.players) == num_players
    return {
        "players": num_players,
        "decisions_per_s": decisions / elapsed,
        "decisions": decisions,
        "games": games,
        "decisions_per_episode": decisions / games,
        "seconds": elapsed,
        "note": note,
    }


# ---------------------------------------------------------------- compile times

COMPILE_SNIPPET = """
import time
t0 = time.perf_counter()
import numpy as np
import hpuno_env
engine = hpuno_env.VectorEngine(num_games=4, num_players=4, seed=0)
engine.reset()
engine.observe()
mask = engine.legal_mask()
engine.step(mask.argmax(axis=1))
print(time.perf_counter() - t0)
"""


def time_compile(cache_dir: str) -> tuple[float, float, float]:
    """Run COMPILE_SNIPPET in a fresh interpreter with the given numba cache.

    Returns (wall seconds of the subprocess, its CPU seconds, seconds inside it
    from import to first step). CPU seconds barely move with machine load;
    wall seconds do.
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, NUMBA_NUM_THREADS="1")
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", COMPILE_SNIPPET], env=env, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    return wall, cpu, float(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- the report


def fmt_rate(x: float) -> str:
    return f"{x:,.0f}"


def print_header(title: str, setup: str, other_versions: str = "") -> None:
    """The report's first lines: what ran, on what, and the command that ran it."""
    print(f"# {title}\n")
    print(f"- python {platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, "
          f"{other_versions}hpuno_env {hpuno_env.__version__}, {platform.machine()} with {os.cpu_count()} cores")
    print(f"- NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}{setup}")
    print(f"- command: {' '.join([os.path.basename(sys.executable)] + sys.argv)}\n", flush=True)


class RandomPlayLoop:
    """One engine stepped by uniformly random legal actions, timed chunk by chunk (CPU seconds of this process)."""

    def __init__(self, num_players: int, num_games: int, seed: int, fused: bool, rules: dict | None):
        self.engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, **(rules or {}))
        self.engine.reset()
        self.fused = fused
        rng = np.random.default_rng(seed)
        self.keys = rng.random((16, num_games, 75), dtype=np.float32) + np.float32(1e-6)
        self.mask = self.engine.legal_mask()
        self.steps, self.decisions, self.cpu_seconds = 0, 0, 0.0

    def run(self, steps: int, timed: bool = True) -> None:
        start = time.process_time()
        for _ in range(steps):
            actions = (self.keys[self.steps % 16] * self.mask).argmax(axis=1)
            if self.fused:
                _, self.mask, _, _, _ = self.engine.step_observe(actions)
            else:
                self.engine.step(actions)
                self.engine.observe()
                self.mask = self.engine.legal_mask()
            self.steps += 1
        if timed:
            self.cpu_seconds += time.process_time() - start
            self.decisions += steps * self.engine.num_games


def house_rules_section(args) -> None:
    """Section 6: every house rule on against the default rules, in steady state, timed in alternate chunks."""
    games = args.house_rules_games
    warmup, chunk, chunks = HOUSE_RULES_STEPS
    print(f"\n## Every house rule on vs the default rules ({games:,} games, one core)\n")
    print(f"House rules: `{ALL_HOUSE_RULES}` (Harry Potter deck). Both engines first play {warmup} untimed steps")
    print("(random play's rounds settle into long ones, with large hands), then are timed in alternate chunks of")
    print(f"{chunk} steps, {chunks} chunks each, so that a change of machine load hits both alike. Decisions per CPU")
    print("second of this process (what other processes' load changes least).\n")
    print("| players | path | default decisions/CPU s | house rules decisions/CPU s | house / default | target >= 0.80 |")
    print("|---:|---|---:|---:|---:|---|")
    for players in args.players:
        for fused in (False, True):
            loops = {name: RandomPlayLoop(players, games, args.seed, fused, rules)
                     for name, rules in (("default", None), ("house", ALL_HOUSE_RULES))}
            for loop in loops.values():
                loop.run(warmup, timed=False)
            for _ in range(chunks):
                for loop in loops.values():
                    loop.run(chunk)
            rate = {name: loop.decisions / loop.cpu_seconds for name, loop in loops.items()}
            ratio = rate["house"] / rate["default"]
            print(f"| {players} | {'step_observe' if fused else 'separate'} | {fmt_rate(rate['default'])} | {fmt_rate(rate['house'])} "
                  f"| {ratio:.2f} | {'meets' if ratio >= 0.8 else 'MISSES'} |", flush=True)


def main():
    args = parse_args()
    run_start = time.perf_counter()
    if args.house_rules_only:
        print_header("VectorEngine benchmark: house rules", " (engine on one core); auto-reset, uniform random legal actions")
        house_rules_section(args)
        print(f"\nTotal benchmark time: {time.perf_counter() - run_start:.0f} s")
        return
    print_header("VectorEngine benchmark", " (engine on one core); default rules "
                 f"(max_turns {VectorEngine().options.max_turns}), auto-reset, uniform random legal actions")

    # 2a. the anchor, first half (the second half runs after the engine, so that
    # a change in machine load during the run shows up as a spread, not a bias)
    rlcard, rlcard_error = load_rlcard()
    anchor_runs = {players: [] for players in args.players}
    if rlcard is not None:
        for players in args.players:
            anchor_runs[players].append(bench_rlcard(rlcard, players, args.rlcard_seconds / 2, args.seed))

    # 1. the engine
    engine_rows = []
    for players in args.players:
        for games in args.games:
            for fused in (False, True):
                row = bench_engine(players, games, args.seconds, args.warmup_steps, args.seed, fused)
                engine_rows.append(row)
                print(f"  engine P={players} G={games} {row['path']}: {fmt_rate(row['decisions_per_s'])} decisions/s", file=sys.stderr, flush=True)

    # 2b. the anchor, second half; its figure is decisions / seconds over both halves
    anchor = {}
    if rlcard is not None:
        for players in args.players:
            runs = anchor_runs[players]
            runs.append(bench_rlcard(rlcard, players, args.rlcard_seconds / 2, args.seed + 1))
            decisions, games, seconds = (sum(run[key] for run in runs) for key in ("decisions", "games", "seconds"))
            anchor[players] = {"decisions_per_s": decisions / seconds, "decisions": decisions, "games": games,
                               "seconds": seconds, "decisions_per_episode": decisions / games,
                               "halves": [run["decisions_per_s"] for run in runs], "note": runs[0]["note"]}
            print(f"  rlcard P={players}: {fmt_rate(anchor[players]['decisions_per_s'])} decisions/s", file=sys.stderr, flush=True)

    # 3. throughput and ratios
    print("## Decisions per second (one core)\n")
    print("Path `separate`: `observe()`, `legal_mask()`, `step()` each step; `step_observe`: one call that steps and")
    print("returns the new views and masks (what the training envs use).\n")
    print("| players | games | path | decisions/s | vs RLCard | steps timed | seconds | rounds ended (truncated) |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for row in engine_rows:
        ref = anchor.get(row["players"])
        ratio = f"{row['decisions_per_s'] / ref['decisions_per_s']:.1f}x" if ref else "n/a"
        print(f"| {row['players']} | {row['games']} | {row['path']} | {fmt_rate(row['decisions_per_s'])} | {ratio} | {row['steps']:,} "
              f"| {row['seconds']:.2f} | {row['rounds_finished'] + row['rounds_truncated']:,} ({row['rounds_truncated']:,}) |")
    for players, ref in anchor.items():
        print(f"| {players} | RLCard UNO, 1 game | | {fmt_rate(ref['decisions_per_s'])} | 1.0x | {ref['decisions']:,} "
              f"| {ref['seconds']:.2f} | {ref['games']:,} |")
    if rlcard is None:
        print(f"\nRLCard anchor missing (`pip install rlcard`): {rlcard_error}")
    else:
        print(f"\nRLCard {rlcard.__version__}: `rlcard.make('uno')`, `env.step(random.choice(list(state['legal_actions'])))`, "
              f"reset when `env.is_over()`; its 'steps timed' column counts decisions. Mean decisions per game: "
              + ", ".join(f"{p} players {ref['decisions_per_episode']:.0f}" for p, ref in anchor.items()) + ". "
              "Timed in two halves, before and after the engine (decisions/s): "
              + "; ".join(f"{p} players {' / '.join(fmt_rate(x) for x in ref['halves'])}" for p, ref in anchor.items()) + ".")
        notes = {ref["note"] for ref in anchor.values() if ref["note"]}
        for note in notes:
            print(f"RLCard note: {note}.")
    target_rows = [r for r in engine_rows if r["games"] == 4096 and r["players"] in anchor]
    for row in target_rows:
        ratio = row["decisions_per_s"] / anchor[row["players"]]["decisions_per_s"]
        verdict = "meets" if ratio >= 30 else "MISSES"
        print(f"Target >= 30x at 4096 games, {row['players']} players, {row['path']}: {ratio:.1f}x ({verdict}).")

    # where the engine's time goes
    print("\n## Engine time per decision (ns), by call\n")
    print("| players | games | path | observe | legal_mask | choose action | step (step_observe) | total |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for row in engine_rows:
        ns = row["ns_per_decision"]
        print(f"| {row['players']} | {row['games']} | {row['path']} | {ns[0]:,.0f} | {ns[1]:,.0f} | {ns[2]:,.0f} | {ns[3]:,.0f} | {ns.sum():,.0f} |")

    # 4. state size
    print("\n## Engine state per game\n")
    print("| players | bytes per game |")
    print("|---:|---:|")
    for players in args.state_players:
        print(f"| {players} | {VectorEngine(num_games=1, num_players=players).state_bytes_per_game():,} |")

    # 5. compile times
    print("\n## Compile time (fresh subprocess: import, VectorEngine(4 games, 4 players).reset(), observe, legal_mask, step)\n")
    if args.skip_compile:
        print("skipped (--skip-compile)")
    else:
        with tempfile.TemporaryDirectory(prefix="hpuno_numba_cache_") as cache_dir:
            cold = time_compile(cache_dir)
            cached = time_compile(cache_dir)
        print("| numba cache | subprocess wall s | subprocess CPU s | import..first step s | target (wall) |")
        print("|---|---:|---:|---:|---|")
        print(f"| cold (empty NUMBA_CACHE_DIR) | {cold[0]:.2f} | {cold[1]:.2f} | {cold[2]:.2f} "
              f"| < 30 s: {'ok' if cold[0] < 30 else 'MISSED'} |")
        print(f"| cached (same dir again) | {cached[0]:.2f} | {cached[1]:.2f} | {cached[2]:.2f} "
              f"| < 3 s: {'ok' if cached[0] < 3 else 'MISSED'} |")

    # 6. the house rules
    house_rules_section(args)

    print(f"\nTotal benchmark time: {time.perf_counter() - run_start:.0f} s")


if __name__ == "__main__":
    main()
