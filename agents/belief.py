"""The stable import path of the belief over the other seats' hidden hands (``agents.players.belief``):
``from agents.belief import load_belief``."""

from .players.belief import Belief, CertainBelief, LearnedBelief, load_belief

__all__ = ["Belief", "CertainBelief", "LearnedBelief", "load_belief"]
