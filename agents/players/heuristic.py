"""The rule-based player trained agents must beat: a score per legal action, the best one wins.

It reads only its own observation (``hpuno_env.observation_layout``) and
plays as a careful human would. Each rule that is new since ``heuristic-v0``
(the first heuristic, kept for comparison) stayed only if taking it out lost
rounds against ``heuristic-v0`` in 40,000-round evaluations
(``agents.evaluation.rounds.win_rate``, 2 and 4 players); in all, it wins 57% of
2-player rounds against ``heuristic-v0`` and 29% in 4 players (one against
three; a fair share is 25%).

- **Plays before draws, coloured cards before wilds.** A wild is always
  playable, so it is kept for when nothing else plays; a Wild Draw Four is
  played only while holding no card of the current colour (a bluff only when
  there is nothing else at all: never drawing by choice).
- **Block the next seat.** By card counting (the cards I have not seen are
  the others' hands and the draw pile), each coloured card gets the chance
  that the next seat holds nothing to answer it: no card of its colour
  (none at all if that seat drew on the colour, the observation's "lacks"
  flag), of its rank, or wild. That chance, tiny while the seat holds many
  cards, decides the play as it nears going out.
- **Two players: take the extra turns.** Skip, Reverse and Draw Two give
  another turn, so they go first when another card can follow them (Draw
  Two first of all). Cards whose rank I also hold in another colour are kept:
  they are the way to switch colour later.
- **Attack a seat close to going out** with the Wild Draw Four and the
  Sorting Hat (whose target draws until a Gryffindor card, about four cards;
  the target is the seat with the fewest cards), and with three or more
  players with a Skip or Draw Two when the next seat is the one.
- **Colour**: the one I hold most of; among equals, the one the next seat is
  least likely to answer (with two players, never red after a Sorting Hat:
  its target, the other seat, ends up holding a red card).
- **UNO and catch** whenever allowed; a playable drawn card is played.
- **Challenge** a Wild Draw Four when its player probably held the colour it
  replaced: the chance that its other cards, drawn from the unseen ones,
  include that colour is at least 0.6 (0.3 when I hold two cards or fewer,
  since winning the challenge then lets me play for the win), and never when
  it showed it lacks that colour.

The Sorting Hat's colour is assumed to be red (the default
``gryffindor_color``: the option is not in the observation).

Under the house rules (docs/rules.md §15; the observation's ``house_rules``
flags, ``house_phase`` and ``pending_draw`` say which are in play), with
nothing changed where they are off:

- **Stacking**: facing a pending draw it stacks whenever it can (a stacked
  card costs nothing and sends the whole draw on), a Draw Two before a Wild
  Draw Four, but never a Wild Draw Four it would be guilty of (a challenge
  would make it draw everything), and a stacked Wild Draw Four before a
  challenge.
- **Jump-in**: it always jumps (a card shed out of turn).
- **Seven-O**: a 7 or 0 is worth ``swap`` points per card the hand it gets
  is smaller than the one it gives (a 7's partner is the seat with the
  fewest cards, a 0 brings the hand of the seat before it), so a swap that
  would give it a bigger hand waits, even for a draw.
- **Classic deck**: no Sorting Hats among the unseen cards.
"""

from __future__ import annotations

import numpy as np

from hpuno_env.cards import (
    ACCEPT, CARD_COLOR, CARD_COPIES, CARD_RANK, CATCH, CHALLENGE, COLOR_BASE, DRAW, DRAW2_RANK,
    KEEP, NUM_ACTIONS, PASS, REVERSE_RANK, SKIP_RANK, SORTING_HAT, TARGET_BASE, UNO, WILD, WILD_DRAW4,
)
from hpuno_env.encoding import observation_layout

from ._base import SeededAgent
from ._batch import check_batch

COLORED_TYPES = np.flatnonzero(CARD_COLOR >= 0)  # the 52 coloured card types (= their play actions)
COLORED_COLOR = CARD_COLOR[COLORED_TYPES]
COLORED_RANK = CARD_RANK[COLORED_TYPES]
COLOR_ONE_HOT = (CARD_COLOR[:, None] == np.arange(4)).astype(np.float32)  # (55, 4), wilds all zero
RANK_ONE_HOT = (CARD_RANK[:, None] == np.arange(13)).astype(np.float32)  # (55, 13), wilds all zero
IS_SKIP = COLORED_RANK == SKIP_RANK
IS_REVERSE = COLORED_RANK == REVERSE_RANK
IS_DRAW2 = COLORED_RANK == DRAW2_RANK
IS_ACTION = IS_SKIP | IS_REVERSE | IS_DRAW2

