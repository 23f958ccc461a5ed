"""Checks that a command-line tool can write where it was told to, before it does any work; the lock that keeps
a second run out of a folder in use (``FolderLock``); and the name a tool calls itself by in its usage and errors
(``program_name``).

A tool that plays for minutes and then fails on an unwritable ``--out`` loses the work;
these checks run first, so such a path is a clean ``error:`` exit that changes nothing
(except creating the folder that was asked for). ``write_atomically`` then writes a
file so that a crash never leaves half of it.
"""

from __future__ import annotations

import errno
import importlib.util
import os
import sys
import secrets
import tempfile

try:
    import fcntl
except ImportError:  # not on Windows: runs there are not guarded against a second run on their folder
    fcntl = None


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


class FolderLock:
    """``OUT/<file_name>`` (e.g. ``train.lock``), locked with ``fcntl.flock`` for a run's life and holding its process id.

    The OS releases a flock when its process ends, however it ends (a crash, SIGKILL), so a dead run never keeps
    the folder: its lock file may stay behind, but nothing holds it and the next run takes it over. ``release``
    removes the file; a run that locked a file just removed that way (opened before the removal) tries again on
    the new one, so two runs can never both hold the folder."""

    def __init__(self, out: str, file_name: str):
        self.path = os.path.join(out, file_name)
        self.descriptor: int | None = None

    def acquire(self) -> str | None:
        """Take the lock; returns why not (another run holds it), or None (taken, or no locks on this system)."""
        if fcntl is None:
            return None
        while True:
            try:
                descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o666)
            except OSError as error:
                return f"cannot create the lock file {self.path}: {error.strerror or error}"
            held = _try_lock(descriptor)
            if held is not True:
                problem = None if held is None else busy_message(os.path.dirname(self.path), descriptor)
                os.close(descriptor)
                return problem
            if _same_file(descriptor, self.path):
                break
            os.close(descriptor)  # the file was removed by the run that held it: lock the one at the path now
        os.ftruncate(descriptor, 0)
        os.write(descriptor, f"{os.getpid()}\n".encode())
        self.descriptor = descriptor
        return None

    def release(self) -> None:
        if self.descriptor is None:
            return
        try:
            os.remove(self.path)  # while still held, so that nobody takes over a file that is going away
        except OSError:
            pass
        os.close(self.descriptor)  # closing releases the flock
        self.descriptor = None


def lock_problem(out: str, file_name: str) -> str | None:
    """Why a run cannot start in ``out`` now (a running one holds its lock ``file_name``), or None; creates and
    changes nothing."""
    if fcntl is None:
        return None
    try:  # O_NONBLOCK: a FIFO planted under the lock's name does not wait for a writer
        descriptor = os.open(os.path.join(out, file_name), os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None  # no lock file: no run holds the folder
    try:
        return busy_message(out, descriptor) if _try_lock(descriptor) is False else None
    finally:
        os.close(descriptor)  # and with it the lock just taken, if it was free


def _try_lock(descriptor: int) -> bool | None:
    """True: now locked by us; False: another process holds it; None: this file system has no locks."""
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        return False if error.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES) else None
    return True


def _same_file(descriptor: int, path: str) -> bool:
    try:
        here, there = os.fstat(descriptor), os.stat(path)
    except OSError:
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def busy_message(out: str, descriptor: int) -> str:
    """The refusal of a second run: the folder, and the process id the holder wrote into the lock file."""
    try:
        pid = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        pid = ""
    holder = f"process {pid}" if pid.isdigit() else "another process"
    return (f"--out {out} is in use: another run ({holder}) is writing there now\n"
            f"wait for it to end, or choose another --out (a run that died lets go of the folder by itself)")


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
