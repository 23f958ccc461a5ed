"""Who plays the other seats of a training run (--opponent): a fixed player or agent file, a mixture of them drawn
per game, the live weights (self), or a league of the learner's snapshots and fixed players (agents.training.league).
"""

from __future__ import annotations

import os
import sys
import warnings

from agents import players
from agents.players.trained import TrainedAgent
from agents.training.agent_file import export
from agents.training.league import League, Mixture
from agents.training.options import Args, opponent_mixture
from hpuno_env._checks import SEED_LIMIT


def install_opponents(args: Args, game_env, learner, state: dict, rules: dict) -> League | None:
    """Make --opponent play the opponent seats of ``game_env``; ``learner(deterministic, seed=...)`` makes an agent
    of the live weights. Returns the league with --opponent league (its snapshots those of the checkpoint ``state``).
    An agent file made under other ``rules`` than the run's plays on, with a ``warning:`` line saying so."""
    held_out = None if args.hold_out == "none" else args.hold_out
    mixture = opponent_mixture(args.opponent)
    if args.opponent == "league":
        league = League(args.players, latest=learner(False, seed=args.seed + 1), held_out=held_out, seed=args.seed + 1)
        for name in state.get("league_snapshots", []):
            league.add_snapshot(TrainedAgent.load(os.path.join(args.out, "league", name + ".safetensors"), args.players, deterministic=False), name)
        league.snapshots_added = state.get("snapshots_added", 0)
        league.install(game_env)
        return league
    if args.opponent == "self":
        game_env.set_opponent(learner(False, seed=args.seed + 1))
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mixture is not None:
            Mixture(mixture, args.players, seed=args.seed + 1, rules_options=rules).install(game_env)
        else:
            game_env.set_opponent(players.load(args.opponent, num_players=args.players, seed=args.seed + 1, rules_options=rules))
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr, flush=True)
    return None


def make_snapshot(model, args: Args, rules: dict, scale, name: str) -> TrainedAgent:
    """A frozen copy of the learner for the league, saved as OUT/league/NAME.safetensors and loaded from there."""
    path = os.path.join(args.out, "league", name + ".safetensors")
    export(model, path, num_players=args.players, rules_options=rules, observation_scale=scale, training={"league_snapshot": name})
    return TrainedAgent.load(path, args.players, seed=(args.seed + model.num_timesteps) % SEED_LIMIT,
                             deterministic=False)
