"""``VectorEngine``: many games of Harry Potter UNO stepped together by the kernel.

This is the Python face of ``kernel.py``: it owns an ``EngineState`` and the
rules options, checks input, and turns arrays into the forms people read
(``game_state``, ``events``). Every adapter (the PettingZoo env, the vector
envs) drives one of these.

>>> eng = VectorEngine(num_games=4, num_players=2, seed=0)
>>> eng.reset()
>>> mask = eng.legal_mask()
>>> actions = np.array([np.flatnonzero(m)[0] for m in mask])
>>> rewards, terminated, truncated = eng.step(actions)
"""

from __future__ import annotations

import numba
import numpy as np

from . import heuristic, kernel, rollout, worlds
from .actions import action_name
from .cards import CARD_LABELS, COLORS, DECK_COPIES, NUM_ACTIONS, NUM_CARD_TYPES, check_deck_codes, deck_from_labels
from .encoding import OBS_DTYPE, full_state, observation_layout, observation_size, state_size
from ._checks import check_bool, check_index, check_indices, check_positive_int, check_seed, check_weights, is_int
from .options import RulesOptions, kernel_params


class _CompiledCall:
    """Call a kernel's compiled code directly, skipping numba's per-call argument typing.

    Numba types a NamedTuple argument in Python, about 12 us per call for the
    EngineState record: more than the work of one game's step. The engine
    always passes the same argument types, so after the first call has
    compiled (or loaded from cache) the kernel for them, later calls go
    straight to that compiled overload. Under NUMBA_DISABLE_JIT the kernel
    is plain Python and is called as it is.
    """

    def __init__(self, function):
        self.function = function
        self.entry_point = None

    def __call__(self, *args):
        if self.entry_point is not None:
            return self.entry_point(*args)
        result = self.function(*args)
        if hasattr(self.function, "overloads"):
            argument_types = tuple(numba.typeof(argument) for argument in args)
            self.entry_point = self.function.overloads[argument_types].entry_point
        return result


_reset_games = _CompiledCall(kernel.reset_games)
_legal_mask_games = _CompiledCall(kernel.legal_mask_games)
_observe_games = _CompiledCall(kernel.observe_games)
_step_games = _CompiledCall(kernel.step_games)


ROLLOUT_CHUNK = 32  # games played out together by one compiled rollout call


_rollout_games = _CompiledCall(rollout.rollout_games)


