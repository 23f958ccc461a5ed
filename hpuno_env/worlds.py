"""Copies of games for search: exact clones, and determinized worlds that keep only what a seat knows.

``VectorEngine.clone``, ``determinize``, ``copy_games_into``, ``determinize_into``
and ``load_view`` are the public face (engine.py); this module holds how
they work, and the one table of what a seat cannot see (``HIDDEN``).

A copy copies every field of the ``EngineState`` record, whatever fields the
record has. A determinized copy then passes through ``HIDDEN``: each entry
names a field that can tell the viewer something it has not seen and says
how that field is dealt again or scrubbed. Every other field is public and
listed in ``PUBLIC``; a field in neither raises ``TypeError`` when a world is
dealt, so a field added to the record must be classified before worlds can
be made.

What the viewer knows and keeps: its own hand, the discard pile (in order),
every public fact (hand and pile sizes, colour, direction, phase, calls,
scores, the colours seats showed they lack or chose), the card it just drew,
and the cards of a hand shown to it by a challenge that are still in that
hand. Everything else (the other hands, the draw pile's cards and order) is
dealt again, uniformly at random from the cards the viewer has not seen, with
every hand keeping its size: uniformly given the facts kept above. Not used
(docs/research.md lists them): under jump-in with
3+ players, that a coloured card played with no jump window proves no other
seat held its twin, and that the seats a window skipped held no copy; under
draw until playable, that the cards drawn before the playable one were
unplayable when drawn; and, unless asked, the soft evidence of the record.
``evidence=True`` uses one piece of it: a seat that drew by choice while a
colour was current (``lacks_color``, public) is dealt none of that colour, as
far as the unseen cards allow; the right worlds for an opponent that plays
whenever it can, as the heuristic does (it then holds none unless a card drawn
since was of that colour), not for one that draws at will.
"""

from __future__ import annotations

import numpy as np

from .cards import CARD_COLOR, CARD_RANK, DECK_SIZE, FULL_DECK, NUM_CARD_TYPES, SORTING_HAT, WILD, WILD_DRAW4
from .encoding import observation_layout
from .kernel import (
    CATCH_PHASE,
    CHALLENGE_PHASE,
    COLOR,
    DRAWN,
    HISTORY_ENTRY,
    HISTORY_LENGTH,
    JUMP_PHASE,
    NUM_HISTORY_KINDS,
    OVER,
    PLAY,
    SEAT_VALUED_KINDS,
    STACK_PHASE,
    TARGET,
    EngineState,
)


