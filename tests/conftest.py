"""Shared pytest setup: the --long switch for the 100k-game reference comparison."""


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False, help="run the long (100k-game) reference comparison")
