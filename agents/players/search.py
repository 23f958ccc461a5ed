"""A search player: determinized Monte Carlo over a blueprint policy, leaving it only on strong evidence.

``agents.load("search", num_players=2)``: over the table's shipped agent (``default_blueprint``), its worlds
dealt from the table's shipped belief, 64 worlds, heuristic rollouts, the gate corrected for the number of
candidates; ``agents.load("search", num_players=2, blueprint="heuristic", belief="uniform", correct_gate=False,
worlds=64)`` names every choice. For each decision with more than one
legal action:

1. The blueprint (any name or file ``agents.load`` takes: ``"ppo_2p"``, ``"heuristic"``) names its action.
2. The position as the player sees it (its observation: the player needs
   nothing else, so it plays in every harness) becomes ``worlds`` games
   consistent with it: ``VectorEngine.load_view`` then ``determinize_into``,
   every card the player has not seen dealt again.
3. Every legal action is tried in the same worlds, with the same random
   streams (a paired comparison: the worlds' luck is common to all
   candidates), and each world is played to the end of the round by the
   ``rollout`` policy in every seat (compiled: ``"heuristic"``,
   ``"random-play"``, ``"random"``; or ``"blueprint"``, the blueprint itself
   stepping the worlds from Python, slower; or ``"blueprint+heuristic"``, the
   blueprint in the player's own seat and the heuristic in the others, from
   Python too: the player's own future play as strong as the blueprint, the
   opponents as the heuristic).
4. The player leaves the blueprint's action only for the candidate with the
   most wins, and only if it beats the blueprint's action in the same worlds by
   more than ``gate`` standard errors of the paired differences (and by at
   least one world; with ``correct_gate=True`` the gate grows with the number
   of candidates, ``corrected_gate``). Otherwise it plays the blueprint's
   action: with few worlds the search mostly agrees, instead of playing noise.

``last_search`` holds the last decision's numbers (candidates, wins, the
paired mean difference and its standard error) for inspection. In a jump
window (house rule ``jump_in``) it plays the blueprint's action: the view there
does not say whose turn follows, so no worlds can be dealt from it.
"""

from __future__ import annotations


from statistics import NormalDist

import numpy as np

from hpuno_env import VectorEngine, observation_layout
from hpuno_env._checks import SEED_LIMIT, check_bool, check_int, check_number
from hpuno_env.cards import NUM_CARD_TYPES
from hpuno_env.options import RulesOptions

from ._base import SeededAgent
from ._batch import check_batch
from .belief import load_belief
from .belief_features import table_facts
from .heuristic import HeuristicAgent

COMPILED_ROLLOUTS = ("heuristic", "random-play", "random")
# Every candidate of a decision is tried in each world: an engine of up to candidates x worlds games (about 3 kB each
# at 2 players, 14 kB at 10). 4,096 worlds is 16 times the most the benchmarks use.
MAX_WORLDS = 4096
BLUEPRINT_ROLLOUTS = ("blueprint", "blueprint+heuristic")  # stepped from Python, the blueprint acting


def play_candidates(engine: VectorEngine, candidates: np.ndarray, worlds: int) -> np.ndarray:
    """Play each candidate in a copy of the engine's first ``worlds`` slots (the worlds): candidate k in slots
    k * worlds to (k + 1) * worlds, with the same random streams (a paired comparison), every other slot idle.
    Returns the first ``len(candidates) * worlds`` slots' ``terminated`` (the candidate ended the round). The
    engine needs that many slots at least."""
    count = len(candidates)
    first = np.arange(worlds)
    for k in range(1, count):
        engine.copy_games_into(first + k * worlds, engine, first)
    engine.leave_idle(np.arange(count * worlds, engine.num_games))
    actions = np.full(engine.num_games, -1, np.int64)
    actions[:count * worlds] = np.repeat(candidates, worlds)
    _, terminated, _ = engine.step(actions, partial=True)
    return terminated[:count * worlds]


