"""An independent, plain-Python reference model of the Harry Potter UNO rules.

It was written from the project's rules contract (published as docs/rules.md),
its public interface (the README) and the printed rule sheets (docs/rules.md
§14) only, without looking at the engine in ``hpuno_env``. It favours obviousness over speed: one list per hand, one list
per pile, labels (strings) everywhere.

API (used by the cross-check harness)
-------------------------------------
``ReferenceGame(num_players, chance, **rules)``
    rules: uno_penalty=2, uno_catch="window"|"always"|"off", wd4_bluffing=True,
    two_player_reverse_skips=True, voluntary_draw=True, gryffindor_color="red",
    target_score=500, scoring="winner"|"lowest", max_turns=10000,
    episode="round"|"match", reward="win"|"points", and the house rules
    (docs/rules.md §15) deck="harry_potter"|"classic",
    stacking="none"|"draw2"|"draw4"|"both"|"mixed", jump_in=False,
    seven_zero=False, draw_until_playable=False, forced_play=False.
    Unknown names or bad values raise ValueError naming them.
``reset(deck=None, dealer=None)``
    fresh match (scores 0, round 1).  deck: 112 labels (108 for the classic
    deck), top first (None ->
    chance.deck()); dealer None -> chance.first_dealer(num_players).
``legal_actions() -> set[str]``   (empty when the episode is over)
``step(action) -> (rewards per seat, terminated, truncated)``
    ValueError on an illegal action (nothing changes).  No auto-reset.
``state() -> dict``  the keys of ``VectorEngine.game_state()``.
``revealed``  {(viewer, seat): sorted labels}: the hands shown to each viewer
    (a challenge, a Seven-O swap), as docs/rules.md §15.4 moves them.
``happened``  a Counter of the house rules seen acting (stack plays, jumps,
    swaps, ...), so tests can check that random play reached them.

``chance`` supplies random outcomes: ``first_dealer(n)``, ``deck()``,
``return_wd4(pile) -> index``, ``reshuffle(cards) -> new pile``.  Every outcome
is checked.  ``SeededChance(seed)`` is a deterministic random.Random version.

Decisions where the rules text was ambiguous (docs/rules.md now states each)
---------------------------------------------------------------------------
 1. Turn begins.  A player's turn begins when play passes to them as the turn
    holder: the round's first player (at the deal, also when their first
    decision is the colour of a starting wild), the next player after the
    previous turn and its effects (Draw Two draws, skips) are resolved, the
    challenger after a *guilty* challenge, and the same player again after a
    two-player Skip / Reverse / Draw Two / Wild Draw Four.  Being skipped
    (Skip, Draw Two, accepted or innocent-challenged Wild Draw Four) is NOT a
    turn beginning.  Answering a challenge or a catch window, or drawing
    penalty / Sorting Hat cards, is not a turn either.
 2. UNO call clearing.  ``uno_called[p]`` is cleared exactly when p's turn
    begins (decision 1) and at the deal of a round; nothing else clears it
    (not drawing, not penalties, not being skipped).  So a call made and then
    followed by a draw (hand back to 3) still shows as standing until the
    caller's next turn begins.
 3. ``uno`` is legal when uno_catch != "off", the player to act holds exactly
    two cards, has not called since their turn began, and either (phase
    "play") at least one ``play:`` action is legal, or (phase "drawn") always
    (the drawn card is playable by construction).  Calling does not commit the
    player to playing: they may still draw.  It is never legal in the
    "color", "target", "challenge" or "catch" phases.
 4. Who can be caught.  The catch window (or the automatic penalty with
    uno_catch="always") happens only when the turn holder PLAYED a card
    during this turn, ends the turn holding exactly one card, and has no
    standing call.  A player who ends a turn on one card without having
    played (e.g. a ``draw`` that drew nothing because both piles were empty)
    cannot be caught (they never had the chance to call: ``uno`` needs two
    cards in hand).  A player who goes out (0 cards) is never caught.
 5. Catch window order and direction.  A Reverse flips the direction the
    moment it is played, so the window uses the direction after the turn's
    card took effect.  With offender p and direction d the window asks seats
    p+d, p+2d, ..., p+(n-1)d (mod n): every other player, including a player
    about to be skipped, the Wild Draw Four victim and a Sorting Hat target.
    The first ``catch`` closes the window (the offender draws uno_penalty);
    the window closes with no effect when all pass.
 6. Timing.  The window comes after the whole turn of the offender: after the
    colour choice and, for a Sorting Hat, after the target choice and the
    target's drawing; and before anything happens to the next player (Draw
    Two draw, Wild Draw Four challenge/accept).  uno_catch="always" applies
    the penalty at that same moment, with no decisions.
 7. Challenge.  Guilt is assessed at the moment the Wild Draw Four is played:
    guilty iff the hand left after removing the Wild Draw Four holds a card
    whose colour is the colour current before the play (wilds have no
    colour).  A UNO penalty drawn in the catch window before the challenge
    does not change guilt.  The revealed hand is the offender's hand at the
    time of the challenge (after any UNO penalty); it is stored in
    ``self.revealed[(challenger, offender)]`` until the round ends; it is not
    part of state().  Guilty: offender draws 4 and the
    challenger's turn begins.  Innocent: challenger draws 6 and is skipped.
    Accept: victim draws 4 and is skipped.
 8. wd4_bluffing=False: a Wild Draw Four is a legal play only when the hand
    (the card itself excluded, it has no colour) holds no card of the current
    colour (same test for a just-drawn Wild Draw Four); the victim then draws
    4 and is skipped automatically: no "challenge" phase at all.
 9. "Playable" for voluntary_draw=False means "some ``play:`` action would be
    legal", so with wd4_bluffing=True a Wild Draw Four in hand always counts
    as playable and forbids drawing.
10. Drawing.  After ``draw``: if a card was drawn and it is playable (same
    test as a hand card, against the current top and colour) the phase
    becomes "drawn" (legal: ``play:<that label>``, ``keep``, maybe ``uno``);
    otherwise (unplayable or nothing drawn) the turn ends at once with no
    further decision.  A drawn card that is played is an ordinary play (its
    effects, UNO window, etc.).
11. Reshuffle.  Lazy: only when a card must be drawn and the draw pile is
    empty.  chance.reshuffle is called with discard[:-1] (bottom first) only
    when that list is non-empty; the discard pile is then just its top card.
    If the discard pile has only its top card, nothing is drawn.  Multi-card
    draws (2, 4, 6, penalties, Sorting Hat) draw one card at a time and
    reshuffle in the middle if needed, stopping early if nothing is left.
12. Sorting Hat.  Colour first, then target (``target:k`` = seat (p+k) % n,
    k = 1..n-1, regardless of direction).  With two players there is no
    target decision: the other player is the target immediately after the
    colour.  The target draws one card at a time until a card of the
    Gryffindor colour (wilds never count), which stays in their hand.  After
    the drawing the Hat's player's turn ends normally; the next player is the
    usual next seat (the target is not skipped, even if it is the next seat).
13. Final card.  When the turn holder's hand is empty at the end of their
    turn: a final wild still gets its colour (and a final Hat its target and
    drawing); then a final Draw Two makes the next seat (current direction)
    draw 2, a final Wild Draw Four makes it draw 4 with no challenge; a final
    Skip / Reverse has no further effect (Reverse still flipped the
    direction).  No catch window.  Then the round is scored.
14. Starting Wild Draw Four: removed from the top of the draw pile, the index
    from chance.return_wd4(pile without it) is where it is re-inserted
    (0 = new top), then the (new) top card is turned; repeated while a Wild
    Draw Four comes up.  Starting Wild / Sorting Hat: phase "color" for the
    dealer's left (their turn has begun), then phase "play" for the same
    player.  Starting Draw Two / Skip with two players: the dealer starts.
15. A coloured card on a wild top matches by colour only (wilds have no
    number or symbol).  Matching by "symbol" means equal rank label (skip on
    skip, reverse on reverse, draw2 on draw2).
16. Two-player Reverse with two_player_reverse_skips=True: direction flips
    AND it acts as a Skip (same player's new turn begins).  With False the
    direction flips and the other player plays next.
17. Scoring.  scoring="winner": the round winner adds the points left in the
    other hands; the match ends when that total is >= target_score.
    scoring="lowest": every player adds the points of their own hand (winner
    adds 0); the match ends when any total is >= target_score and every
    player with the lowest total is a winner.  state()["scores"] is updated
    at every round end, also with episode="round".
18. Truncation vs termination.  If the max_turns-th decision of a round also
    ends the episode normally, the step reports terminated (not truncated).
    If it ends a round in match mode and the next round starts, the decision
    count restarts at 0 for the new round (no truncation).
19. Match mode: the next round's dealer is (dealer + 1) % n, its deck comes
    from chance.deck(), and it is dealt inside the same step.  reset() calls
    chance.first_dealer (only if dealer is None) before chance.deck() (only if
    deck is None).
20. Rewards are always a list of n floats; on a step that ends a round in
    match mode with reward="points" the round's points rewards are returned
    even though the episode continues.

House rules (docs/rules.md §15, read from that text only)
--------------------------------------------------------
21. ``pending_draw`` grows by 2 / 4 when a Draw Two / Wild Draw Four is
    played (stacking or not) and falls to 0 when those cards are drawn
    (accept, a draw at once, either challenge outcome, a final card).  A
    starting Draw Two never sets it.
22. Facing a Draw Two the next player is in phase "stack" when they hold a
    card that may be stacked (``_stack_plays``), else they draw at once and
    are skipped; facing a Wild Draw Four, phase "challenge" when bluffing is
    on or a stack play exists (no ``challenge`` action with bluffing off).
    A stack play makes the stacker the turn holder without beginning a turn
    (no UNO call is cleared), recomputes Wild Draw Four guilt, and runs the
    usual end of turn (catch window, then the next player faces the pending
    draw).  Guilty: the last Wild Draw Four's player draws the pending draw
    and the challenger's turn begins; innocent: the challenger draws it plus
    2 and is skipped.
23. Jump-in: when the turn and every effect of a coloured card played in
    it are over, just before the next ordinary turn would begin, a seat
    holding a copy of that card (the top), other than its player and the
    next to play, is asked (phase "jump": the play, ``pass``, maybe ``uno``).
    The jump is the jumper's turn (no call cleared) and play goes on from
    them.  A guilty challenge begins the challenger's turn with no window
    (a wild is on top).
24. Seven-O: a 7 (not a last card) swaps hands with a target (chosen with
    ``target:k`` with three or more players), a 0 passes every hand to the
    next seat in the direction of play; then no catch window or "always"
    penalty; the calls of every seat whose hand moved are cleared; the
    colour each seat last chose and the shown hands move with the hands,
    records of a viewer's own seat are dropped, and each seat that gave a
    hand knows it.
25. draw_until_playable: ``draw`` repeats until a playable card or nothing is
    left (the seat is marked once, decision 26); forced_play: no ``keep`` in
    phase "drawn".
26. Drew-on-a-colour marks (docs/rules.md §12, ``self.lacks``): a ``draw``
    marks the seat with the current colour; playing a card of a colour clears
    that colour; taking cards any other way (a penalty, a Sorting Hat's
    drawing) clears them all; Seven-O moves them with the hands.
"""

