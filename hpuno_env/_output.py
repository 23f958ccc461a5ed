"""Checks that a command-line tool can write where it was told to, before it does any work; and the name it
calls itself by in its usage and errors (``program_name``).

A tool that plays for minutes and then fails on an unwritable ``--out`` loses the work;
these checks run first, so such a path is a clean ``error:`` exit that changes nothing
(except creating the folder that was asked for). ``write_atomically`` then writes a
file so that a crash never leaves half of it.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import secrets
import tempfile


def folder_problem(folder: str) -> str | None:
    """Why files cannot be written into ``folder`` (created if missing), or None."""
    if not folder:
        return "the folder name is empty"
    if os.path.exists(folder) and not os.path.isdir(folder):
        return f"{folder} is a file, not a folder"
    try:
        os.makedirs(folder, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        return f"cannot write into {folder}: {error.strerror or error}"
    return None


def file_problem(path: str) -> str | None:
    """Why ``path`` cannot be written as a file (its folder is created if missing), or None. An existing file
    is opened for appending (nothing is changed), so a file that cannot be written is found too."""
    if not path:
        return "the file name is empty"
    if os.path.isdir(path):
        return f"{path} is a folder, not a file"
    problem = folder_problem(os.path.dirname(os.path.abspath(path)))
    if problem is None and os.path.lexists(path):
        try:  # without O_CREAT nothing is made, with O_NONBLOCK a FIFO does not wait for a reader
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NONBLOCK))
        except OSError as error:
            return f"cannot write {path}: {error.strerror or error}"
    return problem


def write_atomically(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves the old file or the new one, never half of one: a new
    name in the same folder (so ``os.replace`` is atomic), created with the umask's usual permissions (not
    mkstemp's owner-only 0600), flushed to disk, then renamed over ``path``."""
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    try:
        with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


def program_name(module: str, script: str | None = None) -> str:
    """How a command names itself in its usage and errors: ``script`` (e.g. ``hpuno-train``) when run as that
    installed console script, a file's name (``train.py``) when run as another Python file, else
    ``python -m module`` (which puts the module's own file in ``sys.argv[0]``)."""
    started_as = sys.argv[0] if sys.argv and sys.argv[0] else ""
    invoked = os.path.basename(started_as)
    if script and invoked in (script, f"{script}.exe"):
        return script
    spec = importlib.util.find_spec(module)
    own_file = os.path.abspath(spec.origin) if spec is not None and spec.origin else None
    if invoked.endswith(".py") and os.path.abspath(started_as) != own_file:  # python train.py
        return invoked
    return f"python -m {module}"
