"""Can a value network replace the search's rollouts? A perfect-information value of the blueprint's own play.

    python benchmarks/bench_search_value.py --players 2 --blueprint ppo_2p --rounds 600000 --deals 400 --margins 0.03 0.08

The search player values a candidate by playing each world to the end with a rollout policy (the heuristic: about
9 points weaker than ``ppo_2p``; ``ppo_2p`` itself: about five times slower). This benchmark tries the other
classic source of values, a network, in three steps:

1. **Positions.** ``--rounds`` rounds of the blueprint in every seat (each action, with probability
   ``--explore``, a uniform legal one instead, so that positions off the blueprint's path are seen too); each
   position kept with probability ``--keep`` for every seat: that seat's observation in the blueprint's layout and
   the other seats' hands (``hpuno_env.encoding.hidden_hands``), labelled 1 where that seat won the round.
2. **The value.** An MLP fitted to those labels by log-loss, one pass over them (positions of one round are alike;
   more passes fit the rounds, not the game): the probability that a seat wins a position played on by the
   blueprint in every seat, every hand known, what a world's rollout by the blueprint estimates, at the cost of
   one forward pass. Its log-loss and accuracy on rounds of the blueprint it did not see (no exploration) are
   printed against the 0.693 of a coin.
3. **The search.** ``agents.load("search")``'s search over the blueprint (belief worlds, ``--worlds``, the corrected
   gate), each candidate played in each world and the world then valued by the network for the searching seat
   (1 where the candidate ended the round). The gate's standard errors measure the worlds' spread, not the
   network's own error, so a candidate must also beat the blueprint's action by at least ``--margins`` in mean
   value. Each margin is played in duplicate against the blueprint, the blueprint in every other seat,
   ``--deals`` deals (seed ``--seed``).
"""

from __future__ import annotations

import argparse
import datetime
import platform
import time

import numpy as np
import torch
from torch import nn

import agents
from agents.evaluation.duplicate import duplicate_win_rate
from agents.players.search import SearchAgent, play_candidates
from hpuno_env import VectorEngine
from hpuno_env.cards import NUM_CARD_TYPES
from hpuno_env.encoding import hidden_hands, hidden_hands_scale, observation_scale

GAMES = 256  # rounds stepped together while collecting positions


def positions(blueprint, num_players: int, rounds: int, keep: float, explore: float, seed: int) -> dict:
    """Step 1: (inputs: a seat's observation and the other hands; won) of ``rounds`` rounds of ``blueprint`` in every
    seat. The rows go into arrays made once (grown by doubling): many small arrays kept between the engine's large
    temporary ones fragment the heap to several times their size."""
    width = input_width(blueprint, num_players)
    engine = VectorEngine(GAMES, num_players, auto_reset=False)
    engine.reset(seed=seed)
    rng = np.random.default_rng(seed)
    round_of, next_round, winner = np.arange(GAMES), GAMES, {}
    capacity = int(rounds * 80 * num_players * keep) + GAMES * num_players
    inputs = np.empty((capacity, width + (num_players - 1) * NUM_CARD_TYPES), np.int8)
    labels = np.empty((capacity, 2), np.int64)  # (round, seat)
    filled = 0
    observations, masks = engine.observe(), engine.legal_mask()
    while len(winner) < rounds:
        games = np.flatnonzero(rng.random(GAMES) < keep)
        if filled + num_players * games.size > len(inputs):
            inputs, labels = (np.concatenate([a, np.empty_like(a)]) for a in (inputs, labels))
        for seat in range(num_players if games.size else 0):
            seats = np.full(GAMES, seat)
            rows = slice(filled, filled + games.size)
            inputs[rows, :width] = engine.observe(seats)[games, :width]
            inputs[rows, width:] = hidden_hands(np.asarray(engine.state.hands)[games], seats[games], num_players)
            labels[rows] = np.stack([round_of[games], seats[games]], axis=1)
            filled += games.size
        actions = blueprint.act(observations, masks)
        for game in np.flatnonzero(rng.random(GAMES) < explore):
            actions[game] = rng.choice(np.flatnonzero(masks[game]))
        _, terminated, truncated = engine.step(actions)
        ended = np.flatnonzero(terminated | truncated)
        for game in ended:
            winner[int(round_of[game])] = int(engine.state.turn_player[game]) if terminated[game] else -1
            round_of[game], next_round = next_round, next_round + 1
        if ended.size:
            engine.reset(seed=int(rng.integers(2**31)), games=ended)
        observations, masks = engine.observe(), engine.legal_mask()
    labels = labels[:filled]
    finished = np.isin(labels[:, 0], list(winner))  # rounds still under way at the end have no label
    won = np.array([winner[r] for r in labels[finished, 0]]) == labels[finished, 1]
    return {"inputs": inputs[:filled][finished], "won": won.astype(np.float32)}


def input_width(blueprint, num_players: int) -> int:
    """The observation entries the blueprint's network reads (a layout's prefix), the value network's too."""
    return int(blueprint.network.obs_scale.shape[0])


