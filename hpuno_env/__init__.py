"""hpuno-env: Harry Potter UNO as a reinforcement-learning environment.

The rules live once, in the batched numba kernel (``kernel.py``), driven by
``VectorEngine`` (``engine.py``). Labels and codes are in ``cards.py``, rules
options in ``options.py``, observation encodings in ``encoding.py``.
"""

import gymnasium

from .aec_env import env, raw_env
from .cards import ACTION_LABELS, CARD_LABELS
from .encoding import observation_layout, observation_size
from .engine import VectorEngine
from .gym_env import HPUnoGymVectorEnv
from .options import RulesOptions
from .seat_batch import SeatBatch

__version__ = "0.2.0"  # the package's one version (pyproject.toml reads it); CHANGELOG.md says what each one changed


def __getattr__(name: str):
    # HPUnoVecEnv imports stable-baselines3 and with it torch (~1.5 s): only on first use.
    if name == "HPUnoVecEnv":
        from . import vector_env

        return vector_env.HPUnoVecEnv
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


def _register_with_gymnasium() -> None:
    """``gymnasium.make("hpuno/HPUno-v1")``: the single-agent ``gym_env.HPUnoEnv``; ``gymnasium.make_vec``: the
    batched ``HPUnoGymVectorEnv``. Entry points are strings, so nothing heavy is imported until an env is made.
    (``pettingzoo.make("aec", "hpuno/hpuno-v1")`` is registered by ``aec_env``.)"""
    if "hpuno/HPUno-v1" not in gymnasium.registry:
        gymnasium.register(
            id="hpuno/HPUno-v1",
            entry_point="hpuno_env.gym_env:HPUnoEnv",
            vector_entry_point="hpuno_env.gym_env:HPUnoGymVectorEnv",
        )


_register_with_gymnasium()