class VectorEngine:
    """``num_games`` independent games of ``num_players`` (2..10) under one set of rules.

    Args:
        num_games: games in the batch.
        num_players: seats per game, 2..10.
        seed: seeds every game's random generator (game i gets its own stream): None or an int in [0, 2**32).
        auto_reset: a finished game starts a fresh match inside the same
            ``step`` (the default, for training); with False it stays over
            (phase ``"over"``, ``current_player`` -1) until ``reset``.
        **rule_options: the fields of ``RulesOptions``.
    """

    def __init__(self, num_games: int = 1, num_players: int = 4, seed: int | None = None, auto_reset: bool = True, **rule_options):
        num_games = check_positive_int(num_games, "num_games")
        self.options = RulesOptions.from_kwargs(**rule_options)
        self.params = kernel_params(self.options, num_players)
        self.num_games = int(num_games)
        self.num_players = num_players = self.params.num_players  # checked, a Python int
        self.auto_reset = check_bool(auto_reset, "auto_reset")
        self.agents = [f"player_{i}" for i in range(num_players)]
        self.observation_layout = observation_layout(num_players)
        self.observation_size = observation_size(num_players)
        self.state_size = state_size(num_players)
        self.state = kernel.allocate_state(self.num_games, num_players)
        self._seed = check_seed(seed)  # checked now, not at the first reset
        self._seeded = False
        self._rewards = np.zeros((self.num_games, num_players), np.float32)
        self._terminated = np.zeros(self.num_games, np.bool_)
        self._truncated = np.zeros(self.num_games, np.bool_)
        self._bad = np.zeros(self.num_games, np.bool_)  # the kernel marks illegal actions; cleared after each report
        self._scratch_mask = np.zeros(NUM_ACTIONS, np.bool_)
        self._mask = np.zeros((self.num_games, NUM_ACTIONS), np.bool_)
        self._no_observations = np.zeros((0, self.observation_size), OBS_DTYPE)  # step() observes nothing
        self._all_games = np.arange(self.num_games, dtype=np.int64)
        self._make_one_game_buffers()
        # reset's "shuffle every deck" and "draw for dealer" of every game (the kernel only reads them)
        self._shuffles = np.full((self.num_games, 1), -1, np.int8)
        self._dealer_draws = np.full(self.num_games, -1, np.int64)
        # Games no reset has dealt yet hold no game: stepping or reading them is refused until one has.
        self._never_dealt = np.ones(self.num_games, np.bool_)
        self._all_dealt = False

    def _make_one_game_buffers(self) -> None:
        """``_step_one``'s action and outputs in the kernel's layout, with the int8 rows it copies out."""
        observations = np.zeros((1, self.observation_size), OBS_DTYPE)
        masks = np.zeros((1, NUM_ACTIONS), np.int8)
        self._one_game_buffers = (np.zeros(1, np.int64), observations, masks.view(np.bool_), observations[0], masks[0])

    # A copy (copy.deepcopy, pickle) would turn the buffers' views into separate arrays: it makes its own.

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["_one_game_buffers"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._make_one_game_buffers()

    # ------------------------------------------------------------ seeding and reset

    def seed(self, seed: int | None, games=None) -> None:
        """Give every game (or only ``games``) a fresh generator stream derived from seed (None: OS entropy).
        Game i's stream depends only on the seed and i, so reseeding some games leaves the others' as they are."""
        seed = check_seed(seed)
        words = np.random.SeedSequence(seed).generate_state(self.num_games * 4, np.uint32)
        if self.num_games == 1:  # the AEC env's reset(seed=s) before each game: one row, no array calls
            row = words.tolist()
            self.state.rng[0] = row if any(row) else [1, 0, 0, 0]  # xoshiro's one forbidden state
            self._seeded = True
            return
        words = words.reshape(self.num_games, 4).astype(np.int64)
        words[(words == 0).all(axis=1), 0] = 1  # xoshiro's one forbidden state
        if games is None:
            self.state.rng[:] = words
        else:
            games = check_indices(games, "games", self.num_games)
            self.state.rng[games] = words[games]
        self._seeded = True

    def generator_state(self, game: int = 0) -> list[int]:
        """Game's random generator state now: its four xoshiro128** words (ints below 2**32)."""
        return [int(word) for word in self.state.rng[self._game_index(game)]]

    def set_generator_state(self, game: int, words) -> None:
        """Set game's generator state (four ints below 2**32, not all 0): from here on its chance
        (shuffles, reshuffles, a starting Wild Draw Four's return) repeats what it did from
        that state, which is how game records replay. A later ``reset`` without a seed keeps it."""
        game = self._game_index(game)
        values = list(words) if isinstance(words, (list, tuple, np.ndarray)) else None
        if (
            values is None or len(values) != 4
            or not all(is_int(w) and 0 <= w < 2**32 for w in values)
            or not any(values)
        ):
            raise ValueError(f"generator state must be 4 ints in [0, 2**32), not all 0, got {words!r}")
        if not self._seeded:  # the other games get their own streams, as reset would give them
            self.seed(self._seed)
        self.state.rng[game] = values

    def _game_index(self, game) -> int:
        return check_index(game, "game", self.num_games)

    def reset(self, seed: int | None = None, options: dict | None = None, games=None) -> None:
        """Start a fresh match in every game (or only in ``games``, an index array).

        ``seed`` (None or an int in [0, 2**32)) reseeds the games reset, and only those: game i then
        plays the stream that ``reset(seed)`` of every game would give it. Without a seed each game
        goes on with its own stream (the first reset uses the constructor's seed).

        options:
            ``"deck"``: a stacked deck, 112 card labels (or codes) top first (108 for the
                classic deck), for every reset game; or one deck per reset game, shape (len(games), 112).
            ``"dealer"``: the first dealer's seat (else the draw for dealer decides).
        Other keys are ignored. Bad values raise ``ValueError`` and change nothing.
        """
        games = self._all_games if games is None else check_indices(games, "games", self.num_games)
        seed = check_seed(seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict or None (keys \"deck\", \"dealer\"), got {type(options).__name__}")
        options = options or {}
        decks = self._decks_option(options.get("deck"), len(games))
        dealer = options.get("dealer")
        if dealer is None:
            dealers = self._dealer_draws if len(games) == self.num_games else np.full(len(games), -1, np.int64)
        else:
            dealers = np.full(len(games), check_index(dealer, "dealer", self.num_players, "a seat"), np.int64)
        if not self._seeded and (seed is None or len(games) < self.num_games):
            self.seed(self._seed)  # every game's stream from the constructor's seed, before some are reseeded
        if seed is not None:
            self.seed(seed, None if games is self._all_games else games)
        _reset_games(self.state, self.params, games, decks, dealers)
        if not self._all_dealt:
            self._never_dealt[games] = False
            self._all_dealt = not self._never_dealt.any()

    def _require_dealt(self, call: str) -> None:
        """ValueError unless every game has been dealt by a reset (one bool test once they have)."""
        if not self._all_dealt:
            games = np.flatnonzero(self._never_dealt)
            raise ValueError(f"{call} before reset(): call reset() first (game(s) {games[:20].tolist()} not dealt yet)")

    def _decks_option(self, deck, count: int) -> np.ndarray:
        if deck is None:
            return self._shuffles if count == self.num_games else np.full((count, 1), -1, np.int8)
        array = np.asarray(deck)
        deck_name, size = self.options.deck, self.params.deck_size
        if array.ndim == 1:
            codes = deck_from_labels(array, deck_name) if array.dtype.kind in "UO" else np.asarray(array, np.int64)
            if array.dtype.kind not in "UO":
                check_deck_codes(codes, deck_name)
            return np.tile(codes.astype(np.int8), (count, 1))
        if array.ndim == 2 and array.shape[0] == count:
            rows = [self._decks_option(row, 1)[0] for row in array]
            return np.stack(rows) if rows else np.zeros((0, size), np.int8)
        raise ValueError(f"deck must be {size} cards, or one deck per reset game ({count}, {size}); got shape {array.shape}")

    # ------------------------------------------------------------ stepping

    @property
    def current_player(self) -> np.ndarray:
        """Seat to act in each game (-1 for a finished game without auto-reset)."""
        return self.state.current_player

    def legal_mask(self) -> np.ndarray:
        """(num_games, 75) bool: the legal actions of the player to act. A fresh array."""
        self._require_dealt("legal_mask()")
        _legal_mask_games(self.state, self.params, self._mask)
        return self._mask.copy()

    def observe(self, seats=None) -> np.ndarray:
        """(num_games, observation_size) int8: each game's acting player's view, or the view
        of ``seats[g]`` in game g (all zeros where the seat is -1). A fresh array."""
        self._require_dealt("observe()")
        if seats is None:
            seats = self.state.current_player
        else:
            seats = np.asarray(seats)
            if (
                seats.shape != (self.num_games,) or seats.dtype.kind not in "iu"
                or seats.min() < -1 or seats.max() >= self.num_players
            ):
                raise ValueError(f"seats must be {self.num_games} ints in [-1, {self.num_players})")
            seats = seats.astype(np.int8)
        observations = np.empty((self.num_games, self.observation_size), OBS_DTYPE)
        _observe_games(self.state, self.params, seats, observations)
        return observations

    def state_vector(self) -> np.ndarray:
        """(num_games, state_size) int8: full information (all hands), for centralised critics."""
        self._require_dealt("state_vector()")
        return full_state(self.state, self.num_players, self.options.target_score)

    def step(self, actions, partial: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every game takes one action; returns (rewards, terminated, truncated).

        With ``partial=True`` an action of -1 leaves that game as it is (for
        drivers that move only some games, such as the training envs).

        rewards: (num_games, num_players) float32, for every seat. With auto-reset,
        finished games already hold a fresh match; the outputs describe the
        finished one. An illegal action anywhere raises ``ValueError`` naming
        the games, and no game changes.
        """
        self._step(actions, partial, False, self._no_observations, self._mask)
        return self._rewards.copy(), self._terminated.copy(), self._truncated.copy()

    def step_observe(self, actions, partial: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``step``, then ``observe()`` and ``legal_mask()`` of the games as they now stand,
        in one kernel call: (observations, masks, rewards, terminated, truncated)."""
        observations = np.empty((self.num_games, self.observation_size), OBS_DTYPE)
        masks = np.empty((self.num_games, NUM_ACTIONS), np.bool_)
        self._step(actions, partial, True, observations, masks)
        return observations, masks, self._rewards.copy(), self._terminated.copy(), self._truncated.copy()

    def _step(self, actions, partial: bool, observe: bool, observations: np.ndarray, masks: np.ndarray) -> None:
        """The kernel's step (with observe, also the new views and masks), or ValueError and no change."""
        self._require_dealt("step_observe()" if observe else "step()")
        if not (type(actions) is np.ndarray and actions.dtype == np.int64 and actions.shape == (self.num_games,)
                and actions.flags.c_contiguous):  # the kernel's own layout (the AEC env's every step) needs no copy
            actions = np.asarray(actions)
            if actions.shape != (self.num_games,) or actions.dtype.kind not in "iu":
                raise ValueError(f"actions must be an int array of shape ({self.num_games},), got {actions.dtype} {actions.shape}")
            actions = np.ascontiguousarray(actions, dtype=np.int64)
        if partial is not False:
            partial = check_bool(partial, "partial")
        illegal = _step_games(
            self.state, self.params, actions, self._rewards, self._terminated, self._truncated,
            self.auto_reset, self._bad, partial, self._scratch_mask, observe, observations, masks,
        )
        self._raise_if_illegal(illegal, actions)

    def _raise_if_illegal(self, illegal: int, actions: np.ndarray) -> None:
        if illegal:
            games = np.flatnonzero(self._bad)
            self._bad[:] = False
            details = ", ".join(f"game {g}: {action_name(actions[g])}" for g in games[:5])
            raise ValueError(f"illegal action in {len(games)} game(s) {games[:20].tolist()} ({details})")

    def _step_one(self, action: int) -> tuple[np.ndarray, np.ndarray]:
        """``step_observe`` of game 0, for the AEC env's every step: it takes ``action`` (an int in
        [0, 75)) and the new (observation, mask) come back as fresh 1-D arrays, the mask as int8; the
        step's rewards, terminated and truncated are left in ``_rewards``, ``_terminated`` and
        ``_truncated`` until the next step. An illegal action raises ``ValueError`` and changes nothing.

        It is ``step_observe`` without what one game does not need (the action array's checks, the
        dispatcher's typing, new 2-D outputs and their copies): a few microseconds of each AEC step."""
        if not self._all_dealt:
            self._require_dealt("step_observe()")
        actions, observations, masks, observation, mask = self._one_game_buffers
        actions[0] = action
        illegal = (_step_games.entry_point or _step_games)(
            self.state, self.params, actions, self._rewards, self._terminated, self._truncated,
            self.auto_reset, self._bad, False, self._scratch_mask, True, observations, masks,
        )
        if illegal:
            self._raise_if_illegal(illegal, actions)
        return observation.copy(), mask.copy()

    # ------------------------------------------------------------ reading a game

    def game_state(self, game: int = 0) -> dict:
        """One game as a plain JSON-serialisable dict.

        Keys: ``current`` (agent to act, None when over), ``phase`` (``"color"``, ``"play"``,
        ``"drawn"``, ``"target"``, ``"challenge"``, ``"catch"``, ``"stack"``, ``"jump"``, ``"over"``), ``hands`` ({agent:
        labels in CARD_LABELS order}), ``top``, ``color`` (None while a wild's colour is
        unnamed), ``direction`` (1 left, -1 right), ``draw_pile`` (top first), ``discard``
        (bottom first), ``scores`` (match totals), ``dealer``, ``round`` (from 1),
        ``uno_called`` ({agent: standing call}) and ``pending_draw`` (cards the next player
        must draw for Draw Two / Wild Draw Four cards played, docs/rules.md §15.2).
        """
        self._require_dealt("game_state()")
        s, g = self.state, self._game_index(game)
        seat_name = self.agents
        phase = int(s.phase[g])
        color = int(s.current_color[g])
        return {
            "current": None if phase == kernel.OVER else seat_name[int(s.current_player[g])],
            "phase": kernel.PHASE_NAMES[phase],
            "hands": {
                seat_name[p]: [CARD_LABELS[c] for c in np.repeat(np.arange(len(CARD_LABELS)), s.hands[g, p])]
                for p in range(self.num_players)
            },
            "top": CARD_LABELS[int(s.discard[g, s.discard_count[g] - 1])],
            "color": None if color < 0 else COLORS[color],
            "direction": int(s.direction[g]),
            "draw_pile": [CARD_LABELS[c] for c in s.draw_pile[g, : s.draw_count[g]][::-1]],
            "discard": [CARD_LABELS[c] for c in s.discard[g, : s.discard_count[g]]],
            "scores": {seat_name[p]: int(s.scores[g, p]) for p in range(self.num_players)},
            "dealer": seat_name[int(s.dealer[g])],
            "round": int(s.round_number[g]),
            "uno_called": {seat_name[p]: bool(s.uno_called[g, p]) for p in range(self.num_players)},
            "pending_draw": int(s.pending_draw[g]),
        }

    def events(self, game: int = 0) -> list[tuple[int, int, int, int]]:
        """What the last step (or reset) did in one game: (kind, a, b, c) tuples, see kernel.EV_*."""
        game = self._game_index(game)
        count = int(self.state.event_count[game])
        return [tuple(int(x) for x in row) for row in self.state.events[game, :count]]

    def round_deck(self, game: int = 0) -> list[str]:
        """The deck this round was dealt from, top first (replays a round with options={"deck": ...})."""
        return [CARD_LABELS[c] for c in self.state.round_deck[self._game_index(game), : self.params.deck_size]]

    def last_reshuffle(self, game: int = 0) -> list[str] | None:
        """The draw pile the last step's reshuffle made (top first), or None if there was none."""
        game = self._game_index(game)
        if not any(e[0] == kernel.EV_RESHUFFLE for e in self.events(game)):
            return None
        return [CARD_LABELS[c] for c in self.state.reshuffled[game] if c >= 0]

    def state_bytes_per_game(self) -> int:
        return sum(array[0].nbytes for array in self.state)

    # ------------------------------------------------------------ copies for search (hpuno_env.worlds)

    def _fresh_like(self, num_games: int) -> VectorEngine:
        """An engine of num_games slots with these rules, player count and auto-reset; every slot idle."""
        twin = VectorEngine(num_games, self.num_players, seed=None, auto_reset=self.auto_reset, **self.options.as_dict())
        twin._seeded = True  # every copy brings its own generator state
        twin.leave_idle(np.arange(num_games))
        return twin

    def _games_argument(self, games, name: str = "games") -> np.ndarray:
        return self._all_games if games is None else check_indices(games, name, self.num_games)

    def _slots_argument(self, slots, count: int | None = None) -> np.ndarray:
        slots = self._games_argument(slots, "slots")
        if len(np.unique(slots)) != len(slots) or (count is not None and len(slots) != count):
            raise ValueError(f"slots must be {'' if count is None else f'{count} '}distinct game indices, got {slots!r}")
        return slots

    def _source_games(self, source: VectorEngine, games) -> np.ndarray:
        if not isinstance(source, VectorEngine):
            raise ValueError(f"source must be a VectorEngine, got {type(source).__name__}")
        if source.num_players != self.num_players or source.options != self.options:
            raise ValueError("source must have this engine's num_players and rules options")
        source._require_dealt("copying games")
        return source._games_argument(games)

    def clone(self, games=None) -> VectorEngine:
        """A new engine holding exact copies of ``games`` (all by default), same options; stepping
        one never touches the other."""
        games = self._source_games(self, games)
        if len(games) == 0:
            raise ValueError("games is empty: a clone holds at least one game")
        twin = self._fresh_like(len(games))
        twin.copy_games_into(np.arange(len(games)), self, games)
        return twin

    def copy_games_into(self, slots, source: VectorEngine, games) -> None:
        """In place: slot ``slots[i]`` of this engine becomes an exact copy of game ``games[i]`` of
        ``source`` (same rules and player count; source may be this engine)."""
        games = self._source_games(source, games)
        slots = self._slots_argument(slots, len(games))
        worlds.copy_games(self.state, slots, source.state, games)
        self._mark_dealt(slots)

    def determinize(self, game: int, count: int, viewer: int | None = None, seed: int | None = None,
                    evidence: bool = False, weights=None) -> VectorEngine:
        """A new engine of ``count`` worlds of game ``game`` as ``viewer`` (a seat; default the seat to
        act) knows it: what the viewer has not seen is dealt again at random (``hpuno_env.worlds``
        says what is kept and the table ``worlds.HIDDEN`` what is redone); one seed, one set of worlds.
        ``evidence=True``: a seat that drew by choice while a colour was current is dealt none of it
        where the unseen cards allow (right when that seat plays whenever it can, as the heuristic does).
        ``weights`` (num_players, 55): each other seat's cards are drawn in proportion to its row's weight of their
        kind against the draw pile (a belief's odds; ones: uniform); not with ``evidence``."""
        count = check_positive_int(count, "count")
        twin = self._fresh_like(count)
        twin.determinize_into(np.arange(count), self, game, viewer, seed, evidence, weights)
        return twin

    def determinize_into(self, slots, source: VectorEngine, game: int, viewer: int | None = None, seed: int | None = None,
                         evidence: bool = False, weights=None) -> None:
        """In place: ``slots`` of this engine become worlds of ``source``'s game (``determinize``)."""
        game = int(self._source_games(source, [source._game_index(game)])[0])
        slots = self._slots_argument(slots)
        viewer = self._viewer_argument(source, game, viewer)
        seed = check_seed(seed)
        evidence = check_bool(evidence, "evidence")
        if weights is not None:
            weights = check_weights(weights, "weights", (self.num_players, NUM_CARD_TYPES))
            if evidence:
                raise ValueError("give weights or evidence=True, not both (weights say all a deal uses)")
        worlds.determinize_games(self.state, slots, source.state, game, viewer, seed, self.options.wd4_bluffing,
                                 evidence=evidence, weights=weights)
        self._mark_dealt(slots)

    def load_view(self, slot: int, observation) -> None:
        """In place: slot ``slot`` becomes a game that shows ``observation`` (an ``observe()`` row of a
        game under these rules) to seat 0, the seat to act; the hidden cards lie in card order, so
        ``determinize_into(..., viewer=0)`` from it gives worlds. What the view leaves out is in
        ``worlds.write_view``."""
        slot = self._game_index(slot)
        observation = np.asarray(observation)
        if observation.shape != (self.observation_size,) or observation.dtype.kind not in "iu":
            raise ValueError(f"observation must be {self.observation_size} ints (an observe() row), got {observation.dtype} {observation.shape}")
        scratch = kernel.allocate_state(1, self.num_players)
        worlds.write_view(scratch, 0, observation, self.num_players, self.options.target_score, DECK_COPIES[self.options.deck])
        worlds.copy_games(self.state, np.array([slot]), scratch, np.array([0]))
        self._mark_dealt(np.array([slot]))

    def leave_idle(self, slots) -> None:
        """Slots hold no game in play (phase over, no seat to act) until a copy or reset fills them:
        ``step(..., partial=True)`` with action -1 passes over them, masks and views are empty."""
        slots = self._slots_argument(slots)
        self.state.phase[slots] = kernel.OVER
        self.state.current_player[slots] = -1
        self._mark_dealt(slots)

    def _mark_dealt(self, slots: np.ndarray) -> None:
        if not self._all_dealt:
            self._never_dealt[slots] = False
            self._all_dealt = not self._never_dealt.any()

    def _viewer_argument(self, source: VectorEngine, game: int, viewer) -> int:
        if viewer is None:
            viewer = int(source.state.current_player[game])
            if viewer < 0:
                raise ValueError(f"game {game} is over: no seat to act, so name the viewer")
        return check_index(viewer, "viewer", self.num_players, "a seat")

    def rollout(self, policies="heuristic", games=None, max_steps: int = 1_000_000, heuristic_weights: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Play ``games`` (all by default; over or idle ones are passed over) to the end of their
        round in one compiled call (``hpuno_env.rollout``): ``policies`` names the built-in policy
        of every seat (``"random"``, ``"random-play"``, ``"heuristic"``), or one per seat. Returns
        (winners, decisions), one entry per listed game: the round's winning seat (-1 when
        truncated by max_turns, or still going after max_steps steps of the batch) and the
        decisions taken. The games are left where the round ended (a match continues in them).
        ``heuristic_weights`` overrides entries of the heuristic's weight table by name
        (``hpuno_env.heuristic.heuristic_weights``)."""
        games = self._games_argument(games)
        if isinstance(policies, str):
            names = [policies] * self.num_players
        else:
            names = list(policies) if isinstance(policies, (list, tuple, np.ndarray)) else []
        if len(names) != self.num_players or any(name not in rollout.POLICY_NAMES for name in names):
            raise ValueError(f"policies must be one of {rollout.POLICY_NAMES} or {self.num_players} of them, got {policies!r}")
        max_steps = check_positive_int(max_steps, "max_steps")
        self._require_dealt("rollout()")
        weights = heuristic.heuristic_weights(self.num_players, heuristic_weights)
        playing = np.zeros(self.num_games, np.bool_)
        playing[games] = True
        seat_policies = np.tile(np.array([rollout.POLICY_NAMES.index(name) for name in names], np.int8), (self.num_games, 1))
        winners = np.full(self.num_games, -1, np.int8)
        decisions = np.zeros(self.num_games, np.int64)
        # In chunks of games, each played out in lockstep: a chunk's state stays in the CPU's caches,
        # and the short rounds of a chunk do not wait on the longest round of the whole batch.
        for start in range(0, self.num_games, ROLLOUT_CHUNK):
            chunk = slice(start, min(start + ROLLOUT_CHUNK, self.num_games))
            if playing[chunk].any():
                _rollout_games(
                    kernel.EngineState(*(field[chunk] for field in self.state)), self.params, playing[chunk],
                    seat_policies[chunk], weights, int(max_steps), winners[chunk], decisions[chunk],
                    *self._rollout_scratch(chunk.stop - chunk.start),
                )
        return winners[games].astype(np.int64), decisions[games]

    def _rollout_scratch(self, G: int) -> tuple:
        """Scratch arrays of rollout() for a chunk of G games, made once per engine and size."""
        buffers = self.__dict__.setdefault("_rollout_buffers", {})
        if G not in buffers:
            buffers[G] = (
                np.zeros(G, np.int64), np.zeros((G, self.num_players), np.float32), np.zeros(G, np.bool_),
                np.zeros(G, np.bool_), np.zeros(G, np.bool_), np.zeros(NUM_ACTIONS, np.bool_),
                np.zeros((G, NUM_ACTIONS), np.bool_), np.zeros((G, self.observation_size), OBS_DTYPE),
                np.zeros(NUM_ACTIONS, np.float32), np.zeros(256, np.float32),
            )
        return buffers[G]
