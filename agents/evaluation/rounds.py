"""Evaluation that cannot lie: a fixed list of rounds, every one played to its end.

``play_rounds`` is the core (the tournament tool builds on it): it takes a
list of policies and, for every round to play, a *lineup* saying which policy
sits in which seat, and plays exactly those rounds on the batched engine
(``VectorEngine`` without auto-reset). Round ``r`` is played in game slot
``r % num_envs`` of the batch; a slot starts its next round only when its
current one is over, and no round beyond the list is ever started. So the
result does not depend on which rounds happen to finish first (stopping at
the first ``rounds`` finished rounds over-counts short rounds), and every
seat's result is read from the round's own end, never a step late.

``win_rate`` is the head-to-head summary: one policy in a rotating seat, the
opponent in all the others, with a 95% Wilson interval.

With the rules option ``episode="match"``, each entry of the list is a whole
match (rounds until ``target_score``, the deal passing left) instead of one
round; everything else is the same.

Determinism: the engine is seeded with ``seed`` (the first dealer is the
engine's own draw) and every policy that has a ``seed`` method is reseeded
from it, so one seed gives one result.

Deals (``deal_seeds``): by default a round's chance depends on the rounds
played before it in its game slot and on the other games in the batch (the
policies draw their noise for the whole batch at once). With ``deal_seeds``,
round r is dealt from a generator seeded by ``deal_seeds[r]`` alone, and
every decision in it is taken with the acting policy reseeded from
``deal_seeds[r]`` and the decision's number in the round, on that round's row
alone. A round's play then depends only on its deal seed and the choices
made in it: two rounds with the same deal seed are the same game until a
policy chooses differently, which is what duplicate evaluation
(``agents.evaluation.duplicate``) compares.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

import hpuno_env  # the engine through the package, loaded by the first game: importing this module loads no numba
from hpuno_env._checks import check_int_array, check_positive_int, check_seed
from hpuno_env.cards import ACTION_LABELS, CARD_POINTS
from hpuno_env.actions import illegal_actions

if TYPE_CHECKING:
    from hpuno_env import VectorEngine

WILSON_Z_95 = 1.959963984540054  # the normal quantile for a two-sided 95% interval


@dataclass(frozen=True)
class RoundResults:
    """Per-round (per-match with ``episode="match"``) outcomes of ``play_rounds``, in list order.

    Attributes:
        lineups: (R, num_players) int: the policy index in each seat.
        won: (R, num_players) bool: the seats that won (none when truncated; with
            ``episode="match"`` and ``scoring="lowest"`` a tie has several).
        winner: (R,) int: the winning seat, -1 when truncated (or a shared match win).
        winner_policy: (R,) int: the winning seat's policy index, -1 likewise.
        rewards: (R, num_players) float: each seat's reward summed over the episode,
            as the ``reward`` option pays it (0 for everyone in a truncated round).
        points: (R, num_players) int. Round episodes: the ``reward="points"`` value
            times 100, whatever ``reward`` is: the winner's round points (the other
            hands' card points), minus each loser's own hand points, 0 for everyone
            in a truncated round. Match episodes: each seat's final match score.
        decisions: (R,) int: decisions (engine steps) the episode took.
        truncated: (R,) bool: the round (for a match: one of its rounds) hit ``max_turns``.
        slot: (R,) int: the game slot of the batch that played it.
    """

    lineups: np.ndarray
    won: np.ndarray
    winner: np.ndarray
    winner_policy: np.ndarray
    rewards: np.ndarray
    points: np.ndarray
    decisions: np.ndarray
    truncated: np.ndarray
    slot: np.ndarray

    @property
    def rounds(self) -> int:
        return len(self.lineups)


def _check_policies(policies) -> list:
    if isinstance(policies, (str, bytes)) or not isinstance(policies, Sequence) or len(policies) == 0:
        raise TypeError(f"policies must be a non-empty sequence of objects with act(observations, masks), got {policies!r}")
    for index, policy in enumerate(policies):
        if not callable(getattr(policy, "act", None)):
            raise TypeError(f"policies[{index}] has no act(observations, masks) method: {policy!r}")
    return list(policies)


def _check_lineups(lineups, num_policies: int, num_players: int) -> np.ndarray:
    array = np.asarray(lineups)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] != num_players or array.dtype.kind not in "iu":
        raise ValueError(f"lineups must be an int array of shape (rounds >= 1, num_players={num_players}), got {array.dtype} {array.shape}")
    if array.min() < 0 or array.max() >= num_policies:
        raise ValueError(f"lineups must hold policy indices in [0, {num_policies}), got values in [{array.min()}, {array.max()}]")
    return array.astype(np.int64)


def _check_observers(made) -> list:
    """The list an ``observers`` callable returned, each item checked for the two hooks."""
    if isinstance(made, (str, bytes)) or not isinstance(made, Sequence):
        raise TypeError(f"observers(engine) must return a list of observers, got {made!r}")
    for index, observer in enumerate(made):
        if not (callable(getattr(observer, "after_reset", None)) and callable(getattr(observer, "after_step", None))):
            raise TypeError(f"observers(engine)[{index}] has no after_reset(games) and after_step(actions) methods: {observer!r}")
    return list(made)


def _seed_policies(policies: list, seed: int | None) -> None:
    """Reseed every policy that can be reseeded, each from its own stream of ``seed``."""
    streams = np.random.SeedSequence(seed).generate_state(len(policies))
    for policy, stream in zip(policies, streams):
        if callable(getattr(policy, "seed", None)):
            policy.seed(None if seed is None else int(stream))


def winning_seats(engine: VectorEngine, games: np.ndarray, event_kind: int) -> np.ndarray:
    """(len(games), num_players) bool: the seats the kernel's last step logged as winners.

    The kernel logs each round's winner (EV_ROUND_END) and each match winner
    (EV_MATCH_END, several on a tie under ``scoring="lowest"``); reading its
    own events keeps the verdict in one place, the kernel."""
    events = engine.state.events[games]  # (k, MAX_EVENTS, 4)
    logged = np.arange(events.shape[1]) < engine.state.event_count[games][:, None]
    is_win = logged & (events[:, :, 0] == event_kind)
    seats = np.arange(engine.num_players)
    return (is_win[:, :, None] & (events[:, :, 1, None] == seats)).any(axis=1)


def _check_arguments(policies, lineups, num_players, num_envs, seed, observers, deal_seeds) -> tuple:
    """play_rounds' arguments checked (ValueError or TypeError naming the bad one), in their plain forms."""
    policies = _check_policies(policies)
    num_players = check_positive_int(num_players, "num_players")
    lineups = _check_lineups(lineups, len(policies), num_players)
    num_envs = check_positive_int(num_envs, "num_envs")
    seed = check_seed(seed)
    deal_seeds = None if deal_seeds is None else _check_deal_seeds(deal_seeds, len(lineups))
    if observers is not None and not callable(observers):
        raise TypeError(f"observers must be None or a callable make(engine) -> list of observers, got {observers!r}")
    return policies, lineups, num_players, num_envs, seed, deal_seeds


