"""How fast the arena answers a move, and whether one core holds 100 games at once.

    python benchmarks/bench_arena.py                     # 20 sequential games, then 100 concurrent ones
    python benchmarks/bench_arena.py --games 5 --concurrent 20 --beside-slow 0
    python benchmarks/bench_arena.py --games 0 --beside-slow 0 --think-seconds 0.5 2   # 100 games at a person's pace

Starts ``python -m agents.arena`` on a free port of 127.0.0.1, pinned to one
CPU core (``os.sched_setaffinity``, where the system has it), and talks to it
over HTTP as the page does (httpx). A move's latency is the time of one
``POST /api/games/ID/actions`` as the client sees it, the agents' replies up
to the person's next decision included. The person plays the first legal
action of the view. Two runs:

1. *one game at a time*: ``--games`` 4-player games against three ``ppo_4p``
   (trained) opponents, one after another;
2. *concurrent*: ``--concurrent`` such games created first (all live at
   once), then every game's person moves at the same time (one asyncio task
   per game), each to its game's end; reported: the move latency under that
   load, the moves answered per second, the failures (none expected) and the
   server's resident memory with every game live. By default each person
   moves again as soon as its answer comes (no time to think: the server
   saturated, its latency the games' count over its moves a second); with
   ``--think-seconds LOW HIGH`` each person first thinks a random time in
   [LOW, HIGH] seconds before each of its moves (seeded by its game), as
   people at a hundred live tables do;
3. *beside a slow game*: ``--beside-slow`` games played one at a time as in
   1, while a second client plays games against three ``search`` opponents
   (tens of milliseconds a decision) without pause: the move latency of the
   fast games shows how much a slow game holds up the others;
4. *beside a big records folder* (``--records-in-folder N``, N > 0): the
   records folder holds N record files before the server starts; games are
   played one at a time as in 1 while a second client lists the records
   without pause (``GET /api/catalogue``, then pages of ``GET /api/records``):
   the move latency, and the listing's;
5. *a long replay* (``--replay-decisions N``, N > 0): a record of one round of
   N random decisions (4 players) uploaded to ``POST /api/replays``, then 50
   frames read: the server's resident memory before and after, and the times.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

import httpx

PLAYERS = 4
OPPONENT = "ppo_4p"
SLOW = "search"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int, records: str, max_games: int) -> subprocess.Popen:
    def one_core():
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    command = [sys.executable, "-m", "agents.arena", "--port", str(port), "--records", records, "--max-games", str(max_games),
               "--max-games-per-client", str(max_games),  # every simulated person comes from this one address
               "--db", os.path.join(records, "arena.sqlite3"),
               "--allow-decks"]  # seeded deals: the same games every run
    server = subprocess.Popen(command, preexec_fn=one_core, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/catalogue", timeout=2).raise_for_status()
            return server
        except httpx.HTTPError:
            time.sleep(0.5)
    server.kill()
    raise RuntimeError("the arena did not start")


def resident_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


async def new_game(client: httpx.AsyncClient, seed: int, opponent: str = OPPONENT) -> tuple[str, dict, dict]:
    response = await client.post("/api/games", json={"players": PLAYERS, "opponents": [opponent], "seed": seed})
    response.raise_for_status()
    created = response.json()
    headers = {"Authorization": f"Bearer {created['token']}"}
    view = (await client.get(f"/api/games/{created['game']}", headers=headers)).json()
    return created["game"], headers, view


async def play_out(client: httpx.AsyncClient, game: str, headers: dict, view: dict, latencies: list[float],
                   think: Callable[[], float] | None = None) -> int:
    """Move the person until the game ends, after ``think()`` seconds before each move (None: at once); returns the
    failed requests (an error answer, or a connection lost: the game is left there)."""
    while not view["over"]:
        if think is not None:
            await asyncio.sleep(think())
        started = time.perf_counter()
        try:
            response = await client.post(f"/api/games/{game}/actions", json={"action": view["legal"][0]}, headers=headers)
        except httpx.TransportError:
            return 1
        latencies.append(time.perf_counter() - started)
        if response.status_code != 200:
            return 1
        view = response.json()
    return 0


def summary(latencies: list[float]) -> str:
    if not latencies:
        return "no moves"
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {1000 * statistics.median(ordered):.1f} ms, p95 {1000 * p95:.1f} ms over {len(ordered)} moves"


async def sequential(base: str, games: int) -> list[float]:
    latencies: list[float] = []
    async with httpx.AsyncClient(base_url=base, timeout=120) as client:
        for seed in range(games):
            await play_out(client, *await new_game(client, seed), latencies)
    return latencies


def thinking(seed: int, low: float, high: float) -> Callable[[], float] | None:
    """A person's time to think before each move, uniform in [low, high] seconds from a stream of ``seed``."""
    if high <= 0:
        return None
    stream = random.Random(seed)
    return lambda: stream.uniform(low, high)


