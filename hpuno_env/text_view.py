"""The text face of a seat's view: the rules in brief, the table as the seat sees it, its legal actions numbered.

Language-model players (``agents.load("llm")``) and the AEC env's ``render_mode="text"`` read the game from this
one text. It is built from the seat's *observation* (``encoding.observation_layout``) and nothing else, so it can
name no card the seat has not seen, and a player that is handed only observations (``act(observations,
action_masks)``) can write it: ``read_observation`` turns the vector back into plain facts, ``rules_text`` writes
the rules in play, ``situation_text`` the table and the numbered legal actions (``action_lines``:
``3. play:red:5``). ``seat_text`` is all three together, ``board_text`` all but the rules. ``read_answer`` reads
an answer to the numbered list: one legal action by number or label, or why the answer is none.

What the observation holds is what the text says: the seat's hand, the top card and colour, the phase (what is to
be decided, and about what), the card just drawn, the direction, the draw pile's size, every card on the discard
pile, every seat's hand size, UNO call and score (as a percent of ``target_score``), the colours each other seat
drew on instead of playing, the colour each last moved play into, hands a challenge or a Seven-O pass showed the
seat, the pending draw and the house rules in play. The order of this round's events is not in the observation;
where the caller kept them (the AEC env does), ``history`` adds them in words, told from the seat
(``render.describe_events``).

Seats are named from the viewer: "opponent k" sits k seats to its left, which is also what ``target:k`` names.
Cards are named by their labels (``red:7``, ``wild_draw4``) and actions by theirs (``hpuno_env.ACTION_LABELS``).
"""

from __future__ import annotations

import re

import numpy as np

from .cards import ACTION_LABELS, CARD_LABELS, CARD_POINTS, COLORS, DECK_SIZES, NUM_ACTIONS, NUM_CARD_TYPES
from .encoding import observation_layout, observation_size
from .kernel import PHASE_NAMES
from .options import STACKING_MODES, RulesOptions
from .render import history_lines

# The house_rules flags of an observation (kernel.observe_one writes them in this order).
_HOUSE_FLAGS = ("classic_deck", "stack_draw2", "stack_draw4", "stack_mixed", "jump_in", "seven_zero",
                "draw_until_playable", "forced_play")
# stacking as (stack_draw2, stack_draw4, stack_mixed), as options.kernel_params writes them
_STACKING_OF_FLAGS = {(0, 0, 0): "none", (1, 0, 0): "draw2", (0, 1, 0): "draw4", (1, 1, 0): "both", (1, 1, 1): "mixed"}
assert set(_STACKING_OF_FLAGS.values()) == set(STACKING_MODES)
_POINTS = "face value for numbers, 20 for skip, reverse and draw2, 50 for wilds"
assert int(CARD_POINTS[10]) == 20 and int(CARD_POINTS[-1]) == 50  # what _POINTS says


def _cards(counts) -> list[str]:
    """Card labels, one per copy, in CARD_LABELS order."""
    return [CARD_LABELS[card] for card in np.repeat(np.arange(NUM_CARD_TYPES), np.asarray(counts, np.int64))]


def _colour(one_hot) -> str | None:
    one_hot = np.asarray(one_hot)
    return COLORS[int(one_hot.argmax())] if one_hot.any() else None