def play_rounds(
    policies: Sequence, lineups, num_players: int, seed: int | None = 0, num_envs: int = 256, observers=None, deal_seeds=None,
    **rule_options,
) -> RoundResults:
    """Play one round (one match with ``episode="match"``) per row of ``lineups``, each to its end.

    Args:
        policies: objects with ``act(observations, action_masks) -> actions``
            (batched), e.g. from ``agents.load``. The same object may appear twice.
            Every answer must be one legal int action per row: anything else (floats,
            -1, an action its mask forbids, another shape) is a ``ValueError`` naming
            the policy, the row and the action, before the step is played (``checked_actions``).
        lineups: (R, num_players) ints: ``lineups[r, seat]`` is the index in
            ``policies`` of the policy playing ``seat`` in round r.
        num_players: seats per game.
        seed: seeds the engine and every policy with a ``seed`` method.
        num_envs: game slots stepped together (at most R are used).
        observers: None, or a callable ``make(engine) -> list`` called once with the
            engine it builds (before the first reset), returning objects whose
            ``after_reset(games)`` and ``after_step(actions)`` are called right after
            every ``engine.reset`` and ``engine.step_observe`` with the arguments the
            engine got (``games`` None for the first reset of every slot; ``actions``
            -1 in idle slots, an array reused between steps: copy it to keep it).
            E.g. ``hpuno_env.records.Recorder`` objects, to save game records.
            They only watch: the results are the same with or without them.
        deal_seeds: None, or (R,) ints in [0, 2**32): round r's own seed (module docstring,
            "Deals"). Policies are then asked about all their rows at once if they say their
            draws are row-wise (``draws_per_row``, as the built-in agents do: ``RowStreams``),
            else one row at a time after a reseed (a policy without a ``seed`` method still
            gets its rows together: it is taken to have no random stream).
        **rule_options: rules options of ``VectorEngine`` (``max_turns``, ``episode``, ...).

    Each step groups the games by whose turn it is and calls every policy's
    ``act`` once, on its rows. Returns a ``RoundResults`` in the order of ``lineups``.
    """
    policies, lineups, num_players, num_envs, seed, deal_seeds = _check_arguments(
        policies, lineups, num_players, num_envs, seed, observers, deal_seeds)
    rounds = len(lineups)
    slots = min(num_envs, rounds)
    engine = hpuno_env.VectorEngine(num_games=slots, num_players=num_players, seed=seed, auto_reset=False, **rule_options)
    watching = [] if observers is None else _check_observers(observers(engine))
    match_episodes = engine.options.episode == "match"
    _seed_policies(policies, seed)

    tally = _Tally.empty(rounds, num_players)
    _deal_first_rounds(engine, seed, deal_seeds)
    for observer in watching:
        observer.after_reset(None)
    playing = np.arange(slots)  # the round each slot is playing, or -1 once its quota is done
    episode_rewards = np.zeros((slots, num_players), np.float64)
    episode_decisions = np.zeros(slots, np.int64)
    actions = np.full(slots, -1, np.int64)
    observations, masks = engine.observe(), engine.legal_mask()
    while playing.max() >= 0:
        active = playing >= 0
        # The policy index whose seat is to act (-1 in a slot whose quota is done).
        to_act = np.where(active, lineups[playing, engine.current_player], -1)
        if deal_seeds is None:
            _choose_actions(policies, to_act, observations, masks, actions)
        else:
            _choose_actions_per_deal(policies, to_act, observations, masks, actions, _decision_seeds(deal_seeds[playing], episode_decisions))
        observations, masks, step_rewards, terminated, cut = engine.step_observe(actions, partial=True)
        for observer in watching:
            observer.after_step(actions)
        episode_rewards += step_rewards  # an idle slot (action -1) is paid nothing
        episode_decisions += active
        if not (terminated.any() or cut.any()):
            continue
        finished = np.flatnonzero(terminated | cut)
        tally.add(engine, playing, finished, terminated, cut, episode_rewards, episode_decisions, match_episodes)
        episode_rewards[finished] = 0.0
        episode_decisions[finished] = 0
        if _start_next_rounds(engine, watching, playing, finished, slots, rounds, deal_seeds):
            observations, masks = engine.observe(), engine.legal_mask()
    return tally.results(lineups, np.arange(rounds) % slots)


