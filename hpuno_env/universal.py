"""The universal observation: one int8 vector of one size for every player count and every rules set.

A network that reads it can play at any table, 2 to 10 players, under any
rules. ``universal_layout()`` is its name -> slice map: first every field of
``observation_layout(10)`` of layout ``UNIVERSAL_BASE_VERSION`` (3; the round's
history, which layout 4 appended, is left out) in the same order, each per-seat field with room
for nine other seats (the per-count observation's other seats fill the first
``num_players - 1`` blocks, in the same turn order to the left; the blocks of
seats the table lacks stay zero), then what the per-count observation leaves
to its size: which other seats are present, the player count, and the rules
options that change play but are not among its ``house_rules`` flags.

``universal_observation(observations, num_players, rules)`` converts a batch
of per-count observations (``VectorEngine.observe()`` rows); it is a fixed
copy of column runs into a preset row (about 1 ms per 4096 rows on one core).
``universal_scale()`` is ``observation_scale``'s counterpart.

Fields are named as in ``observation_layout``; docs/environment.md documents
the layout field by field (tests/test_doc_facts.py checks it).
"""

from __future__ import annotations

import functools

import numpy as np

from ._checks import check_int_array
from .cards import COLORS
from .encoding import FIELDS_ADDED_IN_VERSION, OBS_DTYPE, observation_layout, observation_scale, observation_size
from .options import MAX_PLAYERS, MIN_PLAYERS, UNO_CATCH_MODES, RulesOptions, check_num_players

# The universal layout's version, stored in the agent files that read it. It is built on the fields of
# observation layout UNIVERSAL_BASE_VERSION (the fields later versions appended are not in it): bump it whenever
# that base or any field below changes.
UNIVERSAL_VERSION = 1
UNIVERSAL_BASE_VERSION = 3
MAX_OTHERS = MAX_PLAYERS - 1
# The per-count observation's fields that the universal one holds: those of its base version.
_BASE_FIELDS = tuple(
    name for name in observation_layout(MAX_PLAYERS)
    if not any(version > UNIVERSAL_BASE_VERSION and name in names for version, names in FIELDS_ADDED_IN_VERSION.items())
)

# The fields after observation_layout(10)'s, with their sizes.
_TABLE_FIELDS = (
    ("other_present", MAX_OTHERS),  # 1 for each other seat the table has, in turn order to the left
    ("player_count", MAX_PLAYERS - MIN_PLAYERS + 1),  # one-hot 2 .. 10 players
    ("uno_penalty", 1),  # cards drawn when caught not calling UNO
    ("uno_catch", len(UNO_CATCH_MODES)),  # one-hot window, always, off
    ("play_rules", 3),  # flags: wd4_bluffing, two_player_reverse_skips, voluntary_draw
    ("gryffindor_color", len(COLORS)),  # one-hot: the colour a Sorting Hat's target draws until
    ("match_rules", 3),  # flags: scoring "lowest", episode "match", reward "points"
)


@functools.cache
def _layout() -> dict[str, slice]:
    layout = {name: piece for name, piece in observation_layout(MAX_PLAYERS).items() if name in _BASE_FIELDS}
    start = max(piece.stop for piece in layout.values())
    for name, size in _TABLE_FIELDS:
        layout[name] = slice(start, start + size)
        start += size
    return layout


def universal_layout() -> dict[str, slice]:
    """Name -> slice of the universal observation (the same for every player count)."""
    return dict(_layout())


def universal_size() -> int:
    return max(piece.stop for piece in _layout().values())


@functools.cache
def universal_positions(num_players: int) -> np.ndarray:
    """(observation_size(num_players),) int64: where each entry of the per-count observation lands in the universal one
    (-1: a field of a later layout than the universal one's base, left out).

    A field of fixed size lands whole; a per-seat field (a block per other seat, seats in turn order) lands in the
    first ``num_players - 1`` blocks of its nine."""
    num_players = check_num_players(num_players)
    universal = _layout()
    positions = np.full(observation_size(num_players), -1, np.int64)
    for name, piece in observation_layout(num_players).items():
        if name in universal:
            start = universal[name].start
            positions[piece] = np.arange(start, start + piece.stop - piece.start)
    positions.flags.writeable = False
    return positions


