"""Property tests (hypothesis): invariants of ``VectorEngine`` over random rules, seats, seeds and play.

Every example draws a player count (2..10), a full set of rules options, the
house rules of docs/rules.md §15 among them (with
small ``max_turns`` and ``target_score`` so rounds and matches end quickly), an
engine seed, and a seed for the numpy generator that picks random *legal*
actions. The pick leans towards playing a card with a drawn probability
(``bias``), because uniform play makes rounds of thousands of decisions
(docs/rules.md §8); with ``bias`` 0 it is uniform over the legal set.

What is checked:

1. the 112 cards (108 with the classic deck): hands + draw pile + discard pile
   are always exactly the deck, ``hand_sizes`` are the hands' sums, and no count
   is negative;
2. a running game always has a non-empty legal mask that fits its phase (the
   house rules' "stack" and "jump" phases included), and a valid seat to act;
3. same seed and same actions give identical state arrays and observations; a
   different seed deals differently;
4. an illegal action (or a badly shaped / typed action array) raises
   ``ValueError`` naming the games and changes no state at all;
5. observations have the documented shape and dtype, show the acting player's
   own hand, and leak nothing of another player's hand; every field, decoded
   with the observation table, says what the state arrays say;
6. ``game_state(g)`` is JSON-serialisable and agrees with the arrays;
7. rewards: win/lose +1/-1 at a round end, zeros on truncation, and zero-sum
   card points with ``reward="points"``.

No hypothesis database is written (``database=None``), so the test leaves no
``.hypothesis`` directory behind.
"""

from __future__ import annotations

import copy
import json
import os
import re

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st
from history_model import HistoryModel

from hpuno_env import ACTION_LABELS, CARD_LABELS, VectorEngine
from hpuno_env import kernel
from hpuno_env.options import ALL_HOUSE_RULES
from hpuno_env.cards import (
    ACCEPT,
    CARD_COLOR,
    CARD_POINTS,
    CARD_RANK,
    CATCH,
    CHALLENGE,
    COLOR_BASE,
    COLORS,
    DECK_COPIES,
    DECK_SIZE,
    DECK_SIZES,
    DRAW,
    DRAW2_RANK,
    FULL_DECK,
    KEEP,
    MAX_TARGETS,
    NUM_ACTIONS,
    NUM_CARD_TYPES,
    PASS,
    TARGET_BASE,
    UNO,
    WILD_DRAW4,
)

# HPUNO_PROPERTY_SCALE=10 runs ten times as many examples (a deeper search than CI's).
SCALE = max(1, int(os.environ.get("HPUNO_PROPERTY_SCALE", "1")))


def examples(n: int) -> int:
    return n * SCALE


SETTINGS = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

PLAY_ACTIONS = np.arange(NUM_CARD_TYPES)
COLOR_ACTIONS = np.arange(COLOR_BASE, COLOR_BASE + 4)
TARGET_ACTIONS = np.arange(TARGET_BASE, TARGET_BASE + MAX_TARGETS)
TYPES = np.arange(NUM_CARD_TYPES)
POSITIONS = np.arange(DECK_SIZE)

# ---------------------------------------------------------------- strategies

num_players_st = st.integers(2, 10)
seed_st = st.integers(0, 2**32 - 1)
bias_st = st.sampled_from([0.0, 0.5, 0.85, 1.0])


@st.composite
def rules_st(draw, max_turns=(1, 300), episodes=("round", "match"), rewards=("win", "points")):
    """A full set of rules options; each house rule is on in about half the examples."""
    return {
        "uno_penalty": draw(st.integers(0, 6)),
        "uno_catch": draw(st.sampled_from(["window", "always", "off"])),
        "wd4_bluffing": draw(st.booleans()),
        "two_player_reverse_skips": draw(st.booleans()),
        "voluntary_draw": draw(st.booleans()),
        "gryffindor_color": draw(st.sampled_from(COLORS)),
        "scoring": draw(st.sampled_from(["winner", "lowest"])),
        "episode": draw(st.sampled_from(list(episodes))),
        "reward": draw(st.sampled_from(list(rewards))),
        "max_turns": draw(st.integers(*max_turns)),
        "target_score": draw(st.integers(1, 400)),
        "deck": draw(st.sampled_from(["harry_potter", "classic"])),
        "stacking": draw(st.sampled_from(["none", "none", "draw2", "draw4", "both", "mixed"])),
        "jump_in": draw(st.booleans()),
        "seven_zero": draw(st.booleans()),
        "draw_until_playable": draw(st.booleans()),
        "forced_play": draw(st.booleans()),
    }


# ---------------------------------------------------------------- helpers


def choose_actions(mask: np.ndarray, rng: np.random.Generator, bias: float) -> np.ndarray:
    """A random legal action per game; with probability ``bias`` avoid draw/keep when possible."""
    preferred = mask.copy()
    preferred[:, [DRAW, KEEP]] = False
    lean = preferred.any(axis=1) & (rng.random(len(mask)) < bias)
    pool = np.where(lean[:, None], preferred, mask)
    scores = np.where(pool, rng.random(pool.shape), -1.0)
    actions = scores.argmax(axis=1)
    assert mask[np.arange(len(mask)), actions].all()
    return actions


