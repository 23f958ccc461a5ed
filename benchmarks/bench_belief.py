"""Calibration of beliefs over the other seats' hands (``agents.belief``), on rounds of players they never trained on.

    python benchmarks/bench_belief.py                                  # 2 and 4 players, the shipped belief
    python benchmarks/bench_belief.py --players 3 6 --rounds 100 --beliefs certain runs/belief_any/belief.safetensors

Rounds are played with one player in every seat (``--opponents``: the heuristic, random-play and the search player,
none of them in the beliefs' training league); every decision's observation of the acting seat is kept with the
true hands of the others and the round's decision count. Each belief (``--beliefs``: ``certain``, the certain
facts with the unseen cards spread uniformly; ``shipped``, ``load_belief``'s choice for the table; or belief files,
each at the tables it was made for) gives its expected hands, and the report has, per table, opponent, stage of the round (decisions taken so far:
opening 0-9, middle 10-29, late 30 and more) and belief:

- ``sq err``: the squared error of the expected counts, summed over the 55 kinds, per other seat;
- ``log-loss``: where each unseen card lies (an other seat or the draw pile), -log of the probability the belief
  gives its true place (expected copies there over the unseen copies of its kind), per card, in nats;
- ``Brier``: of the events that decide moves, for the next seat: it holds no card of colour c (each colour), and it
  holds a Draw Two or a Wild Draw Four. Their probabilities come from the expected counts as if a hand's cards were
  drawn independently from its expected composition: P(none of a set S) = (1 - m_S / n) ** n, m_S the expected
  copies of S in the hand, n its size (the same rule for every belief).

``--out FILE`` writes the numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np

import agents
from agents.belief import load_belief
from agents.players.belief_features import table_facts
from hpuno_env import VectorEngine
from hpuno_env.cards import CARD_COLOR, CARD_RANK, DRAW2_RANK, NUM_CARD_TYPES, WILD_DRAW4
from hpuno_env.encoding import hidden_hands

STAGES = (("opening", 0, 10), ("middle", 10, 30), ("late", 30, 10**9))
DRAW_CARDS = np.flatnonzero((CARD_RANK == DRAW2_RANK) | (np.arange(NUM_CARD_TYPES) == WILD_DRAW4))


def play_rounds(opponent: str, num_players: int, rounds: int, seed: int, worlds: int) -> dict[str, np.ndarray]:
    """Every decision of ``rounds`` rounds with ``opponent`` in every seat: observations, the others' hands, the
    decisions taken in the round before it."""
    # The search over the heuristic in uniform worlds: a player the belief never trained on, independent of it.
    options = {"worlds": worlds, "blueprint": "heuristic", "belief": "uniform"} if opponent == "search" else {}
    player = agents.load(opponent, num_players=num_players, seed=seed, **options)
    engine = VectorEngine(rounds, num_players, seed=seed, auto_reset=False)
    engine.reset()
    kept = {"observations": [], "hands": [], "turns": []}
    while (playing := np.flatnonzero(engine.current_player >= 0)).size:
        observations, masks = engine.observe(), engine.legal_mask()
        kept["observations"].append(observations[playing])
        kept["hands"].append(hidden_hands(engine.state.hands[playing], engine.current_player[playing], num_players)
                             .reshape(len(playing), num_players - 1, NUM_CARD_TYPES))
        kept["turns"].append(engine.state.turns[playing].copy())
        actions = np.full(rounds, -1, np.int64)
        actions[playing] = player.act(observations[playing], masks[playing])
        engine.step(actions, partial=True)
    return {name: np.concatenate(parts) for name, parts in kept.items()}


def none_probability(expected: np.ndarray, kinds: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """P(the hand holds no card of ``kinds``), a hand's cards drawn independently from its expected composition."""
    share = np.clip(expected[:, kinds].sum(axis=1) / np.maximum(sizes, 1), 0.0, 1.0)
    return (1.0 - share) ** sizes