async def concurrent(base: str, count: int, pid: int, think_seconds: tuple[float, float] = (0.0, 0.0)) -> dict:
    """``count`` games made, then played at once; each person has a client (a connection) of their own, as each
    has a browser."""
    latencies: list[float] = []
    async with contextlib.AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(httpx.AsyncClient(base_url=base, timeout=300)) for _ in range(count)]
        games = [await new_game(client, 1000 + seed) for seed, client in enumerate(clients)]
        memory = resident_mb(pid)
        started = time.perf_counter()
        failures = await asyncio.gather(*(play_out(client, *game, latencies, thinking(seed, *think_seconds))
                                          for seed, (client, game) in enumerate(zip(clients, games))))
        seconds = time.perf_counter() - started
    return {"latencies": latencies, "failures": sum(failures), "seconds": seconds, "memory": memory}


async def beside_slow(base: str, games: int) -> dict:
    """The fast games one at a time while another client keeps playing games against ``SLOW``."""
    fast: list[float] = []
    slow: list[float] = []
    done = asyncio.Event()

    async def keep_playing_slow(client: httpx.AsyncClient) -> None:
        seed = 5000
        while not done.is_set():
            await play_out(client, *await new_game(client, seed, SLOW), slow)
            seed += 1

    async with httpx.AsyncClient(base_url=base, timeout=300) as fast_client, \
            httpx.AsyncClient(base_url=base, timeout=300) as slow_client:
        background = asyncio.create_task(keep_playing_slow(slow_client))
        await asyncio.sleep(1.0)  # the slow games under way first
        for seed in range(games):
            await play_out(fast_client, *await new_game(fast_client, seed), fast)
        done.set()
        await background
    return {"fast": fast, "slow": slow}


async def beside_listing(base: str, games: int) -> dict:
    """Games one at a time while another client lists the records folder page by page without pause."""
    moves: list[float] = []
    listing: list[float] = []
    done = asyncio.Event()

    async def keep_listing(client: httpx.AsyncClient) -> None:
        while not done.is_set():
            started = time.perf_counter()
            total = (await client.get("/api/catalogue")).json().get("records_total", 0)  # 0: a server that lists all at once
            listing.append(time.perf_counter() - started)
            for start in range(100, min(total, 5000), 1000):
                started = time.perf_counter()
                (await client.get("/api/records", params={"start": start, "count": 1000})).raise_for_status()
                listing.append(time.perf_counter() - started)

    async with httpx.AsyncClient(base_url=base, timeout=300) as game_client, \
            httpx.AsyncClient(base_url=base, timeout=300) as list_client:
        background = asyncio.create_task(keep_listing(list_client))
        await asyncio.sleep(1.0)
        for seed in range(games):
            await play_out(game_client, *await new_game(game_client, 7000 + seed), moves)
        done.set()
        await background
    return {"moves": moves, "listing": listing}


def long_record(decisions: int) -> dict:
    """One round of ``decisions`` random decisions, 4 players (cut short: an unfinished record)."""
    import numpy as np

    from hpuno_env import VectorEngine
    from hpuno_env.records import Recorder

    engine = VectorEngine(1, 4, seed=0, auto_reset=False, max_turns=10 * decisions)
    recorder = Recorder(engine, seed=0, players=["random"] * 4)
    engine.reset(seed=0)
    recorder.after_reset()
    rng, action = np.random.default_rng(0), np.zeros(1, np.int64)
    for _ in range(decisions):
        action[0] = rng.choice(np.flatnonzero(engine.legal_mask()[0]))
        engine.step(action)
        recorder.after_step(action)
    return recorder.current_record()