def snapshot(engine: VectorEngine) -> dict[str, np.ndarray]:
    return {name: copy.deepcopy(array) for name, array in engine.state._asdict().items()}


def assert_same_state(before: dict[str, np.ndarray], engine: VectorEngine, where=""):
    for name, array in engine.state._asdict().items():
        old = before[name]
        assert old.dtype == array.dtype and old.shape == array.shape, f"{name} changed type/shape {where}"
        assert old.tobytes() == array.tobytes(), f"state array {name!r} changed {where}"


def card_counts(engine: VectorEngine) -> np.ndarray:
    """(G, 55): copies of each card type in hands + draw pile + discard pile."""
    s = engine.state
    counts = s.hands.astype(np.int64).sum(axis=1)
    for pile, count in ((s.draw_pile, s.draw_count), (s.discard, s.discard_count)):
        live = POSITIONS[None, :] < count[:, None]
        counts += ((pile[:, :, None] == TYPES) & live[:, :, None]).sum(axis=1)
    return counts


def check_invariants(engine: VectorEngine, mask: np.ndarray, obs: np.ndarray, where: str = "") -> None:
    """Properties 1, 2 and the own-hand part of 5, for every game of the batch."""
    s, P, G = engine.state, engine.num_players, engine.num_games
    opts = engine.options

    # 1. the 112 (or 108) cards, no negative counts, hand sizes
    assert (s.hands >= 0).all(), f"negative hand count {where}"
    assert (s.draw_count >= 0).all() and (s.draw_count <= DECK_SIZE).all(), where
    assert (s.discard_count >= 1).all() and (s.discard_count <= DECK_SIZE).all(), where
    for pile, count in ((s.draw_pile, s.draw_count), (s.discard, s.discard_count)):
        live = POSITIONS[None, :] < count[:, None]
        assert ((pile >= 0) & (pile < NUM_CARD_TYPES) | ~live).all(), f"bad card code in a pile {where}"
    np.testing.assert_array_equal(s.hand_sizes, s.hands.astype(np.int64).sum(axis=2), err_msg=f"hand_sizes {where}")
    assert (s.hand_sizes >= 0).all(), where
    total = s.hand_sizes.astype(np.int64).sum(axis=1) + s.draw_count + s.discard_count
    np.testing.assert_array_equal(total, DECK_SIZES[opts.deck], err_msg=f"card total {where}")
    np.testing.assert_array_equal(card_counts(engine), np.broadcast_to(DECK_COPIES[opts.deck], (G, NUM_CARD_TYPES)), err_msg=f"deck {where}")
    assert (s.pending_draw >= 0).all() and (s.pending_draw % 2 == 0).all(), f"pending draw {s.pending_draw} {where}"
    assert set(np.unique(s.direction)) <= {-1, 1}, where
    # what a seat knows another still holds (a shown or passed hand, less the cards played since) is in that
    # hand, and a seat that has no record of a hand knows nothing of it: hands moved by a 7 or 0 carry the records
    assert (s.revealed_held <= s.hands[:, None, :, :]).all(), f"a card known held is not in the hand {where}"
    assert (s.revealed_held[~s.revealed_seen] == 0).all(), f"held counts without a record {where}"
    assert (s.revealed_held[s.revealed_seen] <= s.revealed[s.revealed_seen]).all(), where

    # 2. legal mask and phase
    assert mask.shape == (G, NUM_ACTIONS) and mask.dtype == np.bool_
    if currently_in_test_context():  # coverage statistics (--hypothesis-show-statistics)
        for name in {kernel.PHASE_NAMES[int(x)] for x in s.phase}:
            event(f"phase {name} seen")
    for g in range(G):
        phase = int(s.phase[g])
        seat = int(s.current_player[g])
        legal = set(np.flatnonzero(mask[g]).tolist())
        at = f"game {g} phase {kernel.PHASE_NAMES[phase]} {where}"
        if phase == kernel.OVER:
            assert not engine.auto_reset, f"a finished game was not auto-reset {at}"
            assert seat == -1 and not legal, at
            continue
        assert 0 <= seat < P, f"current_player {seat} {at}"
        assert legal, f"empty legal mask {at}"
        hand = s.hands[g, seat]
        plays = {a for a in legal if a < NUM_CARD_TYPES}
        others = legal - plays
        assert (phase == kernel.COLOR) == (s.current_color[g] < 0), f"colour {s.current_color[g]} {at}"
        if phase == kernel.PLAY:
            assert others <= {DRAW, UNO}, at
            assert all(hand[c] > 0 for c in plays), f"plays a card not in hand {at}"
            if not opts.voluntary_draw:
                assert (DRAW in legal) == (not plays), at
            else:
                assert DRAW in legal, at
            colour = s.current_color[g]
            top_rank = CARD_RANK[s.discard[g, s.discard_count[g] - 1]]
            holds_colour = hand[CARD_COLOR == colour].any()
            playable = {
                c for c in np.flatnonzero(hand).tolist()
                if c >= NUM_CARD_TYPES - 3 or CARD_COLOR[c] == colour or CARD_RANK[c] == top_rank
            }
            if not opts.wd4_bluffing and holds_colour:
                playable.discard(WILD_DRAW4)
            assert plays == playable, f"playable cards {sorted(playable)} but mask {sorted(plays)} {at}"
        elif phase == kernel.DRAWN:
            drawn = int(s.drawn_card[g])
            assert plays == {drawn} and hand[drawn] > 0, at
            assert others <= {KEEP, UNO} and (KEEP in others) == (not opts.forced_play), at
        elif phase == kernel.COLOR:
            assert legal == set(COLOR_ACTIONS.tolist()), at
        elif phase == kernel.TARGET:
            assert P > 2, at
            assert legal == set(range(TARGET_BASE, TARGET_BASE + P - 1)), at
        elif phase == kernel.CHALLENGE_PHASE:
            # Facing a Wild Draw Four: challenge (with bluffing), accept, or stack a Wild Draw Four.
            assert others <= {CHALLENGE, ACCEPT, UNO} and ACCEPT in others, at
            assert (CHALLENGE in legal) == opts.wd4_bluffing, at
            assert plays <= {WILD_DRAW4} and (plays or opts.wd4_bluffing), at
            if plays:
                assert opts.stacking in ("draw4", "both", "mixed") and hand[WILD_DRAW4] > 0, at
            assert s.pending_draw[g] >= 4, at
        elif phase == kernel.STACK_PHASE:
            # Facing a Draw Two: stack a card that may be stacked, or accept; never without a stack play.
            assert opts.stacking in ("draw2", "both", "mixed"), at
            assert others <= {ACCEPT, UNO} and ACCEPT in others and plays, at
            draw2s = {c for c in np.flatnonzero(hand).tolist() if CARD_COLOR[c] >= 0 and CARD_RANK[c] == DRAW2_RANK}
            assert plays - {WILD_DRAW4} == draw2s, at
            assert WILD_DRAW4 not in plays or (opts.stacking == "mixed" and hand[WILD_DRAW4] > 0), at
            assert s.pending_draw[g] >= 2, at
        elif phase == kernel.JUMP_PHASE:
            # Only a copy of the top card, never by its player nor by the next to play.
            assert opts.jump_in, at
            top = int(s.discard[g, s.discard_count[g] - 1])
            assert plays == {top} and hand[top] > 0 and CARD_COLOR[top] >= 0, at
            assert others <= {PASS, UNO} and PASS in others, at
            assert seat != s.turn_player[g] and seat != s.jump_next[g], at
        elif phase == kernel.CATCH_PHASE:
            assert opts.uno_catch == "window", at
            assert legal == {CATCH, PASS}, at
            assert s.catch_offender[g] != seat and s.hand_sizes[g, s.catch_offender[g]] == 1, at
        else:
            raise AssertionError(f"unknown phase {at}")
        if UNO in legal:
            assert opts.uno_catch != "off" and s.hand_sizes[g, seat] == 2 and not s.uno_called[g, seat], at

    # 5. observation shape, dtype and the own-hand slice
    layout = engine.observation_layout
    assert obs.shape == (G, engine.observation_size) and obs.dtype == np.int8, where
    for g in range(G):
        seat = int(s.current_player[g])
        if seat < 0:
            continue
        np.testing.assert_array_equal(obs[g, layout["hand"]], s.hands[g, seat], err_msg=f"own hand game {g} {where}")
        order = [(seat + 1 + k) % P for k in range(P - 1)]
        np.testing.assert_array_equal(obs[g, layout["other_hand_sizes"]], s.hand_sizes[g, order], err_msg=f"hand sizes game {g} {where}")
        top = int(s.discard[g, s.discard_count[g] - 1])
        assert obs[g, layout["top_card"]].tolist() == [int(c == top) for c in range(NUM_CARD_TYPES)], where
        if s.phase[g] < kernel.NUM_PHASES:
            assert obs[g, layout["phase"]].sum() == 1 and obs[g, layout["phase"]][s.phase[g]] == 1, where
        else:  # "stack" and "jump" have their own one-hot
            assert obs[g, layout["phase"]].sum() == 0 and obs[g, layout["house_phase"]].sum() == 1, where


