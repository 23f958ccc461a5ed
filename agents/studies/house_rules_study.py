"""What each house rule does to the game: round length, first player's advantage, skill, points.

For one set of rules and a player count, ``study`` plays two fixed sets of
rounds to their end (``agents.evaluation.rounds``):

- **self-play**: the heuristic in every seat. From it: the round length in
  decisions (every engine step) and in turns (a turn is a play or a draw by
  the player whose turn it is, a stack play or a jump: a colour, a target, a
  call, a catch window or a challenge is a decision but not a turn), median
  and 90th percentile; the first player's win rate (the seat to act after the
  deal); the mean points a round is worth (the cards left in the losers'
  hands);
- **skill**: the heuristic in a rotating seat against random-play in all the
  others (``agents.evaluation.rounds.win_rate``). Its win rate, and the *share decided
  by skill*, ``(win rate - 1/n) / (1 - 1/n)``: 0 when the better player wins
  no more than its fair share, 1 when it always wins.

Every figure has a 95% interval: Wilson for rates, the order-statistic
(distribution-free) interval for the median and the 90th percentile, the
normal interval for means.

    python -m agents.studies.house_rules_study --rounds 4000 --players 2 4 > table.md

prints the markdown table of ``docs/house_rules_study.md``; with ``--ablations``
it measures instead what the heuristic's house-rule play is worth: the
heuristic against the same heuristic that never stacks (``NeverStacks``), and
against one that plays a Seven or Zero without looking at the hand it brings
(``swap`` weight 0).
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from hpuno_env import kernel
from hpuno_env.cards import ACCEPT, DRAW, NUM_CARD_TYPES, UNO
from hpuno_env.encoding import observation_layout

from agents.evaluation.rounds import WILSON_Z_95, play_rounds, wilson_interval, win_rate
from agents.players.heuristic import HeuristicAgent
from agents.players.random_play import RandomPlayAgent

ALL_ON = {"stacking": "mixed", "jump_in": True, "seven_zero": True, "draw_until_playable": True, "forced_play": True}
# The rules studied: the default game, each house rule alone, and every one at once.
RULES = {
    "default": {},
    "classic deck": {"deck": "classic"},
    "stacking draw2": {"stacking": "draw2"},
    "stacking draw4": {"stacking": "draw4"},
    "stacking both": {"stacking": "both"},
    "stacking mixed": {"stacking": "mixed"},
    "jump-in": {"jump_in": True},
    "Seven-O": {"seven_zero": True},
    "draw until playable": {"draw_until_playable": True},
    "forced play": {"forced_play": True},
    "all on": ALL_ON,
}
TURN_PHASES = (kernel.STACK_PHASE, kernel.CHALLENGE_PHASE, kernel.JUMP_PHASE)  # where a play is a turn of its own


class TurnCounter:
    """A ``play_rounds`` observer: each round's turns, its first player, in the order each slot played them."""

    def __init__(self, engine):
        self.engine = engine
        self.phase_before = None
        self.turns = np.zeros(engine.num_games, np.int64)
        self.finished: list[list[tuple[int, int]]] = [[] for _ in range(engine.num_games)]  # per slot: (turns, first)
        self.first = np.full(engine.num_games, -1, np.int64)

    def after_reset(self, games):
        games = np.arange(self.engine.num_games) if games is None else games
        self.first[games] = self.engine.current_player[games]
        self.turns[games] = 0
        self.phase_before = self.engine.state.phase.copy()

    def after_step(self, actions):
        phase = self.phase_before
        played = (actions >= 0) & (actions < NUM_CARD_TYPES)
        turn = ((phase == kernel.PLAY) & (played | (actions == DRAW))) | (np.isin(phase, TURN_PHASES) & played)
        self.turns += turn
        over = (actions >= 0) & (self.engine.state.phase == kernel.OVER)
        for game in np.flatnonzero(over):
            self.finished[game].append((int(self.turns[game]), int(self.first[game])))
        self.phase_before = self.engine.state.phase.copy()

    def per_round(self, rounds: int) -> tuple[np.ndarray, np.ndarray]:
        """(turns, first player) of rounds 0..rounds-1 (round r was played in slot r % slots)."""
        slots = len(self.finished)
        rows = [self.finished[r % slots][r // slots] for r in range(rounds)]
        return np.array([t for t, _ in rows]), np.array([f for _, f in rows])


def quantile_interval(values, q: float) -> tuple[float, float, float]:
    """The q-quantile of values and its distribution-free 95% interval (order statistics)."""
    ordered = np.sort(np.asarray(values))
    n = len(ordered)
    spread = WILSON_Z_95 * math.sqrt(n * q * (1 - q))
    low = max(0, math.floor(n * q - spread) - 1)
    high = min(n - 1, math.ceil(n * q + spread))
    return float(np.quantile(ordered, q)), float(ordered[low]), float(ordered[high])


def mean_interval(values) -> tuple[float, float, float]:
    values = np.asarray(values, dtype=np.float64)
    half = WILSON_Z_95 * values.std(ddof=1) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return float(values.mean()), float(values.mean() - half), float(values.mean() + half)


def study(options: dict, num_players: int, rounds: int, seed: int = 0) -> dict:
    """The figures of the module docstring for one set of rules, each as (value, low, high)."""
    heuristic = HeuristicAgent(num_players, seed=seed)
    counters = []

    def observe(engine):
        counters.append(TurnCounter(engine))
        return counters

    lineups = np.zeros((rounds, num_players), np.int64)
    results = play_rounds([heuristic], lineups, num_players, seed=seed, observers=observe, **options)
    turns, first = counters[0].per_round(rounds)
    played = ~results.truncated
    first_wins = int(results.won[np.arange(rounds), first].sum())
    skill = win_rate(HeuristicAgent(num_players, seed=seed), RandomPlayAgent(num_players, seed=seed + 1),
                     num_players, rounds=rounds, seed=seed + 1, **options)
    fair = 1 / num_players

    def share(rate):
        return (rate - fair) / (1 - fair)

    return {
        "rounds": rounds,
        "truncated": int(results.truncated.sum()) + skill["truncated"],
        "decisions_median": quantile_interval(results.decisions, 0.5),
        "decisions_p90": quantile_interval(results.decisions, 0.9),
        "turns_median": quantile_interval(turns, 0.5),
        "turns_p90": quantile_interval(turns, 0.9),
        "first_player_win": (first_wins / rounds, *wilson_interval(first_wins, rounds)),
        "round_points": mean_interval(results.points[played].max(axis=1)),
        "heuristic_win": (skill["win_rate"], skill["low"], skill["high"]),
        "skill_share": (share(skill["win_rate"]), share(skill["low"]), share(skill["high"])),
    }


COLUMNS = [
    ("decisions_median", "decisions, median", "{:.0f}"),
    ("decisions_p90", "decisions, 90th pct", "{:.0f}"),
    ("turns_median", "turns, median", "{:.0f}"),
    ("turns_p90", "turns, 90th pct", "{:.0f}"),
    ("first_player_win", "first player wins", "{:.1%}"),
    ("heuristic_win", "heuristic vs random-play", "{:.1%}"),
    ("skill_share", "share decided by skill", "{:.2f}"),
    ("round_points", "points per round", "{:.0f}"),
]


def table_header() -> str:
    """The first two lines of the markdown table."""
    return "| rules | players | " + " | ".join(title for _, title, _ in COLUMNS) + " |\n" + "|" + "---|" * (len(COLUMNS) + 2)


def table_row(name: str, players: int, result: dict) -> str:
    """One study result as a markdown table row, intervals in brackets."""
    cells = []
    for key, _, form in COLUMNS:
        value, low, high = result[key]
        cells.append(f"{form.format(value)} [{form.format(low)}, {form.format(high)}]")
    return f"| {name} | {players} | " + " | ".join(cells) + " |"


class NeverStacks(HeuristicAgent):
    """The heuristic, except that it accepts every pending draw it could stack on."""

    def act(self, observations, action_masks) -> np.ndarray:
        masks = np.array(action_masks, dtype=bool)
        pending = np.asarray(observations)[:, observation_layout(self.num_players)["pending_draw"]][:, 0] > 0
        facing = pending & masks[:, ACCEPT]
        masks[facing, :NUM_CARD_TYPES] = False
        masks[facing, UNO] = False  # a call here would only announce a stack play
        return super().act(observations, masks)


def ablations(num_players: int, rounds: int, seed: int = 0) -> dict:
    """The heuristic's win rate against itself without its stacking (under ``stacking="both"``) and without
    its Seven-O valuation (under ``seven_zero``), as ``agents.evaluation.rounds.win_rate`` dicts."""
    return {
        "never stacks": win_rate(HeuristicAgent(num_players, seed=seed), NeverStacks(num_players, seed=seed + 1),
                                 num_players, rounds=rounds, seed=seed, stacking="both"),
        "swap weight 0": win_rate(HeuristicAgent(num_players, seed=seed),
                                  HeuristicAgent(num_players, seed=seed + 1, weights={"swap": 0.0}),
                                  num_players, rounds=rounds, seed=seed, seven_zero=True),
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4000, help="rounds per figure (self-play and skill each)")
    parser.add_argument("--players", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", nargs="+", choices=list(RULES), default=list(RULES))
    parser.add_argument("--ablations", action="store_true", help="measure the heuristic's house-rule play instead")
    args = parser.parse_args(argv)
    if args.ablations:
        for players in args.players:
            for opponent, result in ablations(players, args.rounds, args.seed).items():
                print(f"{players} players, heuristic vs heuristic ({opponent}): {result['win_rate']:.1%} "
                      f"[{result['low']:.1%}, {result['high']:.1%}] (fair {1 / players:.1%})", flush=True)
        return
    start, truncated = time.perf_counter(), 0
    print(table_header(), flush=True)
    for players in args.players:
        for name in args.rules:
            result = study(RULES[name], players, args.rounds, args.seed)
            truncated += result["truncated"]
            print(table_row(name, players, result), flush=True)
    print(f"\n{args.rounds} rounds per figure, seed {args.seed}, {truncated} truncated, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
