"""benchmarks/plot_learning_curves.py draws train.py's curves and refuses a folder without them."""

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("plot_learning_curves", ROOT / "benchmarks" / "plot_learning_curves.py")
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)


def test_curves_are_read_per_opponent_and_drawn(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"options": {"players": 2}}))
    (run / "evaluations.csv").write_text(
        "timesteps,wall_seconds,opponent,win_rate,low,high,rounds,truncated,mean_points\n"
        "0,60,heuristic,0.5,0.45,0.55,400,0,0\n0,61,random-play,0.8,0.76,0.84,400,0,30\n"
        "512,120,heuristic,0.55,0.5,0.6,400,0,2\n512,121,random-play,0.85,0.81,0.88,400,0,35\n"
        "512,130,heuristic-v0,0.6,0.55,0.65,1000,0,5\n"  # a final-table row: not on the curve
    )
    curves, rounds = plot.read_curve(str(run))
    assert curves["heuristic"] == [(1.0, 0.5, 0.45, 0.55), (2.0, 0.55, 0.5, 0.6)] and len(curves["random-play"]) == 2 and rounds == {400}
    out = tmp_path / "curves.png"
    assert plot.main([str(run), "--out", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(SystemExit):
        plot.main([str(tmp_path / "nothing-here"), "--out", str(tmp_path / "x.png")])