def _choose_actions(policies: list, to_act: np.ndarray, observations, masks, actions: np.ndarray) -> None:
    """``actions`` of every slot: each policy's ``act`` called once, on the rows where ``to_act`` is its index; -1
    in the slots no policy is to act in. Every answer is checked (``checked_actions``) before any is used."""
    actions[:] = -1
    for index, policy in enumerate(policies):
        rows = np.flatnonzero(to_act == index)
        if rows.size:
            answer = policy.act(observations[rows], masks[rows])
            actions[rows] = checked_actions(answer, masks[rows], f"policies[{index}] ({type(policy).__name__})", rows)


def _check_deal_seeds(deal_seeds, rounds: int) -> np.ndarray:
    array = check_int_array(deal_seeds, "deal_seeds", (rounds,))
    if array.size and (array.min() < 0 or array.max() >= 2**32):
        raise ValueError(f"deal_seeds must be ints in [0, 2**32), got values in [{array.min()}, {array.max()}]")
    return array.astype(np.uint64)


def deal_generator_words(deal_seed: int) -> list[int]:
    """The engine generator state (four xoshiro128** words) a round with this deal seed is dealt from."""
    words = np.random.SeedSequence(int(deal_seed)).generate_state(4, np.uint32)
    if not words.any():
        words[0] = 1  # xoshiro's one forbidden state
    return words.tolist()


