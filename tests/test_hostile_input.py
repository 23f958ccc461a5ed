"""Nothing a user hands the project can exhaust the machine, corrupt a running env or lose finished work.

Crafted agent files and records, special files (FIFOs, /dev/zero), deeply
nested or huge-number JSON, opponents that fail mid-step, Ctrl-C and closed
stdin in the commands, and bad numbers on the command line. The tests that
could exhaust memory or hang run in a subprocess under an address-space limit
and a timeout, so that a regression fails instead of taking CI down.
"""

from __future__ import annotations

import gc
import json
import os
import struct
import subprocess
import sys
import re
import textwrap

import numpy as np
import pytest

import agents
import hpuno_env
from hpuno_env._reading import parse_json
from hpuno_env.records import load_record

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED_2P = os.path.join(ROOT, "agents", "weights", "ppo_2p.safetensors")
MEMORY_LIMIT = 3 * 2**30  # address space for a bounded subprocess: torch and numba need about 1.5 GB of it
TIME_LIMIT = 120  # seconds: a loaded two-core machine imports torch in about 10


def run_bounded(code: str, *args: str, memory: int = MEMORY_LIMIT, timeout: float = TIME_LIMIT, stdin=None) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh Python under an address-space limit and a timeout (a regression fails, never hangs)."""
    prelude = textwrap.dedent(f"""
        import resource, sys
        resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
        sys.path.insert(0, {ROOT!r})
    """)
    try:
        return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code), *args], capture_output=True, text=True,
                              timeout=timeout, cwd=ROOT, stdin=stdin if stdin is not None else subprocess.DEVNULL)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"timed out after {timeout} s (hung or too slow): {error.stderr!r}")


LOAD_AGENT = """
import agents
try:
    agents.load(sys.argv[1], num_players=2)
except ValueError as error:
    print("VALUE_ERROR", error)
else:
    print("LOADED")
"""


def shipped_header() -> tuple[dict, bytes]:
    """(header, data) of the shipped 2-player agent file."""
    with open(SHIPPED_2P, "rb") as file:
        raw = file.read()
    size = struct.unpack("<Q", raw[:8])[0]
    return json.loads(raw[8 : 8 + size]), raw[8 + size :]


def write_safetensors(path, header: dict, data: bytes) -> str:
    text = json.dumps(header).encode()
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(text)) + text + data)
    return str(path)


def crafted_agent(tmp_path, name="crafted.safetensors", network_changes=None, metadata_text=None) -> str:
    """The shipped agent with its metadata's network section changed (the tensors as they are)."""
    header, data = shipped_header()
    metadata = json.loads(header["__metadata__"]["hpuno_agent"])
    metadata["network"].update(network_changes or {})
    header["__metadata__"]["hpuno_agent"] = metadata_text if metadata_text is not None else json.dumps(metadata)
    return write_safetensors(tmp_path / name, header, data)


def tiny_bomb(tmp_path, hidden_sizes: list[int]) -> str:
    """A small file whose metadata and tensor shapes both claim a huge network (the data holds a few bytes)."""
    header, _ = shipped_header()
    metadata = json.loads(header["__metadata__"]["hpuno_agent"])
    metadata["network"]["hidden_sizes"] = hidden_sizes
    width, tensors = metadata["network"]["input_size"], {}
    for index, size in enumerate(hidden_sizes):
        tensors[f"policy_net.{2 * index}.weight"] = [size, width]
        tensors[f"policy_net.{2 * index}.bias"] = [size]
        width = size
    tensors["action_net.weight"], tensors["action_net.bias"] = [75, width], [75]
    tensors["obs_scale"] = tensors["obs_shift"] = [metadata["network"]["input_size"]]
    crafted = {"__metadata__": {"hpuno_agent": json.dumps(metadata)}}
    for name, shape in tensors.items():
        crafted[name] = {"dtype": "F32", "shape": shape, "data_offsets": [0, 4]}
    return write_safetensors(tmp_path / "bomb.safetensors", crafted, b"\0" * 4)


# ------------------------------------------------------------ 1. memory bombs in agent files


@pytest.mark.parametrize("hidden_sizes", [[65536, 65536], [16384, 16384], [1] * 100000], ids=["65536x2", "16384x2", "1x100000"])
def test_an_agent_file_claiming_a_huge_network_is_refused_before_anything_is_built(tmp_path, hidden_sizes):
    # the shipped tensors under a metadata claiming the huge network; then a file whose header claims it too
    for path in (crafted_agent(tmp_path, network_changes={"hidden_sizes": hidden_sizes}), tiny_bomb(tmp_path, hidden_sizes)):
        result = run_bounded(LOAD_AGENT, path, timeout=60)
        assert "VALUE_ERROR" in result.stdout, result.stderr[-2000:]
        line = result.stdout.strip()
        assert "\n" not in line and len(line) < 600, line[:2000]  # one line, not a 6.7 MB error
        # the field at fault: the network's layers (or, for 100,000 layers in the header, the header's size)
        assert path in line and ("network.hidden_sizes" in line or "header claims" in line), line


def test_tensor_shapes_and_metadata_are_compared_before_building(tmp_path):
    header, data = shipped_header()
    header["action_net.bias"]["shape"] = [76]  # the header and metadata disagree
    path = write_safetensors(tmp_path / "disagree.safetensors", header, data)
    with pytest.raises(ValueError, match=r"disagree\.safetensors.*action_net\.bias.*\(76,\).*\(75,\)"):
        agents.load(path, num_players=2)


# ------------------------------------------------------------ 2. special files


def special_files(tmp_path) -> dict:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    link = tmp_path / "zero.safetensors"
    os.symlink("/dev/zero", link)
    return {"fifo": str(fifo), "/dev/zero": "/dev/zero", "symlink to /dev/zero": str(link), "folder": str(tmp_path)}


def test_agent_load_refuses_fifos_devices_and_folders_in_bounded_time_and_memory(tmp_path):
    for kind, path in special_files(tmp_path).items():
        result = run_bounded(LOAD_AGENT, path, timeout=60)
        assert "VALUE_ERROR" in result.stdout and "not a regular file" in result.stdout, (kind, result.stdout, result.stderr[-1500:])


READ_RECORD = """
from hpuno_env.records import load_record
try:
    load_record(sys.argv[1])
except ValueError as error:
    print("VALUE_ERROR", error)
"""


