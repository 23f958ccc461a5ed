"""Game records (hpuno_env.records): recorded games replay exactly; bad records are clear errors.

The main test records every game slot of a batch over all player counts and
several option sets, replays each record in a fresh 1-game engine and
compares, after the deal and after every decision, the whole engine state of
the game (every array ``game_state()`` is read from, plus the generator, the
round's deck and the step's events) through a fingerprint, and the
``game_state()`` dicts themselves for some of the games. The play mixes
uniform choices (draws, keeps: long rounds that run the draw pile out and
reshuffle) with random plays (rounds that end).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from hpuno_env import VectorEngine, kernel
from hpuno_env.cards import DRAW, KEEP, UNO
from hpuno_env.records import Recorder, Replay, check_record, load_record, previous_generator_state, replay, save_record
from hpuno_env.scenarios import stacked_deck

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Every field of the engine state but two that hold leftovers of earlier games in a
# slot (the last reshuffle's pile, the dealer draw's deck), which no replay can know.
FINGERPRINT_FIELDS = [name for name in kernel.EngineState._fields if name not in ("reshuffled", "scratch_deck", "events")]


_WEIGHTS: dict[int, np.ndarray] = {}


def fingerprints(engine: VectorEngine) -> np.ndarray:
    """(num_games,) uint64: a random linear hash of each game's whole state and this step's events.

    Two states that differ anywhere hash alike with probability about 2**-64."""
    state, games = engine.state, engine.num_games
    logged = np.arange(kernel.MAX_EVENTS)[None, :, None] < state.event_count[:, None, None]
    arrays = [getattr(state, name) for name in FINGERPRINT_FIELDS] + [np.where(logged, state.events, 0)]
    flat = np.concatenate([array.reshape(games, -1).astype(np.int64) for array in arrays], axis=1).view(np.uint64)
    if flat.shape[1] not in _WEIGHTS:
        _WEIGHTS[flat.shape[1]] = np.random.default_rng(flat.shape[1]).integers(0, 2**63, flat.shape[1], dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    return flat @ _WEIGHTS[flat.shape[1]]  # wraps mod 2**64, as a hash should


def choose(rng: np.random.Generator, masks: np.ndarray, uniform_share: float) -> np.ndarray:
    """Per game: with probability uniform_share any legal action, else a random play when
    there is one (no draw, keep or uno), else any legal action."""
    plays = masks.copy()
    plays[:, [DRAW, KEEP, UNO]] = False
    use_plays = plays.any(axis=1) & (rng.random(len(masks)) >= uniform_share)
    candidates = np.where(use_plays[:, None], plays, masks)
    return (rng.random(masks.shape) * candidates).argmax(axis=1)


def play_and_record(num_players, games, seed, uniform_share=0.05, keep_states=0, **options):
    """One game per slot, every slot recorded; returns (records, fingerprints per slot,
    game_state lists of the first keep_states slots)."""
    engine = VectorEngine(games, num_players, seed=seed, auto_reset=False, **options)
    engine.reset()
    recorders = [Recorder(engine, g, seed=seed) for g in range(games)]
    for recorder in recorders:
        recorder.after_reset()
    prints = [[value] for value in fingerprints(engine)]
    states = [[engine.game_state(g)] for g in range(keep_states)]
    rng = np.random.default_rng(seed)
    while (engine.current_player >= 0).any():
        playing = engine.current_player >= 0
        actions = np.where(playing, choose(rng, engine.legal_mask(), uniform_share), -1)
        engine.step(actions, partial=True)
        now = fingerprints(engine)
        for g in np.flatnonzero(playing):
            recorders[g].after_step(actions)
            prints[g].append(now[g])
            if g < keep_states:
                states[g].append(engine.game_state(g))
    records = [recorder.records[0] for recorder in recorders]
    assert all(len(recorder.records) == 1 for recorder in recorders)
    return records, prints, states


# (players, games, options): about 2,000 games over every player count; max_turns keeps
# the big tables' rounds (thousands of decisions under random play) affordable.
CONFIGS = [
    (2, 300, {}),
    (3, 150, {"uno_catch": "off"}),
    (4, 80, {"uno_catch": "always", "uno_penalty": 4, "max_turns": 800}),
    (5, 60, {"wd4_bluffing": False, "max_turns": 400}),
    (6, 8, {"episode": "match", "target_score": 300, "max_turns": 2000}),
    (7, 30, {"reward": "points", "gryffindor_color": "blue", "max_turns": 1000}),
    (8, 200, {"max_turns": 60}),
    (9, 40, {"voluntary_draw": False, "two_player_reverse_skips": False, "max_turns": 500}),
    (10, 8, {"max_turns": 3000}),
    (2, 40, {"episode": "match", "target_score": 150, "scoring": "lowest", "reward": "points"}),
    (4, 24, {"episode": "match", "target_score": 80, "max_turns": 150}),
    (3, 600, {"max_turns": 12}),
]
@pytest.mark.parametrize("num_players, games, options", CONFIGS, ids=[f"{p}p-{sorted(o.items())}" for p, _, o in CONFIGS])
def test_replay_rebuilds_every_state(num_players, games, options):
    records, prints, states = play_and_record(num_players, games, seed=num_players * 7 + len(options), keep_states=4, **options)
    chance = {"reshuffles": 0, "wd4_returns": 0, "rounds": 0}
    for slot, record in enumerate(records):
        record = json.loads(json.dumps(record))  # what a file gives back
        replaying = Replay(record)
        replayed = []
        for _ in replaying:
            replayed.append(fingerprints(replaying.engine)[0])
            kinds = [event[0] for event in replaying.engine.events(0)]
            chance["reshuffles"] += kinds.count(kernel.EV_RESHUFFLE)
            chance["wd4_returns"] += kinds.count(kernel.EV_WD4_RETURN)
            chance["rounds"] += kinds.count(kernel.EV_NEW_ROUND)
        assert replayed == prints[slot], f"slot {slot} diverges at step {next(i for i, (a, b) in enumerate(zip(replayed, prints[slot])) if a != b)}"
        if slot < len(states):
            assert list(replay(record)) == states[slot]
    assert chance["rounds"] >= games
    if "max_turns" not in options or options["max_turns"] > 12:
        assert chance["reshuffles"] > 0  # the draw pile ran out and chance mid-round was replayed
    if options.get("episode") == "match":
        assert chance["rounds"] > games  # later rounds, dealt by the replaying engine, were checked
        assert any(record["outcome"] == "terminated" for record in records)


def test_every_outcome_and_the_starting_wild_draw_four_are_replayed():
    """Many short games: a starting Wild Draw Four (put back at a random place) shows up
    often enough over 600 deals; truncated and finished records both replay."""
    records, prints, _ = play_and_record(3, 600, seed=3, uniform_share=0.0, max_turns=40)
    returned = 0
    for slot, record in enumerate(records):
        replaying = Replay(record)
        replayed = []
        for _ in replaying:
            replayed.append(fingerprints(replaying.engine)[0])
            returned += sum(event[0] == kernel.EV_WD4_RETURN for event in replaying.engine.events(0))
        assert replayed == prints[slot]
    assert returned >= 5
    assert {record["outcome"] for record in records} == {"terminated", "truncated"}


def test_stacked_starting_wild_draw_fours_replay():
    deck = stacked_deck(4, dealer=1, starter="wild_draw4", draw_pile=["wild_draw4", "wild_draw4", "red:5"])
    engine = VectorEngine(1, 4, seed=11, auto_reset=False)
    recorder = Recorder(engine)
    engine.reset(options={"deck": deck, "dealer": 1})
    recorder.after_reset()
    assert sum(event[0] == kernel.EV_WD4_RETURN for event in engine.events(0)) >= 3
    states = [engine.game_state(0)]
    rng = np.random.default_rng(0)
    for _ in range(30):
        actions = choose(rng, engine.legal_mask(), 0.0)
        engine.step(actions)
        recorder.after_step(actions)
        states.append(engine.game_state(0))
    record = recorder.current_record()
    assert record["rounds"][0]["deck"] == deck and record["outcome"] == "unfinished"
    assert list(replay(record)) == states


def test_generator_stepped_back_undoes_the_kernel():
    """A reshuffle of n cards draws n - 1 numbers: stepping the state after it back
    n - 1 times gives the state before (checked on real kernel steps)."""
    engine = VectorEngine(64, 6, seed=5, auto_reset=False)
    engine.reset()
    rng = np.random.default_rng(5)
    checked = 0
    while checked < 20 and (engine.current_player >= 0).any():
        before = engine.state.rng.copy()
        playing = engine.current_player >= 0
        engine.step(np.where(playing, choose(rng, engine.legal_mask(), 0.5), -1), partial=True)
        for g in np.flatnonzero(playing):
            events = engine.events(g)
            draws = sum(a - 1 for kind, a, _, _ in events if kind == kernel.EV_RESHUFFLE)
            if draws and not any(kind == kernel.EV_NEW_ROUND for kind, *_ in events):
                words = engine.generator_state(g)
                for _ in range(draws):
                    words = previous_generator_state(words)
                assert words == before[g].tolist()
                checked += 1
    assert checked >= 20


def test_recorder_on_a_running_auto_reset_engine():
    """Attached mid-game, a recorder starts at the slot's next fresh game and keeps
    max_records games; each replays as the engine played it."""
    engine = VectorEngine(8, 2, seed=9, auto_reset=True)
    engine.reset()
    rng = np.random.default_rng(9)
    for _ in range(7):
        engine.step(choose(rng, engine.legal_mask(), 0.0))
    recorder = Recorder(engine, game=5, seed=9, players=["a", "b"], max_records=3)
    states, recorded = [], []
    while not recorder.done:
        actions = choose(rng, engine.legal_mask(), 0.1)
        _, terminated, truncated = engine.step(actions)
        was_recording = recorder.current_record() is not None
        recorder.after_step(actions)
        if was_recording:
            # The state after a game's last step is the next game's (auto-reset).
            states.append(None if terminated[5] or truncated[5] else engine.game_state(5))
            if terminated[5] or truncated[5]:
                recorded.append(states)
                states = []
        if recorder.current_record() is not None and not states:
            states = [engine.game_state(5)]
    assert len(recorder.records) == 3 and recorder.current_record() is None
    for record, expected in zip(recorder.records, recorded):
        assert record["players"] == ["a", "b"] and record["slot"] == 5 and record["seed"] == 9
        got = list(replay(record))
        assert len(got) == len(expected)
        assert all(e is None or g == e for g, e in zip(got, expected))
        assert got[-1]["phase"] == "over"


def test_recorder_refuses_a_missed_step_and_bad_arguments():
    engine = VectorEngine(2, 3, seed=1, auto_reset=False)
    engine.reset()
    recorder = Recorder(engine, game=1)
    recorder.after_reset(games=[1])
    actions = choose(np.random.default_rng(0), engine.legal_mask(), 0.0)
    engine.step(actions)
    engine.step(choose(np.random.default_rng(1), engine.legal_mask(), 0.0))
    with pytest.raises(RuntimeError, match="missed a step"):
        recorder.after_step(actions)
    with pytest.raises(ValueError, match="game must be a slot"):
        Recorder(engine, game=2)
    with pytest.raises(TypeError, match="VectorEngine"):
        Recorder("engine")
    with pytest.raises(ValueError, match="players"):
        Recorder(engine, players=["only one"])
    with pytest.raises(ValueError, match="max_records"):
        Recorder(engine, max_records=0)


def test_generator_state_setter_checks_its_input():
    engine = VectorEngine(2, 2, seed=0)
    with pytest.raises(ValueError, match="generator state"):
        engine.set_generator_state(0, [0, 0, 0, 0])
    with pytest.raises(ValueError, match="generator state"):
        engine.set_generator_state(0, [1, 2, 3, 2**32])
    with pytest.raises(ValueError, match="generator state"):
        engine.set_generator_state(0, [1, 2, 3])
    with pytest.raises(ValueError, match="game must be an index"):
        engine.set_generator_state(2, [1, 2, 3, 4])
    engine.set_generator_state(1, [1, 2, 3, 4])
    assert engine.generator_state(1) == [1, 2, 3, 4]
    assert engine.generator_state(0) != [0, 0, 0, 0]  # the other game got its own stream


# ---------------------------------------------------------------- bad records


@pytest.fixture(scope="module")
def match_record():
    """A 3-player match of several rounds, finished."""
    records, _, _ = play_and_record(3, 1, seed=21, uniform_share=0.0, episode="match", target_score=150)
    record = records[0]
    assert len(record["rounds"]) >= 2 and record["outcome"] == "terminated"
    return record


def broken(record, change):
    copy = json.loads(json.dumps(record))
    change(copy)
    return copy


def replay_all(record):
    for _ in Replay(record):
        pass


def _illegal_label(record):
    seat, label = record["rounds"][0]["decisions"][0]
    record["rounds"][0]["decisions"][0] = [seat, "challenge"]


def _swap_dealt_cards(record):
    """Take from the first card player's hand, as dealt, every copy of the card it plays
    (swapped with cards from the deck's bottom): a deck that does not fit the decisions."""
    first = record["rounds"][0]
    deck, dealer, players = first["deck"], first["dealer"], record["num_players"]
    seat, label = next(decision for decision in first["decisions"] if decision[1].startswith("play:"))
    card = label.removeprefix("play:")
    hand_positions = [r * players + (seat - dealer - 1) % players for r in range(7)]
    bottom = [i for i in range(len(deck) - 1, 0, -1) if deck[i] != card]
    for position in hand_positions:
        if deck[position] == card:
            swap = bottom.pop(0)
            deck[position], deck[swap] = deck[swap], deck[position]


@pytest.mark.parametrize(
    "change, message",
    [
        (_illegal_label, r"round 1, decision 1: challenge is not legal for player_\d here \(legal: "),
        (lambda r: r["rounds"][0]["decisions"][3].__setitem__(0, (r["rounds"][0]["decisions"][3][0] + 1) % 3),
         r"round 1, decision 4: the record has player_\d acting, but it is player_\d's turn"),
        (lambda r: r["rounds"][0]["decisions"].append([0, "draw"]), r"round 1, decision \d+: the round is already over"),
        (lambda r: r["rounds"][-1]["decisions"].pop(), r"record field 'outcome' is 'terminated', but its decisions leave the game unfinished"),
        (lambda r: r["rounds"][0]["decisions"].pop(), r"round 1: its decisions end before the round does"),
        (lambda r: r["rounds"][1]["deck"].reverse(), r"record field 'rounds\[1\].deck': round 2 was dealt otherwise"),
        (lambda r: r["rounds"][1].__setitem__("dealer", (r["rounds"][1]["dealer"] + 1) % 3), r"'rounds\[1\].dealer'"),
        (lambda r: r["rounds"][1]["generator"].__setitem__(0, r["rounds"][1]["generator"][0] ^ 1), r"'rounds\[1\].generator'"),
        (_swap_dealt_cards, r"round 1, decision \d+: "),
    ],
    ids=["illegal action", "wrong seat", "extra decision", "missing last decision", "round cut short",
         "later deck", "later dealer", "later generator", "wrong deck"],
)
def test_inconsistent_records_name_the_decision(match_record, change, message):
    with pytest.raises(ValueError, match=message):
        replay_all(broken(match_record, change))


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda r: r["rounds"][0]["deck"].pop(), r"'rounds\[0\].deck': deck: expected 112 cards, got 111"),
        (lambda r: r["rounds"][0]["deck"].__setitem__(5, "wild" if r["rounds"][0]["deck"][5] != "wild" else "red:0"),
         r"'rounds\[0\].deck': deck: wrong number of copies"),
        (lambda r: r["rounds"][0]["deck"].__setitem__(0, "purple:7"), r"'rounds\[0\].deck': deck: unknown card labels"),
        (lambda r: r["options"].__setitem__("uno_penalty", -1), r"record field 'options': uno_penalty must be"),
        (lambda r: r["options"].__setitem__("speed", 2), r"record field 'options': unknown rules option"),
        (lambda r: r["options"].pop("max_turns"), r"record field 'options': missing \['max_turns'\]"),
        (lambda r: r.pop("rounds"), r"record: missing field\(s\) \['rounds'\]"),
        (lambda r: r["rounds"][0].pop("generator"), r"'rounds\[0\]': missing field\(s\) \['generator'\]"),
        (lambda r: r["rounds"][0].__setitem__("generator", [0, 0, 0, 0]), r"'rounds\[0\].generator' must be"),
        (lambda r: r["rounds"][0].__setitem__("dealer", 3), r"'rounds\[0\].dealer' must be a seat"),
        (lambda r: r["rounds"][1].__setitem__("round", 5), r"'rounds\[1\].round' must be 2"),
        (lambda r: r["rounds"][0]["decisions"].__setitem__(2, [0, "play:red:99"]), r"'rounds\[0\].decisions\[2\]' \(round 1, decision 3\)"),
        (lambda r: r["rounds"][0]["decisions"].__setitem__(2, [7, "draw"]), r"'rounds\[0\].decisions\[2\]'"),
        (lambda r: r.__setitem__("num_players", 11), r"record field 'num_players'"),
        (lambda r: r.__setitem__("version", 2), r"record field 'version'"),
        (lambda r: r.__setitem__("format", "uno"), r"record field 'format'"),
        (lambda r: r.__setitem__("outcome", "won"), r"record field 'outcome' must be one of"),
        (lambda r: r.__setitem__("rounds", []), r"'rounds' must be a non-empty list"),
        (lambda r: r.__setitem__("players", ["a"]), r"record field 'players'"),
    ],
)
def test_malformed_records_name_the_field(match_record, change, message):
    record = broken(match_record, change)
    with pytest.raises(ValueError, match=message):
        check_record(record)
    with pytest.raises(ValueError, match=message):
        Replay(record)


