"""Evaluation: win rates over a fixed list of rounds, every one played to its end (``rounds``), and tournaments of
every pairing with ratings, tables and plots (``tournament``). Builds on ``agents.players``."""