from __future__ import annotations

import random
from collections import Counter

COLORS = ("red", "yellow", "green", "blue")
RANKS = tuple(str(i) for i in range(10)) + ("skip", "reverse", "draw2")
WILD_LABELS = ("wild", "wild_draw4", "sorting_hat")
CARD_LABELS = tuple(f"{c}:{r}" for c in COLORS for r in RANKS) + WILD_LABELS
CARD_INDEX = {label: i for i, label in enumerate(CARD_LABELS)}

# colour / rank of every label (None for wilds)
CARD_COLOR = {label: (label.split(":")[0] if ":" in label else None) for label in CARD_LABELS}
CARD_RANK = {label: (label.split(":")[1] if ":" in label else None) for label in CARD_LABELS}


def _points(label: str) -> int:
    rank = CARD_RANK[label]
    if rank is None:
        return 50
    if rank.isdigit():
        return int(rank)
    return 20


CARD_POINTS = {label: _points(label) for label in CARD_LABELS}


def _full_deck() -> list[str]:
    deck = []
    for c in COLORS:
        deck.append(f"{c}:0")
        for r in RANKS[1:]:
            deck += [f"{c}:{r}"] * 2
    for w in WILD_LABELS:
        deck += [w] * 4
    return deck


FULL_DECK = tuple(_full_deck())
assert len(FULL_DECK) == 112
FULL_DECK_COUNTS = Counter(FULL_DECK)
# The classic deck (house rule ``deck="classic"``): the same cards less the four Sorting Hats.
CLASSIC_DECK = tuple(card for card in FULL_DECK if card != "sorting_hat")
assert len(CLASSIC_DECK) == 108
DECKS = {"harry_potter": FULL_DECK, "classic": CLASSIC_DECK}

