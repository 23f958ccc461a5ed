"""The arena's records folder: the games it saves, and the records it offers to replay, a page at a time.

Listing a folder of 100,000 records takes a while, so ``RecordFolder`` keeps
the listing in memory: read again at most every ``REFRESH_SECONDS``, in the
worker thread of the request that needs it (never on the event loop), and
kept up to date by the arena's own saves. The arena saves at most
``max_records`` records of its own in the folder (files named
``arena-DATE-TIME-ID.json``); past that a game still plays, and its view says
why it was not saved. It never deletes a file.
"""

from __future__ import annotations

import bisect
import os
import pathlib
import re
import tempfile
import threading
import time
from collections.abc import Callable

from .limits import MAX_RECORDS

RECORD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.json")
ARENA_RECORD = re.compile(r"arena-\d{8}-\d{6}-[A-Za-z0-9_-]+\.json")  # the names the arena saves under
REFRESH_SECONDS = 5.0  # how old the listing may be: records copied into the folder by hand show up after this
PAGE = 100  # records the catalogue lists; GET /api/records pages through the rest
MAX_PAGE = 1000


class RecordsFull(OSError):
    """The folder holds ``max_records`` of the arena's records: a game is not saved."""


class RecordFolder:
    """Saving records into a folder and listing them (newest name first), with a bound on the arena's own."""

    def __init__(self, folder, max_records: int = MAX_RECORDS, clock: Callable[[], float] = time.monotonic):
        self.folder = pathlib.Path(folder)
        self.max_records = max_records
        self.clock = clock
        self._names: list[str] = []  # ascending: pages are read from the end
        self._own = 0  # how many of them the arena saved (ARENA_RECORD)
        self._listed_at: float | None = None
        self._lock = threading.Lock()

    def check_writable(self) -> None:
        """ValueError, one line, unless the folder exists (made here if need be) and a file can be written in it."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.folder, prefix=".arena-write-check-"):
                pass
        except OSError as error:
            raise ValueError(f"the records folder {str(self.folder)!r} cannot be written: {error.strerror or error}") from None

    def _listing(self) -> list[str]:
        """The record names, read again when the listing is older than REFRESH_SECONDS (the caller holds the lock)."""
        now = self.clock()
        if self._listed_at is None or now - self._listed_at > REFRESH_SECONDS:
            try:
                with os.scandir(self.folder) as entries:
                    found = [entry.name for entry in entries if RECORD_NAME.fullmatch(entry.name) and entry.is_file()]
            except OSError:
                found = []
            self._names = sorted(found)
            self._own = sum(1 for name in found if ARENA_RECORD.fullmatch(name))
            self._listed_at = now
        return self._names

    def page(self, start: int = 0, count: int = PAGE) -> tuple[list[str], int]:
        """Up to ``count`` record names from the ``start``-th, newest name first, and how many there are."""
        with self._lock:
            names = self._listing()
            stop = max(len(names) - start, 0)
            return names[max(stop - count, 0): stop][::-1], len(names)

    def has(self, name) -> bool:
        return isinstance(name, str) and RECORD_NAME.fullmatch(name) is not None and (self.folder / name).is_file()

    def save(self, record: dict, game_id: str) -> str:
        """Write a game's record; returns its file name. RecordsFull when the folder holds max_records of the
        arena's records, OSError when it cannot be written."""
        with self._lock:
            self._listing()
            if self._own >= self.max_records:
                raise RecordsFull(f"the records folder holds {self.max_records:,} of the arena's records already "
                                  "(move some away, or start the arena with a larger --max-records)")
            from hpuno_env.records import save_record  # the engine: not imported by hpuno-arena's checks of its options

            name = time.strftime("arena-%Y%m%d-%H%M%S-") + game_id + ".json"
            save_record(record, self.folder / name)
            bisect.insort(self._names, name)
            self._own += 1
            return name
