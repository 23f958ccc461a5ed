"""``hpuno-arena``: it binds to 127.0.0.1 unless told otherwise (and warns when told otherwise), refuses bad options,
a busy port and an unwritable records folder in one line within a second (before it imports the engine), and
keeps every live game as a record when it is stopped."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import sqlite3
import subprocess
import sys
import time

import httpx
import pytest

from agents.arena import cli, limits, server
from agents.arena.store import SCHEMA_VERSION, Store
from hpuno_env.records import load_record

STARTUP = 120  # seconds for a server process to answer (the engine's import, on a loaded machine)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def served(monkeypatch):
    calls = []

    def serve(app, sock):
        calls.append({"app": app, "address": sock.getsockname()})
        sock.close()

    monkeypatch.setattr(cli, "serve", serve)
    return calls


def test_the_arena_binds_to_this_machine_by_default_without_a_warning(served, capsys, tmp_path):
    port = free_port()
    assert cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path), "--port", str(port)]) == 0
    assert served[0]["address"] == ("127.0.0.1", port)
    output = capsys.readouterr()
    assert "warning" not in output.err and f"http://127.0.0.1:{port}/" in output.out


def test_the_per_client_cap_reaches_the_app(served, tmp_path):
    argv = ["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path), "--port", str(free_port())]
    assert cli.main([*argv, "--max-games-per-client", "3"]) == 0
    assert served[0]["app"].state.arena.max_games_per_client == 3


def test_another_host_is_served_with_a_warning(served, capsys, tmp_path):
    port = free_port()
    assert cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--host", "0.0.0.0", "--port", str(port), "--records", str(tmp_path)]) == 0
    assert served[0]["address"] == ("0.0.0.0", port)
    assert "warning: the arena listens on 0.0.0.0" in capsys.readouterr().err


@pytest.mark.parametrize("argv,workers", [([], "default"), (["--search-workers", "2"], 2), (["--search-workers", "0"], None)])
def test_the_search_player_searches_in_the_worker_processes_asked_for(served, tmp_path, argv, workers):
    assert cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path), "--port", str(free_port()), *argv]) == 0
    search = served[0]["app"].state.arena.shelf.acting.search
    if workers == "default":
        assert search.size == cli.default_search_workers() and 1 <= search.size <= limits.SEARCH_WORKERS_MOST
    else:
        assert (search.size if search else None) == workers
    assert search is None or search._pool is None  # no process started until a search, or the start's preparation


def test_a_server_on_one_core_searches_in_one_process_beside_it(monkeypatch):
    monkeypatch.setattr(cli.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert cli.default_search_workers() == 1
    monkeypatch.setattr(cli.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert cli.default_search_workers() == limits.SEARCH_WORKERS_MOST


def test_the_limits_the_command_shows_are_the_servers():
    assert server.MAX_GAMES == limits.MAX_GAMES and server.IDLE_SECONDS == limits.IDLE_SECONDS
    assert server.MAX_GAMES_PER_CLIENT == limits.MAX_GAMES_PER_CLIENT


BAD = [
    (["--port", "0"], "--port"), (["--port", "70000"], "--port"), (["--max-games", "0"], "--max-games"),
    (["--max-games-per-client", "0"], "--max-games-per-client"),
    (["--idle-minutes", "-1"], "--idle-minutes"), (["--idle-minutes", "0"], "--idle-minutes"),
    (["--idle-minutes", "nan"], "--idle-minutes"), (["--idle-minutes", "inf"], "--idle-minutes"),
    (["--max-records", "0"], "--max-records"), (["--results", "/nope"], "--results"),
    (["--search-workers", "-1"], "--search-workers"),
]


@pytest.mark.parametrize("argv,option", BAD)
def test_bad_options_are_refused_in_one_line_naming_the_option(served, capsys, tmp_path, argv, option):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path), *argv])
    error = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and served == [] and len(error) == 1 and option in error[0], error


def test_a_records_folder_that_cannot_be_written_is_refused_at_start(served, capsys, tmp_path):
    (tmp_path / "a-file").write_text("")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path / "a-file" / "records"), "--port", str(free_port())])
    assert exit_info.value.code == 2 and served == [] and "--records" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["not a database", "another schema version"])
def test_a_database_the_arena_cannot_use_is_refused_at_start_in_one_line(served, capsys, tmp_path, kind):
    path = tmp_path / "arena.sqlite3"
    if kind == "not a database":
        path.write_text("these are notes, not a database\n" * 100)
    else:
        Store(path).close()
        with sqlite3.connect(path) as db:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["--db", str(path), "--records", str(tmp_path), "--port", str(free_port())])
    error = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and served == [] and len(error) == 1 and error[0].startswith("hpuno-arena: error: --db"), error


def test_a_busy_port_is_refused_before_the_address_is_printed(served, capsys, tmp_path):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        with pytest.raises(SystemExit) as exit_info:
            cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path), "--port", str(port)])
    output = capsys.readouterr()
    assert exit_info.value.code == 2 and served == [] and "http://" not in output.out
    assert f"--port {port}" in output.err and "choose a free port with --port" in output.err and len(output.err.splitlines()) == 1


def test_the_arenas_socket_sends_each_answer_at_once():
    """Nagle's algorithm off on every connection (asyncio does it for a socket that says it is TCP): else a small
    answer waits for the client's delayed acknowledgement, about 40 ms a request."""
    sock = cli.bound_socket(cli.build_parser(), "127.0.0.1", free_port())

    async def accepted_nodelay() -> int:
        accepted = asyncio.get_running_loop().create_future()

        class Note(asyncio.Protocol):
            def connection_made(self, transport):
                accepted.set_result(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

        server = await asyncio.get_running_loop().create_server(Note, sock=sock)
        _, writer = await asyncio.open_connection(*sock.getsockname())
        nodelay = await asyncio.wait_for(accepted, 10)
        writer.close()
        server.close()
        return nodelay

    assert asyncio.run(accepted_nodelay()) == 1


def test_a_results_folder_without_results_is_served_with_a_warning(served, capsys, tmp_path):
    (tmp_path / "results").mkdir()
    assert cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path / "records"), "--results", str(tmp_path / "results"), "--port", str(free_port())]) == 0
    assert "holds no results.json" in capsys.readouterr().err


