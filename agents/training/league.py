"""A league of opponents for training: a mixture drawn afresh for every game (every seat, 3+ players).

Members, in groups:

- ``"latest"``: the learner's current weights (self-play with shared
  parameters; it follows training as it goes), if given;
- ``"snapshots"``: frozen copies of the learner, added while it improves;
- rule-based players by name (``"heuristic"``, ``"random-play"`` by default,
  built with ``agents.load``); ``held_out`` keeps one of them out of the
  league, so the learner's results against it measure play it never trained
  against.

``DEFAULT_WEIGHTS`` gives each group its share of the opponent seats; a
group's share is split equally among its members (the snapshots), and the
share of a group without members (no snapshot yet, no latest, the held-out
player) goes to the others in proportion to theirs. Every new episode in a game
slot draws, independently for each seat, which member plays it
(``League.__call__``, the assignment function of ``SeatBatch.set_opponents``),
so one batch mixes all members and each is called once per step on its rows.

Snapshots: ``consider_snapshot`` plays the learner against every frozen
member with the unbiased ``agents.evaluation.rounds.win_rate`` and adds a snapshot
when it beats the strongest of them (the one it scores worst against) by a
margin: a win rate of at least a fair share (1 / num_players) plus
``margin``, with the 95% interval's lower bound above the fair share too.

>>> league = League(num_players=2, latest=live_agent, seed=0)
>>> league.install(env)                      # env.set_opponents(league.policies, league)
>>> league.consider_snapshot(learner, make_snapshot=freeze_learner, rounds=400, seed=1)

A run at a mixture of tables (train.py --tables, --opponent league) has a league at each table
(``specialist_league``): the heuristic, the learner's snapshots and the shipped specialists made for that
table, with ``SPECIALIST_WEIGHTS``; a snapshot, taken at each of the run's evaluations, is added at every
table. The run's tables (agents/training/tables.py) keep a run's leagues, one a table, and save and load
their snapshots as agent files in OUT/league/.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from agents import players
from agents.evaluation.rounds import win_rate
from hpuno_env._checks import check_positive_int

# Each group's share of the opponent seats (normalised over the groups that have members).
# The heuristic is the bar to beat, so it gets the largest fixed share; snapshots keep
# the learner from forgetting how to beat its own past strategies; the latest weights
# give self-play pressure; random-play keeps it sharp against loose play.
DEFAULT_WEIGHTS = {"latest": 0.25, "snapshots": 0.35, "heuristic": 0.3, "random-play": 0.1}
DEFAULT_RULE_BASED = ("heuristic", "random-play")
# A table's league in a run at a mixture of tables: the heuristic, the bar every table is measured by, keeps the
# largest share; snapshots keep the learner from forgetting how to beat its own past play; the specialists (split
# among them) bring the strongest play known at their tables.
SPECIALIST_WEIGHTS = {"heuristic": 0.5, "snapshots": 0.3, "specialists": 0.2}
SPECIALIST_MAX_SNAPSHOTS = 8


def check_weights(weights: dict) -> None:
    """ValueError unless every weight of a mixture is a finite non-negative number and some is positive."""
    for name, weight in weights.items():
        if not isinstance(weight, (int, float)) or isinstance(weight, bool) or not np.isfinite(weight) or weight < 0:
            raise ValueError(f"the weight of {name!r} must be a non-negative number, got {weight!r}")
    if sum(weights.values()) <= 0:
        raise ValueError(f"the weights give nobody a game: {weights}")


@dataclass
class Member:
    """One opponent of the league: its name, its group (a key of the weights) and its policy."""

    name: str
    group: str
    policy: object


class League:
    """Opponents for one learner, drawn per game and seat with documented weights.

    Args:
        num_players: seats per game.
        latest: a policy that plays with the learner's current weights, or None.
        rule_based: names for ``agents.load`` of the rule-based members.
        held_out: a rule-based player's name (``agents.BUILT_IN``) kept out of the league even if
            ``rule_based`` names it: evaluate against it for results on play never trained against.
        weights: group -> share of the opponent seats: ``"latest"``, ``"snapshots"`` and
            one entry per rule-based name (missing entries count 0). Default ``DEFAULT_WEIGHTS``.
        max_snapshots: the oldest snapshot leaves when one more would exceed this.
        seed: seeds the draws and the rule-based players.
    """

    def __init__(self, num_players: int, latest=None, rule_based=DEFAULT_RULE_BASED, held_out: str | None = None,
                 weights: dict | None = None, max_snapshots: int = 8, seed: int | None = None):
        rule_based = tuple(rule_based)
        unknown = [] if weights is None else sorted(set(weights) - {"latest", "snapshots", *rule_based})
        weights = dict(DEFAULT_WEIGHTS if weights is None else weights)
        if unknown:  # a typo would silently give that player no seat
            raise ValueError(f"weights has groups {unknown} that are not 'latest', 'snapshots' or one of rule_based {list(rule_based)}")
        check_weights(weights)
        if held_out is not None and held_out not in players.BUILT_IN:
            raise ValueError(f"held_out must be a rule-based player's name {sorted(players.BUILT_IN)} or None, got {held_out!r}")
        max_snapshots = check_positive_int(max_snapshots, "max_snapshots")
        self.num_players = num_players
        self.weights = weights
        self.held_out = held_out
        self.max_snapshots = max_snapshots
        self.rng = np.random.default_rng(seed)
        self.members: list[Member] = []
        if latest is not None:
            self.members.append(Member("latest", "latest", latest))
        streams = np.random.SeedSequence(seed).generate_state(len(rule_based))
        for name, stream in zip(rule_based, streams):
            if name != held_out:
                policy = players.load(name, num_players=num_players, seed=None if seed is None else int(stream))
                self.members.append(Member(name, name, policy))
        self.snapshots_added = 0
        self._envs = []
        self.shares()  # refuse a league whose weights give nobody a seat, now rather than at the first draw

    # ------------------------------------------------------------ the mixture

    @property
    def names(self) -> list[str]:
        return [member.name for member in self.members]

    @property
    def policies(self) -> list:
        return [member.policy for member in self.members]

    def shares(self) -> np.ndarray:
        """Each member's probability of taking an opponent seat, in ``members`` order."""
        group_sizes: dict[str, int] = {}
        for member in self.members:
            group_sizes[member.group] = group_sizes.get(member.group, 0) + 1
        shares = np.array([self.weights.get(m.group, 0.0) / group_sizes[m.group] for m in self.members], np.float64)
        if shares.sum() <= 0:
            raise ValueError(f"weights {self.weights} give no member of the league {self.names} a share")
        return shares / shares.sum()

    def __call__(self, games: np.ndarray) -> np.ndarray:
        """Draw the member for every seat of these game slots: (len(games), num_players) indices."""
        return self.rng.choice(len(self.members), size=(len(games), self.num_players), p=self.shares())

    def seed(self, seed: int | None) -> None:
        """Restart the draws' random stream (``SeatBatch.reset(seed)`` calls it)."""
        self.rng = np.random.default_rng(seed)

    def install(self, env) -> None:
        """Make the league play the opponents of ``env`` (a vector env or ``SeatBatch``),
        and again whenever its members change."""
        env.set_opponents(self.policies, self)
        self._envs.append(env)

    # ------------------------------------------------------------ snapshots

    def add_snapshot(self, policy, name: str | None = None) -> Member:
        """Add a frozen opponent; the oldest snapshot leaves beyond ``max_snapshots``."""
        if not callable(getattr(policy, "act", None)):
            raise ValueError(f"policy must have an act(observations, action_masks) method, got {type(policy).__name__}")
        self.snapshots_added += 1
        member = Member(name or f"snapshot-{self.snapshots_added}", "snapshots", policy)
        snapshots = [m for m in self.members if m.group == "snapshots"]
        if len(snapshots) >= self.max_snapshots:
            self.members.remove(snapshots[0])
        self.members.append(member)
        for env in self._envs:
            env.set_opponents(self.policies, self)
        return member

    def frozen_members(self) -> list[Member]:
        """Members that do not change as the learner trains: rule-based players and snapshots."""
        return [member for member in self.members if member.group != "latest"]

    def consider_snapshot(self, learner, make_snapshot: Callable[[str], object], rounds: int = 400, seed: int | None = 0,
                          margin: float = 0.05, **rule_options) -> dict:
        """Measure ``learner`` against every frozen member; if it beats the strongest by ``margin``,
        add ``make_snapshot(name)`` (a frozen copy of the learner, e.g. saved under that name).

        Returns ``{"results": {name: win_rate dict}, "strongest": name, "added": name or None}``.
        """
        fair = 1.0 / self.num_players
        results = {
            member.name: win_rate(learner, member.policy, self.num_players, rounds=rounds, seed=seed, **rule_options)
            for member in self.frozen_members()
        }
        strongest = min(results, key=lambda name: results[name]["win_rate"]) if results else None
        beaten = strongest is None or (results[strongest]["win_rate"] >= fair + margin and results[strongest]["low"] > fair)
        added = None
        if beaten:
            name = f"snapshot-{self.snapshots_added + 1}"
            added = self.add_snapshot(make_snapshot(name), name).name
        return {"results": results, "strongest": strongest, "added": added}


