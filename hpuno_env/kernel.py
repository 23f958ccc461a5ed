"""The rules of Harry Potter UNO, once: a compiled kernel over a batch of games.

A batch is an ``EngineState``: a record of numpy arrays whose first axis is
the game (struct of arrays). Every function here is a plain scalar function
of one game ``g`` of that record, compiled with ``numba.njit`` and cached on
disk (see "the on-disk cache" below); the entry points (``reset_games``,
``step_games``, ``legal_mask_games``, ``observe_games``) loop over the games. With ``NUMBA_DISABLE_JIT=1`` the
very same code runs as ordinary Python, which is how to debug a rule
(tests/env/test_pure_python.py keeps the two identical).

Every compiled function of the rules lives in this one file: a compiled
caller keeps a copy of the compiled functions it calls, and the cache of each
function here is keyed by this file and the modules it imports from (see "the
on-disk cache" below). The one other compiled module, ``rollout.py`` (the
built-in policies and the rollout loop, which calls ``step_games``), is a
caller of this file, not a second home of rules; its cache is keyed by its
own sources and everything it imports, this file included
(``stamped_function_cache``), so an edited rule recompiles it too and it never
runs an old copy.

Piles are stacks: ``draw_pile[g, :draw_count[g]]`` holds the draw pile with
its *top card last*, ``discard[g, :discard_count[g]]`` the discard pile with
its top card last. Hands are counts per card type.

The rules are those of ``docs/rules.md``; the comments below name its sections (§n).
Randomness comes from a per-game xoshiro128** generator kept in
``EngineState.rng``, so a game's future depends only on its own seed.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import sys
from typing import NamedTuple

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

try:  # numba internals that the on-disk cache below builds on
    from numba.core.caching import CompileResultCacheImpl, FunctionCache
except ImportError as error:  # pragma: no cover - only on a numba that moved them
    raise ImportError(
        f"hpuno_env.kernel needs numba.core.caching.FunctionCache and CompileResultCacheImpl "
        f"(numba 0.59 .. 0.68 have them; this is numba {numba.__version__})"
    ) from error

from .cards import (
    CARD_COLOR,
    CARD_DEALER_VALUE,
    CARD_POINTS,
    CARD_RANK,
    CATCH,
    CHALLENGE,
    ACCEPT,
    COLOR_BASE,
    DECK_SIZE,
    DRAW,
    DRAW2_RANK,
    FULL_DECK,
    KEEP,
    MAX_TARGETS,
    NUM_ACTIONS,
    NUM_CARD_TYPES,
    PASS,
    REVERSE_RANK,
    SKIP_RANK,
    SORTING_HAT,
    TARGET_BASE,
    UNO,
    WILD,
    WILD_DRAW4,
)

# ---------------------------------------------------------------- the on-disk cache
#
# numba freezes the globals a compiled function reads (CARD_POINTS, WILD, ...)
# into the machine code it caches, and judges a cache entry fresh by the stamp
# of the function's own file only (numba 0.59: its mtime and size; later: a
# hash of its contents). Edit a table in cards.py, or upgrade the package over
# old cache files, and numba would load code that still scores the old points.
# So every function here gets a cache whose stamp is numba's own stamp plus a
# hash of the contents of this file and of every module of this package it
# imports from, found by reading the imports (today: cards.py; the options
# arrive as arguments, KernelParams). Edit any of them and the next run
# recompiles; numba overwrites the stale index in place.
#
# The numba internals this relies on, present from 0.59 (pyproject's floor)
# to 0.68 at least: Dispatcher._cache (what njit(cache=True) sets through
# enable_caching), numba.core.caching.FunctionCache and CompileResultCacheImpl
# (the class that cache builds, with _impl_class naming it), CacheImpl._locator
# (the locator numba chose: NUMBA_CACHE_DIR, __pycache__ or a user-wide
# directory) and the locator's get_source_stamp(), which the cache stores in
# its index and compares on every load. A numba without them makes this
# module raise ImportError saying so, rather than cache stale rules.


def _rules_source_files(root: str = __name__) -> dict[str, str]:
    """Module root (this one by default) and every module of its package it imports from, transitively: name -> file."""
    package = __package__.partition(".")[0]
    found: dict[str, str] = {}
    pending = [root]
    while pending:
        module = sys.modules[pending.pop()]
        found[module.__name__] = module.__file__
        with open(module.__file__, "rb") as source:
            tree = ast.parse(source.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                base = importlib.util.resolve_name("." * node.level + (node.module or ""), module.__package__)
                names = ([base] if node.module else []) + [f"{base}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            # Imported values are in sys.modules by now; "module.VALUE" names are not modules.
            pending += [name for name in names if name.partition(".")[0] == package and name in sys.modules and name not in found]
    return found


def _rules_source_hash(files: dict[str, str]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        with open(files[name], "rb") as source:
            digest.update(name.encode() + b"\0" + source.read() + b"\0")
    return digest.hexdigest()


RULES_SOURCE_FILES = _rules_source_files()
RULES_SOURCE_HASH = _rules_source_hash(RULES_SOURCE_FILES)


class _RulesStampedLocator:
    """numba's chosen cache locator, its source stamp extended by a hash of sources (RULES_SOURCE_HASH)."""

    def __init__(self, locator, source_hash: str):
        self._locator = locator
        self._source_hash = source_hash

    def get_source_stamp(self):
        return (self._locator.get_source_stamp(), self._source_hash)

    def __getattr__(self, name):  # cache path, disambiguator, _py_file, ...: numba's own
        return getattr(self._locator, name)


class _RulesCacheImpl(CompileResultCacheImpl):
    source_hash = RULES_SOURCE_HASH

    def __init__(self, py_func):
        super().__init__(py_func)
        if not hasattr(self, "_locator"):
            raise ImportError(f"hpuno_env.kernel: numba {numba.__version__}'s CacheImpl has no _locator to stamp")
        self._locator = _RulesStampedLocator(self._locator, self.source_hash)


COMPILING_MESSAGE = ("hpuno-env: compiling its numba functions (the rules kernel, the heuristic) for this machine "
                     "(1-3 minutes on 2 cores, once: later processes load them from numba's cache in a second or two)")
_announced_compiling = False


class RulesFunctionCache(FunctionCache):
    """numba's FunctionCache for a kernel function, fresh only while the rules' sources are unchanged.

    The first cache miss of a process says on stderr that a compile is under way: it is the longest silent wait
    a new user meets."""

    _impl_class = _RulesCacheImpl

    def load_overload(self, sig, target_context):
        global _announced_compiling
        loaded = super().load_overload(sig, target_context)
        if loaded is None and not _announced_compiling:
            _announced_compiling = True
            print(COMPILING_MESSAGE, file=sys.stderr, flush=True)
        return loaded


def stamped_function_cache(source_hash: str) -> type:
    """A RulesFunctionCache class keyed by source_hash instead: for compiled modules beside this
    one (``heuristic.py``, ``rollout.py``), stamped with the hash of their own sources and imports."""
    impl_class = type("_StampedCacheImpl", (_RulesCacheImpl,), {"source_hash": source_hash})
    return type("StampedFunctionCache", (RulesFunctionCache,), {"_impl_class": impl_class})


def _compiled(cache_class=RulesFunctionCache, **options):
    """numba.njit(**options) with the on-disk cache keyed by the rules' sources (see above).
    Under NUMBA_DISABLE_JIT njit returns the plain function, which needs no cache."""
    compile_lazily = numba.njit(**options)

    def decorate(py_func):
        dispatcher = compile_lazily(py_func)
        if dispatcher is not py_func:
            if not hasattr(dispatcher, "_cache"):
                raise ImportError(f"hpuno_env.kernel: numba {numba.__version__}'s dispatchers have no _cache to replace")
            dispatcher._cache = cache_class(py_func)  # what enable_caching() does, with our stamp
        return dispatcher

    return decorate


# Compiled without numba's reference counting (_nrt=False): every call passing
# the EngineState record would otherwise count its 40 array references up and
# down, which measured 2.5x the work of a legal mask. So nothing in the kernel
# allocates; scratch space lives in the state.
jit = _compiled(_nrt=False)
# Helpers on the common path are inlined where they are called: a call that
# passes the record costs ~70 ns (its fields travel as some 300 arguments).
# Inlining has its own price, paid at compile time: numba copies the callee's
# whole IR once per block of it, per call site. So big helpers are inlined at
# one call site each (apply_action, end_turn and apply_card_effect return what
# is left of the turn to step_games instead of calling each other), small ones
# anywhere, and rare work (reshuffle, deal_round, finish_round) stays a call.
leaf = _compiled(_nrt=False, inline="always")


# ---------------------------------------------------------------- prefetching

# A batch loop that reads rows picked by each game's seat to act (its hand, the
# hands shown to it) starts loading them this many games ahead: on its own the
# CPU meets each game's rows one cache miss at a time (measured: the shown
# hands alone were ~100 ns of a 4-player observation at 4096 games).
PREFETCH_AHEAD = 8


