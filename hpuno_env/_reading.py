"""Reading what users hand over (records, agent files, ``--rules`` JSON, checkpoints): bounded and checked.

A file people swap and load must not be able to exhaust the machine or hang
a command, and a malformed one must say what is wrong in one line:

- ``read_regular_file`` / ``open_regular_file`` refuse what is not a regular
  file (a FIFO would block forever, ``/dev/zero`` never ends; a symlink counts
  as what it points to) and never read more than a bound;
- ``parse_json`` refuses nesting deeper than the parser can follow (Python's
  recursion limit, about 1,000 levels: a ``ValueError`` saying how deep, never
  a ``RecursionError``), NaN / Infinity and integers of more than
  ``MAX_INT_DIGITS`` digits, naming the field they are in, and turns every
  failure into a ``ValueError`` that names the source;
- ``read_json_file`` is the two together;
- ``is_json_int`` is the test of an integer field in what ``json`` gave: a
  Python ``int``, not a ``bool`` (``true`` is no count). Arguments passed in
  code are checked by ``_checks``, which takes numpy integers too.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys

import numpy as np

MAX_INT_DIGITS = 40  # a seed or generator word has at most 20 digits
MAX_JSON_BYTES = 64 * 2**20  # a long match's record is a few MB

_FILE_KINDS = (
    (stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
)


def is_json_int(value) -> bool:
    """An integer field of parsed JSON: a Python int, not a bool."""
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(mode: int) -> str:
    return next((name for test, name in _FILE_KINDS if test(mode)), "something else")


def open_regular_file(path, what: str, max_bytes: int):
    """An open binary file object for ``path``, or ValueError if it is not a regular file of at most max_bytes.

    Checked before opening (opening a FIFO blocks until a writer comes) and again on the open file."""
    path = os.fspath(path)
    try:
        mode = os.stat(path).st_mode  # follows symlinks: a link to /dev/zero is /dev/zero
    except OSError as error:
        raise ValueError(f"cannot read {what} {path}: {error.strerror or error}") from None
    if not stat.S_ISREG(mode):
        raise ValueError(f"cannot read {what} {path}: it is {_kind(mode)}, not a regular file")
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise ValueError(f"cannot read {what} {path}: {error.strerror or error}") from None
    file = os.fdopen(descriptor, "rb")
    info = os.fstat(file.fileno())
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        file.close()
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"cannot read {what} {path}: it is {_kind(info.st_mode)}, not a regular file")
        raise ValueError(f"{what} {path} is {info.st_size:,} bytes, more than the {max_bytes:,} such a file can hold")
    return file


def read_regular_file(path, what: str, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most max_bytes (ValueError otherwise; see ``open_regular_file``)."""
    with open_regular_file(path, what, max_bytes) as file:
        data = file.read(max_bytes + 1)  # the file may have grown since it was measured
    if len(data) > max_bytes:
        raise ValueError(f"{what} {os.fspath(path)} is more than the {max_bytes:,} bytes such a file can hold")
    return data


def read_json_file(path, what: str, max_bytes: int = MAX_JSON_BYTES):
    """The JSON document in a regular file, checked by ``parse_json``; every failure a ValueError naming the file."""
    path = os.fspath(path)
    return parse_json(read_regular_file(path, what, max_bytes), f"{what} {path}")


class JSONInputError(ValueError):
    """A ValueError from ``parse_json``: ``str()`` is "<source>: <problem>", ``problem`` the part after the source."""

    def __init__(self, source: str, problem: str):
        super().__init__(f"{source}: {problem}")
        self.source, self.problem = source, problem


class _Refused:
    """What ``parse_json``'s hooks put in place of a value it refuses; found afterwards, with its field."""

    def __init__(self, reason: str):
        self.reason = reason


_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


def json_depth(data: bytes) -> int:
    """The deepest nesting of [ and { in JSON text (brackets inside strings not counted)."""
    outside = _STRING.sub(b'""', data)
    codes = np.frombuffer(outside, np.uint8)
    brackets = codes[(codes == ord("[")) | (codes == ord("{")) | (codes == ord("]")) | (codes == ord("}"))]
    if not brackets.size:
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1).astype(np.int64)
    return int(np.cumsum(steps).max())


def parse_json(text: str | bytes, source: str):
    """The JSON document in ``text``, or a ValueError that names ``source`` and, where it can, the field.

    Refused: text that is not UTF-8 or not JSON, nesting deeper than the parser can follow, NaN and
    Infinity, numbers too large for a float, integers of more than ``MAX_INT_DIGITS`` digits. The hooks
    below mark a refused value; the document is searched for its field only when one was marked."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    refused = []

    def refuse(reason: str) -> _Refused:
        refused.append(reason)
        return _Refused(reason)

    try:
        document = json.loads(
            data,
            parse_int=lambda digits: _bounded_int(digits, refuse),
            parse_float=lambda text: _finite_float(text, refuse),
            parse_constant=lambda name: refuse(f"is {name}, which is not a number JSON allows"),
        )
    except RecursionError:  # the C scanner stops at the recursion limit: how deep was it?
        raise JSONInputError(source, f"JSON nested {json_depth(data)} levels deep, deeper than it can be read "
                                     f"(about {sys.getrecursionlimit()} levels)") from None
    except UnicodeDecodeError as error:
        raise JSONInputError(source, f"not UTF-8 text, so corrupt or not JSON ({error.reason} at byte {error.start})") from None
    except json.JSONDecodeError as error:
        raise JSONInputError(source, f"not valid JSON, truncated or corrupt ({error})") from None
    except ValueError as error:
        raise JSONInputError(source, f"not valid JSON ({str(error).splitlines()[0][:200]})") from None
    if refused:
        field, reason = _find_refused(document, "")
        raise JSONInputError(source, f"{'field ' + repr(field) if field else 'the document'} {reason}")
    return document


def _bounded_int(digits: str, refuse):
    count = len(digits) - digits.startswith("-")
    return int(digits) if count <= MAX_INT_DIGITS else refuse(f"is an integer of {count} digits (at most {MAX_INT_DIGITS})")


def _finite_float(text: str, refuse):
    value = float(text)
    return value if math.isfinite(value) else refuse(f"is {text}, too large for a number")


def _find_refused(value, field: str):
    """(field path, reason) of the first refused value in a parsed document, or None."""
    stack = [(value, field)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, _Refused):
            return where, item.reason
        if isinstance(item, dict):
            stack.extend((child, f"{where}.{key}" if where else str(key)) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{index}]") for index, child in reversed(list(enumerate(item))))
    return None
