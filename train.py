"""Train a Harry Potter UNO player with MaskablePPO: ``python train.py --help``. The script is agents/training/train.py,
installed as ``hpuno-train`` (also ``python -m agents.training.train``); this file runs it from a checkout."""

import os
import sys

# OpenMP reads its wait policy once, when torch loads: two spinning update threads ran 6-8x slower (docs/benchmarks.md)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from agents.training.train import main  # loads no torch: the options are checked first


def __getattr__(name: str):  # Args, parse_args, ...: what a caller of train.py reaches for is the command's
    return getattr(sys.modules["agents.training.train"], name)


if __name__ == "__main__":
    sys.exit(main())