def read_observation(observation, num_players: int) -> dict:
    """The facts an observation row holds, as plain Python values (card labels, colours, counts).

    Keys: ``phase`` (a name of ``kernel.PHASE_NAMES``), ``hand``, ``top``, ``color`` (None while a wild's colour is
    unnamed), ``drawn``, ``direction_left``, ``draw_pile``, ``discard`` (labels, CARD_LABELS order), ``score_pct``,
    ``uno_called``, ``pending_draw``, ``wd4_previous_color``, ``catch_offender`` (an opponent number or None),
    ``house_rules`` (the house-rule options in play) and ``opponents``: one dict per other seat, opponent 1 (next
    to the left) first, with ``cards``, ``uno_called``, ``score_pct``, ``drew_on`` (colours), ``chose`` (a colour
    or None) and ``shown`` (the hand shown to the seat, labels, or None)."""
    row = np.asarray(observation)
    if row.shape != (observation_size(num_players),):
        raise ValueError(f"observation must be one row of {observation_size(num_players)} entries "
                         f"(a {num_players}-player observation), got shape {row.shape}")
    if row.dtype.kind not in "iuf" or not np.array_equal(row, np.round(row)):
        raise ValueError("observation must hold the raw whole-number encoding (not scaled)")
    field = {name: row[part].astype(np.int64) for name, part in observation_layout(num_players).items()}
    others = num_players - 1
    house = dict(zip(_HOUSE_FLAGS, field["house_rules"].tolist()))
    if field["house_phase"].any():
        phase = "stack" if field["house_phase"][0] else "jump"
    else:
        phase = PHASE_NAMES[int(field["phase"].argmax())] if field["phase"].any() else "over"
    opponents = []
    for k in range(others):
        shown = field["revealed_hands"][k * NUM_CARD_TYPES:(k + 1) * NUM_CARD_TYPES]
        opponents.append({
            "cards": int(field["other_hand_sizes"][k]),
            "uno_called": bool(field["other_uno_called"][k]),
            "score_pct": int(field["other_scores_pct"][k]),
            "drew_on": [COLORS[c] for c in np.flatnonzero(field["other_lacks_color"][4 * k:4 * k + 4])],
            "chose": _colour(field["other_chose_color"][4 * k:4 * k + 4]),
            "shown": _cards(shown) if field["revealed_seen"][k] else None,
        })
    stacking = tuple(house[name] for name in ("stack_draw2", "stack_draw4", "stack_mixed"))
    return {
        "phase": phase,
        "hand": _cards(field["hand"]),
        "top": CARD_LABELS[int(field["top_card"].argmax())],
        "color": _colour(field["current_color"]),
        "drawn": CARD_LABELS[int(field["drawn_card"].argmax())] if field["drawn_card"].any() else None,
        "direction_left": bool(field["direction_left"][0]),
        "draw_pile": int(field["draw_pile_size"][0]),
        "discard": _cards(field["discard_counts"]),
        "score_pct": int(field["my_score_pct"][0]),
        "uno_called": bool(field["my_uno_called"][0]),
        "pending_draw": int(field["pending_draw"][0]),
        "wd4_previous_color": _colour(field["wd4_prev_color"]),
        "catch_offender": int(field["catch_offender"].argmax()) + 1 if field["catch_offender"].any() else None,
        "house_rules": {
            "deck": "classic" if house["classic_deck"] else "harry_potter",
            "stacking": _stacking(stacking),
            **{name: bool(house[name]) for name in ("jump_in", "seven_zero", "draw_until_playable", "forced_play")},
        },
        "opponents": opponents,
    }


def _stacking(flags: tuple) -> str:
    if flags not in _STACKING_OF_FLAGS:
        raise ValueError(f"observation: house_rules stacking flags {flags} name no stacking option")
    return _STACKING_OF_FLAGS[flags]


def table_rules(view: dict, rules: RulesOptions | dict | None = None) -> RulesOptions:
    """The rules of the view's table: ``rules`` (the standard rules when None) with the house rules the view
    itself shows (an observation always tells which house rules are in play; the other options it does not)."""
    given = rules.as_dict() if isinstance(rules, RulesOptions) else dict(rules or {})
    return RulesOptions.from_kwargs(**{**given, **view["house_rules"]})


# ---------------------------------------------------------------- the rules in brief