def long_replay(base: str, decisions: int, pid: int) -> dict:
    import json

    record = long_record(decisions)
    before = resident_mb(pid)
    with httpx.Client(base_url=base, timeout=300) as client:
        started = time.perf_counter()
        opened = client.post("/api/replays", json=record)
        opened.raise_for_status()
        opening = time.perf_counter() - started
        opened = opened.json()
        headers = {"Authorization": f"Bearer {opened['token']}"}
        started = time.perf_counter()
        for index in range(0, opened["frames"], max(1, opened["frames"] // 50)):
            client.get(f"/api/replays/{opened['replay']}/frames/{index}", headers=headers).raise_for_status()
        frames = (time.perf_counter() - started) / len(range(0, opened["frames"], max(1, opened["frames"] // 50)))
    return {"kB": len(json.dumps(record)) / 1000, "before": before, "after": resident_mb(pid), "opening": opening, "frame": frames}


def fill_records(folder: str, count: int) -> None:
    for index in range(count):
        with open(os.path.join(folder, f"filler-{index:07d}.json"), "w") as file:
            file.write("{}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games played one at a time (default 20)")
    parser.add_argument("--concurrent", type=int, default=100, help="games live and played at once (default 100)")
    parser.add_argument("--think-seconds", type=float, nargs=2, default=(0.0, 0.0), metavar=("LOW", "HIGH"),
                        help="run 2's people think a random time in [LOW, HIGH] s before each move (default 0 0: none)")
    parser.add_argument("--beside-slow", type=int, default=10,
                        help=f"games played one at a time beside games against {SLOW} (default 10; 0: not run)")
    parser.add_argument("--records-in-folder", type=int, default=0,
                        help="record files in the records folder for run 4 (default 0: not run)")
    parser.add_argument("--replay-decisions", type=int, default=0, help="decisions of run 5's record (default 0: not run)")
    args = parser.parse_args(argv)
    low, high = args.think_seconds
    if not 0 <= low <= high:
        parser.error(f"--think-seconds needs 0 <= LOW <= HIGH, got {low} {high}")
    port = free_port()
    with tempfile.TemporaryDirectory() as records:
        fill_records(records, args.records_in_folder)
        server = start_server(port, records, max_games=args.concurrent + 10)
        try:
            base = f"http://127.0.0.1:{port}"
            idle = resident_mb(server.pid)
            one = asyncio.run(sequential(base, args.games))
            many = asyncio.run(concurrent(base, args.concurrent, server.pid, (low, high)))
            beside = asyncio.run(beside_slow(base, args.beside_slow)) if args.beside_slow > 0 else None
            listed = asyncio.run(beside_listing(base, args.games)) if args.records_in_folder > 0 else None
            replayed = long_replay(base, args.replay_decisions, server.pid) if args.replay_decisions > 0 else None
        finally:
            server.terminate()
            server.wait(timeout=30)
    moves = len(many["latencies"])
    print(f"arena move latency, {PLAYERS} players against {OPPONENT}, the server on one core "
          f"({platform.processor() or platform.machine()}, Python {platform.python_version()})")
    print(f"- one game at a time ({args.games} games): {summary(one)}")
    pace = f"each person thinking {low:g}-{high:g} s before a move" if high > 0 else "no time to think"
    print(f"- {args.concurrent} games at once ({pace}): {summary(many['latencies'])}; {moves / many['seconds']:.0f} moves/s; "
          f"{many['failures']} failed requests")
    print(f"- server memory: {idle:.0f} MB started, {many['memory']:.0f} MB with {args.concurrent} live games "
          f"({(many['memory'] - idle) / args.concurrent:.2f} MB a game)")
    if beside is not None:
        print(f"- one game at a time ({args.beside_slow} games) beside games against {SLOW}: {summary(beside['fast'])}; "
              f"the {SLOW} games' moves: {summary(beside['slow'])}")
    if listed is not None:
        print(f"- one game at a time ({args.games} games) beside a client listing {args.records_in_folder:,} records: "
              f"{summary(listed['moves'])}; the listing's requests: {summary(listed['listing']).replace('moves', 'requests')}")
    if replayed is not None:
        print(f"- a replay of {args.replay_decisions:,} decisions ({replayed['kB']:.0f} kB): opened in {replayed['opening']:.1f} s, "
              f"{1000 * replayed['frame']:.1f} ms a frame; server memory {replayed['before']:.0f} MB before, {replayed['after']:.0f} MB after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
