"""Tournaments: every pairing of a list of agents on the batched engine, ranked and rated.

The reports of a result (the text table, the pictures, the files) are ``agents.evaluation.report``'s, also
reachable here (``tournament.format_report``, ``tournament.write_outputs``, ...).

>>> from agents.evaluation import tournament
>>> result = tournament.run(["heuristic", "random-play"], num_players=2, rounds=2000, seed=0)
>>> print(tournament.format_report(result))

or, from a shell (``--help`` lists every option)::

    hpuno-tournament heuristic random-play ppo_2p --players 2 --rounds 20000 --seed 0 --out runs/t --plot

**Tables.** With K agents and N seats a tournament plays these tables, each
for ``rounds`` rounds (whole matches with ``episode="match"``):

- *pairings*: every agent alone against N-1 copies of each other agent (with
  two seats, A against B and B against A are one table); the lone agent sits
  in seat ``r % N`` in round r (``evaluate.rotating_lineups``);
- *the mixed table* (when K >= 3 and N >= 3: with two agents or two seats
  every table is already a pairing): in round r, seat s is played by agent
  ``(r + s) % K``. With K > N each round seats N agents in list order; with
  K < N the list wraps round the table, so some agents hold two seats. Over
  every K rounds each agent sits in every seat exactly once.

Seats are exactly balanced when ``rounds`` is a multiple of N (pairings) and
of K (the mixed table). Every table is played by ``evaluate.play_rounds``:
a fixed list of rounds, each played to its end (a truncated round counts as
played and won by no one), the first dealer the engine's own draw.

**What is reported.** Per table and agent (``rows``): the rounds it won (any
of its seats won), the 95% Wilson interval, its *fair share* (the win rate an
equally strong agent would have: its seats / N), mean points per seat (the
round's points as ``RoundResults.points`` counts them; with
``episode="match"``, the final match score). Per agent (``ranking``): its
win rate per seat over all tables (wins / seats held; fair share 1/N; when
one agent holds several seats of a round those seats cannot all win, which
makes the Wilson interval slightly conservative), and an openskill rating.

**Ratings.** openskill's Plackett-Luce model, rated from every round that
has a winner: each seat is one player with its agent's rating, the winner
ranked first and the rest tied second. An agent holding several seats takes
the sum of their rating changes (and the product of their variance
factors). The agents do not change during a tournament, so the model runs
with ``tau=0`` (no drift between rounds): the rating converges as rounds
accumulate instead of wandering. Sequential updates depend on the order of
the rounds, so all rounds of all tables are rated in one order shuffled by
``seed``: one seed, one result. The ranking is by ``mu``; ``sigma`` is its
uncertainty (openskill's ``ordinal``, mu - 3 sigma, is given too).

**Records.** ``record=N`` (``--record N``) keeps the game records
(``hpuno_env.records``) of N rounds (matches with ``episode="match"``),
spread evenly over the tables in schedule order (the first ``N % T`` of the
T tables keep one more), each table's its first rounds in list order: with
N = 5 and 3 tables, rounds 0 and 1 of tables 1 and 2 and round 0 of table 3.
Each record names the agent in each seat (``players``) and its table and
round (``tournament``). ``run`` returns them (all held in memory to the
end; ``write_outputs`` saves them as ``records/<table number>-<table
name>-round<r>.json``), or with ``records_dir`` writes each there under that
name as its game ends and returns only their list: the command does this,
so memory stays bounded whatever N and a Ctrl-C keeps the records finished
so far. ``python -m hpuno_env.replay FILE`` replays one. Recording only
watches: the results are the same with or without it.

**Duplicate mode.** ``run_duplicate`` (``--duplicate --opponent NAME``) compares two
agents instead: every deal is played twice, once with each of them alone against
N-1 copies of the opponent, on the same cards and random streams
(``agents.evaluation.duplicate``); the report is the paired difference of their
win rates with its 95% interval.

**Seeds.** Table t is played with the t-th seed of
``numpy.random.SeedSequence(seed)``, in chunks of ``num_envs * 8`` rounds
(each chunk its own seed from the table's), which is what the progress bar
counts. The result depends on ``seed``, ``num_envs`` and the agents, nothing else.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import os
import re
import shlex
import sys
import textwrap
import time
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence

import numpy as np
from openskill.models import PlackettLuce
from tqdm import tqdm

# The engine (hpuno_env.kernel, .records) loads on first use, through the package: a refused command line is
# answered before numba and torch load.
import hpuno_env
from agents._cli import exit_with_error, one_torch_thread, parse_agent_options, parse_rule, parse_rules, warnings_as_lines  # noqa: F401  (parse_rule: part of this module's interface)
from agents.evaluation.duplicate import duplicate_win_rate
from agents.evaluation.report import (  # noqa: F401  (the reports: part of this module's interface)
    OUTPUT_FILES, PICTURE_FILES, claim_outputs, format_duplicate_report, format_report, outputs_problem, partial_summary,
    plot_pairwise, plot_ratings, write_duplicate_outputs, write_outputs,
)
from agents.evaluation.rounds import MAX_SEAT_ROUNDS, check_seat_rounds, play_rounds, rotating_lineups, wilson_interval, winning_seats
from agents.players import available, check_name, load
from hpuno_env import RulesOptions
from hpuno_env._checks import check_int, check_positive_int, check_seed
from hpuno_env._output import program_name
from hpuno_env.options import check_num_players

ROUNDS_PER_SLOT_PER_CHUNK = 8  # a chunk gives each game slot this many rounds, then the progress bar moves
DEFAULT_ENVS = 1024  # game slots stepped together; batches this size keep the per-step Python cost small


@dataclass(frozen=True)
class Seating:
    """One table of a tournament: who sits where in each of its rounds.

    Attributes:
        name: e.g. ``"heuristic vs 3x random-play"`` or ``"mixed"``.
        kind: ``"pairing"`` or ``"mixed"``.
        lineups: (rounds, num_players) int: the agent index in each seat of each round.
    """

    name: str
    kind: str
    lineups: np.ndarray


def schedule(labels: Sequence[str], num_players: int, rounds: int, mixed: bool = True) -> list[Seating]:
    """The tables a tournament of ``labels`` plays (module docstring, "Tables"), in a fixed order."""
    num_agents = len(labels)
    solo_lineups = rotating_lineups(rounds, num_players)  # 0 = the lone agent's seat, 1 = the copies
    tables = []
    for solo in range(num_agents):
        for others in range(num_agents):
            if solo == others or (num_players == 2 and others < solo):
                continue  # with two seats, "B against A" is "A against B" again
            copies = "" if num_players == 2 else f"{num_players - 1}x "
            name = f"{labels[solo]} vs {copies}{labels[others]}"
            tables.append(Seating(name, "pairing", np.where(solo_lineups == 0, solo, others)))
    if mixed and num_agents >= 3 and num_players >= 3:
        round_index = np.arange(rounds)[:, None]
        seat_index = np.arange(num_players)[None, :]
        tables.append(Seating(f"mixed ({num_agents} agents)", "mixed", (round_index + seat_index) % num_agents))
    return tables


# ------------------------------------------------------------ input: agents and rules options (parse_rules: agents._cli)


def load_agents(agents_given, num_players: int, seed: int | None = 0, rules_options: dict | None = None,
                agent_options: Mapping[str, dict] | None = None) -> tuple[list[str], list]:
    """(labels, policies) for ``run``'s ``agents`` argument.

    ``agents_given`` is a sequence of names/paths (each loaded with
    ``agents.load``), or a mapping label -> name, path or policy object (with
    ``act``). A name given twice gets a second label (``heuristic#2``), which
    is how an agent is compared with itself. ``agent_options``: label -> the
    options ``agents.load`` gives that agent (``--option llm:model=NAME``)."""
    agent_options = dict(agent_options or {})
    if isinstance(agents_given, Mapping):
        entries = list(agents_given.items())
    elif isinstance(agents_given, (str, bytes)) or not isinstance(agents_given, Sequence):
        raise TypeError(f"agents must be a list of agent names/paths or a dict label -> name/path/policy, got {agents_given!r}")
    else:
        # A path's label is its file name without the extension.
        entries = [(os.path.splitext(os.path.basename(name))[0] if isinstance(name, str) and os.path.exists(name) else name, name) for name in agents_given]
    if len(entries) < 2:
        raise ValueError(f"a tournament needs at least two agents, got {len(entries)}")
    labels, policies = [], []
    for label, agent in entries:
        if not isinstance(label, str):
            raise TypeError(f"agent labels must be strings, got {label!r}")
        unique, copy = label, 2
        while unique in labels:
            unique, copy = f"{label}#{copy}", copy + 1
        if isinstance(agent, str):
            policy = load(agent, num_players=num_players, seed=seed, rules_options=rules_options, **agent_options.pop(unique, {}))
        elif callable(getattr(agent, "act", None)):
            policy = agent
        else:
            raise TypeError(f"agent {label!r} must be a name, a path or an object with act(observations, masks), got {agent!r}")
        labels.append(unique)
        policies.append(policy)
    if agent_options:
        raise ValueError(f"options given for {sorted(agent_options)}, which name no agent loaded here (agents: {labels})")
    return labels, policies


# ------------------------------------------------------------ playing


class _RecordStream:
    """A ``play_rounds`` observer that records the first ``share`` rounds played in one game slot and hands each
    to ``keep(round, record, won)`` the step it finishes (``round``: its index in the list ``play_rounds`` plays,
    which deals round r to slot r % slots and a slot's rounds in order; ``won``: (num_players,) bool, the winning
    seats). It keeps none itself, so however many rounds are recorded, a slot holds one record at a time."""

    def __init__(self, engine, slot: int, seed: int | None, share: int, keep):
        self.recorder = hpuno_env.records.Recorder(engine, game=slot, seed=seed)  # no max_records: the share is counted here
        self.slot, self.share, self.keep, self.kept = slot, share, keep, 0
        kernel = hpuno_env.kernel
        self.win_event = kernel.EV_MATCH_END if engine.options.episode == "match" else kernel.EV_ROUND_END

    def after_reset(self, games) -> None:
        if self.kept < self.share:
            self.recorder.after_reset(games)

    def after_step(self, actions) -> None:
        if self.kept >= self.share:
            return
        self.recorder.after_step(actions)
        if self.recorder.records:
            engine, record = self.recorder.engine, self.recorder.records.pop()
            won = np.zeros(engine.num_players, bool)
            if record["outcome"] == "terminated":  # a truncated round has no winner, as RoundResults counts it
                won = winning_seats(engine, np.array([self.slot]), self.win_event)[0]
            round_index = self.slot + self.kept * engine.num_games
            self.kept += 1
            self.keep(round_index, record, won)


def _record_streams(wanted: int, seed: int | None, keep, made: list):
    """An ``observers`` callable for ``play_rounds``: a ``_RecordStream`` in each slot that plays one of the first
    ``wanted`` rounds, with its share of them. The streams it makes are appended to ``made``."""
    def make(engine) -> list:
        slots = engine.num_games
        streams = [_RecordStream(engine, slot, seed, len(range(slot, wanted, slots)), keep) for slot in range(min(wanted, slots))]
        made.extend(streams)
        return streams

    return make


def _play_table(table: Seating, policies: list, num_players: int, seed: int | None, num_envs: int, rule_options: dict, advance,
                record: int = 0, keep=None, parts: list | None = None) -> dict:
    """Play one table in chunks (module docstring, "Seeds"); its per-round results as arrays. The records of
    its first ``record`` rounds go to ``keep(round, record, won)`` as each finishes (``won``: the winning seats).
    Each chunk's ``RoundResults`` is appended to ``parts`` (a new list if None) as it finishes, so that after a
    Ctrl-C the caller still has the chunks played (``_played``)."""
    rounds = len(table.lineups)
    chunk = num_envs * ROUNDS_PER_SLOT_PER_CHUNK
    starts = range(0, rounds, chunk)
    chunk_seeds = np.random.SeedSequence(seed).generate_state(len(starts)) if seed is not None else [None] * len(starts)
    parts = [] if parts is None else parts
    for start, chunk_seed in zip(starts, chunk_seeds):
        lineups = table.lineups[start:start + chunk]
        chunk_seed = None if chunk_seed is None else int(chunk_seed)
        wanted, streams = min(max(record - start, 0), len(lineups)), []
        observers = None
        if wanted:
            def keep_in_table(round_index, kept, won, start=start):
                keep(start + round_index, kept, won)
            observers = _record_streams(wanted, chunk_seed, keep_in_table, streams)
        part = play_rounds(policies, lineups, num_players, chunk_seed, num_envs, observers, **rule_options)
        for stream in streams:
            if stream.kept != stream.share:
                raise RuntimeError(f"table {table.name!r}: slot {stream.slot} recorded {stream.kept} games, expected {stream.share}")
        parts.append(part)
        advance(len(lineups))
    return _played(table, parts)


def _played(table: Seating, parts: list) -> dict:
    """A table's per-round results from its chunks played (all of them, or the first ones before a Ctrl-C)."""
    return {
        "lineups": table.lineups[:sum(len(part.won) for part in parts)],
        "won": np.concatenate([part.won for part in parts]),
        "points": np.concatenate([part.points for part in parts]),
        "decisions": np.concatenate([part.decisions for part in parts]),
        "truncated": np.concatenate([part.truncated for part in parts]),
    }


def rate(lineups: np.ndarray, won: np.ndarray, num_agents: int, seed: int | None = 0) -> tuple[np.ndarray, np.ndarray]:
    """openskill Plackett-Luce ratings (mu, sigma per agent) from rounds (module docstring, "Ratings").

    Args:
        lineups: (R, N) agent index per seat; won: (R, N) bool, the winning seat(s).
    Rounds without a winner (truncated) are left out."""
    mu, sigma, _ = _rate_until(lineups, won, num_agents, seed, deadline=None)
    return mu, sigma


def _rate_until(lineups: np.ndarray, won: np.ndarray, num_agents: int, seed: int | None, deadline: float | None
                ) -> tuple[np.ndarray, np.ndarray, int]:
    """``rate``, stopping at ``time.perf_counter()`` ``deadline`` (None: never) with the rounds rated so far in its
    shuffled order; (mu, sigma, rounds rated)."""
    model = PlackettLuce(tau=0.0)
    # Plain Python floats and one reused rating object per seat: openskill's rate() costs ~30 us,
    # and building fresh rating objects (each with a uuid) or numpy scalars per round would double it.
    mu = [float(model.mu)] * num_agents
    sigma = [float(model.sigma)] * num_agents
    seat_ratings = [model.rating() for _ in range(lineups.shape[1])]
    teams = [[rating] for rating in seat_ratings]
    order = np.random.default_rng(seed).permutation(np.flatnonzero(won.any(axis=1)))
    count = 0
    for block in range(0, len(order), RATING_BLOCK):
        if deadline is not None and time.perf_counter() > deadline:
            break
        rounds = order[block:block + RATING_BLOCK]
        for lineup, seats_won in zip(lineups[rounds].tolist(), won[rounds].tolist()):
            for rating, agent in zip(seat_ratings, lineup):
                rating.mu, rating.sigma = mu[agent], sigma[agent]
            updated = model.rate(teams, ranks=[1 if seat_won else 2 for seat_won in seats_won])
            mu_change = dict.fromkeys(lineup, 0.0)
            variance_factor = dict.fromkeys(lineup, 1.0)
            for agent, [rating] in zip(lineup, updated):
                mu_change[agent] += rating.mu - mu[agent]
                variance_factor[agent] *= (rating.sigma / sigma[agent]) ** 2
            for agent in mu_change:
                mu[agent] += mu_change[agent]
                sigma[agent] *= math.sqrt(variance_factor[agent])
        count += len(rounds)
    return np.array(mu), np.array(sigma), count


RATING_BLOCK = 256  # rounds rated between two looks at the deadline (and turned into Python lists at once)


def _seat_counts(lineups: np.ndarray, num_agents: int) -> np.ndarray:
    """(R, K): how many seats each agent holds in each round."""
    return np.stack([(lineups == agent).sum(axis=1) for agent in range(num_agents)], axis=1)


def _agent_wins(lineups: np.ndarray, won: np.ndarray, num_agents: int) -> np.ndarray:
    """(R, K) bool: whether one of the agent's seats won the round."""
    return np.stack([(won & (lineups == agent)).any(axis=1) for agent in range(num_agents)], axis=1)


def _table_rows(table: Seating, played: dict, labels: list[str], num_players: int) -> list[dict]:
    """One row per agent seated at the table (module docstring, "What is reported")."""
    lineups, rounds = played["lineups"], len(played["lineups"])
    seats = _seat_counts(lineups, len(labels))
    wins = _agent_wins(lineups, played["won"], len(labels))
    rows = []
    for agent in np.flatnonzero(seats.sum(axis=0)):
        agent_seats = lineups == agent
        win_count = int(wins[:, agent].sum())
        low, high = wilson_interval(win_count, rounds)
        opponents = sorted({labels[other] for other in np.unique(lineups) if other != agent}, key=labels.index)
        rows.append({
            "table": table.name,
            "kind": table.kind,
            "agent": labels[agent],
            "opponents": " ".join(opponents),
            "seats": float(seats[:, agent].mean()),
            "rounds": rounds,
            "wins": win_count,
            "win_rate": win_count / rounds,
            "low": low,
            "high": high,
            "fair_share": float(seats[:, agent].mean() / num_players),
            "mean_points": float(played["points"][agent_seats].mean()),
            "mean_decisions": float(played["decisions"].mean()),
            "truncated": int(played["truncated"].sum()),
        })
    return rows


def _pairwise(rows: list[dict], labels: list[str], num_players: int) -> dict:
    """Win rate of each agent alone (row) against N-1 copies of another (column), with intervals."""
    size = len(labels)
    matrix = {key: [[None] * size for _ in range(size)] for key in ("win_rate", "low", "high")}
    for row in rows:
        if row["kind"] != "pairing" or row["seats"] != 1:
            continue
        agent, other = labels.index(row["agent"]), labels.index(row["opponents"])
        for key in matrix:
            matrix[key][agent][other] = row[key]
    return {"agents": list(labels), "fair_share": 1 / num_players, **matrix}


def run(
    agents,
    num_players: int = 2,
    rounds: int = 1000,
    seed: int | None = 0,
    num_envs: int = DEFAULT_ENVS,
    mixed: bool = True,
    progress: bool = False,
    record: int = 0,
    records_dir: str | os.PathLike | None = None,
    **rule_options,
) -> dict:
    """Play a tournament (module docstring) and return its results as plain data.

    Args:
        agents: names or paths for ``agents.load`` (e.g. ``["heuristic",
            "random-play", "ppo_2p"]``), or a dict label -> name, path or policy object.
        num_players: seats per game, 2..10.
        rounds: rounds per table (matches with ``episode="match"``).
        seed: seeds the agents, every table and the rating order; None: unseeded.
        num_envs: game slots stepped together.
        mixed: play the mixed table when there is one.
        progress: show a tqdm progress bar (rounds and rounds/s) on stderr.
        record: keep the game records of this many rounds (module docstring,
            "Records"; at most every round played); 0: none.
        records_dir: None: the records are returned (under ``records``), all held
            in memory to the end. A folder: each record is written there (as
            ``hpuno_env.records.save_record`` writes, under its ``file`` name) the
            moment it finishes and only its listing is returned, so memory does
            not grow with ``record`` and a Ctrl-C keeps the records finished so far.
        **rule_options: rules options (``RulesOptions``), e.g. ``uno_penalty=4``.

    Returns a JSON-ready dict (``pandas.DataFrame(result["ranking"])`` makes a frame of a list):

    - ``ranking``: per agent, best first: ``rank``, ``agent``, ``mu``, ``sigma``,
      ``ordinal``, ``seat_rounds``, ``wins``, ``win_rate`` (per seat), ``low``,
      ``high``, ``fair_share`` (1/N), ``mean_points`` (per seat);
    - ``rows``: per table and agent (``_table_rows``: ``table``, ``kind``, ``agent``,
      ``opponents``, ``seats``, ``rounds``, ``wins``, ``win_rate``, ``low``,
      ``high``, ``fair_share``, ``mean_points``, ``mean_decisions``, ``truncated``);
    - ``pairwise``: ``win_rate`` / ``low`` / ``high`` matrices (row agent alone
      against copies of the column agent; None on the diagonal);
    - ``config``: agents, players, rounds, seed, envs, episode unit
      (``"round"`` or ``"match"``), the full rules options and the package version;
    - ``timing``: seconds playing and rating, rounds played and rated (those with a winner), rounds per second;
    - ``records`` (with ``record``): per recorded round, in table order: ``table``,
      ``round`` (its index in the table), ``file`` (the name ``write_outputs``
      gives it), ``players`` (agent per seat), ``winner`` (the winning seat, None
      when no one won), ``record`` (the record, for ``hpuno_env.records.replay``;
      not with ``records_dir``, where the file holds it). After a Ctrl-C they
      are every record finished, those of the interrupted table too.
    """
    plan = _plan(agents, num_players, rounds, seed, num_envs, mixed, record, rule_options)
    results = _Results(records_dir=None if records_dir is None else os.fspath(records_dir))
    started = time.perf_counter()
    playing = None  # (number, table, its chunks played so far) of the table in play
    try:
        with tqdm(total=rounds * len(plan.tables), unit="round", disable=not progress, desc="tournament", dynamic_ncols=True) as bar:
            for number, (table, table_seed, table_records) in enumerate(zip(plan.tables, plan.table_seeds, plan.record_counts), 1):
                bar.set_postfix_str(table.name, refresh=False)
                keep = functools.partial(results.keep_record, number, table, plan)
                playing = (number, table, [])
                played = _play_table(table, plan.policies, plan.num_players, None if table_seed is None else int(table_seed),
                                     plan.num_envs, plan.rule_options, bar.update, table_records, keep, playing[2])
                results.add(number, table, played, plan)
    except KeyboardInterrupt:  # Ctrl-C: the finished tables, and the chunks played of the one cut short, are results too
        raise _interrupted(plan, results, playing, time.perf_counter() - started) from None
    return _summary(plan, results, time.perf_counter() - started)


RATING_SECONDS_AFTER_CTRL_C = 0.5  # a partial result's rating stops here: the exit must not wait on ~30 us a round


def _interrupted(plan: _Plan, results: _Results, playing: tuple | None, playing_seconds: float) -> TournamentInterrupted:
    """Ctrl-C's ``TournamentInterrupted``: the result of the tables finished and of the chunks played of the table
    cut short, rated for at most ``RATING_SECONDS_AFTER_CTRL_C``."""
    finished, scheduled = len(results.tables), len(plan.tables)
    partial = {"tables_finished": finished, "tables_scheduled": scheduled}
    if playing is not None and playing[0] > finished and playing[2]:
        number, table, parts = playing
        played = _played(table, parts)
        partial["cut_table"] = {"table": table.name, "rounds_played": len(played["lineups"]), "rounds_scheduled": len(table.lineups)}
        results.add(number, dataclasses.replace(table, lineups=played["lineups"]), played, plan)
    if not results.tables:
        return TournamentInterrupted(None, finished, scheduled)
    result = _summary(plan, results, playing_seconds, time.perf_counter() + RATING_SECONDS_AFTER_CTRL_C)
    timing = result["timing"]
    if timing["rated_rounds"] < timing["rounds"] - timing["truncated"]:
        partial["rated_rounds"] = timing["rated_rounds"]
    result["partial"] = partial
    return TournamentInterrupted(result, finished, scheduled)


class TournamentInterrupted(KeyboardInterrupt):
    """Ctrl-C during ``run``: ``result`` is what was played (a result as ``run`` returns, with ``result["partial"]``
    = {"tables_finished", "tables_scheduled"}, plus ``"cut_table"`` = {"table", "rounds_played",
    "rounds_scheduled"} when the chunks played of the table cut short are in it, and ``"rated_rounds"`` when the
    rating stopped before the last round), or None if not one chunk of rounds had finished."""

    def __init__(self, result: dict | None, finished: int, scheduled: int):
        super().__init__(f"interrupted after {finished} of {scheduled} tables")
        self.result = result


@dataclass(frozen=True)
class _Plan:
    """What ``run`` plays: its checked arguments, the agents, and the tables with their seeds and records to keep."""

    labels: list[str]
    policies: list
    num_players: int
    rounds: int
    seed: int | None
    num_envs: int
    rules: RulesOptions
    rule_options: dict
    record: int
    tables: list[Seating]
    table_seeds: list  # one per table, then the rating order's (None when unseeded)
    record_counts: list[int]

    @property
    def unit(self) -> str:
        return "match" if self.rules.episode == "match" else "round"


def _plan(agents, num_players, rounds, seed, num_envs, mixed, record, rule_options) -> _Plan:
    """``run``'s arguments checked (before any game is played), its agents loaded and its tables scheduled."""
    num_players = check_num_players(num_players)
    rounds = check_positive_int(rounds, "rounds")
    num_envs = check_positive_int(num_envs, "num_envs")
    seed = check_seed(seed)
    record = check_int(record, "record (rounds to record)", low=0)
    rules = RulesOptions.from_kwargs(**rule_options)
    labels, policies = load_agents(agents, num_players, seed, rule_options)
    check_size(len(labels), num_players, rounds, mixed)
    tables = schedule(labels, num_players, rounds, mixed)
    record_counts = _spread(min(record, rounds * len(tables)), len(tables))
    table_seeds = np.random.SeedSequence(seed).generate_state(len(tables) + 1) if seed is not None else [None] * (len(tables) + 1)
    return _Plan(labels, policies, num_players, rounds, seed, num_envs, rules, rule_options, record, tables, list(table_seeds),
                 record_counts)


@dataclass
class _Results:
    """The tables played so far and what they gave, gathered table by table for ``_summary``."""

    tables: list[Seating] = field(default_factory=list)
    rows: list[dict] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    records_dir: str | None = None  # None: the records are kept in ``records``; else written here as they finish
    lineups: list[np.ndarray] = field(default_factory=list)
    won: list[np.ndarray] = field(default_factory=list)
    points: list[np.ndarray] = field(default_factory=list)
    truncated: list[np.ndarray] = field(default_factory=list)

    def add(self, number: int, table: Seating, played: dict, plan: _Plan) -> None:
        """Seating ``number`` (from 1), as ``_play_table`` played it."""
        rows = _table_rows(table, played, plan.labels, plan.num_players)  # the slow part, before anything is kept
        self.rows.extend(rows)
        self.lineups.append(played["lineups"])
        self.won.append(played["won"])
        self.points.append(played["points"])
        self.truncated.append(played["truncated"])
        self.tables.append(table)  # last: a Ctrl-C in between leaves the table unfinished

    def keep_record(self, number: int, table: Seating, plan: _Plan, round_index: int, record: dict, won: np.ndarray) -> None:
        """The record of round ``round_index`` of table ``number`` (from 1), just finished: listed in ``records``,
        and written to ``records_dir`` (then not kept) when there is one."""
        entry = _record_entry(number, table, round_index, record, won, plan.labels, plan.unit)
        if self.records_dir is not None:
            hpuno_env.records.save_record(entry.pop("record"), os.path.join(self.records_dir, entry["file"]))
        self.records.append(entry)


def _summary(plan: _Plan, results: _Results, playing_seconds: float, rating_deadline: float | None = None) -> dict:
    """``run``'s result from the tables played (all of them, or what was played before a Ctrl-C), rated until
    ``rating_deadline`` (``time.perf_counter()``; None: every round)."""
    lineups, won = np.concatenate(results.lineups), np.concatenate(results.won)
    started = time.perf_counter()
    rating_seed = None if plan.table_seeds[-1] is None else int(plan.table_seeds[-1])
    mu, sigma, rated = _rate_until(lineups, won, len(plan.labels), rating_seed, rating_deadline)
    rating_seconds = time.perf_counter() - started
    played_rounds = len(lineups)
    return {
        "ranking": _ranking(plan, lineups, won, np.concatenate(results.points), mu, sigma),
        "rows": results.rows,
        "pairwise": _pairwise(results.rows, plan.labels, plan.num_players),
        "tables": [{"name": table.name, "kind": table.kind, "rounds": len(table.lineups)} for table in results.tables],
        "config": {
            "agents": plan.labels,
            "num_players": plan.num_players,
            "rounds_per_table": plan.rounds,
            "seed": plan.seed,
            "num_envs": plan.num_envs,
            "unit": plan.unit,
            "rules": plan.rules.as_dict(),
            "version": hpuno_env.__version__,
        },
        "timing": {
            "playing_seconds": playing_seconds,
            "rating_seconds": rating_seconds,
            "rounds": played_rounds,
            "rated_rounds": rated,
            "truncated": int(np.concatenate(results.truncated).sum()),
            "rounds_per_second": played_rounds / playing_seconds if playing_seconds > 0 else math.inf,
        },
        **({"records": _in_table_order(results.records, plan.tables)} if plan.record else {}),
    }


def _ranking(plan: _Plan, lineups: np.ndarray, won: np.ndarray, points: np.ndarray, mu: np.ndarray, sigma: np.ndarray) -> list[dict]:
    """Per agent, best (highest mu) first: its rank, rating, and wins per seat held (module docstring, "What is reported")."""
    seats = _seat_counts(lineups, len(plan.labels))
    wins = _agent_wins(lineups, won, len(plan.labels))
    ranking = []
    for agent in range(len(plan.labels)):
        seat_rounds, win_count = int(seats[:, agent].sum()), int(wins[:, agent].sum())
        if not seat_rounds:  # its tables were not reached before a Ctrl-C
            continue
        low, high = wilson_interval(win_count, seat_rounds)
        ranking.append({
            "agent": plan.labels[agent],
            "mu": float(mu[agent]),
            "sigma": float(sigma[agent]),
            "ordinal": float(mu[agent] - 3 * sigma[agent]),
            "seat_rounds": seat_rounds,
            "wins": win_count,
            "win_rate": win_count / seat_rounds,
            "low": low,
            "high": high,
            "fair_share": 1 / plan.num_players,
            "mean_points": float(points[lineups == agent].mean()),
        })
    ranking.sort(key=lambda entry: -entry["mu"])
    return [{"rank": position, **entry} for position, entry in enumerate(ranking, 1)]


def run_duplicate(agents, opponent, num_players: int = 2, rounds: int = 1000, seed: int | None = 0, num_envs: int = DEFAULT_ENVS,
                  opponent_label: str | None = None, **rule_options) -> dict:
    """Compare two agents on duplicate deals (module docstring, "Duplicate mode") and return the result as plain data.

    Args:
        agents: two names or paths, or a dict of two labels -> name, path or policy object (as ``run`` takes).
        opponent: the name or path (or policy object) playing the other N-1 seats.
        rounds: deals, each played twice (once per agent).
        opponent_label: its name in the result (default: the name given, or the object's class name).

    ``num_players``, ``seed``, ``num_envs`` and the rules options are as ``run`` takes them.

    Returns a JSON-ready dict: ``duplicate`` (``duplicate_win_rate``'s dict, plus ``agent_a``, ``agent_b`` and
    ``opponent``: their labels), ``config`` (as ``run``'s, with ``opponent``) and ``timing``.
    """
    num_players = check_num_players(num_players)
    rounds = check_positive_int(rounds, "rounds")
    num_envs = check_positive_int(num_envs, "num_envs")
    seed = check_seed(seed)
    rules = RulesOptions.from_kwargs(**rule_options)
    labels, policies = load_agents(agents, num_players, seed, rule_options)
    if len(labels) != 2:
        raise ValueError(f"a duplicate comparison takes exactly two agents, got {len(labels)}: {labels}")
    if isinstance(opponent, str):
        opponent_label, opponent = opponent_label or opponent, load(opponent, num_players=num_players, seed=seed, rules_options=rule_options)
    elif callable(getattr(opponent, "act", None)):
        opponent_label = opponent_label or type(opponent).__name__
    else:
        raise TypeError(f"opponent must be a name, a path or an object with act(observations, masks), got {opponent!r}")
    started = time.perf_counter()
    result = duplicate_win_rate(*policies, opponent, num_players, rounds, seed, num_envs, **rule_options)
    seconds = time.perf_counter() - started
    unit = "match" if rules.episode == "match" else "round"
    return {
        "duplicate": {"agent_a": labels[0], "agent_b": labels[1], "opponent": opponent_label, **result},
        "config": {"agents": labels, "opponent": opponent_label, "num_players": num_players, "rounds_per_table": rounds,
                   "seed": seed, "num_envs": num_envs, "unit": unit, "rules": rules.as_dict(), "version": hpuno_env.__version__},
        "timing": {"playing_seconds": seconds, "rounds": 2 * rounds, "rounds_per_second": 2 * rounds / seconds if seconds > 0 else math.inf},
    }


def check_size(num_agents: int, num_players: int, rounds: int, mixed: bool = True) -> None:
    """ValueError if the tournament's seatings and results would not fit in memory (checked before any is made)."""
    tables = len(schedule([str(agent) for agent in range(num_agents)], num_players, 1, mixed))
    seat_rounds = rounds * tables * num_players
    if seat_rounds > MAX_SEAT_ROUNDS:
        raise ValueError(
            f"rounds={rounds:,} over {tables} tables of {num_players} seats is {seat_rounds:,} seat-rounds, more than the "
            f"{MAX_SEAT_ROUNDS:,} a tournament keeps in memory: play at most {MAX_SEAT_ROUNDS // (tables * num_players):,} "
            "rounds per table (several tournaments with other seeds can be combined)"
        )


def _spread(count: int, parts: int) -> list[int]:
    """``count`` split into ``parts`` near-equal shares, the larger ones first."""
    share, extra = divmod(count, parts)
    return [share + (part < extra) for part in range(parts)]


def _record_entry(number: int, table: Seating, round_index: int, record: dict, won: np.ndarray, labels: list[str], unit: str) -> dict:
    """``run``'s ``records`` entry of round ``round_index`` of table ``number`` (from 1): the record labelled
    with its agents per seat and its place in the tournament."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", table.name).strip("-")  # a file name on every system
    width = len(str(len(table.lineups) - 1))
    players = [labels[agent] for agent in table.lineups[round_index]]
    seats = np.flatnonzero(won)
    return {
        "table": table.name,
        "round": round_index,
        "file": f"{number:02d}-{slug}-{unit}{round_index:0{width}d}.json",
        "players": players,
        "winner": int(seats[0]) if len(seats) == 1 else None,
        "record": {**record, "players": players, "tournament": {"table": table.name, "round": round_index}},
    }


def _in_table_order(entries: list[dict], tables: list[Seating]) -> list[dict]:
    """The records entries (kept as the rounds finished) in schedule order, each table's by round."""
    position = {table.name: index for index, table in enumerate(tables)}
    return sorted(entries, key=lambda entry: (position[entry["table"]], entry["round"]))


# ------------------------------------------------------------ command line


EXAMPLES = """examples:
  hpuno-tournament heuristic random-play ppo_2p --players 2 --rounds 20000 --seed 0 --out runs/t --plot
  hpuno-tournament heuristic ppo_universal random-play --players 4 --rounds 2000 --record 6 --out runs/t4
  hpuno-tournament heuristic random --episode match --rule target_score=200 --rounds 500
  hpuno-tournament heuristic heuristic-v0 --duplicate --opponent heuristic --rounds 4000 --out runs/dup
  hpuno-tournament heuristic random-play --out runs/t --overwrite   # replace an earlier result there"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("agents.evaluation.tournament", "hpuno-tournament"),
        description=(
            "Play every pairing of the given agents on the batched engine (each agent alone against\n"
            "N-1 copies of each other one, plus a mixed table of all of them for 3+ agents and 3+ players;\n"
            "seats rotated, every round played to its end), then print a ranked table with 95% intervals\n"
            "and openskill ratings."
        ),
        epilog=f"{EXAMPLES}\n\n" + textwrap.fill(f"Agent names: {', '.join(available())}, or the path of a saved agent file.", 100),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("agents", nargs="+", metavar="AGENT", help="two or more agent names or paths (a name given twice is compared with itself)")
    parser.add_argument("--players", type=int, default=2, help="seats per game, 2..10 (default: 2)")
    parser.add_argument("--rounds", type=int, default=2000, help="rounds per table; whole matches with --episode match (default: 2000)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the agents, the games and the rating order (default: 0)")
    parser.add_argument("--envs", type=int, default=DEFAULT_ENVS, help=f"game slots stepped together (default: {DEFAULT_ENVS})")
    parser.add_argument("--episode", choices=("round", "match"), default=None,
                        help="'round' (default): each entry is one round; 'match': each is a whole match to target_score")
    parser.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE",
                        help="a rules option, repeatable: e.g. --rule uno_penalty=4 --rule wd4_bluffing=false (values: ints, true/false, strings)")
    parser.add_argument("--rules", metavar="JSON", help='the same options as one JSON object (an alias of --rule), e.g. \'{"uno_penalty": 4}\'')
    parser.add_argument("--no-mixed", action="store_true", help="skip the mixed table")
    parser.add_argument("--out", metavar="DIR",
                        help="write results.csv and results.json (and, with --plot, PNG pictures) here; the folder is held "
                             "while the tournament runs, and one holding an earlier tournament's results is refused")
    parser.add_argument("--overwrite", action="store_true", help="with --out: replace an earlier tournament's results there")
    parser.add_argument("--plot", action="store_true", help="with --out: draw the pairwise win-rate matrix and the ratings")
    parser.add_argument("--record", type=int, default=0, metavar="N",
                        help="with --out: save the game records of N rounds (spread evenly over the tables, each table's first "
                             "rounds) as DIR/records/<table>-round<r>.json, each as its game ends; replay one with "
                             "python -m hpuno_env.replay FILE")
    parser.add_argument("--duplicate", action="store_true",
                        help="compare exactly two agents on duplicate deals: each deal played twice, once with each agent alone "
                             "against N-1 copies of --opponent, on the same cards and random streams; prints their paired difference")
    parser.add_argument("--opponent", default="heuristic", metavar="AGENT", help="with --duplicate: the agent in the other seats (default: heuristic)")
    parser.add_argument("--option", action="append", default=[], metavar="AGENT:NAME=VALUE",
                        help="an option for one agent, repeatable: e.g. --option llm:model=qwen3 --option llm:timeout=30 "
                             "(AGENT as listed: llm#2 is the second llm; --opponent's options under its name)")
    parser.add_argument("--quiet", action="store_true", help="no progress bar (it is shown only on a terminal anyway)")
    return parser


@warnings_as_lines()  # e.g. an agent trained under other rules: one line, not Python's source line
def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.plot and not args.out:
        exit_with_error(parser, "--plot needs --out DIR (where the pictures go)")
    if args.record and not args.out:
        exit_with_error(parser, "--record needs --out DIR (the records go in DIR/records/)")
    if args.overwrite and not args.out:
        exit_with_error(parser, "--overwrite needs --out DIR (the folder whose results it replaces)")
    if args.duplicate:
        return _main_duplicate(parser, args, argv)
    rules = _checked_arguments(parser, args, args.agents)
    try:
        check_size(len(args.agents), args.players, args.rounds, not args.no_mixed)
    except ValueError as error:
        exit_with_error(parser, str(error))
    problem = args.out and outputs_problem(args.out, args.plot, args.record > 0)
    if problem:  # found now, not after the games
        exit_with_error(parser, f"--out: {problem}")
    try:
        labels, policies = load_agents(args.agents, args.players, args.seed, rules, parse_agent_options(args.option))
    except (ValueError, TypeError) as error:
        exit_with_error(parser, str(error))
    one_torch_thread()
    lock = _claim_out(parser, args)
    try:
        return _play_and_report(args, argv, labels, policies, rules)
    finally:
        if lock is not None:
            lock.release()


def _checked_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace, agent_names: list[str]) -> dict:
    """The rules options given; every number and agent name checked first, before any agent loads (and with it the
    engine, and torch for a trained agent), so that a refusal comes at once. A problem ends the command (status 2)."""
    try:
        rules = _rules_given(args)
        check_num_players(args.players)
        check_positive_int(args.rounds, "--rounds")
        check_positive_int(args.envs, "--envs")
        check_int(args.record, "--record", low=0)
        check_seed(args.seed, "--seed")
        for name in agent_names:
            check_name(name)
    except (ValueError, TypeError) as error:
        exit_with_error(parser, str(error))
    return rules


def _claim_out(parser: argparse.ArgumentParser, args: argparse.Namespace):
    """The lock of --out (``report.claim_outputs``), held until the results are written; None without --out.
    A folder in use or holding an earlier result (without --overwrite) ends the command with status 2."""
    if not args.out:
        return None
    lock, problem = claim_outputs(args.out, args.overwrite)
    if problem:
        exit_with_error(parser, problem)
    return lock


def _play_and_report(args: argparse.Namespace, argv: list[str], labels: list[str], policies: list, rules: dict) -> int:
    """Play the checked tournament, print its report and write it to --out; the exit status (130 after Ctrl-C)."""
    progress = not args.quiet and sys.stderr.isatty()
    status = 0
    # The records are written as they finish: memory does not grow with --record, and Ctrl-C keeps them.
    records_dir = os.path.join(args.out, "records") if args.record else None
    try:
        result = run(dict(zip(labels, policies)), args.players, args.rounds, args.seed, args.envs, not args.no_mixed, progress,
                     args.record, records_dir, **rules)
    except TournamentInterrupted as interrupted:  # Ctrl-C: report and save what was played
        result, status = interrupted.result, 130
        if result is None:
            print("interrupted before the first rounds finished: nothing to report", file=sys.stderr)
            return status
        print(f"{partial_summary(result['partial'], result['config']['unit'])}; what was played follows (marked partial)",
              file=sys.stderr)
    print(format_report(result))
    if args.out:
        command = " ".join(["hpuno-tournament"] + [shlex.quote(arg) for arg in argv])
        for path in write_outputs(result, args.out, args.plot, command):  # the records are on disk already
            print(f"wrote {path}")
        if result.get("records"):
            print(f"wrote {len(result['records'])} game records in {records_dir} (python -m hpuno_env.replay FILE replays one)")
    return status


def _rules_given(args: argparse.Namespace) -> dict:
    """The rules options of --rule, --rules and --episode, one dict (ValueError when they contradict)."""
    rules = parse_rules(args.rule, args.rules)
    if args.episode is not None:
        if rules.get("episode", args.episode) != args.episode:
            raise ValueError(f"--episode {args.episode} contradicts --rule episode={rules['episode']}")
        rules["episode"] = args.episode
    return rules


def _main_duplicate(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> int:
    """``main`` with --duplicate: two agents on duplicate deals against --opponent, the paired table printed."""
    if len(args.agents) != 2:
        exit_with_error(parser, f"--duplicate compares exactly two agents, got {len(args.agents)}")
    if args.plot or args.record:
        exit_with_error(parser, "--duplicate draws no pictures and keeps no records (--plot, --record)")
    rules = _checked_arguments(parser, args, [*args.agents, args.opponent])
    try:
        check_seat_rounds(args.rounds, 2 * args.players, "--rounds", "deal, played twice")
    except ValueError as error:
        exit_with_error(parser, str(error))
    problem = args.out and outputs_problem(args.out, False, False)
    if problem:
        exit_with_error(parser, f"--out: {problem}")
    try:
        options = parse_agent_options(args.option)
        # --opponent's options under its name, unless that name is one of the two agents' (theirs then)
        opponent_options = options.pop(args.opponent, {}) if args.opponent not in args.agents else {}
        opponent = load(args.opponent, num_players=args.players, seed=args.seed, rules_options=rules, **opponent_options)
        labels, policies = load_agents(args.agents, args.players, args.seed, rules, options)
    except (ValueError, TypeError) as error:
        exit_with_error(parser, str(error))
    one_torch_thread()
    lock = _claim_out(parser, args)
    try:
        result = run_duplicate(dict(zip(labels, policies)), opponent, args.players, args.rounds, args.seed, args.envs,
                               args.opponent, **rules)
        print(format_duplicate_report(result))
        if args.out:
            command = " ".join(["hpuno-tournament"] + [shlex.quote(arg) for arg in argv])
            for path in write_duplicate_outputs(result, args.out, command):
                print(f"wrote {path}")
    finally:
        if lock is not None:
            lock.release()
    return 0


if __name__ == "__main__":
    sys.exit(main())
