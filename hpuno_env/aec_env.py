"""Harry Potter UNO

| | |
|---|---|
| Import | ``import hpuno_env; env = hpuno_env.env(num_players=4)`` |
| Actions | Discrete(75) |
| Parallel API | No |
| Manual control | No |
| Agents | ``player_0`` .. ``player_{n-1}``, 2 <= n <= 10 |
| Action shape | () (one int: ``Discrete(75)``) |
| Action values | 0 .. 74 (``hpuno_env.ACTION_LABELS``) |
| Observation shape | ``{"observation": (obs_size,) int8, "action_mask": (75,) int8}`` |
| Observation values | 0 .. 127 |
| State shape | (state_size,) int8 |

UNO with the 112-card Harry Potter deck: four Sorting Hat wilds send a chosen
player drawing until a Gryffindor (red) card. Every rule of the real game is
played: Wild Draw Four bluffs and challenges, UNO calls and catch windows,
2-10 players, 500-point matches. The rules live in the batched numba engine
(``hpuno_env.VectorEngine``); this environment drives it with one game.

### Observation

``observe(agent)`` returns a dict: ``"observation"``, the int8 vector of what
that seat knows (its hand, the top card and colour, the phase, the card it just
drew, pile sizes, the discards, every seat's hand size, UNO call, the colours
it showed it lacks, the colour it last chose and its score, challenge facts and
hands revealed to it, the pending draw, the house rules' phases and the rules in
play); the
name -> slice map is ``hpuno_env.observation_layout(num_players)`` and the
docs/environment.md has the table. ``"action_mask"`` is 1 for the legal actions of the
agent to act (all zeros for the others); it is also in ``infos[agent]``.

### Actions

75 discrete actions, fixed for every player count (``ACTION_LABELS``):
``play:<card>`` (0-54, the card-type code), ``draw``, ``keep``, ``uno``,
``challenge``, ``accept``, ``catch``, ``pass``, ``target:1``-``target:9``
(seats to the left) and ``color:<colour>``. Every choice is a step of its
own: a wild's player names the colour in a later step, a catch window asks
the other seats one by one.

### Rewards

Default (``episode="round"``, ``reward="win"``): +1 to the round's winner,
-1 to every other seat, when the round ends, whoever moved last. A truncated
round (``max_turns``) gives 0. ``reward="points"``: the winner gets the
round's points / 100, the others minus their own hand's points / 100.
``episode="match"``: rounds until the match ends (``target_score``), rewards
at the match's end (``"win"``) or at each round's end (``"points"``).

### Options

``hpuno_env.env(num_players=4, render_mode=None, **rule_options)`` with the
rule options of ``hpuno_env.RulesOptions`` (``uno_penalty``, ``uno_catch``,
``wd4_bluffing``, ``two_player_reverse_skips``, ``voluntary_draw``,
``gryffindor_color``, ``target_score``, ``scoring``, ``max_turns``,
``episode``, ``reward``); an unknown name or bad value raises ``ValueError``.
``reset(seed=None, options={"deck": [112 labels, top first], "dealer": k})``
stacks a scenario (108 labels with the classic deck); other option keys are ignored.

House rules (docs/rules.md §15), every one off by default, combining freely:

| option | values | what it does |
|---|---|---|
| ``deck`` | ``"harry_potter"``, ``"classic"`` | the classic deck: 108 cards, no Sorting Hat |
| ``stacking`` | ``"none"``, ``"draw2"``, ``"draw4"``, ``"both"``, ``"mixed"`` | a Draw Two on a Draw Two, a Wild Draw Four on a Wild Draw Four, both, or both and a Wild Draw Four on a Draw Two: the next player faces the whole pending draw (phase ``"stack"``, or ``"challenge"`` facing a Wild Draw Four) |
| ``jump_in`` | bool | a player holding a card identical to the one just played plays it out of turn (phase ``"jump"``: ``play:`` it or ``pass``) |
| ``seven_zero`` | bool | a 7 swaps hands with a chosen player (``target:``), a 0 passes every hand on; what is known about a hand moves with it |
| ``draw_until_playable`` | bool | ``draw`` draws until a playable card or nothing is left |
| ``forced_play`` | bool | a playable drawn card must be played (no ``keep``) |

``game_state()["pending_draw"]`` is the number of cards the next player must
draw for Draw Two and Wild Draw Four cards played and not yet drawn. Render modes: ``"ansi"``
(text, coloured where the terminal supports it), ``"human"`` (prints it),
``"rgb_array"`` (a picture of the table), ``"text"`` (the acting seat's view for a language model,
``hpuno_env.text_view.seat_text``: the rules in brief, the table as that seat sees it, its recent
events and its legal actions numbered).

``env()`` is wrapped like PettingZoo's classic games: an illegal action ends
the game with reward -1 for the offender, an action outside ``Discrete(75)``
fails an assertion, calls out of order fail as PettingZoo's
``OrderEnforcingWrapper`` makes them. One fused wrapper
(``hpuno_env.wrappers.FusedClassicWrapper``) does what PettingZoo's three
stock wrappers do, at about four times their rate, so ``env()`` costs little
more than ``raw_env``. ``raw_env.step`` raises ``ValueError`` on an illegal action
and ``TypeError`` on an action that is not an integer (``None`` for an agent
still playing, a float, a bool, a string), and changes nothing. ``step()``
and ``last()`` once every agent has finished (or before ``reset``) raise
``ValueError`` saying to call ``reset()``.

### Version history

* v1, observation layout version 3: appends ``pending_draw``, ``house_phase``
  (phases ``"stack"`` and ``"jump"``) and ``house_rules`` (the rules in play).
  Every earlier field keeps its place, and ``agents.load`` feeds an agent of
  layout version 1 or 2 the prefix its version had, so it plays as before.
* v1: observation layout version 2 appends ``other_chose_color``, the colour
  each other seat last moved play into this round (named with a wild, or
  switched to by matching a number or symbol). A v0 checkpoint continues with
  ``train.py --resume`` (zero weights on the new field); a v0 agent file is
  refused by ``agents.load``.
* v0: first release.
"""

