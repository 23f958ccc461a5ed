"""hpuno-env: Harry Potter UNO as a reinforcement-learning environment.

The rules live once, in the batched numba kernel (``kernel.py``), driven by
``VectorEngine`` (``engine.py``). Labels and codes are in ``cards.py``, rules
options in ``options.py``, observation encodings in ``encoding.py``.
"""

from .aec_env import env, raw_env
from .cards import ACTION_LABELS, CARD_LABELS
from .encoding import observation_layout, observation_size
from .engine import VectorEngine
from .options import RulesOptions
from .vector_env import HPUnoGymVectorEnv, HPUnoVecEnv, SeatBatch

__version__ = "0.1.0"

__all__ = [
    "ACTION_LABELS",
    "CARD_LABELS",
    "HPUnoGymVectorEnv",
    "HPUnoVecEnv",
    "RulesOptions",
    "SeatBatch",
    "VectorEngine",
    "env",
    "raw_env",
    "observation_layout",
    "observation_size",
]
