"""Throughput of the PettingZoo AEC env and the SB3 VecEnv against RLCard's UNO, as one Markdown report.

    python benchmarks/bench_envs.py            # full run (about two minutes)
    python benchmarks/bench_envs.py --quick    # smoke run (about half a minute)

What it measures, in one process, so the ratios compare figures taken under
the same machine load:

1. AEC decisions per second: ``hpuno_env.raw_env``, the wrapped
   ``hpuno_env.env`` (one ``FusedClassicWrapper``) and, for comparison,
   ``raw_env`` in PettingZoo's three stock classic wrappers (what ``env()``
   was before; ``--aec-kinds`` picks), 2 and 4 players, through the standard
   PettingZoo loop

       for agent in env.agent_iter():
           obs, reward, term, trunc, info = env.last()
           env.step(None if term or trunc else action)

   with a uniformly random legal action (``argmax`` of pre-drawn uniform keys
   times ``obs["action_mask"]``), ``reset()`` when ``agent_iter`` finishes;
   and ``env-user-loop``, ``env()`` in the loop users write, as they write it:

       env.reset(seed=seed + game)
       for agent in env.agent_iter():
           observation, reward, termination, truncation, info = env.last()
           if termination or truncation:
               action = None
           else:
               legal = np.flatnonzero(observation["action_mask"])
               action = legal[rng.integers(len(legal))]   # a numpy integer
           env.step(action)

   Only real decisions count, not the ``None`` steps of finished agents. The
   target for ``raw_env``, ``env`` and the user loop is 2x RLCard's decisions/s.
2. PettingZoo's own ``pettingzoo.test.performance_benchmark`` (fixed 5 s; it
   prints "turns per second", parsed from its stdout) on ``hpuno_env.env(2)``
   and, under the same harness, on an RLCard-based UNO AEC env. PettingZoo
   1.27 no longer ships ``pettingzoo.classic.uno_v4`` (removed with the other
   RLCard games except the hold'ems); when it is absent the benchmark builds a
   stand-in from PettingZoo's own ``RLCardBase`` and classic wrappers (what
   ``uno_v4`` was) and says so.
3. SB3 VecEnv learner steps per second: ``HPUnoVecEnv(num_envs=N,
   num_players=P, seed=0)`` (random opponents played inside the batch),
   stepped with ``step_async``/``step_wait`` and a vectorised random legal
   action from ``action_masks()``. Learner steps/s = num_envs * steps /
   seconds. The opponent's ``act`` is wrapped in a counter (the same
   ``RandomAgent``, only counted), so the engine decisions implied =
   learner steps + opponent moves.
4. The anchor: RLCard's UNO (``rlcard.make("uno")``, random legal actions, one
   game on one core), as in ``bench_engine.py``; timed in ``--rounds`` slices
   taken in turn with the AEC rows' slices (a round times one slice of each),
   so that the AEC ratios compare rates taken over the same span of a machine
   whose load moves; pooled.
5. Where the AEC time goes: a cProfile summary (top functions by tottime) of
   the raw, the wrapped and the user's 2-player loops, printed when a row is
   below the 2x target (``--profile auto``, the default), always, or never.

The engine runs on one core: NUMBA_NUM_THREADS=1 is set before numba is
imported. The RLCard anchor code is imported from ``bench_engine.py``.
"""

from __future__ import annotations

import os

os.environ["NUMBA_NUM_THREADS"] = "1"  # one core for the engine; must precede importing numba

import argparse
import contextlib
import cProfile
import io
import pstats
import random
import re
import sys
import time

import numpy as np
import pettingzoo
from pettingzoo.test import performance_benchmark
from pettingzoo.utils import wrappers
# The repository root (for `agents`, which HPUnoVecEnv's default opponent imports and an
# editable install made before `agents` was packaged does not map) and this folder (bench_engine).
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]

import hpuno_env  # noqa: E402
from bench_engine import bench_rlcard, fmt_rate, load_rlcard, print_header  # noqa: E402  (the same anchor code)
from hpuno_env import HPUnoVecEnv, VectorEngine  # noqa: E402

