"""The arena's refusal, ``ArenaError``: in a module of its own so that ``hpuno-arena`` can open the database
(``store``) to check it before it imports the engine."""


class ArenaError(ValueError):
    """A request the arena refuses; ``status`` is the HTTP status it answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status
