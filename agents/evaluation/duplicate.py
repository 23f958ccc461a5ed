"""Duplicate evaluation: two policies compared on the same deals, so that the luck of the deal cancels.

In UNO the deal decides most rounds, so two win rates measured on different
deals need many rounds to tell a small difference from luck. Poker programs
are compared on *duplicate* deals instead, and so does ``duplicate_win_rate``:
every deal is played twice, once with policy A in the evaluated seat and once
with policy B there, every other seat played by the same opponent. Both plays
of a deal start from the same engine generator (the same deck, dealer and later
reshuffles) and every policy is reseeded identically at each decision
(``play_rounds``'s ``deal_seeds``), so the two plays are the same game until A
and B choose differently. A deal both win (or both lose) says nothing about
which is stronger; only the deals whose outcomes differ count, and the luck
they share is gone from the comparison.

The difference is read per deal (A's win minus B's, each 0 or 1) and given
with a 95% interval from the normal approximation on those paired
differences: mean ± 1.96 · sd / √n. ``unpaired_half_width`` is what the same
number of rounds would give each policy evaluated on its own (two
independent win rates), for comparison.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from hpuno_env._checks import check_positive_int, check_seed

from .rounds import WILSON_Z_95, RoundResults, check_seat_rounds, play_rounds, seat_summary


def duplicate_lineups(deals: int, num_players: int) -> np.ndarray:
    """(2 * deals, num_players) lineups of policies 0 (A), 1 (B) and 2 (the opponent): rows 2d and 2d + 1 play
    deal d with A, then B, in seat ``d % num_players`` and the opponent everywhere else."""
    deals = check_positive_int(deals, "rounds")
    check_seat_rounds(deals, 2 * num_players, unit="deal, played twice")
    lineups = np.full((2 * deals, num_players), 2, np.int64)
    seats = np.repeat(np.arange(deals) % num_players, 2)
    lineups[np.arange(2 * deals), seats] = np.tile([0, 1], deals)
    return lineups


def deal_seeds(deals: int, seed: int | None) -> np.ndarray:
    """(2 * deals,) deal seeds: deal d's from ``numpy.random.SeedSequence(seed)``, given to both of its plays."""
    return np.repeat(np.random.SeedSequence(seed).generate_state(deals, np.uint32).astype(np.int64), 2)


def duplicate_win_rate(policy_a, policy_b, opponent, num_players: int = 2, rounds: int = 1000, seed: int | None = 0,
                       num_envs: int = 256, **rule_options) -> dict:
    """Play ``rounds`` deals twice each, ``policy_a`` then ``policy_b`` in the evaluated seat (module docstring).

    The evaluated seat rotates as in ``win_rate`` (seat ``d % num_players`` in deal d), the ``opponent`` plays
    every other seat; with ``episode="match"`` every deal is a whole match. ``seed`` picks the deals (and
    ``num_envs`` only how many games are stepped together: the result does not depend on it). Returns a dict:

    - ``a``, ``b``: each policy's ``win_rate`` dict over its plays (``win_rate``, ``low``, ``high``, ``rounds``,
      ``wins``, ``truncated``, ``mean_points``, ``mean_reward``, ``mean_decisions``, ``seat_*``);
    - ``rounds``: the deals (each played twice); ``win_rate_a``, ``win_rate_b``;
    - ``difference``, ``low``, ``high``, ``half_width``: the mean paired difference (A's win minus B's, per deal)
      and its 95% interval (normal approximation), ``sd`` the standard deviation of the paired differences;
    - ``differing``: the deals whose outcomes differ (``a_only``: A won and B did not; ``b_only``: the reverse);
    - ``points_difference``: the mean paired difference of the policies' ``mean_points``;
    - ``unpaired_sd``, ``unpaired_half_width``: sqrt(pa(1-pa) + pb(1-pb)) and the half-width of the difference
      of two independent win rates over ``rounds`` rounds each, for comparison.
    """
    num_players = check_positive_int(num_players, "num_players")
    deals = check_positive_int(rounds, "rounds")
    seed = check_seed(seed)
    results = play_rounds([policy_a, policy_b, opponent], duplicate_lineups(deals, num_players), num_players, seed, num_envs,
                          deal_seeds=deal_seeds(deals, seed), **rule_options)
    seat = np.arange(deals) % num_players
    plays_a, plays_b = _rows(results, slice(0, None, 2)), _rows(results, slice(1, None, 2))
    summary_a, summary_b = seat_summary(plays_a, seat, num_players), seat_summary(plays_b, seat, num_players)
    every = np.arange(deals)
    won_a, won_b = plays_a.won[every, seat], plays_b.won[every, seat]
    paired = won_a.astype(np.float64) - won_b
    return {
        "a": summary_a,
        "b": summary_b,
        "rounds": deals,
        "win_rate_a": summary_a["win_rate"],
        "win_rate_b": summary_b["win_rate"],
        **paired_interval(paired),
        "differing": int((won_a != won_b).sum()),
        "a_only": int((won_a & ~won_b).sum()),
        "b_only": int((won_b & ~won_a).sum()),
        "points_difference": float((plays_a.points[every, seat] - plays_b.points[every, seat]).mean()),
        **unpaired_interval(summary_a["win_rate"], summary_b["win_rate"], deals),
    }


def paired_interval(differences: np.ndarray, z: float = WILSON_Z_95) -> dict:
    """``difference`` (the mean), ``sd`` (ddof 1; 0 for one deal), ``half_width`` = z · sd / √n, ``low``, ``high``."""
    count = len(differences)
    mean = float(np.mean(differences))
    sd = float(np.std(differences, ddof=1)) if count > 1 else 0.0
    half_width = z * sd / math.sqrt(count)
    return {"difference": mean, "low": mean - half_width, "high": mean + half_width, "half_width": half_width, "sd": sd}


def unpaired_interval(rate_a: float, rate_b: float, rounds: int, z: float = WILSON_Z_95) -> dict:
    """The spread of the difference of two independent win rates of ``rounds`` rounds each: ``unpaired_sd`` (per
    pair of rounds, sqrt(pa(1-pa) + pb(1-pb))) and ``unpaired_half_width`` = z · unpaired_sd / √rounds."""
    sd = math.sqrt(rate_a * (1 - rate_a) + rate_b * (1 - rate_b))
    return {"unpaired_sd": sd, "unpaired_half_width": z * sd / math.sqrt(rounds)}


def rounds_to_resolve(sd: float, half_width: float = 0.01, z: float = WILSON_Z_95) -> int:
    """Rounds (deals) for a 95% half-width of ``half_width`` when one round's (deal's) difference has spread ``sd``."""
    return math.ceil((z * sd / half_width) ** 2)


def _rows(results: RoundResults, rows) -> RoundResults:
    """The rounds ``rows`` of ``results``, as a ``RoundResults`` of their own."""
    return RoundResults(**{field.name: getattr(results, field.name)[rows] for field in dataclasses.fields(results)})