def test_a_refusal_comes_before_the_engine_and_torch_are_imported(tmp_path):
    code = ("import sys, time; start = time.monotonic()\n"
            "from agents.arena import cli\n"
            "try:\n    cli.main(['--idle-minutes', 'nan', '--records', sys.argv[1]])\nexcept SystemExit as stop:\n"
            "    print(stop.code, time.monotonic() - start, sorted(m for m in ('torch', 'numba', 'hpuno_env', 'fastapi') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=60)
    status, seconds, imported = result.stdout.split(" ", 2)
    assert status == "2" and imported.strip() == "[]" and "--idle-minutes" in result.stderr, result
    assert float(seconds) < 1.0, seconds


def test_ctrl_c_stops_the_arena_with_status_130_saying_what_it_saved(monkeypatch, capsys, tmp_path):
    def interrupted(app, sock):
        sock.close()
        app.state.saved_at_stop = ["arena-x.json"]  # as the app's shutdown leaves it (the SIGTERM test runs it for real)
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "serve", interrupted)
    assert cli.main(["--db", str(tmp_path / "arena.sqlite3"), "--records", str(tmp_path), "--port", str(free_port())]) == 130
    assert "1 live game(s) saved" in capsys.readouterr().err


def test_a_stopped_arena_saves_its_live_games_as_unfinished_records(tmp_path):
    stop, status = signal.SIGTERM, 143
    port = free_port()
    records = tmp_path / "records"
    process = subprocess.Popen([sys.executable, "-m", "agents.arena", "--port", str(port), "--records", str(records), "--db", str(records / "arena.sqlite3")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + STARTUP
        while True:
            try:
                httpx.get(f"{base}/api/catalogue", timeout=5).raise_for_status()
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and process.poll() is None, "the arena did not start"
                time.sleep(0.3)
        created = httpx.post(f"{base}/api/games", json={"players": 3}).json()
        secret = {"Authorization": f"Bearer {created['token']}"}
        view = httpx.get(f"{base}/api/games/{created['game']}", headers=secret).json()
        assert httpx.post(f"{base}/api/games/{created['game']}/actions", json={"action": view["legal"][0]}, headers=secret).status_code == 200
        process.send_signal(stop)
        _, errors = process.communicate(timeout=60)
    finally:
        process.kill()
    saved = list(records.glob("arena-*.json"))
    assert process.returncode == status and len(saved) == 1 and saved[0].name in errors, errors
    record = load_record(saved[0])
    assert record["outcome"] == "unfinished" and record["players"] == ["you", "heuristic", "heuristic"]
    assert json.loads(saved[0].read_text())["seed"] is not None


def test_python_dash_m_agents_arena_is_the_command():
    result = subprocess.run([sys.executable, "-m", "agents.arena", "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "--records" in result.stdout and "--results" in result.stdout