def test_records_and_replay_refuse_special_files_in_bounded_time_and_memory(tmp_path):
    for kind, path in special_files(tmp_path).items():
        result = run_bounded(READ_RECORD, path, timeout=60)
        assert "VALUE_ERROR" in result.stdout and "not a regular file" in result.stdout, (kind, result.stdout, result.stderr[-1500:])
        replay = run_bounded("from hpuno_env.replay import main; sys.exit(main(sys.argv[1:]))", path, "--all", timeout=60)
        assert replay.returncode == 2 and "not a regular file" in replay.stderr, (kind, replay.stderr[-1500:])


def test_an_oversized_record_is_refused_without_reading_it(tmp_path, monkeypatch):
    import hpuno_env.records as records

    path = tmp_path / "big.json"
    path.write_text(" " * 2000 + "{}")
    monkeypatch.setattr(records, "MAX_RECORD_BYTES", 1000)
    with pytest.raises(ValueError, match=r"big\.json is 2,002 bytes, more than the 1,000"):
        load_record(path)


# ------------------------------------------------------------ 3. malformed files: one clear line naming file and field


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_deeply_nested_json_is_a_value_error_naming_the_source_everywhere(tmp_path):
    from agents._cli import rules_from_json

    text = '{"a": ' + deep(200000) + "}"
    record = tmp_path / "deep.json"
    record.write_text(text)
    with pytest.raises(ValueError, match=r"deep\.json: JSON nested 200001 levels deep"):
        load_record(record)
    with pytest.raises(ValueError, match="nested 200001 levels deep"):
        rules_from_json(text)
    agent = crafted_agent(tmp_path, metadata_text='{"format": ' + deep(100000) + "}")
    with pytest.raises(ValueError, match=r"crafted\.safetensors.*nested 100001 levels deep"):
        agents.load(agent, num_players=2)
    from hpuno_env.replay import main

    with pytest.raises(SystemExit) as exit_info:
        main([str(record), "--all"])
    assert exit_info.value.code == 2


def test_huge_integers_nan_and_infinity_are_named_with_their_field():
    with pytest.raises(ValueError, match=r"^here: field 'rounds\[0\]\.generator\[1\]' is an integer of 5000 digits"):
        parse_json('{"rounds": [{"generator": [1, ' + "9" * 5000 + "]}]}", "here")
    with pytest.raises(ValueError, match=r"^here: field 'uno_penalty' is NaN"):
        parse_json('{"uno_penalty": NaN}', "here")
    with pytest.raises(ValueError, match=r"^here: field 'x' is 1e999, too large"):
        parse_json('{"x": 1e999}', "here")
    assert parse_json('{"a": [1, 2.5, "x", null, true]}', "here") == {"a": [1, 2.5, "x", None, True]}


def saved_record(tmp_path) -> tuple[dict, str]:
    from hpuno_env.records import Recorder, save_record

    engine = hpuno_env.VectorEngine(1, 2, seed=3, auto_reset=False, max_turns=20)
    recorder = Recorder(engine, seed=3)
    engine.reset(seed=3)
    recorder.after_reset()
    while engine.state.phase[0] != hpuno_env.kernel.OVER:
        action = np.array([np.flatnonzero(engine.legal_mask()[0])[0]])
        engine.step(action)
        recorder.after_step(action)
    record = recorder.records[-1]
    path = str(tmp_path / "game.json")
    save_record(record, path)
    return record, path


def test_a_record_with_a_list_as_a_decision_label_is_a_value_error_naming_the_decision(tmp_path):
    record, _ = saved_record(tmp_path)
    record["rounds"][0]["decisions"][0][1] = ["play:red:7"]
    path = tmp_path / "bad_label.json"
    path.write_text(json.dumps(record))
    with pytest.raises(ValueError, match=r"bad_label\.json: record field 'rounds\[0\]\.decisions\[0\]'"):
        load_record(path)


def test_a_record_with_a_huge_seed_names_the_file_and_field(tmp_path):
    record, _ = saved_record(tmp_path)
    text = json.dumps(record).replace('"seed": 3', '"seed": ' + "7" * 5000)
    path = tmp_path / "huge.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=r"huge\.json: field 'seed' is an integer of 5000 digits"):
        load_record(path)


@pytest.mark.parametrize("changes, field", [
    ({"activation": ["tanh"]}, "activation"),
    ({"input_size": 307.0}, "input_size"),
    ({"num_actions": True}, "num_actions"),
    ({"hidden_sizes": [256, 256.0]}, "hidden_sizes"),
    ({"hidden_sizes": "256,256"}, "hidden_sizes"),
])
def test_agent_metadata_of_the_wrong_type_names_the_field(tmp_path, changes, field):
    header, _ = shipped_header()
    network = json.loads(header["__metadata__"]["hpuno_agent"])["network"]
    if "input_size" in changes:
        changes = {"input_size": float(network["input_size"])}
    path = crafted_agent(tmp_path, network_changes=changes)
    with pytest.raises(ValueError, match=rf"crafted\.safetensors.*network\.{field}") as error:
        agents.load(path, num_players=2)
    assert "\n" not in str(error.value) and len(str(error.value)) < 600


def test_agent_metadata_with_a_huge_integer_names_the_file_and_field(tmp_path):
    header, _ = shipped_header()
    text = header["__metadata__"]["hpuno_agent"].replace('"format_version": 1', '"format_version": ' + "1" * 5000)
    path = crafted_agent(tmp_path, metadata_text=text)
    with pytest.raises(ValueError, match=r"crafted\.safetensors.*field 'format_version' is an integer of 5000 digits"):
        agents.load(path, num_players=2)


# ------------------------------------------------------------ 4. an opponent that fails mid-step


class FailingOpponent:
    """Plays legal moves, then on its ``fail_on``-th call raises, is interrupted, or answers an illegal action."""

    def __init__(self, how: str, fail_on: int = 6):
        self.how, self.fail_on, self.calls = how, fail_on, 0
        self.rng = np.random.default_rng(0)

    def act(self, observations, action_masks):
        self.calls += 1
        masks = np.asarray(action_masks, bool)
        if self.calls == self.fail_on:
            if self.how == "raise":
                raise RuntimeError("the opponent's network failed")
            if self.how == "interrupt":
                raise KeyboardInterrupt
            return np.where(masks[:, 0], 1, 0) if self.how == "illegal" else None  # an action its masks forbid
        return (self.rng.random(masks.shape) * masks).argmax(axis=1)


