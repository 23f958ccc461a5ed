"""``python -m agents.arena``: the same as ``hpuno-arena``."""

import sys

from .cli import main

sys.exit(main())
