"""hpuno-env: Harry Potter UNO as a reinforcement-learning environment.

The rules live once, in the batched numba kernel (``kernel.py``), driven by
``VectorEngine`` (``engine.py``). Labels and codes are in ``cards.py``, rules
options in ``options.py``, observation encodings in ``encoding.py``.

``import hpuno_env`` loads only the light parts (the labels, the rules options, the Gymnasium and PettingZoo
registrations); the engine (numba), the envs and torch load on first use of a name that needs them, so that a
command refusing its arguments answers before they load.
"""

import importlib
import importlib.util

import gymnasium

from .cards import ACTION_LABELS, CARD_LABELS
from .options import RulesOptions

__version__ = "0.2.0"  # the package's one version (pyproject.toml reads it); CHANGELOG.md says what each one changed

# Public names loaded on first use: name -> the module of this package that defines it. HPUnoVecEnv imports
# stable-baselines3 and with it torch (~1.5 s); the others the numba engine.
_LOADED_ON_USE = {
    "HPUnoGymVectorEnv": "gym_env", "HPUnoVecEnv": "vector_env", "SeatBatch": "seat_batch", "VectorEngine": "engine",
    "env": "aec_env", "raw_env": "aec_env", "observation_layout": "encoding", "observation_size": "encoding",
}


def __getattr__(name: str):
    if name in _LOADED_ON_USE:
        value = getattr(importlib.import_module(f".{_LOADED_ON_USE[name]}", __name__), name)
        globals()[name] = value  # found directly from now on
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        return importlib.import_module(f".{name}", __name__)  # a module of the package, e.g. hpuno_env.records
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
    (``pettingzoo.make("aec", "hpuno/hpuno-v1")``: ``_register_with_pettingzoo``.)"""
    if "hpuno/HPUno-v1" not in gymnasium.registry:
        gymnasium.register(
            id="hpuno/HPUno-v1",
            entry_point="hpuno_env.gym_env:HPUnoEnv",
            vector_entry_point="hpuno_env.gym_env:HPUnoGymVectorEnv",
        )


_register_with_gymnasium()


def _register_with_pettingzoo() -> None:
    """``pettingzoo.make("aec", "hpuno/hpuno-v1", num_players=4)`` where PettingZoo has a registry (1.27 on); the
    entry point is a string, so the AEC env loads when one is made."""
    import pettingzoo

    registry = getattr(pettingzoo, "aec_registry", None)
    if callable(getattr(pettingzoo, "register", None)) and registry is not None and "hpuno/hpuno-v1" not in registry:
        pettingzoo.register("aec", "hpuno/hpuno-v1", entry_point="hpuno_env.aec_env:env")


_register_with_pettingzoo()
