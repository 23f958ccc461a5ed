"""``hpuno-arena``: it binds to 127.0.0.1 unless told otherwise, and warns when told otherwise."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agents.arena import cli


@pytest.fixture
def served(monkeypatch):
    calls = []
    monkeypatch.setattr(cli.uvicorn, "run", lambda app, **options: calls.append(options))
    return calls


def test_the_arena_binds_to_this_machine_by_default_without_a_warning(served, capsys, tmp_path):
    assert cli.main(["--records", str(tmp_path)]) == 0
    assert served == [{"host": "127.0.0.1", "port": 8000, "log_level": "warning"}]
    assert "warning" not in capsys.readouterr().err


def test_another_host_is_served_with_a_warning(served, capsys, tmp_path):
    assert cli.main(["--host", "0.0.0.0", "--port", "8123", "--records", str(tmp_path)]) == 0
    assert served[0]["host"] == "0.0.0.0" and served[0]["port"] == 8123
    assert "warning: the arena listens on 0.0.0.0" in capsys.readouterr().err


@pytest.mark.parametrize("argv", [["--port", "0"], ["--max-games", "0"], ["--idle-minutes", "-1"]])
def test_bad_options_are_refused(served, argv):
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2 and served == []


def test_python_dash_m_agents_arena_is_the_command():
    result = subprocess.run([sys.executable, "-m", "agents.arena", "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "--records" in result.stdout and "--results" in result.stdout
