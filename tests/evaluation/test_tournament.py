"""The tournament tool: its schedule, ratings, library call and command line (agents.evaluation.tournament)."""

from __future__ import annotations

import csv
import json
import math
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import agents
from agents.evaluation import tournament

ROW_FIELDS = {"table", "kind", "agent", "opponents", "seats", "rounds", "wins", "win_rate", "low", "high",
              "fair_share", "mean_points", "mean_decisions", "truncated"}


def test_schedule_pairings_and_mixed_table_balance_every_seat():
    labels = ["a", "b", "c"]
    two = tournament.schedule(labels, 2, 10)
    assert [table.name for table in two] == ["a vs b", "a vs c", "b vs c"]  # one table per unordered pair
    four = tournament.schedule(labels, 4, 12)
    assert [table.kind for table in four] == ["pairing"] * 6 + ["mixed"]
    a_vs_b = four[0].lineups
    assert a_vs_b.shape == (12, 4) and ((a_vs_b == 0).sum(axis=1) == 1).all() and ((a_vs_b == 1).sum(axis=1) == 3).all()
    assert (np.bincount(np.argmax(a_vs_b == 0, axis=1), minlength=4) == 3).all()  # the lone agent in every seat
    for num_agents, num_players in ((3, 4), (5, 3), (3, 3)):
        mixed = tournament.schedule([str(i) for i in range(num_agents)], num_players, 2 * num_agents)[-1]
        assert mixed.kind == "mixed"
        for seat in range(num_players):  # every agent in every seat equally often
            assert (np.bincount(mixed.lineups[:, seat], minlength=num_agents) == 2).all()
    assert all(table.kind == "pairing" for table in tournament.schedule(labels, 4, 12, mixed=False))
    assert all(table.kind == "pairing" for table in tournament.schedule(["a", "b"], 4, 12))


def test_parse_rules_values_and_errors():
    assert tournament.parse_rules(["uno_penalty=4", "wd4_bluffing=false", "uno_catch=off", "voluntary_draw=True"]) == {
        "uno_penalty": 4, "wd4_bluffing": False, "uno_catch": "off", "voluntary_draw": True}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        tournament.parse_rules(["uno_penalty"])
    with pytest.raises(ValueError, match="unknown rules option"):
        tournament.parse_rules(["uno_penalties=4"])
    with pytest.raises(ValueError, match="uno_penalty"):
        tournament.parse_rules(["uno_penalty=many"])
    with pytest.raises(ValueError, match="twice"):
        tournament.parse_rules(["uno_penalty=4", "uno_penalty=2"])


def test_rate_identical_random_outcomes_and_a_clear_favourite():
    rng = np.random.default_rng(3)
    lineups = rng.integers(0, 3, (3000, 4))
    won = np.zeros((3000, 4), bool)
    won[np.arange(3000), rng.integers(0, 4, 3000)] = True
    won[:100] = False  # truncated rounds are left out
    mu, sigma = tournament.rate(lineups, won, 3, seed=0)
    assert np.ptp(mu) < 3 * math.sqrt(2) * sigma.max() and (sigma < 1).all()
    assert np.array_equal(mu, tournament.rate(lineups, won, 3, seed=0)[0])  # seeded
    # Agent 0 wins every round it sits in (lowest seat if twice): rated far above the others.
    favourite = np.where((lineups == 0).any(axis=1), np.argmax(lineups == 0, axis=1), won.argmax(axis=1))
    won[:] = False
    won[np.arange(3000), favourite] = True
    mu, sigma = tournament.rate(lineups, won, 3, seed=0)
    assert mu[0] - 3 * sigma[0] > max(mu[1], mu[2]) + 3 * max(sigma[1], sigma[2])