def candidate_wins(engine: VectorEngine, candidates: np.ndarray, worlds: int, play_out) -> np.ndarray:
    """(candidates, worlds) 1.0 where the seat to act in the engine's first ``worlds`` slots (the worlds) won the
    round after playing that candidate (``play_candidates``); ``play_out(engine, games)`` gives the winning seat of
    each of the first ``games`` slots played to the end (-1: none)."""
    seat = int(engine.state.current_player[0])
    terminated = play_candidates(engine, candidates, worlds)
    winners = play_out(engine, len(candidates) * worlds)
    # A round the candidate itself ended was won by its player.
    return ((winners == seat) | terminated).reshape(len(candidates), worlds).astype(np.float64)


def corrected_gate(gate: float, candidates: int) -> float:
    """The standard errors the best of ``candidates`` must win by so that it leaves the blueprint by chance no more
    often than one comparison at ``gate`` would (Šidák: the one-sided tail beyond ``gate`` shared among the
    ``candidates - 1`` comparisons with the blueprint's action). ``gate`` itself for one or two candidates."""
    tail = 1.0 - NormalDist().cdf(gate)
    if candidates <= 2 or tail <= 0.0:
        return gate
    return NormalDist().inv_cdf((1.0 - tail) ** (1.0 / (candidates - 1)))


def gated_choice(won: np.ndarray, base: int, gate: float) -> tuple[int, np.ndarray, np.ndarray]:
    """The search's rule over ``candidate_wins``: the candidate with the most wins, kept only if it beats candidate
    ``base`` (the blueprint's) in more worlds and its mean paired difference exceeds ``gate`` standard errors; else
    ``base``. Returns (the chosen index, each candidate's mean paired difference, its standard error)."""
    differences = won - won[base]
    mean = differences.mean(axis=1)
    error = differences.std(axis=1, ddof=1) / np.sqrt(won.shape[1])
    best = int(np.argmax(won.sum(axis=1)))
    strong = mean[best] > gate * error[best] and won[best].sum() > won[base].sum()
    return (best if best != base and strong else base), mean, error


def world_weights(belief, observation: np.ndarray) -> np.ndarray:
    """(players, 55) weights for ``VectorEngine.determinize_into`` from a belief's view of one observation, in the
    seats of a view loaded with ``load_view`` (the viewer is seat 0, the seat j + 1 places after it is seat j + 1):
    each other seat's expected copies of each kind not known held, over what a uniform deal would give it (ones for
    a belief that knows no more than the certain facts)."""
    rows = np.asarray(observation)[None]
    expected = belief.expected_hands(rows)[0]
    facts = table_facts(rows, belief.num_players, belief.rules.deck)
    free = (facts.unseen - facts.known.sum(axis=1))[0].astype(np.float64)
    open_places = (facts.sizes - facts.known.sum(axis=2))[0].astype(np.float64)
    uniform = open_places[:, None] * free[None, :] / max(free.sum(), 1.0)
    weights = np.ones((belief.num_players, NUM_CARD_TYPES))
    weights[1:] = np.where(uniform > 0, (expected - facts.known[0]) / np.maximum(uniform, 1e-12), 1.0)
    return np.maximum(weights, 0.0)


def default_blueprint(num_players: int, rules: dict | None = None) -> str:
    """The blueprint ``agents.load("search")`` improves when none is named: the shipped agent made for this table
    and these rules (``ppo_2p``, ``ppo_4p``, a house-rules specialist), else ``ppo_universal``, made for every
    table and rules."""
    from .trained import shipped_for  # torch: only when a search player over a trained blueprint is made

    made_for_it = shipped_for(num_players, rules)
    return made_for_it[0] if made_for_it else "ppo_universal"


