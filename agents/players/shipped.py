"""The shipped trained agents: name -> agent file, one per ``.safetensors`` file in ``agents/weights/``.

Apart from ``trained`` (which reads the files, with torch), so that a command can name and check agents without
loading torch.
"""

from __future__ import annotations

import os

FILE_SUFFIX = ".safetensors"
WEIGHTS_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "weights")
SHIPPED = {
    name[: -len(FILE_SUFFIX)]: os.path.join(WEIGHTS_DIR, name)
    for name in (sorted(os.listdir(WEIGHTS_DIR)) if os.path.isdir(WEIGHTS_DIR) else [])
    if name.endswith(FILE_SUFFIX)
}