from __future__ import annotations

import os
import sys
from collections import deque

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv

from .actions import ILLEGAL_REWARD, action_index
from .cards import ACTION_LABELS, NUM_ACTIONS
from .engine import VectorEngine
from .render import HISTORY_EVENTS, history_lines, render_ansi, render_rgb
from .text_view import seat_history, seat_text
from .wrappers import FusedClassicWrapper



def env(num_players: int = 4, render_mode: str | None = None, **rule_options) -> AECEnv:
    """The Harry Potter UNO PettingZoo AEC environment, wrapped as PettingZoo's classic games are.

    An illegal move ends the game with -1 for its player, an action outside the space fails an
    assertion, calls out of order fail as ``OrderEnforcingWrapper`` makes them. One fused wrapper
    (``wrappers.FusedClassicWrapper``) does what PettingZoo's three stock wrappers do, at a fraction
    of their cost. ``raw_env`` is the same environment unwrapped.

    Args:
        num_players: seats, 2..10 (agents ``player_0`` .. ``player_{n-1}``).
        render_mode: None, ``"human"``, ``"ansi"``, ``"rgb_array"`` or ``"text"``.
        **rule_options: the rules options (``hpuno_env.RulesOptions``), e.g. ``uno_penalty=4``.

    The environment's documentation (observations, actions, rewards, rules options, rendering):
    ``help(hpuno_env.aec_env)``, and the environment page of the project's documentation,
    docs/environment.md.
    """
    return FusedClassicWrapper(raw_env(num_players=num_players, render_mode=render_mode, **rule_options), illegal_reward=ILLEGAL_REWARD)