NUM_ACTIONS = 75


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--aec-players", type=str, default="2,4", help="comma-separated player counts for the AEC loop")
    parser.add_argument("--aec-kinds", type=str, default=",".join(AEC_KINDS),
                        help="comma-separated AEC envs: raw_env, env (fused wrapper), stock (raw_env in PettingZoo's stock wrappers)")
    parser.add_argument("--aec-seconds", type=float, default=None, help="minimum timed seconds per AEC point (default 4)")
    parser.add_argument("--vec-configs", type=str, default="2x64,2x1024,2x4096,4x1024",
                        help="comma-separated PLAYERSxENVS VecEnv points")
    parser.add_argument("--vec-seconds", type=float, default=None, help="minimum timed seconds per VecEnv point (default 3)")
    parser.add_argument("--warmup-steps", type=int, default=None, help="untimed VecEnv steps before each point (default 20)")
    parser.add_argument("--rlcard-seconds", type=float, default=None, help="timed seconds per RLCard player count, all slices (default 6)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="slices of every AEC point and of the anchor, timed in turn (default 4; --quick 2)")
    parser.add_argument("--skip-pz-benchmark", action="store_true", help="skip pettingzoo.test.performance_benchmark (5 s per env, fixed)")
    parser.add_argument("--profile", choices=("auto", "always", "never"), default="auto",
                        help="cProfile the 2-player AEC loops: when one is below 2x RLCard's rate (auto), always, or never")
    parser.add_argument("--profile-decisions", type=int, default=None, help="decisions per profiled loop (default 60000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 0.5 s per AEC point, 0.3 s per VecEnv point, 5 warm-up steps, 1 s per RLCard "
                             "player count, 2 rounds, 10000 profiled decisions (performance_benchmark still takes its fixed 5 s)")
    args = parser.parse_args()
    # (full-run default, --quick default) for the options left unset
    defaults = {"aec_seconds": (4.0, 0.5), "vec_seconds": (3.0, 0.3), "warmup_steps": (20, 5), "rounds": (4, 2),
                "rlcard_seconds": (6.0, 1.0), "profile_decisions": (60_000, 10_000)}
    for name, (full, quick) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)
    args.aec_players = [int(x) for x in args.aec_players.split(",")]
    args.aec_kinds = args.aec_kinds.split(",")
    unknown = sorted(set(args.aec_kinds) - set(AEC_KINDS))
    if unknown:
        parser.error(f"--aec-kinds: unknown {unknown}; choose from {list(AEC_KINDS)}")
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    args.vec_configs = [tuple(int(v) for v in x.split("x")) for x in args.vec_configs.split(",")]
    return args


# ---------------------------------------------------------------- 1. the AEC loop


AEC_KINDS = {
    "raw_env": "`raw_env({players})`",
    "env": "`env({players})` (fused wrapper)",
    "env-user-loop": "`env({players})`, the loop users write",
    "stock": "`raw_env({players})` in PettingZoo's three stock wrappers",
}


TARGET_KINDS = ("raw_env", "env", "env-user-loop")  # held to the target below; "stock" is for comparison
TARGET_RATIO = 2.0  # decisions/s against RLCard's at the same player count


def with_stock_classic_wrappers(raw):
    """PettingZoo's classic-game wrappers, stacked as its classic games (and ``env()`` before the fused wrapper) do."""
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1)))


def make_aec(kind: str, num_players: int):
    if kind in ("env", "env-user-loop"):
        return hpuno_env.env(num_players=num_players)
    raw = hpuno_env.raw_env(num_players=num_players)
    return with_stock_classic_wrappers(raw) if kind == "stock" else raw


def aec_games(env, keys: np.ndarray, budget_s: float | None = None, max_decisions: int | None = None):
    """Play whole games through agent_iter with random legal actions, resetting after each,
    until budget_s seconds have passed or max_decisions decisions were made (checked at a
    game's end). Returns (decisions, games, truncated games, seconds)."""
    num_keys = len(keys)
    return play_games(env, lambda mask, decisions: int((keys[decisions % num_keys] * mask).argmax()),
                      lambda games: env.reset(), budget_s, max_decisions)