def _prefetch_typer(typingctx, array, byte_offset):
    """prefetch(array, byte_offset): ask the CPU to start loading the cache line at
    that byte of array's data (LLVM's llvm.prefetch); no effect on results."""
    if not isinstance(array, types.Array) or not isinstance(byte_offset, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        address = builder.gep(builder.bitcast(data, ir.IntType(8).as_pointer()), [args[1]])
        i32 = ir.IntType(32)
        function_type = ir.FunctionType(ir.VoidType(), [address.type, i32, i32, i32])
        llvm_prefetch = builder.module.declare_intrinsic("llvm.prefetch", [address.type], function_type)
        builder.call(llvm_prefetch, [address, i32(0), i32(3), i32(1)])  # read, keep in all caches, data
        return context.get_dummy_value()

    return types.void(array, byte_offset), codegen


if numba.config.DISABLE_JIT:
    def prefetch(array, byte_offset):
        pass
else:
    prefetch = intrinsic(_prefetch_typer)


@leaf
def prefetch_all(view):
    """Start loading every cache line of a contiguous view."""
    for offset in range(0, view.size * view.itemsize, 64):
        prefetch(view, offset)


# Phases (game_state() spells them out with PHASE_NAMES). The house rules' phases
# (docs/rules.md §15) come after the base game's: the observation's "phase" one-hot
# covers the NUM_PHASES base phases, "house_phase" the other two.
PLAY, DRAWN, COLOR, TARGET, CHALLENGE_PHASE, CATCH_PHASE, OVER, STACK_PHASE, JUMP_PHASE = range(9)
PHASE_NAMES = ("play", "drawn", "color", "target", "challenge", "catch", "over", "stack", "jump")
NUM_PHASES = 7

# uno_catch / scoring / episode / reward codes (indices of the tuples in options.py).
CATCH_WINDOW, CATCH_ALWAYS, CATCH_OFF = 0, 1, 2
SCORING_WINNER, SCORING_LOWEST = 0, 1
EPISODE_ROUND, EPISODE_MATCH = 0, 1
REWARD_WIN, REWARD_POINTS = 0, 1

# Events: what happened during the last step of a game, for rendering and logs.
# Each event is (kind, a, b, c); the meaning of a, b, c is given per kind.
# The room for one step's events. The longest step is a draw until playable (§15.5) through the whole deck:
# at most 112 draws, the empty draw that ends it and one reshuffle (after one, the discard pile is its top card
# alone until the turn ends); every other event of a step, a new round's deal included, adds fewer than 30,
# except the returns of a starting Wild Draw Four, each a chance below 1 in 10 (4 of the 41 or more cards left
# after a 10-player deal): 256 leaves room for more than a hundred of those in a row.
MAX_EVENTS = 256
EV_PLAY = 1  # seat a played card b
EV_DRAW = 2  # seat a drew card b by choice (-1: nothing left to draw)
EV_KEEP = 3  # seat a kept the card it drew
EV_COLOR = 4  # seat a named colour b
EV_HAT = 5  # seat a drew b cards until card c (-1: piles ran out)
EV_PENALTY = 6  # seat a drew b cards; c: 0 Draw Two, 1 Wild Draw Four, 2 guilty of a bluff,
#                 3 lost a challenge, 4 not calling UNO, 5 a starting Draw Two
EV_SKIPPED = 7  # seat a lost its turn
EV_UNO = 8  # seat a called UNO
EV_CATCH = 9  # seat a caught seat b not calling UNO
EV_PASS = 10  # seat a let seat b go
EV_CHALLENGE = 11  # seat a challenged seat b's Wild Draw Four; c: 1 guilty, 0 innocent
EV_ACCEPT = 12  # seat a accepted a Wild Draw Four (c = 0) or a stack of Draw Twos (c = 1)
EV_RESHUFFLE = 13  # the discard pile (a cards) became the draw pile
EV_ROUND_END = 14  # seat a won the round, scoring b points
EV_MATCH_END = 15  # seat a won the match
EV_NEW_ROUND = 16  # round a starts, dealt by seat b, starting card c
EV_WD4_RETURN = 17  # a starting Wild Draw Four went back into the draw pile, a cards from the top
EV_TRUNCATED = 18  # the round hit max_turns
EV_TARGET = 19  # seat a aimed its Sorting Hat at seat b
EV_DIRECTION = 20  # play now goes a (1 left, -1 right)
EV_STACK = 21  # seat a stacked card b on a pending draw of c cards
EV_JUMP = 22  # seat a jumped in with card b
EV_NO_JUMP = 23  # seat a did not jump in
EV_SWAP = 24  # seats a and b swapped hands (a Seven)
EV_ROTATE = 25  # every hand passed to the next seat in direction a (a Zero)

# The round's public history (observation layout 4, field "history"): the last HISTORY_LENGTH public events of
# the round, recorded from each step's events (record_history), HISTORY_ENTRY int8 values an event: kind (HIST_*;
# 0 for an empty slot), actor (1 + its seat counted to the viewer's left, 1 being the viewer itself; 0 for none),
# card (1 + the card's code where the card is public; 0 for none) and value (per kind, below). In the
# observation the oldest comes first and the newest last; while the round has fewer, the empty slots come first.
# Only what every seat saw: never a drawn card (another seat's, or the viewer's own, which its hand shows), never
# a declined jump (a window opens only for a holder of the twin, so the pass would tell who holds it), never a
# hand shown by a challenge (that is revealed_hands, its challenger's alone). Left out as told by the events
# kept: skips, direction changes (a Reverse's play), the Sorting Hat's target (its HIST_HAT), the round's start
# and end. Each seat's ring is kept in its own codes (seats counted to its left), so a view copies it as it is.
HISTORY_LENGTH = 64  # a power of two: ring positions are a bit mask
HISTORY_ENTRY = 4
assert HISTORY_LENGTH & (HISTORY_LENGTH - 1) == 0
HIST_PLAY = 1  # actor played card
HIST_DRAW = 2  # actor drew by choice; value: cards drawn (more than 1 under draw until playable, 0: none left)
HIST_KEEP = 3  # actor kept the card it drew
HIST_COLOR = 4  # actor named a colour; value: 1 + the colour (1 red .. 4 blue)
HIST_FORCED = 5  # actor was made to draw (a Draw Two, a Wild Draw Four, a challenge, a caught UNO); value: cards
HIST_HAT = 6  # actor, a Sorting Hat's target, drew until a Gryffindor card; value: cards drawn
HIST_UNO = 7  # actor called UNO
HIST_CATCH = 8  # actor caught a seat not calling UNO; value: that seat (1 + its seat to the viewer's left)
HIST_PASS = 9  # actor let a seat not calling UNO go; value: that seat, as for HIST_CATCH
HIST_CHALLENGE = 10  # actor challenged a Wild Draw Four; value: 1 innocent, 2 guilty
HIST_ACCEPT = 11  # actor accepted a pending draw; value: 1 a Wild Draw Four, 2 a stack of Draw Twos
HIST_STACK = 12  # actor stacked card on a pending draw; value: the pending draw before it
HIST_JUMP = 13  # actor jumped in with card
HIST_SWAP = 14  # actor swapped hands (a Seven) with a seat; value: that seat, as for HIST_CATCH
HIST_ROTATE = 15  # every hand passed on (a Zero); value: 1 to the left, 2 to the right
HIST_RESHUFFLE = 16  # the discard pile became the draw pile; value: its cards (at most 127)
NUM_HISTORY_KINDS = 16
SEAT_VALUED_KINDS = (HIST_CATCH, HIST_PASS, HIST_SWAP)  # kinds whose value is a seat

# What is left of a turn after an action (apply_action, play_card, end_turn return
# it to step_games, so that each of those is inlined at one call site).
DONE, END_TURN, CARD_EFFECT = range(3)

REASON_DRAW2, REASON_WD4, REASON_GUILTY, REASON_INNOCENT, REASON_UNO, REASON_START = range(6)

_MASK32 = 0xFFFFFFFF


class EngineState(NamedTuple):
    """The state of ``G`` games of ``P`` players, one array per field, games on axis 0."""

    hands: np.ndarray  # (G, P, 55) int8: copies of each card type in each hand
    hand_sizes: np.ndarray  # (G, P) int16
    draw_pile: np.ndarray  # (G, 112) int8: card types, top card at draw_count - 1
    draw_count: np.ndarray  # (G,) int16
    discard: np.ndarray  # (G, 112) int8: card types, top card at discard_count - 1
    discard_count: np.ndarray  # (G,) int16
    discard_counts: np.ndarray  # (G, 55) int8: copies of each card type on the discard pile
    current_color: np.ndarray  # (G,) int8: 0..3, -1 while a wild's colour is to be named
    direction: np.ndarray  # (G,) int8: +1 left (to higher seats), -1 right
    phase: np.ndarray  # (G,) int8: PLAY .. OVER
    current_player: np.ndarray  # (G,) int8: the seat to act
    turn_player: np.ndarray  # (G,) int8: the seat whose turn is being resolved
    turn_card: np.ndarray  # (G,) int8: the card that seat played this turn, -1 none
    drawn_card: np.ndarray  # (G,) int8: the card drawn in the DRAWN phase, -1 none
    starting_wild: np.ndarray  # (G,) bool: the COLOR phase names the starting card's colour
    uno_called: np.ndarray  # (G, P) bool: a call that stands until the caller's next turn
    wd4_player: np.ndarray  # (G,) int8: who played the Wild Draw Four being answered
    wd4_prev_color: np.ndarray  # (G,) int8: the colour current before it
    wd4_guilty: np.ndarray  # (G,) bool: its player held a card of that colour
    catch_offender: np.ndarray  # (G,) int8: the seat that may be caught in a catch window
    pending_draw: np.ndarray  # (G,) int16: cards the next player must draw for Draw Two / Wild Draw Four cards played
    jump_next: np.ndarray  # (G,) int8: in a jump window, the seat whose turn begins if no one jumps
    hands_swapped: np.ndarray  # (G,) bool: this turn's Seven or Zero moved hands (no catch window follows)
    revealed: np.ndarray  # (G, P, P, 55) int8: [viewer, owner] hand shown by a challenge
    revealed_seen: np.ndarray  # (G, P, P) bool: [viewer, owner] has been shown a hand this round
    revealed_held: np.ndarray  # (G, P, P, 55) int8: [viewer, owner] cards of the shown hand not played since
    lacks_color: np.ndarray  # (G, P, 4) bool: seat drew by choice while this colour was current
    chose_color: np.ndarray  # (G, P) int8: colour seat last moved play into this round (named, or switched to), -1 none
    scores: np.ndarray  # (G, P) int32: match totals
    dealer: np.ndarray  # (G,) int8
    round_number: np.ndarray  # (G,) int16: from 1
    turns: np.ndarray  # (G,) int32: decisions taken this round
    round_deck: np.ndarray  # (G, 112) int8: this round's deck as dealt, top first (for replays)
    reshuffled: np.ndarray  # (G, 112) int8: the last reshuffle's new draw pile, top first
    scratch_deck: np.ndarray  # (G, 112) int8: the deck of the draw for the first dealer
    events: np.ndarray  # (G, MAX_EVENTS, 4) int16: what the last step did
    event_count: np.ndarray  # (G,) int16
    history: np.ndarray  # (G, P, 2 * HISTORY_LENGTH * 4) int8: [viewer] the round's public events in its codes,
    #                      a ring written twice over (event e at e % HISTORY_LENGTH and HISTORY_LENGTH more), so that
    #                      the last HISTORY_LENGTH events are always one run: a view copies a constant-length window
    history_count: np.ndarray  # (G,) int32: public events recorded this round (the ring holds the last ones)
    rng: np.ndarray  # (G, 4) int64: xoshiro128** words (each < 2**32)


def allocate_state(num_games: int, num_players: int) -> EngineState:
    G, P = num_games, num_players
    return EngineState(
        hands=np.zeros((G, P, NUM_CARD_TYPES), np.int8),
        hand_sizes=np.zeros((G, P), np.int16),
        draw_pile=np.zeros((G, DECK_SIZE), np.int8),
        draw_count=np.zeros(G, np.int16),
        discard=np.zeros((G, DECK_SIZE), np.int8),
        discard_count=np.zeros(G, np.int16),
        discard_counts=np.zeros((G, NUM_CARD_TYPES), np.int8),
        current_color=np.zeros(G, np.int8),
        direction=np.ones(G, np.int8),
        phase=np.full(G, OVER, np.int8),
        current_player=np.zeros(G, np.int8),
        turn_player=np.zeros(G, np.int8),
        turn_card=np.full(G, -1, np.int8),
        drawn_card=np.full(G, -1, np.int8),
        starting_wild=np.zeros(G, np.bool_),
        uno_called=np.zeros((G, P), np.bool_),
        wd4_player=np.full(G, -1, np.int8),
        wd4_prev_color=np.full(G, -1, np.int8),
        wd4_guilty=np.zeros(G, np.bool_),
        catch_offender=np.full(G, -1, np.int8),
        pending_draw=np.zeros(G, np.int16),
        jump_next=np.full(G, -1, np.int8),
        hands_swapped=np.zeros(G, np.bool_),
        revealed=np.zeros((G, P, P, NUM_CARD_TYPES), np.int8),
        revealed_seen=np.zeros((G, P, P), np.bool_),
        revealed_held=np.zeros((G, P, P, NUM_CARD_TYPES), np.int8),
        lacks_color=np.zeros((G, P, 4), np.bool_),
        chose_color=np.full((G, P), -1, np.int8),
        scores=np.zeros((G, P), np.int32),
        dealer=np.zeros(G, np.int8),
        round_number=np.zeros(G, np.int16),
        turns=np.zeros(G, np.int32),
        round_deck=np.zeros((G, DECK_SIZE), np.int8),
        reshuffled=np.full((G, DECK_SIZE), -1, np.int8),
        scratch_deck=np.zeros((G, DECK_SIZE), np.int8),
        events=np.zeros((G, MAX_EVENTS, 4), np.int16),
        event_count=np.zeros(G, np.int16),
        history=np.zeros((G, P, 2 * HISTORY_LENGTH * HISTORY_ENTRY), np.int8),
        history_count=np.zeros(G, np.int32),
        rng=np.zeros((G, 4), np.int64),
    )


# ---------------------------------------------------------------- randomness


@leaf
def _rotl32(x, k):
    return ((x << k) | (x >> (32 - k))) & _MASK32


@leaf
def next_u32(s, g):
    """One xoshiro128** output for game g (32 random bits)."""
    s0, s1, s2, s3 = s.rng[g, 0], s.rng[g, 1], s.rng[g, 2], s.rng[g, 3]
    result = (_rotl32((s1 * 5) & _MASK32, 7) * 9) & _MASK32
    t = (s1 << 9) & _MASK32
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl32(s3, 11)
    s.rng[g, 0], s.rng[g, 1], s.rng[g, 2], s.rng[g, 3] = s0, s1, s2, s3
    return result


@leaf
def random_below(s, g, n):
    """A random int in [0, n) (Lemire's multiply-shift; bias below 1e-7 for n <= 112)."""
    return (next_u32(s, g) * n) >> 32


@jit
def shuffle(s, g, cards, n):
    """Fisher-Yates shuffle of cards[0:n] in place."""
    for i in range(n - 1, 0, -1):
        j = random_below(s, g, i + 1)
        cards[i], cards[j] = cards[j], cards[i]


# ---------------------------------------------------------------- small helpers


@leaf
def log_event(s, g, kind, a, b, c):
    n = s.event_count[g]
    if n < MAX_EVENTS:
        s.events[g, n, 0] = kind
        s.events[g, n, 1] = a
        s.events[g, n, 2] = b
        s.events[g, n, 3] = c
        s.event_count[g] = n + 1


@leaf
def record_history(events, event_count, history, history_count, g):
    """Append the public events of game g's last step (or reset) to its round's history, in every seat's codes
    (HISTORY_LENGTH above). A step that dealt a new round (deal_round cleared the history) adds only the new
    round's events. A draw until playable is one HIST_DRAW of many cards. Takes the arrays it uses, not the
    record: it runs once a step."""
    num_players = history.shape[1]
    count = event_count[g]
    first = 0
    for e in range(count):
        if events[g, e, 0] == EV_NEW_ROUND:
            first = e + 1
    open_draw = -1  # where this step's HIST_DRAW is in the rings, while its drawing goes on
    played_by_stack_or_jump = False  # the EV_PLAY that follows a stack or a jump is in its entry
    for e in range(first, count):
        event, a, b, c = events[g, e, 0], events[g, e, 1], events[g, e, 2], events[g, e, 3]
        kind, actor, card, value = 0, a, -1, 0
        if event == EV_PLAY:
            if played_by_stack_or_jump:
                played_by_stack_or_jump = False
                continue
            kind, card = HIST_PLAY, b
        elif event == EV_DRAW:
            if open_draw >= 0 and history[g, 0, open_draw + 1] == 1 + a:  # the same drawer (in seat 0's codes)
                if b >= 0:
                    for viewer in range(num_players):
                        history[g, viewer, open_draw + 3] += 1
                        history[g, viewer, open_draw + HISTORY_LENGTH * HISTORY_ENTRY + 3] += 1
                continue
            kind, value = HIST_DRAW, 1 if b >= 0 else 0
        elif event == EV_RESHUFFLE:
            kind, actor, value = HIST_RESHUFFLE, -1, min(a, 127)
        elif event == EV_KEEP:
            kind = HIST_KEEP
        elif event == EV_COLOR:
            kind, value = HIST_COLOR, 1 + b
        elif event == EV_PENALTY:
            kind, value = HIST_FORCED, min(b, 127)
        elif event == EV_HAT:
            kind, value = HIST_HAT, min(b, 127)
        elif event == EV_UNO:
            kind = HIST_UNO
        elif event == EV_CATCH:
            kind, value = HIST_CATCH, b
        elif event == EV_PASS:
            kind, value = HIST_PASS, b
        elif event == EV_CHALLENGE:
            kind, value = HIST_CHALLENGE, 1 + c
        elif event == EV_ACCEPT:
            kind, value = HIST_ACCEPT, 1 + c
        elif event == EV_STACK:
            kind, card, value = HIST_STACK, b, min(c, 127)
            played_by_stack_or_jump = True
        elif event == EV_JUMP:
            kind, card = HIST_JUMP, b
            played_by_stack_or_jump = True
        elif event == EV_SWAP:
            kind, value = HIST_SWAP, b
        elif event == EV_ROTATE:
            kind, actor, value = HIST_ROTATE, -1, 1 if a > 0 else 2
        else:
            continue
        at = (history_count[g] & (HISTORY_LENGTH - 1)) * HISTORY_ENTRY
        seat_valued = kind == HIST_CATCH or kind == HIST_PASS or kind == HIST_SWAP  # SEAT_VALUED_KINDS
        for viewer in range(num_players):  # seats counted to the viewer's left, by a compare (no division)
            actor_left = actor - viewer + (num_players if actor < viewer else 0)
            value_left = value - viewer + (num_players if value < viewer else 0)
            for copy in range(at, 2 * HISTORY_LENGTH * HISTORY_ENTRY, HISTORY_LENGTH * HISTORY_ENTRY):
                history[g, viewer, copy] = kind
                history[g, viewer, copy + 1] = 0 if actor < 0 else 1 + actor_left
                history[g, viewer, copy + 2] = card + 1
                history[g, viewer, copy + 3] = 1 + value_left if seat_valued else value
        history_count[g] += 1
        if kind == HIST_DRAW:
            open_draw = at
        elif kind != HIST_RESHUFFLE:
            open_draw = -1


@leaf
def prefetch_history_slot(history, history_count, g):
    """Start loading where game g's next history event goes in every seat's ring (both copies): the step writes
    them, each game's far from the last."""
    at = (history_count[g] & (HISTORY_LENGTH - 1)) * HISTORY_ENTRY
    rings = history[g]
    for viewer in range(rings.shape[0]):
        prefetch(rings, viewer * rings.shape[1] + at)
        prefetch(rings, viewer * rings.shape[1] + at + HISTORY_LENGTH * HISTORY_ENTRY)


@leaf
def next_seat(s, p, g, seat):
    return (seat + s.direction[g]) % p.num_players


@leaf
def top_card(s, g):
    return s.discard[g, s.discard_count[g] - 1]


# The two helpers below take single arrays and scalars, not the EngineState
# record: they run once per card in the hottest loops, and a call passing the
# record passes every field of its 40 arrays as separate arguments.


@jit
def holds_color(hands, g, seat, color):
    for rank in range(13):
        if hands[g, seat, color * 13 + rank] > 0:
            return True
    return False


@leaf
def matches_top(card, color, top_rank):
    """docs/rules.md §4.2: a coloured card plays on the current colour or the top card's number or symbol."""
    return (CARD_COLOR[card] == color) | (CARD_RANK[card] == top_rank)


@jit
def card_playable(card, color, top_rank, holds_current, wd4_bluffing):
    """docs/rules.md §4.2 and §6: colour, number or symbol match; wilds always (a Wild
    Draw Four only without a card of the current colour when bluffing is off)."""
    if card == WILD or card == SORTING_HAT:
        return True
    if card == WILD_DRAW4:
        return wd4_bluffing == 1 or not holds_current
    return matches_top(card, color, top_rank)


@leaf
def is_playable(s, p, g, seat, card):
    color = s.current_color[g]
    # Only a Wild Draw Four without bluffing asks what else the hand holds (what card_playable reads).
    holds_current = card == WILD_DRAW4 and p.wd4_bluffing == 0 and holds_color(s.hands, g, seat, color)
    return card_playable(card, color, CARD_RANK[top_card(s, g)], holds_current, p.wd4_bluffing)


@leaf
def add_to_hand(s, g, seat, card):
    s.hands[g, seat, card] += 1
    s.hand_sizes[g, seat] += 1


@leaf
def hand_points(s, g, seat):
    total = 0
    for card in range(NUM_CARD_TYPES):
        total += s.hands[g, seat, card] * CARD_POINTS[card]
    return total


# ---------------------------------------------------------------- drawing


@jit
def reshuffle(s, g):
    """docs/rules.md §8: the discard pile but its top card, shuffled, becomes
    the draw pile. Returns False when there is nothing to move (both piles exhausted)."""
    movable = s.discard_count[g] - 1
    if movable <= 0:
        return False
    for i in range(movable):
        s.draw_pile[g, i] = s.discard[g, i]
    s.discard[g, 0] = s.discard[g, movable]
    s.discard_count[g] = 1
    s.discard_counts[g, :] = 0
    s.discard_counts[g, s.discard[g, 0]] = 1
    shuffle(s, g, s.draw_pile[g], movable)
    s.draw_count[g] = movable
    for i in range(movable):
        s.reshuffled[g, i] = s.draw_pile[g, movable - 1 - i]
    for i in range(movable, DECK_SIZE):
        s.reshuffled[g, i] = -1
    log_event(s, g, EV_RESHUFFLE, movable, 0, 0)
    return True


@leaf
def draw_one(s, g):
    """Take the top card of the draw pile (reshuffling first when it is empty);
    -1 when both piles are exhausted. The rare reshuffle is a call of its own so
    that this common path stays small enough to inline everywhere."""
    if s.draw_count[g] == 0 and not reshuffle(s, g):
        return -1
    s.draw_count[g] -= 1
    return s.draw_pile[g, s.draw_count[g]]


@leaf
def forced_draw(s, g, seat, n, reason):
    """Seat draws n cards as a penalty or effect; what it showed it lacks is stale now."""
    drawn = 0
    for _ in range(n):
        card = draw_one(s, g)
        if card < 0:
            break
        add_to_hand(s, g, seat, card)
        drawn += 1
    for color in range(4):
        s.lacks_color[g, seat, color] = False
    log_event(s, g, EV_PENALTY, seat, drawn, reason)


@leaf
def draw_until_gryffindor(s, p, g, seat):
    """The Sorting Hat: draw until a card of the Gryffindor colour (kept), or the piles run out."""
    drawn = 0
    last = -1
    while True:
        card = draw_one(s, g)
        if card < 0:
            last = -1
            break
        add_to_hand(s, g, seat, card)
        drawn += 1
        last = card
        if CARD_COLOR[card] == p.gryffindor_color:
            break
    for color in range(4):
        s.lacks_color[g, seat, color] = False
    log_event(s, g, EV_HAT, seat, drawn, last)


# ---------------------------------------------------------------- turns


@leaf
def begin_turn(s, g, seat):
    """A turn of seat begins (docs/rules.md §4.1): its standing UNO call ends (§7)."""
    s.current_player[g] = seat
    s.turn_player[g] = seat
    s.phase[g] = PLAY
    s.turn_card[g] = -1
    s.drawn_card[g] = -1
    s.uno_called[g, seat] = False


# The house rules' helpers below take single arrays and scalars, not the EngineState record
# (a call passing the record costs ~70 ns, more than their work): they run at every turn
# (find_jumper) or on a draw card's or a Seven's or Zero's play.


@leaf
def find_jumper(hands, g, card, card_player, next_to_play, num_players):
    """docs/rules.md §15.3: the seat that may jump in on card, or -1: it holds a copy and is
    neither the card's own player nor the seat about to play."""
    for seat in range(num_players):
        if seat != card_player and seat != next_to_play and hands[g, seat, card] > 0:
            return seat
    return -1


@leaf
def start_next_turn(s, p, g, seat):
    """The turn's card is done with: seat begins the next turn, unless a jump window opens first (§15.3):
    only on a coloured card played this turn and still on top."""
    if p.jump_in == 1:
        card = s.turn_card[g]
        if card >= 0 and CARD_COLOR[card] >= 0 and s.discard[g, s.discard_count[g] - 1] == card:
            jumper = find_jumper(s.hands, g, card, s.turn_player[g], seat, p.num_players)
            if jumper >= 0:
                s.phase[g] = JUMP_PHASE
                s.current_player[g] = jumper
                s.jump_next[g] = seat
                return
    begin_turn(s, g, seat)


@leaf
def skip_to_after(s, p, g, seat):
    """seat loses its turn; the seat after it begins one."""
    log_event(s, g, EV_SKIPPED, seat, 0, 0)
    start_next_turn(s, p, g, next_seat(s, p, g, seat))


@leaf
def take_pending_draw(s, g, seat, reason, extra):
    """seat draws the pending draw (plus extra cards); nothing is pending any more."""
    forced_draw(s, g, seat, s.pending_draw[g] + extra, reason)
    s.pending_draw[g] = 0


@jit
def wd4_stackable(hands, g, seat, color, wd4_bluffing):
    """seat may put a Wild Draw Four on the pending draw (§15.2): held, and playable at all (§6)."""
    if hands[g, seat, WILD_DRAW4] == 0:
        return False
    return wd4_bluffing == 1 or not holds_color(hands, g, seat, color)


@jit
def can_stack(hands, g, seat, top, color, stack_draw2, stack_draw4, stack_mixed, wd4_bluffing):
    """docs/rules.md §15.2: does seat hold a card it may stack on top (a Draw Two or a Wild Draw Four)? The ``stacking``
    option reaches the kernel as ``stack_draw2``, ``stack_draw4`` and ``stack_mixed`` (``options.kernel_params``)."""
    if top == WILD_DRAW4:
        return stack_draw4 == 1 and wd4_stackable(hands, g, seat, color, wd4_bluffing)
    if stack_mixed == 1 and wd4_stackable(hands, g, seat, color, wd4_bluffing):
        return True
    if stack_draw2 == 1:
        for hue in range(4):
            if hands[g, seat, hue * 13 + DRAW2_RANK] > 0:
                return True
    return False


@leaf
def seat_can_stack(s, p, g, seat):
    return can_stack(s.hands, g, seat, s.discard[g, s.discard_count[g] - 1], s.current_color[g],
                     p.stack_draw2, p.stack_draw4, p.stack_mixed, p.wd4_bluffing)


# ---------------------------------------------------------------- Seven-O (docs/rules.md §15.4)


@leaf
def swap_cards(first, second):
    """Exchange two rows of 55 card counts, as a loop over views (see copy_cards)."""
    for card in range(NUM_CARD_TYPES):
        first[card], second[card] = second[card], first[card]


@leaf
def exchange_seats(hands, hand_sizes, lacks_color, chose_color, g, a, b):
    """Seats a and b exchange hands, and with them what is known about each hand from play:
    its lacks-colour marks and its last chosen colour (records of shown hands: move_record)."""
    swap_cards(hands[g, a], hands[g, b])
    hand_sizes[g, a], hand_sizes[g, b] = hand_sizes[g, b], hand_sizes[g, a]
    for color in range(4):
        lacks_color[g, a, color], lacks_color[g, b, color] = lacks_color[g, b, color], lacks_color[g, a, color]
    chose_color[g, a], chose_color[g, b] = chose_color[g, b], chose_color[g, a]


@leaf
def move_record(revealed, revealed_held, revealed_seen, g, viewer, source, destination):
    """viewer's record of the hand at seat source becomes its record of seat destination (the hand
    went there). An unseen record's row is unused, and its held counts are kept 0 (hpuno_env.worlds
    reads them as they are)."""
    if revealed_seen[g, viewer, source]:
        copy_cards(revealed[g, viewer, destination], revealed[g, viewer, source])
        copy_cards(revealed_held[g, viewer, destination], revealed_held[g, viewer, source])
        revealed_seen[g, viewer, destination] = True
    else:
        drop_record(revealed_held, revealed_seen, g, viewer, destination)


@leaf
def drop_record(revealed_held, revealed_seen, g, viewer, owner):
    """viewer no longer has a record of seat owner's hand."""
    if revealed_seen[g, viewer, owner]:
        clear_cards(revealed_held[g, viewer, owner])
        revealed_seen[g, viewer, owner] = False


@leaf
def hand_passed(hands, revealed, revealed_held, revealed_seen, uno_called, g, giver, holder):
    """After hands moved: giver knows the hand it passed to holder; holder's record of its own new
    hand is dropped (it holds those cards now); holder's UNO call is cleared."""
    copy_cards(revealed[g, giver, holder], hands[g, holder])
    copy_cards(revealed_held[g, giver, holder], hands[g, holder])
    revealed_seen[g, giver, holder] = True
    drop_record(revealed_held, revealed_seen, g, holder, holder)
    uno_called[g, holder] = False


@jit
def swap_hands(hands, hand_sizes, lacks_color, chose_color, revealed, revealed_held, revealed_seen, uno_called, g, a, b, num_players):
    """A Seven: seats a and b swap hands. Every other seat's records of the two hands change places;
    a's and b's own are replaced by what they now know (hand_passed)."""
    exchange_seats(hands, hand_sizes, lacks_color, chose_color, g, a, b)
    for viewer in range(num_players):
        if viewer != a and viewer != b and (revealed_seen[g, viewer, a] or revealed_seen[g, viewer, b]):
            swap_cards(revealed[g, viewer, a], revealed[g, viewer, b])
            swap_cards(revealed_held[g, viewer, a], revealed_held[g, viewer, b])
            revealed_seen[g, viewer, a], revealed_seen[g, viewer, b] = revealed_seen[g, viewer, b], revealed_seen[g, viewer, a]
    hand_passed(hands, revealed, revealed_held, revealed_seen, uno_called, g, a, b)
    hand_passed(hands, revealed, revealed_held, revealed_seen, uno_called, g, b, a)


@jit
def rotate_hands(hands, hand_sizes, lacks_color, chose_color, revealed, revealed_held, revealed_seen, uno_called, g, direction, num_players):
    """A Zero: every hand goes to the next seat in the direction of play (P - 1 exchanges of whole
    rows: twice the moves of a cyclic shift, but vectorised, and measured faster). Each viewer's
    records move with the hands, except two that hand_passed replaces: its record of the hand it
    held (it knows that hand now) and of the hand it receives (it holds those cards). The others
    move in the order that reads each row before it is written."""
    P = num_players
    if direction > 0:  # seat i's hand to seat i + 1: exchanges (P-1, P-2), ..., (1, 0)
        for seat in range(P - 1, 0, -1):
            exchange_seats(hands, hand_sizes, lacks_color, chose_color, g, seat, seat - 1)
    else:  # seat i's hand to seat i - 1: exchanges (0, 1), ..., (P-2, P-1)
        for seat in range(P - 1):
            exchange_seats(hands, hand_sizes, lacks_color, chose_color, g, seat, seat + 1)
    for viewer in range(P):
        for k in range(2, P):  # owners viewer - 2d, viewer - 3d, ..., viewer + d
            source = (viewer - k * direction) % P
            move_record(revealed, revealed_held, revealed_seen, g, viewer, source, (source + direction) % P)
    for seat in range(P):
        hand_passed(hands, revealed, revealed_held, revealed_seen, uno_called, g, seat, (seat + direction) % P)


@leaf
def prefetch_hands_moved(s, actions, g):
    """Under Seven-O, start loading the hands and the records of shown hands of game g if its action may
    move hands (a 7 or 0 played, a target named): a swap touches every seat's records, each game's far
    from the last, and on its own meets them one cache miss at a time."""
    if g >= actions.shape[0]:
        return
    action = actions[g]
    if (0 <= action < WILD and (CARD_RANK[action] == 7 or CARD_RANK[action] == 0)) or TARGET_BASE <= action < TARGET_BASE + MAX_TARGETS:
        prefetch_all(s.hands[g])
        prefetch_all(s.revealed[g])
        prefetch_all(s.revealed_held[g])
        prefetch_all(s.revealed_seen[g])
        prefetch_all(s.lacks_color[g])


@leaf
def seven_swap(s, p, g, a, b):
    """docs/rules.md §15.4: a Seven's player a swaps hands with b."""
    swap_hands(s.hands, s.hand_sizes, s.lacks_color, s.chose_color, s.revealed, s.revealed_held, s.revealed_seen, s.uno_called, g, a, b, p.num_players)
    s.hands_swapped[g] = True
    log_event(s, g, EV_SWAP, a, b, 0)


@leaf
def zero_rotation(s, p, g):
    """docs/rules.md §15.4: a Zero passes every hand on in the direction of play."""
    rotate_hands(s.hands, s.hand_sizes, s.lacks_color, s.chose_color, s.revealed, s.revealed_held, s.revealed_seen, s.uno_called, g,
                 s.direction[g], p.num_players)
    s.hands_swapped[g] = True
    log_event(s, g, EV_ROTATE, s.direction[g], 0, 0)


@leaf
def card_penalty(card):
    """What the turn's card makes the next player draw: (cards, reason); (0, 0) for none."""
    if card == WILD_DRAW4:
        return 4, REASON_WD4
    if card >= 0 and CARD_COLOR[card] >= 0 and CARD_RANK[card] == DRAW2_RANK:
        return 2, REASON_DRAW2
    return 0, 0


@leaf
def play_card(s, p, g, seat, card):
    """Move card from seat's hand to the discard pile and start its effect.
    Returns what is left of the turn: DONE while a wild's colour is to be named, else END_TURN."""
    if card == WILD_DRAW4:
        s.wd4_player[g] = seat
        s.wd4_prev_color[g] = s.current_color[g]
        s.wd4_guilty[g] = holds_color(s.hands, g, seat, s.current_color[g])
        s.pending_draw[g] += 4
    s.hands[g, seat, card] -= 1
    s.hand_sizes[g, seat] -= 1
    for viewer in range(p.num_players):  # a shown card played is no longer known to be held
        if s.revealed_held[g, viewer, seat, card] > 0:
            s.revealed_held[g, viewer, seat, card] -= 1
    s.discard[g, s.discard_count[g]] = card
    s.discard_counts[g, card] += 1
    s.discard_count[g] += 1
    s.turn_card[g] = card
    s.drawn_card[g] = -1
    s.hands_swapped[g] = False
    log_event(s, g, EV_PLAY, seat, card, 0)
    if CARD_COLOR[card] < 0:
        s.current_color[g] = -1
        s.phase[g] = COLOR
        s.starting_wild[g] = False
        return DONE
    if s.current_color[g] != CARD_COLOR[card]:  # matched by number or symbol into another colour: a choice
        s.chose_color[g, seat] = CARD_COLOR[card]
    s.current_color[g] = CARD_COLOR[card]
    s.lacks_color[g, seat, CARD_COLOR[card]] = False
    rank = CARD_RANK[card]
    if rank == REVERSE_RANK:
        s.direction[g] = -s.direction[g]
        log_event(s, g, EV_DIRECTION, s.direction[g], 0, 0)
    elif rank == DRAW2_RANK:
        s.pending_draw[g] += 2
    elif p.seven_zero == 1 and s.hand_sizes[g, seat] > 0:  # §15.4: a last 7 or 0 swaps nothing
        if rank == 7:
            if p.num_players > 2:
                s.phase[g] = TARGET
                return DONE
            seven_swap(s, p, g, seat, 1 - seat)
        elif rank == 0:
            zero_rotation(s, p, g)
    return END_TURN


@leaf
def end_turn(s, p, g):
    """The turn player's turn is over (its card and decisions resolved).
    Returns CARD_EFFECT when the card's effect on the next player comes next, else DONE.

    docs/rules.md §9: an empty hand ends the round after the card's
    effects. §7: a play that left one card, without a call, opens the
    catch window before anything happens to the next player. (A player left
    with one card by a draw that found nothing could not have called.)
    """
    seat = s.turn_player[g]
    if s.hand_sizes[g, seat] == 0:
        end_round(s, p, g, seat)
        return DONE
    if s.hand_sizes[g, seat] == 1 and not s.uno_called[g, seat] and s.turn_card[g] >= 0 and not s.hands_swapped[g]:
        if p.uno_catch == CATCH_WINDOW:
            s.catch_offender[g] = seat
            s.phase[g] = CATCH_PHASE
            s.current_player[g] = next_seat(s, p, g, seat)
            return DONE
        if p.uno_catch == CATCH_ALWAYS:
            forced_draw(s, g, seat, p.uno_penalty, REASON_UNO)
    return CARD_EFFECT


@leaf
def apply_card_effect(s, p, g):
    """What the turn's card does to the next player, then the next turn begins."""
    card = s.turn_card[g]
    following = next_seat(s, p, g, s.turn_player[g])
    if card == WILD_DRAW4:
        if p.wd4_bluffing == 1 or (p.stack_draw4 == 1 and seat_can_stack(s, p, g, following)):
            s.phase[g] = CHALLENGE_PHASE
            s.current_player[g] = following
            return
    elif card >= 0 and CARD_RANK[card] == DRAW2_RANK and p.stack_draw2 == 1 and seat_can_stack(s, p, g, following):
        s.phase[g] = STACK_PHASE  # §15.2: stack on it or take the pending draw
        s.current_player[g] = following
        return
    penalty, reason = card_penalty(card)
    if penalty > 0:
        take_pending_draw(s, g, following, reason, 0)
    rank = CARD_RANK[card] if card >= 0 and CARD_COLOR[card] >= 0 else -1
    skips = (
        penalty > 0
        or rank == SKIP_RANK
        or (rank == REVERSE_RANK and p.num_players == 2 and p.two_player_reverse_skips == 1)
    )
    if skips:
        skip_to_after(s, p, g, following)
    else:
        start_next_turn(s, p, g, following)


# ---------------------------------------------------------------- rounds and matches


@leaf
def end_round(s, p, g, winner):
    """docs/rules.md §9: a final Draw Two / Wild Draw Four still
    makes the next player draw (no challenge); those cards count."""
    penalty, reason = card_penalty(s.turn_card[g])
    if penalty > 0:  # the whole pending draw: 2 or 4, or a stack's total (§15.2)
        take_pending_draw(s, g, next_seat(s, p, g, winner), reason, 0)
    s.phase[g] = OVER
    s.current_player[g] = -1


@jit
def deal_round(s, p, g):
    """docs/rules.md §3.2 and §3.3: the deal and the starting card, from s.round_deck[g] (top first)."""
    P = p.num_players
    deck = s.round_deck[g]
    s.hands[g, :, :] = 0
    s.hand_sizes[g, :] = 0
    s.uno_called[g, :] = False
    s.lacks_color[g, :, :] = False
    s.chose_color[g, :] = -1
    s.revealed[g, :, :, :] = 0
    s.revealed_seen[g, :, :] = False
    s.revealed_held[g, :, :, :] = 0
    s.direction[g] = 1
    s.turns[g] = 0
    s.starting_wild[g] = False
    s.wd4_player[g] = -1
    s.wd4_prev_color[g] = -1
    s.wd4_guilty[g] = False
    s.catch_offender[g] = -1
    s.pending_draw[g] = 0
    s.jump_next[g] = -1
    s.hands_swapped[g] = False
    s.history[g, :, :] = 0
    s.history_count[g] = 0
    dealer = s.dealer[g]
    dealt = 7 * P
    for i in range(dealt):
        add_to_hand(s, g, (dealer + 1 + i) % P, deck[i])
    remaining = p.deck_size - dealt
    for i in range(remaining):
        s.draw_pile[g, i] = deck[p.deck_size - 1 - i]
    s.draw_count[g] = remaining
    s.discard_count[g] = 0
    # A starting Wild Draw Four goes back at a random place; turn the next card.
    while True:
        s.draw_count[g] -= 1
        starter = s.draw_pile[g, s.draw_count[g]]
        if starter != WILD_DRAW4:
            break
        count = s.draw_count[g]
        place = random_below(s, g, count + 1)  # index from the bottom; count means on top
        for i in range(count, place, -1):
            s.draw_pile[g, i] = s.draw_pile[g, i - 1]
        s.draw_pile[g, place] = WILD_DRAW4
        s.draw_count[g] = count + 1
        log_event(s, g, EV_WD4_RETURN, count - place, 0, 0)
    s.discard[g, 0] = starter
    s.discard_count[g] = 1
    s.discard_counts[g, :] = 0
    s.discard_counts[g, starter] = 1
    s.turn_card[g] = -1
    s.drawn_card[g] = -1
    log_event(s, g, EV_NEW_ROUND, s.round_number[g], dealer, starter)
    left = (dealer + 1) % P
    s.current_color[g] = CARD_COLOR[starter]
    if CARD_COLOR[starter] < 0:  # Wild or Sorting Hat: the dealer's left names the colour
        begin_turn(s, g, left)
        s.phase[g] = COLOR
        s.starting_wild[g] = True
    elif CARD_RANK[starter] == DRAW2_RANK:
        forced_draw(s, g, left, 2, REASON_START)
        skip_to_after(s, p, g, left)
    elif CARD_RANK[starter] == SKIP_RANK:
        skip_to_after(s, p, g, left)
    elif CARD_RANK[starter] == REVERSE_RANK:
        s.direction[g] = -1
        begin_turn(s, g, dealer)
    else:
        begin_turn(s, g, left)


@leaf
def shuffle_full_deck(s, p, g, out):
    """Fill out[:deck_size] with a freshly shuffled full deck (the classic deck: FULL_DECK
    but its Sorting Hats, which come last)."""
    for i in range(p.deck_size):
        out[i] = FULL_DECK[i]
    shuffle(s, g, out, p.deck_size)


@jit
def draw_for_dealer(s, p, g):
    """docs/rules.md §3.1: highest number deals; ties draw again from the same deck.
    Seats still drawing are the bits of in_draw."""
    deck = s.scratch_deck[g]
    shuffle_full_deck(s, p, g, deck)
    position = 0
    in_draw = (1 << p.num_players) - 1
    while True:
        best = -1
        values = 0  # 4 bits per seat
        for seat in range(p.num_players):
            if in_draw >> seat & 1:
                if position == p.deck_size:
                    shuffle(s, g, deck, p.deck_size)
                    position = 0
                value = int(CARD_DEALER_VALUE[deck[position]])
                position += 1
                values |= value << (4 * seat)
                best = max(best, value)
        tied = 0
        for seat in range(p.num_players):
            if in_draw >> seat & 1 and (values >> (4 * seat) & 15) != best:
                in_draw &= ~(1 << seat)
        for seat in range(p.num_players):
            tied += in_draw >> seat & 1
        if tied == 1:
            for seat in range(p.num_players):
                if in_draw >> seat & 1:
                    return seat


@leaf
def start_match(s, p, g, deck, use_deck, dealer):
    """A fresh match: scores zero, round 1, dealt from deck (use_deck) or a shuffled
    one; dealer < 0 asks for the draw for the first dealer."""
    s.scores[g, :] = 0
    s.round_number[g] = 1
    s.dealer[g] = dealer if dealer >= 0 else draw_for_dealer(s, p, g)
    if use_deck:
        for i in range(p.deck_size):
            s.round_deck[g, i] = deck[i]
    else:
        shuffle_full_deck(s, p, g, s.round_deck[g])
    deal_round(s, p, g)


@jit
def finish_round(s, p, g, rewards, terminated):
    """Score a round that just ended (phase OVER, winner = turn player) and decide
    the episode: docs/rules.md §10 (scoring) and §11 (episodes and rewards)."""
    P = p.num_players
    winner = s.turn_player[g]
    round_points = 0
    for seat in range(P):
        if seat != winner:
            round_points += hand_points(s, g, seat)
    match_over = False
    if p.scoring == SCORING_WINNER:
        s.scores[g, winner] += round_points
        match_over = s.scores[g, winner] >= p.target_score
    else:
        for seat in range(P):
            s.scores[g, seat] += hand_points(s, g, seat)
            if s.scores[g, seat] >= p.target_score:
                match_over = True
    log_event(s, g, EV_ROUND_END, winner, round_points, 0)

    if p.reward == REWARD_POINTS:
        for seat in range(P):
            if seat == winner:
                rewards[g, seat] = round_points / 100.0
            else:
                rewards[g, seat] = -hand_points(s, g, seat) / 100.0
    if p.episode == EPISODE_ROUND:
        if p.reward == REWARD_WIN:
            for seat in range(P):
                rewards[g, seat] = 1.0 if seat == winner else -1.0
        terminated[g] = True
        return
    if match_over:
        lowest = s.scores[g, 0]
        for seat in range(P):
            lowest = min(lowest, s.scores[g, seat])
        for seat in range(P):
            if p.scoring == SCORING_WINNER:
                won = seat == winner
            else:
                won = s.scores[g, seat] == lowest
            if won:
                log_event(s, g, EV_MATCH_END, seat, 0, 0)
            if p.reward == REWARD_WIN:
                rewards[g, seat] = 1.0 if won else -1.0
        terminated[g] = True
        return
    # The match goes on: the deal passes left.
    s.round_number[g] += 1
    s.dealer[g] = (s.dealer[g] + 1) % P
    shuffle_full_deck(s, p, g, s.round_deck[g])
    deal_round(s, p, g)


# ---------------------------------------------------------------- one decision

# apply_action, end_turn and apply_card_effect stay long (apply_action is past the 80 lines a function
# of hpuno_env may have elsewhere): each is inlined at its one call site in step_games, and every helper
# split out of one would be inlined too, so numba would copy and optimise more IR per block and compile
# the kernel slower (see `leaf` above and docs/contributing.md, "What keeps it fast").


@leaf
def apply_action(s, p, g, action):
    """Carry out one legal action of the player to act in game g. Returns what
    is left of the turn for step_games: DONE, END_TURN or CARD_EFFECT."""
    seat = s.current_player[g]
    phase = s.phase[g]
    if action == UNO:
        s.uno_called[g, seat] = True
        log_event(s, g, EV_UNO, seat, 0, 0)
        return DONE
    if phase == PLAY and action == DRAW:
        color = s.current_color[g]
        s.lacks_color[g, seat, color] = True
        card = draw_one(s, g)
        log_event(s, g, EV_DRAW, seat, card, 0)
        if card < 0:
            return END_TURN
        add_to_hand(s, g, seat, card)
        while not is_playable(s, p, g, seat, card):
            if p.draw_until_playable == 0:
                return END_TURN
            card = draw_one(s, g)  # §15.5: draw on until a playable card or nothing is left
            log_event(s, g, EV_DRAW, seat, card, 0)
            if card < 0:
                return END_TURN
            add_to_hand(s, g, seat, card)
        s.drawn_card[g] = card
        s.phase[g] = DRAWN
        return DONE
    if action < NUM_CARD_TYPES:
        if phase == STACK_PHASE or phase == CHALLENGE_PHASE or phase == JUMP_PHASE:
            # §15.2 / §15.3: a stack play or a jump is the turn of the seat that makes it
            if phase == JUMP_PHASE:
                log_event(s, g, EV_JUMP, seat, action, 0)
            else:
                log_event(s, g, EV_STACK, seat, action, s.pending_draw[g])
            s.turn_player[g] = seat
        return play_card(s, p, g, seat, action)
    if action == KEEP:
        log_event(s, g, EV_KEEP, seat, 0, 0)
        s.drawn_card[g] = -1
        return END_TURN
    if phase == JUMP_PHASE:  # pass: the turn that was to begin begins
        log_event(s, g, EV_NO_JUMP, seat, 0, 0)
        begin_turn(s, g, s.jump_next[g])
        return DONE
    if phase == CHALLENGE_PHASE or phase == STACK_PHASE:
        # §6 and §15.2: the pending draw is taken (accept), or a challenge decides who takes it
        offender = s.wd4_player[g]
        if action == ACCEPT:
            log_event(s, g, EV_ACCEPT, seat, 0, 1 if phase == STACK_PHASE else 0)
            loser, extra, reason = seat, 0, REASON_WD4 if phase == CHALLENGE_PHASE else REASON_DRAW2
        else:
            for card in range(NUM_CARD_TYPES):
                s.revealed[g, seat, offender, card] = s.hands[g, offender, card]
                s.revealed_held[g, seat, offender, card] = s.hands[g, offender, card]
            s.revealed_seen[g, seat, offender] = True
            log_event(s, g, EV_CHALLENGE, seat, offender, 1 if s.wd4_guilty[g] else 0)
            if s.wd4_guilty[g]:
                loser, extra, reason = offender, 0, REASON_GUILTY
            else:
                loser, extra, reason = seat, 2, REASON_INNOCENT
        take_pending_draw(s, g, loser, reason, extra)
        if reason == REASON_GUILTY:  # a guilty bluffer: the challenger plays on
            begin_turn(s, g, seat)
        else:
            skip_to_after(s, p, g, seat)
        return DONE
    if phase == CATCH_PHASE:
        offender = s.catch_offender[g]
        if action == CATCH:
            log_event(s, g, EV_CATCH, seat, offender, 0)
            forced_draw(s, g, offender, p.uno_penalty, REASON_UNO)
        else:
            log_event(s, g, EV_PASS, seat, offender, 0)
            asked = next_seat(s, p, g, seat)
            if asked != offender:
                s.current_player[g] = asked
                return DONE
        s.catch_offender[g] = -1
        return CARD_EFFECT
    if phase == COLOR:
        color = action - COLOR_BASE
        s.current_color[g] = color
        s.chose_color[g, seat] = color
        log_event(s, g, EV_COLOR, seat, color, 0)
        if s.starting_wild[g]:  # the starting card's colour: now the turn goes on
            s.starting_wild[g] = False
            s.phase[g] = PLAY
            return DONE
        if s.turn_card[g] != SORTING_HAT:
            return END_TURN
        if p.num_players > 2:
            s.phase[g] = TARGET
            return DONE
        target = 1 - seat
    else:  # TARGET
        target = (seat + action - TARGET_BASE + 1) % p.num_players
        if s.turn_card[g] != SORTING_HAT:  # a Seven's target (§15.4)
            seven_swap(s, p, g, seat, target)
            return END_TURN
    # The Sorting Hat's target is known (named, or the only other seat).
    log_event(s, g, EV_TARGET, seat, target, 0)
    draw_until_gryffindor(s, p, g, target)
    return END_TURN


@leaf
def legal_mask_one(s, p, g, mask):
    """Fill mask (75 bools, all False on entry) with game g's legal actions."""
    phase = s.phase[g]
    seat = s.current_player[g]
    if phase == PLAY:
        hands = s.hands
        color = s.current_color[g]
        top_rank = CARD_RANK[s.discard[g, s.discard_count[g] - 1]]
        holds_current = holds_color(hands, g, seat, color)
        hand = hands[g, seat]
        any_playable = False
        for card in range(WILD):  # the coloured cards, branch-free so that LLVM vectorises it
            playable = (hand[card] > 0) & matches_top(card, color, top_rank)
            mask[card] = playable
            any_playable |= playable
        for card in range(WILD, NUM_CARD_TYPES):
            if hand[card] > 0 and card_playable(card, color, top_rank, holds_current, p.wd4_bluffing):
                mask[card] = True
                any_playable = True
        mask[DRAW] = p.voluntary_draw == 1 or not any_playable
        mask[UNO] = (
            any_playable and p.uno_catch != CATCH_OFF and s.hand_sizes[g, seat] == 2 and not s.uno_called[g, seat]
        )
    elif phase == DRAWN:
        mask[s.drawn_card[g]] = True
        mask[KEEP] = p.forced_play == 0
        mask[UNO] = p.uno_catch != CATCH_OFF and s.hand_sizes[g, seat] == 2 and not s.uno_called[g, seat]
    elif phase == COLOR:
        for color in range(4):
            mask[COLOR_BASE + color] = True
    elif phase == TARGET:
        for k in range(p.num_players - 1):
            mask[TARGET_BASE + k] = True
    elif phase == CHALLENGE_PHASE:
        mask[CHALLENGE] = p.wd4_bluffing == 1
        mask[ACCEPT] = True
        if p.stack_draw4 == 1 and wd4_stackable(s.hands, g, seat, s.current_color[g], p.wd4_bluffing):
            mask[WILD_DRAW4] = True
            mask[UNO] = p.uno_catch != CATCH_OFF and s.hand_sizes[g, seat] == 2 and not s.uno_called[g, seat]
    elif phase == CATCH_PHASE:
        mask[CATCH] = True
        mask[PASS] = True
    elif phase == STACK_PHASE:
        mask[ACCEPT] = True
        stackable = False
        for color in range(4):  # stack_draw2 is on in this phase
            if s.hands[g, seat, color * 13 + DRAW2_RANK] > 0:
                mask[color * 13 + DRAW2_RANK] = True
                stackable = True
        if p.stack_mixed == 1 and wd4_stackable(s.hands, g, seat, s.current_color[g], p.wd4_bluffing):
            mask[WILD_DRAW4] = True
            stackable = True
        mask[UNO] = stackable and p.uno_catch != CATCH_OFF and s.hand_sizes[g, seat] == 2 and not s.uno_called[g, seat]
    elif phase == JUMP_PHASE:
        mask[s.discard[g, s.discard_count[g] - 1]] = True
        mask[PASS] = True
        mask[UNO] = p.uno_catch != CATCH_OFF and s.hand_sizes[g, seat] == 2 and not s.uno_called[g, seat]


# ---------------------------------------------------------------- batch entry points


@jit
def reset_games(s, p, games, decks, dealers):
    """Start a fresh match in each listed game. decks[i, 0] < 0: shuffle; dealers[i] < 0: draw."""
    for i in range(games.shape[0]):
        g = games[i]
        s.event_count[g] = 0
        start_match(s, p, g, decks[i], decks[i, 0] >= 0, dealers[i])
        record_history(s.events, s.event_count, s.history, s.history_count, g)


@leaf
def action_is_legal(s, p, g, action, mask):
    """Is action legal in game g? Plays, draws and calls are judged directly (the
    common case, and cheaper than a full mask); other phases use legal_mask_one."""
    if action < 0 or action >= NUM_ACTIONS:
        return False
    if s.phase[g] == PLAY and (action < NUM_CARD_TYPES or (action == DRAW and p.voluntary_draw == 1)):
        seat = s.current_player[g]
        if action == DRAW:
            return True
        if s.hands[g, seat, action] == 0:
            return False
        color = s.current_color[g]
        holds_current = action == WILD_DRAW4 and holds_color(s.hands, g, seat, color)
        return card_playable(action, color, CARD_RANK[top_card(s, g)], holds_current, p.wd4_bluffing)
    mask[:] = False
    legal_mask_one(s, p, g, mask)
    return mask[action]


@jit
def check_actions(s, p, actions, bad, allow_idle, mask):
    """Mark in bad the games whose action is not legal; return how many.
    With allow_idle, -1 (leave this game as it is) is accepted too.
    mask: scratch space for one game's legal mask (75 bools)."""
    count = 0
    for g in range(actions.shape[0]):
        action = actions[g]
        if allow_idle and action == -1:
            continue
        if not action_is_legal(s, p, g, action, mask):
            bad[g] = True
            count += 1
    return count


@jit
def legal_mask_games(s, p, out):
    out[:, :] = False
    for g in range(out.shape[0]):
        later = g + PREFETCH_AHEAD
        if later < out.shape[0] and s.current_player[later] >= 0:
            prefetch_all(s.hands[later, s.current_player[later]])
        legal_mask_one(s, p, g, out[g])


# ---------------------------------------------------------------- what a seat sees


@jit
def observe_games(s, p, seats, out):
    """Write into out[g] the view of seat seats[g] of each game g (all zeros for seat -1)."""
    for g in range(out.shape[0]):
        later = g + PREFETCH_AHEAD
        if later < out.shape[0] and seats[later] >= 0:
            prefetch_all(s.hands[later, seats[later]])
            prefetch_all(s.revealed[later, seats[later]])
            prefetch_all(s.history[later, seats[later]])
        out[g, :] = 0
        if seats[g] >= 0:
            observe_one(s, p, g, seats[g], out[g])


@leaf
def clear_cards(destination):
    """destination[:] = 0 for 55 card counts (a loop over a view, as copy_cards)."""
    for card in range(NUM_CARD_TYPES):
        destination[card] = 0


@leaf
def copy_cards(destination, source):
    """destination[:] = source for 55 card counts, as a loop over views: indices known
    to be non-negative let LLVM drop numba's index wrapping and copy in vectors
    (a slice assignment would need numba's allocator)."""
    for card in range(NUM_CARD_TYPES):
        destination[card] = source[card]


@leaf
def observe_one(s, p, g, seat, row, with_history=True):
    """Write into row (zeroed) what seat knows of game g, in the order of
    encoding.observation_layout. with_history=False leaves the round's history (the last field) zeros, for
    readers that never look at it (the compiled rollouts' heuristic)."""
    seat = int(seat)
    P = p.num_players
    others = P - 1
    C = NUM_CARD_TYPES
    copy_cards(row[0:C], s.hands[g, seat])
    top = s.discard[g, s.discard_count[g] - 1]
    row[C + int(top)] = 1
    at = 2 * C
    if s.current_color[g] >= 0:
        row[at + int(s.current_color[g])] = 1
    at += 4
    if s.phase[g] < NUM_PHASES:  # the house rules' phases are in "house_phase", below
        row[at + int(s.phase[g])] = 1
    at += NUM_PHASES
    if s.phase[g] == DRAWN and seat == s.current_player[g]:  # only the drawer saw it
        row[at + int(s.drawn_card[g])] = 1
    at += C
    row[at] = 1 if s.direction[g] > 0 else 0
    row[at + 1] = s.draw_count[g]
    at += 2
    copy_cards(row[at:at + C], s.discard_counts[g])
    at += C
    row[at] = min(100, s.scores[g, seat] * 100 // p.target_score)
    row[at + 1] = s.uno_called[g, seat]
    at += 2
    other = seat
    for k in range(others):
        other = other + 1 if other + 1 < P else 0
        row[at + k] = min(127, s.hand_sizes[g, other])
        row[at + others + k] = s.uno_called[g, other]
        for color in range(4):
            row[at + 2 * others + 4 * k + color] = s.lacks_color[g, other, color]
        row[at + 6 * others + k] = min(100, s.scores[g, other] * 100 // p.target_score)
    at += 7 * others
    if s.phase[g] == CHALLENGE_PHASE and s.wd4_prev_color[g] >= 0:
        row[at + int(s.wd4_prev_color[g])] = 1
    at += 4
    if s.phase[g] == CATCH_PHASE and s.catch_offender[g] != seat:
        row[at + (int(s.catch_offender[g]) - seat - 1) % P] = 1
    at += others
    other = seat
    for k in range(others):
        other = other + 1 if other + 1 < P else 0
        if s.revealed_seen[g, seat, other]:
            row[at + k] = 1
            start = at + others + k * C
            copy_cards(row[start:start + C], s.revealed[g, seat, other])
    at += others + others * C
    other = seat
    for k in range(others):
        other = other + 1 if other + 1 < P else 0
        if s.chose_color[g, other] >= 0:
            row[at + 4 * k + int(s.chose_color[g, other])] = 1
    at += 4 * others
    # Version 3 (docs/rules.md §15.9): the pending draw, the house rules' phases, the rules in play.
    row[at] = min(127, s.pending_draw[g])
    row[at + 1] = s.phase[g] == STACK_PHASE
    row[at + 2] = s.phase[g] == JUMP_PHASE
    row[at + 3] = p.deck_size != DECK_SIZE
    row[at + 4] = p.stack_draw2
    row[at + 5] = p.stack_draw4
    row[at + 6] = p.stack_mixed
    row[at + 7] = p.jump_in
    row[at + 8] = p.seven_zero
    row[at + 9] = p.draw_until_playable
    row[at + 10] = p.forced_play
    if with_history:  # Version 4: the round's public history
        write_history(s.history, s.history_count, g, seat, row[at + 11:])


@leaf
def write_history(history, history_count, g, seat, out):
    """out[:HISTORY_LENGTH * HISTORY_ENTRY] := game g's history as seat sees it (HISTORY_LENGTH above): a window of
    its doubled ring, already in its codes, that starts at the oldest of the last HISTORY_LENGTH events."""
    start = (history_count[g] & (HISTORY_LENGTH - 1)) * HISTORY_ENTRY
    copy_history(out[0:HISTORY_LENGTH * HISTORY_ENTRY], history[g, seat, start:start + HISTORY_LENGTH * HISTORY_ENTRY])


@leaf
def copy_history(destination, source):
    """destination[:] = source for a history's entries, a loop of constant length over views (see copy_cards)."""
    for i in range(HISTORY_LENGTH * HISTORY_ENTRY):
        destination[i] = source[i]


# ---------------------------------------------------------------- the step


@jit
def step_games(s, p, actions, rewards, terminated, truncated, auto_reset, bad, allow_idle, scratch_mask, observe, observations, masks):
    """One decision in every game, or none at all: returns how many actions are
    illegal (marked in bad; 0: every game stepped).

    actions[g] = -1 leaves game g as it is when allow_idle; so does a game
    already OVER. A finished game starts a fresh match when auto_reset, else
    stays OVER. rewards, terminated and truncated describe the step. With
    observe, masks and observations then get the new legal masks and the views
    of the players to act. scratch_mask: 75 bools of scratch space.

    This is the only function that holds the turn's rules, each helper inlined
    at one call site (see `leaf`); everything else is a call into small
    compiled functions. (numba copies an inlined function's whole IR once per
    block, and a caller re-optimises the code of every compiled function it
    calls, so the big body is written here once and nothing in this file calls
    this: its callers are ``VectorEngine`` from Python and the compiled rollout
    loop of ``rollout.py``.)
    """
    illegal = check_actions(s, p, actions, bad, allow_idle, scratch_mask)
    if illegal > 0:
        return illegal
    for g in range(actions.shape[0]):
        if p.seven_zero == 1:
            prefetch_hands_moved(s, actions, g + PREFETCH_AHEAD)
        if g + PREFETCH_AHEAD < actions.shape[0]:
            prefetch_history_slot(s.history, s.history_count, g + PREFETCH_AHEAD)
        action = actions[g]
        rewards[g, :] = 0.0
        terminated[g] = False
        truncated[g] = False
        if s.phase[g] == OVER or action < 0:
            continue
        s.event_count[g] = 0
        s.turns[g] += 1
        left_to_do = apply_action(s, p, g, action)
        if left_to_do == END_TURN:
            left_to_do = end_turn(s, p, g)
        if left_to_do == CARD_EFFECT:
            apply_card_effect(s, p, g)
        if s.phase[g] == OVER:
            finish_round(s, p, g, rewards, terminated)
        elif s.turns[g] >= p.max_turns:
            s.phase[g] = OVER
            s.current_player[g] = -1
            truncated[g] = True
            log_event(s, g, EV_TRUNCATED, 0, 0, 0)
        if (terminated[g] or truncated[g]) and auto_reset:
            start_match(s, p, g, s.round_deck[g], False, -1)
        record_history(s.events, s.event_count, s.history, s.history_count, g)
    if observe:
        legal_mask_games(s, p, masks)
        observe_games(s, p, s.current_player, observations)
    return 0
