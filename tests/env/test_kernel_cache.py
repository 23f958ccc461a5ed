"""The compiled kernel never runs stale rules: its numba cache follows edits of cards.py.

numba freezes the tables the kernel reads (``CARD_POINTS`` ...) into the
machine code it caches; kernel.py keys that cache by a hash of its own source
and of every module it imports from (``kernel.RULES_SOURCE_FILES``). Here a
copy of the package, with its own ``NUMBA_CACHE_DIR``, scores a finished round
in a subprocess; then the wild cards' points are edited in the copy's cards.py
and the compiled kernel must score the new points.

This test is slow on purpose: it compiles part of the kernel from nothing three
times (the original, a same-size edit, a different-size edit), about 10 s each
on the project's 2-core machine. It calls ``kernel.finish_round`` directly,
which compiles only the scoring and what it calls, instead of the whole step
(about 25 s a compile).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numba

import hpuno_env
from hpuno_env import heuristic, kernel, rollout

# Scores a round that player_0 won while player_1 holds a Wild, a Sorting Hat
# and a red 7, with the compiled kernel; prints the points and numba's cache
# statistics for finish_round (hits: loaded from disk; misses: compiled).
SCORE_ROUND = """
import json, numpy as np, hpuno_env
from hpuno_env import heuristic, kernel, rollout
from hpuno_env.cards import CARD_INDEX
from hpuno_env.options import RulesOptions, kernel_params
state = kernel.allocate_state(1, 2)
for label in ("wild", "sorting_hat", "red:7"):
    state.hands[0, 1, CARD_INDEX[label]] += 1
state.hand_sizes[0, 1] = 3
state.phase[0] = kernel.OVER
state.turn_player[0] = 0
rewards, terminated = np.zeros((1, 2)), np.zeros(1, np.bool_)
kernel.finish_round(state, kernel_params(RulesOptions(), 2), 0, rewards, terminated)
stats = kernel.finish_round.stats
print(json.dumps({"package": hpuno_env.__file__, "points": int(state.scores[0, 0]),
                  "cache_hits": sum(stats.cache_hits.values()), "cache_misses": sum(stats.cache_misses.values())}))
"""


def score_round(copy: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(copy), NUMBA_CACHE_DIR=str(copy / "numba_cache"), NUMBA_DISABLE_JIT="0")
    done = subprocess.run([sys.executable, "-c", SCORE_ROUND], cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["announced"] = kernel.COMPILING_MESSAGE in done.stderr
    assert Path(result["package"]).parent == copy / "hpuno_env"  # the copy, not the installed package
    return result


def edit_wild_points(cards_py: Path, old: str, new: str, keep_mtime: bool) -> None:
    """Replace the wilds' points list in cards.py; keep_mtime also restores the file's mtime."""
    before = cards_py.stat()
    text = cards_py.read_text()
    assert text.count(old) == 1, f"cards.py no longer spells the wilds' points as {old}: update this test"
    cards_py.write_text(text.replace(old, new))
    if keep_mtime:
        os.utime(cards_py, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_compiled_kernel_follows_an_edited_card_table(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(Path(hpuno_env.__file__).parent, copy / "hpuno_env", ignore=shutil.ignore_patterns("__pycache__"))
    cards_py = copy / "hpuno_env" / "cards.py"

    first = score_round(copy)
    assert first["points"] == 50 + 50 + 7 and first["cache_misses"] == 1  # compiled from nothing
    assert first["announced"]  # a compile says so while it runs
    again = score_round(copy)
    assert again["points"] == 107 and (again["cache_hits"], again["cache_misses"]) == (1, 0)  # loaded from disk
    assert not again["announced"]

    # Same size, same mtime: numba 0.59's own stamp of a file (mtime, size) could not tell.
    size = cards_py.stat().st_size
    edit_wild_points(cards_py, "[50, 50, 50]", "[40, 40, 40]", keep_mtime=True)
    assert cards_py.stat().st_size == size
    same_size = score_round(copy)
    assert same_size["points"] == 40 + 40 + 7 and same_size["cache_misses"] == 1

    edit_wild_points(cards_py, "[40, 40, 40]", "[100, 100, 100]", keep_mtime=False)
    assert cards_py.stat().st_size != size
    other_size = score_round(copy)
    assert other_size["points"] == 100 + 100 + 7 and other_size["cache_misses"] == 1


def test_every_compiled_kernel_function_is_keyed_by_the_rules_sources():
    """A function compiled with plain numba.njit(cache=True) would miss edits of cards.py."""
    here = Path(kernel.__file__).parent
    assert {Path(path) for path in kernel.RULES_SOURCE_FILES.values()} >= {here / "kernel.py", here / "cards.py"}
    dispatchers = [value for value in vars(kernel).values() if isinstance(value, numba.core.dispatcher.Dispatcher)]
    assert len(dispatchers) > 20
    for dispatcher in dispatchers:
        assert isinstance(dispatcher._cache, kernel.RulesFunctionCache), dispatcher.py_func.__name__
        assert dispatcher._cache._impl.locator.get_source_stamp()[1] == kernel.RULES_SOURCE_HASH


def test_the_heuristic_and_the_rollouts_are_keyed_by_their_sources():
    """An edit of heuristic.py recompiles the heuristic and the rollouts that inline it; an edit of a rule both."""
    here = Path(kernel.__file__).parent
    for module, own in ((heuristic, "heuristic.py"), (rollout, "rollout.py")):
        assert {Path(path) for path in module.SOURCE_FILES.values()} >= {here / own, here / "heuristic.py", here / "kernel.py", here / "cards.py"}
        dispatchers = [value for value in vars(module).values() if isinstance(value, numba.core.dispatcher.Dispatcher)
                       and value.py_func.__module__ == module.__name__]
        assert len(dispatchers) >= 4
        for dispatcher in dispatchers:
            assert dispatcher._cache._impl.locator.get_source_stamp()[1] == module.SOURCE_HASH, dispatcher.py_func.__name__