def metrics(expected: np.ndarray, hands: np.ndarray, unseen: np.ndarray) -> dict[str, np.ndarray]:
    """Per decision: squared error per other seat, log-loss per unseen card, Brier of the next seat's events."""
    squared = ((expected - hands) ** 2).sum(axis=2).mean(axis=1)
    pile_expected = unseen - expected.sum(axis=1)
    pile_true = unseen - hands.sum(axis=1)
    places = np.concatenate([expected, pile_expected[:, None]], axis=1) / np.maximum(unseen[:, None, :], 1)
    truth = np.concatenate([hands, pile_true[:, None]], axis=1)
    log_loss = -(truth * np.log(np.clip(places, 1e-6, 1.0))).sum(axis=(1, 2)) / np.maximum(unseen.sum(axis=1), 1)
    sizes = hands[:, 0].sum(axis=1)
    briers = []
    for color in range(4):
        kinds = np.flatnonzero(CARD_COLOR == color)
        p = none_probability(expected[:, 0], kinds, sizes)
        briers.append((p - (hands[:, 0, kinds].sum(axis=1) == 0)) ** 2)
    p = 1 - none_probability(expected[:, 0], DRAW_CARDS, sizes)
    briers.append((p - (hands[:, 0, DRAW_CARDS].sum(axis=1) > 0)) ** 2)
    return {"sq_err": squared, "log_loss": log_loss, "brier": np.mean(briers, axis=0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--opponents", nargs="+", default=["heuristic", "random-play", "search"])
    parser.add_argument("--beliefs", nargs="+", default=["certain", "shipped"])
    parser.add_argument("--rounds", type=int, default=200, help="rounds per table and opponent (search: a quarter)")
    parser.add_argument("--worlds", type=int, default=16, help="the search player's worlds a decision")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    report = []
    print(f"# Belief calibration, {args.rounds} rounds a cell (search: {max(1, args.rounds // 4)}), seed {args.seed}; "
          f"{platform.machine()}\n")
    print("| players | opponent | stage | belief | decisions | sq err | log-loss | Brier | ms / 1000 views |")
    print("|---|---|---|---|---|---|---|---|---|")
    for num_players in args.players:
        for opponent in args.opponents:
            rounds = max(1, args.rounds // 4) if opponent == "search" else args.rounds
            data = play_rounds(opponent, num_players, rounds, args.seed, args.worlds)
            for name in args.beliefs:
                try:
                    belief = load_belief(num_players) if name == "shipped" else load_belief(num_players, name_or_path=name)
                except ValueError as refusal:  # a belief file made for another table: not in this table's rows
                    if "-player tables" not in str(refusal):
                        raise
                    continue
                started = time.perf_counter()
                expected = belief.expected_hands(data["observations"])
                milliseconds = (time.perf_counter() - started) * 1000 / len(expected) * 1000
                unseen = table_facts(data["observations"], num_players, belief.rules.deck).unseen.astype(np.float64)
                scores = metrics(expected, data["hands"].astype(np.float64), unseen)
                for stage, low, high in (("all", 0, 10**9), *STAGES):
                    rows = (data["turns"] >= low) & (data["turns"] < high)
                    cell = {key: float(values[rows].mean()) for key, values in scores.items()}
                    label = name if name != "shipped" else f"shipped ({belief.describe().get('source', belief.name).split('/')[-1]})"
                    report.append({"players": num_players, "opponent": opponent, "stage": stage, "belief": label,
                                   "decisions": int(rows.sum()), **cell, "ms_per_1000": milliseconds})
                    print(f"| {num_players} | {opponent} | {stage} | {label} | {int(rows.sum()):,} | {cell['sq_err']:.3f} | "
                          f"{cell['log_loss']:.3f} | {cell['brier']:.4f} | {milliseconds:.0f} |", flush=True)
    if args.out:
        with open(args.out, "w") as file:
            json.dump(report, file, indent=1)


if __name__ == "__main__":
    main()
