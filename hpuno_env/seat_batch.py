"""The framework-free core of the single-seat training envs: ``SeatBatch`` and ``ObservationFormat``.

``SeatBatch`` runs ``num_envs`` games in one engine. In each game the learner
holds one seat (fixed, or a random seat per episode); the other seats are
played *inside the batch* by opponent policies, objects with the batched
``act(observations, action_masks)`` of ``agents`` (``UniformRandomPolicy`` by
default). One opponent can play every seat (``set_opponent``), or a list of
them can share the batch (``set_opponents``): an index per game slot and seat,
fixed or drawn afresh for every new episode (a league's mixture), and each
step every opponent is called once on all the rows it plays. For self-play
with shared parameters, pass the learner itself as the opponent (any object
whose ``act`` calls the live model).

Rewards: everything the learner's seat is paid between two of its decisions
is summed into the reward of the first, so a round's result arrives even when
an opponent ends it (PettingZoo issue 1147's bug class). A finished game is
reset in the same step (SB3's and Gymnasium's "same-step" autoreset); its last
view of the learner's seat is kept as the terminal observation.

A step is all or nothing for the caller: an illegal learner action is refused
with ``ValueError`` and changes nothing; if anything fails after the learner's
move was applied (an opponent's ``act`` raises, is interrupted by Ctrl-C, or
returns an action its masks forbid), the error names the opponent and the batch
refuses every later ``step`` with "call reset()", instead of playing on from
half-stepped games.

``ObservationFormat`` is how the adapters hand out the engine's int8 views
(dtype, optional fixed scale, Gymnasium space).

This module imports no training framework (no Stable-Baselines3, Ray or torch),
so the Gymnasium, flat PettingZoo and RLlib adapters built on it load none they
do not use: ``vector_env`` (SB3's ``VecEnv``), ``gym_env`` (Gymnasium's envs),
``flat_env`` and ``rllib`` all take it from here. This package never imports
``agents`` (which builds on it): the default opponent is defined here.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence

import numpy as np
from gymnasium import spaces

from ._checks import check_bool, check_int_array, is_int
from .actions import ILLEGAL_REWARD, check_illegal_action, illegal_actions
from .cards import NUM_ACTIONS
from .encoding import hidden_hands_scale, observation_scale
from .engine import VectorEngine


class UniformRandomPolicy:
    """Uniform over each row's legal actions: the vector envs' default opponent.

    It lives here rather than in ``agents`` so that the environment package
    stands alone; ``agents.load("random")`` plays the same way, with input checks.
    """

    def __init__(self, num_players: int | None = None, seed: int | None = None):
        self.num_players = num_players
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int | None) -> None:
        """Restart the random stream (the envs' ``reset(seed)`` calls it)."""
        self.rng = np.random.default_rng(seed)

    def act(self, observations, action_masks) -> np.ndarray:
        masks = np.asarray(action_masks).astype(bool, copy=False)
        return (self.rng.random(masks.shape) * masks).argmax(axis=1)


# What set_opponents accepts as an assignment: fixed indices, or a function of the game slots
# starting a new episode that returns their indices (one per seat).
Assignment = np.ndarray | Callable[[np.ndarray], np.ndarray]


class SeatBatch:
    """num_envs games where the learner holds one seat and opponent policies play the rest.

    Args:
        num_envs: games in the batch.
        num_players: seats per game.
        learner_seat: the learner's seat, or ``"random"`` for a new random seat every episode.
        opponent: object with ``act(observations, action_masks)`` (and, if it has one, a
            ``num_players`` equal to this batch's); default ``UniformRandomPolicy``.
        seed: seeds the engine, the seat draw and the default opponent.
        illegal_action: ``"raise"`` (default: ``ValueError``, nothing changes) or ``"lose"``: an
            illegal learner action ends that game's round as lost (reward ``ILLEGAL_REWARD``,
            -1, terminated), as the wrapped PettingZoo ``env()`` does.
        wins_only: pay the learner only what it wins (a negative reward becomes 0). With ``reward="win"`` its
            return is then 1 for a won round and 0 for a lost or truncated one, so its return is its win rate.
            With the rules' -1 for a loss, a learner does better by stalling a round it is likely to lose until
            ``max_turns`` truncates it (0 for everyone) than by playing on, and it can stall by drawing until it
            holds the whole deck; a learner that wins less than its share learns to stall many rounds.
        **rule_options: ``RulesOptions`` fields.

    Observations and masks are the engine's: int8 views of the player to act, bool masks.
    """

    def __init__(self, num_envs: int, num_players: int = 2, learner_seat: int | str = 0, opponent=None, seed: int | None = None,
                 illegal_action: str = "raise", wins_only: bool = False, **rule_options):
        self.illegal_action = check_illegal_action(illegal_action)
        self.wins_only = check_bool(wins_only, "wins_only")
        self.engine = VectorEngine(num_games=num_envs, num_players=num_players, seed=seed, auto_reset=False, **rule_options)
        if learner_seat != "random" and not (is_int(learner_seat) and 0 <= learner_seat < num_players):
            raise ValueError(f"learner_seat must be a seat in [0, {num_players}) or 'random', got {learner_seat!r}")
        self.num_envs = self.engine.num_games
        self.num_players = self.engine.num_players
        self.learner_seat = learner_seat
        self.rng = np.random.default_rng(seed)
        self.seats = np.zeros(self.num_envs, np.int64)
        if opponent is None:
            opponent = UniformRandomPolicy(num_players=self.num_players, seed=None if seed is None else seed + 1)
        self.set_opponent(opponent)
        self._carry = np.zeros(self.num_envs, np.float32)
        self._rows = np.arange(self.num_envs)
        self.observations = np.zeros((self.num_envs, self.engine.observation_size), np.int8)
        self.masks = np.zeros((self.num_envs, NUM_ACTIONS), np.bool_)
        # Why the batch is unusable until reset(), or None. A step that fails after the learner's move was applied
        # (an opponent raised, returned an illegal action, or Ctrl-C came) leaves the games half-stepped.
        self.broken: str | None = None

    # ------------------------------------------------------------ opponents

    @property
    def opponent(self):
        """The opponent when one policy plays every seat (``set_opponent``), else None."""
        return self.policies[0] if len(self.policies) == 1 else None

    def set_opponent(self, opponent) -> None:
        """One policy plays every other seat (takes effect from the next decision)."""
        self.set_opponents([opponent], np.zeros((self.num_envs, self.num_players), np.int64))

    def set_opponents(self, policies: Sequence, assignment: Assignment) -> None:
        """Several opponents share the batch; ``assignment`` says who plays where.

        Args:
            policies: objects with ``act(observations, action_masks)``; each is called at
                most once per opponent move of the batch, on all the rows it plays.
            assignment: indices into ``policies``, either an int array of shape
                ``(num_envs, num_players)`` (game slot, seat; the learner's seat is
                ignored) or ``(num_envs,)`` (one opponent per game slot), kept until changed;
                or a function ``draw(games) -> indices`` of shape ``(len(games),
                num_players)`` or ``(len(games),)``, called now for every slot and then
                whenever new episodes start in ``games`` (a mixture drawn per game and
                seat). A function with a ``seed`` method is reseeded by ``reset(seed)``.

        Takes effect from the next decision. Bad input raises ValueError and changes nothing.
        """
        policies = list(policies)
        if not policies:
            raise ValueError("policies must hold at least one opponent")
        for index, policy in enumerate(policies):
            self._check_opponent(policy, "opponent" if len(policies) == 1 else f"policies[{index}]")
        draw = assignment if callable(assignment) else None
        if draw is not None:
            indices = self._checked_assignment(draw(self._all_games()), self.num_envs, len(policies), "assignment(games)")
        else:
            indices = self._checked_assignment(assignment, self.num_envs, len(policies), "assignment")
        self.policies, self.assignment, self._draw_assignment = policies, indices, draw

    def _check_opponent(self, policy, name: str) -> None:
        if not callable(getattr(policy, "act", None)):
            raise ValueError(f"{name} must have an act(observations, action_masks) method, got {type(policy).__name__}")
        players = getattr(policy, "num_players", None)
        if players is not None and players != self.num_players:
            raise ValueError(f"{name} ({type(policy).__name__}) was built for num_players={players}, but this env has num_players={self.num_players}")

    def _checked_assignment(self, indices, games: int, num_policies: int, name: str) -> np.ndarray:
        """Indices as an int64 array (games, num_players), or a ValueError naming `name`."""
        indices = np.asarray(indices)
        if indices.shape == (games,):
            indices = np.repeat(indices[:, None], self.num_players, axis=1)
        if indices.shape != (games, self.num_players):
            raise ValueError(f"{name} must have shape ({games}, {self.num_players}) or ({games},), got {indices.shape}")
        if indices.size and (indices.dtype.kind not in "iu" or indices.min() < 0 or indices.max() >= num_policies):
            raise ValueError(f"{name} must hold integer indices into the {num_policies} policies, got {indices.dtype} in [{indices.min()}, {indices.max()}]")
        return indices.astype(np.int64)

    def _all_games(self) -> np.ndarray:
        return np.arange(self.num_envs)

    # ------------------------------------------------------------ episodes

    def reset(self, seed: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Fresh matches in every game. A seed reseeds the engine, the seat draw, every
        opponent with a ``seed`` method (policy i gets seed + 1 + i) and an assignment
        function with one, so the same seed replays the same games."""
        self.broken = None
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            for index, policy in enumerate(self.policies):
                if callable(getattr(policy, "seed", None)):
                    policy.seed(seed + 1 + index)
            if callable(getattr(self._draw_assignment, "seed", None)):
                self._draw_assignment.seed(seed + 1 + len(self.policies))
        with self._breaking_on_failure("reset()"):
            self.engine.reset(seed=seed)
            self._start_episodes(self._all_games())
            self._carry[:] = self._play_opponents()
        return self.observations, self.masks

    def check_usable(self, call: str) -> None:
        """ValueError if a failed step left the games half-stepped (``broken``): only reset() goes on from there."""
        if self.broken is not None:
            raise ValueError(f"{call} after a failed step: {self.broken}; the games are half-stepped: call reset()")

    @contextlib.contextmanager
    def _breaking_on_failure(self, call: str):
        """Mark the batch broken if the block fails (any exception, Ctrl-C too), then let the failure go on."""
        try:
            yield
        except BaseException as error:
            self.broken = f"{call} failed with {type(error).__name__}"
            raise

    def step(self, actions) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The learner acts in every game; returns (observations, masks, rewards, terminated,
        truncated, terminal_observations) where terminal_observations[g] is the learner's last
        view of game g if it ended this step (else zeros)."""
        self.check_usable("step()")
        actions = check_int_array(actions, "actions", (self.num_envs,))  # 1.7, "31" or a 2x2 array: refused, not converted
        forfeited = self._illegal(actions) if self.illegal_action == "lose" else None
        if forfeited is not None:  # those games are not played on: the round is lost
            actions = np.where(forfeited, -1, actions)
        # The engine refuses illegal learner actions with ValueError and changes nothing; any failure after its
        # step (an opponent's, Ctrl-C) leaves the learner's move applied and the opponents' not: the batch is broken.
        try:
            observations, masks, rewards_by_seat, terminated, truncated = self.engine.step_observe(actions, partial=forfeited is not None)
        except ValueError:
            raise  # refused: nothing changed
        except BaseException:
            self.broken = "step() was interrupted"
            raise
        with self._breaking_on_failure("step()"):
            return self._finish_step(forfeited, observations, masks, rewards_by_seat, terminated, truncated)

    def _finish_step(self, forfeited, observations, masks, rewards_by_seat, terminated, truncated):
        rewards = self._carry + rewards_by_seat[self._rows, self.seats]
        rewards += self._play_opponents(observations, masks, terminated, truncated)
        if forfeited is not None:  # the learner is still to act there, so no opponent moved
            rewards[forfeited] += ILLEGAL_REWARD
            terminated |= forfeited
        if self.wins_only:
            np.maximum(rewards, 0.0, out=rewards)
        done = terminated | truncated
        terminal_observations = np.zeros_like(self.observations)
        self._carry[:] = 0.0
        if done.any():
            games = np.flatnonzero(done)
            seats = np.full(self.num_envs, -1, np.int64)
            seats[games] = self.seats[games]
            terminal_observations = self.engine.observe(seats)
            self.engine.reset(games=games)
            self._start_episodes(games)
            self._carry[:] = self._play_opponents()  # paid in the new episodes: next step's reward
        return self.observations, self.masks, rewards.astype(np.float32), terminated, truncated, terminal_observations

    def _illegal(self, actions: np.ndarray) -> np.ndarray | None:
        """Where the learner's action is out of range or not legal now; None if nowhere."""
        illegal = illegal_actions(actions, self.masks)
        return illegal if illegal.any() else None

    def _start_episodes(self, games: np.ndarray) -> None:
        """New episodes in these slots: the learner's seat and, if drawn per episode, the opponents."""
        if self.learner_seat == "random":
            self.seats[games] = self.rng.integers(0, self.num_players, len(games))
        else:
            self.seats[games] = self.learner_seat
        if self._draw_assignment is not None:
            drawn = self._draw_assignment(games)
            self.assignment[games] = self._checked_assignment(drawn, len(games), len(self.policies), "assignment(games)")

    def _play_opponents(self, observations=None, masks=None, terminated=None, truncated=None) -> np.ndarray:
        """Let the opponents move in every running game until the learner is to act, and
        leave the learner's views in self.observations / self.masks. Returns what the
        learner's seat was paid meanwhile; episode flags are updated in place.

        Without flags (right after a reset) a game that the opponents finish before the
        learner's first decision is dealt again: that episode has no decision to credit.
        """
        if observations is None:
            observations, masks = self.engine.observe(), self.engine.legal_mask()
        paid = np.zeros(self.num_envs, np.float32)
        while True:
            current = self.engine.current_player
            waiting = (current >= 0) & (current != self.seats)
            if not waiting.any():
                self.observations, self.masks = observations, masks
                return paid
            games = np.flatnonzero(waiting)
            actions = np.full(self.num_envs, -1, np.int64)
            if len(self.policies) == 1:
                actions[games] = self._opponent_actions(0, observations[games], masks[games])
            else:  # one call per opponent, on every row it plays
                playing = self.assignment[games, current[games]]
                for index in np.unique(playing):
                    rows = games[playing == index]
                    actions[rows] = self._opponent_actions(index, observations[rows], masks[rows])
            observations, masks, rewards, ended, cut = self.engine.step_observe(actions, partial=True)
            paid += rewards[self._rows, self.seats]
            if terminated is not None:
                terminated |= ended
                truncated |= cut
            elif (ended | cut).any():
                restart = np.flatnonzero(ended | cut)
                paid[restart] = 0.0
                self.engine.reset(games=restart)
                self._start_episodes(restart)
                observations, masks = self.engine.observe(), self.engine.legal_mask()


    def _opponent_name(self, index: int) -> str:
        policy = self.policies[index]
        return f"opponent {type(policy).__name__}" + ("" if len(self.policies) == 1 else f" (policies[{index}])")

    def _opponent_actions(self, index: int, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """Policy ``index``'s actions for these rows, checked: a failure or an illegal answer names the policy."""
        try:
            actions = self.policies[index].act(observations, masks)
        except BaseException as error:
            error.add_note(f"raised by {self._opponent_name(index)} inside the env's step")
            raise
        try:
            actions = check_int_array(actions, "its actions", (len(masks),))
        except ValueError as error:
            raise ValueError(f"{self._opponent_name(index)} answered {len(masks)} rows with {error}") from None
        illegal = illegal_actions(actions, masks)
        if illegal.any():
            row = int(np.flatnonzero(illegal)[0])
            raise ValueError(f"{self._opponent_name(index)} returned an illegal action ({int(actions[row])}) in "
                             f"{int(illegal.sum())} of its {len(masks)} rows: its act() must pick actions its masks allow")
        return actions


def check_observation_dtype(observation_dtype) -> np.dtype:
    """The training envs' observation dtype, float32 or int8, as a numpy dtype; else ValueError."""
    try:
        dtype = np.dtype(observation_dtype)
    except TypeError as error:
        raise ValueError(f"observation_dtype must be np.float32 or np.int8, got {observation_dtype!r}") from error
    if dtype not in (np.dtype(np.float32), np.dtype(np.int8)):
        raise ValueError(f"observation_dtype must be np.float32 or np.int8, got {observation_dtype!r}")
    return dtype


class ObservationFormat:
    """How the adapters hand out the engine's int8 views: dtype, optional fixed scale, space.

    Args:
        num_players: seats per game (the layout depends on it).
        observation_dtype: ``np.float32`` (default of the adapters) or ``np.int8``.
        scale_observations: multiply by ``encoding.observation_scale(num_players)``
            (float32 only).
        critic_sees_hands: each observation is followed by the other seats' hidden
            hands (``encoding.hidden_hands``, scaled by ``hidden_hands_scale``), for a
            critic that reads them (``HPUnoVecEnv``).
    """

    def __init__(self, num_players: int, observation_dtype=np.float32, scale_observations: bool = False,
                 critic_sees_hands: bool = False):
        dtype = check_observation_dtype(observation_dtype)
        check_bool(scale_observations, "scale_observations")
        check_bool(critic_sees_hands, "critic_sees_hands")
        if scale_observations and dtype != np.float32:
            raise ValueError("scale_observations=True needs observation_dtype=np.float32 (scaled values are fractions)")
        self.dtype = dtype
        self.critic_sees_hands = bool(critic_sees_hands)
        scales = [observation_scale(num_players)] + ([hidden_hands_scale(num_players)] if critic_sees_hands else [])
        self.scale = np.concatenate(scales) if scale_observations else None
        # The engine's int8 views hold small counts and flags: 0..127 bounds every entry.
        high = np.full(sum(len(scale) for scale in scales), 127, np.float32)
        if self.scale is not None:
            high *= self.scale
        self.space = spaces.Box(np.zeros_like(high, dtype=dtype), high.astype(dtype), dtype=dtype)

    def __call__(self, observations: np.ndarray, hands: np.ndarray | None = None) -> np.ndarray:
        """A new array in this format (never a view of the engine's buffer). With critic_sees_hands, ``hands``
        are the other seats' hands (``hidden_hands``), or None where they are gone (zeros: a finished round's)."""
        if self.critic_sees_hands:
            if hands is None:
                hands = np.zeros((len(observations), self.space.shape[0] - observations.shape[1]), observations.dtype)
            observations = np.concatenate([observations, hands], axis=1)
        converted = observations.astype(self.dtype)  # astype copies
        if self.scale is not None:
            converted *= self.scale
        return converted