def rules_text(num_players: int, rules: RulesOptions) -> str:
    """The rules of a table in brief, from its options (house rules included). Names no card of any game."""
    r = rules
    hat = r.deck == "harry_potter"
    points = _POINTS
    lines = [
        f"You are playing Harry Potter UNO at a table of {num_players} players.",
        "Rules in brief:",
        f"- The deck has {DECK_SIZES[r.deck]} cards: red, yellow, green and blue cards numbered 0-9 with skip, reverse "
        f"and draw2 (labels like red:7, blue:skip, green:draw2), and the wilds wild, wild_draw4"
        + (" and sorting_hat." if hat else " (the classic deck: no sorting_hat)."),
        "- Each player starts with 7 cards. On your turn play one card that matches the top card's colour (or the "
        "colour named for a wild on top), its number or its symbol, or a wild card"
        + (", or draw one card (allowed even when you could play)." if r.voluntary_draw
           else "; you may draw one card only when you cannot play."),
        "- After drawing: " + ("you keep drawing until you draw a playable card. " if r.draw_until_playable else "")
        + ("a playable drawn card must be played at once (play it); otherwise your turn ends." if r.forced_play else
           "you may play the drawn card at once (play it) or keep it (keep ends your turn); an unplayable one ends "
           "your turn."),
        "- skip: the next player loses their turn. reverse: the direction of play flips"
        + (" (with 2 players it acts as a skip)." if r.two_player_reverse_skips else ".")
        + " draw2: the next player draws 2 cards and loses their turn.",
        "- wild: you name the next colour (color:red, ...). wild_draw4: you name the colour, then the next player "
        "draws 4 cards and loses their turn" + (
            "; it may only be played honestly when you hold no card of the current colour, and the next player may "
            "challenge it: your hand is shown to them, and if you bluffed you draw 4 instead (they then play), "
            "otherwise they draw 6." if r.wd4_bluffing else
            " (it may only be played when you hold no card of the current colour; there is no challenge)."),
    ]
    if hat:
        lines.append(f"- sorting_hat: you name the colour, then choose another player (target:k, the player k seats "
                     f"to your left) who draws cards until they draw a {r.gryffindor_color} card.")
    lines.append(_uno_rule(r))
    lines.extend(_house_rule_lines(r))
    goal = ("- A round ends when a player has no cards left. " + (
        f"The winner scores the points of the cards left in the other hands ({points}); the first to "
        f"{r.target_score} points wins the match." if r.scoring == "winner" else
        f"Every other player adds the points of their own hand ({points}); when anyone reaches {r.target_score} "
        "points the match ends and the lowest total wins."))
    lines.append(goal)
    lines.append("- Your goal: " + ("win this round (be the first to play all your cards)." if r.episode == "round"
                                    else "win the match."))
    return "\n".join(lines)


def _uno_rule(r: RulesOptions) -> str:
    if r.uno_catch == "off":
        return "- There are no UNO calls in this game."
    caught = (f"another player may catch them (catch) and they draw {r.uno_penalty} cards" if r.uno_catch == "window"
              else f"they draw {r.uno_penalty} cards")
    return ("- UNO: before a play that leaves you one card, call it with the action uno (you then act again). "
            f"A player left with one card who did not call: {caught}.")


def _house_rule_lines(r: RulesOptions) -> list[str]:
    lines = []
    stacking = {
        "draw2": "a draw2 may be played on a draw2 you must draw for",
        "draw4": "a wild_draw4 may be played on a wild_draw4 you must draw for",
        "both": "a draw2 on a draw2, and a wild_draw4 on a wild_draw4, may be played instead of drawing",
        "mixed": "a draw2 on a draw2, and a wild_draw4 on a draw2 or a wild_draw4, may be played instead of drawing",
    }
    if r.stacking != "none":
        lines.append(f"- Stacking: {stacking[r.stacking]}; the next player then faces the whole pending draw "
                     "(stack again, or accept and draw it all).")
    if r.jump_in:
        lines.append("- Jump-in: when a coloured card has just been played, a player holding the identical card "
                     "(same colour and number or symbol) may play it at once, out of turn (or pass).")
    if r.seven_zero:
        lines.append("- Seven-O: after playing a 7 you choose a player (target:k) and swap hands with them; after "
                     "a 0 every hand passes to the next player in the direction of play.")
    return lines


# ---------------------------------------------------------------- the table as the seat sees it


def opponent_name(k: int) -> str:
    return f"opponent {k}"


def seat_names(num_players: int, viewer: int) -> list[str]:
    """Each seat's name as the viewer's text calls it: ``you`` for the viewer, ``opponent k`` k seats to its left."""
    return [("you" if seat == viewer else opponent_name((seat - viewer) % num_players)) for seat in range(num_players)]


