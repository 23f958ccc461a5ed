"""The one home of argument checks: the same kind of argument gets the same check everywhere.

Every public entry point (the engine, the envs, the agents, the command-line
tools) checks its ints, flags, seeds, game indices and action arrays here, so
that they all agree:

- an int is a Python ``int`` or a numpy integer; ``bool`` / ``np.bool_`` are
  not ints, and floats (``1.0``, ``1.7``) and strings (``"3"``) are refused,
  never rounded or parsed;
- a flag is ``True`` / ``False`` or ``np.bool_``; ``"False"``, ``0`` and
  ``None`` are refused (``bool("False")`` is True);
- a seed is None or an int in ``[0, 2**32)`` (what numpy's legacy seeding,
  and so Stable-Baselines3, takes), checked when it is given, not when it is
  first used;
- an index (a game slot, a seat) is an int in ``[0, size)``: no negative
  indices (``-1`` would silently read the last game);
- an array of ints (actions, game indices) has an integer dtype and exactly
  the expected shape: no flattening, no rounding, no bools.

Each check returns the value in its plain Python form (``int``, ``bool``) or
raises ``ValueError`` naming the argument and showing what was given.

Fields of files people hand over (records, agent files) are another matter:
what ``json`` gives is checked by ``_reading`` (``is_json_int``).
"""

from __future__ import annotations

import math

import numpy as np

SEED_LIMIT = 2**32  # seeds are in [0, SEED_LIMIT)


def is_int(value) -> bool:
    """A Python or numpy integer, not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_bool(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def check_int(value, name: str, low: int | None = None, high: int | None = None) -> int:
    """``value`` as a Python int, or ValueError unless it is an int in [low, high] (either bound may be None)."""
    if not is_int(value) or (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"{name} must be an int{_bounds(low, high)}, got {_shown(value)}")
    return int(value)


def check_positive_int(value, name: str) -> int:
    if not is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {_shown(value)}")
    return int(value)


def check_bool(value, name: str) -> bool:
    """``value`` as a Python bool, or ValueError unless it is True/False (np.bool_ too)."""
    if not is_bool(value):
        raise ValueError(f"{name} must be True or False, got {_shown(value)}")
    return bool(value)


def check_seed(seed, name: str = "seed") -> int | None:
    """None, or the seed as a Python int in [0, 2**32)."""
    if seed is None:
        return None
    if not is_int(seed) or not 0 <= seed < SEED_LIMIT:
        raise ValueError(f"{name} must be None or an int in [0, 2**32), got {_shown(seed)}")
    return int(seed)


def check_index(value, name: str, size: int, what: str = "an index") -> int:
    """An index in [0, size) as a Python int (negative indices are refused, not counted from the end).

    ``what`` says in the error what the index picks (``"a seat"``, ``"a slot"``)."""
    if not is_int(value) or not 0 <= value < size:
        raise ValueError(f"{name} must be {what} in [0, {size}), got {_shown(value)}")
    return int(value)


def check_int_array(values, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An int64 array of exactly ``shape`` from an array or list of ints (numpy integers too), else ValueError.

    Floats, bools and strings are refused (not rounded, not parsed), and so is any other shape (not flattened)."""
    array = _as_array(values, name)
    if array.size == 0 and array.dtype.kind == "f" and shape and 0 in shape:
        array = array.astype(np.int64)  # np.asarray([]) is float64: an empty list is an empty list of ints
    if array.dtype.kind not in "iu" or array.shape != tuple(shape):
        raise ValueError(f"{name} must be ints of shape {tuple(shape)}, got {_described(array)}")
    return array.astype(np.int64, copy=False)


def check_indices(values, name: str, size: int) -> np.ndarray:
    """Indices in [0, size) as a 1-D int64 array (a list, an array or a single int), else ValueError."""
    array = _as_array(values, name)
    if array.size == 0 and array.dtype.kind == "f":
        array = array.astype(np.int64)
    if array.dtype.kind not in "iu" or array.ndim > 1:
        raise ValueError(f"{name} must be ints (indices in [0, {size})), got {_described(array)}")
    array = array.astype(np.int64, copy=False).reshape(-1)
    if array.size and (array.min() < 0 or array.max() >= size):
        bad = array[(array < 0) | (array >= size)]
        raise ValueError(f"{name} must be indices in [0, {size}), got {bad[:5].tolist()}")
    return array


def check_finite(value, name: str, low: float | None = None, high: float | None = None,
                 low_open: bool = False) -> float:
    """A finite number (not a bool, not a string) in [low, high] ((low, high] with low_open), as a float."""
    if not isinstance(value, (int, float, np.integer, np.floating)) or is_bool(value) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {_shown(value)}")
    if (low is not None and (value <= low if low_open else value < low)) or (high is not None and value > high):
        left = "(" if low_open else "["
        raise ValueError(f"{name} must be in {left}{low}, {high}], got {_shown(value)}")
    return float(value)


def check_weights(values, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """A float64 array of ``shape`` of finite non-negative numbers, or ValueError naming ``name``."""
    array = _as_array(values, name)
    if array.shape != shape or array.dtype.kind not in "iuf" or not np.isfinite(array).all() or (array < 0).any():
        raise ValueError(f"{name} must be an array of shape {shape} of finite numbers >= 0, got {_described(array)}")
    return array.astype(np.float64)


def check_number(value, name: str, low: float) -> float:
    """A real number (an int or a float, numpy's too; not a bool, not a string) >= low, as a float.

    Unlike ``check_finite`` it takes infinity: for a threshold, ``inf`` means "never"; NaN is refused."""
    if not isinstance(value, (int, float, np.integer, np.floating)) or is_bool(value) or math.isnan(value) or value < low:
        raise ValueError(f"{name} must be a number >= {low} (not NaN), got {_shown(value)}")
    return float(value)


def _as_array(values, name: str) -> np.ndarray:
    try:
        return np.asarray(values)
    except (TypeError, ValueError) as error:  # ragged lists
        raise ValueError(f"{name} must be an array of ints, got {_shown(values)} ({error})") from None


def _bounds(low, high) -> str:
    if low is not None and high is not None:
        return f" in [{low}, {high}]"
    if low is not None:
        return f" >= {low}"
    return f" <= {high}" if high is not None else ""


def _described(array: np.ndarray) -> str:
    return f"{array.dtype} array of shape {array.shape}"


def _shown(value) -> str:
    """repr of a value, cut to one short line (a huge list or int must not make a huge error)."""
    if isinstance(value, int) and value.bit_length() > 200:  # str() of a 5,000-digit int is itself refused
        text = f"an int of about {int(abs(value).bit_length() * math.log10(2)) + 1} digits"
    else:
        text = repr(value)
    text = text if len(text) <= 80 else text[:77] + "..."
    return f"{text} ({type(value).__name__})"
