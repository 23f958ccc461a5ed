"""Train a Harry Potter UNO player with MaskablePPO: ``python train.py --help``.

The training script itself is ``agents/training/train.py``, installed with the package as the ``hpuno-train`` command
(also ``python -m agents.training.train``); this file runs it from a checkout, as the README's commands do.
"""

import os
import sys

# OpenMP reads its wait policy once, when torch loads: with spinning threads (its default), two update threads
# (--threads 2) ran 6-8 times slower than one on a machine shared with other jobs (docs/benchmarks.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import agents.training.train as command  # after the wait policy; loads no torch: the options are checked first


def __getattr__(name: str):
    """Args, parse_args, main, ...: what a caller of train.py reaches for is the command's."""
    return getattr(command, name)


if __name__ == "__main__":
    sys.exit(command.main())