def vector_envs(opponent, num_envs):
    from hpuno_env import HPUnoGymVectorEnv, HPUnoVecEnv

    sb3 = HPUnoVecEnv(num_envs=num_envs, num_players=3, opponent=opponent, seed=1)
    gym = HPUnoGymVectorEnv(num_envs=num_envs, num_players=3, opponent=opponent, seed=1)
    return {
        "sb3": (sb3, lambda: sb3.reset(), lambda: sb3.action_masks(), lambda actions: (sb3.step_async(actions), sb3.step_wait())),
        "gymnasium": (gym, lambda: gym.reset(seed=1)[1]["action_mask"].astype(bool),
                      lambda: gym.batch.masks, lambda actions: gym.step(actions)),
    }


@pytest.mark.parametrize("how, error", [("raise", RuntimeError), ("interrupt", KeyboardInterrupt), ("illegal", ValueError)])
@pytest.mark.parametrize("num_envs", [1, 4])
def test_an_opponent_failing_mid_step_leaves_the_env_refusing_until_reset(how, error, num_envs):
    for name in ("sb3", "gymnasium"):
        opponent = FailingOpponent(how)
        env, reset, masks, step = vector_envs(opponent, num_envs)[name]
        reset()
        with pytest.raises(error) as raised:
            for _ in range(50):
                step(np.array([np.flatnonzero(row)[0] for row in masks()]))
        if how == "illegal":  # the policy at fault is named
            assert "opponent FailingOpponent" in str(raised.value) and "illegal" in str(raised.value)
        elif how == "raise":
            assert any("opponent FailingOpponent" in note for note in getattr(raised.value, "__notes__", [])), name
        with pytest.raises(ValueError, match=r"call reset\(\)"):  # not "illegal action", nor a move for the wrong seat
            step(np.zeros(num_envs, np.int64))
        if name == "sb3":
            with pytest.raises(ValueError, match=r"call reset\(\)"):
                masks()
        opponent.fail_on = -1
        reset()
        for _ in range(20):  # a fresh start plays on
            step(np.array([np.flatnonzero(row)[0] for row in masks()]))


def test_an_illegal_learner_action_is_refused_and_the_env_plays_on():
    env, reset, masks, step = vector_envs(FailingOpponent("raise", fail_on=-1), 2)["sb3"]
    reset()
    with pytest.raises(ValueError, match="illegal action"):
        step(np.array([np.flatnonzero(~row)[0] for row in masks()]))
    assert env.batch.broken is None
    step(np.array([np.flatnonzero(row)[0] for row in masks()]))


class CarelessPolicy:
    """Answers legal actions, then from its ``fail_on``-th call a careless answer; a tripwire turns an evaluation
    that keeps asking (an answer of -1 once stalled its games forever) into a failure instead of a hang."""

    TRIPWIRE = 500  # calls: far more than the few rounds these tests play

    def __init__(self, how: str, fail_on: int = 3):
        self.how, self.fail_on, self.calls = how, fail_on, 0

    def act(self, observations, action_masks):
        self.calls += 1
        if self.calls > self.TRIPWIRE:
            raise RuntimeError(f"act called {self.calls} times after a careless answer: the evaluation loops")
        masks = np.asarray(action_masks, bool)
        legal = masks.argmax(axis=1)
        if self.calls < self.fail_on:
            return legal
        return {
            "idle": np.full(len(masks), -1),
            "floats": legal + 0.7,
            "illegal": (~masks).argmax(axis=1),
            "out of range": np.full(len(masks), 75),
            "bools": legal > 0,
            "wrong shape": legal[:, None],
        }[self.how]


class StepCounter:
    """A ``play_rounds`` observer counting the steps it was shown."""

    def __init__(self):
        self.steps = 0

    def after_reset(self, games):
        pass

    def after_step(self, actions):
        self.steps += 1


CARELESS_NAMED = {"idle": r"-1", "floats": r"\d\.7", "illegal": r"illegal action \d+", "out of range": r"75 \(out of range\)",
                  "bools": r"True|False", "wrong shape": r"shape \(\d+, 1\)"}  # how the message shows the answer


@pytest.mark.parametrize("how", list(CARELESS_NAMED))
@pytest.mark.parametrize("entry", ["play_rounds", "win_rate", "tournament"])
def test_a_careless_policy_answer_is_refused_at_once_naming_policy_row_and_action_in_rounds_and_tournament(entry, how):
    from agents.evaluation import rounds, tournament

    policy = CarelessPolicy(how)
    with pytest.raises(ValueError) as raised:
        if entry == "play_rounds":  # one policy in every seat: each step is one call, so the bad one is step 3
            counter = StepCounter()
            rounds.play_rounds([policy], np.zeros((4, 2), np.int64), 2, seed=0, num_envs=2, observers=lambda engine: [counter])
        elif entry == "win_rate":
            rounds.win_rate(policy, agents.load("random", num_players=2), num_players=2, rounds=4, num_envs=2)
        else:
            tournament.run({"careless": policy, "random": "random"}, num_players=2, rounds=4, num_envs=2)
    message = str(raised.value)
    assert policy.calls == policy.fail_on, "asked again after the careless answer"
    assert "policies[0] (CarelessPolicy)" in message and re.search(CARELESS_NAMED[how], message), message
    if how != "wrong shape":
        assert re.search(r"row \d+, game slot \d+", message), message
    if entry == "play_rounds":
        assert counter.steps == policy.fail_on - 1  # the step with the bad answer was neither played nor shown


# ------------------------------------------------------------ 6. closed stdin is the end of the input


def run_with_stdin_closed(arguments: list[str], timeout: float = TIME_LIMIT) -> subprocess.CompletedProcess:
    command = " ".join(["exec", sys.executable, *arguments, "<&-"])
    try:
        return subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=timeout, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": ROOT})
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"timed out: {error.stderr!r}")


def test_play_with_stdin_closed_saves_its_record(tmp_path):
    path = tmp_path / "game.json"
    result = run_with_stdin_closed(["-m", "agents.play", "--players", "2", "--opponents", "random", "--seed", "1", "--record", str(path)])
    assert result.returncode == 0, result.stderr[-2000:]
    assert "RuntimeError" not in result.stderr and "(end of input)" in result.stdout
    assert load_record(path)["outcome"] == "unfinished"


def test_replay_with_stdin_closed_stops_cleanly(tmp_path):
    _, path = saved_record(tmp_path)
    result = run_with_stdin_closed(["-m", "hpuno_env.replay", path])
    assert result.returncode == 0 and "stopped" in result.stdout, result.stderr[-2000:]


# ------------------------------------------------------------ 5. Ctrl-C keeps finished work