def aec_user_games(env, seed: int, budget_s: float | None = None, max_decisions: int | None = None):
    """The loop users write, as they write it: ``env.reset(seed=...)`` before each game, ``last()``, and a
    random pick of ``np.flatnonzero(observation["action_mask"])`` stepped as the numpy integer it is.
    Plays until budget_s seconds have passed or max_decisions decisions were made (checked at a game's
    end). Returns what aec_games returns."""
    rng = np.random.default_rng(seed)
    decisions, games, truncated = 0, 0, 0
    start = time.perf_counter()
    while True:
        env.reset(seed=seed + games)
        for _agent in env.agent_iter():
            observation, reward, termination, truncation, info = env.last()
            if termination or truncation:
                action = None
            else:
                legal = np.flatnonzero(observation["action_mask"])
                action = legal[rng.integers(len(legal))]
                decisions += 1
            env.step(action)
        games += 1
        truncated += truncation and not termination
        elapsed = time.perf_counter() - start
        if (budget_s is not None and elapsed >= budget_s) or (max_decisions is not None and decisions >= max_decisions):
            return decisions, games, truncated, elapsed


def play_games(env, pick, reset, budget_s: float | None, max_decisions: int | None):
    """The PettingZoo loop over whole games: ``pick(mask, decisions)`` chooses each action, ``reset(games)``
    starts the next game; only real decisions count, not the ``None`` steps of finished agents."""
    decisions, games, truncated = 0, 0, 0
    start = time.perf_counter()
    while True:
        cut = False
        for _agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            if term or trunc:
                cut = cut or (trunc and not term)
                env.step(None)
            else:
                env.step(pick(obs["action_mask"], decisions))
                decisions += 1
        games += 1
        truncated += cut
        elapsed = time.perf_counter() - start
        if (budget_s is not None and elapsed >= budget_s) or (max_decisions is not None and decisions >= max_decisions):
            return decisions, games, truncated, elapsed
        reset(games)


def random_keys(seed: int, count: int = 8192) -> np.ndarray:
    # > 0 so that an argmax of keys * mask never lands on an illegal action
    return np.random.default_rng(seed).random((count, NUM_ACTIONS)) + 1e-6


def kind_games(kind: str, env, seed: int, budget_s: float | None = None, max_decisions: int | None = None):
    """The kind's loop (``aec_user_games`` for "env-user-loop", else ``aec_games``) from a fresh game."""
    if kind == "env-user-loop":
        return aec_user_games(env, seed, budget_s, max_decisions)
    env.reset(seed=seed)
    return aec_games(env, random_keys(seed), budget_s, max_decisions)


def warm_aec(kind: str, num_players: int, seed: int):
    """A fresh env for one AEC row, played for 0.2 s (which loads the numba cache)."""
    env = make_aec(kind, num_players)
    kind_games(kind, env, seed, budget_s=0.2)
    return env


def seeded_reset_us(num_players: int, seed: int, calls: int = 300) -> float:
    """The median microseconds of ``env(num_players).reset(seed=s)``, a new seed each call, between games."""
    env = hpuno_env.env(num_players=num_players)
    env.reset(seed=seed)
    times = []
    for call in range(calls):
        start = time.perf_counter()
        env.reset(seed=seed + call)
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def pooled_aec(kind: str, num_players: int, slices: list[tuple]) -> dict:
    """One AEC row from its timed slices, each (decisions, games, truncated games, seconds)."""
    decisions, games, truncated, seconds = (sum(piece[i] for piece in slices) for i in range(4))
    return {"env": kind, "players": num_players, "decisions": decisions, "games": games, "truncated": truncated,
            "seconds": seconds, "decisions_per_s": decisions / seconds}


def profile_aec(kind: str, num_players: int, decisions: int, seed: int, top: int = 14) -> dict:
    """cProfile of the AEC loop: total time, time by where the code lives, and the top functions by tottime."""
    env = make_aec(kind, num_players)
    kind_games(kind, env, seed, max_decisions=1)
    profiler = cProfile.Profile()
    profiler.enable()
    made, *_ = kind_games(kind, env, seed + 1, max_decisions=decisions)
    profiler.disable()
    stats = pstats.Stats(profiler)
    total = stats.total_tt
    groups: dict[str, float] = {}
    rows = []
    for (filename, line, name), (_cc, nc, tt, ct, callers) in stats.stats.items():
        rows.append((tt, ct, nc, short_location(filename, line, name)))
        where = code_home(filename, name)
        if where is not None:
            groups[where] = groups.get(where, 0.0) + tt
            continue
        # a generic built-in (getattr, str.startswith, isinstance, ...): charge it to its callers
        for (caller_file, _, caller_name), caller_stats in callers.items():
            where = code_home(caller_file, caller_name) or "other built-ins"
            groups[where] = groups.get(where, 0.0) + caller_stats[2]  # this caller's share of tottime
    rows.sort(reverse=True)
    return {"env": kind, "players": num_players, "decisions": made, "seconds": total,
            "groups": sorted(groups.items(), key=lambda kv: -kv[1]), "top": rows[:top]}