def run_random_play(engine, rng, bias, steps, on_step=None, check=True):
    """Play ``steps`` random legal steps, checking the invariants before each and after the last."""
    for step in range(steps):
        mask = engine.legal_mask()
        if check:
            check_invariants(engine, mask, engine.observe(), where=f"before step {step}")
        actions = choose_actions(mask, rng, bias)
        out = engine.step(actions)
        if on_step is not None:
            on_step(step, actions, *out)
    if check:
        check_invariants(engine, engine.legal_mask(), engine.observe(), where="at the end")


# ---------------------------------------------------------------- 1, 2, 5: invariants during random play


@settings(max_examples=examples(40), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(), seed=seed_st, play_seed=seed_st, bias=bias_st,
       num_games=st.integers(1, 6), steps=st.integers(1, 250))
def test_invariants_under_random_play(num_players, rules, seed, play_seed, bias, num_games, steps):
    engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, **rules)
    engine.reset()
    run_random_play(engine, np.random.default_rng(play_seed), bias, steps)


@settings(max_examples=examples(15), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(max_turns=(20, 300)), seed=seed_st, play_seed=seed_st,
       bias=st.sampled_from([0.85, 1.0]), steps=st.integers(50, 300))
def test_invariants_without_auto_reset(num_players, rules, seed, play_seed, bias, steps):
    """auto_reset=False: a finished game stays over (no legal action, seat -1) until reset(games=...)."""
    engine = VectorEngine(num_games=4, num_players=num_players, seed=seed, auto_reset=False, **rules)
    engine.reset()
    rng = np.random.default_rng(play_seed)
    for step in range(steps):
        mask = engine.legal_mask()
        check_invariants(engine, mask, engine.observe(), where=f"step {step}")
        over = engine.state.phase == kernel.OVER
        assert (~mask.any(axis=1) == over).all()
        if over.any():
            with pytest.raises(ValueError):
                engine.step(np.where(over, DRAW, choose_actions(np.where(over[:, None], True, mask), rng, bias)))
            assert (engine.observe()[over] == 0).all()
            before = snapshot(engine)
            engine.reset(games=np.flatnonzero(over))
            for name, array in engine.state._asdict().items():  # the running games are untouched
                assert array[~over].tobytes() == before[name][~over].tobytes(), name
            continue
        engine.step(choose_actions(mask, rng, bias))