class raw_env(AECEnv, EzPickle):
    metadata = {
        "render_modes": ["human", "ansi", "rgb_array", "text"],
        "name": "hpuno_v1",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, num_players: int = 4, render_mode: str | None = None, **rule_options):
        EzPickle.__init__(self, num_players=num_players, render_mode=render_mode, **rule_options)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.engine = VectorEngine(num_games=1, num_players=num_players, auto_reset=False, **rule_options)
        self.render_mode = render_mode
        self.possible_agents = list(self.engine.agents)
        self.agents = []
        observation_space = spaces.Dict(
            {
                "observation": spaces.Box(0, 127, (self.engine.observation_size,), np.int8),
                "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
            }
        )
        self.observation_spaces = {agent: observation_space for agent in self.possible_agents}
        self.action_spaces = {agent: spaces.Discrete(NUM_ACTIONS) for agent in self.possible_agents}
        self.state_space = spaces.Box(0, 127, (self.engine.state_size,), np.int8)
        self._no_reward_bytes = bytes(self.engine._rewards.nbytes)  # the engine's rewards, all 0
        self._no_mask = np.zeros(NUM_ACTIONS, np.int8)
        # The recent events, written into sentences for the seat a picture is drawn for.
        self._events: deque[tuple] = deque(maxlen=HISTORY_EVENTS)
        self._acting = None  # set by _select_current

    # ------------------------------------------------------------ copies (copy.deepcopy, pickle)

    def __getstate__(self) -> dict:
        # EzPickle's state is only the constructor's arguments (a fresh env, no game): keep everything,
        # the engine's arrays included, so that a copy is the same game at the same point.
        return dict(self.__dict__)

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------ the game

    def reset(self, seed=None, options=None):
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict or None (keys \"deck\", \"dealer\"), got {type(options).__name__}")
        options = options or {}
        self.engine.reset(seed=seed, options={key: options[key] for key in ("deck", "dealer") if key in options})
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: {"action_mask": self._no_mask} for agent in self.agents}
        self._observation = self.engine.observe()[0]
        self._mask = self.engine.legal_mask()[0].view(np.int8)
        self._select_current()
        self._had_rewards = False
        self._events.clear()
        if self.render_mode is not None:
            self._events.extend(self.engine.events(0))
        if self.render_mode == "human":
            self.render()

    def step(self, action):
        if not self.agents:
            self._raise_no_game("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            return self._was_dead_step(action)
        if type(action) is not int:  # a plain int is the common case
            action = action_index(action, agent)
        if not (0 <= action < NUM_ACTIONS and self._play_if_legal(action)):
            raise ValueError(f"illegal action {action} ({ACTION_LABELS[action] if 0 <= action < NUM_ACTIONS else 'out of range'}) for {agent}")

    def _legal_step_hook(self):
        """``_play_if_legal``, unless a subclass replaced ``step`` (its own code must then run)."""
        return self._play_if_legal if type(self).step is raw_env.step else None

    def _play_if_legal(self, action: int) -> bool:
        """The rest of ``step`` for the live agent to act and an int ``action`` in [0, 75): play it if
        the agent's mask allows it (True), else change nothing (False). ``FusedClassicWrapper`` calls
        this directly (see ``_legal_step_hook``) after its own checks, so they are not made twice."""
        if not self._mask[action]:
            return False
        agent, engine = self.agent_selection, self.engine
        # Fresh arrays each step, shared by observe() and infos (the kernel re-checks
        # every action, so a caller editing them cannot make an illegal move pass).
        self._observation, self._mask = engine._step_one(action)
        self._cumulative_rewards[agent] = 0.0
        # Rewards come only at a round's end: most steps compare a few bytes and skip the dicts.
        if self._had_rewards or engine._rewards.tobytes() != self._no_reward_bytes:
            self._take_rewards(engine._rewards[0].tolist())
        self.infos[agent] = {"action_mask": self._no_mask}
        self._select_current()
        if self.render_mode is not None:
            self._events.extend(engine.events(0))
            if self.render_mode == "human":
                self.render()
        return True

    def _take_rewards(self, values: list[float]) -> None:
        """The step's rewards by seat into ``rewards`` and ``_cumulative_rewards``, unless they and the last ones are all 0."""
        if not (self._had_rewards or any(values)):
            return
        for name, value in zip(self.agents, values):
            self.rewards[name] = value
        self._had_rewards = any(values)
        self._accumulate_rewards()

    def _raise_no_game(self, call: str):
        """The ValueError for ``step``/``last`` when no agent is left to act: before reset, or after the game."""
        if not hasattr(self, "agent_selection"):
            raise ValueError(f"{call}() before reset(): call reset() first")
        raise ValueError(f"{call}() after the game is over (every agent has finished and been removed): call reset() to start a new game")

    def last(self, observe: bool = True):
        # AECEnv.last with the "no game" check first
        if not self.agents:
            self._raise_no_game("last")
        agent = self.agent_selection
        assert agent is not None
        return (
            self.observe(agent) if observe else None,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def _select_current(self):
        """``agent_selection`` and its mask in ``infos`` from the engine's seat to act; when there is
        none, the game is over: every agent terminated (or truncated, by ``max_turns``)."""
        seat = self.engine.state.current_player.item()
        if seat >= 0:
            # the agent whose view and mask the engine returned
            self._acting = self.agent_selection = self.possible_agents[seat]
            self.infos[self._acting] = {"action_mask": self._mask}
            return
        self._acting = None
        engine = self.engine
        if engine._terminated[0] or engine._truncated[0]:
            flags = self.terminations if engine._terminated[0] else self.truncations
            for name in self.agents:
                flags[name] = True

    def observe(self, agent):
        # The acting agent's mask, unless an illegal move ended the game (env()'s wrapper then
        # points agent_selection at the finished agents while the engine still has a player to act).
        if agent == self._acting and agent == self.agent_selection:
            return {"observation": self._observation, "action_mask": self._mask}
        seats = np.array([self.possible_agents.index(agent)], np.int8)
        return {"observation": self.engine.observe(seats)[0], "action_mask": self._no_mask.copy()}

    def state(self) -> np.ndarray:
        """Full information (every hand), for centralised critics; see ``encoding.full_state``."""
        return self.engine.state_vector()[0]

    def game_state(self) -> dict:
        """The game as a plain JSON-serialisable dict (keys: ``VectorEngine.game_state``)."""
        return self.engine.game_state(0)

    # ------------------------------------------------------------ rendering

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        state = self.game_state()
        viewer = state["current"] or self.agent_selection
        if self.render_mode == "text":
            seen, players = self.observe(viewer), len(self.possible_agents)
            history = seat_history(self._events, players, self.possible_agents.index(viewer))
            return seat_text(seen["observation"], seen["action_mask"], players, self.engine.options, history)
        history = history_lines(self._events, self.possible_agents, self.possible_agents.index(viewer))
        if self.render_mode == "rgb_array":
            return render_rgb(state, viewer, history)
        use_color = self.render_mode == "human" and sys.stdout.isatty() and os.environ.get("NO_COLOR") is None
        text = render_ansi(state, viewer, history, color=use_color)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self):
        pass