# Scores are in "points of preference": a coloured play starts at 100, a wild at 60, a draw at 10.
# The two sets differ where measurement said so (2 players: extra turns rule; 3+: the next seat does).
WEIGHTS_TWO_PLAYERS = {
    "block": 20.0,  # times the chance the next seat cannot answer the card
    "action_follow": 2.0,  # Skip / Reverse / Draw Two when another card can follow it
    "draw2": 2.0,  # a Draw Two on top of that
    "rank_pair": -3.0,  # the card's rank is also in my hand in another colour: keep it
    "attack": 20.0,  # per threat point (4 - hand size, at least 0) of the victim: WD4, Hat; 3+ players: Skip, Draw Two
    "color_block": 0.5,  # colour choice: times the chance the next seat cannot answer the colour
    "swap": 10.0,  # Seven-O: per card the hand a 7 or 0 brings is smaller than the one it gives
}
WEIGHTS_MORE_PLAYERS = {
    **WEIGHTS_TWO_PLAYERS,
    "block": 100.0,
    "action_follow": 0.0,
    "draw2": 0.0,
    "rank_pair": 0.0,
}
CHALLENGE_HELD = 0.6  # challenge when the offender held the replaced colour with at least this chance
CHALLENGE_HELD_ENDGAME = 0.3  # the same when I hold two cards or fewer
GRYFFINDOR = 0  # red: the Sorting Hat's target ends up holding one
# Positions in the observation's ``house_rules`` flags (hpuno_env.encoding, layout version 3).
CLASSIC_DECK_FLAG, SEVEN_ZERO_FLAG = 0, 5
SEVENS = np.flatnonzero(CARD_RANK == 7)
ZEROS = np.flatnonzero((CARD_RANK == 0) & (CARD_COLOR >= 0))
BLUFF_STACK = 0.25  # below accept (0.5): a Wild Draw Four stacked while holding the colour is never played


def threat(hand_sizes: np.ndarray) -> np.ndarray:
    """How close a seat is to going out: 3 with one card, 2 with two, 1 with three, else 0."""
    return np.maximum(0, 4 - hand_sizes)


