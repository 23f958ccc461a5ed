"""Head-to-head evaluation: how often a policy wins rounds against an opponent policy."""

from __future__ import annotations

import numpy as np


def win_rate(policy, opponent, num_players: int = 2, rounds: int = 1000, num_envs: int = 256, seed: int = 0, **rule_options) -> dict:
    """Play ``rounds`` rounds with ``policy`` in a random seat and ``opponent`` in the others.

    Returns ``{"win_rate", "rounds", "truncated", "mean_reward"}``; a fair policy wins
    about 1 / num_players of the rounds.
    """
    from hpuno_env import SeatBatch

    batch = SeatBatch(num_envs, num_players, learner_seat="random", opponent=opponent, seed=seed, **rule_options)
    observations, masks = batch.reset(seed=seed)
    wins = finished = cut = 0
    total_reward = 0.0
    while finished + cut < rounds:
        observations, masks, rewards, terminated, truncated, _ = batch.step(policy.act(observations, masks))
        wins += int((rewards[terminated] > 0).sum())
        finished += int(terminated.sum())
        cut += int((truncated & ~terminated).sum())
        total_reward += float(rewards[terminated | truncated].sum())
    played = finished + cut
    return {"win_rate": wins / played, "rounds": played, "truncated": cut, "mean_reward": total_reward / played}
