"""How much can one step of search over the heuristic gain? The ceiling of the search player's kind of search.

    python benchmarks/bench_search_ceiling.py --players 2 --rounds 300
    python benchmarks/bench_search_ceiling.py --players 4 --rounds 200
    python benchmarks/bench_search_ceiling.py --players 2 --rounds 0 --play 600
    python benchmarks/bench_search_ceiling.py --players 2 --rounds 0 --play 2000 --kinds plain belief
    python benchmarks/bench_search_ceiling.py --players 2 --rounds 0 --play 1000 --blueprint ppo_2p --correct-gate

The search player values each legal action by playing worlds out with the heuristic and leaves the heuristic's
action for a clearly better one: one step of policy improvement over the heuristic, its gain at most what the
best action at each decision adds when every later decision is the heuristic's. This script measures that gain
directly, on the heuristic's own games (every seat the heuristic, ``--rounds`` rounds to the end):

At every decision with more than one legal action, each candidate is valued by heuristic rollouts in worlds of
the kinds (``--kinds``), ``--worlds`` each, and each kind picks an action as the search player does (the most wins, kept only
if its mean paired difference against the heuristic's action exceeds ``--gate`` standard errors:
``agents.players.search.gated_choice``):

- ``true hands``: the game as it is, only the draw pile's order shuffled and the random streams fresh: a searcher
  that sees every hand (no searcher from a seat's view can have better worlds);
- ``plain``: ``VectorEngine.determinize`` from the deciding seat, as the search player deals them;
- ``evidence``: the same with ``evidence=True``;
- ``belief``: ``determinize`` with each seat's cards drawn by the shipped belief's odds of each kind
  (``agents.players.search.world_weights``), as ``agents.load("search", belief="shipped")`` deals them.

Each pick is then valued against the heuristic's action in an independent set of ``--eval-worlds`` true-hands
worlds (so the pick's own luck does not count). Summed over a seat's decisions in a round, that is, to first
order, the win rate one step of search with those worlds adds to a seat over the heuristic, with a 95% interval
over the rounds. ``plain`` should agree with the search player's duplicate measurement (docs/research.md);
``true hands`` bounds what better worlds could add to this kind of search.

``--play`` with ``--blueprint NAME`` searches over another player (``ppo_2p``: the base action is its, and it sits
in every other seat and in the reference seat; the rollouts stay the heuristic's), as ``agents.load("search")``
does over the table's shipped agent; ``--correct-gate`` raises the gate with the number of candidates as it does.
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import time

import numpy as np

import agents
from agents.belief import load_belief
from agents.players.search import candidate_wins, corrected_gate, gated_choice, world_weights
from hpuno_env import VectorEngine
from hpuno_env.worlds import generator_words

KINDS = ("true hands", "plain", "evidence", "belief")


class Valuer:
    """Every candidate of a position played out by the heuristic in the same worlds (one engine of slots, reused)."""

    def __init__(self, num_players: int, worlds: int, max_candidates: int = 80, belief: str | None = None):
        self.worlds = worlds
        self.belief = load_belief(num_players, None, belief)  # None: the table's shipped belief
        self.engine = VectorEngine(worlds * max_candidates, num_players, auto_reset=False)
        self.engine.leave_idle(np.arange(self.engine.num_games))

    def wins(self, game: VectorEngine, index: int, candidates: np.ndarray, kind: str, seed: int) -> np.ndarray:
        """(candidates, worlds) 1.0 where the deciding seat won the world after playing that candidate."""
        engine, worlds = self.engine, self.worlds
        first = np.arange(worlds)
        if kind == "true hands":
            engine.copy_games_into(first, game, np.full(worlds, index))
            size = int(game.state.draw_count[index])
            shuffle = np.random.default_rng(seed).random((worlds, size)).argsort(axis=1)
            engine.state.draw_pile[first, :size] = np.take_along_axis(engine.state.draw_pile[first, :size], shuffle, axis=1)
            engine.state.rng[first] = generator_words(seed, worlds)
        else:
            weights = world_weights(self.belief, game.observe()[index]) if kind == "belief" else None
            engine.determinize_into(first, game, index, viewer=int(game.state.current_player[index]), seed=seed,
                                    evidence=kind == "evidence", weights=weights)
        return candidate_wins(engine, candidates, worlds, heuristic_play_out)


def heuristic_play_out(engine: VectorEngine, games: int) -> np.ndarray:
    """The winning seat of each of the first ``games`` slots, played to the end by the compiled heuristic."""
    winners, _ = engine.rollout("heuristic", games=np.arange(games))
    return winners


def measure(num_players: int, rounds: int, worlds: int, eval_worlds: int, gate: float, seed: int,
            kinds: tuple[str, ...] = KINDS) -> dict:
    """Per kind: the gain per seat and round (mean, 95% interval), and the share of decisions it changed."""
    game = VectorEngine(rounds, num_players, seed=seed, auto_reset=False)
    game.reset()
    heuristic = agents.load("heuristic", num_players, seed=seed)
    valuer, judge = Valuer(num_players, worlds), Valuer(num_players, eval_worlds)
    gains = {kind: np.zeros(rounds) for kind in kinds}
    changed = dict.fromkeys(kinds, 0)
    decisions = 0
    seeds = np.random.SeedSequence(seed).generate_state(8, np.uint32)
    while True:
        masks = game.legal_mask()
        playing = masks.any(axis=1)
        if not playing.any():
            break
        actions = np.full(rounds, -1, np.int64)
        actions[playing] = heuristic.act(game.observe()[playing], masks[playing])
        for index in np.flatnonzero(masks.sum(axis=1) > 1):
            candidates = np.flatnonzero(masks[index])
            base = int(np.flatnonzero(candidates == actions[index])[0])
            decisions += 1
            position_seed = (int(seeds[0]) + 1_000_003 * decisions) % 2**31
            truth = judge.wins(game, index, candidates, "true hands", position_seed + 7)
            for kind in kinds:
                chosen = gated_choice(valuer.wins(game, index, candidates, kind, position_seed), base, gate)[0]
                if chosen != base:
                    changed[kind] += 1
                    gains[kind][index] += (truth[chosen] - truth[base]).mean()
        game.step(actions, partial=True)
    report = {"decisions_per_seat_and_round": decisions / (rounds * num_players)}
    for kind in kinds:
        per_seat = gains[kind] / num_players  # a round's gain for one seat, averaged over its seats
        half = 1.96 * per_seat.std(ddof=1) / math.sqrt(rounds)
        report[kind] = {"gain": float(per_seat.mean()), "low": float(per_seat.mean() - half), "high": float(per_seat.mean() + half),
                        "changed": changed[kind] / max(decisions, 1)}
    return report


def played_gain(num_players: int, deals: int, worlds: int, gate: float, seed: int, kind: str,
                blueprint: str = "heuristic", correct_gate: bool = False, belief: str | None = None) -> dict:
    """The same searcher in real play: each deal played twice from one state, once with it in the rotating seat
    and once with the ``blueprint`` there, every other seat the blueprint; the searcher leaves the blueprint's
    action past the gate (``correct_gate``: corrected for the number of candidates, as ``agents.load("search")``
    does); ``belief``: the belief file the ``belief`` kind deals from (None: the shipped one). The mean paired
    difference per deal."""
    game = VectorEngine(2 * deals, num_players, seed=seed, auto_reset=False)
    game.reset()
    game.copy_games_into(np.arange(1, 2 * deals, 2), game, np.arange(0, 2 * deals, 2))
    seat = np.repeat(np.arange(deals) % num_players, 2)
    searching = np.arange(2 * deals) % 2 == 0
    policy = agents.load(blueprint, num_players, seed=seed)
    valuer = Valuer(num_players, worlds, belief=belief)
    winners = np.full(2 * deals, -1)
    decisions = changed = 0
    while True:
        masks = game.legal_mask()
        playing = masks.any(axis=1)
        if not playing.any():
            break
        actions = np.full(2 * deals, -1, np.int64)
        actions[playing] = policy.act(game.observe()[playing], masks[playing])
        for index in np.flatnonzero(searching & (masks.sum(axis=1) > 1) & (game.state.current_player == seat)):
            candidates = np.flatnonzero(masks[index])
            base = int(np.flatnonzero(candidates == actions[index])[0])
            decisions += 1
            level = corrected_gate(gate, len(candidates)) if correct_gate else gate
            chosen = gated_choice(valuer.wins(game, index, candidates, kind, (seed + 1_000_003 * decisions) % 2**31), base, level)[0]
            changed += chosen != base
            actions[index] = candidates[chosen]
        _, terminated, _ = game.step(actions, partial=True)
        winners[terminated] = game.state.turn_player[terminated]
    won = (winners == seat).astype(np.float64)
    paired = won[0::2] - won[1::2]
    half = 1.96 * paired.std(ddof=1) / math.sqrt(deals)
    return {"gain": float(paired.mean()), "low": float(paired.mean() - half), "high": float(paired.mean() + half),
            "changed": changed / max(decisions, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=300, help="heuristic rounds whose decisions are valued (0: none)")
    parser.add_argument("--worlds", type=int, default=64, help="worlds of each kind that pick the action")
    parser.add_argument("--eval-worlds", type=int, default=256, help="true-hands worlds that value each pick")
    parser.add_argument("--gate", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS), metavar="KIND",
                        help=f"the kinds of worlds compared (default all: {', '.join(KINDS)}; quote 'true hands')")
    parser.add_argument("--play", type=int, default=0, metavar="DEALS",
                        help="also play DEALS deals in duplicate with each searcher in one seat (played_gain)")
    parser.add_argument("--blueprint", default="heuristic",
                        help="with --play: the player searched over and seated everywhere else (an agents.load name)")
    parser.add_argument("--correct-gate", action="store_true",
                        help="with --play: the gate grows with the number of candidates (SearchAgent's correct_gate)")
    parser.add_argument("--belief", default=None, metavar="FILE",
                        help="with --play: the belief file the belief kind deals from (default: the table's shipped one)")
    args = parser.parse_args(argv)
    if args.play:
        print(f"# played in duplicate over {args.blueprint}, {args.players} players, {args.play} deals, {args.worlds} worlds, "
              f"gate {args.gate}{' corrected' if args.correct_gate else ''}, belief {args.belief or 'shipped'}, seed {args.seed}; {datetime.date.today()}, {platform.machine()}")
        print(f"| worlds that pick | searcher − {args.blueprint}, points [95%] | decisions changed |")
        print("|---|---|---|")
        for kind in args.kinds:
            row = played_gain(args.players, args.play, args.worlds, args.gate, args.seed, kind, args.blueprint, args.correct_gate, args.belief)
            print(f"| {kind} | {100 * row['gain']:+.1f} [{100 * row['low']:+.1f}, {100 * row['high']:+.1f}] | {row['changed']:.1%} |",
                  flush=True)
    if not args.rounds:
        return 0
    start = time.perf_counter()
    report = measure(args.players, args.rounds, args.worlds, args.eval_worlds, args.gate, args.seed, tuple(args.kinds))
    print(f"# one step of search over the heuristic, {args.players} players, {args.rounds} heuristic rounds, {args.worlds} worlds "
          f"to pick, {args.eval_worlds} true-hands worlds to value, gate {args.gate}, seed {args.seed}; "
          f"{report['decisions_per_seat_and_round']:.1f} decisions with a choice per seat and round; "
          f"{time.perf_counter() - start:.0f} s; {datetime.date.today()}, {platform.machine()}")
    print("| worlds that pick | gain per seat and round, points [95%] | decisions changed |")
    print("|---|---|---|")
    for kind in args.kinds:
        row = report[kind]
        print(f"| {kind} | {100 * row['gain']:+.1f} [{100 * row['low']:+.1f}, {100 * row['high']:+.1f}] | {row['changed']:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
