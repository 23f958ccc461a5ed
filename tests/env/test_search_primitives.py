"""Copies for search: exact clones, determinized worlds (legal, leak-free, uniform), views, env copies."""

from __future__ import annotations

import copy
import math
import pickle

import numpy as np
import pytest

import hpuno_env
from hpuno_env import VectorEngine, worlds
from hpuno_env.cards import CARD_COLOR, CARD_COPIES, DECK_COPIES, DECK_SIZE, FULL_DECK, NUM_CARD_TYPES
from hpuno_env.kernel import CHALLENGE_PHASE, DRAWN, JUMP_PHASE, STACK_PHASE, EngineState


def _play_random(engine: VectorEngine, steps: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        mask = engine.legal_mask()
        engine.step((rng.random(mask.shape) * mask).argmax(axis=1))


def positions(num_players: int, games: int = 48, seed: int = 0, **rules):
    """Engines of games stopped at several points of play (random legal moves, auto-reset)."""
    found = []
    engine = VectorEngine(games, num_players, seed=seed, **rules)
    engine.reset()
    for round_ in range(4):
        _play_random(engine, 7 + 11 * round_, seed + round_)
        found.append(engine.clone())
    return found


def card_multiset(state: EngineState, g: int) -> np.ndarray:
    counts = state.hands[g].sum(axis=0).astype(np.int64)
    counts += np.bincount(state.draw_pile[g, :state.draw_count[g]], minlength=NUM_CARD_TYPES)
    counts += np.bincount(state.discard[g, :state.discard_count[g]], minlength=NUM_CARD_TYPES)
    return counts


# House rules that add state a world must keep or deal again: the pending draw (stacking),
# jump windows, hands moved and known by a Seven or a Zero, the classic deck.
HOUSE = {"stacking": "mixed", "jump_in": True, "seven_zero": True, "draw_until_playable": True}
CLASSIC_HOUSE = {"deck": "classic", "stacking": "both", "seven_zero": True, "forced_play": True}


# ---------------------------------------------------------------- clones


def test_clone_is_exact_and_independent():
    engine = positions(3)[1]
    twin = engine.clone()
    for name in EngineState._fields:
        assert np.array_equal(getattr(twin.state, name), getattr(engine.state, name)), name
    before = engine.game_state(0)
    _play_random(twin, 5, 1)
    assert engine.game_state(0) == before
    some = engine.clone([5, 2])
    assert some.num_games == 2 and some.game_state(0) == engine.game_state(5) and some.game_state(1) == engine.game_state(2)


def test_copy_into_slots_and_idle_slots():
    engine = positions(2)[2]
    search = VectorEngine(6, 2, auto_reset=False)
    search.leave_idle(np.arange(6))
    assert (search.legal_mask() == 0).all() and (search.current_player == -1).all()
    search.copy_games_into([4, 1], engine, [0, 3])
    assert search.game_state(4) == engine.game_state(0) and search.game_state(1) == engine.game_state(3)
    actions = np.full(6, -1)
    mask = search.legal_mask()
    actions[[1, 4]] = mask[[1, 4]].argmax(axis=1)
    search.step(actions, partial=True)  # the idle slots pass
    assert search.current_player[0] == -1
    with pytest.raises(ValueError, match="slots"):
        search.copy_games_into([1, 1], engine, [0, 3])
    with pytest.raises(ValueError, match="num_players"):
        search.copy_games_into([0], VectorEngine(1, 3, seed=0), [0])


def test_env_deepcopy_and_pickle_keep_the_game():
    env = hpuno_env.env(num_players=3)
    env.reset(seed=4)
    for _ in range(12):
        observation, *_ = env.last()
        env.step(int(np.flatnonzero(observation["action_mask"])[-1]))
    for twin in (copy.deepcopy(env), pickle.loads(pickle.dumps(env))):
        assert twin.unwrapped.game_state() == env.unwrapped.game_state()
        assert twin.agent_selection == env.agent_selection
        observation, *_ = twin.last()
        twin.step(int(np.flatnonzero(observation["action_mask"])[0]))
        assert twin.unwrapped.game_state() != env.unwrapped.game_state()  # the original did not move
    raw = hpuno_env.raw_env(num_players=2)
    raw.reset(seed=1)
    assert copy.deepcopy(raw).game_state() == raw.game_state()


# ---------------------------------------------------------------- determinized worlds are legal


def test_every_field_is_classified_hidden_or_public():
    worlds.check_classified()
    assert set(worlds.HIDDEN) | set(worlds.PUBLIC) == set(EngineState._fields)


@pytest.mark.parametrize("num_players, rules", [(2, {}), (3, {}), (4, {}), (2, HOUSE), (3, HOUSE), (4, CLASSIC_HOUSE)])
def test_determinized_worlds_are_legal_and_keep_what_the_viewer_knows(num_players, rules):
    checked_revealed = 0
    copies = DECK_COPIES[rules.get("deck", "harry_potter")]
    phases = set()
    for engine in positions(num_players, seed=num_players, **rules):
        state = engine.state
        phases |= set(state.phase.tolist())
        for g in range(0, engine.num_games, 3):
            for viewer in {int(state.current_player[g]), (int(state.current_player[g]) + 1) % num_players}:
                count = 6
                found = engine.determinize(g, count, viewer=viewer, seed=g)
                w = found.state
                views = found.observe(np.full(count, viewer, np.int8))
                truth = engine.observe(np.where(np.arange(engine.num_games) == g, viewer, -1).astype(np.int8))[g]
                assert (views == truth).all(), "a world must look to the viewer exactly as the game does"
                if viewer == state.current_player[g]:
                    assert (found.legal_mask() == engine.legal_mask()[g]).all()
                for k in range(count):
                    assert np.array_equal(card_multiset(w, k), copies), "every card exactly once"
                    assert np.array_equal(w.hands[k].sum(axis=1), state.hands[g].sum(axis=1))
                    assert np.array_equal(w.hand_sizes[k], state.hand_sizes[g])
                    assert np.array_equal(w.hands[k, viewer], state.hands[g, viewer])
                    assert np.array_equal(w.discard[k, :state.discard_count[g]], state.discard[g, :state.discard_count[g]])
                    for name in worlds.PUBLIC:
                        assert np.array_equal(getattr(w, name)[k], getattr(state, name)[g]), name
                    for owner in range(num_players):
                        if owner != viewer and state.revealed_seen[g, viewer, owner]:
                            still_held = state.revealed_held[g, viewer, owner]
                            assert (still_held <= state.revealed[g, viewer, owner]).all()
                            assert (w.hands[k, owner] >= still_held).all()
                            checked_revealed += still_held.sum() > 0
                    if w.phase[k] == DRAWN:
                        assert w.hands[k, w.current_player[k], w.drawn_card[k]] > 0
    if num_players > 2 or rules.get("seven_zero"):
        assert checked_revealed, "the positions should include hands shown by a challenge or passed by a 7 or 0"
    if rules == HOUSE:
        assert {STACK_PHASE, JUMP_PHASE} <= phases, "the positions should include stacks and jump windows"


@pytest.mark.parametrize("rules", [{}, HOUSE])
def test_worlds_play_on_to_the_end(rules):
    engine = positions(4, games=16, **rules)[2]
    found = engine.determinize(0, 64, seed=3)
    found.auto_reset = False
    rng = np.random.default_rng(0)
    for _ in range(20000):  # uniform random play may run to max_turns (10000 decisions)
        mask = found.legal_mask()
        if not mask.any():
            break
        actions = np.where(mask.any(axis=1), (rng.random(mask.shape) * mask).argmax(axis=1), -1)
        found.step(actions, partial=True)
    assert not found.legal_mask().any()


@pytest.mark.parametrize("rules", [{}, HOUSE])
def test_evidence_deals_a_seat_none_of_a_colour_it_drew_on_where_the_unseen_cards_allow(rules):
    """2 players: the other seat's hand holds a lacked colour only beyond what the unseen cards of other colours
    fill, besides a card it is known to hold; the worlds stay worlds (every card once, the view unchanged)."""
    checked = 0
    for engine in positions(2, seed=7, **rules):
        state = engine.state
        for g in range(engine.num_games):
            viewer = int(state.current_player[g])
            seat = 1 - viewer
            lacked = state.lacks_color[g, seat]
            if not lacked.any():
                continue
            found = engine.determinize(g, 8, viewer=viewer, seed=g, evidence=True)
            truth = engine.observe(np.where(np.arange(engine.num_games) == g, viewer, -1).astype(np.int8))[g]
            assert (found.observe(np.full(8, viewer, np.int8)) == truth).all()
            barred_types = np.flatnonzero((CARD_COLOR >= 0) & lacked[np.maximum(CARD_COLOR, 0)])
            known = state.revealed_held[g, viewer, seat]
            unseen = state.hands[g, seat] - known + np.bincount(state.draw_pile[g, :state.draw_count[g]], minlength=NUM_CARD_TYPES)
            allowed = int(unseen.sum() - unseen[barred_types].sum())
            needed = int(state.hand_sizes[g, seat] - known.sum())
            for k in range(8):
                assert np.array_equal(card_multiset(found.state, k), DECK_COPIES[rules.get("deck", "harry_potter")])
                barred = int((found.state.hands[k, seat] - known)[barred_types].sum())
                assert barred == max(0, needed - allowed), (barred, needed, allowed)
            checked += 1
    assert checked > 20
    plain = positions(2, seed=7)[2]
    assert not np.array_equal(plain.determinize(0, 8, seed=1).state.hands, plain.determinize(0, 8, seed=2).state.hands)
    with pytest.raises(ValueError, match="evidence"):
        plain.determinize(0, 8, seed=1, evidence="yes")


@pytest.mark.parametrize("num_players, rules", [(2, {}), (4, HOUSE)])
def test_weighted_worlds_are_legal_and_follow_the_weights(num_players, rules):
    """Worlds dealt with per-seat weights of each kind: still worlds (every card once, the sizes, the viewer's hand
    and view kept, known cards held), a kind of weight 0 in a seat's row never dealt to it where the unseen cards
    allow, and a kind weighted up dealt to that seat more often than in uniform worlds."""
    copies = DECK_COPIES[rules.get("deck", "harry_potter")]
    checked = 0
    for engine in positions(num_players, seed=5, **rules):
        state = engine.state
        for g in range(0, engine.num_games, 4):
            viewer = int(state.current_player[g])
            seat = (viewer + 1) % num_players
            weights = np.ones((num_players, NUM_CARD_TYPES))
            weights[seat, CARD_COLOR == 0] = 0.0  # no red for the next seat
            weights[seat, 52] = 50.0  # and wilds if any are unseen
            found = engine.determinize(g, 16, viewer=viewer, seed=g, weights=weights)
            uniform = engine.determinize(g, 16, viewer=viewer, seed=g)
            truth = engine.observe(np.where(np.arange(engine.num_games) == g, viewer, -1).astype(np.int8))[g]
            assert (found.observe(np.full(16, viewer, np.int8)) == truth).all()
            known = state.revealed_held[g, viewer, seat]
            pile = np.bincount(state.draw_pile[g, :state.draw_count[g]], minlength=NUM_CARD_TYPES)
            unseen = state.hands[g, seat] - known + pile + sum(state.hands[g, o] - state.revealed_held[g, viewer, o]
                                                                for o in range(num_players) if o not in (viewer, seat))
            for k in range(16):
                assert np.array_equal(card_multiset(found.state, k), copies)
                assert np.array_equal(found.state.hand_sizes[k], state.hand_sizes[g])
                assert (found.state.hands[k, seat] >= known).all()
            drawn_red = (state.phase[g] == DRAWN and state.current_player[g] == seat)  # its drawn card is dealt first
            if unseen[CARD_COLOR != 0].sum() >= state.hand_sizes[g, seat] + 1 and not drawn_red:
                red = (found.state.hands[:, seat] - known)[:, CARD_COLOR == 0].sum()
                assert red == 0, "no red dealt to the seat whose red weighs 0"
                checked += 1
            if unseen[52] > 0:
                assert found.state.hands[:, seat, 52].sum() >= uniform.state.hands[:, seat, 52].sum()
    assert checked > 10
    engine = positions(num_players, seed=5, **rules)[1]
    for bad in (np.ones((num_players, 54)), -np.ones((num_players, NUM_CARD_TYPES)), np.full((num_players, NUM_CARD_TYPES), np.nan)):
        with pytest.raises(ValueError, match="weights must be an array of shape"):
            engine.determinize(0, 4, seed=1, weights=bad)
    with pytest.raises(ValueError, match="not both"):
        engine.determinize(0, 4, seed=1, evidence=True, weights=np.ones((num_players, NUM_CARD_TYPES)))


def test_one_seed_one_set_of_worlds_and_bad_arguments():
    engine = positions(3)[1]
    first, second = engine.determinize(2, 8, seed=5), engine.determinize(2, 8, seed=5)
    for name in EngineState._fields:
        assert np.array_equal(getattr(first.state, name), getattr(second.state, name)), name
    assert not np.array_equal(engine.determinize(2, 8, seed=6).state.hands, first.state.hands)
    with pytest.raises(ValueError, match="count"):
        engine.determinize(0, 0)
    with pytest.raises(ValueError, match="viewer"):
        engine.determinize(0, 2, viewer=3)
    with pytest.raises(ValueError, match="game"):
        engine.determinize(48, 2)


# ---------------------------------------------------------------- nothing in a world tells the hidden cards


def hidden_twin(engine: VectorEngine, g: int, viewer: int, seed: int) -> VectorEngine:
    """A copy of game g that differs only in what the viewer cannot see: hidden cards swapped
    between the other hands and the draw pile, the pile reordered, and every scrubbed record
    (generator, logs, kept decks, stale cards, other seats' knowledge) changed."""
    rng = np.random.default_rng(seed)
    twin = engine.clone([g])
    s = twin.state
    P = engine.num_players
    known = np.zeros((P, NUM_CARD_TYPES), np.int64)
    for owner in range(P):
        if owner != viewer:
            known[owner] = s.revealed_held[0, viewer, owner]
    drawer_card = int(s.drawn_card[0]) if s.phase[0] == DRAWN else -1
    for _ in range(20):  # swap a free card of another hand with a draw pile card
        owner = int(rng.choice([seat for seat in range(P) if seat != viewer]))
        free = s.hands[0, owner].astype(np.int64) - known[owner]
        if owner == s.current_player[0] and drawer_card >= 0:
            free[drawer_card] -= 1  # keep the drawn card where it is (the phase depends on it)
        if owner == s.current_player[0] and s.phase[0] == JUMP_PHASE:
            free[s.discard[0, s.discard_count[0] - 1]] -= 1  # and the jumper's copy of the top card
        count = int(s.draw_count[0])
        if free.sum() <= 0 or count == 0:
            continue
        card = int(rng.choice(np.repeat(np.arange(NUM_CARD_TYPES), np.maximum(free, 0))))
        place = int(rng.integers(count))
        other = int(s.draw_pile[0, place])
        s.hands[0, owner, card] -= 1
        s.hands[0, owner, other] += 1
        s.draw_pile[0, place] = card
    s.draw_pile[0, :s.draw_count[0]] = rng.permutation(s.draw_pile[0, :s.draw_count[0]])
    s.draw_pile[0, s.draw_count[0]:] = rng.integers(0, NUM_CARD_TYPES, DECK_SIZE - int(s.draw_count[0]))
    s.discard[0, s.discard_count[0]:] = rng.integers(0, NUM_CARD_TYPES, DECK_SIZE - int(s.discard_count[0]))
    s.rng[0] = rng.integers(1, 2**32, 4)
    s.events[0] = rng.integers(0, 50, s.events[0].shape)
    s.event_count[0] = rng.integers(1, 40)
    s.round_deck[0] = rng.permutation(FULL_DECK)
    s.reshuffled[0] = rng.permutation(FULL_DECK)
    s.scratch_deck[0] = rng.permutation(FULL_DECK)
    if s.phase[0] != DRAWN:
        s.drawn_card[0] = rng.integers(0, NUM_CARD_TYPES)
    if s.phase[0] not in (CHALLENGE_PHASE, STACK_PHASE):
        s.wd4_guilty[0] = not s.wd4_guilty[0]
    for other_viewer in range(P):
        for owner in range(P):
            if viewer not in (other_viewer, owner) and s.revealed_seen[0, other_viewer, owner]:
                s.revealed[0, other_viewer, owner] = rng.integers(0, 3, NUM_CARD_TYPES)
                s.revealed_held[0, other_viewer, owner] = rng.integers(0, 3, NUM_CARD_TYPES)
    return twin


def leak_free(engine: VectorEngine, hidden: dict, checked_fields: set) -> bool:
    """Do game g and its hidden twin give the same worlds, field by field, under one seed?"""
    same = True
    for g in range(engine.num_games):
        viewer = int(engine.state.current_player[g])
        twin = hidden_twin(engine, g, viewer, seed=g)
        assert (twin.observe(np.array([viewer], np.int8)) == engine.observe(np.where(np.arange(engine.num_games) == g, viewer, -1).astype(np.int8))[g]).all()
        ours = VectorEngine(4, engine.num_players, auto_reset=False, **engine.options.as_dict())
        theirs = VectorEngine(4, engine.num_players, auto_reset=False, **engine.options.as_dict())
        worlds.determinize_games(ours.state, np.arange(4), engine.state, g, viewer, 11, True, hidden)
        worlds.determinize_games(theirs.state, np.arange(4), twin.state, 0, viewer, 11, True, hidden)
        for name in EngineState._fields:
            if not np.array_equal(getattr(ours.state, name), getattr(theirs.state, name)):
                checked_fields.add(name)
                same = False
    return same


@pytest.fixture(scope="module")
def leak_positions():
    # Three players, so that some hands were shown to another seat than the viewer; under the
    # standard rules and the house rules (pending draws, jump windows, hands passed by 7s and 0s).
    return [engine.clone(np.arange(0, 48, 2)) for rules in ({}, HOUSE) for engine in positions(3, seed=9, **rules)]


def test_games_that_differ_only_in_hidden_things_give_the_same_worlds(leak_positions):
    differing: set = set()
    assert all(leak_free(engine, worlds.HIDDEN, differing) for engine in leak_positions), f"leaked: {differing}"


@pytest.mark.parametrize("entry", sorted(worlds.HIDDEN))
def test_each_hidden_entry_is_needed(entry, leak_positions):
    """Dropping any one entry of the table makes the worlds tell the hidden things apart."""
    leaking = {name: row for name, row in worlds.HIDDEN.items() if name != entry}
    differing: set = set()
    assert not all(leak_free(engine, leaking, differing) for engine in leak_positions)
    assert entry in differing


# ---------------------------------------------------------------- uniform over the unseen places


def chi_square_critical(degrees: int, z: float = 3.09) -> float:
    """The chi-square quantile at upper tail 0.001 (Wilson-Hilferty)."""
    k = degrees
    return k * (1 - 2 / (9 * k) + z * math.sqrt(2 / (9 * k))) ** 3


def test_an_unseen_cards_place_is_uniform_over_the_unseen_places():
    engine = positions(4, seed=2)[1]
    g = 0
    s = engine.state
    viewer = int(s.current_player[g])
    # A card type the viewer has not seen and of which exactly one copy is hidden.
    seen = s.hands[g, viewer] + s.discard_counts[g]
    candidates = np.flatnonzero(CARD_COPIES - seen == 1)
    card = int(candidates[0])
    count = 4000
    found = engine.determinize(g, count, seed=123).state
    others = [seat for seat in range(4) if seat != viewer]
    pile = int(s.draw_count[g])
    # Places: each other hand (as many places as cards), the draw pile in four parts by depth.
    parts = np.array_split(np.arange(pile), 4)
    observed = [int((found.hands[:, seat, card] > 0).sum()) for seat in others]
    expected_share = [int(s.hand_sizes[g, seat]) for seat in others]
    for part in parts:
        observed.append(int((found.draw_pile[:, part] == card).any(axis=1).sum()))
        expected_share.append(len(part))
    places = sum(expected_share)
    expected = np.array(expected_share) / places * count
    assert sum(observed) == count
    statistic = float(((np.array(observed) - expected) ** 2 / expected).sum())
    assert statistic < chi_square_critical(len(observed) - 1), (observed, expected.round(1))


# ---------------------------------------------------------------- a game from a view


@pytest.mark.parametrize("num_players, rules", [(2, {}), (4, {}), (2, HOUSE), (4, CLASSIC_HOUSE)])
def test_a_game_loaded_from_a_view_shows_that_view(num_players, rules):
    for engine in positions(num_players, games=24, seed=5, **rules):
        in_play = np.flatnonzero(engine.state.phase != JUMP_PHASE)  # a jump window's view is refused
        views, masks = engine.observe()[in_play], engine.legal_mask()[in_play]
        loaded = VectorEngine(len(in_play), num_players, auto_reset=False, **rules)
        for g in range(len(in_play)):
            loaded.load_view(g, views[g])
        assert (loaded.observe() == views).all()
        assert (loaded.legal_mask() == masks).all()
        for g in range(0, len(in_play), 4):
            found = loaded.determinize(g, 4, viewer=0, seed=g)
            assert (found.observe() == views[g]).all()
            for k in range(4):
                assert np.array_equal(card_multiset(found.state, k), DECK_COPIES[rules.get("deck", "harry_potter")])
        jumping = np.flatnonzero(engine.state.phase == JUMP_PHASE)
        if len(jumping):
            with pytest.raises(ValueError, match="jump"):
                loaded.load_view(0, engine.observe()[jumping[0]])
    with pytest.raises(ValueError, match="observation"):
        loaded.load_view(0, views[0][:-1])
