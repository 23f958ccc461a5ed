"""Harry Potter UNO behind TextArena's environment interface (``pip install "hpuno-env[textarena]"``).

    import textarena as ta
    import hpuno_env.textarena_env            # registers HPUno-v0 and HPUno-v0-raw

    env = ta.make("HPUno-v0", uno_penalty=4)  # rules options as keywords
    env.reset(num_players=3, seed=0)
    done = False
    while not done:
        player_id, observation = env.get_observation()
        done, info = env.step(action=agents[player_id](observation))
    rewards, game_info = env.close()

One round (or one match with ``episode="match"``) of the AEC env (``hpuno_env.raw_env``), told to each player as
``hpuno_env.text_view`` writes it: the rules in brief as TextArena's ``PROMPT`` message (once, at the reset) and
the table as the player sees it, its recent events and its legal actions numbered as a ``GAME_BOARD`` message at
each of its decisions. ``HPUno-v0`` wraps the env in TextArena's ``GameBoardObservationWrapper`` (the prompt and
the latest board, as one string); ``HPUno-v0-raw`` gives the message lists as they come.

An action is read by ``text_view.read_answer`` (one legal action, by number or label). Anything else is an invalid
move: the player is asked again with the reason on its board, up to ``error_allowance`` times in a row, and then
loses (reward -1, the others 0, ``game_info[pid]["invalid_move"]`` True). A round that ends normally pays what the
AEC env pays (``reward="win"``: +1 the winner, -1 the others).
"""

from __future__ import annotations

import textarena as ta

from ._checks import check_int, check_seed
from .aec_env import raw_env
from .text_view import board_text, legal_actions, read_answer, rules_text, seat_history

ENV_ID = "HPUno-v0"


class _Roles:
    """What TextArena's wrappers read of an env's state: ``role_mapping`` (names of the senders of messages)."""

    def __init__(self, num_players: int):
        self.role_mapping = {pid: f"Player {pid}" for pid in range(num_players)} | {ta.GAME_ID: "GAME"}
        self.num_players = num_players


class HPUnoTextArenaEnv(ta.Env):
    """The game as a TextArena environment (module docstring); keywords are ``hpuno_env.RulesOptions``'s."""

    def __init__(self, error_allowance: int = 1, **rule_options):
        self.error_allowance = check_int(error_allowance, "error_allowance", low=0, high=100)
        self.rule_options = dict(rule_options)
        raw_env(num_players=2, **self.rule_options)  # a bad rules option: ValueError at once, not at the reset
        self.env = None

    def reset(self, num_players: int, seed: int | None = None):
        self.env = raw_env(num_players=num_players, render_mode="text", **self.rule_options)
        self.env.reset(seed=check_seed(seed))
        self.state = _Roles(num_players)
        self.rewards = dict.fromkeys(range(num_players), 0.0)
        self.game_info = {pid: {"role": f"Player {pid}", "invalid_move": False, "turn_count": 0} for pid in range(num_players)}
        self.errors, self.reason, self.done = 0, "", False
        prompt = rules_text(num_players, self.env.engine.options)
        self.pending = {pid: [(ta.GAME_ID, prompt, ta.ObservationType.PROMPT)] for pid in range(num_players)}

    @property
    def current(self) -> int:
        return self.env.possible_agents.index(self.env.agent_selection)

    def get_observation(self):
        """(the player to act, the messages it has not been shown yet, its board last)."""
        player, env = self.current, self.env
        seen = env.observe(env.agent_selection)
        history = seat_history(env._events, len(env.possible_agents), player)
        board = board_text(seen["observation"], seen["action_mask"], len(env.possible_agents), env.engine.options, history)
        if self.reason:
            board = f"Your last action was not played: {self.reason}.\n{board}"
        messages = self.pending[player] + [(ta.GAME_ID, board, ta.ObservationType.GAME_BOARD)]
        self.pending[player] = []
        return player, messages

    def step(self, action: str):
        """Play the current player's answer; returns (done, info)."""
        if self.env is None or self.done:
            raise ValueError("step() with no game in play: call reset() first")
        player, env = self.current, self.env
        chosen, problem = read_answer(action if isinstance(action, str) else "", legal_actions(env.observe(env.agent_selection)["action_mask"]))
        if chosen is None:
            self.errors += 1
            self.reason = problem
            if self.errors > self.error_allowance:
                self.rewards = {pid: (-1.0 if pid == player else 0.0) for pid in self.rewards}
                self.game_info[player]["invalid_move"] = True
                return self._finish(f"Player {player} made no legal move {self.errors} times in a row ({problem})")
            return False, {"reason": problem}
        self.errors, self.reason = 0, ""
        self.game_info[player]["turn_count"] += 1
        env.step(int(chosen))
        for pid, agent in enumerate(env.possible_agents):
            self.rewards[pid] += float(env.rewards[agent])
        if all(env.terminations.values()) or all(env.truncations.values()):
            return self._finish("the round is over" if all(env.terminations.values()) else "the round was cut short")
        return False, {}

    def _finish(self, reason: str):
        self.done = True
        for info in self.game_info.values():
            info["reason"] = reason
        return True, {"reason": reason}

    def close(self):
        """(rewards by player id, game_info by player id), as TextArena's states return them."""
        return dict(self.rewards), {pid: dict(info) for pid, info in self.game_info.items()}


def register() -> None:
    """Register ``HPUno-v0`` (with ``GameBoardObservationWrapper``) and ``HPUno-v0-raw`` in TextArena, once."""
    from textarena.envs.registration import ENV_REGISTRY
    from textarena.wrappers import GameBoardObservationWrapper

    if ENV_ID not in ENV_REGISTRY:
        ta.register(ENV_ID, entry_point=HPUnoTextArenaEnv, default_wrappers=[GameBoardObservationWrapper])
        ta.register(f"{ENV_ID}-raw", entry_point=HPUnoTextArenaEnv, default_wrappers=None)


register()