def specialist_league(num_players: int, rules: dict, seed: int) -> League:
    """A table's league of the heuristic, the learner's snapshots (none yet) and the shipped specialists made for
    games of ``num_players`` under ``rules``, with ``SPECIALIST_WEIGHTS`` (a group without members gives its share to
    the others)."""
    from agents.players.trained import shipped_for  # torch: only for a league that is built, not for a check of --opponent

    specialists = shipped_for(num_players, rules)
    weights = {"heuristic": SPECIALIST_WEIGHTS["heuristic"], "snapshots": SPECIALIST_WEIGHTS["snapshots"],
               **{name: SPECIALIST_WEIGHTS["specialists"] / len(specialists) for name in specialists}}
    return League(num_players, rule_based=("heuristic", *specialists), weights=weights,
                  max_snapshots=SPECIALIST_MAX_SNAPSHOTS, seed=seed)


class Mixture:
    """Fixed opponents drawn per game: every new episode in a game slot draws one of ``names``
    (with probability proportional to its weight) for all the opponent seats of that game.

    Unlike ``League`` (a draw per seat), each game is a table of one kind, the way players are
    evaluated (``agents.evaluation.rounds``), e.g. ``Mixture({"heuristic": 3, "random-play": 1}, 4)``
    trains against three heuristics in three games of four and three random-play in the fourth.

    >>> mixture = Mixture({"heuristic": 0.8, "random-play": 0.2}, num_players=4, seed=0)
    >>> mixture.install(env)                     # env.set_opponents(mixture.policies, mixture)
    """

    def __init__(self, weights: dict, num_players: int, seed: int | None = None, rules_options: dict | None = None):
        """``rules_options``: the rules the members play under (a trained one made under others warns)."""
        if not weights:
            raise ValueError("weights must name at least one player")
        check_weights(weights)
        total = float(sum(weights.values()))
        self.names = list(weights)
        self.shares = np.array([weights[name] / total for name in self.names])
        streams = np.random.SeedSequence(seed).generate_state(len(self.names))
        self.policies = [players.load(name, num_players=num_players, seed=None if seed is None else int(stream),
                                      rules_options=rules_options)
                         for name, stream in zip(self.names, streams)]
        self.rng = np.random.default_rng(seed)

    def __call__(self, games: np.ndarray) -> np.ndarray:
        """One member index per game slot: (len(games),)."""
        return self.rng.choice(len(self.names), size=len(games), p=self.shares)

    def seed(self, seed: int | None) -> None:
        """Restart the draws' random stream (``SeatBatch.reset(seed)`` calls it)."""
        self.rng = np.random.default_rng(seed)

    def install(self, env) -> None:
        """Make the mixture play the opponents of ``env`` (a vector env or ``SeatBatch``)."""
        env.set_opponents(self.policies, self)
