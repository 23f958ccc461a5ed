"""Training a belief over the other seats' hands (``agents.players.belief``): rounds played by a league, the true
hands as labels, a small network, a belief file.

    python -m agents.training.belief --players 2 --out runs/belief_2p
    python -m agents.training.belief --players 0 --out runs/belief_any      # one network for every table (2..10)
    python -m agents.training.belief --players 2 --out runs/belief_2p --resume
    python -m agents.training.belief --players 2 --league ppo_2p --out runs/belief_2p_of_ppo_2p

Rounds are played by a league (``LEAGUE``: the shipped trained agents, greedy and sampling), a player drawn for
every seat of every round; never by ``heuristic``, ``random-play`` or ``search``, whose rounds
``benchmarks/bench_belief.py`` measures the belief on, nor by ``heuristic-v0``, kept out of all training.
``--league ppo_2p`` names the players instead (here: a belief of ``ppo_2p``'s own rounds, greedy in every seat,
the learned belief of a search that knows its opponents play as ``ppo_2p`` does). Each
decision is kept with probability ``--keep``: the acting seat's observation, and as labels the other seats' hands
and the draw pile. ``--players 0`` plays every
table from 2 to 10 players, half under the default rules and half with every house rule on, and trains one
network with the table in its input.

The network (``agents.players.belief.BeliefNetwork``) reads ``belief_features.network_inputs`` and gives logits
over card kinds for each other seat and the draw pile; the loss is the cross-entropy of where the unseen cards lie
(each row's cards not known held, a softmax over the kinds that have unseen copies). The run folder holds the
collected rounds (``rounds_<P>p.npz``), ``checkpoint.pt`` (the network and optimiser after each epoch, and the
network of the epoch with the lowest validation loss: a torch file of tensors, loaded with ``weights_only=True``),
``log.csv`` and at the end the belief file ``belief.safetensors``, the network of that best epoch. The last
twentieth of each table's decisions is the validation set.
``--resume`` goes on from the last epoch with the same rounds.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass

import numpy as np
import safetensors.torch
import torch

import agents.players as players
from agents.players.trained import TrainedAgent
from agents._cli import dataclass_parser, exit_with_error, layer_sizes, option
from agents.players.belief import ANY, FORMAT_NAME, FORMAT_VERSION, METADATA_KEY, BeliefNetwork, network_rows
from agents.players.belief_features import (
    FEATURES_VERSION, MAX_OTHERS, history_features, network_input_size, table_facts,
)
from hpuno_env import VectorEngine
from hpuno_env._output import write_atomically
from hpuno_env.cards import NUM_CARD_TYPES
from hpuno_env.encoding import OBSERVATION_VERSION, hidden_hands, observation_scale, observation_size_in_version
from hpuno_env.options import ALL_HOUSE_RULES, RulesOptions
from hpuno_env.universal import universal_observation, universal_scale

from .agent_file import _package_version, _to_json

# The players whose rounds a belief learns from, per table (None: any table); each seat of each round draws one.
# The shipped trained agents only: the rule-based players are what a belief is measured on (the heuristic) or kept
# out of all training (heuristic-v0, the project's hold-out).
LEAGUE = {2: ("ppo_2p", "ppo_2p:sampling", "ppo_universal", "ppo_universal:sampling"),
          4: ("ppo_4p", "ppo_4p:sampling", "ppo_universal", "ppo_universal:sampling"),
          None: ("ppo_universal", "ppo_universal:sampling")}
TABLES_FOR_ANY = tuple(range(2, 11))


@dataclass
class Args:
    players: int = option(2, "the table's player count (2..10); 0 for one network for every table")
    out: str = option("runs/belief", "the run folder")
    samples: int = option(150_000, "decisions kept per table (every table's share with --players 0: this over 9)")
    keep: float = option(0.5, "the chance that a decision is kept")
    games: int = option(256, "games played at once")
    hidden: str = option("256,256", "hidden layer sizes")
    epochs: int = option(8, "passes over the rounds")
    batch_size: int = option(512, "decisions a step")
    learning_rate: float = option(1e-3, "Adam's step size")
    seed: int = option(0, "seed of the rounds and the network")
    resume: bool = option(False, "go on from the run folder's checkpoint")
    league: str = option("", "the players whose rounds it learns from, comma-separated: shipped agents' names, "
                              "NAME:sampling for one sampling its moves (default: the table's LEAGUE)")


# ---- collecting rounds


def _league(names: tuple[str, ...], num_players: int, rules: dict, seed: int) -> list:
    """The league's players; ``NAME:sampling`` is a shipped agent sampling its moves instead of taking the best."""
    loaded = []
    for index, name in enumerate(names):
        base, _, mode = name.partition(":")
        if mode == "sampling":
            loaded.append(TrainedAgent.load(players.SHIPPED[base], num_players, seed=seed + index, deterministic=False,
                                            rules_options=rules))
        else:
            loaded.append(players.load(base, num_players=num_players, seed=seed + index, rules_options=rules))
    return loaded