def _rules_dict(rules) -> dict:
    if rules is None:
        return RulesOptions().as_dict()
    if isinstance(rules, RulesOptions):
        return rules.as_dict()
    if isinstance(rules, dict):
        return RulesOptions.from_kwargs(**rules).as_dict()
    raise ValueError(f"rules must be a dict of rules options, a RulesOptions or None, got {type(rules).__name__}")


def universal_table_row(num_players: int, rules=None) -> np.ndarray:
    """(universal_size(),) int8: the universal observation's table fields (seats present, player count, rules
    options) for this table, zeros everywhere else. ``rules``: a dict of rules options, a RulesOptions or None
    (the defaults)."""
    num_players = check_num_players(num_players)
    return _table_row(num_players, tuple(sorted(_rules_dict(rules).items()))).copy()


@functools.cache
def _table_row(num_players: int, rules_items: tuple) -> np.ndarray:
    rules = dict(rules_items)
    layout = _layout()
    row = np.zeros(universal_size(), OBS_DTYPE)

    def put(name: str, values) -> None:
        row[layout[name]] = values

    put("other_present", np.arange(MAX_OTHERS) < num_players - 1)
    put("player_count", np.arange(MIN_PLAYERS, MAX_PLAYERS + 1) == num_players)
    put("uno_penalty", rules["uno_penalty"])
    put("uno_catch", np.array(UNO_CATCH_MODES) == rules["uno_catch"])
    put("play_rules", [rules["wd4_bluffing"], rules["two_player_reverse_skips"], rules["voluntary_draw"]])
    put("gryffindor_color", np.array(COLORS) == rules["gryffindor_color"])
    put("match_rules", [rules["scoring"] == "lowest", rules["episode"] == "match", rules["reward"] == "points"])
    row.flags.writeable = False
    return row


def universal_observation(observations, num_players: int, rules=None) -> np.ndarray:
    """(N, universal_size()) int8: a batch of per-count observations of a num_players table in the universal layout.

    Args:
        observations: (N, observation_size(num_players)) int8 rows, as ``VectorEngine.observe()`` gives them
            (another integer dtype is taken as it is).
        num_players: the table's player count, 2 to 10.
        rules: the table's rules options (dict or RulesOptions; None: the defaults). Only the options of the
            table fields are read; the house rules come from the observation's own ``house_rules`` flags.
    """
    num_players = check_num_players(num_players)
    array = np.asarray(observations)
    if array.ndim != 2 or array.shape[1] != observation_size(num_players):
        raise ValueError(f"observations must have shape (N, {observation_size(num_players)}) for {num_players} players, got {array.shape}")
    if array.dtype != OBS_DTYPE:
        array = check_int_array(array, "observations", array.shape)
    row = _table_row(num_players, tuple(sorted(_rules_dict(rules).items())))
    out = np.empty((len(array), len(row)), OBS_DTYPE)
    out[:] = row
    # A few contiguous column runs: slice copies are about 4 times faster than one fancy-indexed scatter.
    for start, stop, to in _runs(num_players):
        out[:, to: to + stop - start] = array[:, start:stop]
    return out


@functools.cache
def _runs(num_players: int) -> tuple[tuple[int, int, int], ...]:
    """universal_positions as (start, stop, destination) runs of consecutive columns."""
    positions = universal_positions(num_players)
    breaks = np.flatnonzero(np.diff(positions) != 1) + 1
    starts, stops = np.r_[0, breaks], np.r_[breaks, len(positions)]
    return tuple((int(start), int(stop), int(positions[start])) for start, stop in zip(starts, stops, strict=True)
                 if positions[start] >= 0)


def universal_scale() -> np.ndarray:
    """(universal_size(),) float32: ``observation_scale`` for the universal layout (each field scaled as in the
    per-count layout, the table fields as flags, ``uno_penalty`` by 4)."""
    scale = np.ones(universal_size(), np.float32)
    positions = universal_positions(MAX_PLAYERS)
    kept = positions >= 0
    scale[positions[kept]] = observation_scale(MAX_PLAYERS)[kept]
    scale[_layout()["uno_penalty"]] = 1.0 / 4
    return scale
