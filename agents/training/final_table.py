"""The table a training run ends with: this run's agent, the shipped champions for these games and the heuristic,
each against the fixed players (and the player held out of training), over the same fixed rounds."""

from __future__ import annotations

from tqdm import tqdm

from agents import players
from agents.evaluation.rounds import win_rate
from agents.players.trained import TrainedAgent, shipped_for
from agents.training.options import FIXED_OPPONENTS, RunOptions


def final_table(rounds: int, hold_out: str, run: RunOptions, learner: TrainedAgent) -> dict:
    """{row: {column: win_rate result}} over ``rounds`` rounds a cell, printed: rows this run, the champions, the
    heuristic; columns the fixed players and ``hold_out`` (--hold-out)."""
    held_out = None if hold_out == "none" else hold_out
    rows = {"this run": learner}
    for name in shipped_for(run.players, run.rules):  # the champions made for these games
        rows[name] = players.load(name, num_players=run.players, seed=run.seed, rules_options=run.rules)
    rows["heuristic"] = players.load("heuristic", num_players=run.players, seed=run.seed + 3)
    columns = [*FIXED_OPPONENTS, *([held_out] if held_out and held_out not in FIXED_OPPONENTS else [])]
    opponents = {name: players.load(name, num_players=run.players, seed=run.seed + 7) for name in columns}
    table = evaluation_table(rows, opponents, run.players, rounds, run.seed + 3000, run.rules, progress=run.progress)
    print(f"\nwin rate over {rounds} rounds per cell, {run.players} players, seats rotated"
          + (f" ({held_out} was held out of training)" if held_out else "") + ":")
    print(format_table(table, run.players))
    return table


class RoundsDone:
    """A ``play_rounds`` observer that keeps a progress bar at the rounds finished: those followed by another in their
    game slot (``after_reset``), and those whose slot then has none left to play (action -1: ``after_step``)."""

    def __init__(self, bar: tqdm):
        self.bar, self.start, self.followed = bar, bar.n, 0

    def after_reset(self, games) -> None:
        if games is not None:
            self.followed += len(games)

    def after_step(self, actions) -> None:
        done = self.start + self.followed + int((actions < 0).sum())
        if done > self.bar.n:
            self.bar.update(done - self.bar.n)


def evaluation_table(players: dict, opponents: dict, num_players: int, rounds: int, seed: int, rules: dict,
                     progress: bool = False) -> dict:
    """{player: {opponent: win_rate result}}: each player in a rotating seat, the opponent in all the others; with
    ``progress``, a bar of the rounds played (every round ends by the rules' ``max_turns`` decisions at the latest,
    each cell's ``rounds`` at most agents.training.options.MAX_EVALUATION_ROUNDS)."""
    table = {}
    with tqdm(total=len(players) * len(opponents) * rounds, desc="final evaluation", unit="round", unit_scale=True,
              dynamic_ncols=True, disable=not progress) as bar:
        for row, player in players.items():
            table[row] = {}
            for column, opponent in opponents.items():
                bar.set_postfix_str(f"{row} vs {column}")
                done = bar.n
                table[row][column] = win_rate(player, opponent, num_players, rounds=rounds, seed=seed,
                                              observers=lambda engine: [RoundsDone(bar)], **rules)
                bar.update(done + rounds - bar.n)  # the last step's rounds, which no step follows
    return table


def format_table(table: dict, num_players: int) -> str:
    columns = list(next(iter(table.values())))
    width = max(len(row) for row in table) + 2
    lines = [f"{'':{width}s}" + "".join(f"{'vs ' + column:>22s}" for column in columns)]
    for row, results in table.items():
        cells = "".join(f"{r['win_rate']:7.1%} [{r['low']:5.1%}-{r['high']:5.1%}]".rjust(22) for r in results.values())
        lines.append(f"{row:{width}s}{cells}")
    lines.append(f"(win rate [95% interval]; a fair share is {1 / num_players:.0%})")
    return "\n".join(lines)