def collect_rounds(num_players: int, rules: dict, samples: int, seed: int, *, games: int = 256, keep: float = 0.5,
                   league: tuple[str, ...] | None = None, log=print) -> dict[str, np.ndarray]:
    """``samples`` decisions of league rounds at a table: observations (int8), the other seats' hands (int8, in turn
    order to the acting seat's left) and the draw pile's cards (int8 counts)."""
    names = league or (LEAGUE.get(num_players, LEAGUE[None]) if not rules else LEAGUE[None])
    policies = _league(names, num_players, rules, seed)
    engine = VectorEngine(games, num_players, seed=seed, **rules)
    engine.reset()
    rng = np.random.default_rng(seed)
    seats = rng.integers(0, len(policies), (games, num_players))
    kept = {"observations": [], "hands": [], "pile": []}
    count, started = 0, time.perf_counter()
    while count < samples:
        observations, masks = engine.observe(), engine.legal_mask()
        actions = np.zeros(games, np.int64)
        acting = seats[np.arange(games), engine.current_player]
        for index, policy in enumerate(policies):
            rows = np.flatnonzero(acting == index)
            if len(rows):
                actions[rows] = policy.act(observations[rows], masks[rows])
        chosen = np.flatnonzero(rng.random(games) < keep)
        kept["observations"].append(observations[chosen])
        kept["hands"].append(hidden_hands(engine.state.hands[chosen], engine.current_player[chosen], num_players).reshape(len(chosen), num_players - 1, NUM_CARD_TYPES))
        kept["pile"].append(pile_counts(engine.state.draw_pile[chosen], engine.state.draw_count[chosen]))
        count += len(chosen)
        _, terminated, truncated = engine.step(actions)
        ended = terminated | truncated
        seats[ended] = rng.integers(0, len(policies), (int(ended.sum()), num_players))
    log(f"collected {count:,} decisions of {num_players}-player rounds in {time.perf_counter() - started:.0f} s")
    return {name: np.concatenate(parts)[:samples] for name, parts in kept.items()}


def pile_counts(draw_pile: np.ndarray, draw_count: np.ndarray) -> np.ndarray:
    """(G, 55) int8: copies of each card kind in each game's draw pile."""
    positions = np.arange(draw_pile.shape[1])[None, :]
    cards = np.where(positions < draw_count[:, None], draw_pile, NUM_CARD_TYPES).astype(np.int64)
    counts = np.zeros((len(draw_pile), NUM_CARD_TYPES + 1), np.int64)
    np.add.at(counts, (np.broadcast_to(np.arange(len(draw_pile))[:, None], cards.shape), cards), 1)
    return counts[:, :NUM_CARD_TYPES].astype(np.int8)


# ---- the training tables: inputs and targets


class TableData:
    """One table's rounds ready for training: history features, targets per network row, the kinds in play."""

    def __init__(self, rounds: dict, num_players: int, rules: dict, universal: bool):
        self.num_players, self.rules, self.universal = num_players, rules, universal
        self.observations = rounds["observations"]
        seats = MAX_OTHERS if universal else num_players - 1
        self.history = np.concatenate([history_features(self.observations[i:i + 8192], num_players, seats)
                                       for i in range(0, len(self.observations), 8192)])
        facts = table_facts(self.observations, num_players, RulesOptions.from_kwargs(**rules).deck)
        rows = MAX_OTHERS + 1 if universal else num_players
        self.targets = np.zeros((len(self.observations), rows, NUM_CARD_TYPES), np.int8)
        order = network_rows(num_players, universal)
        self.targets[:, order[:-1]] = np.maximum(rounds["hands"] - facts.known, 0)
        self.targets[:, order[-1]] = rounds["pile"]
        self.in_play = (facts.unseen - facts.known.sum(axis=1)) > 0
        conflicts = int(((self.targets > 0) & ~self.in_play[:, None, :]).sum())
        if conflicts:  # a certain fact that the true hands contradict: a bug in table_facts, never to be trained on
            raise AssertionError(f"{conflicts} cards lie where the certain facts say none can")

    def inputs(self, rows: np.ndarray) -> np.ndarray:
        observations = self.observations[rows]
        if self.universal:
            base = universal_observation(observations, self.num_players, self.rules).astype(np.float32) * universal_scale()
        else:
            size = observation_size_in_version(self.num_players, 3)
            base = observations[:, :size].astype(np.float32) * observation_scale(self.num_players)[:size]
        return np.concatenate([base, self.history[rows]], axis=1)