def test_files_round_trip_and_bad_files_are_named(match_record, tmp_path):
    path = tmp_path / "game.json"
    save_record(match_record, path)
    assert load_record(path) == match_record
    assert list(replay(load_record(path)))[-1]["phase"] == "over"
    umask = os.umask(0o022)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # readable as any new file is, not owner-only
    assert os.listdir(tmp_path) == ["game.json"]  # no temporary file left
    text = path.read_text()
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match=r"cut\.json: not valid JSON, truncated or corrupt"):
        load_record(tmp_path / "cut.json")
    (tmp_path / "list.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"list\.json: record must be a JSON object"):
        load_record(tmp_path / "list.json")
    with pytest.raises(ValueError, match="num_players"):
        save_record(broken(match_record, lambda r: r.__setitem__("num_players", 1)), tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists()
    with pytest.raises(ValueError, match="record must be a JSON object"):
        check_record("not a record")
    replaying = Replay(match_record)
    list(replaying)
    with pytest.raises(RuntimeError, match="stepped through once"):
        iter(replaying)


# ---------------------------------------------------------------- the command


def run_replay(*arguments, stdin=""):
    return subprocess.run(
        [sys.executable, "-m", "hpuno_env.replay", *map(str, arguments)],
        input=stdin, capture_output=True, text=True, cwd=REPO, timeout=120,
    )


def test_replay_command(match_record, tmp_path):
    short = broken(match_record, lambda r: None)
    short["rounds"] = short["rounds"][:1]
    short["rounds"][0]["decisions"] = short["rounds"][0]["decisions"][:6]
    short["outcome"] = "unfinished"
    path = tmp_path / "short.json"
    save_record(short, path)

    shown = run_replay(path, "--all", "--png", tmp_path / "frames", "--gif", tmp_path / "out" / "game.gif")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count("== round 1") == 7  # the deal and six decisions
    seat, label = short["rounds"][0]["decisions"][5]
    assert f"round 1, decision 6: player_{seat} chose {label}" in shown.stdout
    assert "end of the record: unfinished" in shown.stdout
    assert sorted(os.listdir(tmp_path / "frames")) == [f"step_{i:05d}.png" for i in range(7)]
    from PIL import Image

    with Image.open(tmp_path / "out" / "game.gif") as gif:
        assert gif.n_frames == 7

    stepping = run_replay(path, stdin="\n\nq\n")  # two steps, then quit
    assert stepping.returncode == 0, stepping.stderr
    assert stepping.stdout.count("== round 1") == 3 and "stopped" in stepping.stdout

    (tmp_path / "cut.json").write_text(path.read_text()[:100])
    failed = run_replay(tmp_path / "cut.json", "--all")
    assert failed.returncode == 2 and "not valid JSON" in failed.stderr

    bad = broken(short, lambda r: r["rounds"][0]["decisions"].__setitem__(2, [r["rounds"][0]["decisions"][2][0], "challenge"]))
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    failed = run_replay(tmp_path / "bad.json", "--all")
    assert failed.returncode == 1 and "round 1, decision 3: challenge is not legal" in failed.stderr

    assert run_replay("--help").returncode == 0

    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    for flags, message in ((["--png", blocker], "--png: "), (["--gif", blocker / "game.gif"], "--gif: "), (["--gif", tmp_path], "--gif: "),
                           (["--gif", tmp_path / "game.png"], "must end with .gif")):
        failed = run_replay(path, *flags)
        assert failed.returncode == 2 and message in failed.stderr and "Traceback" not in failed.stderr, failed.stderr
    assert blocker.read_text() == "in the way"


@pytest.mark.parametrize("viewer", [0, 2])
def test_a_replay_of_a_seats_view_names_only_the_draws_that_seat_saw(viewer):
    from hpuno_env.replay import frames

    records, _, _ = play_and_record(3, 6, seed=4, uniform_share=0.5)
    named = 0
    for record in records:
        for _title, _state, shown, history in frames(record, viewer):
            assert shown == f"player_{viewer}"
            for line in history:
                who, _, rest = line.strip().partition(" drew ")
                if rest and not rest[0].isdigit() and rest not in ("a card", "nothing"):
                    assert who == shown, f"{shown}'s view was told {line!r}"
                    named += 1
    assert named > 0
