"""Who plays the other seats of a training run (--opponent): a fixed player or agent file, a mixture of them drawn
per game, the live weights (self), or a league of the learner's snapshots and fixed players (agents.training.league),
at a single table (agents.training.tables.OneTable).
"""

from __future__ import annotations

import sys
import warnings

from agents import players
from agents.training.league import League, Mixture
from agents.training.options import OpponentOptions, RunOptions, opponent_mixture


def install_opponents(opponents: OpponentOptions, run: RunOptions, game_env, learner) -> League | None:
    """Make --opponent play the opponent seats of ``game_env``; ``learner(deterministic, seed=...)`` makes an agent
    of the live weights. Returns the league with --opponent league (without snapshots: the run's tables add a
    checkpoint's). An agent file made under other rules than the run's plays on, with a ``warning:`` line saying so."""
    held_out = None if opponents.hold_out == "none" else opponents.hold_out
    mixture = opponent_mixture(opponents.opponent)
    if opponents.opponent == "league":
        league = League(run.players, latest=learner(False, seed=run.seed + 1), held_out=held_out, seed=run.seed + 1)
        league.install(game_env)
        return league
    if opponents.opponent == "self":
        game_env.set_opponent(learner(False, seed=run.seed + 1))
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mixture is not None:
            Mixture(mixture, run.players, seed=run.seed + 1, rules_options=run.rules).install(game_env)
        else:
            game_env.set_opponent(players.load(opponents.opponent, num_players=run.players, seed=run.seed + 1, rules_options=run.rules))
    for warning in caught:
        print(f"warning: {warning.message}", file=sys.stderr, flush=True)
    return None
