"""``python -m agents.play``: a person plays Harry Potter UNO in the terminal against the agents.

    python -m agents.play --players 3 --opponents heuristic,ppo_universal --seed 1

The person sits in ``--seat`` (0 by default); ``--opponents`` names the
agents in the other seats, from the person's left (one name fills every
other seat). Any name ``agents.load`` takes works, and ``human`` is a player
too (people sharing the keyboard: the table is shown from the side of
whoever is to act). A whole match is played (``episode="match"`` unless a
``--rule episode=round`` asks for one round), rounds until ``target_score``.

At each of the person's decisions the table is shown as that seat sees it
(the ANSI picture of ``hpuno_env.render``, in colour on a terminal): the top
card and colour, every hand's size, the person's own hand, and any hand a
challenge showed them; then the legal actions, numbered. The answer is a
number, a label (``play:red:7``, or just ``red:7``; ``color:yellow``, or just
``yellow``), or ``q`` to quit; other
answers are explained and asked again. What everybody does is told as it
happens (a card someone else draws stays hidden), and the scores after each
round. When the match ends, on ``q`` or at the end of the input, the game
record (``hpuno_env.records``) is saved to ``--record`` (by default
``runs/games/hpuno-game-<date>-<time>.json`` under the current folder, with
``-2``, ``-3``, ... added when that name is taken: ``RECORD_FOLDER``;
``runs/`` is in the project's ``.gitignore``, so games
played in a checkout are not committed by accident): ``python -m
hpuno_env.replay FILE`` shows it again. A closed or exhausted stdin counts as
the end of the input.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

# The engine (hpuno_env.kernel, .records, .render) loads on first use, through the package: a refused command line
# is answered before numba and torch load.
import hpuno_env
from hpuno_env import ACTION_LABELS
from hpuno_env._output import file_problem, program_name
from hpuno_env.cards import CARD_LABELS, CHALLENGE, CATCH, TARGET_BASE
from hpuno_env.replay import read_line, terminal_supports_color

from .players import check_name, load

from ._cli import one_torch_thread, parse_rules, warnings_as_lines

HUMAN = "human"
RECORD_FOLDER = os.path.join("runs", "games")  # the default --record's folder (module docstring)
QUIT_WORDS = ("q", "quit", "exit")
EXAMPLES = """examples:
  hpuno-play                                                 # you against the heuristic, a whole match
  hpuno-play --players 3 --opponents heuristic,ppo_universal --seed 1
  hpuno-play --players 4 --opponents human,heuristic,random-play   # two people sharing the keyboard
  hpuno-play --rule episode=round --record runs/games/game.json    # one round; its record saved there
  hpuno-replay runs/games/game.json                          # the game again, one decision per Enter"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=program_name("agents.play", "hpuno-play"),
        description="Play a Harry Potter UNO match in the terminal against agents. "
        "Answer with the number or the label of an action; q quits (the game record is saved).",
        epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--players", type=int, default=2, help="seats at the table, 2..10 (default 2)")
    parser.add_argument("--opponents", default="heuristic", metavar="A[,B...]",
                        help="the other seats' players, from your left: one name for all of them, or one per seat "
                        "(names of agents.load, a saved agent file, or human: people sharing the screen get a handover "
                        "pause before each turn); default heuristic")
    parser.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the cards and the agents (default: a fresh game each time)")
    parser.add_argument("--rule", action="append", default=[], metavar="NAME=VALUE",
                        help="a rules option, repeatable, e.g. --rule target_score=100 --rule uno_penalty=4 "
                        "(default episode=match: a whole match)")
    parser.add_argument("--rules", metavar="JSON", help='the same options as one JSON object (an alias of --rule), e.g. \'{"uno_penalty": 4}\'')
    parser.add_argument("--record", metavar="PATH",
                        help=f"where to save the game record (default {RECORD_FOLDER}/hpuno-game-<date>-<time>.json)")
    return parser


def seat_names(num_players: int, seat: int, opponents: str) -> list[str]:
    """Who sits where: ``human`` in ``seat``, the opponents from its left on."""
    names = [name.strip() for name in opponents.split(",")]
    if not all(names):
        raise ValueError(f"--opponents must be comma-separated names, got {opponents!r}")
    if len(names) == 1:
        names = names * (num_players - 1)
    if len(names) != num_players - 1:
        wanted = "one name (one other seat)" if num_players == 2 else f"one name, or {num_players - 1} names (one per other seat)"
        raise ValueError(f"--opponents needs {wanted}, got {len(names)}")
    table = [HUMAN] * num_players
    for offset, name in enumerate(names, start=1):
        table[(seat + offset) % num_players] = name
    return table