def test_identical_agents_share_the_wins_and_the_rating():
    result = tournament.run(["heuristic", "heuristic", "random-play"], num_players=3, rounds=600, seed=2, num_envs=256)
    assert [row["agent"] for row in result["ranking"]][2] == "random-play"
    first, second = (entry for entry in result["ranking"] if entry["agent"].startswith("heuristic"))
    assert abs(first["mu"] - second["mu"]) < 3 * math.hypot(first["sigma"], second["sigma"])
    by_table = {(row["table"], row["agent"]): row for row in result["rows"]}
    for solo, copies in (("heuristic", "heuristic#2"), ("heuristic#2", "heuristic")):
        row = by_table[(f"{solo} vs 2x {copies}", solo)]
        assert row["fair_share"] == pytest.approx(1 / 3) and row["low"] <= 1 / 3 <= row["high"]
        assert by_table[(f"{solo} vs 2x {copies}", copies)]["fair_share"] == pytest.approx(2 / 3)
    mixed = [row for row in result["rows"] if row["kind"] == "mixed"]
    assert [row["seats"] for row in mixed] == [1, 1, 1] and all(row["rounds"] == 600 for row in mixed)
    assert sum(row["wins"] for row in mixed) + mixed[0]["truncated"] == 600


def test_library_call_takes_policy_objects_and_is_seeded():
    policies = {"mine": agents.load("heuristic", 2, seed=5), "baseline": "random-play"}
    one = tournament.run(policies, num_players=2, rounds=300, seed=7, num_envs=64)
    again = tournament.run(policies, num_players=2, rounds=300, seed=7, num_envs=64)
    other = tournament.run(policies, num_players=2, rounds=300, seed=8, num_envs=64)
    for key in ("ranking", "rows", "pairwise", "tables", "config"):
        assert one[key] == again[key]
    assert one["rows"] != other["rows"]
    assert set(one["rows"][0]) == ROW_FIELDS and len(one["rows"]) == 2
    assert one["config"]["agents"] == ["mine", "baseline"] and one["config"]["rules"]["uno_penalty"] == 2
    assert one["ranking"][0]["agent"] == "mine" and one["ranking"][0]["rank"] == 1
    matrix = one["pairwise"]["win_rate"]
    assert matrix[0][1] + matrix[1][0] == pytest.approx(1 - one["rows"][0]["truncated"] / 300)
    assert matrix[0][0] is None


def test_library_call_rejects_bad_input():
    with pytest.raises(ValueError, match="at least two agents"):
        tournament.run(["heuristic"])
    with pytest.raises(ValueError, match="unknown agent"):
        tournament.run(["heuristic", "grandmaster"])
    with pytest.raises(ValueError, match="num_players"):
        tournament.run(["heuristic", "random"], num_players=11)
    with pytest.raises(ValueError, match="rounds"):
        tournament.run(["heuristic", "random"], rounds=0)
    with pytest.raises(ValueError, match="unknown rules option"):
        tournament.run(["heuristic", "random"], uno_penalties=4)
    with pytest.raises(TypeError, match="act"):
        tournament.run({"a": "heuristic", "b": 42})


def test_match_episodes_report_matches():
    result = tournament.run(["heuristic", "random-play"], num_players=2, rounds=40, seed=0, num_envs=16,
                            episode="match", target_score=100)
    assert result["config"]["unit"] == "match"
    winner = next(row for row in result["rows"] if row["agent"] == "heuristic")
    assert winner["win_rate"] > 0.5 and winner["mean_points"] >= 0  # mean final match score
    assert "match win rate" in tournament.format_report(result)


@pytest.mark.parametrize("argv, message", [
    (["heuristic", "grandmaster"], "unknown agent"),
    (["heuristic"], "at least two agents"),
    (["heuristic", "random", "--players", "1"], "num_players"),
    (["heuristic", "random", "--rounds", "-5"], "--rounds"),
    (["heuristic", "random", "--rule", "uno_penalty=lots"], "uno_penalty"),
    (["heuristic", "random", "--rule", "episode=round", "--episode", "match"], "contradicts"),
    (["heuristic", "random", "--plot"], "--out"),
    (["heuristic", "random", "--record", "3"], "--out"),
    (["heuristic", "random", "--record", "-3", "--out", "unused"], "--record"),
    (["heuristic", "/no/such/agent.safetensors"], "no such file"),
])
def test_command_line_refuses_bad_input_with_exit_code_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        tournament.main(argv)
    assert exit_info.value.code == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


