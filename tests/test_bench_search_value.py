"""benchmarks/bench_search_value.py: positions labelled by who won, the other hands as dealt; a search valued by a
network plays the blueprint where the margin is out of reach, and values each world by it less the margin."""

import importlib.util
import pathlib

import numpy as np
import torch

import agents
from agents.evaluation.duplicate import duplicate_win_rate
from hpuno_env import VectorEngine
from hpuno_env import observation_layout
from hpuno_env.encoding import observation_size_in_version

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_search_value", ROOT / "benchmarks" / "bench_search_value.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_every_kept_position_is_labelled_for_each_seat_and_one_of_them_won():
    blueprint = agents.load("ppo_2p", 2, seed=0)
    data = bench.positions(blueprint, 2, rounds=30, keep=0.5, explore=0.1, seed=0)
    width = bench.input_width(blueprint, 2)
    assert width == observation_size_in_version(2, 2)
    assert data["inputs"].shape[1] == width + 55 and len(data["inputs"]) == len(data["won"]) > 100
    assert data["won"].mean() == 0.5  # rows come in pairs, one per seat of the same position: exactly one won
    # The hidden part is the other seat's hand: as many cards as the observation says it holds.
    other_size = data["inputs"][:, observation_layout(2)["other_hand_sizes"]][:, 0]
    assert (data["inputs"][:, width:].sum(axis=1) == other_size).all() and other_size.max() > 7


class ConstantLogit(torch.nn.Module):
    """A network that values every position alike (a win probability of one half)."""

    def forward(self, inputs):
        return torch.zeros(len(inputs))


def test_a_margin_out_of_reach_plays_the_blueprint():
    blueprint = agents.load("ppo_2p", 2, seed=0)
    width = bench.input_width(blueprint, 2)
    rounds = dict(rounds=4, seed=3)
    shut = bench.ValueLeafSearch(ConstantLogit(), width, margin=2.0, num_players=2, seed=0, blueprint=blueprint, worlds=8)
    result = duplicate_win_rate(shut, blueprint, blueprint, 2, **rounds)
    assert shut.decisions > 0 and shut.changed == 0 and result["differing"] == 0


def test_each_world_is_valued_by_the_network_less_the_margin_for_leaving_the_blueprint():
    blueprint = agents.load("ppo_2p", 2, seed=0)
    player = bench.ValueLeafSearch(ConstantLogit(), bench.input_width(blueprint, 2), margin=0.25, num_players=2, seed=0,
                                   blueprint=blueprint, worlds=8)
    engine = VectorEngine(1, 2, seed=4, auto_reset=False)
    engine.reset()
    observation, mask = engine.observe()[0], engine.legal_mask()[0]
    default = int(blueprint.act(observation[None], mask[None])[0])
    assert mask.sum() > 1 and player.search(observation, mask, default) == default
    # A fresh deal: no candidate ends the round, so every world is worth the network's one half, less the margin
    # for every candidate but the blueprint's.
    search = player.last_search
    expected = [0.0 if c == default else -0.25 for c in search["candidates"]]
    assert np.allclose(search["mean_difference"], expected)
