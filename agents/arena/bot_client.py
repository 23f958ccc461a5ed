"""A bot for the arena's ladder: any agent of ``agents.available()`` (or an agent file) playing over the HTTP API.

    python -m agents.arena.bot_client --url http://127.0.0.1:8000 --name my-bot --agent ppo_4p
    python -m agents.arena.bot_client --url http://127.0.0.1:8000 --secret SECRET --agent heuristic

It registers a bot (``POST /api/bots``: the secret is printed once; keep it) or uses a secret it was given, then
waits for turns (``GET /api/bots/turns?wait=S``) and answers each with the agent's action on the seat's
observation vector and legal actions (``POST /api/games/ID/actions``). docs/bots.md explains the API.
"""

from __future__ import annotations

import argparse
import json

import httpx
import numpy as np

from agents.players import load
from hpuno_env import ACTION_LABELS

ACTION_INDEX = {label: index for index, label in enumerate(ACTION_LABELS)}


def register(client: httpx.Client, name: str) -> str:
    """A new bot ``name`` on the arena; returns its secret."""
    response = client.post("/api/bots", json={"name": name})
    response.raise_for_status()
    return response.json()["token"]


def choose(agents: dict, agent: str, view: dict) -> str:
    """The agent's action label for a seat's view (one agent loaded per player count and rules)."""
    key = (len(view["players"]), json.dumps(view["rules"], sort_keys=True))
    if key not in agents:
        agents[key] = load(agent, num_players=key[0], rules_options=view["rules"])
    mask = np.zeros((1, len(ACTION_LABELS)), bool)
    mask[0, [ACTION_INDEX[label] for label in view["legal"]]] = True
    observation = np.asarray([view["observation"]], np.int8)
    return ACTION_LABELS[int(agents[key].act(observation, mask)[0])]


def play(client: httpx.Client, secret: str, agent: str = "heuristic", moves: int | None = None, wait: float = 10.0,
         until=lambda: False) -> int:
    """Answer the bot's turns with ``agent`` until ``moves`` moves are made or ``until()`` holds; returns the moves."""
    headers = {"Authorization": f"Bearer {secret}"}
    agents: dict = {}
    made = 0
    while (moves is None or made < moves) and not until():
        response = client.get("/api/bots/turns", params={"wait": wait}, headers=headers)
        response.raise_for_status()
        for turn in response.json()["turns"]:
            action = choose(agents, agent, turn["view"])
            answer = client.post(f"/api/games/{turn['game']}/actions", json={"action": action}, headers=headers)
            if answer.status_code in (404, 409):  # the clock played this move, or the game ended, meanwhile
                continue
            answer.raise_for_status()
            made += 1
    return made


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents.arena.bot_client", description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the arena (default http://127.0.0.1:8000)")
    parser.add_argument("--agent", default="heuristic", help="the agent that chooses the moves (default heuristic)")
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--name", help="register a new bot under this name (its secret is printed once)")
    who.add_argument("--secret", help="the secret of a bot registered before")
    parser.add_argument("--moves", type=int, help="stop after this many moves (default: play on)")
    args = parser.parse_args(argv)
    with httpx.Client(base_url=args.url, timeout=30) as client:
        secret = args.secret or register(client, args.name)
        if args.name:
            print(f"bot {args.name}: secret {secret} (shown once: keep it)", flush=True)
        print(f"played {play(client, secret, args.agent, args.moves)} moves")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
