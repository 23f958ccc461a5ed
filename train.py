"""Train a Harry Potter UNO player with MaskablePPO: ``python train.py --help``.

The training script itself is ``agents/train.py``, installed with the package as the ``hpuno-train`` command
(also ``python -m agents.train``); this file runs it from a checkout, as the README's commands do.
"""

import sys

from agents.train import *  # noqa: F403  (Args, parse_args, main, ...: what a caller of train.py reaches for)
from agents.train import main

if __name__ == "__main__":
    sys.exit(main())