class _Deal:
    """One world per target slot: the unseen cards of game ``game`` dealt again.

    ``hands`` (k, P, 55) and ``draw_pile`` (k, 112, top last, -1 beyond the
    count) are the new cards; ``drawn`` (k,) the drawn card of a DRAWN phase
    whose drawer is not the viewer (else the old one). Not used: that the seats
    before a jump window's jumper hold no copy of the card (the window asks the
    first holder in seat order)."""

    def __init__(self, source: EngineState, game: int, viewer: int, count: int, rng: np.random.Generator, wd4_bluffing: bool,
                 evidence: bool = False, weights: np.ndarray | None = None):
        num_players = source.hands.shape[1]
        hands = source.hands[game].astype(np.int64)
        draw_count = int(source.draw_count[game])
        others = [seat for seat in range(num_players) if seat != viewer]
        # Cards of a hand shown to the viewer and not played since (the kernel keeps them).
        known = np.zeros_like(hands)
        for seat in others:
            known[seat] = source.revealed_held[game, viewer, seat]
        pile = np.bincount(source.draw_pile[game, :draw_count], minlength=NUM_CARD_TYPES)
        unseen = pile + (hands - known)[others].sum(axis=0)
        pool = np.repeat(np.arange(NUM_CARD_TYPES), unseen)
        # A random order of the unseen cards per world (argsort of uniform keys).
        cards = pool[np.argsort(rng.random((count, len(pool))), axis=1)] if len(pool) else np.zeros((count, 0), np.int64)
        needed = {seat: int(hands[seat].sum() - known[seat].sum()) for seat in others}

        # The seat to act, when it is not the viewer, may be known to hold a card: one it just drew
        # and can play (phase drawn), or a copy of the card on top (a jump window). In each world
        # the first such card of the random order, a uniform pick among them, goes to that seat.
        actor = int(source.current_player[game])
        phase = source.phase[game]
        top = int(source.discard[game, source.discard_count[game] - 1])
        self.drawn = np.full(count, source.drawn_card[game], np.int64)
        must_hold = None
        if actor != viewer and needed.get(actor, 0) > 0 and len(pool):
            if phase == DRAWN:
                color = int(source.current_color[game])
                top_rank = int(CARD_RANK[top])
                must_hold = (CARD_COLOR[cards] == color) | ((CARD_RANK[cards] == top_rank) & (CARD_COLOR[cards] >= 0))
                must_hold |= (cards == WILD) | (cards == SORTING_HAT) | ((cards == WILD_DRAW4) & wd4_bluffing)
            elif phase == JUMP_PHASE and known[actor, top] == 0:
                must_hold = cards == top
        if must_hold is not None:
            first = np.where(must_hold.any(axis=1), must_hold.argmax(axis=1), 0)
            rows = np.arange(count)
            chosen = cards[rows, first].copy()
            cards[rows, first] = cards[:, 0]
            cards[:, 0] = chosen
            if phase == DRAWN:
                self.drawn = chosen
            others = [actor] + [seat for seat in others if seat != actor]  # its share starts at position 0

        if weights is not None:  # each seat's cards drawn with a belief's odds of each kind against the draw pile
            _deal_by_weights(cards, others, needed, weights, 1 if must_hold is not None else 0, rng)
        elif evidence:  # a seat that drew by choice on a colour gets none of it where the unseen cards allow
            start = 0
            for seat in others:
                kept = 1 if must_hold is not None and seat == actor else 0  # its known card, at position 0
                lacked = source.lacks_color[game, seat]
                if lacked.any() and needed[seat] > kept:
                    _deal_without_lacked(cards, start + kept, needed[seat] - kept, lacked, rng)
                start += needed[seat]

        self.hands = np.repeat(hands[None], count, axis=0)
        rows = np.arange(count)[:, None]
        start = 0
        for seat in others:
            share = cards[:, start:start + needed[seat]]
            start += needed[seat]
            counts = np.zeros((count, NUM_CARD_TYPES), np.int64)
            np.add.at(counts, (np.broadcast_to(rows, share.shape), share), 1)
            self.hands[:, seat] = counts + known[seat]
        self.draw_pile = np.full((count, DECK_SIZE), -1, np.int64)
        self.draw_pile[:, :draw_count] = cards[:, start:start + draw_count]
        self.others = [seat for seat in range(num_players) if seat != viewer]


def _deal_by_weights(cards: np.ndarray, others: list[int], needed: dict, weights: np.ndarray, kept: int,
                     rng: np.random.Generator) -> None:
    """In place, per world: the shares of ``cards`` (each seat of ``others`` in turn, from position 0) become draws
    without replacement from the cards not dealt yet, card by card in proportion to ``weights[seat, kind]``
    (Efraimidis-Spirakis keys: the largest ``log(u) / weight``); what is left, the draw pile, keeps its random
    order. ``kept``: the first seat's first card is known (a drawn card, a jump's twin) and stays."""
    pool = cards[:, kept:]
    keys = np.log(rng.random(pool.shape))
    taken = np.zeros(pool.shape, np.bool_)
    dealt = []
    for index, seat in enumerate(others):
        take = needed[seat] - (kept if index == 0 else 0)
        if take <= 0:
            continue
        weight = weights[seat][pool]
        score = np.where(taken, -np.inf, np.where(weight > 0, keys / np.maximum(weight, 1e-300), -1e300))
        chosen = np.argpartition(-score, take - 1, axis=1)[:, :take]
        dealt.append(np.take_along_axis(pool, chosen, axis=1))
        np.put_along_axis(taken, chosen, True, axis=1)
    rest = pool[~taken].reshape(len(pool), -1)
    cards[:, kept:] = np.concatenate([*dealt, rest], axis=1)


