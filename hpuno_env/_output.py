"""Checks that a command-line tool can write where it was told to, before it does any work.

A tool that plays for minutes and then fails on an unwritable ``--out`` loses the work;
these checks run first, so such a path is a clean ``error:`` exit that changes nothing
(except creating the folder that was asked for).
"""

from __future__ import annotations

import os
import tempfile


def folder_problem(folder: str) -> str | None:
    """Why files cannot be written into ``folder`` (created if missing), or None."""
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
    """Why ``path`` cannot be written as a file (its folder is created if missing), or None."""
    if os.path.isdir(path):
        return f"{path} is a folder, not a file"
    return folder_problem(os.path.dirname(os.path.abspath(path)))