def load_player(name: str, num_players: int, seed: int | None, rules: dict):
    """An agent for a seat, by any name ``agents.load`` takes, for games under ``rules`` (a trained agent made
    under others warns); an unknown name's error also offers ``human``."""
    check_player_name(name)
    return load(name, num_players=num_players, seed=seed, rules_options=rules)


def check_player_name(name: str) -> None:
    """``agents.players.check_name``'s ValueError for an unknown name, also offering ``human``; loads nothing."""
    try:
        check_name(name)
    except ValueError as error:
        raise ValueError(f"{error} (or {HUMAN}, a person at this terminal)") from None


HANDOVER_LINES = 60  # blank lines that scroll one person's hand off the screen before the next person's turn


class TerminalMatch:
    """One match between people at this terminal and agents, told as it goes."""

    def __init__(self, names: list[str], engine: hpuno_env.VectorEngine, policies: dict, seed: int | None, out=None, ask=None):
        self.names = names
        self.engine = engine
        self.policies = policies
        self.out = out or sys.stdout  # looked up now, not at import: a redirected stdout is honoured
        self.ask = ask or read_answer
        self.agents = engine.agents
        humans = [seat for seat, name in enumerate(names) if name == HUMAN]
        # A card drawn by a person is named only when one person plays (people sharing a
        # screen would otherwise see each other's draws).
        self.narrated_viewer = humans[0] if len(humans) == 1 else None
        self.last_person = None  # the seat of the last person asked (hot seat: a handover between two people)
        self.since_handover: list[str] = []  # what was said since the last handover, shown again after the next
        self.color = terminal_supports_color(out)
        self.seed = seed
        self.recorder = hpuno_env.records.Recorder(engine, seed=seed, players=names)
        self._action = np.zeros(1, np.int64)
        # (seat, owner) -> (the hand a challenge showed seat, the round and decision when): a shown hand is a
        # snapshot, and cards played since must not look as if they were still held
        self.reveals: dict[tuple[int, int], tuple[np.ndarray, int, int]] = {}

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def tell(self, text: str) -> None:
        """Say what happened at the table (kept to tell again after a handover: it scrolls away with the hand)."""
        self.say(text)
        if self.narrated_viewer is None:  # people share the screen
            self.since_handover.append(text)

    def who(self, seat: int) -> str:
        name = self.names[seat]
        if name == HUMAN:
            return f"{self.agents[seat]} (you)" if self.narrated_viewer == seat else f"{self.agents[seat]} (human)"
        return f"{self.agents[seat]} ({name})"

    def play(self, options: dict | None = None) -> str:
        """Play until the match ends or a person quits; returns "over" or "quit".
        ``options`` go to the engine's ``reset`` (a stacked ``"deck"``, a ``"dealer"``)."""
        self.engine.reset(seed=self.seed, options=options)
        self.recorder.after_reset()
        self.note_reveals()
        self.say("Seats: " + ", ".join(self.who(seat) for seat in range(len(self.names))))
        options = self.engine.options
        goal = f"a match to {options.target_score} points" if options.episode == "match" else "one round"
        self.say(f"Playing {goal}. Answer with a number or a label; q quits.")
        self.narrate()
        while self.engine.state.phase[0] != hpuno_env.kernel.OVER:
            seat = int(self.engine.current_player[0])
            if self.names[seat] == HUMAN:
                action = self.ask_person(seat)
                if action is None:
                    return "quit"
            else:
                action = int(self.policies[seat].act(self.engine.observe(), self.engine.legal_mask())[0])
            self._action[0] = action
            self.engine.step(self._action)
            self.recorder.after_step(self._action)
            self.note_reveals()
            self.narrate()
        return "over"

    def record(self) -> dict:
        """The game so far: the finished match, or the one in progress."""
        current = self.recorder.current_record()
        return current if current is not None else self.recorder.records[-1]

    # ------------------------------------------------------------ telling what happened

    def narrate(self) -> None:
        """The last step's events in words; the scores when a round ended (before the next deal)."""
        events = self.engine.events(0)
        ends = [i for i, event in enumerate(events) if event[0] == hpuno_env.kernel.EV_ROUND_END]
        split = ends[-1] + 1 if ends else 0
        for line in hpuno_env.render.describe_events(events[:split], self.agents, self.narrated_viewer):
            self.tell(f"  {line}")
        if ends:
            self.show_scores()
        for line in hpuno_env.render.describe_events(events[split:], self.agents, self.narrated_viewer):
            self.tell(f"  {line}")

    def show_scores(self) -> None:
        state = self.engine.game_state(0)
        options = self.engine.options
        ended = state["round"] - (state["phase"] != "over")
        self.tell(f"--- scores after round {ended} ({options.scoring} scoring, match to {options.target_score}) ---")
        width = max(len(self.who(seat)) for seat in range(len(self.names)))
        for seat, agent in enumerate(self.agents):
            self.tell(f"  {self.who(seat):<{width}}  {state['scores'][agent]:5d}")

    # ------------------------------------------------------------ asking a person

    def ask_person(self, seat: int) -> int | None:
        """Show the table to seat and read its choice; None when it quits (or the input ends)."""
        state = self.engine.game_state(0)
        agent = self.agents[seat]
        if self.narrated_viewer is None and seat != self.last_person:
            # People sharing a screen: scroll the last hand away, wait for the next person, then
            # tell them again what happened since the last handover (it scrolled away with the hand).
            news, self.since_handover = self.since_handover, []
            self.say("\n" * HANDOVER_LINES + f"{agent}'s turn: pass the keyboard to {agent}.")
            try:
                if self.ask(f"{agent}, press Enter when the others cannot see the screen (q quits) > ").strip().lower() in QUIT_WORDS:
                    return None
            except EOFError:
                self.say("(end of input)")
                return None
            if news:
                self.say("Since the last handover:")
                for line in news:
                    self.say(line)
        self.last_person = seat
        self.say()
        self.say(hpuno_env.render.render_ansi(state, agent, [], color=self.color))
        for line in self.revealed_hands(seat):
            self.say(line)
        legal = [int(a) for a in np.flatnonzero(self.engine.legal_mask()[0])]
        self.say(f"{agent}, your move ({self.phase_hint(seat, state['phase'])}):")
        for number, action in enumerate(legal, start=1):
            self.say(f"  {number:2d}  {ACTION_LABELS[action]}{self.action_note(seat, action)}")
        while True:
            try:
                answer = self.ask("number, label or q > ")
            except EOFError:
                self.say("(end of input)")
                return None
            choice, problem = parse_answer(answer, legal)
            if problem is None:
                return choice
            if problem == "quit":
                return None
            self.say(problem)

    def note_reveals(self) -> None:
        """Remember when each hand a challenge shows was shown (the engine keeps the cards, not the moment)."""
        state = self.engine.state
        seen = state.revealed_seen[0]
        for key in [key for key in self.reveals if not seen[key]]:  # a new round forgets what was shown
            del self.reveals[key]
        for seat, owner in zip(*np.nonzero(seen)):
            key, cards = (int(seat), int(owner)), state.revealed[0, seat, owner].copy()
            if key not in self.reveals or not np.array_equal(self.reveals[key][0], cards):
                self.reveals[key] = (cards, int(state.round_number[0]), int(state.turns[0]))

    def revealed_hands(self, seat: int) -> list[str]:
        """Hands a challenge showed seat this round, as they were when shown, saying when and how many cards
        that player holds now (it may have played some of them since)."""
        state = self.engine.state
        lines = []
        for owner in range(len(self.names)):
            if owner != seat and state.revealed_seen[0, seat, owner]:
                cards, round_number, decision = self.reveals.get((seat, owner), (state.revealed[0, seat, owner], 0, 0))
                shown = " ".join(CARD_LABELS[c] for c in np.repeat(np.arange(len(CARD_LABELS)), cards))
                held = int(state.hands[0, owner].sum())
                lines.append(f"{self.agents[owner]}'s hand, shown to you by your challenge: {shown} (as it was at decision "
                             f"{decision} of round {round_number}; {self.agents[owner]} holds {held} cards now)")
        return lines

    def phase_hint(self, seat: int, phase: str) -> str:
        state = self.engine.state
        pending = int(state.pending_draw[0]) or 4
        if phase == "challenge":
            return (f"{self.agents[int(state.wd4_player[0])]} played a Wild Draw Four on you: challenge it, "
                    f"or accept and draw {pending}")
        if phase == "catch":
            return f"{self.agents[int(state.catch_offender[0])]} has one card and did not call UNO"
        if phase == "target" and self.engine.game_state(0)["top"].endswith(":7"):
            return "choose the seat to swap hands with"
        return {
            "play": "play a matching card, or draw",
            "drawn": "play the card you drew, or keep it",
            "color": "name the colour",
            "target": "send the Sorting Hat's target drawing until a Gryffindor card",
            "stack": f"stack a draw card on the {pending} cards to draw, or accept them",
            "jump": "jump in with the twin of the card just played, or let play go on",
        }[phase]

    def action_note(self, seat: int, action: int) -> str:
        """Who a target action aims at, in words."""
        if TARGET_BASE <= action < TARGET_BASE + 9:
            return f"  ({self.agents[(seat + action - TARGET_BASE + 1) % len(self.names)]})"
        if action == CATCH:
            return "  (they draw the penalty)"
        if action == CHALLENGE:
            return "  (a bluff costs them 4; an honest card costs you 6)"
        return ""


