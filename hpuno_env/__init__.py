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

__version__ = "0.1.0"

_VECTOR_ENVS = ("HPUnoGymVectorEnv", "HPUnoVecEnv", "SeatBatch")


def __getattr__(name: str):
    # The vector envs import stable-baselines3 and with it torch (~1.5 s): only on first use.
    if name in _VECTOR_ENVS:
        from . import vector_env

        return getattr(vector_env, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

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
