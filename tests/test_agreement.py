"""The engine against the independent reference model, decision by decision.

Many games run side by side in one ``VectorEngine`` and in as many
``ReferenceGame`` objects (tests/reference_model.py, written from the rules
of docs/rules.md without the engine). After every decision we compare the whole game state
(hands, piles, top, colour, direction, phase, player to act, scores, UNO
calls, the colour each seat last chose), the set of legal actions, the rewards and the episode flags.

Chance is adopted from the engine after the reference checks it is legal
(``EngineChance``): the first dealer, each round's shuffled deck, where a
starting Wild Draw Four went back into the pile, and every reshuffle.

CI plays a few thousand games; ``pytest --long`` plays 100,000.
"""

from __future__ import annotations

import numpy as np
import pytest

from hpuno_env import ACTION_LABELS, VectorEngine
from hpuno_env import kernel
from reference_model import COLORS, ReferenceGame


class EngineChance:
    """Answers the reference model's chance questions with what the engine did."""

    def __init__(self, engine: VectorEngine, game: int):
        self.engine, self.game = engine, game
        self.wd4_returns: list[int] = []

    def load_events(self):
        self.wd4_returns = [e[1] for e in self.engine.events(self.game) if e[0] == kernel.EV_WD4_RETURN]

    def first_dealer(self, num_players):
        return int(self.engine.state.dealer[self.game])

    def deck(self):
        return self.engine.round_deck(self.game)

    def return_wd4(self, pile):
        return self.wd4_returns.pop(0)

    def reshuffle(self, cards):
        pile = self.engine.last_reshuffle(self.game)
        assert pile is not None, "the reference reshuffled where the engine did not"
        return pile


def choose_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions, leaning towards playing (uniform play makes rounds of thousands of
    decisions): a draw or keep only 15% of the time when something else is legal."""
    preferred = mask.copy()
    preferred[:, [ACTION_LABELS.index("draw"), ACTION_LABELS.index("keep")]] = False
    lean = preferred.any(axis=1) & (rng.random(len(mask)) < 0.85)
    pool = np.where(lean[:, None], preferred, mask)
    scores = rng.random(pool.shape) * pool
    return scores.argmax(axis=1)


def play_side_by_side(num_players: int, num_games: int, decisions: int, seed: int, **options) -> int:
    """Run num_games games for `decisions` steps in both models; return rounds finished."""
    engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, **options)
    engine.reset()
    chances = [EngineChance(engine, g) for g in range(num_games)]
    references = [ReferenceGame(num_players, chances[g], **options) for g in range(num_games)]
    for g, reference in enumerate(references):
        chances[g].load_events()
        reference.reset(deck=engine.round_deck(g), dealer=int(engine.state.dealer[g]))
    rng = np.random.default_rng(seed)
    finished = 0
    for step in range(decisions):
        mask = engine.legal_mask()
        for g, reference in enumerate(references):
            where = f"{num_players}p game {g} step {step} options {options}"
            assert engine.game_state(g) == reference.state(), where
            engine_choices = [COLORS[c] if c >= 0 else None for c in engine.state.chose_color[g].tolist()]
            assert engine_choices == reference.chose_color, f"{where}: colours chosen"
            engine_legal = {ACTION_LABELS[a] for a in np.flatnonzero(mask[g])}
            assert engine_legal == reference.legal_actions(), where
        actions = choose_actions(mask, rng)
        rewards, terminated, truncated = engine.step(actions)
        for g, reference in enumerate(references):
            where = f"{num_players}p game {g} step {step} action {ACTION_LABELS[actions[g]]} options {options}"
            chances[g].load_events()
            ref_rewards, ref_terminated, ref_truncated = reference.step(ACTION_LABELS[actions[g]])
            assert (bool(terminated[g]), bool(truncated[g])) == (ref_terminated, ref_truncated), where
            # plain floats: np.testing.assert_allclose per game and step was 40% of this test's time
            engine_rewards = rewards[g].tolist()
            assert len(engine_rewards) == len(ref_rewards) and all(abs(a - b) <= 1e-6 for a, b in zip(engine_rewards, ref_rewards)), \
                f"{where}: rewards {engine_rewards} != {list(ref_rewards)}"
            if terminated[g] or truncated[g]:
                finished += 1
                # The engine already holds a fresh match (auto-reset): adopt its dealer and deck.
                reference.reset(deck=engine.round_deck(g), dealer=int(engine.state.dealer[g]))
    return finished


CONFIGS = [
    (2, {}),
    (3, {}),
    (4, {}),
    (7, {}),
    (10, {}),
    (2, {"two_player_reverse_skips": False, "voluntary_draw": False}),
    (3, {"wd4_bluffing": False, "uno_catch": "always", "uno_penalty": 4}),
    (4, {"uno_catch": "off", "gryffindor_color": "blue", "reward": "points"}),
    (4, {"episode": "match", "target_score": 150}),
    (3, {"episode": "match", "scoring": "lowest", "target_score": 120, "reward": "points"}),
    (5, {"max_turns": 60}),
    (2, {"episode": "match", "target_score": 100, "max_turns": 400}),
]


@pytest.mark.parametrize("num_players,options", CONFIGS)
def test_engine_agrees_with_reference(num_players, options, request):
    long = request.config.getoption("--long")
    games, decisions = (500, 3000) if long else (64, 1000)
    finished = play_side_by_side(num_players, games, decisions, seed=1000 + num_players, **options)
    print(f"\n{num_players} players {options}: {finished} episodes agreed")
    assert finished > 0  # the comparison crossed round ends, not only openings