class HandsValue(nn.Module):
    """Step 2's network: a seat's observation and the other hands -> the logit of that seat winning."""

    def __init__(self, num_players: int, width: int, hidden: int):
        super().__init__()
        scale = np.concatenate([observation_scale(num_players)[:width], hidden_hands_scale(num_players)])
        self.register_buffer("scale", torch.as_tensor(scale, dtype=torch.float32))
        self.layers = nn.Sequential(nn.Linear(len(scale), hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                    nn.Linear(hidden, 1))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.layers(inputs.to(torch.float32) * self.scale).squeeze(1)


def fit(network: HandsValue, data: dict, batch: int, seed: int) -> None:
    """One pass of Adam over the positions in a random order (a one-cycle learning rate)."""
    torch.manual_seed(seed)
    order = np.random.default_rng(seed).permutation(len(data["won"]))
    steps = len(order) // batch
    optimiser = torch.optim.Adam(network.parameters())
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, max_lr=1e-3, total_steps=steps)
    loss = nn.BCEWithLogitsLoss()
    for step in range(steps):
        rows = np.sort(order[step * batch:(step + 1) * batch])
        error = loss(network(torch.as_tensor(data["inputs"][rows])), torch.as_tensor(data["won"][rows]))
        optimiser.zero_grad()
        error.backward()
        optimiser.step()
        schedule.step()


def held_out_scores(network: HandsValue, data: dict) -> tuple[float, float]:
    """(log-loss, accuracy) of the network on positions it did not train on."""
    with torch.no_grad():
        logits = network(torch.as_tensor(data["inputs"]))
    won = torch.as_tensor(data["won"])
    return nn.functional.binary_cross_entropy_with_logits(logits, won).item(), ((logits > 0).float() == won).float().mean().item()


class ValueLeafSearch(SearchAgent):
    """Step 3: the search player with each world valued by the network after the candidate, not played out."""

    def __init__(self, network: HandsValue, width: int, margin: float, **options):
        super().__init__(**options)
        self.network, self.width, self.margin = network, width, margin
        self._default = -1

    def search(self, observation, mask, default: int) -> int:
        self._default = default
        return super().search(observation, mask, default)

    def _candidate_values(self, engine, candidates, worlds) -> np.ndarray:
        terminated = play_candidates(engine, candidates, worlds)
        games = np.arange(len(terminated))
        seats = np.zeros(engine.num_games, np.int64)  # the searching player is seat 0 of every world
        inputs = np.concatenate([engine.observe(seats)[games, :self.width],
                                 hidden_hands(np.asarray(engine.state.hands)[games], seats[games], self.num_players)], axis=1)
        with torch.no_grad():
            values = torch.sigmoid(self.network(torch.as_tensor(inputs))).numpy().astype(np.float64)
        values[terminated] = 1.0  # the candidate itself ended the round: its player won
        values = values.reshape(len(candidates), worlds)
        values[candidates != self._default] -= self.margin  # the gate then asks for the margin as well
        return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--blueprint", default="ppo_2p", help="a trained agent (agents.load name or file)")
    parser.add_argument("--rounds", type=int, default=600_000, help="rounds of positions to fit the value to")
    parser.add_argument("--keep", type=float, default=0.05, help="share of positions kept (per seat)")
    parser.add_argument("--explore", type=float, default=0.05, help="share of uniform legal actions while collecting")
    parser.add_argument("--hidden", type=int, default=512, help="units of each of the network's two hidden layers")
    parser.add_argument("--worlds", type=int, default=64)
    parser.add_argument("--margins", type=float, nargs="+", default=[0.03, 0.08])
    parser.add_argument("--deals", type=int, default=400, help="deals of each duplicate cell")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    blueprint = agents.load(args.blueprint, args.players, seed=args.seed)
    width = input_width(blueprint, args.players)
    start = time.perf_counter()
    train = positions(blueprint, args.players, args.rounds, args.keep, args.explore, args.seed)
    held_out = positions(blueprint, args.players, max(args.rounds // 60, 100), args.keep, 0.0, args.seed + 1)
    network = HandsValue(args.players, width, args.hidden)
    fit(network, train, batch=4096, seed=args.seed)
    log_loss, accuracy = held_out_scores(network, held_out)
    print(f"# value of {args.blueprint}'s play, {args.players} players: {len(train['won']):,} positions of {args.rounds:,} rounds, "
          f"held-out log-loss {log_loss:.3f} (a coin: 0.693), accuracy {accuracy:.1%}; {time.perf_counter() - start:.0f} s; "
          f"{datetime.date.today()}, {platform.machine()}")
    print(f"# search valued by it against {args.blueprint} in duplicate, {args.deals} deals, {args.worlds} belief worlds, "
          f"corrected gate 2, the blueprint in the other seats, seed {args.seed}")
    print(f"| margin | search − {args.blueprint}, points [95%] | left blueprint |")
    print("|---|---|---|")
    for margin in args.margins:
        player = ValueLeafSearch(network, width, margin, num_players=args.players, seed=args.seed, blueprint=blueprint,
                                 worlds=args.worlds, belief="shipped", correct_gate=True)
        result = duplicate_win_rate(player, agents.load(args.blueprint, args.players, seed=args.seed),
                                    agents.load(args.blueprint, args.players, seed=args.seed + 1), args.players,
                                    rounds=args.deals, seed=args.seed)
        print(f"| {margin:.2f} | {100 * result['difference']:+.1f} [{100 * result['low']:+.1f}, {100 * result['high']:+.1f}] | "
              f"{player.changed / max(player.decisions, 1):.1%} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