class SearchAgent(SeededAgent):
    """Determinized Monte Carlo search over a blueprint (module docstring).

    Args:
        num_players: seats of the games it plays.
        seed: its random stream (worlds and the blueprint's tie-breaks).
        blueprint: the policy it improves, an object with ``act`` (default: the heuristic); ``agents.load("search",
            blueprint=NAME)`` loads one by name or file.
        worlds: worlds per decision (every candidate is tried in each).
        rollout: the policy playing the worlds out, one of ``COMPILED_ROLLOUTS`` or ``BLUEPRINT_ROLLOUTS``.
        gate: standard errors of the paired differences a candidate must win by.
        correct_gate: raise the gate with the number of candidates (``corrected_gate``): the best of many
            candidates clears a fixed gate by chance more often than the best of two. (``agents.load("search")``
            corrects it unless told.)
        evidence: deal the worlds so that a seat that drew by choice on a colour holds none of it (as far as the
            unseen cards allow): right of opponents that play whenever they can, as the heuristic does.
        belief: deal the worlds from a belief over the other hands (``agents.belief.load_belief``): ``"shipped"``
            the table's shipped belief, ``"certain"`` or a belief file's path; each seat's cards are drawn with the
            belief's odds of each kind in that hand against the draw pile. None (the default here) or
            ``"uniform"``: uniform worlds. (``agents.load("search")`` deals from ``"shipped"`` unless told.)
        rules: the rules options of the games it plays (``VectorEngine``'s), default the standard rules.
    """

    draws_per_row = False  # one draw per searched position (and its blueprint's): reseeded row by row instead

    def __init__(self, num_players: int = 4, seed: int | None = None, blueprint=None, worlds: int = 64,
                 rollout: str = "heuristic", gate: float = 2.0, rules: dict | None = None, evidence: bool = False,
                 belief: str | None = None, correct_gate: bool = False):
        self.blueprint = None  # set below, already seeded; SeededAgent.__init__ calls seed() before that
        super().__init__(num_players, seed)
        if blueprint is None:
            blueprint = HeuristicAgent(num_players, seed=seed)
        if not callable(getattr(blueprint, "act", None)):
            raise TypeError(f"blueprint must be a policy with act(observations, action_masks), got {type(blueprint).__name__}; "
                            "agents.load('search', blueprint=NAME) loads one by name or file")

        worlds = check_int(worlds, "worlds", low=2, high=MAX_WORLDS)
        if rollout not in (*COMPILED_ROLLOUTS, *BLUEPRINT_ROLLOUTS):
            raise ValueError(f"rollout must be one of {(*COMPILED_ROLLOUTS, *BLUEPRINT_ROLLOUTS)}, got {rollout!r}")
        gate = check_number(gate, "gate", low=0)
        # Its worlds are played to the end of the round whatever the episode (a match is won round by round).
        self.rules = RulesOptions.from_kwargs(**{**(rules or {}), "episode": "round"}).as_dict()
        self.blueprint = blueprint
        self.worlds = int(worlds)
        self.rollout = rollout
        # The other seats' policy in the worlds: the blueprint too, or the heuristic (its own tie-break stream).
        self._others = HeuristicAgent(num_players, seed=seed) if rollout == "blueprint+heuristic" else blueprint
        self.gate = float(gate)
        self.correct_gate = check_bool(correct_gate, "correct_gate")
        self.evidence = check_bool(evidence, "evidence")
        if belief is not None and not isinstance(belief, str):
            raise ValueError(f"belief must be None, 'uniform', 'shipped', 'certain' or a belief file's path, got {type(belief).__name__}")
        self.belief_option = None if belief == "uniform" else belief  # as given: a worker process makes its twin from it
        if self.belief_option is not None and self.evidence:
            raise ValueError("give belief or evidence=True, not both (a belief's worlds say all a deal uses)")
        self.belief = None if self.belief_option is None else load_belief(
            num_players, self.rules, None if belief == "shipped" else belief)
        self._view = VectorEngine(1, num_players, auto_reset=False, **self.rules)
        self._jump_flag = observation_layout(num_players)["house_phase"].start + 1
        self._engines: dict[int, VectorEngine] = {}
        self.last_search: dict | None = None
        self.decisions = 0
        self.changed = 0  # decisions where it left the blueprint's action

    def seed(self, seed: int | None) -> None:
        super().seed(seed)
        for policy in {id(policy): policy for policy in (self.blueprint, getattr(self, "_others", None))}.values():
            if callable(getattr(policy, "seed", None)):
                policy.seed(seed)

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        observations = np.asarray(observations)
        chosen = np.asarray(self.blueprint.act(observations, masks)).copy()
        for row in np.flatnonzero(masks.sum(axis=1) > 1):
            chosen[row] = self.search(observations[row], masks[row], int(chosen[row]))
        return chosen

    def search(self, observation: np.ndarray, mask: np.ndarray, default: int) -> int:
        """The action for one position: ``default`` (the blueprint's) unless a candidate beats it clearly."""
        candidates = np.flatnonzero(mask)
        count, worlds = len(candidates), self.worlds
        if observation[self._jump_flag]:  # a jump window's view does not say whose turn follows: no worlds
            return default
        engine = self._engine(count * worlds)
        self._view.load_view(0, observation.astype(np.int8))
        first = np.arange(worlds)
        weights = None if self.belief is None else world_weights(self.belief, observation)
        engine.determinize_into(first, self._view, 0, viewer=0, seed=int(self.rng.integers(SEED_LIMIT)), evidence=self.evidence,
                                weights=weights)
        won = self._candidate_values(engine, candidates, worlds)
        base = int(np.flatnonzero(candidates == default)[0])
        gate = corrected_gate(self.gate, count) if self.correct_gate else self.gate
        chosen, mean, error = gated_choice(won, base, gate)
        action = int(candidates[chosen])
        self.decisions += 1
        self.changed += action != default
        self.last_search = {
            "candidates": candidates.tolist(), "wins": won.sum(axis=1).astype(int).tolist(), "worlds": worlds,
            "blueprint": default, "mean_difference": mean.tolist(), "standard_error": error.tolist(), "action": action,
        }
        return action

    def _candidate_values(self, engine: VectorEngine, candidates: np.ndarray, worlds: int) -> np.ndarray:
        """(candidates, worlds): what each candidate is worth in each world of the engine's first ``worlds`` slots
        to the seat to act, which the gate compares: here 1.0 where the round played out was won
        (``candidate_wins``)."""
        return candidate_wins(engine, candidates, worlds, self._play_out)

    def _engine(self, games: int) -> VectorEngine:
        """An engine of at least ``games`` slots, reused: sizes go up in whole multiples of the worlds."""
        size = self.worlds * int(np.ceil(games / self.worlds))
        if size not in self._engines:
            self._engines[size] = VectorEngine(size, self.num_players, auto_reset=False, **self.rules)
            self._engines[size].leave_idle(np.arange(size))
        return self._engines[size]

    def _play_out(self, engine: VectorEngine, games: int) -> np.ndarray:
        """The winning seat of each of the first ``games`` worlds played to the end of the round (-1: none)."""
        if self.rollout in COMPILED_ROLLOUTS:
            winners, _ = engine.rollout(self.rollout, games=np.arange(games))
            return winners
        winners = np.full(games, -1, np.int64)
        actions = np.full(engine.num_games, -1, np.int64)
        observations, masks = engine.observe(), engine.legal_mask()
        while True:
            playing = np.flatnonzero(masks[:games].any(axis=1))
            if not playing.size:
                return winners
            actions[:] = -1
            own = engine.current_player[playing] == 0  # the searching player is seat 0 of every world
            split = ((playing, self.blueprint),) if self._others is self.blueprint else \
                ((playing[own], self.blueprint), (playing[~own], self._others))
            for rows, policy in split:
                if rows.size:
                    actions[rows] = policy.act(observations[rows], masks[rows])
            observations, masks, _, terminated, _ = engine.step_observe(actions, partial=True)
            ended = np.flatnonzero(terminated[:games])
            winners[ended] = np.asarray(engine.state.turn_player)[ended]

    def __repr__(self) -> str:
        return (f"SearchAgent(num_players={self.num_players}, blueprint={self.blueprint!r}, worlds={self.worlds}, "
                f"rollout={self.rollout!r}, gate={self.gate}, correct_gate={self.correct_gate}, evidence={self.evidence}, "
                f"belief={None if self.belief is None else self.belief.describe().get('source', self.belief.name)!r})")