def code_home(filename: str, name: str) -> str | None:
    """Where a profiled function lives; None for a generic built-in (charged to its callers)."""
    if "hpuno_env" in filename:
        return "hpuno_env (Python)"
    if "kernel" in name and filename == "~":
        return "hpuno_env numba kernel"
    if "pettingzoo" in filename:
        return "pettingzoo (AECEnv, wrappers, agent_iter)"
    if "gymnasium" in filename:
        return "gymnasium (spaces)"
    if "numpy" in filename or ("numpy" in name and filename == "~"):
        return "numpy"
    if filename == __file__ or filename.endswith("bench_envs.py"):
        return "benchmark loop (action choice)"
    if filename == "~":
        return None
    return "other Python"


def short_location(filename: str, line: int, name: str) -> str:
    if filename == "~":
        return name  # a built-in: "{method 'copy' of 'numpy.ndarray' objects}" and the like
    for marker in ("site-packages/", "/work/main/"):
        if marker in filename:
            filename = filename.split(marker, 1)[1]
    return f"{filename}:{line}({name})"


# ---------------------------------------------------------------- 2. PettingZoo's performance_benchmark


def pettingzoo_rlcard_uno():
    """PettingZoo's RLCard-based UNO AEC env, or a stand-in when the installed PettingZoo lacks it.
    Returns (env or None, description)."""
    try:
        from pettingzoo.classic import uno_v4  # removed from PettingZoo (gone in 1.27)

        return uno_v4.env(), "`pettingzoo.classic.uno_v4.env()`"
    except Exception as error:  # ImportError (module gone) or a DeprecatedEnv error
        missing = f"`pettingzoo.classic.uno_v4` unavailable ({type(error).__name__}: {error})"
    try:
        from pettingzoo.classic.rlcard_envs.rlcard_base import RLCardBase
    except Exception as error:
        return None, f"{missing}; no stand-in either ({type(error).__name__}: {error})"

    class UnoStandIn(RLCardBase):
        """What uno_v4 was: RLCardBase("uno", 2 players) with the classic wrappers."""

        metadata = {"render_modes": [], "name": "uno_standin", "is_parallelizable": False, "render_fps": 1}

        def __init__(self):
            super().__init__("uno", 2, (4, 4, 15))
            self.render_mode = None

    return with_stock_classic_wrappers(UnoStandIn()), (f"{missing}; measured instead: a stand-in built as `uno_v4` was, "
                     "`RLCardBase('uno', 2, (4, 4, 15))` from `pettingzoo.classic.rlcard_envs.rlcard_base` wrapped in "
                     "`TerminateIllegalWrapper`, `AssertOutOfBoundsWrapper`, `OrderEnforcingWrapper`")


def run_performance_benchmark(env, seed: int) -> dict:
    random.seed(seed)  # performance_benchmark draws its actions with the random module
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        performance_benchmark(env)
    text = out.getvalue()
    turns = re.search(r"([0-9.eE+-]+) turns per second", text)
    cycles = re.search(r"([0-9.eE+-]+) cycles per second", text)
    return {"turns_per_s": float(turns.group(1)) if turns else float("nan"),
            "cycles_per_s": float(cycles.group(1)) if cycles else float("nan"), "stdout": text}


# ---------------------------------------------------------------- 3. the SB3 VecEnv


class CountingOpponent:
    """Forwards act() to the VecEnv's own opponent and counts the moves it makes."""

    def __init__(self, policy):
        self.policy = policy
        self.moves = 0

    def seed(self, seed):
        if callable(getattr(self.policy, "seed", None)):
            self.policy.seed(seed)

    def act(self, observations, action_masks):
        self.moves += len(action_masks)
        return self.policy.act(observations, action_masks)