@settings(max_examples=examples(30), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(max_turns=(1, 40)), seed=seed_st, data=st.data())
def test_invariants_with_hypothesis_chosen_actions(num_players, rules, seed, data):
    """The same invariants with every action drawn by hypothesis from the legal set (shrinkable)."""
    engine = VectorEngine(num_games=2, num_players=num_players, seed=seed, **rules)
    engine.reset()
    for step in range(data.draw(st.integers(1, 60), label="steps")):
        mask = engine.legal_mask()
        check_invariants(engine, mask, engine.observe(), where=f"step {step}")
        actions = np.array(
            [data.draw(st.sampled_from(np.flatnonzero(row).tolist()), label=f"game {g} action") for g, row in enumerate(mask)],
            dtype=np.int64,
        )
        engine.step(actions)
    check_invariants(engine, engine.legal_mask(), engine.observe(), where="at the end")


# ---------------------------------------------------------------- 3: determinism


@settings(max_examples=examples(25), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(), seed=seed_st, other_seed=seed_st, play_seed=seed_st,
       bias=bias_st, steps=st.integers(0, 200))
def test_same_seed_same_games(num_players, rules, seed, other_seed, play_seed, bias, steps):
    engines = [VectorEngine(num_games=4, num_players=num_players, seed=seed, **rules) for _ in range(2)]
    for engine in engines:
        engine.reset()
    a, b = engines
    rng = np.random.default_rng(play_seed)

    def assert_identical(where):
        for name, array in a.state._asdict().items():
            assert array.tobytes() == getattr(b.state, name).tobytes(), f"{name} differs {where}"
        np.testing.assert_array_equal(a.observe(), b.observe(), err_msg=where)
        np.testing.assert_array_equal(a.legal_mask(), b.legal_mask(), err_msg=where)
        np.testing.assert_array_equal(a.state_vector(), b.state_vector(), err_msg=where)

    assert_identical("after reset")
    for step in range(steps):
        actions = choose_actions(a.legal_mask(), rng, bias)
        out_a, out_b = a.step(actions), b.step(actions.copy())
        for x, y in zip(out_a, out_b):
            np.testing.assert_array_equal(x, y, err_msg=f"step {step} outputs")
        assert_identical(f"after step {step}")

    # A different seed deals differently (in at least one of the 4 games).
    if other_seed != seed:
        c = VectorEngine(num_games=4, num_players=num_players, seed=other_seed, **rules)
        c.reset()
        fresh = VectorEngine(num_games=4, num_players=num_players, seed=seed, **rules)
        fresh.reset()
        assert (c.state.round_deck != fresh.state.round_deck).any()
        assert (c.state.hands != fresh.state.hands).any() or (c.state.dealer != fresh.state.dealer).any()

    # reset(seed=...) of a used engine replays the same deals as a fresh engine.
    a.reset(seed=seed)
    fresh = VectorEngine(num_games=4, num_players=num_players, seed=seed, **rules)
    fresh.reset()
    # (Compared through what is live: buffers past draw_count/discard_count/event_count may hold
    # leftovers of the earlier play, which no reader sees.)
    for name in ("hands", "hand_sizes", "draw_count", "discard_count", "dealer", "current_player", "phase",
                 "current_color", "direction", "round_deck", "scores", "rng"):
        assert getattr(a.state, name).tobytes() == getattr(fresh.state, name).tobytes(), name
    for g in range(4):
        assert a.game_state(g) == fresh.game_state(g)
    np.testing.assert_array_equal(a.legal_mask(), fresh.legal_mask())
    np.testing.assert_array_equal(a.observe(), fresh.observe())