ACTION_LABELS = (
    tuple("play:" + label for label in CARD_LABELS)
    + ("draw", "keep", "uno", "challenge", "accept", "catch", "pass")
    + tuple(f"target:{k}" for k in range(1, 10))
    + tuple("color:" + c for c in COLORS)
)
assert len(ACTION_LABELS) == 75

DEFAULT_RULES = dict(
    uno_penalty=2,
    uno_catch="window",
    wd4_bluffing=True,
    two_player_reverse_skips=True,
    voluntary_draw=True,
    gryffindor_color="red",
    target_score=500,
    scoring="winner",
    max_turns=10000,
    episode="round",
    reward="win",
    deck="harry_potter",
    stacking="none",
    jump_in=False,
    seven_zero=False,
    draw_until_playable=False,
    forced_play=False,
)
STACKING_MODES = ("none", "draw2", "draw4", "both", "mixed")


def hand_points(hand) -> int:
    return sum(CARD_POINTS[c] for c in hand)


def check_deck(deck, kind: str = "harry_potter") -> list[str]:
    deck = list(deck)
    full = DECKS[kind]
    if len(deck) != len(full) or Counter(deck) != Counter(full):
        raise ValueError(f"deck must hold each of the {len(full)} cards of the {kind} deck exactly once")
    return deck


