"""Train a Harry Potter UNO player with MaskablePPO: ``python train.py --help``.

The training script itself is ``agents/train.py``, installed with the package as the ``hpuno-train`` command
(also ``python -m agents.train``); this file runs it from a checkout, as the README's commands do.
"""

import os
import sys

# OpenMP reads its wait policy once, when torch loads. Sleeping threads (PASSIVE) let a second update thread
# (--threads 2) pay on a machine whose cores other jobs share, where spinning ones wait on each other several
# times slower than one thread (docs/benchmarks.md); one thread is unaffected.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from agents.train import *  # noqa: F403  (Args, parse_args, main, ...: what a caller of train.py reaches for)
from agents.train import main

if __name__ == "__main__":
    sys.exit(main())