# ---------------------------------------------------------------- 4: illegal actions change nothing


@settings(max_examples=examples(40), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(max_turns=(5, 300)), seed=seed_st, play_seed=seed_st,
       bias=bias_st, warmup=st.integers(0, 120), num_games=st.integers(1, 6), data=st.data())
def test_illegal_action_raises_and_changes_nothing(num_players, rules, seed, play_seed, bias, warmup, num_games, data):
    engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, **rules)
    twin = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, **rules)
    engine.reset()
    twin.reset()
    rng = np.random.default_rng(play_seed)
    for _ in range(warmup):
        actions = choose_actions(engine.legal_mask(), rng, bias)
        engine.step(actions)
        twin.step(actions)

    mask = engine.legal_mask()
    actions = choose_actions(mask, rng, bias)
    bad_games = sorted(data.draw(st.sets(st.integers(0, num_games - 1), min_size=1), label="bad games"))
    dtype = data.draw(st.sampled_from([np.int64, np.int32, np.int16, np.int8, np.uint8, np.uint64]), label="dtype")
    info = np.iinfo(dtype)
    for g in bad_games:
        illegal = np.flatnonzero(~mask[g]).tolist()
        out_of_range = [x for x in (-1, -2, NUM_ACTIONS, NUM_ACTIONS + 1, 127, 255, 10**6) if info.min <= x <= info.max]
        actions[g] = data.draw(st.sampled_from(illegal + out_of_range), label=f"illegal action game {g}")
    before = snapshot(engine)
    with pytest.raises(ValueError) as excinfo:
        engine.step(actions.astype(dtype))
    message = str(excinfo.value)
    listed = re.search(r"\[([\d, ]*)\]", message)
    assert listed is not None, f"the message names no games: {message}"
    assert [int(x) for x in listed.group(1).split(",") if x.strip()] == bad_games, message
    for g in bad_games[:5]:
        assert f"game {g}" in message, message
    assert_same_state(before, engine, "after an illegal action")

    # Nothing moved, not even the random generators: the next legal step matches the twin's.
    good = choose_actions(mask, rng, bias)
    for x, y in zip(engine.step(good), twin.step(good)):
        np.testing.assert_array_equal(x, y)
    for name, array in engine.state._asdict().items():
        assert array.tobytes() == getattr(twin.state, name).tobytes(), name


BAD_ACTION_ARRAYS = [
    ("too short", lambda G, a: a[:-1]),
    ("too long", lambda G, a: np.concatenate([a, a[:1]])),
    ("column", lambda G, a: a[:, None]),
    ("row", lambda G, a: a[None, :]),
    ("scalar", lambda G, a: a[0]),
    ("list of lists", lambda G, a: [[int(x)] for x in a]),
    ("float", lambda G, a: a.astype(np.float64)),
    ("float32", lambda G, a: a.astype(np.float32)),
    ("bool", lambda G, a: a.astype(bool)),
    ("strings", lambda G, a: np.array([ACTION_LABELS[x] for x in a])),
    ("objects", lambda G, a: a.astype(object)),
    ("complex", lambda G, a: a.astype(np.complex128)),
    ("none", lambda G, a: None),
]


@pytest.mark.parametrize("name,make", BAD_ACTION_ARRAYS, ids=[n for n, _ in BAD_ACTION_ARRAYS])
@settings(max_examples=examples(5), **SETTINGS)
@given(num_players=num_players_st, seed=seed_st, play_seed=seed_st, warmup=st.integers(0, 40), num_games=st.integers(1, 5))
def test_bad_action_array_raises_and_changes_nothing(name, make, num_players, seed, play_seed, warmup, num_games):
    engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, max_turns=100)
    engine.reset()
    rng = np.random.default_rng(play_seed)
    for _ in range(warmup):
        engine.step(choose_actions(engine.legal_mask(), rng, 0.85))
    actions = choose_actions(engine.legal_mask(), rng, 0.85)
    bad = make(num_games, actions)
    before = snapshot(engine)
    with pytest.raises(ValueError):
        engine.step(bad)
    assert_same_state(before, engine, f"after a {name} action array")


# ---------------------------------------------------------------- 5: nothing of other hands leaks


def deal_positions(num_players: int, dealer: int, seat: int) -> list[int]:
    """Deck positions (top first) dealt to seat: docs/rules.md §3.2."""
    return [i for i in range(7 * num_players) if (dealer + 1 + i) % num_players == seat]


