"""The stable import path of ``agents.evaluation.rounds``: ``from agents.evaluate import win_rate``."""

from .evaluation.rounds import RoundResults, play_rounds, rotating_lineups, wilson_interval, win_rate

__all__ = ["RoundResults", "play_rounds", "rotating_lineups", "wilson_interval", "win_rate"]
