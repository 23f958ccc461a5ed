"""train.py, hpuno-train and train_rllib.py refuse bad options at once: one error line (and a hint), exit status 2,
before numba, torch, Ray or the rules kernel load; options that would allocate without bound, start more threads or
processes than the machine can hold, or wait for ever are refused the same way."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from agents.training.options import MAX_ENGINE_GAMES, MAX_EVALUATION_ROUNDS, usable_cpus

ROOT = pathlib.Path(__file__).resolve().parents[2]
MEMORY_LIMIT = 3 * 2**30  # a refusal that allocates instead fails under this limit rather than taking the machine
TIME_LIMIT = 120  # seconds: a refusal that waits or hangs fails instead
HEAVY = ("numba", "torch", "ray", "stable_baselines3", "sb3_contrib", "hpuno_env.kernel", "hpuno_env.engine")

# Runs a command as its users do (a script by path, or a module with -m) and, when it exits, names the heavy
# modules it had loaded by then on stderr's last line.
PROBE = textwrap.dedent("""
    import resource, runpy, sys
    resource.setrlimit(resource.RLIMIT_AS, ({memory}, {memory}))
    sys.path.insert(0, {root!r})
    how, target, *argv = sys.argv[1:]
    try:
        if how == "script":
            sys.argv = [target, *argv]
            runpy.run_path(target, run_name="__main__")
        else:
            sys.argv = [target, *argv]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
    finally:
        print("loaded: " + ",".join(name for name in {heavy!r} if name in sys.modules), file=sys.stderr)