@settings(max_examples=examples(40), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(), seed=seed_st, deck_seed=seed_st, data=st.data())
def test_observation_hides_other_hands(num_players, rules, seed, deck_seed, data):
    """Two stacked decks that differ only in one other player's hand (and the hidden depth of the
    draw pile) give the player to act the very same observation and legal actions."""
    G = 3
    P = num_players
    rng = np.random.default_rng(deck_seed)
    dealer = data.draw(st.integers(0, P - 1), label="dealer")
    deck_size = DECK_SIZES[rules["deck"]]
    decks = np.stack([rng.permutation(FULL_DECK[:deck_size]) for _ in range(G)])  # the classic deck: no Sorting Hats
    a = VectorEngine(num_games=G, num_players=P, seed=seed, **rules)
    a.reset(options={"deck": [[CARD_LABELS[c] for c in deck] for deck in decks], "dealer": dealer})
    actors = a.current_player.copy()

    changed = decks.copy()
    victims = []
    for g in range(G):
        victim = data.draw(st.sampled_from([q for q in range(P) if q != actors[g]]), label=f"victim {g}")
        victims.append(victim)
        # The victim's cards and the deep draw pile (past the starting card, a starting Draw Two's
        # two cards and up to four returned Wild Draw Fours) trade places at random.
        slots = np.array(deal_positions(P, dealer, victim) + list(range(7 * P + 8, deck_size)))
        changed[g, slots] = changed[g, rng.permutation(slots)]
        mine = deal_positions(P, dealer, victim)
        if (np.sort(changed[g, mine]) == np.sort(decks[g, mine])).all():
            # Make sure the hand really changed: swap in a deep card of a type the hand lacks.
            deep = [i for i in range(7 * P + 8, deck_size) if changed[g, i] not in changed[g, mine]]
            i, j = mine[0], deep[0]
            changed[g, [i, j]] = changed[g, [j, i]]
    b = VectorEngine(num_games=G, num_players=P, seed=seed, **rules)
    b.reset(options={"deck": changed, "dealer": dealer})

    np.testing.assert_array_equal(a.current_player, b.current_player)
    for g in range(G):
        assert (a.state.hands[g, victims[g]] != b.state.hands[g, victims[g]]).any(), "the hands should differ"
        np.testing.assert_array_equal(a.state.hands[g, actors[g]], b.state.hands[g, actors[g]])
    np.testing.assert_array_equal(a.observe(), b.observe())
    np.testing.assert_array_equal(a.legal_mask(), b.legal_mask())
    check_invariants(a, a.legal_mask(), a.observe(), "deck a")
    check_invariants(b, b.legal_mask(), b.observe(), "deck b")


# ---------------------------------------------------------------- 6: game_state


def check_game_state(engine: VectorEngine, g: int, where: str = "") -> None:
    s, P = engine.state, engine.num_players
    gs = engine.game_state(g)
    assert json.loads(json.dumps(gs)) == gs, where
    assert set(gs) == {"current", "phase", "hands", "top", "color", "direction", "draw_pile", "discard",
                       "scores", "dealer", "round", "uno_called", "pending_draw"}, where
    agents = [f"player_{p}" for p in range(P)]
    phase = int(s.phase[g])
    assert gs["phase"] == kernel.PHASE_NAMES[phase], where
    assert gs["current"] == (None if phase == kernel.OVER else agents[int(s.current_player[g])]), where
    assert list(gs["hands"]) == agents, where
    for p, agent in enumerate(agents):
        hand = gs["hands"][agent]
        assert len(hand) == s.hand_sizes[g, p], where
        codes = [CARD_LABELS.index(c) for c in hand]
        assert codes == sorted(codes), f"hand not in CARD_LABELS order {where}"
        assert np.bincount(codes, minlength=NUM_CARD_TYPES).tolist() == s.hands[g, p].tolist(), where
    assert len(gs["draw_pile"]) == s.draw_count[g], where
    assert len(gs["discard"]) == s.discard_count[g], where
    assert gs["top"] == gs["discard"][-1] == CARD_LABELS[s.discard[g, s.discard_count[g] - 1]], where
    if s.draw_count[g]:
        assert gs["draw_pile"][0] == CARD_LABELS[s.draw_pile[g, s.draw_count[g] - 1]], where
    everything = [c for hand in gs["hands"].values() for c in hand] + gs["draw_pile"] + gs["discard"]
    assert sorted(CARD_LABELS.index(c) for c in everything) == FULL_DECK[:DECK_SIZES[engine.options.deck]].tolist(), where
    assert gs["pending_draw"] == s.pending_draw[g] >= 0, where
    if gs["phase"] in ("stack", "challenge"):
        assert gs["pending_draw"] > 0, where
    color = int(s.current_color[g])
    assert gs["color"] == (None if color < 0 else COLORS[color]), where
    assert (gs["color"] is None) == (gs["phase"] == "color"), where
    assert gs["direction"] in (1, -1) and gs["direction"] == s.direction[g], where
    assert gs["scores"] == {agent: int(s.scores[g, p]) for p, agent in enumerate(agents)}, where
    assert all(v >= 0 for v in gs["scores"].values()), where
    assert gs["dealer"] == agents[int(s.dealer[g])], where
    assert gs["round"] == s.round_number[g] >= 1, where
    assert gs["uno_called"] == {agent: bool(s.uno_called[g, p]) for p, agent in enumerate(agents)}, where


@settings(max_examples=examples(20), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(max_turns=(1, 150)), seed=seed_st, play_seed=seed_st,
       bias=bias_st, steps=st.integers(0, 150))
