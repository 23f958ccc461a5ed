"""The engine against the independent reference model, decision by decision.

Many games run side by side in one ``VectorEngine`` and in as many
``ReferenceGame`` objects (tests/env/reference_model.py, written from the rules
of docs/rules.md without the engine). After every decision we compare the whole game state
(hands, piles, top, colour, direction, phase, player to act, scores, UNO
calls, the pending draw, the colour each seat last chose, the colours each seat drew on, the hands shown to
each seat), the set of legal actions, the rewards and the episode flags.

Chance is adopted from the engine after the reference checks it is legal
(``EngineChance``): the first dealer, each round's shuffled deck, where a
starting Wild Draw Four went back into the pile, and every reshuffle.

The house rules (docs/rules.md, "House rules") are played the same way: every
option alone and the combinations of ``HOUSE_CONFIGS``, each at two or three
player counts, and each run must see its rule act (a stack, a jump, a swap, ...)
or it fails. CI plays a few thousand rounds of the base game and about 400 of
every house-rules configuration; ``pytest --long`` plays many times more
(the counts are printed with ``-s``).
"""

from __future__ import annotations

from collections import Counter, deque

import numpy as np
import pytest

from hpuno_env import ACTION_LABELS, CARD_LABELS, VectorEngine
from hpuno_env import kernel
from reference_model import COLORS, ReferenceGame


CARD_CODES = np.arange(len(CARD_LABELS))


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


def state_difference(engine_state: dict, reference_state: dict) -> str:
    """The keys on which two game_state dicts differ, with both values (for failure messages)."""
    keys = sorted(set(engine_state) | set(reference_state))
    return "; ".join(f"{key}: engine {engine_state.get(key)!r} reference {reference_state.get(key)!r}"
                     for key in keys if engine_state.get(key) != reference_state.get(key))


