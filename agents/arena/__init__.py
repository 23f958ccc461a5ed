"""The arena: Harry Potter UNO in a web browser (``hpuno-arena``).

A person plays against any agents, watches agents play (with a trained
agent's probabilities for each legal action), replays a game record, and
reads a tournament's leaderboard. ``server`` is the ASGI app and its JSON
API, ``games`` the live games and replays behind it, ``cli`` the command,
``static/`` the page (plain HTML, CSS and JavaScript). This is a front room
of ``agents``: it imports players, evaluation and ``hpuno_env``, and nothing
below imports it.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the name __getattr__ gives, for type checkers and readers
    from .server import create_app

__all__ = ["create_app"]


def __getattr__(name: str):
    # The app (fastapi, torch, the engine) is imported on first use: ``hpuno-arena`` checks its arguments first.
    if name == "create_app":
        return importlib.import_module(".server", __name__).create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