def test_game_state_is_json_and_consistent(num_players, rules, seed, play_seed, bias, steps):
    engine = VectorEngine(num_games=3, num_players=num_players, seed=seed, **rules)
    engine.reset()

    def on_step(step, actions, rewards, terminated, truncated):
        for g in range(engine.num_games):
            check_game_state(engine, g, f"game {g} after step {step}")

    for g in range(engine.num_games):
        check_game_state(engine, g, f"game {g} after reset")
    run_random_play(engine, np.random.default_rng(play_seed), bias, steps, on_step=on_step, check=False)


# ---------------------------------------------------------------- 7: rewards


def hand_points(engine: VectorEngine, g: int) -> np.ndarray:
    return (engine.state.hands[g].astype(np.int64) * CARD_POINTS).sum(axis=1)


@settings(max_examples=examples(40), **SETTINGS)
@given(num_players=num_players_st, rules=rules_st(max_turns=(1, 300)), seed=seed_st, play_seed=seed_st,
       bias=st.sampled_from([0.0, 0.85, 1.0]), steps=st.integers(50, 400))
def test_rewards(num_players, rules, seed, play_seed, bias, steps):
    """Checked on finished games with auto_reset=False, where the final hands are still there."""
    P = num_players
    engine = VectorEngine(num_games=6, num_players=P, seed=seed, auto_reset=False, **rules)
    engine.reset()
    rng = np.random.default_rng(play_seed)
    for step in range(steps):
        mask = engine.legal_mask()
        actions = choose_actions(mask, rng, bias)
        scores_before = engine.state.scores.copy()
        rewards, terminated, truncated = engine.step(actions)
        assert rewards.shape == (engine.num_games, P) and rewards.dtype == np.float32
        assert not (terminated & truncated).any()
        for g in range(engine.num_games):
            r = rewards[g].astype(np.float64)
            ends = [e for e in engine.events(g) if e[0] == kernel.EV_ROUND_END]
            at = f"game {g} step {step} rules {rules}"
            if truncated[g]:
                event("truncated")
                assert (r == 0).all(), f"truncation paid {r} {at}"
                assert not ends, at
                continue
            if not ends:  # no round ended in this step
                assert not terminated[g] and (r == 0).all(), at
                continue
            assert len(ends) == 1, at
            event(f"round end ({'terminated' if terminated[g] else 'match goes on'})")
            winner, points = ends[0][1], ends[0][2]
            gained = engine.state.scores[g] - scores_before[g]
            if rules["scoring"] == "winner":
                assert gained[winner] == points and (np.delete(gained, winner) == 0).all(), at
            else:
                assert gained[winner] == 0 and (gained >= 0).all() and gained.sum() == points, at
            if terminated[g]:
                assert engine.state.phase[g] == kernel.OVER, at
                final = hand_points(engine, g)
                assert final[winner] == 0 and points == final.sum(), at
            if rules["reward"] == "points":
                # Card points / 100: the winner's gain is exactly what the others lose.
                assert r[winner] == pytest.approx(points / 100, abs=1e-5), at
                assert r[winner] == pytest.approx(-(r.sum() - r[winner]), abs=1e-4), at
                assert r.sum() == pytest.approx(0.0, abs=1e-4), at
                assert (np.delete(r, winner) <= 0).all(), at
                if terminated[g]:
                    np.testing.assert_allclose(np.delete(r, winner), -np.delete(final, winner) / 100, atol=1e-5, err_msg=at)
                continue
            # reward == "win"
            if rules["episode"] == "round" or (terminated[g] and rules["scoring"] == "winner"):
                assert terminated[g], at
                assert r[winner] == 1.0 and sorted(r.tolist()) == [-1.0] * (P - 1) + [1.0], at
                assert r.sum() == 2 - P, at
            elif terminated[g]:  # a match won on the lowest total: every lowest seat wins
                totals = engine.state.scores[g]
                assert set(r.tolist()) <= {1.0, -1.0}, at
                np.testing.assert_array_equal(r == 1.0, totals == totals.min(), err_msg=at)
                assert (totals >= rules["target_score"]).any(), at
            else:  # a round inside a match: no reward yet
                assert (r == 0).all(), at
        if rules["episode"] == "match":
            for g in np.flatnonzero(terminated):
                if rules["scoring"] == "winner":
                    assert engine.state.scores[g].max() >= rules["target_score"]
        finished = np.flatnonzero(terminated | truncated)
        if finished.size:
            engine.reset(games=finished)


def test_observe_rejects_seats_outside_the_table():
    engine = VectorEngine(num_games=2, num_players=3, seed=0)
    engine.reset()
    for seats in ([0, 3], [-2, 0], [0], [0.0, 1.0]):
        with pytest.raises(ValueError, match="seats"):
            engine.observe(np.array(seats))
    assert (engine.observe(np.array([-1, 2]))[0] == 0).all()