class SeededChance:
    """Deterministic random outcomes (random.Random based); ``deck`` names the deck it shuffles."""

    def __init__(self, seed=0, deck="harry_potter"):
        self.rng = random.Random(seed)
        self.full_deck = DECKS[deck]

    def first_dealer(self, num_players: int) -> int:
        return self.rng.randrange(num_players)

    def deck(self) -> list[str]:
        deck = list(self.full_deck)
        self.rng.shuffle(deck)
        return deck

    def return_wd4(self, pile: list[str]) -> int:
        return self.rng.randint(0, len(pile))

    def reshuffle(self, cards: list[str]) -> list[str]:
        cards = list(cards)
        self.rng.shuffle(cards)
        return cards


def _validate_rules(rules: dict) -> dict:
    for name in rules:
        if name not in DEFAULT_RULES:
            raise ValueError(f"unknown rule option {name!r}")
    r = dict(DEFAULT_RULES)
    r.update(rules)

    def bad(name):
        raise ValueError(f"bad value for rule option {name!r}: {r[name]!r}")

    def is_int(v):
        return isinstance(v, int) and not isinstance(v, bool)

    if not is_int(r["uno_penalty"]) or r["uno_penalty"] < 0:
        bad("uno_penalty")
    if r["uno_catch"] not in ("window", "always", "off"):
        bad("uno_catch")
    for name in ("wd4_bluffing", "two_player_reverse_skips", "voluntary_draw"):
        if not isinstance(r[name], bool):
            bad(name)
    if r["gryffindor_color"] not in COLORS:
        bad("gryffindor_color")
    if not is_int(r["target_score"]) or r["target_score"] <= 0:
        bad("target_score")
    if r["scoring"] not in ("winner", "lowest"):
        bad("scoring")
    if not is_int(r["max_turns"]) or r["max_turns"] <= 0:
        bad("max_turns")
    if r["episode"] not in ("round", "match"):
        bad("episode")
    if r["reward"] not in ("win", "points"):
        bad("reward")
    if r["deck"] not in DECKS:
        bad("deck")
    if r["stacking"] not in STACKING_MODES:
        bad("stacking")
    for name in ("jump_in", "seven_zero", "draw_until_playable", "forced_play"):
        if not isinstance(r[name], bool):
            bad(name)
    return r


