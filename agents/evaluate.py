"""The stable import path of evaluation (``agents.evaluation.rounds`` and ``.duplicate``):
``from agents.evaluate import win_rate, duplicate_win_rate``."""

from .evaluation.duplicate import duplicate_win_rate
from .evaluation.rounds import RoundResults, play_rounds, rotating_lineups, wilson_interval, win_rate

__all__ = ["RoundResults", "duplicate_win_rate", "play_rounds", "rotating_lineups", "wilson_interval", "win_rate"]