def _deal_without_lacked(cards: np.ndarray, start: int, take: int, lacked: np.ndarray, rng: np.random.Generator) -> None:
    """In place, per world: ``cards[:, start:start + take]`` become the first ``take`` cards from ``start`` on whose
    colour is not ``lacked`` (then lacked ones, if too few), in their random order; the cards after them are put in
    a fresh random order, so the hands dealt later and the draw pile stay uniform over what is left."""
    segment = cards[:, start:]
    colour = CARD_COLOR[segment]
    barred = (colour >= 0) & lacked[np.maximum(colour, 0)]
    segment = np.take_along_axis(segment, np.argsort(barred, axis=1, kind="stable"), axis=1)
    rest = segment[:, take:]
    cards[:, start:start + take] = segment[:, :take]
    cards[:, start + take:] = np.take_along_axis(rest, np.argsort(rng.random(rest.shape), axis=1), axis=1)


# ---------------------------------------------------------------- the table of hidden fields
#
# Each writer gets (worlds, slots, source, game, viewer, deal) and overwrites its field in
# worlds[slots], which already hold exact copies of source's game.


def _write_hands(worlds, slots, source, game, viewer, deal):
    worlds.hands[slots] = deal.hands


def _write_draw_pile(worlds, slots, source, game, viewer, deal):
    worlds.draw_pile[slots] = deal.draw_pile


def _write_drawn_card(worlds, slots, source, game, viewer, deal):
    if source.phase[game] == DRAWN:
        worlds.drawn_card[slots] = deal.drawn
    else:
        worlds.drawn_card[slots] = -1


def _challenge_open(source, game) -> bool:
    """May the seat to act challenge a Wild Draw Four now (a challenge, or a stack on one)?"""
    top = source.discard[game, source.discard_count[game] - 1]
    return source.phase[game] == CHALLENGE_PHASE or (source.phase[game] == STACK_PHASE and top == WILD_DRAW4)


def _write_wd4_guilty(worlds, slots, source, game, viewer, deal):
    offender = int(source.wd4_player[game])
    color = int(source.wd4_prev_color[game])
    if not _challenge_open(source, game):
        worlds.wd4_guilty[slots] = False  # read only while a challenge may come; else an old verdict
    elif offender != viewer and 0 <= offender and 0 <= color:
        worlds.wd4_guilty[slots] = deal.hands[:, offender, color * 13:color * 13 + 13].sum(axis=1) > 0


def _shown_to_others(source, game, deal):
    """(other viewer, owner) pairs, neither of them the viewer, where a hand was shown."""
    return [(other_viewer, owner) for other_viewer in deal.others for owner in deal.others
            if owner != other_viewer and source.revealed_seen[game, other_viewer, owner]]


def _write_revealed(worlds, slots, source, game, viewer, deal):
    # What other seats were shown is not the viewer's to know: in a world they were shown the
    # owner's dealt hand (as if now). Rows of the viewer's own hand stay.
    for other_viewer, owner in _shown_to_others(source, game, deal):
        worlds.revealed[slots, other_viewer, owner] = deal.hands[:, owner]


def _write_revealed_held(worlds, slots, source, game, viewer, deal):
    for other_viewer, owner in _shown_to_others(source, game, deal):
        worlds.revealed_held[slots, other_viewer, owner] = deal.hands[:, owner]


def _write_discard(worlds, slots, source, game, viewer, deal):
    worlds.discard[slots, int(source.discard_count[game]):] = -1  # stale cards from before a reshuffle


def _write_round_deck(worlds, slots, source, game, viewer, deal):
    worlds.round_deck[slots] = FULL_DECK  # a world has no deal of its own: the deck in card order