def expected_observation(engine: VectorEngine, g: int, seat: int, history: HistoryModel) -> dict[str, np.ndarray]:
    """Every field of the observation of `seat` in game g, from the state arrays and the
    observation table (README / encoding.observation_layout), field by field; the round's
    history from ``history``, the game's model fed every step's events."""
    s, P = engine.state, engine.num_players
    target = engine.options.target_score
    others = [(seat + k) % P for k in range(1, P)]  # turn order to the left

    def one_hot(size, index):
        row = np.zeros(size, np.int64)
        if index is not None:
            row[index] = 1
        return row

    phase = int(s.phase[g])
    opts = engine.options
    return {
        "hand": s.hands[g, seat].astype(np.int64),
        "top_card": one_hot(NUM_CARD_TYPES, int(s.discard[g, s.discard_count[g] - 1])),
        "current_color": one_hot(4, int(s.current_color[g]) if s.current_color[g] >= 0 else None),
        "phase": one_hot(kernel.NUM_PHASES, phase if phase < kernel.NUM_PHASES else None),
        "drawn_card": one_hot(NUM_CARD_TYPES, int(s.drawn_card[g]) if phase == kernel.DRAWN and seat == s.current_player[g] else None),
        "direction_left": np.array([int(s.direction[g] > 0)]),
        "draw_pile_size": np.array([int(s.draw_count[g])]),
        "discard_counts": np.bincount(s.discard[g, : s.discard_count[g]], minlength=NUM_CARD_TYPES),
        "my_score_pct": np.array([min(100, int(s.scores[g, seat]) * 100 // target)]),
        "my_uno_called": np.array([int(s.uno_called[g, seat])]),
        "other_hand_sizes": np.array([min(127, int(s.hands[g, o].sum())) for o in others]),
        "other_uno_called": np.array([int(s.uno_called[g, o]) for o in others]),
        "other_lacks_color": np.concatenate([s.lacks_color[g, o].astype(np.int64) for o in others]),
        "other_scores_pct": np.array([min(100, int(s.scores[g, o]) * 100 // target) for o in others]),
        "wd4_prev_color": one_hot(4, int(s.wd4_prev_color[g]) if phase == kernel.CHALLENGE_PHASE else None),
        "catch_offender": one_hot(P - 1, others.index(int(s.catch_offender[g])) if phase == kernel.CATCH_PHASE and s.catch_offender[g] != seat else None),
        "revealed_seen": np.array([int(s.revealed_seen[g, seat, o]) for o in others]),
        "revealed_hands": np.concatenate([s.revealed[g, seat, o] * s.revealed_seen[g, seat, o] for o in others]).astype(np.int64),
        "other_chose_color": np.concatenate([one_hot(4, int(s.chose_color[g, o]) if s.chose_color[g, o] >= 0 else None) for o in others]),
        "pending_draw": np.array([min(127, int(s.pending_draw[g]))]),
        "house_phase": np.array([int(phase == kernel.STACK_PHASE), int(phase == kernel.JUMP_PHASE)]),
        "house_rules": np.array([
            int(opts.deck == "classic"), int(opts.stacking in ("draw2", "both", "mixed")),
            int(opts.stacking in ("draw4", "both", "mixed")), int(opts.stacking == "mixed"),
            int(opts.jump_in), int(opts.seven_zero), int(opts.draw_until_playable), int(opts.forced_play),
        ]),
        "history": history.view(seat),
    }



@pytest.mark.parametrize("num_players,rules", [(2, {}), (4, {}), (10, {}), (2, ALL_HOUSE_RULES), (4, ALL_HOUSE_RULES),
                                               (5, {**ALL_HOUSE_RULES, "deck": "classic", "stacking": "draw2"})])
def test_every_observation_field_matches_the_state(num_players, rules):
    """The kernel's observation, decoded field by field, says what the state arrays say,
    for the acting seat and for another seat, over random play with challenges and catches
    (and, under the house rules, stacks, jumps and swapped hands)."""
    engine = VectorEngine(num_games=24, num_players=num_players, seed=num_players, max_turns=400, **rules)
    engine.reset()
    rng = np.random.default_rng(num_players)
    layout = engine.observation_layout
    histories = [HistoryModel(num_players) for _ in range(engine.num_games)]
    for g, history in enumerate(histories):
        history.after_step(engine.events(g))
    assert list(layout) == list(expected_observation(engine, 0, 0, histories[0]))
    seen_phases, seen_revealed = set(), False
    for step in range(300):
        mask = engine.legal_mask()
        for seats in (engine.current_player.astype(np.int64), (engine.current_player.astype(np.int64) + 1) % num_players):
            observations = engine.observe(seats)
            for g in range(engine.num_games):
                expected = expected_observation(engine, g, int(seats[g]), histories[g])
                for name, part in layout.items():
                    np.testing.assert_array_equal(observations[g, part], expected[name], err_msg=f"step {step}, game {g}, seat {seats[g]}: {name}")
                seen_phases.add(int(engine.state.phase[g]))
                seen_revealed |= bool(engine.state.revealed_seen[g].any())
        engine.step(choose_actions(mask, rng, bias=0.7))
        for g, history in enumerate(histories):
            history.after_step(engine.events(g))
    # the play reached the phases whose fields are otherwise all zeros
    assert {kernel.DRAWN, kernel.COLOR, kernel.CHALLENGE_PHASE, kernel.CATCH_PHASE} <= seen_phases
    if rules:
        assert {kernel.STACK_PHASE, kernel.JUMP_PHASE} <= seen_phases
    assert seen_revealed