def seat_history(events, num_players: int, viewer: int) -> list[str]:
    """The recent events (``render.history_lines``) in the words of the viewer's text: seats named by
    ``seat_names``, drawn cards named only to their drawer."""
    lines = history_lines(events, seat_names(num_players, viewer), viewer)
    return [("you were" + line[len("you was"):]) if line.startswith("you was") else line for line in lines]


def phase_text(view: dict, num_players: int) -> str:
    """What the seat is asked to decide now, in words (from the phase and the facts that go with it)."""
    phase, top, pending = view["phase"], view["top"], view["pending_draw"]
    previous = opponent_name(num_players - 1 if view["direction_left"] else 1)
    if phase == "play":
        return "your turn: play a matching card, or draw."
    if phase == "drawn":
        return f"you drew {view['drawn']}: play it" + ("." if view["house_rules"]["forced_play"] else ", or keep it.")
    if phase == "color":
        starting = len(view["discard"]) == 1
        return f"name the colour for the starting card, {top}." if starting else f"name the colour for the {top} you played."
    if phase == "target":
        if top == "sorting_hat":
            return "choose the player your sorting_hat sends drawing (target:k is opponent k)."
        return f"choose the player to swap hands with after your {top} (target:k is opponent k)."
    if phase == "challenge":
        before = view["wd4_previous_color"]
        return (f"{previous} played a wild_draw4 on you" + (f" (the colour before it was {before})" if before else "")
                + f": challenge it, or accept and draw {pending}.")
    if phase == "catch":
        return f"{opponent_name(view['catch_offender'])} has one card and did not call UNO: catch them, or pass."
    if phase == "stack":
        return f"{pending} cards to draw are pending on the {top}: stack a draw card on it, or accept and draw them."
    if phase == "jump":
        return f"{top} was just played and you hold an identical card: jump in by playing it, or pass."
    return "the game is over."


def situation_text(view: dict, num_players: int, target_score: int, mask=None, history=None) -> str:
    """The table as the seat sees it (``read_observation``'s view), then its legal actions numbered (``mask``:
    the seat's action mask; None or all zeros when it has nothing to decide)."""
    direction = "left" if view["direction_left"] else "right"
    following = opponent_name(1 if view["direction_left"] else num_players - 1)
    lines = [
        "The table as you see it (opponent k sits k seats to your left; target:k names opponent k):",
        f"Now: {phase_text(view, num_players)}",
        f"Top card: {view['top']}. Current colour: {view['color'] or 'not named yet'}.",
        f"Play goes {direction}: {following} plays after you.",
        f"Draw pile: {_count(view['draw_pile'], 'card')}."
        + (f" Pending draw: {_count(view['pending_draw'], 'card')}." if view["pending_draw"] else ""),
        f"Your hand ({_count(len(view['hand']), 'card')}): {' '.join(view['hand']) or '(empty)'}",
        "Players (scores as a percent of the target " + f"{target_score}):",
        f"- you: {_count(len(view['hand']), 'card')}, " + ("UNO called" if view["uno_called"] else "no UNO call")
        + f", score {view['score_pct']}%",
    ]
    for k, seat in enumerate(view["opponents"], start=1):
        facts = [_count(seat["cards"], "card"), "UNO called" if seat["uno_called"] else "no UNO call", f"score {seat['score_pct']}%"]
        if seat["drew_on"]:
            facts.append("drew instead of playing on " + ", ".join(seat["drew_on"]))
        if seat["chose"]:
            facts.append(f"last moved play into {seat['chose']}")
        lines.append(f"- {opponent_name(k)}: " + ", ".join(facts))
    for k, seat in enumerate(view["opponents"], start=1):
        if seat["shown"] is not None:
            lines.append(f"Shown to you this round, {opponent_name(k)}'s hand: {' '.join(seat['shown']) or '(empty)'} "
                         "(some of it may have been played since).")
    lines.append(f"Discard pile ({_count(len(view['discard']), 'card')}): {_counted(view['discard'])}")
    if history:
        lines.append("This round so far, as you saw it:")
        lines.extend(f"- {line}" for line in history)
    legal = [] if mask is None else action_lines(mask)
    if legal:
        lines.append("Your legal actions:")
        lines.extend(legal)
        lines.append("Answer with exactly one action from this list: its number or its label, and nothing else.")
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _counted(labels: list[str]) -> str:
    """``red:5 x2, blue:skip``: each label once, with its count when above one, in CARD_LABELS order."""
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return ", ".join(f"{label} x{count}" if count > 1 else label for label, count in counts.items()) or "(empty)"