def batch_loss(network: BeliefNetwork, table: TableData, rows: np.ndarray) -> torch.Tensor:
    """The cross-entropy of where the unseen cards of ``rows`` lie, per card."""
    logits = network(torch.as_tensor(table.inputs(rows)))
    in_play = torch.as_tensor(table.in_play[rows])[:, None, :]
    log_p = torch.log_softmax(logits.masked_fill(~in_play, -1e9), dim=2)
    targets = torch.as_tensor(table.targets[rows], dtype=torch.float32)
    return -(targets * log_p).sum() / targets.sum().clamp(min=1.0)


# ---- the run


def run_tables(args: Args) -> list[tuple[int, dict, int]]:
    """(players, rules, decisions) of every table the run collects."""
    if args.players:
        return [(args.players, {}, args.samples)]
    share = max(1, args.samples // (2 * len(TABLES_FOR_ANY)))
    return [(count, rules, share) for count in TABLES_FOR_ANY for rules in ({}, dict(ALL_HOUSE_RULES))]


def league_names(args: Args) -> tuple[str, ...] | None:
    """``--league`` as a tuple of names (None: the table's ``LEAGUE``); a ValueError names one that is not a shipped
    agent."""
    if not args.league:
        return None
    names = tuple(name.strip() for name in args.league.split(","))
    for name in names:
        base, _, mode = name.partition(":")
        if base not in players.SHIPPED or mode not in ("", "sampling"):
            raise ValueError(f"{name!r} is not a shipped agent ({', '.join(players.SHIPPED)}), optionally with ':sampling'")
    return names


def load_tables(args: Args, log) -> list[TableData]:
    """Every table's rounds, collected now or read back from the run folder."""
    tables = []
    for index, (count, rules, samples) in enumerate(run_tables(args)):
        path = os.path.join(args.out, f"rounds_{count}p{'_house' if rules else ''}.npz")
        if os.path.exists(path):
            with np.load(path) as stored:
                rounds = {name: stored[name] for name in stored.files}
        else:
            rounds = collect_rounds(count, rules, samples, args.seed + 1000 * index, games=args.games, keep=args.keep,
                                    league=league_names(args), log=log)
            np.savez(path + ".partial.npz", **rounds)
            os.replace(path + ".partial.npz", path)
        tables.append(TableData(rounds, count, rules, universal=not args.players))
    return tables


def train(args: Args, log=print) -> BeliefNetwork:
    """Collect (or read back) the rounds, then train (or go on training) the network, checkpointing each epoch."""
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(args.seed)
    tables = load_tables(args, log)
    universal = not args.players
    network = BeliefNetwork(network_input_size(None if universal else args.players), layer_sizes(args.hidden), "relu",
                            MAX_OTHERS + 1 if universal else args.players)
    optimiser = torch.optim.Adam(network.parameters(), lr=args.learning_rate)
    checkpoint_path, start = os.path.join(args.out, "checkpoint.pt"), 0
    best = {"validation": float("inf"), "network": None}
    if args.resume and os.path.exists(checkpoint_path):
        saved = torch.load(checkpoint_path, weights_only=True)
        network.load_state_dict(saved["network"])
        optimiser.load_state_dict(saved["optimiser"])
        start = int(saved["epoch"])
        best = {"validation": float(saved["best_validation"]), "network": saved["best_network"]}
        log(f"resumed after epoch {start}")
    splits = [(np.arange(len(t.targets) * 19 // 20), np.arange(len(t.targets) * 19 // 20, len(t.targets))) for t in tables]
    rng = np.random.default_rng(args.seed + start)
    for epoch in range(start, args.epochs):
        started, losses = time.perf_counter(), []
        network.train()
        for table, rows in _batches(tables, splits, args.batch_size, rng):
            loss = batch_loss(network, table, rows)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
        validation = _validation_loss(network, tables, splits, args.batch_size)
        _log_epoch(args.out, epoch + 1, float(np.mean(losses)), validation, time.perf_counter() - started, log)
        if validation < best["validation"]:
            best = {"validation": validation, "network": {name: value.clone() for name, value in network.state_dict().items()}}
        torch.save({"network": network.state_dict(), "optimiser": optimiser.state_dict(), "epoch": epoch + 1,
                    "best_network": best["network"], "best_validation": best["validation"]}, checkpoint_path + ".partial")
        os.replace(checkpoint_path + ".partial", checkpoint_path)
    network.load_state_dict(best["network"])  # the epoch of the lowest validation loss
    return network.eval()


def _batches(tables, splits, batch_size: int, rng):
    """(table, rows) batches of every table's training rows, shuffled, tables interleaved."""
    batches = [(index, chunk) for index, (train_rows, _) in enumerate(splits)
               for chunk in np.array_split(rng.permutation(train_rows), max(1, len(train_rows) // batch_size))]
    for position in rng.permutation(len(batches)):
        index, rows = batches[position]
        yield tables[index], rows


def _validation_loss(network, tables, splits, batch_size: int) -> float:
    network.eval()
    total, weight = 0.0, 0.0
    with torch.no_grad():
        for table, (_, rows) in zip(tables, splits, strict=True):
            for chunk in np.array_split(rows, max(1, len(rows) // batch_size)):
                cards = float(table.targets[chunk].sum())
                total += float(batch_loss(network, table, chunk)) * cards
                weight += cards
    return total / max(weight, 1.0)


def _log_epoch(out: str, epoch: int, loss: float, validation: float, seconds: float, log) -> None:
    path = os.path.join(out, "log.csv")
    fresh = not os.path.exists(path)
    with open(path, "a", newline="") as file:
        writer = csv.writer(file)
        if fresh:
            writer.writerow(["epoch", "train_loss", "validation_loss", "seconds", "time"])
        writer.writerow([epoch, f"{loss:.5f}", f"{validation:.5f}", f"{seconds:.1f}", datetime.datetime.now().isoformat(timespec="seconds")])
    log(f"epoch {epoch}: train {loss:.4f}, validation {validation:.4f} (nats a card), {seconds:.0f} s")


def write_belief_file(network: BeliefNetwork, path: str, *, num_players, rules_options, training: dict,
                      evaluation: dict | None = None) -> dict:
    """Write a belief file (agents.players.belief's format) atomically; return its metadata."""
    hidden = [layer.out_features for layer in network.net if isinstance(layer, torch.nn.Linear)][:-1]
    metadata = {
        "format": FORMAT_NAME, "format_version": FORMAT_VERSION, "num_players": num_players,
        "rules_options": rules_options,
        "observation": {"version": OBSERVATION_VERSION},
        "features": {"version": FEATURES_VERSION, "input_size": network.net[0].in_features},
        "network": {"hidden_sizes": hidden, "activation": "relu", "rows": network.rows},
        "training": training, "evaluation": dict(evaluation or {}),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"), "package_version": _package_version(),
    }
    tensors = {name: tensor.detach().to("cpu", torch.float32).contiguous().clone() for name, tensor in network.state_dict().items()}
    write_atomically(path, safetensors.torch.save(tensors, metadata={METADATA_KEY: _to_json(metadata)}))
    return json.loads(_to_json(metadata))


def main(argv: list[str] | None = None) -> None:
    parser = dataclass_parser(Args, __doc__, prog="python -m agents.training.belief")
    args = Args(**vars(parser.parse_args(argv)))
    if args.players != 0 and not 2 <= args.players <= 10:
        exit_with_error(parser, f"--players must be 2..10, or 0 for every table; got {args.players}")
    for name in ("samples", "games", "epochs", "batch_size"):
        if getattr(args, name) < 1:
            exit_with_error(parser, f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not 0 < args.keep <= 1 or not args.learning_rate > 0:
        exit_with_error(parser, f"--keep must be in (0, 1] and --learning-rate above 0; got {args.keep}, {args.learning_rate}")
    try:
        layer_sizes(args.hidden)
    except ValueError as error:
        exit_with_error(parser, f"--hidden: {error}")
    try:
        league = league_names(args)
    except ValueError as error:
        exit_with_error(parser, f"--league: {error}")
    if os.path.exists(os.path.join(args.out, "checkpoint.pt")) and not args.resume:
        exit_with_error(parser, f"{args.out} holds a run's checkpoint: give --resume to go on, or another --out")
    network = train(args)
    universal = not args.players
    training = {"command": shlex.join([os.path.basename(sys.executable), "-m", "agents.training.belief", *(argv if argv is not None else sys.argv[1:])]),
                "league": list(league or (LEAGUE[None] if universal else LEAGUE.get(args.players, LEAGUE[None]))),
                "tables": [[count, rules] for count, rules, _ in run_tables(args)], "args": dataclasses.asdict(args)}
    path = os.path.join(args.out, "belief.safetensors")
    write_belief_file(network, path, num_players=ANY if universal else args.players,
                      rules_options=ANY if universal else RulesOptions().as_dict(), training=training)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
