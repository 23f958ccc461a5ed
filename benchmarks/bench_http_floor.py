"""The floor under the arena's move latency: the same HTTP stack answering a move with no game work at all.

    python benchmarks/bench_http_floor.py                      # 100 clients, each moving again as soon as answered
    python benchmarks/bench_http_floor.py --clients 100 --think-seconds 0.5 2

A FastAPI app with the arena's one route for a move (``POST /api/games/{game}/actions``, a JSON body, a bearer
header) that answers every move with the same JSON view of about the size of a real one, and nothing else: no
engine, no agents, no lock. It is served by uvicorn as ``hpuno-arena`` serves (``agents.arena.cli.serve``), the
server pinned to one core, and played by ``--clients`` clients at once, each on a connection of its own, as
``benchmarks/bench_arena.py`` plays the arena. With no time to think, the median latency of this no-op is the
least any arena on this stack and core can answer 100 always-waiting players in: the number of players over the
moves the HTTP layer alone answers a second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import random
import socket
import statistics
import subprocess
import sys
import time

import httpx

VIEW = {"game": "g" * 16, "seat": 0, "over": False, "legal": ["draw"] + [f"red:{n}" for n in range(10)],
        "hand": [f"blue:{n}" for n in range(7)], "others": [{"seat": s, "cards": 7, "uno": False} for s in (1, 2, 3)],
        "events": [{"seat": s, "did": "played", "card": "green:5"} for s in range(12)], "scores": [0, 0, 0, 0]}
SERVER = """
import socket, sys
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from agents.arena.cli import serve
view = {view!r}
app = FastAPI()

@app.post("/api/games/{{game}}/actions")
async def act(game: str, request: Request):
    await request.json()
    request.headers.get("authorization")
    return JSONResponse(view)

sock = socket.socket(); sock.bind(("127.0.0.1", {port})); sock.listen(512)
serve(app, sock)
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(port: int) -> subprocess.Popen:
    def one_core():
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})

    code = SERVER.format(view=VIEW, port=port)
    server = subprocess.Popen([sys.executable, "-c", code], preexec_fn=one_core, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            httpx.post(f"http://127.0.0.1:{port}/api/games/x/actions", json={"action": "draw"}, timeout=1)
            return server
        time.sleep(0.2)
    server.kill()
    raise RuntimeError("the server did not start")


async def play(base: str, clients: int, moves: int, think: tuple[float, float], seed: int) -> tuple[list[float], float]:
    latencies: list[float] = []

    async def one(client: httpx.AsyncClient, stream: random.Random) -> None:
        for _ in range(moves):
            if think[1] > 0:
                await asyncio.sleep(stream.uniform(*think))
            started = time.perf_counter()
            answer = await client.post("/api/games/g/actions", json={"action": "draw"},
                                       headers={"Authorization": "Bearer " + "s" * 43})
            answer.raise_for_status()
            latencies.append(time.perf_counter() - started)

    async with contextlib.AsyncExitStack() as stack:
        pool = [await stack.enter_async_context(httpx.AsyncClient(base_url=base, timeout=120)) for _ in range(clients)]
        started = time.perf_counter()
        await asyncio.gather(*(one(client, random.Random(seed + index)) for index, client in enumerate(pool)))
        return latencies, time.perf_counter() - started


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100, help="clients moving at once (default 100)")
    parser.add_argument("--moves", type=int, default=25, help="moves each client makes (default 25)")
    parser.add_argument("--think-seconds", type=float, nargs=2, default=(0.0, 0.0), metavar=("LOW", "HIGH"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.clients < 1 or args.moves < 1 or not 0 <= args.think_seconds[0] <= args.think_seconds[1]:
        parser.error("--clients and --moves must be positive, --think-seconds 0 <= LOW <= HIGH")
    port = free_port()
    server = start_server(port)
    try:
        latencies, seconds = asyncio.run(play(f"http://127.0.0.1:{port}", args.clients, args.moves,
                                              tuple(args.think_seconds), args.seed))
    finally:
        server.terminate()
        server.wait(timeout=30)
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    print(f"no-op move over HTTP, {args.clients} clients, think {args.think_seconds[0]:g}-{args.think_seconds[1]:g} s, "
          f"view {len(json.dumps(VIEW))} bytes, the server on one core ({platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}): median {1000 * statistics.median(ordered):.1f} ms, "
          f"p95 {1000 * p95:.1f} ms over {len(ordered)} moves; {len(ordered) / seconds:.0f} moves/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