def _write_reshuffled(worlds, slots, source, game, viewer, deal):
    worlds.reshuffled[slots] = -1


def _write_scratch_deck(worlds, slots, source, game, viewer, deal):
    worlds.scratch_deck[slots] = FULL_DECK


def _write_events(worlds, slots, source, game, viewer, deal):
    worlds.events[slots] = 0


def _write_event_count(worlds, slots, source, game, viewer, deal):
    worlds.event_count[slots] = 0


def _write_rng(worlds, slots, source, game, viewer, deal):
    pass  # written by the caller, from the seed of the determinization


HIDDEN = {
    "hands": ("the other seats' cards, less those shown to the viewer and still held, dealt again; sizes kept", _write_hands),
    "draw_pile": ("dealt again from the same unseen cards (size kept); -1 beyond draw_count (stale cards)", _write_draw_pile),
    "drawn_card": ("another seat's drawn card: a uniform pick of the playable unseen cards; -1 outside the drawn phase", _write_drawn_card),
    "wd4_guilty": ("while a challenge may come: recomputed from the offender's dealt hand; else False (an old verdict)", _write_wd4_guilty),
    "revealed": ("hands shown to other seats: the owner's dealt hand; hands shown to the viewer stay", _write_revealed),
    "revealed_held": ("the same rows as revealed: the owner's dealt hand", _write_revealed_held),
    "discard": ("-1 beyond discard_count (stale cards from before a reshuffle)", _write_discard),
    "round_deck": ("the full deck in card order (the true deal tells every hand)", _write_round_deck),
    "reshuffled": ("all -1 (the last reshuffle's order is the draw pile's)", _write_reshuffled),
    "scratch_deck": ("the full deck in card order", _write_scratch_deck),
    "events": ("cleared (events name drawn cards)", _write_events),
    "event_count": ("0 (the events are cleared)", _write_event_count),
    "rng": ("fresh streams from the determinization's seed (the old one fixes every future reshuffle)", _write_rng),
}

PUBLIC = (
    "hand_sizes", "draw_count", "discard_count", "discard_counts", "current_color", "direction", "phase",
    "current_player", "turn_player", "turn_card", "starting_wild", "uno_called", "wd4_player", "wd4_prev_color",
    "catch_offender", "revealed_seen", "lacks_color", "chose_color", "scores", "dealer", "round_number", "turns",
    # house rules: the pending draw, the seat whose turn follows a jump window, a Seven or Zero this turn
    "pending_draw", "jump_next", "hands_swapped",
    # the round's public history: what every seat saw happen (kernel.HISTORY_LENGTH), no drawn card in it
    "history", "history_count",
)


def check_classified() -> None:
    """TypeError unless every EngineState field is in exactly one of HIDDEN and PUBLIC."""
    fields = set(EngineState._fields)
    unclassified = sorted(fields - set(HIDDEN) - set(PUBLIC))
    stale = sorted((set(HIDDEN) | set(PUBLIC)) - fields)
    both = sorted(set(HIDDEN) & set(PUBLIC))
    if unclassified or stale or both:
        raise TypeError(
            f"hpuno_env.worlds: EngineState fields must each be HIDDEN or PUBLIC (unclassified {unclassified}, "
            f"not in the record {stale}, in both {both})"
        )


# ---------------------------------------------------------------- copying


def copy_games(target: EngineState, slots: np.ndarray, source: EngineState, games: np.ndarray) -> None:
    """target[slots[i]] = source[games[i]], every field of the record."""
    for name in EngineState._fields:
        getattr(target, name)[slots] = getattr(source, name)[games]


def generator_words(seed, count: int) -> np.ndarray:
    """(count, 4) xoshiro128** words from seed (None: OS entropy), never the all-zero state."""
    words = np.random.SeedSequence(seed).generate_state(count * 4, np.uint32).reshape(count, 4).astype(np.int64)
    words[(words == 0).all(axis=1), 0] = 1
    return words


