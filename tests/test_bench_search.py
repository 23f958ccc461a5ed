"""benchmarks/bench_search.py --record: chunks pooled exactly, a stopped cell resumed, a foreign file refused."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest

from agents.evaluation.duplicate import paired_interval

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_search", ROOT / "benchmarks" / "bench_search.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

COMMAND = ["--players", "2", "--duplicate", "--worlds", "2", "--rounds", "4", "--chunk-deals", "2"]


def chunk(deals, a_only, b_only, a_wins, b_wins, search_ms):
    return {"seed": 0, "deals": deals, "a_wins": a_wins, "b_wins": b_wins, "a_only": a_only, "b_only": b_only,
            "seconds": 1.0, "decisions": len(search_ms), "changed": 1, "search_ms": search_ms}


def test_pooled_chunks_give_the_interval_of_every_deal_together():
    result = bench.pooled([chunk(10, 3, 1, 6, 4, [1.0, 5.0]), chunk(20, 2, 4, 9, 11, [3.0])])
    differences = np.array([1] * 5 + [-1] * 5 + [0] * 20, float)
    assert result["deals"] == 30 and result["chunks"] == 2
    assert result["difference"] == pytest.approx(0.0) and result["sd"] == pytest.approx(paired_interval(differences)["sd"])
    assert result["a"]["win_rate"] == pytest.approx(15 / 30) and result["b"]["win_rate"] == pytest.approx(15 / 30)
    assert result["median_ms"] == 3.0 and result["left"] == pytest.approx(2 / 3)


def test_a_recorded_cell_resumes_from_its_chunks(tmp_path, capsys):
    record = tmp_path / "cell.jsonl"
    assert bench.main([*COMMAND, "--record", str(record), "--part", "1/2"]) == 0  # chunk 1 only
    assert [json.loads(line)["chunk"] for line in record.read_text().splitlines()] == [1]
    assert bench.main([*COMMAND, "--record", str(record)]) == 0  # plays chunk 0, keeps chunk 1
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [line["chunk"] for line in lines] == [1, 0]
    assert [line["result"]["seed"] for line in lines] == [1, 0]  # chunk k plays the deals of seed --seed + k
    assert bench.main([*COMMAND, "--record", str(record)]) == 0  # nothing left to play
    assert len(record.read_text().splitlines()) == 2
    assert "| 2 | 4 |" in capsys.readouterr().out  # 2 worlds, 4 deals pooled


def test_a_file_of_something_else_is_refused_before_any_round(tmp_path):
    record = tmp_path / "other.jsonl"
    record.write_text('{"not": "a chunk"}\n')
    with pytest.raises(SystemExit, match="line 1 is not a chunk"):
        bench.main([*COMMAND, "--record", str(record)])
    for bad in (["--part", "2/2"], ["--chunk-deals", "3"]):
        with pytest.raises(SystemExit):
            bench.main([*COMMAND, "--record", str(record), *bad])