def legal_actions(mask) -> list[int]:
    """The legal action indices of one action mask, in ACTION_LABELS order (the order they are numbered in)."""
    mask = np.asarray(mask)
    if mask.shape != (NUM_ACTIONS,):
        raise ValueError(f"action mask must have {NUM_ACTIONS} entries, got shape {mask.shape}")
    return np.flatnonzero(mask).tolist()


def action_lines(mask) -> list[str]:
    """One line per legal action: its number (from 1), a full stop and its label (``3. play:red:5``)."""
    return [f"{number}. {ACTION_LABELS[action]}" for number, action in enumerate(legal_actions(mask), start=1)]


def seat_text(observation, action_mask, num_players: int, rules: RulesOptions | dict | None = None,
              history: list[str] | None = None) -> str:
    """The whole text face of a seat's view: the rules in brief, a blank line, then ``board_text``."""
    view = read_observation(observation, num_players)
    return rules_text(num_players, table_rules(view, rules)) + "\n\n" + board_text(observation, action_mask, num_players,
                                                                                  rules, history)


def board_text(observation, action_mask, num_players: int, rules: RulesOptions | dict | None = None,
               history: list[str] | None = None) -> str:
    """The table as the seat sees it (with ``history``, the round's events in words, where the caller kept them)
    and its legal actions numbered: ``seat_text`` less the rules."""
    view = read_observation(observation, num_players)
    return situation_text(view, num_players, table_rules(view, rules).target_score, action_mask, history)


# ---------------------------------------------------------------- reading an answer to the numbered list

_LABEL = re.compile(r"(?<![\w:])(" + "|".join(re.escape(label) for label in
                                               sorted(set(ACTION_LABELS) | set(CARD_LABELS), key=len, reverse=True))
                    + r")(?![\w:])")
_NUMBER = re.compile(r"(?<![\w:])\d+(?![\w:])")
_THINKING = re.compile(r"<think>.*?</think>", re.S)
_ACTION_OF = {label: index for index, label in enumerate(ACTION_LABELS)} | {
    card: ACTION_LABELS.index(f"play:{card}") for card in CARD_LABELS}


def read_answer(text: str, legal: list[int]) -> tuple[int | None, str | None]:
    """(the action, None) when ``text`` names exactly one action and it is in ``legal`` (the list ``action_lines``
    numbers from 1, in that order); else (None, why not), in words that name no card.

    Leniently but exactly: the text, less any ``<think>...</think>`` block, is searched for action labels
    (``play:red:5``; a bare card label such as ``red:5`` names its ``play:`` action) and whole numbers (the list's
    numbers). Case, spacing, quotes and words around them do not matter, and an action's number and label together
    count once; no action, two different ones, a number off the list or an action not legal now is no answer."""
    answer = _THINKING.sub(" ", text).lower()
    if "<think>" in answer:
        return None, "your answer was cut off while thinking and named no action"
    named: set[int] = set()
    off_list: set[int] = set()
    for match in _LABEL.finditer(answer):
        named.add(_ACTION_OF[match.group(1)])
    for match in _NUMBER.finditer(_LABEL.sub(" ", answer)):
        number = int(match.group(0)) if len(match.group(0)) <= 6 else 0
        if 1 <= number <= len(legal):
            named.add(legal[number - 1])
        else:
            off_list.add(number)
    if off_list:
        return None, f"your answer has a number that is not on the list (the actions are numbered 1 to {len(legal)})"
    if not named:
        return None, "your answer named no action from the list"
    if len(named) > 1:
        return None, f"your answer named {len(named)} different actions; name exactly one"
    action = named.pop()
    if action not in legal:
        return None, "your answer named an action that is not legal now"
    return action, None