def determinize_games(target: EngineState, slots: np.ndarray, source: EngineState, game: int, viewer: int, seed,
                      wd4_bluffing: bool, hidden: dict | None = None, evidence: bool = False,
                      weights: np.ndarray | None = None) -> None:
    """Write into target[slots] worlds of source's game as the viewer sees it (module docstring).

    ``hidden`` replaces the table HIDDEN (the tests drop entries from it to show each one is needed). ``evidence``:
    a seat that drew by choice while a colour was current (``lacks_color``) is dealt no card of that colour, as
    far as the unseen cards allow (module docstring). ``weights`` (players, 55): each other seat's cards are drawn
    from the unseen ones card by card in proportion to its row's weight of their kind (a belief's odds of that kind
    in that hand against the draw pile; all ones is the uniform deal), the draw pile gets the rest."""
    check_classified()
    hidden = HIDDEN if hidden is None else hidden
    count = len(slots)
    words = generator_words(seed, count + 1)
    deal = _Deal(source, game, viewer, count, np.random.default_rng(words[-1].astype(np.uint64)), wd4_bluffing, evidence,
                 weights)
    copy_games(target, slots, source, np.full(count, game))
    for _, write in hidden.values():
        write(target, slots, source, game, viewer, deal)
    if "rng" in hidden:
        target.rng[slots] = words[:count]


# ---------------------------------------------------------------- a game from what one seat sees


def write_view(target: EngineState, slot: int, observation: np.ndarray, num_players: int, target_score: int,
               deck_copies: np.ndarray) -> None:
    """Write into target[slot] a game that shows ``observation`` to seat 0, the seat to act.

    Seats are renumbered so that the viewer is seat 0 (nothing in the rules depends
    on a seat's number). The hidden cards are placed in card order; determinize the
    game (``determinize_games`` with viewer 0) before playing it. What the view does
    not say is set to a neutral value: the order of the discards under the top card
    (card order), the viewer's own lacks and chosen colour (none), exact scores
    (the smallest total with the shown percent), the dealer (seat 0), the round
    (1) and the decisions taken this round (0); in a stack on a Wild Draw Four, the
    colour it replaced (the view shows it only in the challenge phase: a
    challenge there then finds the player innocent). ``deck_copies``: the copies of
    each card type in the game's deck. A view in a jump window is refused (it does
    not say whose turn follows the window)."""
    layout = observation_layout(num_players)
    view = {name: np.asarray(observation[part], np.int64) for name, part in layout.items()}
    _check_view(view)
    P = num_players
    g = slot
    for name in EngineState._fields:  # start from an empty game: every field reset
        field = getattr(target, name)
        field[g] = -1 if name in ("turn_card", "drawn_card", "wd4_player", "wd4_prev_color", "catch_offender", "chose_color", "reshuffled") else 0
    phase = _view_phase(view)
    seat_of = [(k + 1) % P for k in range(P - 1)]  # "other k" (k to my left) is seat k + 1
    _write_seats(target, g, view, seat_of, target_score)
    top, discards = _write_table(target, g, view)
    target.phase[g] = phase
    target.current_player[g] = 0
    previous = 1 if target.direction[g] < 0 else P - 1  # the seat that played before me
    _write_turn(target, g, view, phase, top, len(discards), previous, seat_of)
    target.round_number[g] = 1
    _place_unseen_cards(target, g, view, seat_of, deck_copies)
    _write_history(target, g, view["history"], P)
    color = int(target.wd4_prev_color[g])
    if target.wd4_player[g] >= 0 and color >= 0:
        target.wd4_guilty[g] = target.hands[g, previous, color * 13:color * 13 + 13].sum() > 0
    target.round_deck[g] = FULL_DECK
    target.scratch_deck[g] = FULL_DECK
    target.rng[g] = generator_words(0, 1)[0]


