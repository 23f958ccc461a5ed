"""The rules options: every **[option]** of docs/rules.md (its §13 lists them) plus the episode and reward settings.

``RulesOptions`` is frozen and checked on construction; an unknown name or a
bad value raises ``ValueError`` naming the field. ``kernel_params`` turns it
into the plain integers the compiled kernel reads. ``check_num_players`` is the
one check of a player count.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import NamedTuple


from . import _checks
from .cards import COLORS, DECK_SIZES, DECKS

UNO_CATCH_MODES = ("window", "always", "off")
SCORING_MODES = ("winner", "lowest")
EPISODE_MODES = ("round", "match")
REWARD_MODES = ("win", "points")
STACKING_MODES = ("none", "draw2", "draw4", "both", "mixed")
# The house rules' options (docs/rules.md §15). Each is off at its default, so anything saved before
# they existed (a game record, an agent file) was played with them at their defaults.
HOUSE_RULE_OPTIONS = ("deck", "stacking", "jump_in", "seven_zero", "draw_until_playable", "forced_play")
# Every house rule on, on the Harry Potter deck (add deck="classic" for the other): the evaluations' "house rules".
ALL_HOUSE_RULES = {"stacking": "mixed", "jump_in": True, "seven_zero": True, "draw_until_playable": True, "forced_play": True}


@dataclass(frozen=True)
class RulesOptions:
    """Rules variants (docs/rules.md §13) and episode/reward settings, defaults as the rules decide.

    Attributes:
        uno_penalty: cards drawn by a player caught not calling UNO (classic UNO's sheet says 4: docs/rules.md §7).
        uno_catch: ``"window"`` (other players may catch before the next player starts),
            ``"always"`` (an uncalled UNO is always caught) or ``"off"`` (no calls, no catches).
        wd4_bluffing: an illegal Wild Draw Four may be played (and challenged); with False it is
            masked out and no challenge is offered.
        two_player_reverse_skips: with two players a Reverse acts as a Skip.
        voluntary_draw: drawing is allowed while holding a playable card (False: RLCard's rule).
        gryffindor_color: the colour a Sorting Hat's target draws until.
        target_score: match points that end a match.
        scoring: ``"winner"`` (the round's winner takes the points) or ``"lowest"``
            (each player adds their own hand; lowest total wins once anyone reaches the target).
        max_turns: decisions after which a round is truncated.
        episode: ``"round"`` (one round per episode) or ``"match"`` (rounds until the match ends).
        reward: ``"win"`` (+1 / -1) or ``"points"`` (card points / 100).

    House rules (docs/rules.md §15), every one off by default:
        deck: ``"harry_potter"`` (112 cards) or ``"classic"`` (108 cards, no Sorting Hat).
        stacking: ``"none"``, ``"draw2"`` (a Draw Two on a Draw Two), ``"draw4"`` (a Wild Draw
            Four on a Wild Draw Four), ``"both"``, ``"mixed"`` (both, and a Wild Draw Four on a Draw Two).
        jump_in: a player holding a card identical to the one just played may play it out of turn.
        seven_zero: a 7 swaps hands with a chosen player; a 0 passes every hand to the next player.
        draw_until_playable: ``draw`` draws until a playable card (or nothing is left).
        forced_play: a playable drawn card must be played (no ``keep``).
    """

    uno_penalty: int = 2
    uno_catch: str = "window"
    wd4_bluffing: bool = True
    two_player_reverse_skips: bool = True
    voluntary_draw: bool = True
    gryffindor_color: str = "red"
    target_score: int = 500
    scoring: str = "winner"
    max_turns: int = 10000
    episode: str = "round"
    reward: str = "win"
    deck: str = "harry_potter"
    stacking: str = "none"
    jump_in: bool = False
    seven_zero: bool = False
    draw_until_playable: bool = False
    forced_play: bool = False

    def __post_init__(self):
        # numpy ints and bools are taken (stored as Python ones, so as_dict() stays JSON-ready); strings and floats not
        def check_int(name, low, high):
            object.__setattr__(self, name, _checks.check_int(getattr(self, name), name, low, high))

        def check_bool(name):
            object.__setattr__(self, name, _checks.check_bool(getattr(self, name), name))

        def check_choice(name, choices):
            if getattr(self, name) not in choices:
                raise ValueError(f"{name} must be one of {choices}, got {getattr(self, name)!r}")

        check_int("uno_penalty", 0, 20)
        check_choice("uno_catch", UNO_CATCH_MODES)
        check_bool("wd4_bluffing")
        check_bool("two_player_reverse_skips")
        check_bool("voluntary_draw")
        check_choice("gryffindor_color", COLORS)
        check_int("target_score", 1, 1_000_000)
        check_choice("scoring", SCORING_MODES)
        check_int("max_turns", 1, 100_000_000)
        check_choice("episode", EPISODE_MODES)
        check_choice("reward", REWARD_MODES)
        check_choice("deck", DECKS)
        check_choice("stacking", STACKING_MODES)
        check_bool("jump_in")
        check_bool("seven_zero")
        check_bool("draw_until_playable")
        check_bool("forced_play")

    @classmethod
    def from_kwargs(cls, **kwargs) -> RulesOptions:
        """Build from keyword options, with a clear error for an unknown name."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(kwargs) - known)
        if unknown:
            raise ValueError(f"unknown rules option(s) {unknown}; known options: {sorted(known)}")
        return cls(**kwargs)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


class KernelParams(NamedTuple):
    """The options as integers, the form the compiled kernel takes."""

    num_players: int
    uno_penalty: int
    uno_catch: int  # index into UNO_CATCH_MODES
    wd4_bluffing: int
    two_player_reverse_skips: int
    voluntary_draw: int
    gryffindor_color: int
    target_score: int
    scoring: int  # index into SCORING_MODES
    max_turns: int
    episode: int  # index into EPISODE_MODES
    reward: int  # index into REWARD_MODES
    deck_size: int  # cards in the deck: 112, or 108 for the classic deck
    stack_draw2: int  # a Draw Two may be stacked on a Draw Two
    stack_draw4: int  # a Wild Draw Four may be stacked on a Wild Draw Four
    stack_mixed: int  # a Wild Draw Four may be stacked on a Draw Two
    jump_in: int
    seven_zero: int
    draw_until_playable: int
    forced_play: int


MIN_PLAYERS, MAX_PLAYERS = 2, 10


def check_num_players(num_players) -> int:
    """num_players as a Python int, or ValueError naming it: an int (numpy integers too, not bool) in [2, 10].

    The one check of a player count; everything that takes ``num_players`` goes through it."""
    return _checks.check_int(num_players, "num_players", MIN_PLAYERS, MAX_PLAYERS)


def kernel_params(options: RulesOptions, num_players) -> KernelParams:
    """The options and player count as the kernel's integers (num_players checked by ``check_num_players``)."""
    return KernelParams(
        num_players=check_num_players(num_players),
        uno_penalty=options.uno_penalty,
        uno_catch=UNO_CATCH_MODES.index(options.uno_catch),
        wd4_bluffing=int(options.wd4_bluffing),
        two_player_reverse_skips=int(options.two_player_reverse_skips),
        voluntary_draw=int(options.voluntary_draw),
        gryffindor_color=COLORS.index(options.gryffindor_color),
        target_score=options.target_score,
        scoring=SCORING_MODES.index(options.scoring),
        max_turns=options.max_turns,
        episode=EPISODE_MODES.index(options.episode),
        reward=REWARD_MODES.index(options.reward),
        deck_size=DECK_SIZES[options.deck],
        stack_draw2=int(options.stacking in ("draw2", "both", "mixed")),
        stack_draw4=int(options.stacking in ("draw4", "both", "mixed")),
        stack_mixed=int(options.stacking == "mixed"),
        jump_in=int(options.jump_in),
        seven_zero=int(options.seven_zero),
        draw_until_playable=int(options.draw_until_playable),
        forced_play=int(options.forced_play),
    )