def read_answer(prompt: str) -> str:
    """One line from the person (EOFError at the end of the input). Input that is not
    typed at a terminal is echoed, so that a scripted game reads like a played one."""
    answer = read_line(prompt)  # a closed stdin is the end of the input too
    if not sys.stdin.isatty():
        print(answer, flush=True)
    return answer


def parse_answer(answer: str, legal: list[int]) -> tuple[int | None, str | None]:
    """(action, None) for a good answer; (None, "quit") to quit; (None, explanation) otherwise."""
    text = answer.strip().lower()
    if text in QUIT_WORDS:
        return None, "quit"
    if not text:
        return None, f"Please type a number from 1 to {len(legal)}, an action's label, or q to quit."
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(legal):
            return legal[number - 1], None
        return None, f"There is no action {number}: choose a number from 1 to {len(legal)}."
    label = text if text in ACTION_LABELS else shorthand_label(text)
    if label is None:
        return None, f"{answer.strip()!r} is not an action: type a number from 1 to {len(legal)} or a label from the list."
    action = ACTION_LABELS.index(label)
    if action not in legal:
        return None, f"{label} is not allowed now: choose one of the actions listed."
    return action, None


SHORTHAND_PREFIXES = ("play:", "color:")  # a label may be typed without them: green:2 (play:green:2), yellow (color:yellow)