def _deal_first_rounds(engine: VectorEngine, seed: int | None, deal_seeds: np.ndarray | None) -> None:
    """The first reset of every slot: from ``seed``, or slot s from ``deal_seeds[s]`` (the round it plays first)."""
    if deal_seeds is None:
        engine.reset(seed=seed)
        return
    _deal_generators(engine, np.arange(engine.num_games), deal_seeds[:engine.num_games])
    engine.reset()


def _deal_generators(engine: VectorEngine, games: np.ndarray, deal_seeds: np.ndarray) -> None:
    """Set each of ``games``' generators to its deal seed's state, before the reset that deals it."""
    for game, deal_seed in zip(games.tolist(), deal_seeds.tolist()):
        engine.set_generator_state(game, deal_generator_words(deal_seed))


def _splitmix64(values: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, elementwise on uint64: a cheap hash whose outputs look independent."""
    with np.errstate(over="ignore"):
        mixed = values + np.uint64(0x9E3779B97F4A7C15)
        mixed = (mixed ^ (mixed >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        mixed = (mixed ^ (mixed >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return mixed ^ (mixed >> np.uint64(31))


def _decision_seeds(deal_seeds: np.ndarray, decisions: np.ndarray) -> np.ndarray:
    """(slots,) seeds in [0, 2**32), one per (deal seed, decision number in the round), so a decision's streams
    depend on nothing else (an idle slot's seed is never used)."""
    return (_splitmix64((deal_seeds << np.uint64(32)) ^ decisions.astype(np.uint64)) >> np.uint64(32)).astype(np.int64)


class RowStreams:
    """What a policy's ``rng`` is during one batched ``act`` of ``play_rounds(deal_seeds=...)``, when the policy says
    its draws are row-wise (``draws_per_row``: every draw one block per row, as the built-in agents draw): row i's
    numbers come from a counter-based stream of its own seed alone, so they do not depend on the other rows.

    Only ``random`` and ``gumbel`` are offered (what the built-in agents draw); any other use is an error."""

    def __init__(self, seeds: np.ndarray):
        self.seeds = _splitmix64(np.asarray(seeds).astype(np.uint64))[:, None]
        self.drawn = 0

    def _bits(self, size) -> np.ndarray:
        shape = (size,) if isinstance(size, (int, np.integer)) else tuple(size or ())
        if not shape or shape[0] != len(self.seeds):
            raise ValueError(f"a policy with draws_per_row must draw one block per row ({len(self.seeds)} rows), drew size={size!r}")
        per_row = math.prod(shape[1:])
        counters = np.arange(self.drawn, self.drawn + per_row, dtype=np.uint64)[None, :]
        self.drawn += per_row
        return _splitmix64(self.seeds ^ _splitmix64(counters)).reshape(shape)

    def random(self, size=None, dtype=np.float64, out=None) -> np.ndarray:
        """Uniform floats in [0, 1), one block per row (numpy's ``Generator.random`` signature)."""
        if out is not None:
            raise ValueError("RowStreams.random does not fill out=")
        bits = self._bits(size)
        if np.dtype(dtype) == np.float32:
            return (bits >> np.uint64(40)).astype(np.float32) * np.float32(2.0**-24)
        return (bits >> np.uint64(11)).astype(np.float64) * 2.0**-53

    def gumbel(self, loc=0.0, scale=1.0, size=None) -> np.ndarray:
        """Gumbel draws, one block per row (numpy's ``Generator.gumbel`` signature)."""
        uniform = ((self._bits(size) >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0**-53  # in (0, 1)
        return loc - scale * np.log(-np.log(uniform))


def _choose_actions_per_deal(policies: list, to_act: np.ndarray, observations, masks, actions: np.ndarray,
                             decision_seeds: np.ndarray) -> None:
    """``_choose_actions`` with each row's random draws from its own decision seed: a policy with
    ``draws_per_row`` is asked about all its rows at once with ``RowStreams`` as its ``rng``; any other policy
    with a ``seed`` method is reseeded from each row's decision seed and asked about that row alone (slower)."""
    actions[:] = -1
    for index, policy in enumerate(policies):
        rows = np.flatnonzero(to_act == index)
        if not rows.size:
            continue
        name = f"policies[{index}] ({type(policy).__name__})"
        if getattr(policy, "draws_per_row", False) and isinstance(getattr(policy, "rng", None), np.random.Generator):
            own = policy.rng
            policy.rng = RowStreams(decision_seeds[rows])
            try:
                answer = policy.act(observations[rows], masks[rows])
            finally:
                policy.rng = own
            actions[rows] = checked_actions(answer, masks[rows], name, rows)
        elif not callable(getattr(policy, "seed", None)):
            actions[rows] = checked_actions(policy.act(observations[rows], masks[rows]), masks[rows], name, rows)
        else:
            for row in rows.tolist():
                policy.seed(int(decision_seeds[row]))
                one = slice(row, row + 1)
                actions[row] = checked_actions(policy.act(observations[one], masks[one]), masks[one], name, np.array([row]))[0]


def checked_actions(answer, masks: np.ndarray, policy_name: str, slots: np.ndarray | None = None) -> np.ndarray:
    """A policy's answer to ``act(observations, masks)`` as an int64 array of shape (B,), B = len(masks).

    The one check of every answer evaluation takes from a policy: ints (floats and bools are refused, not
    rounded), one per row, each legal in its row (in range and allowed by the row's mask). -1 is refused
    like any other illegal action: the engine, stepped with ``partial=True``, would read it as "this game
    idles", and a policy answering it would stall its games forever. Anything else is a ``ValueError``
    naming ``policy_name``, the row (and its game slot, ``slots[row]``, when given) and the action.
    """
    rows = len(masks)
    try:
        actions = check_int_array(answer, "its answer", (rows,))
    except ValueError as error:
        raise ValueError(f"{policy_name}.act answered {rows} row{'s' * (rows != 1)} with {error}{_first_entry(answer, rows, slots)}: it must "
                         "return one int action per row, each one its mask allows") from None
    illegal = illegal_actions(actions, masks)
    if illegal.any():
        row = int(np.flatnonzero(illegal)[0])
        action = int(actions[row])
        what = f"{action} ({ACTION_LABELS[action]})" if 0 <= action < len(ACTION_LABELS) else f"{action} (out of range)"
        raise ValueError(f"{policy_name}.act returned the illegal action {what} for row {row}{_slot(slots, row)} "
                         f"({int(illegal.sum())} of its {rows} rows illegal): it must return actions its masks allow")
    return actions


def _first_entry(answer, rows: int, slots: np.ndarray | None) -> str:
    """Its first entry, as in ``" (row 0, game slot 5: 3.7)"``, for an answer of the right shape but not ints; else ""."""
    try:
        array = np.asarray(answer)
    except (TypeError, ValueError):  # ragged lists
        return ""
    return f" (row 0{_slot(slots, 0)}: {array[:1].tolist()[0]!r})" if array.shape == (rows,) else ""


def _slot(slots: np.ndarray | None, row: int) -> str:
    return "" if slots is None else f", game slot {int(slots[row])}"


def _start_next_rounds(engine: VectorEngine, watching: list, playing: np.ndarray, finished: np.ndarray, slots: int,
                       rounds: int, deal_seeds: np.ndarray | None = None) -> bool:
    """Each ``finished`` slot takes its next round (``slots`` on in the list) if there is one, else goes idle (-1 in
    ``playing``); True when some slot was dealt a new round (the observations have changed)."""
    following = playing[finished] + slots
    more = following < rounds
    playing[finished] = np.where(more, following, -1)
    if not more.any():
        return False
    starting = finished[more]
    if deal_seeds is not None:
        _deal_generators(engine, starting, deal_seeds[playing[starting]])
    engine.reset(games=starting)
    for observer in watching:
        observer.after_reset(starting)
    return True


@dataclass
class _Tally:
    """``play_rounds``'s per-round outcomes, filled in as the rounds end."""

    won: np.ndarray
    rewards: np.ndarray
    points: np.ndarray
    decisions: np.ndarray
    truncated: np.ndarray

    @classmethod
    def empty(cls, rounds: int, num_players: int) -> _Tally:
        return cls(won=np.zeros((rounds, num_players), bool), rewards=np.zeros((rounds, num_players), np.float64),
                   points=np.zeros((rounds, num_players), np.int64), decisions=np.zeros(rounds, np.int64),
                   truncated=np.zeros(rounds, bool))

    def add(self, engine: VectorEngine, playing: np.ndarray, finished: np.ndarray, terminated: np.ndarray, cut: np.ndarray,
            episode_rewards: np.ndarray, episode_decisions: np.ndarray, match_episodes: bool) -> None:
        """The rounds that the ``finished`` slots were playing, read from the engine at their end."""
        done_rounds = playing[finished]
        self.rewards[done_rounds] = episode_rewards[finished]
        self.decisions[done_rounds] = episode_decisions[finished]
        self.truncated[done_rounds] = cut[finished]
        ended = finished[terminated[finished]]
        ended_rounds = playing[ended]
        if match_episodes:
            self.won[ended_rounds] = winning_seats(engine, ended, hpuno_env.kernel.EV_MATCH_END)
            self.points[done_rounds] = engine.state.scores[finished]
        else:
            winners = winning_seats(engine, ended, hpuno_env.kernel.EV_ROUND_END)
            self.won[ended_rounds] = winners
            hand_points = engine.state.hands[ended].astype(np.int64) @ CARD_POINTS.astype(np.int64)  # (k, P)
            self.points[ended_rounds] = np.where(winners, hand_points.sum(axis=1, keepdims=True), -hand_points)

    def results(self, lineups: np.ndarray, slot: np.ndarray) -> RoundResults:
        single = self.won.sum(axis=1) == 1
        winner = np.where(single, self.won.argmax(axis=1), -1)
        winner_policy = np.where(single, lineups[np.arange(len(lineups)), winner], -1)
        return RoundResults(
            lineups=lineups, won=self.won, winner=winner, winner_policy=winner_policy, rewards=self.rewards,
            points=self.points, decisions=self.decisions, truncated=self.truncated, slot=slot,
        )


def wilson_interval(successes: int, trials: int, z: float = WILSON_Z_95) -> tuple[float, float]:
    """The Wilson score interval for a binomial proportion (95% by default)."""
    if trials <= 0:
        raise ValueError(f"trials must be positive, got {trials!r}")
    rate = successes / trials
    denominator = 1 + z * z / trials
    centre = (rate + z * z / (2 * trials)) / denominator
    half_width = z * math.sqrt(rate * (1 - rate) / trials + z * z / (4 * trials * trials)) / denominator
    # At 0 or all successes the bound is exactly 0 or 1; say so rather than leave rounding error.
    low = 0.0 if successes == 0 else max(0.0, centre - half_width)
    high = 1.0 if successes == trials else min(1.0, centre + half_width)
    return low, high


MAX_SEAT_ROUNDS = 20_000_000  # seat-rounds (rounds x seats) one evaluation keeps in memory: about 40 bytes each


def check_seat_rounds(rounds: int, seats: int, what: str = "rounds", unit: str = "round") -> None:
    """ValueError, before anything is allocated, if ``rounds`` of ``seats`` seat-rounds each would be more than an
    evaluation keeps in memory (``MAX_SEAT_ROUNDS``: their lineups and results)."""
    if rounds * seats > MAX_SEAT_ROUNDS:
        raise ValueError(f"{what}={rounds:,} is {rounds * seats:,} seat-rounds ({seats} a {unit}), more than the "
                         f"{MAX_SEAT_ROUNDS:,} an evaluation keeps in memory: at most {MAX_SEAT_ROUNDS // seats:,}")


def rotating_lineups(rounds: int, num_players: int) -> np.ndarray:
    """Lineups for policy 0 against policy 1: policy 0 sits in seat ``r % num_players``
    in round r (so every seat equally often when num_players divides rounds), policy 1 elsewhere."""
    rounds = check_positive_int(rounds, "rounds")
    check_seat_rounds(rounds, num_players)
    lineups = np.ones((rounds, num_players), np.int64)
    lineups[np.arange(rounds), np.arange(rounds) % num_players] = 0
    return lineups


def win_rate(policy, opponent, num_players: int = 2, rounds: int = 1000, seed: int | None = 0, num_envs: int = 256, observers=None,
             **rule_options) -> dict:
    """Play ``rounds`` rounds with ``policy`` in a rotating seat and ``opponent`` in all the others.

    A fair policy wins 1 / num_players of the rounds. With ``episode="match"``
    in ``rule_options`` every "round" is a whole match; ``observers`` as ``play_rounds``'. Returns a dict:

    - ``win_rate``, ``low``, ``high``: wins / rounds and its 95% Wilson interval;
    - ``rounds``, ``wins``, ``truncated``: a truncated round counts as played and not won;
    - ``mean_points``: the policy's mean ``points`` (``RoundResults``): per round,
      its round points when it wins and minus its own hand points when it loses
      (the ``reward="points"`` value times 100; 0 when truncated); per match, its final score;
    - ``mean_reward``: the policy's mean episode reward under the ``reward`` option;
    - ``mean_decisions``: decisions per round, every seat's;
    - ``seat_rounds``, ``seat_wins``: per seat, the rounds the policy sat there and won there;
      ``seat_share``: the fraction of its wins taken in each seat.
    """
    num_players = check_positive_int(num_players, "num_players")
    results = play_rounds([policy, opponent], rotating_lineups(rounds, num_players), num_players, seed, num_envs, observers,
                          **rule_options)
    return seat_summary(results, np.argmin(results.lineups, axis=1), num_players)


def seat_summary(results: RoundResults, seat: np.ndarray, num_players: int) -> dict:
    """``win_rate``'s dict for the seat ``seat[r]`` of each round r of ``results`` (the evaluated policy's seat)."""
    every = np.arange(results.rounds)
    policy_won = results.won[every, seat]
    wins = int(policy_won.sum())
    low, high = wilson_interval(wins, results.rounds)
    seat_wins = np.bincount(seat[policy_won], minlength=num_players)
    return {
        "win_rate": wins / results.rounds,
        "low": low,
        "high": high,
        "rounds": results.rounds,
        "wins": wins,
        "truncated": int(results.truncated.sum()),
        "mean_points": float(results.points[every, seat].mean()),
        "mean_reward": float(results.rewards[every, seat].mean()),
        "mean_decisions": float(results.decisions.mean()),
        "seat_rounds": np.bincount(seat, minlength=num_players).tolist(),
        "seat_wins": seat_wins.tolist(),
        "seat_share": (seat_wins / max(wins, 1)).tolist(),
    }