def choose_actions(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random legal actions, leaning towards playing (uniform play makes rounds of thousands of
    decisions): a draw or keep only 15% of the time when something else is legal."""
    preferred = mask.copy()
    preferred[:, [ACTION_LABELS.index("draw"), ACTION_LABELS.index("keep")]] = False
    lean = preferred.any(axis=1) & (rng.random(len(mask)) < 0.85)
    pool = np.where(lean[:, None], preferred, mask)
    scores = rng.random(pool.shape) * pool
    return scores.argmax(axis=1)


def play_side_by_side(num_players: int, num_games: int, decisions: int, seed: int, happened=None, **options) -> int:
    """Run num_games games for `decisions` steps in both models; return rounds finished.

    ``happened`` (a Counter), when given, collects what the reference models saw happen."""
    engine = VectorEngine(num_games=num_games, num_players=num_players, seed=seed, **options)
    engine.reset()
    chances = [EngineChance(engine, g) for g in range(num_games)]
    references = [ReferenceGame(num_players, chances[g], **options) for g in range(num_games)]
    for g, reference in enumerate(references):
        chances[g].load_events()
        reference.reset(deck=engine.round_deck(g), dealer=int(engine.state.dealer[g]))
    rng = np.random.default_rng(seed)
    finished = 0
    recent = [deque(maxlen=8) for _ in range(num_games)]  # each game's last decisions, for failure messages
    for step in range(decisions):
        mask = engine.legal_mask()
        for g, reference in enumerate(references):
            where = f"{num_players}p game {g} step {step} options {options} after {list(recent[g])}"
            engine_state, reference_state = engine.game_state(g), reference.state()
            assert engine_state == reference_state, f"{where}: {state_difference(engine_state, reference_state)}"
            engine_choices = [COLORS[c] if c >= 0 else None for c in engine.state.chose_color[g].tolist()]
            assert engine_choices == reference.chose_color, f"{where}: colours chosen"
            engine_lacks = [{COLORS[c] for c in np.flatnonzero(row)} for row in engine.state.lacks_color[g]]
            assert engine_lacks == reference.lacks, f"{where}: drew-on-a-colour marks {engine_lacks} != {reference.lacks}"
            seen = engine.state.revealed_seen[g]
            if reference.revealed or seen.any():  # the hands shown to each seat (challenges, Seven-O)
                engine_revealed = {(int(v), int(o)): [CARD_LABELS[c] for c in np.repeat(CARD_CODES, engine.state.revealed[g, v, o])]
                                   for v, o in np.argwhere(seen)}
                assert engine_revealed == reference.revealed, f"{where}: hands shown"
            engine_legal = {ACTION_LABELS[a] for a in np.flatnonzero(mask[g])}
            assert engine_legal == reference.legal_actions(), where
        actions = choose_actions(mask, rng)
        rewards, terminated, truncated = engine.step(actions)
        for g, reference in enumerate(references):
            recent[g].append(f"{reference.phase}/{reference.current}:{ACTION_LABELS[actions[g]]}")
            where = f"{num_players}p game {g} step {step} options {options} after {list(recent[g])}"
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
    if happened is not None:
        for reference in references:
            happened.update(reference.happened)
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


# Every house rule alone, and combinations; each at a few player counts (2 to 10 over the list),
# with what must have happened in the play for the run to count (reference_model's ``happened``).
HOUSE_CONFIGS = [
    ("classic deck", (2, 6), {"deck": "classic"}, ()),
    ("stacking draw2", (2, 5), {"stacking": "draw2"}, ("stack play", "went out stacking")),
    ("stacking draw4", (2, 4), {"stacking": "draw4"}, ("stack play", "challenge on a stack")),
    ("stacking both", (3, 4), {"stacking": "both"}, ("stack play", "challenge on a stack")),
    ("stacking mixed", (2, 7), {"stacking": "mixed"}, ("stack play", "challenge on a stack")),
    ("stacking both, no bluffing", (4,), {"stacking": "both", "wd4_bluffing": False}, ("stack play",)),
    ("jump-in", (2, 4, 8), {"jump_in": True}, ("jump window", "jump play")),
    ("seven-zero", (2, 3, 5), {"seven_zero": True}, ("7 swap", "0 rotation")),
    ("draw until playable", (2, 9), {"draw_until_playable": True}, ("drew on",)),
    ("forced play", (2, 4), {"forced_play": True}, ("forced play",)),
    ("all on", (2, 4, 10), {"stacking": "mixed", "jump_in": True, "seven_zero": True,
                            "draw_until_playable": True, "forced_play": True},
     ("stack play", "jump play", "7 swap", "0 rotation", "drew on")),
    ("all on, classic deck, catch always", (3, 6), {"deck": "classic", "stacking": "both", "jump_in": True,
                                                    "seven_zero": True, "draw_until_playable": True,
                                                    "forced_play": True, "uno_catch": "always"},
     ("stack play", "jump play", "7 swap", "0 rotation", "drew on")),
    ("stacking + jump-in", (2, 4), {"stacking": "both", "jump_in": True}, ("stack play", "jump play")),
    ("seven-zero + draw until playable", (2, 4), {"seven_zero": True, "draw_until_playable": True},
     ("7 swap", "0 rotation", "drew on")),
    ("classic deck + stacking", (2, 4), {"deck": "classic", "stacking": "mixed"}, ("stack play",)),
    ("stacking + seven-zero, match", (3,), {"stacking": "draw2", "seven_zero": True, "episode": "match",
                                            "target_score": 200, "reward": "points"}, ("stack play", "7 swap")),
]


@pytest.mark.parametrize(
    "num_players,options,must_happen",
    [pytest.param(n, options, must, id=f"{name}-{n}p") for name, counts, options, must in HOUSE_CONFIGS for n in counts],
)
def test_engine_agrees_with_reference_under_house_rules(num_players, options, must_happen, request):
    long = request.config.getoption("--long")
    games, decisions = (150, 2500) if long else (40, 600)
    happened = Counter()
    finished = play_side_by_side(num_players, games, decisions, seed=2000 + num_players, happened=happened, **options)
    print(f"\n{num_players} players {options}: {finished} episodes agreed; {dict(happened)}")
    assert finished > 0
    missing = [what for what in must_happen if not happened[what]]
    assert not missing, f"the play never reached {missing}: {dict(happened)}"