def shorthand_label(text: str) -> str | None:
    """The one label ``text`` is short for (``green:2``: ``play:green:2``, ``yellow``: ``color:yellow``,
    ``wild``: ``play:wild``), or None (none, or more than one)."""
    labels = [prefix + text for prefix in SHORTHAND_PREFIXES if prefix + text in ACTION_LABELS]
    return labels[0] if len(labels) == 1 else None


@warnings_as_lines()  # e.g. an agent trained under other rules: one line, not Python's source line
def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:  # every argument checked before any agent loads (and with it the engine, and torch for a trained agent)
        rules = parse_rules(args.rule, args.rules)
        rules.setdefault("episode", "match")
        if not 2 <= args.players <= 10:
            raise ValueError(f"--players must be in [2, 10], got {args.players}")
        if not 0 <= args.seat < args.players:
            raise ValueError(f"--seat must be in [0, {args.players}), got {args.seat}")
        names = seat_names(args.players, args.seat, args.opponents)
        for name in set(names) - {HUMAN}:
            check_player_name(name)
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    path = args.record or free_record_path(time.strftime("hpuno-game-%Y%m%d-%H%M%S"))
    problem = file_problem(path)
    if problem is None and os.path.exists(path):
        problem = f"{path} already exists (a record is never overwritten: give another path)"
    if problem:  # found before the game, not after it
        parser.exit(2, f"{parser.prog}: error: --record: {problem}\n")
    try:
        seeds = np.random.SeedSequence(args.seed).generate_state(args.players) if args.seed is not None else [None] * args.players
        policies = {
            seat: load_player(name, args.players, None if seeds[seat] is None else int(seeds[seat]), rules)
            for seat, name in enumerate(names) if name != HUMAN
        }
        engine = hpuno_env.VectorEngine(1, args.players, seed=args.seed, auto_reset=False, **rules)
    except ValueError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    one_torch_thread()
    return _play_match(TerminalMatch(names, engine, policies, args.seed), path)


def free_record_path(stem: str) -> str:
    """``RECORD_FOLDER/STEM.json``, or with ``-2``, ``-3``, ... added when a game started in the same second has
    taken the name (a record is never overwritten)."""
    path, number = os.path.join(RECORD_FOLDER, f"{stem}.json"), 1
    while os.path.lexists(path):
        number += 1
        path = os.path.join(RECORD_FOLDER, f"{stem}-{number}.json")
    return path


def _play_match(table: TerminalMatch, path: str) -> int:
    """Play the match at this terminal and save its record to ``path`` (or, if that fails now, to a new temporary
    file); the exit status."""
    try:
        outcome = table.play()
    except KeyboardInterrupt:
        table.say()
        outcome = "quit"
    if outcome == "quit":
        table.say("You left the game.")
    try:
        hpuno_env.records.save_record(table.record(), path)
    except OSError as error:  # the path was writable at the start; keep the game anyway
        table.say(f"Could not save the record to {path} ({error.strerror or error}).")
        handle, path = tempfile.mkstemp(prefix="hpuno-game-", suffix=".json")  # a new file: nothing is overwritten
        os.close(handle)
        hpuno_env.records.save_record(table.record(), path)
    table.say(f"Game record saved to {path} (python -m hpuno_env.replay {path} shows it again).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
