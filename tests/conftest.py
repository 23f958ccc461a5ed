"""Shared pytest setup: the --long switch for the 100k-game reference comparison, one torch thread."""

import torch

# Tests train small networks on 2-core machines: torch's default of one thread per core
# oversubscribes them (seen: a 30k-step MaskablePPO run 28 s with one thread, 355 s with two under load).
torch.set_num_threads(1)


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False, help="run the long (100k-game) reference comparison")
