"""benchmarks/training_fingerprints.py: digests of the weights alone, a record naming every run, a mismatch named."""

import importlib.util
import io
import json
import pathlib
import zipfile

import pytest
import torch
from safetensors.torch import save_file

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("training_fingerprints", ROOT / "benchmarks" / "training_fingerprints.py")
fingerprints = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fingerprints)


def test_the_agent_digest_reads_the_tensors_not_the_metadata(tmp_path):
    tensors = {"actor.weight": torch.arange(6, dtype=torch.float32).reshape(2, 3), "scale": torch.tensor(0.5)}
    save_file(tensors, tmp_path / "a.safetensors", metadata={"wall_seconds": "1.0"})
    save_file(tensors, tmp_path / "b.safetensors", metadata={"wall_seconds": "2.0"})
    save_file({**tensors, "scale": torch.tensor(0.25)}, tmp_path / "c.safetensors", metadata={"wall_seconds": "1.0"})
    digests = [fingerprints.agent_digest(str(tmp_path / f"{name}.safetensors")) for name in "abc"]
    assert digests[0] == digests[1] != digests[2]


def checkpoint(path, weight: float, lr: float) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for member, state in (("policy.pth", {"w": torch.full((2,), weight)}), ("policy.optimizer.pth", {"param_groups": [{"lr": lr}]})):
            buffer = io.BytesIO()
            torch.save(state, buffer)
            archive.writestr(member, buffer.getvalue())
        archive.writestr("data", "{}")


def test_the_checkpoint_digest_covers_the_network_and_the_optimiser(tmp_path):
    for name, weight, lr in (("a", 1.0, 1e-3), ("b", 1.0, 1e-3), ("c", 2.0, 1e-3), ("d", 1.0, 2e-3)):
        checkpoint(tmp_path / f"{name}.zip", weight, lr)
    a, b, c, d = (fingerprints.checkpoint_digest(str(tmp_path / f"{name}.zip")) for name in "abcd")
    assert a == b and len({a, c, d}) == 3


def test_the_record_holds_every_run_with_its_command():
    record = json.loads((ROOT / "benchmarks" / "training_fingerprints.json").read_text())
    assert set(record["runs"]) == set(fingerprints.RUNS)
    for name, run in record["runs"].items():
        assert run["command"] == fingerprints.recorded_command(name), f"{name}: record it again (--record)"
        assert len(run["agent"]) == len(run["checkpoint"]) == 64


@pytest.fixture
def fake_runs(tmp_path, monkeypatch):
    """The script with its record in tmp_path and runs that return set digests instead of training."""
    digests = {name: {"agent": "a" * 64, "checkpoint": "c" * 64, "seconds": 1.0} for name in fingerprints.RUNS}
    monkeypatch.setattr(fingerprints, "RECORD", str(tmp_path / "record.json"))
    monkeypatch.setattr(fingerprints, "fingerprint", lambda name: dict(digests[name]))
    return digests


def test_a_recorded_run_checks_and_a_changed_one_is_named(fake_runs, capsys):
    assert fingerprints.main([]) == 2 and "cannot read" in capsys.readouterr().err  # nothing recorded yet
    assert fingerprints.main(["--record"]) == 0
    assert fingerprints.main([]) == 0
    fake_runs["league"]["agent"] = "b" * 64
    assert fingerprints.main([]) == 1
    captured = capsys.readouterr()
    assert "league: MISMATCH: the agent digest differs" in captured.out and captured.err.strip().endswith("differ: league")
    assert fingerprints.main(["--run", "2 players"]) == 0


def test_record_refuses_a_subset(fake_runs, capsys):
    assert fingerprints.main(["--record", "--run", "league"]) == 2
    assert "--record records every run" in capsys.readouterr().err