class ReferenceGame:
    def __init__(self, num_players: int, chance, **rules):
        if not isinstance(num_players, int) or not 2 <= num_players <= 10:
            raise ValueError(f"bad value for 'num_players': {num_players!r} (2..10)")
        self.n = num_players
        self.chance = chance
        self.rules = _validate_rules(rules)
        r = self.rules
        self.uno_penalty = r["uno_penalty"]
        self.uno_catch = r["uno_catch"]
        self.wd4_bluffing = r["wd4_bluffing"]
        self.two_player_reverse_skips = r["two_player_reverse_skips"]
        self.voluntary_draw = r["voluntary_draw"]
        self.gryffindor_color = r["gryffindor_color"]
        self.target_score = r["target_score"]
        self.scoring = r["scoring"]
        self.max_turns = r["max_turns"]
        self.episode = r["episode"]
        self.reward = r["reward"]
        self.deck_kind = r["deck"]
        # which cards may be stacked on which (house rule "stacking")
        self.draw2_on_draw2 = r["stacking"] in ("draw2", "both", "mixed")
        self.wd4_on_wd4 = r["stacking"] in ("draw4", "both", "mixed")
        self.wd4_on_draw2 = r["stacking"] == "mixed"
        self.jump_in = r["jump_in"]
        self.seven_zero = r["seven_zero"]
        self.draw_until_playable = r["draw_until_playable"]
        self.forced_play = r["forced_play"]
        self.names = [f"player_{i}" for i in range(self.n)]

        # game fields (filled by reset)
        self.hands = [[] for _ in range(self.n)]
        self.draw_pile = []   # top first
        self.discard = []     # bottom first
        self.color = None
        self.direction = 1
        self.scores = [0] * self.n
        self.dealer = 0
        self.round = 0
        self.uno_called = [False] * self.n
        self.phase = "over"
        self.current = None
        self.turn_player = None   # whose turn it is (current may be someone answering)
        self.decisions = 0        # decisions in this round (for max_turns)
        self.played_this_turn = False
        self.drawn_card = None    # label of a playable card just drawn ("drawn" phase)
        self.pending = None       # effect on the next player: "draw2", "skip", "wd4" or None
        self.pending_draw = 0     # cards the next player must draw for Draw Twos / Wild Draw Fours played
        self.jump_card = None     # the coloured card played this turn (house rule jump_in)
        self.jump_next = None     # in the "jump" phase: the seat whose turn comes if nobody jumps
        self.swapped = False      # this turn swapped hands (Seven-O): no catch window follows
        self.start_color = False  # the "color" phase names the colour of the starting wild
        self.wd4_guilty = False
        self.catch_order = []     # seats asked in the catch window
        self.catch_pos = 0
        self.revealed = {}        # (viewer, seat) -> the hand of that seat shown to the viewer (sorted labels)
        self.chose_color = [None] * self.n  # colour each seat last moved play into this round (observation knowledge)
        self.lacks = [set() for _ in range(self.n)]  # colours each seat drew on instead of playing (docs/rules.md §12)
        self.rewards = [0.0] * self.n
        self.terminated = False
        self.happened = Counter()  # how often each house rule acted (tests check the play reached them)

    # ------------------------------------------------------------ set-up
    def reset(self, deck=None, dealer=None) -> None:
        if dealer is None:
            dealer = self.chance.first_dealer(self.n)
        if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < self.n:
            raise ValueError(f"bad dealer {dealer!r}")
        self.scores = [0] * self.n
        self.round = 0
        self.rewards = [0.0] * self.n
        self.terminated = False
        self._start_round(dealer, deck)

    def _start_round(self, dealer: int, deck) -> None:
        n = self.n
        if deck is None:
            deck = self.chance.deck()
        deck = check_deck(deck, self.deck_kind)
        self.round += 1
        self.dealer = dealer
        self.decisions = 0
        self.direction = 1
        self.uno_called = [False] * n
        self.chose_color = [None] * n
        self.lacks = [set() for _ in range(n)]
        self.revealed = {}
        self.pending = None
        self.pending_draw = 0
        self.jump_card = None
        self.jump_next = None
        self.swapped = False
        self.drawn_card = None
        self.played_this_turn = False
        self.start_color = False
        self.wd4_guilty = False
        self.catch_order = []
        self.catch_pos = 0

        # deal seven cards one at a time, starting at the dealer's left
        self.hands = [[] for _ in range(n)]
        for k in range(7 * n):
            self.hands[(dealer + 1 + k) % n].append(deck[k])
        self.draw_pile = deck[7 * n:]
        self.discard = []

        # turn the starting card; a Wild Draw Four goes back into the pile
        while True:
            card = self.draw_pile.pop(0)
            if card != "wild_draw4":
                break
            i = self.chance.return_wd4(list(self.draw_pile))
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i <= len(self.draw_pile):
                raise ValueError(f"chance.return_wd4 gave a bad index {i!r}")
            self.draw_pile.insert(i, card)
        self.discard.append(card)

        left = (dealer + 1) % n
        if card in ("wild", "sorting_hat"):
            self.color = None
            self._begin_turn(left)
            self.phase = "color"
            self.start_color = True
            return
        self.color = CARD_COLOR[card]
        rank = CARD_RANK[card]
        if rank == "draw2":
            self._draw(left, 2)
            self._begin_turn((left + 1) % n)
        elif rank == "skip":
            self._begin_turn((left + 1) % n)
        elif rank == "reverse":
            self.direction = -1
            self._begin_turn(dealer)
        else:
            self._begin_turn(left)

    # ------------------------------------------------------------ helpers
    def _begin_turn(self, p: int) -> None:
        self.turn_player = p
        self.current = p
        self.phase = "play"
        self.uno_called[p] = False
        self.played_this_turn = False
        self.drawn_card = None
        self.pending = None
        self.jump_card = None
        self.jump_next = None
        self.swapped = False

    def _draw_one(self, p: int):
        """Draw one card into p's hand; returns its label, or None if none is left."""
        if not self.draw_pile:
            if len(self.discard) <= 1:
                return None
            cards = self.discard[:-1]
            new_pile = list(self.chance.reshuffle(list(cards)))
            if len(new_pile) != len(cards) or Counter(new_pile) != Counter(cards):
                raise ValueError("chance.reshuffle did not return a permutation of its cards")
            self.draw_pile = new_pile
            self.discard = [self.discard[-1]]
        card = self.draw_pile.pop(0)
        self.hands[p].append(card)
        return card

    def _draw(self, p: int, k: int) -> None:
        """p takes k cards (a penalty): its drew-on-a-colour marks no longer say anything."""
        self.lacks[p] = set()
        for _ in range(k):
            if self._draw_one(p) is None:
                break

    def _has_color(self, p: int, color) -> bool:
        return any(CARD_COLOR[c] == color for c in self.hands[p])

    def _playable(self, p: int, card: str) -> bool:
        if card == "wild" or card == "sorting_hat":
            return True
        if card == "wild_draw4":
            return self.wd4_bluffing or not self._has_color(p, self.color)
        if CARD_COLOR[card] == self.color:
            return True
        return CARD_RANK[card] == CARD_RANK[self.discard[-1]]

    def _uno_allowed(self, p: int) -> bool:
        return (self.uno_catch != "off" and len(self.hands[p]) == 2
                and not self.uno_called[p])

    def _stack_plays(self, p: int) -> set:
        """``play:`` actions p may stack on the pending draw (house rule ``stacking``)."""
        hand = self.hands[p]
        acts = set()
        if self.pending == "draw2":
            if self.draw2_on_draw2:
                acts |= {"play:" + c for c in hand if CARD_RANK[c] == "draw2"}
            may_wd4 = self.wd4_on_draw2
        else:  # facing a Wild Draw Four
            may_wd4 = self.wd4_on_wd4
        if may_wd4 and "wild_draw4" in hand and self._playable(p, "wild_draw4"):
            acts.add("play:wild_draw4")
        return acts

    # ------------------------------------------------------------ queries
    def legal_actions(self) -> set:
        phase = self.phase
        if phase == "over":
            return set()
        if phase == "color":
            return {"color:" + c for c in COLORS}
        if phase == "target":
            return {f"target:{k}" for k in range(1, self.n)}
        if phase == "catch":
            return {"catch", "pass"}
        p = self.current
        if phase in ("challenge", "stack"):
            stack = self._stack_plays(p)
            acts = stack | {"accept"}
            if phase == "challenge" and self.wd4_bluffing:
                acts.add("challenge")
            if stack and self._uno_allowed(p):
                acts.add("uno")
            return acts
        if phase == "jump":
            acts = {"play:" + self.jump_card, "pass"}
            if self._uno_allowed(p):
                acts.add("uno")
            return acts
        if phase == "drawn":
            acts = {"play:" + self.drawn_card}
            if not self.forced_play:
                acts.add("keep")
            if self._uno_allowed(p):
                acts.add("uno")
            return acts
        # phase == "play"
        acts = {"play:" + c for c in set(self.hands[p]) if self._playable(p, c)}
        can_play = bool(acts)
        if self.voluntary_draw or not can_play:
            acts.add("draw")
        if can_play and self._uno_allowed(p):
            acts.add("uno")
        return acts

    def state(self) -> dict:
        names = self.names
        over = self.phase == "over"
        return {
            "current": None if over or self.current is None else names[self.current],
            "phase": self.phase,
            "hands": {names[i]: sorted(h, key=CARD_INDEX.__getitem__) for i, h in enumerate(self.hands)},
            "top": self.discard[-1] if self.discard else None,
            "color": self.color,
            "direction": self.direction,
            "draw_pile": list(self.draw_pile),
            "discard": list(self.discard),
            "scores": {names[i]: self.scores[i] for i in range(self.n)},
            "dealer": names[self.dealer],
            "round": self.round,
            "uno_called": {names[i]: bool(self.uno_called[i]) for i in range(self.n)},
            "pending_draw": self.pending_draw,
        }

    # ------------------------------------------------------------ step
    def step(self, action: str):
        if action not in self.legal_actions():
            raise ValueError(f"illegal action {action!r} in phase {self.phase!r}")
        self.decisions += 1
        self.rewards = [0.0] * self.n
        self.terminated = False

        if action.startswith("play:"):
            self._act_play(action[5:])
        elif action.startswith("color:"):
            self._act_color(action[6:])
        elif action.startswith("target:"):
            self._act_target(int(action[7:]))
        elif action == "draw":
            self._act_draw()
        elif action == "keep":
            self.drawn_card = None
            self._end_turn()
        elif action == "uno":
            self.uno_called[self.current] = True
        elif action == "challenge":
            self._act_challenge()
        elif action == "accept":
            self._act_accept()
        elif action == "catch":
            self._draw(self.turn_player, self.uno_penalty)
            self._resolve_effect()
        elif action == "pass" and self.phase == "jump":
            self._begin_turn(self.jump_next)
        elif action == "pass":
            self._act_pass()
        else:  # pragma: no cover - legal_actions never offers anything else
            raise ValueError(f"unknown action {action!r}")

        truncated = False
        if not self.terminated and self.phase != "over" and self.decisions >= self.max_turns:
            self.phase = "over"
            self.current = None
            self.rewards = [0.0] * self.n
            truncated = True
        return list(self.rewards), self.terminated, truncated

    # ------------------------------------------------------------ actions
    def _act_play(self, card: str) -> None:
        p = self.current
        if self.phase in ("stack", "challenge", "jump"):
            self.happened[self.phase + " play" if self.phase == "jump" else "stack play"] += 1
            # A stack or a jump is the player's own turn, which does not begin as an ordinary
            # turn does: a standing UNO call stays.
            self.turn_player = p
            self.pending = None if self.phase == "jump" else self.pending
            self.jump_card = None
            self.jump_next = None
            self.swapped = False
        hand = self.hands[p]
        hand.remove(card)
        color_before = self.color
        self.discard.append(card)
        self.played_this_turn = True
        self.drawn_card = None
        if card in WILD_LABELS:
            self.jump_card = None  # wilds are never jumped on
            if card == "wild_draw4":
                self.wd4_guilty = any(CARD_COLOR[c] == color_before for c in hand)
                self.pending = "wd4"
                self.pending_draw += 4
            self.color = None
            self.start_color = False
            self.phase = "color"
            return
        if CARD_COLOR[card] != color_before:  # a switch by number or symbol shows a choice; following does not
            self.chose_color[p] = CARD_COLOR[card]
        self.lacks[p].discard(CARD_COLOR[card])
        self.color = CARD_COLOR[card]
        self.jump_card = card
        rank = CARD_RANK[card]
        if rank == "draw2":
            self.pending = "draw2"
            self.pending_draw += 2
        elif rank == "skip":
            self.pending = "skip"
        elif rank == "reverse":
            self.direction = -self.direction
            if self.n == 2 and self.two_player_reverse_skips:
                self.pending = "skip"
        elif self.seven_zero and hand and rank == "7":
            if self.n == 2:
                self._swap(p, 1 - p)
            else:
                self.phase = "target"
                return
        elif self.seven_zero and hand and rank == "0":
            self._rotate_hands()
        self._end_turn()

    def _act_color(self, color: str) -> None:
        self.color = color
        self.chose_color[self.current] = color
        if self.start_color:
            self.start_color = False
            self.phase = "play"
            return
        if self.discard[-1] == "sorting_hat":
            if self.n == 2:
                self._hat_draw((self.turn_player + 1) % 2)
                self._end_turn()
            else:
                self.phase = "target"
            return
        self._end_turn()

    def _act_target(self, k: int) -> None:
        target = (self.turn_player + k) % self.n
        if self.discard[-1] == "sorting_hat":
            self._hat_draw(target)
        else:  # a Seven-O 7
            self._swap(self.turn_player, target)
        self._end_turn()

    def _hat_draw(self, target: int) -> None:
        self.lacks[target] = set()
        while True:
            card = self._draw_one(target)
            if card is None or CARD_COLOR[card] == self.gryffindor_color:
                return

    def _swap(self, a: int, b: int) -> None:
        """A Seven-O 7: seats a and b trade hands; what is known of a hand goes with it."""
        self.happened["7 swap"] += 1
        self._move_hands({a: b, b: a})

    def _rotate_hands(self) -> None:
        """A Seven-O 0: every hand goes to the next seat in the direction of play."""
        self.happened["0 rotation"] += 1
        self._move_hands({p: (p + self.direction) % self.n for p in range(self.n)})

    def _move_hands(self, moves: dict) -> None:
        hands, chose, lacks = list(self.hands), list(self.chose_color), list(self.lacks)
        for source, destination in moves.items():
            self.hands[destination] = hands[source]
            self.chose_color[destination] = chose[source]
            self.lacks[destination] = lacks[source]
            self.uno_called[destination] = False
            self.uno_called[source] = False
        # Every record follows the hand it describes; a record of a seat whose hand was replaced by
        # an unknown one is gone, and a record of the viewer's own seat is dropped.
        moved = {}
        for (viewer, owner), shown in self.revealed.items():
            if owner in moves:
                owner = moves[owner]
            elif owner in moves.values():
                continue
            if owner != viewer:
                moved[(viewer, owner)] = shown
        # Who passes a hand on knows what they gave.
        for source, destination in moves.items():
            if source != destination:
                moved[(source, destination)] = sorted(hands[source], key=CARD_INDEX.__getitem__)
        self.revealed = moved
        self.swapped = True

    def _act_draw(self) -> None:
        p = self.current
        self.lacks[p].add(self.color)
        card = self._draw_one(p)
        while self.draw_until_playable and card is not None and not self._playable(p, card):
            self.happened["drew on"] += 1
            card = self._draw_one(p)
        if card is not None and self._playable(p, card):
            if self.forced_play:
                self.happened["forced play"] += 1
            self.drawn_card = card
            self.phase = "drawn"
            return
        self._end_turn()

    def _take_pending(self, victim: int, extra: int = 0) -> None:
        self._draw(victim, self.pending_draw + extra)
        self.pending_draw = 0

    def _act_challenge(self) -> None:
        if self.pending_draw > 4:
            self.happened["challenge on a stack"] += 1
        challenger = self.current
        offender = self.turn_player
        shown = sorted(self.hands[offender], key=CARD_INDEX.__getitem__)
        self.revealed[(challenger, offender)] = shown
        if self.wd4_guilty:
            self._take_pending(offender)
            self._begin_turn(challenger)
        else:
            self._take_pending(challenger, 2)
            self._after_effects((challenger + self.direction) % self.n)

    def _act_accept(self) -> None:
        victim = self.current
        self._take_pending(victim)
        self._after_effects((victim + self.direction) % self.n)

    def _act_pass(self) -> None:
        self.catch_pos += 1
        if self.catch_pos < len(self.catch_order):
            self.current = self.catch_order[self.catch_pos]
        else:
            self._resolve_effect()

    # ------------------------------------------------------------ turn end
    def _end_turn(self) -> None:
        """The turn holder's own turn is over (all their decisions made)."""
        p = self.turn_player
        hand = self.hands[p]
        if not hand:
            if self.pending_draw > {"draw2": 2, "wd4": 4}.get(self.pending, 99):
                self.happened["went out stacking"] += 1
            if self.pending in ("draw2", "wd4"):
                self._take_pending((p + self.direction) % self.n)
            self._end_round(p)
            return
        if self.played_this_turn and len(hand) == 1 and not self.uno_called[p] and not self.swapped:
            if self.uno_catch == "window":
                self.catch_order = [(p + k * self.direction) % self.n for k in range(1, self.n)]
                self.catch_pos = 0
                self.phase = "catch"
                self.current = self.catch_order[0]
                return
            if self.uno_catch == "always":
                self._draw(p, self.uno_penalty)
        self._resolve_effect()

    def _resolve_effect(self) -> None:
        """Apply the played card's effect on the next player and start the next turn."""
        p = self.turn_player
        d = self.direction
        nxt = (p + d) % self.n
        effect = self.pending
        if effect == "draw2":
            if self._stack_plays(nxt):
                self.phase = "stack"
                self.current = nxt
            else:
                self._take_pending(nxt)
                self._after_effects((nxt + d) % self.n)
        elif effect == "skip":
            self._after_effects((nxt + d) % self.n)
        elif effect == "wd4":
            if self.wd4_bluffing or self._stack_plays(nxt):
                self.phase = "challenge"
                self.current = nxt
            else:
                self._take_pending(nxt)
                self._after_effects((nxt + d) % self.n)
        else:
            self._after_effects(nxt)

    def _after_effects(self, next_seat: int) -> None:
        """The turn and its card's effects are over: a jump-in, or the next seat's turn."""
        card = self.jump_card
        if self.jump_in and card is not None:
            jumpers = [q for q in range(self.n)
                       if q not in (self.turn_player, next_seat) and card in self.hands[q]]
            assert len(jumpers) <= 1, "a coloured card has at most one other copy"
            if jumpers:
                self.happened["jump window"] += 1
                self.phase = "jump"
                self.current = jumpers[0]
                self.jump_next = next_seat
                return
        self._begin_turn(next_seat)

    def _end_round(self, winner: int) -> None:
        n = self.n
        pts = [hand_points(h) for h in self.hands]
        round_points = sum(pts[i] for i in range(n) if i != winner)
        if self.scoring == "winner":
            self.scores[winner] += round_points
            match_over = self.scores[winner] >= self.target_score
            match_winners = {winner}
        else:
            for i in range(n):
                self.scores[i] += pts[i]
            match_over = max(self.scores) >= self.target_score
            low = min(self.scores)
            match_winners = {i for i in range(n) if self.scores[i] == low}

        if self.reward == "points":
            self.rewards = [round_points / 100.0 if i == winner else -pts[i] / 100.0
                            for i in range(n)]

        if self.episode == "round":
            if self.reward == "win":
                self.rewards = [1.0 if i == winner else -1.0 for i in range(n)]
            self._finish()
        elif match_over:
            if self.reward == "win":
                self.rewards = [1.0 if i in match_winners else -1.0 for i in range(n)]
            self._finish()
        else:
            self._start_round((self.dealer + 1) % n, None)

    def _finish(self) -> None:
        self.phase = "over"
        self.current = None
        self.terminated = True
