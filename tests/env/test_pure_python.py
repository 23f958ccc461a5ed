"""The kernel runs un-compiled (NUMBA_DISABLE_JIT=1) and then plays exactly the same games.

A subprocess plays a few hundred decisions in pure Python; this process plays
the same seed and actions compiled; every state array must agree.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from hpuno_env import VectorEngine

SCRIPT = """
import sys, numpy as np
from hpuno_env import VectorEngine
engine = VectorEngine(num_games=3, num_players=int(sys.argv[1]), seed=7, max_turns=120, episode="match", target_score=60)
engine.reset()
rng = np.random.default_rng(7)
for _ in range(int(sys.argv[2])):
    mask = engine.legal_mask()
    engine.observe()
    engine.step((rng.random(mask.shape) * mask).argmax(axis=1))
np.savez(sys.argv[3], observations=engine.observe(), **engine.state._asdict())
"""


def play(num_players: int, steps: int, out: str, pure_python: bool):
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if pure_python else "0")
    subprocess.run([sys.executable, "-c", SCRIPT, str(num_players), str(steps), out], check=True, env=env, timeout=600)
    return np.load(out)


def test_pure_python_kernel_plays_the_same_games(tmp_path):
    for num_players in (2, 5):
        pure = play(num_players, 400, str(tmp_path / f"pure{num_players}.npz"), pure_python=True)
        compiled = play(num_players, 400, str(tmp_path / f"jit{num_players}.npz"), pure_python=False)
        assert set(pure.files) == set(compiled.files)
        for name in pure.files:
            assert (pure[name] == compiled[name]).all(), name
        assert VectorEngine(num_games=3, num_players=num_players).state.hands.shape == pure["hands"].shape
