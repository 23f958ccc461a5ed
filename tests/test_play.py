"""``python -m agents.play``: a person's match in the terminal, fed scripted input.

The command runs in a subprocess as a person would run it: a whole match
answered with the first legal action each time, bad answers explained and
asked again, ``q`` and the end of the input quitting with a saved record that
replays. A challenge showing the person a hand is played in-process on a
stacked deck.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from agents.play import HANDOVER_LINES, HUMAN, TerminalMatch, parse_answer, seat_names
from agents.play import main as play_main
from hpuno_env import ACTION_LABELS, VectorEngine
from hpuno_env.records import load_record, replay
from hpuno_env.scenarios import stacked_deck

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROMPT = "number, label or q > "


def run_play(*arguments, stdin: str):
    return subprocess.run(
        [sys.executable, "-m", "agents.play", *map(str, arguments)],
        input=stdin, capture_output=True, text=True, cwd=REPO, timeout=180,
    )


def assert_no_hidden_cards(transcript: str) -> None:
    """The person (player_0) sees only its own hand, its own draws and hands its challenges showed it."""
    assert not re.search(r"^player_[1-9]'s hand(?!, shown to you by your challenge)", transcript, re.M)
    others_draws = re.findall(r"player_[1-9] drew (\S+)", transcript)
    assert all(what in ("a", "nothing") or what.isdigit() for what in others_draws), others_draws


def test_a_whole_match_with_the_first_legal_action(tmp_path):
    path = tmp_path / "match.json"
    played = run_play("--players", 3, "--opponents", "heuristic,random-play", "--seed", 1, "--rule", "target_score=1",
                      "--record", path, stdin="1\n" * 3000)
    assert played.returncode == 0, played.stderr
    out = played.stdout
    assert "Seats: player_0 (you), player_1 (heuristic), player_2 (random-play)" in out
    assert re.search(r"player_\d won the round, scoring \d+ points", out)
    assert "--- scores after round 1" in out and "won the match" in out
    assert out.count(PROMPT) >= 5  # the person was asked again and again
    assert "player_0, your move" in out and "   1  " in out  # the numbered legal actions
    assert_no_hidden_cards(out)
    record = load_record(path)
    assert record["outcome"] == "terminated" and record["players"] == [HUMAN, "heuristic", "random-play"]
    assert record["seed"] == 1 and record["options"]["episode"] == "match"
    states = list(replay(record))
    assert states[-1]["phase"] == "over"
    person_decisions = sum(seat == 0 for entry in record["rounds"] for seat, _ in entry["decisions"])
    assert out.count(PROMPT) == person_decisions


def test_bad_input_is_explained_and_asked_again_then_q_saves_a_record_that_replays(tmp_path):
    path = tmp_path / "quit.json"
    answers = ["abc", "0", "99", "", "play:red:99", "keep", "1", "q", "1"]
    played = run_play("--players", 2, "--seed", 4, "--record", path, stdin="\n".join(answers) + "\n")
    assert played.returncode == 0, played.stderr
    out = played.stdout
    assert "'abc' is not an action: type a number from 1 to" in out
    assert "There is no action 0: choose a number from 1 to" in out
    assert "There is no action 99" in out
    assert "Please type a number from 1 to" in out
    assert "'play:red:99' is not an action" in out
    assert "keep is not allowed now: choose one of the actions listed." in out
    assert out.count(PROMPT) == 8  # asked again after each of the six bad answers; the last 1 is never read
    assert "You left the game." in out and f"Game record saved to {path}" in out
    record = load_record(path)
    assert record["outcome"] == "unfinished"
    assert [seat for seat, _ in record["rounds"][0]["decisions"]].count(0) == 1
    assert len(list(replay(record))) == len(record["rounds"][0]["decisions"]) + 1


def test_end_of_input_quits_cleanly_and_labels_are_answers(tmp_path):
    path = tmp_path / "eof.json"
    first = run_play("--players", 2, "--seed", 4, "--record", path, stdin="")
    assert first.returncode == 0, first.stderr
    assert "(end of input)" in first.stdout and load_record(path)["outcome"] == "unfinished"
    legal = re.findall(r"^\s+\d+  (\S+)", first.stdout, re.M)
    # The same game, answered with the first action's label (a card's without "play:").
    second_path = tmp_path / "eof-2.json"
    second = run_play("--players", 2, "--seed", 4, "--record", second_path, stdin=legal[0].removeprefix("play:") + "\n")
    assert second.returncode == 0, second.stderr
    person = [label for entry in load_record(second_path)["rounds"] for seat, label in entry["decisions"] if seat == 0]
    assert person == [legal[0]]
    assert run_play("--help", stdin="").returncode == 0


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--players", "3", "--opponents", "ppo_2p"], "made for 2-player games"),
        (["--players", "4", "--opponents", "heuristic,random"], "--opponents needs one name, or 3 names"),
        (["--opponents", "nobody"], "unknown agent 'nobody'"),
        (["--opponents", "nobody"], "or human, a person at this terminal"),
        (["--rule", "uno_penalty=-3"], "uno_penalty"),
        (["--rule", "speed"], "NAME=VALUE"),
        (["--players", "11"], "--players must be in [2, 10]"),
        (["--seat", "2"], "--seat must be in [0, 2)"),
    ],
)
def test_refusals(arguments, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        play_main(arguments)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_an_unwritable_record_path_is_refused_before_the_game(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    for path, message in ((blocker / "game.json", "is a file, not a folder"), (tmp_path, "is a folder, not a file")):
        with pytest.raises(SystemExit) as exit_:
            play_main(["--opponents", "heuristic", "--record", str(path)])
        error = capsys.readouterr().err
        assert exit_.value.code == 2 and "--record" in error and message in error and "Traceback" not in error
    assert sorted(os.listdir(tmp_path)) == ["a-file"] and blocker.read_text() == "in the way"


def test_an_existing_record_is_never_overwritten(tmp_path, capsys):
    path = tmp_path / "kept.json"
    path.write_text("an earlier game")
    with pytest.raises(SystemExit) as exit_:
        play_main(["--opponents", "heuristic", "--record", str(path)])
    assert exit_.value.code == 2 and "kept.json already exists" in capsys.readouterr().err
    assert path.read_text() == "an earlier game"


def test_seats_and_answers():
    assert seat_names(4, 1, "heuristic") == ["heuristic", HUMAN, "heuristic", "heuristic"]
    assert seat_names(3, 2, "random,human") == ["random", HUMAN, HUMAN]
    with pytest.raises(ValueError, match="one name, or 2 names"):
        seat_names(3, 0, "a,b,c")
    with pytest.raises(ValueError, match=r"one name \(one other seat\), got 2"):
        seat_names(2, 0, "a,b")
    with pytest.raises(ValueError, match="comma-separated"):
        seat_names(3, 0, "a,,b")
    legal = [ACTION_LABELS.index("play:red:7"), ACTION_LABELS.index("draw")]
    assert parse_answer(" 2 ", legal) == (legal[1], None)
    assert parse_answer("RED:7", legal) == (legal[0], None)
    assert parse_answer("Q", legal) == (None, "quit")
    assert parse_answer("play:blue:7", legal)[1] == "play:blue:7 is not allowed now: choose one of the actions listed."
    colours = [ACTION_LABELS.index(f"color:{colour}") for colour in ("red", "yellow", "green", "blue")]
    assert parse_answer("yellow", colours) == (colours[1], None)  # a bare colour names it, as green:2 plays it
    assert parse_answer(" Blue ", colours) == (colours[3], None)
    assert parse_answer("color:green", colours) == (colours[2], None)
    assert parse_answer("purple", colours)[1] == "'purple' is not an action: type a number from 1 to 4 or a label from the list."
    assert parse_answer("yellow", legal)[1] == "color:yellow is not allowed now: choose one of the actions listed."


def test_two_people_sharing_the_screen_get_a_handover_before_each_others_hand():
    engine = VectorEngine(1, 2, seed=3, auto_reset=False)
    prompts = []

    def ask(prompt):
        prompts.append(prompt)
        return "q" if len(prompts) == 9 else ("" if "press Enter" in prompt else "1")

    out = io.StringIO()
    table = TerminalMatch([HUMAN, HUMAN], engine, {}, seed=3, out=out, ask=ask)
    assert table.play() == "quit"
    handovers = [prompt for prompt in prompts if "press Enter" in prompt]
    assert prompts[0] in handovers and len(handovers) >= 2  # the first person is asked to take the keyboard too
    seats = [prompt.split(",")[0] for prompt in handovers]
    assert all(a != b for a, b in zip(seats, seats[1:]))  # a handover only when the person changes
    assert all(not ("press Enter" in a and "press Enter" in b) for a, b in zip(prompts, prompts[1:]))  # each is followed by a move
    text = out.getvalue()
    for handover in handovers:  # the hand shown after a handover belongs to the seat named in it
        seat = handover.split(",")[0]
        assert f"{seat}'s turn: pass the keyboard to {seat}." in text
    assert "\n" * HANDOVER_LINES in text
    # what the other person did scrolled away with their hand: it is told again after the handover
    first, second = (text.index(f"{seat}'s turn: pass the keyboard") for seat in seats[:2])
    recap = text[second:].split("Since the last handover:\n")[1].split("\n\n")[0].splitlines()
    assert recap and all(line in text[first:second] for line in recap)
    assert any(line.startswith(f"  {seats[0]} ") for line in recap)  # the previous person's moves, told in words


class _Bluffer:
    """Plays a Wild Draw Four whenever it can, names blue, else the first legal action."""

    def act(self, observations, masks):
        mask = masks[0]
        for label in ("play:wild_draw4", "color:blue"):
            if mask[ACTION_LABELS.index(label)]:
                return np.array([ACTION_LABELS.index(label)])
        return np.array([int(np.flatnonzero(mask)[0])])


def test_a_challenge_shows_the_person_the_bluffers_hand():
    hands = [["yellow:1", "yellow:2", "yellow:3", "green:4", "green:5", "blue:6", "blue:7"],
             ["wild_draw4", "red:3", "red:8", "green:1", "green:2", "yellow:9", "blue:9"]]
    deck = stacked_deck(2, dealer=0, hands=hands, starter="red:5")
    engine = VectorEngine(1, 2, seed=0, auto_reset=False, episode="match")
    answers = iter(["challenge", "q"])
    out = io.StringIO()
    table = TerminalMatch([HUMAN, "bluffer"], engine, {1: _Bluffer()}, seed=0, out=out, ask=lambda prompt: next(answers))
    assert table.play(options={"deck": deck, "dealer": 0}) == "quit"
    text = out.getvalue()
    assert "player_1 played a Wild Draw Four on you: challenge it, or accept and draw 4" in text
    assert "player_1 challenged" not in text and "player_0 challenged player_1: guilty" in text
    shown = "player_1's hand, shown to you by your challenge: red:3 red:8 yellow:9 green:1 green:2 blue:9"
    assert shown in text
    assert text.index(shown) > text.index("guilty")
    record = table.record()
    assert record["outcome"] == "unfinished" and record["rounds"][0]["decisions"][-1] == [0, "challenge"]


def test_a_record_that_cannot_be_saved_after_the_game_goes_to_a_new_temporary_file(tmp_path, monkeypatch, capsys):
    import hpuno_env.records
    from hpuno_env.records import save_record

    calls = []

    def failing_once(record, path):
        calls.append(path)
        if len(calls) == 1:
            raise PermissionError(13, "Permission denied")
        save_record(record, path)

    monkeypatch.setattr(hpuno_env.records, "save_record", failing_once)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the person leaves at once
    assert play_main(["--opponents", "heuristic", "--seed", "4", "--record", str(tmp_path / "game.json")]) == 0
    out = capsys.readouterr().out
    assert "Could not save the record to" in out and "Permission denied" in out
    fallback = calls[1]
    assert fallback != calls[0] and f"Game record saved to {fallback}" in out and load_record(fallback)["seed"] == 4
    os.unlink(fallback)


def test_the_search_player_plays_under_the_house_rules_and_the_game_is_saved(tmp_path):
    """Its worlds are dealt from the game's deck (the classic deck has no Sorting Hat) and follow its rules; the
    person is told what each house-rules decision is."""
    for rule in ("deck=classic", "stacking=mixed", "jump_in=true", "seven_zero=true"):
        path = tmp_path / f"{rule.replace('=', '-')}.json"
        played = run_play("--players", 2, "--opponents", "search", "--rule", rule, "--rule", "target_score=50", "--seed", 3,
                          "--record", path, stdin="1\n" * 400)
        assert played.returncode == 0 and "Traceback" not in played.stderr, played.stderr
        record = load_record(path)
        name, value = rule.split("=")
        assert str(record["options"][name]).lower() == value
        assert sum(len(entry["decisions"]) for entry in record["rounds"]) > 20


def test_an_agent_trained_under_other_rules_is_named_in_a_warning(tmp_path):
    played = run_play("--players", 2, "--opponents", "ppo_2p", "--rule", "stacking=mixed", "--record", tmp_path / "r.json",
                      stdin="q\n")
    assert played.returncode == 0
    assert "warning: agent" in played.stderr and "stacking='mixed' (trained with 'none')" in played.stderr
    same = run_play("--players", 2, "--opponents", "ppo_2p", "--record", tmp_path / "s.json", stdin="q\n")
    assert "warning" not in same.stderr


def test_games_started_in_the_same_second_get_their_own_default_record(tmp_path, monkeypatch, capsys):
    import time

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time, "strftime", lambda pattern: "hpuno-game-20261206-120000")  # both in the same second
    for _ in range(2):
        monkeypatch.setattr(sys, "stdin", io.StringIO(""))
        assert play_main(["--opponents", "random", "--seed", "1"]) == 0
    saved = sorted(path.name for path in (tmp_path / "runs" / "games").iterdir())
    assert saved == ["hpuno-game-20261206-120000-2.json", "hpuno-game-20261206-120000.json"]
    assert "already exists" not in capsys.readouterr().err