class HeuristicAgent(SeededAgent):
    """The rules of the module docstring, batched; ``weights`` overrides entries of the weight table."""

    def __init__(self, num_players: int = 4, seed: int | None = None, weights: dict | None = None):
        super().__init__(num_players, seed)
        self.layout = observation_layout(num_players)
        base = WEIGHTS_TWO_PLAYERS if num_players == 2 else WEIGHTS_MORE_PLAYERS
        unknown = sorted(set(weights or {}) - set(base))
        if unknown:
            raise ValueError(f"weights has unknown names {unknown}; known: {sorted(base)}")
        self.weights = {**base, **(weights or {})}

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        w = self.weights
        obs = np.asarray(observations, dtype=np.float32)  # float32: the count matrix products go through BLAS
        batch, others = len(obs), self.num_players - 1
        rows = np.arange(batch)
        view = {name: obs[:, part] for name, part in self.layout.items()}

        hand = view["hand"]
        my_size = hand.sum(axis=1)
        color_counts = hand @ COLOR_ONE_HOT
        wilds = hand[:, WILD] + hand[:, WILD_DRAW4] + hand[:, SORTING_HAT]
        holds_current = color_counts[rows, view["current_color"].argmax(axis=1)] > 0
        # Others are listed in turn order to my left: index 0 is my left, others - 1 my right.
        left = view["direction_left"][:, 0] == 1
        next_seat = np.where(left, 0, others - 1)
        previous_seat = np.where(left, others - 1, 0)
        sizes = view["other_hand_sizes"]
        lacks = view["other_lacks_color"].reshape(batch, others, 4)
        next_threat = threat(sizes[rows, next_seat])
        classic = view["house_rules"][:, CLASSIC_DECK_FLAG] == 1
        block, color_block, unseen_color, unseen_total = self._block_chances(view, hand, lacks[rows, next_seat], sizes[rows, next_seat], classic)

        scores = np.zeros((batch, NUM_ACTIONS), np.float32)
        # Coloured plays.
        same_rank_left = (hand @ RANK_ONE_HOT)[:, COLORED_RANK] - 1
        play = 100 + w["block"] * block
        play += w["rank_pair"] * (same_rank_left > 0)
        if self.num_players == 2:
            can_follow = (color_counts[:, COLORED_COLOR] - 1 + same_rank_left + wilds[:, None]) > 0
            play += w["action_follow"] * (IS_ACTION & can_follow) + w["draw2"] * IS_DRAW2
        else:  # a Skip or Draw Two makes a seat close to going out miss its turn
            play += w["attack"] * next_threat[:, None] * (IS_SKIP | IS_DRAW2)
        scores[:, COLORED_TYPES] = play
        # Wilds: kept for when stuck, sooner as an attack on a seat close to going out.
        scores[:, WILD] = 60
        scores[:, SORTING_HAT] = 60 + w["attack"] * threat(sizes).max(axis=1)
        scores[:, WILD_DRAW4] = np.where(holds_current, 5, 55 + w["attack"] * next_threat)
        # A play while a draw is pending is a stack (house rule): never a guilty Wild Draw Four.
        stacking = view["pending_draw"][:, 0] > 0
        scores[stacking & holds_current, WILD_DRAW4] = BLUFF_STACK
        # Seven-O: a 7 or 0 (not the last card) trades my hand, less the card, for another.
        seven_zero = (view["house_rules"][:, SEVEN_ZERO_FLAG] == 1) & (my_size > 1)
        if seven_zero.any():
            kept = my_size - 1
            seven_gain = kept - sizes.min(axis=1)
            zero_gain = kept - sizes[rows, previous_seat]
            scores[:, SEVENS] += (w["swap"] * seven_zero * seven_gain)[:, None]
            scores[:, ZEROS] += (w["swap"] * seven_zero * zero_gain)[:, None]
        scores[:, DRAW] = 10
        scores[:, KEEP] = 1
        scores[:, UNO] = scores[:, CATCH] = 1000
        scores[:, PASS] = 0
        scores[:, COLOR_BASE:COLOR_BASE + 4] = 200 + color_counts + w["color_block"] * color_block
        scores[:, TARGET_BASE:TARGET_BASE + others] = 200 - sizes
        # Challenge: the chance the offender's other cards, drawn from the unseen ones, held the
        # colour current before its Wild Draw Four (none if it drew on that colour).
        replaced = view["wd4_prev_color"].argmax(axis=1)
        offender_size = sizes[rows, previous_seat]
        share = unseen_color[rows, replaced] / unseen_total
        held = np.where(lacks[rows, previous_seat, replaced] == 1, 0.0, 1 - (1 - share) ** offender_size)
        scores[:, CHALLENGE] = held >= np.where(my_size <= 2, CHALLENGE_HELD_ENDGAME, CHALLENGE_HELD)
        scores[:, ACCEPT] = 0.5
        # Random tie-breaks, then the best legal action.
        scores += self.rng.random(scores.shape, dtype=np.float32) * 0.01
        return np.where(masks, scores, -np.inf).argmax(axis=1)

    def _block_chances(self, view, hand, next_lacks, next_size, classic):
        """Chances the next seat cannot answer each coloured card (B, 52) and each named colour (B, 4).

        Its hand is taken as a random draw of the cards I have not seen (full deck less my
        hand and the discard pile); a colour it drew on counts as absent from it.
        """
        copies = np.where(classic[:, None] & (np.arange(len(CARD_COPIES)) == SORTING_HAT), 0, CARD_COPIES)
        unseen = np.maximum(copies - hand - view["discard_counts"], 0)
        unseen_total = np.maximum(unseen.sum(axis=1), 1)
        unseen_wild = unseen[:, WILD] + unseen[:, WILD_DRAW4] + unseen[:, SORTING_HAT]
        may_hold = 1 - next_lacks  # (B, 4)
        unseen_color = unseen @ COLOR_ONE_HOT
        coloured = unseen[:, COLORED_TYPES].reshape(-1, 4, 13) * may_hold[:, :, None]  # (B, colour, rank)
        # A card is answered by its colour, by its rank in another colour, or by a wild.
        same_color = (unseen_color * may_hold)[:, COLORED_COLOR]
        same_rank = coloured.sum(axis=1)[:, COLORED_RANK] - coloured.reshape(-1, 52)
        answers = same_color + same_rank + unseen_wild[:, None]
        block = np.clip(1 - answers / unseen_total[:, None], 0, 1) ** next_size[:, None]
        color_answers = unseen_color * may_hold + unseen_wild[:, None]
        color_block = np.clip(1 - color_answers / unseen_total[:, None], 0, 1) ** next_size[:, None]
        if self.num_players == 2:
            # Two players: the Sorting Hat I just played (not a starting Hat: no one drew) will
            # leave the next seat holding a Gryffindor card.
            hat_played = (view["top_card"][:, SORTING_HAT] == 1) & (view["discard_counts"].sum(axis=1) > 1)
            color_block[hat_played, GRYFFINDOR] = 0.0
        return block, color_block, unseen_color, unseen_total