def test_ctrl_c_in_a_tournament_writes_the_finished_tables_marked_partial(tmp_path, monkeypatch, capsys):
    from agents.evaluation import tournament

    real_play_table, calls = tournament._play_table, []

    def interrupted_on_the_third_table(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_play_table(*args, **kwargs)

    monkeypatch.setattr(tournament, "_play_table", interrupted_on_the_third_table)
    out = tmp_path / "t"
    status = tournament.main(["random", "random-play", "heuristic", "--players", "2", "--rounds", "8", "--envs", "8",
                              "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    assert status == 130 and "interrupted after 2 of 3 tables;" in captured.err and "Traceback" not in captured.err
    assert "PARTIAL" in captured.out
    saved = json.loads((out / "results.json").read_text())
    assert saved["partial"] == {"tables_finished": 2, "tables_scheduled": 3}
    assert [table["name"] for table in saved["tables"]] == ["random vs random-play", "random vs heuristic"]
    assert len((out / "results.csv").read_text().splitlines()) == 1 + 4  # two tables, two agents each


def test_ctrl_c_before_any_table_finished_says_so(monkeypatch, capsys):
    from agents.evaluation import tournament

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tournament, "_play_table", interrupted)
    assert tournament.main(["random", "heuristic", "--rounds", "4", "--envs", "4", "--quiet"]) == 130
    assert "nothing to report" in capsys.readouterr().err
    with pytest.raises(KeyboardInterrupt):  # the library call is still a KeyboardInterrupt, carrying its result
        tournament.run(["random", "heuristic"], rounds=4, num_envs=4)


def records_held() -> int:
    """How many game records (dicts of ``hpuno_env.records``' format) this process holds right now."""
    return sum(1 for held in gc.get_objects() if type(held) is dict and held.get("format") == hpuno_env.records.FORMAT)


def test_a_tournament_writing_its_records_holds_one_per_game_slot_however_many_it_records(tmp_path, monkeypatch):
    from agents.evaluation import tournament

    real_save, held_at_each_save = hpuno_env.records.save_record, []

    def counting_save(record, path):
        held_at_each_save.append(records_held() - held_before)
        real_save(record, path)

    monkeypatch.setattr(hpuno_env.records, "save_record", counting_save)
    held_before = records_held()
    # 2 slots and 16-round chunks: 40 records from three chunks, each slot recording 20 games one after another.
    streamed = tournament.run(["heuristic", "random-play"], num_players=2, rounds=40, seed=3, num_envs=2, record=40,
                              records_dir=tmp_path / "records")
    assert len(held_at_each_save) == 40
    assert max(held_at_each_save) <= 2 + 2  # one in progress per slot, and the one being written with its labelled copy
    assert records_held() == held_before  # and none once the run is over
    listing = streamed["records"]
    assert all("record" not in entry for entry in listing)
    assert sorted(path.name for path in (tmp_path / "records").iterdir()) == [entry["file"] for entry in listing]
    kept = tournament.run(["heuristic", "random-play"], num_players=2, rounds=40, seed=3, num_envs=2, record=40)
    assert records_held() - held_before >= 40  # the counting sees records held: returned in memory, all 40 are
    assert [{key: value for key, value in entry.items() if key != "record"} for entry in kept["records"]] == listing
    for entry in kept["records"]:  # the same records either way, as load_record and replay read them
        assert load_record(tmp_path / "records" / entry["file"]) == json.loads(json.dumps(entry["record"]))
    assert {key: streamed[key] for key in ("ranking", "rows")} == {key: kept[key] for key in ("ranking", "rows")}


def test_ctrl_c_in_a_recording_tournament_keeps_the_records_finished_so_far_on_disk(tmp_path, monkeypatch, capsys):
    from agents.evaluation import tournament

    real_save, saved = hpuno_env.records.save_record, []

    def interrupted_on_the_twelfth(record, path):
        if len(saved) == 11:
            raise KeyboardInterrupt
        real_save(record, path)
        saved.append(os.path.basename(path))

    monkeypatch.setattr(hpuno_env.records, "save_record", interrupted_on_the_twelfth)
    out = tmp_path / "t"
    status = tournament.main(["random", "random-play", "heuristic", "--players", "2", "--rounds", "8", "--envs", "2",
                              "--record", "24", "--out", str(out), "--quiet"])  # 8 records per table: all its rounds
    assert status == 130 and "interrupted after 1 of 3 tables;" in capsys.readouterr().err
    on_disk = sorted(path.name for path in (out / "records").iterdir())
    assert on_disk == sorted(saved) and len(on_disk) == 11  # the first table's 8 and 3 of the second's
    report = json.loads((out / "results.json").read_text())
    assert report["partial"]["tables_finished"] == 1 and [entry["file"] for entry in report["records"]] == on_disk
    for entry in report["records"]:
        record = load_record(out / "records" / entry["file"])
        assert record["players"] == entry["players"] and list(hpuno_env.records.replay(record))[-1]["phase"] == "over"


# ------------------------------------------------------------ 8. checked before the long work


def test_a_tournament_too_large_for_memory_is_refused_before_any_seating_is_made():
    result = run_bounded("""
from agents.evaluation import tournament
try:
    tournament.run(["random", "heuristic"], num_players=2, rounds=1_000_000_000)
except ValueError as error:
    print("VALUE_ERROR", error)
""", timeout=60)
    assert "VALUE_ERROR rounds=1,000,000,000" in result.stdout and "at most" in result.stdout, result.stderr[-2000:]
    with pytest.raises(SystemExit) as exit_info:
        from agents.evaluation.tournament import main

        main(["random", "heuristic", "--rounds", "1000000000"])
    assert exit_info.value.code == 2


HUGE_SIZES = """
import agents
from agents.evaluation import tournament
from agents.evaluation.rounds import win_rate
from agents.studies import exploit

random = agents.load("random", 2)
calls = {
    "envs": lambda: exploit.best_response("random", 2, 64, envs=10**9, warm_start_decisions=0),
    "rounds": lambda: exploit.best_response("random", 2, 64, rounds=10**9, warm_start_decisions=0),
    "curve_rounds": lambda: exploit.best_response("random", 2, 64, curve_rounds=10**9, warm_start_decisions=0),
    "curve_points": lambda: exploit.best_response("random", 2, 64, curve_points=10**9, warm_start_decisions=0),
    "warm_start_decisions": lambda: exploit.best_response("random", 2, 64, warm_start_decisions=10**12),
    "duplicate": lambda: tournament.run_duplicate(["heuristic", "random"], "random", rounds=10**9),
    "win_rate": lambda: win_rate(random, random, rounds=10**9),
    "worlds": lambda: agents.load("search", 2, worlds=10**9),
}
for name, call in calls.items():
    try:
        call()
    except ValueError as error:
        print(name, "VALUE_ERROR", error)
"""


def test_sizes_too_large_for_memory_are_refused_before_anything_is_allocated():
    result = run_bounded(HUGE_SIZES, timeout=300)
    said = dict(line.split(" VALUE_ERROR ", 1) for line in result.stdout.splitlines() if " VALUE_ERROR " in line)
    assert said["envs"].startswith("envs must be an int in [1, 4096], got 1000000000"), result.stderr[-2000:]
    assert said["rounds"].startswith("rounds=1,000,000,000 is 2,000,000,000 seat-rounds (2 a round), more than the 20,000,000")
    assert said["curve_rounds"].startswith("curve_rounds=1,000,000,000 is") and "at most 10,000,000" in said["curve_rounds"]
    assert said["curve_points"].startswith("curve_points must be an int in [1, 1000], got 1000000000")
    assert said["warm_start_decisions"].startswith("warm_start_decisions must be an int in [0, 4000000], got 1000000000000")
    assert said["duplicate"].startswith("rounds=1,000,000,000 is 4,000,000,000 seat-rounds (4 a deal, played twice)")
    assert said["win_rate"].startswith("rounds=1,000,000,000 is 2,000,000,000 seat-rounds")
    assert said["worlds"].startswith("worlds must be an int in [2, 4096], got 1000000000")
    assert "MemoryError" not in result.stderr and "Traceback" not in result.stderr


EVERY_STEP_A_CHECKPOINT = """
from agents.studies import exploit


class Model:  # learns as many steps as asked, at once
    num_timesteps = 0

    def learn(self, steps, reset_num_timesteps, callback):
        self.num_timesteps += steps


class Enough(Exception):
    pass


model, saves = Model(), []


def save():
    saves.append(model.num_timesteps)
    if len(saves) == 3:
        raise Enough


try:
    exploit._train(model, 10**12, 4, 1, {"learning_curve": [{"timesteps": 0}], "learn_seconds": 0.0},
                   lambda: {"timesteps": model.num_timesteps}, save)
except Enough:
    print("SAVES", saves)
"""


def test_a_checkpoint_every_step_of_a_huge_run_lists_no_steps_ahead():
    result = run_bounded(EVERY_STEP_A_CHECKPOINT)  # hpuno-exploit --timesteps 1000000000000 --checkpoint-every 1
    assert "SAVES [1, 2, 3]" in result.stdout, result.stderr[-2000:]


@pytest.mark.parametrize("argv, message", [
    (["agents.studies.exploit", "random", "--envs", "1000000000"], "--envs must be an int in [1, 4096], got 1000000000"),
    (["agents.studies.exploit", "random", "--rounds", "1000000000"], "--rounds=1,000,000,000 is 2,000,000,000 seat-rounds"),
    (["agents.studies.exploit", "search", "--option", "worlds=1000000000", "--warm-start-decisions", "0"],
     "worlds must be an int in [2, 4096], got 1000000000"),
    (["agents.evaluation.tournament", "heuristic", "random", "--duplicate", "--rounds", "1000000000"],
     "--rounds=1,000,000,000 is 4,000,000,000 seat-rounds (4 a deal, played twice)"),
])
def test_the_commands_refuse_sizes_too_large_for_memory_in_one_line(argv, message):
    result = run_bounded("import runpy; sys.argv = sys.argv[1:]; runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)",
                         *argv, timeout=300)
    assert result.returncode == 2 and f"error: {message}" in result.stderr, result.stderr[-2000:]
    assert len(result.stderr.splitlines()) == 2 and "Traceback" not in result.stderr  # the error and a hint


# ------------------------------------------------------------ train.py: atomic checkpoints, logs, bad numbers, Ctrl-C


def load_train_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_script_hostile", os.path.join(ROOT, "train.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


TINY_TRAIN = ["--warm-start", "none", "--envs", "16", "--n-steps", "32", "--eval-every", "0", "--eval-rounds", "10",
              "--final-rounds", "10", "--rules", '{"max_turns": 500}', "--no-progress"]


def train_command(*args, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, os.path.join(ROOT, "train.py"), *args], capture_output=True, text=True,
                            timeout=600, cwd=ROOT)
    if check:
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result


@pytest.fixture(scope="module")
def train_module():
    return load_train_module()


@pytest.fixture(scope="module")
def one_rollout_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("one_rollout") / "run"
    train_command("--timesteps", "512", "--out", str(out), *TINY_TRAIN)
    return out


def copied_run(run, tmp_path):
    import shutil

    out = tmp_path / "run"
    shutil.copytree(run, out)
    return out


@pytest.mark.parametrize("argv, message", [
    (["--ent-coef", "nan"], "--ent-coef must be a finite number, got nan"),
    (["--ent-coef", "inf"], "--ent-coef must be a finite number, got inf"),
    (["--learning-rate", "nan"], "--learning-rate must be a finite number"),
    (["--league-margin=-inf"], "--league-margin must be a finite number"),
    (["--seed", "4294967296"], "--seed must be an int in [0, 4294964295], got 4294967296"),
    (["--rules", "[" * 100000 + "]" * 100000], "--rules: not JSON (JSON nested 100000 levels deep"),
    (["--rule", "uno_penalty=" + "9" * 5000], "--rule: uno_penalty must be an int in [0, 20], got '99999"),
])
def test_train_refuses_nan_inf_and_seeds_numpy_cannot_take(train_module, argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        train_module.parse_args(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


def test_tournament_and_play_refuse_seeds_numpy_cannot_take(capsys):
    from agents import play
    from agents.evaluation import tournament

    for main in (tournament.main, play.main):
        arguments = ["random", "heuristic"] if main is tournament.main else []
        with pytest.raises(SystemExit) as exit_info:
            main([*arguments, "--seed", str(2**32)])
        assert exit_info.value.code == 2 and "seed must be None or an int in [0, 2**32)" in capsys.readouterr().err


def test_a_checkpoint_holds_its_own_state_so_a_lagging_checkpoint_json_cannot_mislead_a_resume(one_rollout_run, tmp_path, train_module):
    import zipfile

    out = copied_run(one_rollout_run, tmp_path)
    with zipfile.ZipFile(out / "checkpoint.zip") as archive:
        inside = json.loads(archive.read(train_module.CHECKPOINT_STATE))
    assert inside["timesteps"] == 512
    (out / "checkpoint.json").write_text(json.dumps({**inside, "timesteps": 384, "wall_seconds": 1.0}))  # lagging
    # a run killed after its checkpoint: rows for steps the checkpoint does not hold, and a half-written temporary
    with open(out / "losses.csv", "a") as file:
        file.write("1024,9,1,1,1,1,,,,,,,,,,,\n1536,9,1,1,1,1,,,,,,,,,,,\n")
    (out / "checkpoint.tmp.zip").write_bytes(b"half a checkpoint")
    result = train_command("--timesteps", "1024", "--out", str(out), "--resume", *TINY_TRAIN)
    assert f"resumed from {out / 'checkpoint.zip'} at 512 steps" in result.stdout
    steps = [int(row.split(",")[0]) for row in (out / "losses.csv").read_text().splitlines()[1:]]
    assert steps == sorted(steps) and steps[-1] == 1024 and len(steps) == len(set(steps)), steps
    assert not (out / "checkpoint.tmp.zip").exists()


def test_overwrite_removes_a_half_written_checkpoint(train_module, tmp_path):
    (tmp_path / "checkpoint.tmp.zip").write_bytes(b"half")
    (tmp_path / "mine.txt").write_text("a user's file")
    assert train_module.run_files(str(tmp_path)) == [str(tmp_path / "checkpoint.tmp.zip")]


def test_a_resume_refused_by_its_log_check_rewrites_nothing(one_rollout_run, tmp_path):
    out = copied_run(one_rollout_run, tmp_path)
    (out / "evaluations.csv").write_text("other,columns\n1,2\n")
    before = {name: (out / name).read_bytes() for name in ("config.json", "losses.csv", "checkpoint.json")}
    result = train_command("--timesteps", "1024", "--out", str(out), "--resume", *TINY_TRAIN, check=False)
    assert result.returncode == 2 and "evaluations.csv has columns" in result.stderr
    assert {name: (out / name).read_bytes() for name in before} == before


def test_a_corrupt_checkpoint_state_is_one_line_naming_the_file(one_rollout_run, tmp_path, train_module, capsys):
    import zipfile

    out = copied_run(one_rollout_run, tmp_path)
    # an older checkpoint (no state inside the zip) beside a corrupt checkpoint.json
    with zipfile.ZipFile(out / "checkpoint.zip") as source, zipfile.ZipFile(out / "old.zip", "w") as target:
        for item in source.infolist():
            if item.filename != train_module.CHECKPOINT_STATE:
                target.writestr(item, source.read(item))
    os.replace(out / "old.zip", out / "checkpoint.zip")
    for text, message in (("{not json", "not valid JSON"), ('{"timesteps": "many"}', "field 'timesteps'"),
                          ("[" * 5000 + "]" * 5000, "nested 5000 levels deep")):
        (out / "checkpoint.json").write_text(text)
        with pytest.raises(SystemExit) as exit_info:
            train_module.parse_args(["--out", str(out), "--resume"])
        error = capsys.readouterr().err
        assert exit_info.value.code == 2 and str(out / "checkpoint.json") in error and message in error, error


def test_ctrl_c_in_the_warm_start_exits_cleanly_and_says_so(tmp_path):
    import signal

    out = tmp_path / "run"
    argv = [os.path.join(ROOT, "train.py"), "--timesteps", "512", "--envs", "16", "--n-steps", "32",
            "--warm-start-decisions", "4000000", "--no-progress", "--out", str(out)]
    # Ctrl-C as at a terminal: a process started in the background (as a CI job may start the suite) inherits
    # SIGINT ignored, and the warm start runs under the inherited disposition, so the child restores Python's own.
    restore_ctrl_c = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                      f"sys.argv = {argv!r}; runpy.run_path(sys.argv[0], run_name='__main__')")
    process = subprocess.Popen(
        [sys.executable, "-c", restore_ctrl_c],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    try:
        for line in process.stdout:
            if line.startswith("warm start: fitting"):
                break
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, stderr[-2000:]
    assert "interrupted during the warm start" in stderr and "Traceback" not in stderr


HOLD_THE_LOCK = """
import time
from agents.training.run_folder import FolderLock
lock = FolderLock(sys.argv[1])
print("held" if lock.acquire() is None else "refused", flush=True)
time.sleep(600)
"""


def test_a_second_run_on_a_folder_in_use_is_refused_until_the_first_dies(one_rollout_run, tmp_path, train_module, capsys):
    import signal

    from agents.training.train import train

    out = copied_run(one_rollout_run, tmp_path)
    args = train_module.parse_args(["--out", str(out), "--overwrite", *TINY_TRAIN])  # checked while the folder is free
    before = {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()}
    holder = subprocess.Popen([sys.executable, "-c", f"import sys; sys.path.insert(0, {ROOT!r})\n{HOLD_THE_LOCK}", str(out)],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert holder.stdout.readline().strip() == "held"
        for argv in (["--out", str(out), "--resume"], ["--out", str(out), "--overwrite"]):
            with pytest.raises(SystemExit) as exit_info:
                train_module.parse_args(argv)
            error = capsys.readouterr().err
            assert exit_info.value.code == 2 and f"--out {out} is in use" in error and f"process {holder.pid}" in error, error
        # a run that got past the check while the folder was free still cannot take it: it deletes nothing
        assert train(args, []) == 2 and f"--out {out} is in use" in capsys.readouterr().err
        assert {path.name: path.read_bytes() for path in out.iterdir() if path.is_file() and path.name != "train.lock"} == before
    finally:
        holder.send_signal(signal.SIGKILL)  # dies without a chance to clean up: its lock file stays, unheld
        holder.wait()
    assert (out / "train.lock").exists()
    result = train_command("--timesteps", "1024", "--out", str(out), "--resume", *TINY_TRAIN)
    assert "resumed from" in result.stdout and not (out / "train.lock").exists()


def test_net_arch_beyond_what_an_agent_file_holds_is_refused_before_anything_is_written(train_module, tmp_path, capsys):
    from agents.players.trained import MAX_HIDDEN_LAYERS, MAX_LAYER_SIZE

    out = tmp_path / "run"
    for net_arch, message in ((f"{MAX_LAYER_SIZE + 1}", "at most 16 hidden layers of at most 8192 units"),
                              ("100000,100000", "at most 16 hidden layers of at most 8192 units"),
                              (",".join(["8"] * (MAX_HIDDEN_LAYERS + 1)), "at most 16 hidden layers"),
                              ("8000,8000", "an agent file holds at most 64,000,000")):
        with pytest.raises(SystemExit) as exit_info:
            train_module.parse_args(["--net-arch", net_arch, "--out", str(out)])
        error = capsys.readouterr().err
        assert exit_info.value.code == 2 and message in error, (net_arch, error)
    assert not out.exists()
    assert train_module.parse_args(["--net-arch", f"{MAX_LAYER_SIZE},64", "--out", str(out)]).net_arch == f"{MAX_LAYER_SIZE},64"


def test_the_largest_seed_train_accepts_trains_evaluates_and_exports(train_module, tmp_path, capsys):
    largest = 2**32 - 1 - 3000  # the final table's seeds are --seed + 3000
    for seed in (2**32 - 1, largest + 1):
        with pytest.raises(SystemExit) as exit_info:
            train_module.parse_args(["--seed", str(seed), "--out", str(tmp_path / "refused")])
        assert exit_info.value.code == 2 and f"--seed must be an int in [0, {largest}]" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:  # a recipe's stage k runs with --seed + k
        train_module.parse_args(["--recipe", "champion", "--seed", str(largest), "--out", str(tmp_path / "refused")])
    assert exit_info.value.code == 2 and f"--seed must be at most {largest - 1} with --recipe champion" in capsys.readouterr().err
    out = tmp_path / "run"
    train_command("--timesteps", "512", "--seed", str(largest), "--out", str(out), *TINY_TRAIN, "--eval-every", "256")
    assert agents.load(str(out / "agent.safetensors"), num_players=2, rules_options={"max_turns": 500})


def count_drawings(monkeypatch, fail_on: int | None = None) -> dict:
    """Count replay's render_rgb calls and the most full pictures alive at once; raise on call ``fail_on``."""
    import gc
    import weakref

    import hpuno_env.render as render_module

    real, seen = render_module.render_rgb, {"calls": 0, "most_alive": 0, "alive": []}

    def counted(*args, **kwargs):
        seen["calls"] += 1
        if seen["calls"] == fail_on:
            raise OSError("the disk is full")
        picture = real(*args, **kwargs)
        gc.collect()
        seen["alive"] = [ref for ref in seen["alive"] if ref() is not None] + [weakref.ref(picture)]
        seen["most_alive"] = max(seen["most_alive"], len(seen["alive"]))
        return picture

    monkeypatch.setattr(render_module, "render_rgb", counted)  # what replay draws with
    return seen


def test_replay_checks_its_outputs_before_drawing(tmp_path, monkeypatch, capsys):
    from hpuno_env.replay import main

    _, path = saved_record(tmp_path)
    seen = count_drawings(monkeypatch)
    unwritable = tmp_path / "unwritable.gif"
    os.symlink("/sys/kernel/notes", unwritable)  # a file no one (root included) can open for writing
    for argv, message in ((["--png", ""], "--png: the folder name is empty"), (["--gif", str(unwritable)], "cannot write"),
                          (["--gif", ""], "--gif: the file name must end with .gif")):
        with pytest.raises(SystemExit) as exit_info:
            main([path, *argv])
        assert exit_info.value.code == 2 and message in capsys.readouterr().err, argv
    assert seen["calls"] == 0  # refused before the first picture
    with pytest.raises(SystemExit) as exit_info:
        main([path, "--png", str(tmp_path / "pictures"), "--max-frames", "100000"])
    assert exit_info.value.code == 2 and "at most 1000" in capsys.readouterr().err


def test_replay_streams_its_pictures(tmp_path, monkeypatch):
    from hpuno_env.replay import main

    _, path = saved_record(tmp_path)
    seen = count_drawings(monkeypatch)
    assert main([path, "--gif", str(tmp_path / "game.gif"), "--png", str(tmp_path / "pictures"), "--max-frames", "12"]) == 0
    assert seen["calls"] == 12 and len(os.listdir(tmp_path / "pictures")) == 12 and (tmp_path / "game.gif").stat().st_size > 0
    assert seen["most_alive"] <= 2  # not a list of every frame
    # a failure half-way leaves the PNGs drawn so far and no half-written GIF
    seen = count_drawings(monkeypatch, fail_on=5)
    with pytest.raises(OSError, match="disk is full"):
        main([path, "--gif", str(tmp_path / "second.gif"), "--png", str(tmp_path / "second"), "--max-frames", "12"])
    assert len(os.listdir(tmp_path / "second")) == 4
    assert not [name for name in os.listdir(tmp_path) if name.startswith(".second.gif") or name == "second.gif"]


def test_replay_stops_replaying_after_the_frames_it_draws(tmp_path, monkeypatch, capsys):
    import hpuno_env.replay as replay_module

    record, path = saved_record(tmp_path)
    steps = sum(1 + len(entry["decisions"]) for entry in record["rounds"])
    replayed = {"frames": 0}
    frames = replay_module.frames

    def counted(*args):
        for frame in frames(*args):
            replayed["frames"] += 1
            yield frame

    monkeypatch.setattr(replay_module, "frames", counted)
    assert replay_module.main([path, "--png", str(tmp_path / "one"), "--max-frames", "1"]) == 0
    assert replayed["frames"] == 1 < steps and f"the first 1 of {steps} steps" in capsys.readouterr().out


# ------------------------------------------------------------ 11. what a new user runs into


def test_every_command_takes_rule_name_value_with_rules_json_as_its_alias(train_module, tmp_path, capsys):
    from agents.evaluation import tournament

    args = train_module.parse_args(["--rule", "uno_penalty=4", "--rule", "wd4_bluffing=false", "--rules", '{"max_turns": 500}',
                                    "--out", str(tmp_path / "new")])
    assert args.rule == ("uno_penalty=4", "wd4_bluffing=false")
    from agents._cli import rules_from_options

    rules = rules_from_options(args.rule, args.rules)
    assert (rules["uno_penalty"], rules["wd4_bluffing"], rules["max_turns"]) == (4, False, 500)
    with pytest.raises(SystemExit):
        train_module.parse_args(["--rule", "uno_penalty=4", "--rules", '{"uno_penalty": 3}', "--out", str(tmp_path / "new")])
    assert "rules option 'uno_penalty' given twice" in capsys.readouterr().err
    assert tournament.main(["random", "heuristic", "--rounds", "2", "--envs", "2", "--quiet", "--rules", '{"max_turns": 30}',
                            "--rule", "uno_penalty=4", "--out", str(tmp_path / "t")]) == 0
    assert json.loads((tmp_path / "t" / "results.json").read_text())["config"]["rules"]["max_turns"] == 30
    record = tmp_path / "game.json"
    result = run_with_stdin_closed(["-m", "agents.play", "--seed", "1", "--rule", "target_score=50", "--rules",
                                    "'{\"uno_penalty\": 4}'", "--record", str(record)])
    assert result.returncode == 0, result.stderr[-2000:]
    options = load_record(record)["options"]
    assert (options["target_score"], options["uno_penalty"]) == (50, 4)


def test_train_rllib_help_without_ray_shows_the_options_and_a_run_says_how_to_install_it():
    hide_ray = "import runpy\nsys.modules['ray'] = None  # import ray fails, as without the extra\nsys.argv = ['train_rllib.py', *sys.argv[1:]]\nrunpy.run_path('train_rllib.py', run_name='__main__')\n"
    shown = run_bounded(hide_ray, "--help", memory=8 * 2**30, timeout=120)
    assert shown.returncode == 0 and "--iterations" in shown.stdout and "--rule NAME=VALUE" in shown.stdout, shown.stderr[-2000:]
    assert 'needs Ray RLlib, which is not installed: pip install -e ".[rllib]"' in shown.stdout
    run = run_bounded(hide_ray, "--iterations", "1", memory=8 * 2**30, timeout=120)
    assert run.returncode == 2 and "needs Ray RLlib" in run.stderr and "Traceback" not in run.stderr


def test_a_local_rllib_run_prints_none_of_the_noise_that_is_ours_to_silence(tmp_path):
    result = subprocess.run(
        [sys.executable, "train_rllib.py", "--iterations", "1", "--runners", "1", "--games-per-runner", "8", "--train-batch", "256",
         "--minibatch", "128", "--epochs", "1", "--eval-rounds", "0", "--out", str(tmp_path / "run")],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    printed = result.stdout + result.stderr
    assert "iter    1" in printed  # it ran (its runner's games too)
    for noise in ("max_restarts", "RLModuleConfig object", "This is the new default behavior"):
        assert noise not in printed, noise


def test_a_hand_a_challenge_showed_says_when_it_was_shown_and_what_is_held_now():
    import io

    from agents.play import HUMAN, TerminalMatch
    from hpuno_env import ACTION_LABELS, VectorEngine
    from hpuno_env.scenarios import stacked_deck

    class Bluffer:  # a Wild Draw Four whenever it can, blue, else its first legal action
        def act(self, observations, masks):
            for label in ("play:wild_draw4", "color:blue"):
                if masks[0][ACTION_LABELS.index(label)]:
                    return np.array([ACTION_LABELS.index(label)])
            return np.array([int(np.flatnonzero(masks[0])[0])])

    hands = [["yellow:1", "yellow:2", "yellow:3", "green:4", "green:5", "blue:6", "blue:7"],
             ["wild_draw4", "red:3", "red:8", "green:1", "green:2", "yellow:9", "blue:9"]]
    engine = VectorEngine(1, 2, seed=0, auto_reset=False, episode="match")
    answers = iter(["challenge", "1", "1", "1", "1", "q"])
    out = io.StringIO()
    table = TerminalMatch([HUMAN, "bluffer"], engine, {1: Bluffer()}, seed=0, out=out, ask=lambda prompt: next(answers))
    table.play(options={"deck": stacked_deck(2, dealer=0, hands=hands, starter="red:5"), "dealer": 0})
    lines = [line for line in out.getvalue().splitlines() if line.startswith("player_1's hand, shown to you")]
    assert len(lines) >= 2  # shown again at the later prompts
    shown_at = {line.split(" (as it was at ")[1].split(";")[0] for line in lines}
    assert len(shown_at) == 1  # the moment it was shown, not the moment it is read
    held = [int(line.split("holds ")[1].split(" cards")[0]) for line in lines]
    assert held[0] == 6 + 4 and held[-1] != held[0]  # the penalty drawn after the challenge, then cards played since


def test_play_saves_its_record_in_a_documented_folder_that_git_ignores(tmp_path, monkeypatch, capsys):
    import io

    from agents import play

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # the person leaves at once
    assert play.main(["--opponents", "random", "--seed", "2"]) == 0
    saved = os.listdir(tmp_path / "runs" / "games")
    assert len(saved) == 1 and saved[0].startswith("hpuno-game-") and "runs/games/hpuno-game-" in capsys.readouterr().out
    assert "runs/games/hpuno-game-" in play.__doc__
    ignored = subprocess.run(["git", "check-ignore", "-q", os.path.join("runs", "games", saved[0])], cwd=ROOT)
    assert ignored.returncode == 0  # a game played in a checkout is not committed by accident


def test_help_of_the_env_leads_to_its_documentation_and_states_its_action_shape():
    import pydoc

    import hpuno_env.aec_env

    text = pydoc.render_doc(hpuno_env.env, renderer=pydoc.plaintext)
    assert "docs/environment.md" in text and "help(hpuno_env.aec_env)" in text and "num_players" in text
    env = hpuno_env.raw_env(num_players=2)
    assert env.action_space("player_0").shape == ()
    shape_line = next(line for line in hpuno_env.aec_env.__doc__.splitlines() if line.startswith("| Action shape"))
    assert "| () " in shape_line and "(1,)" not in shape_line


def test_the_progress_bar_ends_at_the_step_the_run_ends(tmp_path):
    arguments = [argument for argument in TINY_TRAIN if argument != "--no-progress"]
    result = train_command("--timesteps", "300", "--progress", "--out", str(tmp_path / "run"), *arguments)
    counts = re.findall(r"training: [^\r\n]*?(\d+)/(\d+) \[", result.stderr)  # PPO's bar, not the final evaluation's
    assert counts, result.stderr[-1000:]
    done, total = map(int, counts[-1])
    assert done == total == 512  # one whole rollout of 16 games x 32 steps: not 512/300


@pytest.mark.parametrize("started_as, prog", [
    ("/usr/local/bin/hpuno-tournament", "hpuno-tournament"),  # the console script
    (os.path.join(ROOT, "agents", "evaluation", "tournament.py"), "python -m agents.evaluation.tournament"),  # python -m
    ("-c", "python -m agents.evaluation.tournament"),
])
def test_the_tournament_calls_itself_by_the_name_it_was_started_by(monkeypatch, capsys, started_as, prog):
    from agents.evaluation import tournament

    monkeypatch.setattr(sys, "argv", [started_as, "heuristic"])
    assert tournament.build_parser().format_usage().startswith(f"usage: {prog} [-h]")
    with pytest.raises(SystemExit):
        tournament.main()
    assert f"{prog}: error: a tournament needs at least two agents" in capsys.readouterr().err