def bench_vec(num_players: int, num_envs: int, seconds: float, warmup_steps: int, seed: int) -> dict:
    env = HPUnoVecEnv(num_envs=num_envs, num_players=num_players, seed=seed)
    counter = CountingOpponent(env.batch.opponent)
    env.set_opponent(counter)
    env.reset()
    rng = np.random.default_rng(seed)
    pool_size = max(2, min(32, (32 << 20) // (num_envs * NUM_ACTIONS * 4)))  # at most ~32 MB of keys
    keys = rng.random((pool_size, num_envs, NUM_ACTIONS), dtype=np.float32) + np.float32(1e-6)
    scratch = np.empty((num_envs, NUM_ACTIONS), np.float32)

    def one_step(k):
        np.multiply(keys[k % pool_size], env.action_masks(), out=scratch)
        env.step_async(scratch.argmax(axis=1))
        _, _, dones, _ = env.step_wait()
        return int(dones.sum())

    for k in range(warmup_steps):
        one_step(k)
    counter.moves = 0
    steps, episodes = 0, 0
    start = time.perf_counter()
    while True:
        episodes += one_step(steps)
        steps += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds and steps >= 3:
            break
    learner_steps = num_envs * steps
    return {"players": num_players, "envs": num_envs, "steps": steps, "seconds": elapsed, "episodes": episodes,
            "learner_steps_per_s": learner_steps / elapsed, "opponent_moves": counter.moves,
            "engine_decisions_per_s": (learner_steps + counter.moves) / elapsed}


# ---------------------------------------------------------------- the report


def ratio(x: float, ref: dict | None) -> str:
    return f"{x / ref['decisions_per_s']:.2f}x" if ref else "n/a"


def main():
    args = parse_args()
    run_start = time.perf_counter()
    print_header("Environment benchmark: PettingZoo AEC and SB3 VecEnv",
                 f"; default rules (max_turns {VectorEngine().options.max_turns}), uniform random legal actions everywhere",
                 other_versions=f"pettingzoo {pettingzoo.__version__}, ")

    rlcard, rlcard_error = load_rlcard()
    anchor_players = sorted(set(args.aec_players) | {p for p, _ in args.vec_configs} | {2})
    anchor_runs = {players: [] for players in anchor_players}

    # 1 and 4. the AEC loops and the anchor, in turns: every round times one slice of each, so each
    # AEC row and the anchor see the machine's load over the same span (it moves on a shared machine)
    points = [(kind, players) for players in args.aec_players for kind in args.aec_kinds]
    envs = {point: warm_aec(*point, args.seed) for point in points}
    slices = {point: [] for point in points}
    for turn in range(args.rounds):
        for kind, players in points:
            slices[kind, players].append(kind_games(kind, envs[kind, players], args.seed + 1 + 10_000 * turn,
                                                    budget_s=args.aec_seconds / args.rounds))
        if rlcard is not None:
            for players in anchor_players:
                anchor_runs[players].append(bench_rlcard(rlcard, players, args.rlcard_seconds / args.rounds, args.seed + turn))
    aec_rows = [pooled_aec(kind, players, slices[kind, players]) for kind, players in points]
    reset_us = {players: seeded_reset_us(players, args.seed) for players in args.aec_players}
    for row in aec_rows:
        print(f"  AEC {row['env']} P={row['players']}: {fmt_rate(row['decisions_per_s'])} decisions/s", file=sys.stderr, flush=True)
    anchor = {}
    for players, runs in anchor_runs.items():
        if not runs:
            continue
        decisions, games, seconds = (sum(run[key] for run in runs) for key in ("decisions", "games", "seconds"))
        anchor[players] = {"decisions_per_s": decisions / seconds, "decisions": decisions, "games": games, "seconds": seconds,
                           "slices": [run["decisions_per_s"] for run in runs], "note": runs[0]["note"]}
        print(f"  rlcard P={players}: {fmt_rate(anchor[players]['decisions_per_s'])} decisions/s", file=sys.stderr, flush=True)

    # 2. PettingZoo's performance_benchmark
    pz_rows, pz_note = [], ""
    if not args.skip_pz_benchmark:
        pz_rows.append(("`hpuno_env.env(num_players=2)`", run_performance_benchmark(hpuno_env.env(num_players=2), args.seed)))
        print(f"  performance_benchmark hpuno_env: {fmt_rate(pz_rows[-1][1]['turns_per_s'])} turns/s", file=sys.stderr, flush=True)
        rl_env, pz_note = pettingzoo_rlcard_uno()
        if rl_env is not None:
            name = "RLCard UNO, `uno_v4`" if "measured instead" not in pz_note else "RLCard UNO, `uno_v4` stand-in"
            pz_rows.append((name, run_performance_benchmark(rl_env, args.seed)))
            print(f"  performance_benchmark {name}: {fmt_rate(pz_rows[-1][1]['turns_per_s'])} turns/s", file=sys.stderr, flush=True)

    # 3. the VecEnv
    vec_rows = []
    for players, envs in args.vec_configs:
        row = bench_vec(players, envs, args.vec_seconds, args.warmup_steps, args.seed)
        vec_rows.append(row)
        print(f"  VecEnv P={players} N={envs}: {fmt_rate(row['learner_steps_per_s'])} learner steps/s", file=sys.stderr, flush=True)

    # 5. where the AEC time goes
    below = [row for row in aec_rows if row["env"] in TARGET_KINDS and row["players"] in anchor
             and row["decisions_per_s"] < TARGET_RATIO * anchor[row["players"]]["decisions_per_s"]]
    profiles = []
    if args.profile == "always" or (args.profile == "auto" and below):
        for kind in ("raw_env", "env", "env-user-loop"):
            profiles.append(profile_aec(kind, 2, args.profile_decisions, args.seed))

    # ---- the report
    print("## RLCard anchor\n")
    if rlcard is None:
        print(f"RLCard anchor missing (`pip install rlcard`): {rlcard_error}\n")
    else:
        print(f"RLCard {rlcard.__version__}: `rlcard.make('uno')`, `env.step(random.choice(list(state['legal_actions'])))`, "
              "reset when `env.is_over()` (the loop of `bench_engine.py`), one game on one core. Timed in "
              f"{args.rounds} slices taken in turn with the AEC rows' slices (section 1), pooled; sections 2 and 3 "
              "are compared with the same pooled rate.\n")
        print("| players | decisions/s | slices (decisions/s) | decisions | games | decisions per game | seconds |")
        print("|---:|---:|---|---:|---:|---:|---:|")
        for players, ref in anchor.items():
            print(f"| {players} | {fmt_rate(ref['decisions_per_s'])} | {' / '.join(fmt_rate(x) for x in ref['slices'])} "
                  f"| {ref['decisions']:,} | {ref['games']:,} | {ref['decisions'] / ref['games']:,.0f} | {ref['seconds']:.2f} |")
        for note in {ref["note"] for ref in anchor.values() if ref["note"]}:
            print(f"\nRLCard note: {note}.")
        print()

    print("## 1. AEC decisions per second (`agent_iter` / `last` / `step` loop)\n")
    print("One game per env on one core; the action is `argmax(keys * obs['action_mask'])` with pre-drawn uniform keys; "
          "`reset()` after each game (its time included); the `None` steps of finished agents are not counted. "
          "The user loop instead calls `reset(seed=s)` before each game and steps "
          "`legal[rng.integers(len(legal))]` of `legal = np.flatnonzero(obs['action_mask'])`, a numpy integer. "
          f"Each row is timed in {args.rounds} slices taken in turn with the other rows' and the anchor's, pooled.\n")
    print(f"| players | env | decisions/s | vs RLCard (target >= {TARGET_RATIO:.1f}x) | decisions | games (truncated) | decisions per game | seconds |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for row in aec_rows:
        ref = anchor.get(row["players"])
        verdict = "" if ref is None or row["env"] not in TARGET_KINDS else (
            " ok" if row["decisions_per_s"] >= TARGET_RATIO * ref["decisions_per_s"] else " BELOW")
        label = AEC_KINDS[row["env"]].format(players=row["players"])
        print(f"| {row['players']} | {label} | {fmt_rate(row['decisions_per_s'])} | {ratio(row['decisions_per_s'], ref)}{verdict} "
              f"| {row['decisions']:,} | {row['games']:,} ({row['truncated']:,}) | {row['decisions'] / row['games']:,.0f} | {row['seconds']:.2f} |")

    print("\nMicroseconds per decision: " + "; ".join(
        f"{row['players']} players `{row['env']}` {1e6 / row['decisions_per_s']:.1f}" for row in aec_rows)
        + ("; RLCard " + ", ".join(f"{p} players {1e6 / ref['decisions_per_s']:.1f}" for p, ref in anchor.items()) if anchor else "") + ".")
    print("\nThe seeded reset before a game, `env(P).reset(seed=s)` (the median of 300, a new seed each): "
          + ", ".join(f"{players} players {us:.0f} us" for players, us in reset_us.items()) + ".")
    rates = {(row["env"], row["players"]): row["decisions_per_s"] for row in aec_rows}
    speedups = [f"{players} players {rates['env', players] / rates['stock', players]:.2f}x" for players in args.aec_players
                if ("env", players) in rates and ("stock", players) in rates]
    if speedups:
        print("\n`env()` (fused wrapper) against the same raw env in PettingZoo's three stock wrappers: " + ", ".join(speedups) + ".")

    print("\n## 2. `pettingzoo.test.performance_benchmark`\n")
    if args.skip_pz_benchmark:
        print("skipped (--skip-pz-benchmark)")
    else:
        print("PettingZoo's own harness: 5 s of `agent_iter(num_agents)` cycles, `random.choice(np.flatnonzero(mask).tolist())`, "
              "reset when every agent is done. Its turns include the `None` steps of finished agents (2 per game here, "
              "negligible against thousands of decisions).\n")
        print("| env | turns/s (parsed) | cycles/s | vs the RLCard env |")
        print("|---|---:|---:|---:|")
        reference = pz_rows[1][1]["turns_per_s"] if len(pz_rows) > 1 else None
        for name, row in pz_rows:
            vs = f"{row['turns_per_s'] / reference:.2f}x" if reference else "n/a"
            print(f"| {name} | {fmt_rate(row['turns_per_s'])} | {fmt_rate(row['cycles_per_s'])} | {vs} |")
        print(f"\nPettingZoo {pettingzoo.__version__}: {pz_note}.")

    print("\n## 3. SB3 VecEnv (`HPUnoVecEnv`, random opponents inside the batch)\n")
    print("One timed step = `action_masks()` + a vectorised random legal action + `step_async` + `step_wait`. "
          "Learner steps/s = num_envs * steps / seconds; engine decisions/s = (learner steps + opponent moves) / seconds, "
          "the opponent moves counted by wrapping the env's own `RandomAgent`. Ratios against RLCard's single-game "
          "decisions/s at the same player count.\n")
    print("| players | envs | learner steps/s | vs RLCard | engine decisions/s | vs RLCard | opponent moves per learner step "
          "| steps timed | episodes ended | seconds |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in vec_rows:
        ref = anchor.get(row["players"])
        learner = row["envs"] * row["steps"]
        print(f"| {row['players']} | {row['envs']:,} | {fmt_rate(row['learner_steps_per_s'])} | {ratio(row['learner_steps_per_s'], ref)} "
              f"| {fmt_rate(row['engine_decisions_per_s'])} | {ratio(row['engine_decisions_per_s'], ref)} "
              f"| {row['opponent_moves'] / learner:.2f} | {row['steps']:,} | {row['episodes']:,} | {row['seconds']:.2f} |")

    if profiles:
        print("\n## 4. Where the AEC time goes (cProfile, 2 players)\n")
        reason = "always" if args.profile == "always" else f"auto: below {TARGET_RATIO:.1f}x RLCard's rate: " + ", ".join(
            f"`{row['env']}({row['players']})`" for row in below)
        print(f"Printed because of `--profile {reason}`. cProfile adds its own overhead per call, so compare shares, "
              "not rates. Generic built-ins (`getattr`, `str.startswith`, ...) are charged to the code that calls them; "
              "numpy's are under numpy.\n")
        for prof in profiles:
            print(f"### `{prof['env']}(num_players=2)`: {prof['decisions']:,} decisions, {prof['seconds']:.2f} s profiled "
                  f"({prof['seconds'] / prof['decisions'] * 1e6:.1f} us per decision)\n")
            print("| where | tottime s | share |")
            print("|---|---:|---:|")
            for where, tt in prof["groups"]:
                print(f"| {where} | {tt:.3f} | {tt / prof['seconds']:.0%} |")
            print("\n| function | calls | tottime s | cumtime s | share of tottime |")
            print("|---|---:|---:|---:|---:|")
            for tt, ct, nc, where in prof["top"]:
                print(f"| {where.replace('|', '/')} | {nc:,} | {tt:.3f} | {ct:.3f} | {tt / prof['seconds']:.0%} |")
            print()

    print(f"\nTotal benchmark time: {time.perf_counter() - run_start:.0f} s")


if __name__ == "__main__":
    main()