def test_an_unwritable_out_is_refused_before_any_game(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    for out, message in ((blocker, "is a file, not a folder"), (blocker / "results", "Not a directory")):
        with pytest.raises(SystemExit) as exit_info:
            tournament.main(["heuristic", "random", "--rounds", "10000000", "--out", str(out)])  # would take hours if played
        error = capsys.readouterr().err
        assert exit_info.value.code == 2 and "--out" in error and message in error and "Traceback" not in error
    assert blocker.read_text() == "in the way"
    for in_the_way, flags, message in (("results.csv", [], "results.csv is a folder"), ("records", ["--record", "2"], "records is a file")):
        out = tmp_path / f"out-{in_the_way}"
        out.mkdir()
        if in_the_way == "results.csv":
            (out / in_the_way).mkdir()
        else:
            (out / in_the_way).write_text("in the way")
        with pytest.raises(SystemExit) as exit_info:
            tournament.main(["heuristic", "random", "--rounds", "10000000", "--out", str(out), *flags])
        error = capsys.readouterr().err
        assert exit_info.value.code == 2 and message in error and "Traceback" not in error, error


def test_command_line_end_to_end_with_out_and_plot(tmp_path):
    out = tmp_path / "results"
    command = [sys.executable, "-m", "agents.evaluation.tournament", "heuristic", "random-play", "random-play",
               "--players", "3", "--rounds", "45", "--seed", "4", "--envs", "32",
               "--rule", "uno_penalty=4", "--rule", "wd4_bluffing=false", "--out", str(out), "--plot"]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert "rating (mu ± sigma)" in finished.stdout and "mixed (3 agents)" in finished.stdout
    report = json.loads((out / "results.json").read_text())
    assert report["command"].startswith("hpuno-tournament heuristic random-play random-play")
    assert report["config"]["seed"] == 4 and report["config"]["num_players"] == 3
    assert report["config"]["rules"]["uno_penalty"] == 4 and report["config"]["rules"]["wd4_bluffing"] is False
    assert report["config"]["version"] and report["config"]["agents"] == ["heuristic", "random-play", "random-play#2"]
    assert len(report["tables"]) == 7 and len(report["ranking"]) == 3
    with open(out / "results.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(report["rows"]) == 6 * 2 + 3
    for row, expected in zip(rows, report["rows"]):
        assert set(row) == ROW_FIELDS
        assert (row["table"], row["agent"], int(row["wins"])) == (expected["table"], expected["agent"], expected["wins"])
        assert float(row["win_rate"]) == pytest.approx(expected["win_rate"])
    for picture in ("tournament_pairwise.png", "tournament_ratings.png"):
        assert (out / picture).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------ game records (record=N, --record N)


def replayed_winners(record) -> list[int]:
    """Replay ``record`` to its end; the seats its last decision's events name as winners."""
    from hpuno_env.kernel import EV_MATCH_END, EV_ROUND_END
    from hpuno_env.records import Replay

    replaying = Replay(record)
    for _ in replaying:
        pass
    kind = EV_MATCH_END if record["options"]["episode"] == "match" else EV_ROUND_END
    return [int(event[1]) for event in replaying.engine.events(0) if event[0] == kind]


def test_records_change_nothing_and_replay_to_the_winner_counted():
    # 2 slots and 16-round chunks: the 20 records come from several games per slot and from two chunks.
    plain = tournament.run(["heuristic", "random-play"], num_players=2, rounds=30, seed=5, num_envs=2)
    recorded = tournament.run(["heuristic", "random-play"], num_players=2, rounds=30, seed=5, num_envs=2, record=20)
    for key in ("ranking", "rows", "pairwise", "tables", "config"):
        assert plain[key] == recorded[key]
    assert "records" not in plain
    entries = recorded["records"]
    assert [entry["round"] for entry in entries] == list(range(20))
    assert entries[3]["file"] == "01-heuristic-vs-random-play-round03.json"
    wins = 0
    for entry in entries:
        lone_seat = entry["round"] % 2  # evaluate.rotating_lineups: the first agent sits in seat r % N
        assert entry["players"][lone_seat] == "heuristic" and entry["players"][1 - lone_seat] == "random-play"
        assert entry["record"]["players"] == entry["players"] and entry["record"]["outcome"] == "terminated"
        assert replayed_winners(entry["record"]) == [entry["winner"]]
        wins += entry["players"][entry["winner"]] == "heuristic"
    assert wins > 10  # the heuristic wins ~80% against random-play
    # Whole matches are recorded whole; the records are spread over the tables.
    matches = tournament.run(["heuristic", "random-play", "random"], num_players=2, rounds=3, seed=1, num_envs=2,
                             record=4, episode="match", target_score=200)
    assert [(entry["table"], entry["round"]) for entry in matches["records"]] == [
        ("heuristic vs random-play", 0), ("heuristic vs random-play", 1), ("heuristic vs random", 0), ("random-play vs random", 0)]
    assert matches["records"][0]["file"] == "01-heuristic-vs-random-play-match0.json"
    for entry in matches["records"]:
        assert replayed_winners(entry["record"]) == [entry["winner"]]
    assert any(len(entry["record"]["rounds"]) > 1 for entry in matches["records"])  # matches of several rounds
    capped = tournament.run(["heuristic", "random-play"], num_players=2, rounds=2, seed=0, num_envs=2, record=9)
    assert len(capped["records"]) == 2  # at most every round played


def test_records_and_observers_reject_bad_input():
    from agents.evaluation.rounds import play_rounds, rotating_lineups

    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="record"):
            tournament.run(["heuristic", "random"], rounds=4, record=bad)
    policies = [agents.load("random", 2), agents.load("random", 2)]
    with pytest.raises(TypeError, match="observers must be"):
        play_rounds(policies, rotating_lineups(2, 2), 2, observers=42)
    with pytest.raises(TypeError, match=r"observers\(engine\)\[0\]"):
        play_rounds(policies, rotating_lineups(2, 2), 2, observers=lambda engine: [object()])


def test_command_line_saves_records_that_replay_to_the_winner_counted(tmp_path):
    from hpuno_env.records import load_record, replay

    out = tmp_path / "results"
    command = [sys.executable, "-m", "agents.evaluation.tournament", "heuristic", "random-play", "random",
               "--rounds", "12", "--seed", "2", "--envs", "4", "--record", "3", "--out", str(out)]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert "wrote 3 game records" in finished.stdout
    listed = json.loads((out / "results.json").read_text())["records"]
    assert sorted(path.name for path in (out / "records").iterdir()) == [entry["file"] for entry in listed] == [
        "01-heuristic-vs-random-play-round00.json", "02-heuristic-vs-random-round00.json", "03-random-play-vs-random-round00.json"]
    for entry in listed:
        assert "record" not in entry  # results.json lists the records; the files hold them
        record = load_record(out / "records" / entry["file"])
        assert record["players"] == entry["players"] == entry["table"].split(" vs ")  # round 0: the lone agent in seat 0
        assert record["tournament"] == {"table": entry["table"], "round": 0}
        states = list(replay(record))
        assert states[-1]["phase"] == "over" and len(states) == 1 + len(record["rounds"][0]["decisions"])
        assert replayed_winners(record) == [entry["winner"]]


# ------------------------------------------------------------ --out: one tournament per folder


def test_an_earlier_result_in_out_is_refused_unless_overwrite_replaces_it(tmp_path, capsys):
    out = tmp_path / "t"
    tiny = ["random", "random-play", "--rounds", "4", "--envs", "4", "--quiet", "--out", str(out)]
    assert tournament.main([*tiny, "--record", "2"]) == 0
    first = (out / "results.json").read_bytes()
    assert len(list((out / "records").iterdir())) == 2
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_info:
        tournament.main([*tiny, "--seed", "1"])
    error = capsys.readouterr().err
    assert exit_info.value.code == 2 and f"--out {out} holds an earlier tournament's results (results.csv, results.json" in error
    assert "pass --overwrite to replace them" in error and error.count("\n") == 2 and "Traceback" not in error
    assert (out / "results.json").read_bytes() == first and len(list((out / "records").iterdir())) == 2
    (out / "notes.txt").write_text("mine")
    assert tournament.main([*tiny, "--seed", "1", "--overwrite"]) == 0
    assert json.loads((out / "results.json").read_text())["config"]["seed"] == 1
    assert list((out / "records").iterdir()) == []  # the earlier tournament's records went with its results
    assert (out / "notes.txt").read_text() == "mine" and not (out / "tournament.lock").exists()
    with pytest.raises(SystemExit):
        tournament.main(["random", "random-play", "--overwrite"])
    assert "--overwrite needs --out" in capsys.readouterr().err


def test_a_second_tournament_on_a_folder_in_use_is_refused(tmp_path, capsys):
    out = tmp_path / "busy"
    first = subprocess.Popen([sys.executable, "-m", "agents.evaluation.tournament", "random", "random", "--rounds", "1000000",
                              "--quiet", "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        lock, waited = out / "tournament.lock", time.monotonic()
        while not (lock.exists() and lock.read_text().strip()):  # the first run holds the folder
            assert first.poll() is None, first.stderr.read()
            assert time.monotonic() - waited < 120
            time.sleep(0.1)
        for extra in ([], ["--overwrite"], ["--duplicate"]):
            with pytest.raises(SystemExit) as exit_info:
                tournament.main(["random", "random-play", "--rounds", "4", "--out", str(out), *extra])
            error = capsys.readouterr().err
            assert exit_info.value.code == 2 and f"--out {out} is in use" in error and f"process {first.pid}" in error, error
        assert first.poll() is None  # the first run goes on
    finally:
        first.kill()
        first.wait()
    assert not (out / "results.json").exists()


# ------------------------------------------------------------ Ctrl-C keeps what was played


def test_ctrl_c_during_the_first_table_writes_the_rounds_played_marked_partial(tmp_path):
    out = tmp_path / "t"
    argv = ["agents.evaluation.tournament", "random", "random-play", "--rounds", "1000000", "--envs", "8", "--record", "70",
            "--quiet", "--out", str(out)]
    # Ctrl-C as at a terminal: a process started in the background (as a CI job may start the suite) inherits
    # SIGINT ignored, so the child restores Python's own.
    restore_ctrl_c = ("import runpy, signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
                      f"sys.argv = {argv!r}; runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)")
    process = subprocess.Popen([sys.executable, "-c", restore_ctrl_c], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # --envs 8 plays chunks of 64 rounds: the record of round 64 is written once the first chunk is done.
    second_chunk = out / "records" / "01-random-vs-random-play-round000064.json"
    try:
        waited = time.monotonic()
        while not second_chunk.exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() - waited < 180
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130 and "Traceback" not in stderr, stderr[-2000:]
    saved = json.loads((out / "results.json").read_text())
    cut = saved["partial"]["cut_table"]
    assert saved["partial"]["tables_finished"] == 0 and saved["partial"]["tables_scheduled"] == 1
    assert cut["table"] == "random vs random-play" and cut["rounds_scheduled"] == 1_000_000
    assert 64 <= cut["rounds_played"] < 1_000_000 and cut["rounds_played"] % 64 == 0  # whole chunks
    assert saved["timing"]["rounds"] == saved["tables"][0]["rounds"] == cut["rounds_played"]
    assert {row["rounds"] for row in saved["rows"]} == {cut["rounds_played"]}
    assert sum(entry["seat_rounds"] for entry in saved["ranking"]) == 2 * cut["rounds_played"]
    played = f"{cut['rounds_played']:,} of 1,000,000 rounds of random vs random-play"
    assert f"interrupted after 0 of 1 tables and {played}" in stderr
    assert f"PARTIAL: interrupted after 0 of 1 tables and {played}" in stdout
    with open(out / "results.csv", newline="") as handle:
        assert {int(row["rounds"]) for row in csv.DictReader(handle)} == {cut["rounds_played"]}


def test_the_rating_of_a_partial_result_stops_at_its_deadline():
    from agents.evaluation.rounds import rotating_lineups

    rounds = 100_000  # about 3 s to rate them all
    lineups = rotating_lineups(rounds, 2)
    won = np.zeros((rounds, 2), bool)
    won[np.arange(rounds), np.random.default_rng(0).integers(0, 2, rounds)] = True
    assert tournament._rate_until(lineups[:100], won[:100], 2, 0, deadline=None)[2] == 100
    rated = tournament._rate_until(lineups, won, 2, 0, deadline=time.perf_counter() + 0.3)[2]
    assert 0 < rated < rounds
    assert tournament._rate_until(lineups, won, 2, 0, deadline=time.perf_counter() - 1)[2] == 0