def _check_view(view: dict) -> None:
    """ValueError for a row no game shows: a negative entry, or a top card that is not one card among the discards."""
    negative = [name for name, values in view.items() if (values < 0).any()]
    if negative:
        raise ValueError(f"observation: {negative} have negative entries (every entry of a view is >= 0)")
    if view["top_card"].sum() != 1 or view["top_card"].max() != 1:
        raise ValueError("observation: top_card must name exactly one card (one-hot)")
    if view["discard_counts"][int(view["top_card"].argmax())] < 1:
        raise ValueError("observation: the top card is not among the discard pile's counts")


def _view_phase(view: dict) -> int:
    """The kernel's phase of the game the view shows, or ValueError for a view of no game in play or of a jump window."""
    phase = int(view["phase"].argmax())
    if view["house_phase"].any():
        phase = STACK_PHASE if view["house_phase"][0] else JUMP_PHASE
    elif view["phase"].sum() != 1 or phase == OVER:
        raise ValueError("observation: its phase is not that of a game in play (one-hot, not over)")
    if phase == JUMP_PHASE:
        raise ValueError("observation: a view in a jump window does not say whose turn follows it")
    return phase


def _write_seats(target: EngineState, g: int, view: dict, seat_of: list[int], target_score: int) -> None:
    """Every seat's public facts: the viewer's hand, the others' hand sizes, calls, lacks, colours, scores, shown hands."""
    target.hands[g, 0] = view["hand"]
    target.hand_sizes[g, 0] = view["hand"].sum()
    for k, seat in enumerate(seat_of):
        target.hand_sizes[g, seat] = view["other_hand_sizes"][k]
        target.uno_called[g, seat] = view["other_uno_called"][k]
        target.lacks_color[g, seat] = view["other_lacks_color"][4 * k:4 * k + 4]
        chose = view["other_chose_color"][4 * k:4 * k + 4]
        target.chose_color[g, seat] = chose.argmax() if chose.any() else -1
        target.scores[g, seat] = -(-view["other_scores_pct"][k] * target_score // 100)
        if view["revealed_seen"][k]:
            target.revealed_seen[g, 0, seat] = True
            target.revealed[g, 0, seat] = view["revealed_hands"][k * NUM_CARD_TYPES:(k + 1) * NUM_CARD_TYPES]
    target.uno_called[g, 0] = view["my_uno_called"][0]
    target.scores[g, 0] = -(-view["my_score_pct"][0] * target_score // 100)


def _write_table(target: EngineState, g: int, view: dict) -> tuple[int, np.ndarray]:
    """The discard pile (its counts in card order, the top card last), the colour and the direction;
    returns the top card and the discards."""
    top = int(view["top_card"].argmax())
    discards = np.repeat(np.arange(NUM_CARD_TYPES), view["discard_counts"])
    discards = np.concatenate([np.delete(discards, np.flatnonzero(discards == top)[0]), [top]])
    target.discard[g, :len(discards)] = discards
    target.discard[g, len(discards):] = -1
    target.discard_count[g] = len(discards)
    target.discard_counts[g] = view["discard_counts"]
    target.current_color[g] = view["current_color"].argmax() if view["current_color"].any() else -1
    target.direction[g] = 1 if view["direction_left"][0] else -1
    return top, discards


def _write_turn(target: EngineState, g: int, view: dict, phase: int, top: int, num_discards: int, previous: int,
                seat_of: list[int]) -> None:
    """Whose turn it is and what the phase is about: the drawn card, the wild being coloured, the card
    being challenged, stacked on or caught, and the pending draw."""
    target.turn_player[g] = 0
    target.pending_draw[g] = view["pending_draw"][0]
    if phase == DRAWN:
        target.drawn_card[g] = view["drawn_card"].argmax()
    elif phase == COLOR:
        target.starting_wild[g] = num_discards == 1
        target.turn_card[g] = -1 if num_discards == 1 else top
    elif phase == TARGET:  # a Sorting Hat's target, or a Seven's partner
        target.turn_card[g] = top
    elif phase in (CHALLENGE_PHASE, STACK_PHASE):
        target.turn_player[g] = previous
        target.turn_card[g] = top
        if top == WILD_DRAW4:
            target.wd4_player[g] = previous
            target.wd4_prev_color[g] = view["wd4_prev_color"].argmax() if view["wd4_prev_color"].any() else -1
    elif phase == CATCH_PHASE:
        offender = seat_of[int(view["catch_offender"].argmax())]
        target.turn_player[g] = target.catch_offender[g] = offender
        target.turn_card[g] = top
    elif phase != PLAY:  # pragma: no cover - the phases above are all there are
        raise ValueError(f"observation: unknown phase {phase}")


def _write_history(target: EngineState, g: int, shown: np.ndarray, num_players: int) -> None:
    """The round's history from the view's (the last events, oldest first, seats counted to the viewer's left), in
    every seat's codes: the viewer is seat 0, so a seat's code in the view (1 + its seat counted to the left) is
    1 + its seat. ValueError for entries no game shows."""
    entries = shown.reshape(HISTORY_LENGTH, HISTORY_ENTRY)
    count = HISTORY_LENGTH - int(np.argmax(entries[:, 0] > 0)) if (entries[:, 0] > 0).any() else 0
    kind, actor, card, value = entries[HISTORY_LENGTH - count:].T
    seat_valued = np.isin(kind, SEAT_VALUED_KINDS)
    if ((entries[:HISTORY_LENGTH - count] != 0).any() or (kind == 0).any() or (kind > NUM_HISTORY_KINDS).any()
            or (actor > num_players).any() or (card > NUM_CARD_TYPES).any()
            or (seat_valued & ((value < 1) | (value > num_players))).any()):
        raise ValueError("observation: its history has entries no game shows (a kind, seat or card out of range, "
                         "or an empty slot after an event)")
    target.history[g] = 0
    for viewer in range(num_players):
        ring = target.history[g, viewer].reshape(2, HISTORY_LENGTH, HISTORY_ENTRY)  # written twice (kernel.py)
        ring[:, :count, 0] = kind
        ring[:, :count, 1] = np.where(actor > 0, 1 + (actor - 1 - viewer) % num_players, 0)
        ring[:, :count, 2] = card
        ring[:, :count, 3] = np.where(seat_valued, 1 + (value - 1 - viewer) % num_players, value)
    target.history_count[g] = count


def _place_unseen_cards(target: EngineState, g: int, view: dict, seat_of: list[int], deck_copies: np.ndarray) -> None:
    """The cards the viewer has not seen, in card order: the other hands first (shown cards in place), then the draw pile."""
    P = len(seat_of) + 1
    shown = np.zeros((P, NUM_CARD_TYPES), np.int64)
    for seat in seat_of:
        shown[seat] = target.revealed[g, 0, seat]
    unseen_counts = np.asarray(deck_copies, np.int64) - view["hand"] - view["discard_counts"]
    if (unseen_counts < 0).any():
        raise ValueError("observation: it shows more copies of a card than the game's deck holds")
    unseen = np.repeat(np.arange(NUM_CARD_TYPES), unseen_counts)
    rest = list(unseen)
    for seat in seat_of:
        size = int(target.hand_sizes[g, seat])
        # The view does not say which shown cards were played since: those not seen elsewhere
        # count as still held (as many as the hand's size allows).
        held = np.zeros(NUM_CARD_TYPES, np.int64)
        for card in np.repeat(np.arange(NUM_CARD_TYPES), shown[seat]):
            if held.sum() < size and card in rest:
                rest.remove(card)
                held[card] += 1
        target.revealed_held[g, 0, seat] = held
        while held.sum() < size and rest:
            held[rest.pop(0)] += 1
        target.hands[g, seat] = held
        target.hand_sizes[g, seat] = held.sum()
    draw_count = int(view["draw_pile_size"][0])
    if len(rest) != draw_count:
        raise ValueError(f"observation: {len(rest)} unseen cards left for a draw pile of {draw_count}")
    target.draw_pile[g, :draw_count] = rest
    target.draw_pile[g, draw_count:] = -1
    target.draw_count[g] = draw_count