""").format(memory=MEMORY_LIMIT, root=str(ROOT), heavy=HEAVY)


def refused(how: str, target: str, *argv: str) -> tuple[list[str], list[str]]:
    """The error lines of a refused command and the heavy modules it had loaded; fails unless it exited 2."""
    try:
        result = subprocess.run([sys.executable, "-c", PROBE, how, target, *argv], capture_output=True, text=True,
                                timeout=TIME_LIMIT, cwd=ROOT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{target} {argv} hung (no refusal in {TIME_LIMIT} s): {error.stderr!r}")
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and lines and lines[-1].startswith("loaded: "), result.stderr[-3000:]
    assert "Traceback" not in result.stderr and "usage:" not in result.stderr, result.stderr[-3000:]
    loaded = [name for name in lines[-1].removeprefix("loaded: ").split(",") if name]
    return lines[:-1], loaded


@pytest.fixture(scope="module")
def earlier_run(tmp_path_factory) -> str:
    """A folder holding an earlier run's files (as when the README's command is run twice)."""
    out = tmp_path_factory.mktemp("earlier")
    (out / "config.json").write_text("{}")
    return str(out)


TRAIN_REFUSALS = [
    (["--players", "11"], "--players must be in [2, 10], got 11"),
    (["--timesteps", "0"], "--timesteps must be a positive int, got 0"),
    (["--gamma", "1.5"], "--gamma must be in (0, 1]"),
    (["--rule", "uno_penalt=3"], "unknown rules option(s) ['uno_penalt']"),
    (["--net-arch", "256,x"], "--net-arch must be positive layer sizes"),
    (["--critic", "everything"], "--critic must be one of observation, hands"),
    (["--device", "tpu"], "--device must be one of auto, cpu, cuda"),
    (["--envs", str(MAX_ENGINE_GAMES + 1)], f"--envs must be an int <= {MAX_ENGINE_GAMES}"),
    (["--eval-rounds", "10000000000000"], f"--eval-rounds must be an int <= {MAX_EVALUATION_ROUNDS}"),
    (["--final-rounds", "10000000000000"], f"--final-rounds must be an int <= {MAX_EVALUATION_ROUNDS}"),
    (["--league-rounds", "10000000000000"], f"--league-rounds must be an int <= {MAX_EVALUATION_ROUNDS}"),
    (["--threads", "100000"], f"--threads must be an int in [0, {usable_cpus()}]"),
    (["--resume", "--overwrite"], "--resume and --overwrite contradict each other"),
    (["--opponent", "nobody"], "--opponent must be a player"),
    (["--opponent", "heuristic=x"], "the weight of 'heuristic' must be a number"),
    (["--warm-start", "nobody"], "--warm-start must be none, a player"),
    (["--hold-out", "ppo_2p"], "--hold-out must be a rule-based player"),
]


@pytest.mark.parametrize("argv, message", TRAIN_REFUSALS)
def test_train_refuses_bad_options_before_loading_torch_or_the_kernel(argv, message, tmp_path):
    lines, loaded = refused("script", str(ROOT / "train.py"), "--out", str(tmp_path / "run"), *argv)
    assert len(lines) == 2 and lines[0].startswith("train.py: error: ") and message in lines[0], lines
    assert loaded == [], f"{argv}: loaded {loaded} before refusing"


def test_a_folder_holding_a_run_is_refused_before_loading_torch_or_the_kernel(earlier_run):
    lines, loaded = refused("script", str(ROOT / "train.py"), "--out", earlier_run)
    assert lines[0] == f"train.py: error: {earlier_run} (config.json) already holds a run" and loaded == [], (lines, loaded)


def test_hpuno_train_refuses_as_train_py_does():
    lines, loaded = refused("module", "agents.training.train", "--players", "1")
    assert lines[0] == "python -m agents.training.train: error: --players must be in [2, 10], got 1" and loaded == []


@pytest.mark.parametrize("argv", [["--net-arch", "100000,100000"], ["--net-arch", "8192,8192"]])
def test_a_network_no_agent_file_can_hold_is_refused_before_anything_is_built(argv, tmp_path):
    """The bound on networks needs the observation's size and the loader's limits: it loads torch and the kernel to
    count (a second or two), and refuses before the network is built or anything written."""
    lines, loaded = refused("script", str(ROOT / "train.py"), "--out", str(tmp_path / "run"), *argv)
    assert lines[0].startswith("train.py: error: --net-arch") and "agent file" in lines[0], lines
    assert not (tmp_path / "run").exists() and "ray" not in loaded


RLLIB_REFUSALS = [
    (["--players", "11"], "--players must be in [2, 10], got 11"),
    (["--iterations", "0"], "--iterations must be at least 1, got 0"),
    (["--hidden", "256,x"], "--hidden must be positive layer sizes"),
    (["--runners", "100000"], "--runners must be at most 4,096, got 100,000"),
    (["--learners", "100000"], "--learners must be at most 256, got 100,000"),
    (["--league", "100000"], "--league must be at most 64, got 100,000"),
    (["--games-per-runner", "1000000000"], f"--games-per-runner must be at most {MAX_ENGINE_GAMES:,}"),
    (["--train-batch", "1000000000000"], "--train-batch must be at most 4,194,304"),
    (["--eval-rounds", "10000000000000"], f"--eval-rounds must be at most {MAX_EVALUATION_ROUNDS:,}"),
    (["--threads", "100000"], f"--threads must be an int in [1, {usable_cpus()}]"),
    (["--minibatch", "9000"], "--minibatch must be at most --train-batch (8192), got 9000"),
    (["--runners", str((os.cpu_count() or 1) + 1)], "a local Ray would wait for them for ever"),
    (["--runners", "0", "--learners", str((os.cpu_count() or 1) + 1)], "a local Ray would wait for them for ever"),
]


@pytest.mark.parametrize("argv, message", RLLIB_REFUSALS)
def test_train_rllib_refuses_bad_options_before_loading_ray_torch_or_the_kernel(argv, message, tmp_path):
    lines, loaded = refused("script", str(ROOT / "train_rllib.py"), "--out", str(tmp_path / "run"), *argv)
    assert len(lines) == 2 and lines[0].startswith("train_rllib.py: error: ") and message in lines[0], lines
    assert loaded == [], f"{argv}: loaded {loaded} before refusing"


@pytest.mark.parametrize("hidden", ["100000,100000", "8192,8192", ",".join(["8"] * 17)])
def test_train_rllib_bounds_its_network_as_train_py_does_before_ray_starts(hidden, tmp_path):
    lines, loaded = refused("script", str(ROOT / "train_rllib.py"), "--out", str(tmp_path / "run"), "--hidden", hidden)
    assert lines[0].startswith("train_rllib.py: error: --hidden") and "agent file" in lines[0], lines
    assert "ray" not in loaded


class FakeRay:
    """What train_rllib.py asks of Ray: its resources, and a start that finds no cluster at --address."""

    def __init__(self, cpus: float = 2, gpus: float = 0):
        self.resources = {"CPU": cpus, "GPU": gpus}

    def cluster_resources(self) -> dict:
        return self.resources

    def is_initialized(self) -> bool:
        return False

    def init(self, address=None, **options):
        raise ConnectionError(f"Could not find any running Ray instance. Please specify the one to connect to ({address}).")


def load_train_rllib():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_rllib_script", ROOT / "train_rllib.py")
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # dataclasses look their module up there
    spec.loader.exec_module(script)
    return script


def test_a_local_ray_without_the_cpus_the_runners_need_is_a_refusal_and_a_cluster_a_warning(tmp_path, capsys):
    """Ray may have fewer CPUs than the machine (a container's share): found once it has started, a local run is refused
    (RLlib would wait for the rest for ever), while on a cluster nodes may still join."""
    script = load_train_rllib()
    args = script.parse_args(["--out", str(tmp_path / "run"), "--runners", "2"])
    problem = script.report_resources(args, FakeRay(cpus=1))
    assert "need 2 CPUs and Ray has 1" in problem and "a local Ray would wait for them for ever" in problem
    args.address = "auto"
    assert script.report_resources(args, FakeRay(cpus=1)) is None
    assert "warning: --runners 2 and --learners 0 need 2 CPUs and Ray has 1: the start waits" in capsys.readouterr().out
    assert script.report_resources(args, FakeRay(cpus=2)) is None


def test_no_cluster_at_the_address_is_one_error_and_a_hint(tmp_path, capsys):
    script = load_train_rllib()
    args = script.parse_args(["--out", str(tmp_path / "run"), "--address", "auto"])
    assert script.start_ray(args, FakeRay()) is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("train_rllib.py: error: --address auto: no Ray cluster to join"), lines
    assert "ray start --head" in lines[1]
