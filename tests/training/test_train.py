"""train.py as a tool: a tiny run writes everything, Ctrl-C leaves a checkpoint that --resume continues, bad options are refused."""

from __future__ import annotations

import csv
import dataclasses
import importlib.util
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest
from sb3_contrib import MaskablePPO

import agents
from agents.players.trained import shipped_for
from hpuno_env.encoding import observation_size

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Small and quick: rounds capped at 500 decisions so an untrained greedy player cannot stall the evaluations.
TINY = ["--warm-start", "none", "--envs", "16", "--n-steps", "32", "--eval-rounds", "10", "--final-rounds", "10", "--rules", '{"max_turns": 500}', "--no-progress"]


def load_train_module():
    spec = importlib.util.spec_from_file_location("train_script", ROOT / "train.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


train = load_train_module()


def run_train(*args) -> str:
    result = subprocess.run([sys.executable, str(ROOT / "train.py"), *args], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def read_csv(path) -> list[dict]:
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


# Runs shared by several tests (each train.py subprocess costs seconds); a test that changes a run works on a copy.
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny") / "run"
    return out, run_train("--timesteps", "1024", "--eval-every", "512", "--checkpoint-every", "256", "--out", str(out), *TINY)


@pytest.fixture(scope="module")
def mixture_run(tmp_path_factory):
    """A mixture of opponents and a learning rate annealed from 1e-3 to 0 over 1024 steps."""
    out = tmp_path_factory.mktemp("mixture") / "run"
    return out, run_train("--timesteps", "1024", "--eval-every", "0", "--opponent", "heuristic=3,random-play=1", "--learning-rate",
                          "0.001", "--final-learning-rate", "0", "--out", str(out), *TINY)


def copy_of(run, tmp_path) -> pathlib.Path:
    out = tmp_path / "run"
    shutil.copytree(run[0], out)
    return out


def test_a_tiny_run_logs_evaluates_and_exports_a_safe_agent(tiny_run):
    out, stdout = tiny_run

    config = json.loads((out / "config.json").read_text())
    assert set(config["options"]) == {spec.name for spec in dataclasses.fields(train.Args)}
    assert config["rules_options"]["max_turns"] == 500 and config["rules_options"]["uno_penalty"] == 2  # every option, given or default
    assert config["seed"] == 0 and config["versions"]["hpuno-env"]
    losses = read_csv(out / "losses.csv")
    assert [int(row["timesteps"]) for row in losses] == [512, 1024]  # one row per iteration (32 steps x 16 games)
    assert all(float(row["update_seconds"]) > 0 and row["value_loss"] and row["entropy_loss"] for row in losses)
    curve = read_csv(out / "evaluations.csv")
    final = [("1024", name) for name in ("random", "random-play", "heuristic", "heuristic-v0")]  # the final table's row
    assert [(row["timesteps"], row["opponent"]) for row in curve] == [("512", "heuristic"), ("512", "random-play"), ("1024", "heuristic"), ("1024", "random-play"), *final]
    assert float(curve[0]["wall_seconds"]) < float(curve[2]["wall_seconds"]) and all(row["rounds"] == "10" for row in curve)
    assert any(name.startswith("events.out.tfevents") for name in os.listdir(out / "tensorboard"))

    assert re.search(r"learner steps/s: [\d,]+ end to end .*rollout \d+% \[games \d+%, policy \d+%\], update \d+%", stdout)
    table = stdout[stdout.index("win rate over 10 rounds"):]
    champions = shipped_for(2, {"max_turns": 500})  # the champions of the run's game
    for row in ["this run", "heuristic", *champions]:
        assert re.search(rf"^{row} +\d+\.\d%", table, re.M), (row, table)
    assert "vs random-play" in table and "vs heuristic-v0" in table and "(heuristic-v0 was held out of training)" in table

    agent = agents.load(str(out / "agent.safetensors"), num_players=2)
    metadata = agent.describe()
    assert metadata["training"]["timesteps"] == 1024 and metadata["rules_options"]["max_turns"] == 500
    assert set(metadata["evaluation"]["table"]) == {"random", "random-play", "heuristic", "heuristic-v0"}
    assert sorted(os.listdir(out)) == ["agent.safetensors", "checkpoint.json", "checkpoint.zip", "config.json", "evaluations.csv",
                                       "losses.csv", "tensorboard"]  # nothing half-written left behind


def test_ctrl_c_leaves_a_loadable_checkpoint_and_resume_continues_from_its_step_count(tmp_path):
    from sb3_contrib import MaskablePPO

    out = tmp_path / "run"
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "train.py"), "--timesteps", "10000000", "--eval-every", "0", "--checkpoint-every", "512", "--out", str(out), *TINY],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )
    deadline = time.monotonic() + 300
    while not (out / "checkpoint.json").exists():  # the first periodic checkpoint: training is under way
        assert process.poll() is None and time.monotonic() < deadline, process.communicate()
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stdout + stderr
    steps = int(re.search(r"interrupted at (\d+) steps", stdout).group(1))
    assert steps >= 512 and "resume with: python train.py" in stdout and "--resume" in stdout
    assert MaskablePPO.load(out / "checkpoint.zip", device="cpu").num_timesteps == steps
    assert json.loads((out / "checkpoint.json").read_text())["timesteps"] == steps

    resumed = run_train("--timesteps", str(steps + 512), "--eval-every", "0", "--out", str(out), "--resume", *TINY)
    assert f"resumed from {out / 'checkpoint.zip'} at {steps} steps" in resumed
    total = int(re.search(r"trained (\d+) steps", resumed).group(1))
    assert steps + 512 <= total < steps + 1024  # whole rollouts of 512 steps
    training = agents.load(str(out / "agent.safetensors"), num_players=2).describe()["training"]
    assert training["timesteps"] == total
    # the agent names every command that made it: the interrupted run, then the resume
    assert len(training["commands"]) == 2 and "--resume" not in training["commands"][0]
    assert training["commands"][1] == training["command"] and "--resume" in training["command"]


def test_a_warm_start_clones_the_teacher_before_ppo_and_is_not_repeated_on_resume(tmp_path):
    out = tmp_path / "run"
    stdout = run_train("--timesteps", "512", "--eval-every", "0", "--out", str(out), *TINY, "--warm-start", "heuristic",
                       "--warm-start-decisions", "4000", "--warm-start-epochs", "2")
    warm = json.loads((out / "config.json").read_text())["warm_start"]
    assert warm["teacher"] == "heuristic" and warm["decisions"] == 4000 and len(warm["epochs"]) == 2
    assert 0.5 < warm["agreement"] <= 1 and f"agrees with heuristic on {warm['agreement']:.1%}" in stdout
    curve = read_csv(out / "evaluations.csv")  # the curve starts right after the warm start, whose time it counts
    assert [(row["timesteps"], row["opponent"]) for row in curve[:2]] == [("0", "heuristic"), ("0", "random-play")]
    assert [row["timesteps"] for row in curve[2:]] == ["512"] * 4  # then the final table's row
    assert float(curve[0]["wall_seconds"]) >= warm["seconds"]

    resumed = run_train("--timesteps", "1024", "--eval-every", "0", "--out", str(out), "--resume", *TINY, "--warm-start", "heuristic")
    assert "--warm-start heuristic ignored: the checkpoint holds the weights" in resumed and "agrees with" not in resumed
    assert json.loads((out / "config.json").read_text())["options"]["warm_start"] == "none"  # what this command did
    assert "warm_start" not in json.loads((out / "config.json").read_text())


def test_a_mixture_of_opponents_and_an_annealed_learning_rate_that_resume_can_replace(mixture_run, tmp_path):
    out, stdout = copy_of(mixture_run, tmp_path), mixture_run[1]
    assert "opponent heuristic=3,random-play=1" in stdout
    # SB3 sets the step size before each update from the share of --timesteps still to go: 1/2, then 0
    assert [float(row["learning_rate"]) for row in read_csv(out / "losses.csv")] == pytest.approx([5e-4, 0.0])

    # a resumed run with a schedule anneals from the checkpoint's step count over the new --timesteps
    resumed = run_train("--timesteps", "2048", "--eval-every", "0", "--opponent", "heuristic", "--learning-rate", "0.002",
                        "--final-learning-rate", "0.001", "--out", str(out), "--resume", *TINY)
    assert "learning rate now 0.0015" in resumed
    assert [float(row["learning_rate"]) for row in read_csv(out / "losses.csv")] == pytest.approx([5e-4, 0.0, 1.25e-3, 1e-3])


def test_overwrite_deletes_the_old_runs_files_and_nothing_else(tiny_run, tmp_path):
    out = copy_of(tiny_run, tmp_path)
    (out / "league").mkdir()
    (out / "league" / "snapshot-1.safetensors").write_bytes(b"an old snapshot")
    mine = [out / "notes.txt", out / "league" / "mine.safetensors", out / "tensorboard" / "my-log.txt"]
    for path in mine:
        path.write_text("mine")
    old_events = {name for name in os.listdir(out / "tensorboard") if name.startswith("events")}
    run_train("--timesteps", "512", "--eval-every", "0", "--out", str(out), "--overwrite", *TINY)
    assert all(path.read_text() == "mine" for path in mine) and not (out / "league" / "snapshot-1.safetensors").exists()
    assert not old_events & set(os.listdir(out / "tensorboard")) and len(read_csv(out / "losses.csv")) == 1


def test_resume_keeps_the_runs_own_options_unless_given_and_refuses_to_change_the_network(mixture_run, tmp_path, capsys):
    out = copy_of(mixture_run, tmp_path)
    # the one change of network a resume allows: a critic that also reads the other seats' hands (agents/training/critic.py)
    # ... and the update's shape and targets may change (the rollout buffer sized for another --envs): the model takes them
    resumed = run_train("--timesteps", "1536", "--critic", "hands", "--gamma", "1", "--gae-lambda", "0.9", "--n-steps", "64",
                        "--envs", "8", "--batch-size", "256", "--out", str(out), "--resume", "--no-progress")
    assert "opponent heuristic=3,random-play=1" in resumed  # not the default opponent
    saved = MaskablePPO.load(out / "checkpoint.zip", device="cpu")
    assert (saved.gamma, saved.gae_lambda, saved.ent_coef) == (1.0, 0.9, 0.01)
    assert (saved.n_steps, saved.n_envs, saved.batch_size, saved.rollout_buffer.buffer_size) == (64, 8, 256, 64)
    assert "the critic now reads the other seats' hands too" in resumed
    options = json.loads((out / "config.json").read_text())["options"]
    assert options["opponent"] == "heuristic=3,random-play=1" and options["n_steps"] == 64 and options["final_learning_rate"] == 0
    assert options["learning_rate"] == 0.001 and options["timesteps"] == 1536 and options["eval_every"] == 0
    assert options["critic"] == "hands" and (options["gamma"], options["gae_lambda"]) == (1.0, 0.9)
    assert agents.load(str(out / "agent.safetensors"), 2).describe()["network"]["input_size"] == observation_size(2)  # plays from observations
    assert train.main(["--out", str(out), "--resume", "--no-progress"]) == 0  # --timesteps not given: the run's own 1536
    assert "nothing to train: the checkpoint is at 1536 steps" in capsys.readouterr().out

    for argv, message in ((["--players", "4"], "--players 4: the checkpoint"),
                          (["--net-arch", "64,64"], "was trained with --net-arch 256,256"), (["--critic", "observation"], "has a hands critic"),
                          (["--no-scale-observations"], "--no-scale-observations: the checkpoint")):
        with pytest.raises(SystemExit) as exit_:
            train.parse_args(["--out", str(out), "--resume", *argv])
        assert exit_.value.code == 2 and message in capsys.readouterr().err

    # a checkpoint from elsewhere (no config.json) keeps its own update settings unless told, not the defaults
    (out / "config.json").unlink()
    run_train("--timesteps", "2048", "--critic", "hands", "--out", str(out), "--resume", *TINY)
    saved = MaskablePPO.load(out / "checkpoint.zip", device="cpu")
    assert saved.num_timesteps == 2048 and (saved.gamma, saved.gae_lambda, saved.batch_size) == (1.0, 0.9, 256)
    assert (saved.n_steps, saved.n_envs) == (32, 16)  # TINY's, given


def test_a_new_run_is_refused_where_an_earlier_run_left_its_files(tmp_path, capsys):
    (tmp_path / "evaluations.csv").write_text("an earlier learning curve")
    with pytest.raises(SystemExit) as exit_:
        train.parse_args(["--out", str(tmp_path)])
    assert exit_.value.code == 2 and "evaluations.csv) already holds a run" in capsys.readouterr().err
    (tmp_path / "evaluations.csv").unlink()
    (tmp_path / "my-notes.txt").write_text("mine")
    assert train.parse_args(["--out", str(tmp_path)]).out == str(tmp_path)  # other files are no run


def test_help_explains_every_option_and_its_default(capsys):
    with pytest.raises(SystemExit) as exit_:
        train.parse_args(["--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for spec in dataclasses.fields(train.Args):
        flag = "--" + spec.name.replace("_", "-")
        described = " ".join(spec.metadata["help"].split())
        assert re.search(rf"{flag}\b.*?{re.escape(described[:30])}.*?\(default: {re.escape(str(spec.default))}\)", text), flag


@pytest.mark.parametrize("argv, message", [
    (["--timesteps", "0"], "--timesteps must be a positive int, got 0"),
    (["--timesteps", "-5"], "--timesteps must be a positive int"),
    (["--envs", "0"], "--envs must be a positive int"),
    (["--envs", "-2"], "--envs must be a positive int"),
    (["--players", "11"], "--players must be in [2, 10]"),
    (["--gamma", "1.5"], "--gamma must be in (0, 1]"),
    (["--net-arch", "256,x"], "--net-arch"),
    (["--rules", "{uno"], "--rules: not JSON"),
    (["--rules", '{"uno_penalt": 3}'], "unknown rules option(s) ['uno_penalt']"),
    (["--rules", '{"uno_penalty": -1}'], "uno_penalty"),
    (["--opponent", "nobody"], "--opponent must be a player"),
    (["--hold-out", "ppo_2p"], "--hold-out must be a rule-based player"),
    (["--opponent", "heuristic", "--hold-out", "heuristic"], "--hold-out heuristic is also the --opponent"),
    (["--warm-start", "nobody"], "--warm-start must be none, a player"),
    (["--warm-start-decisions", "0"], "--warm-start-decisions must be a positive int"),
    (["--warm-start", "heuristic-v0"], "--hold-out heuristic-v0 is also the --warm-start teacher"),
    (["--final-learning-rate", "-0.1"], "--final-learning-rate must be in [0, 1]"),
    (["--opponent", "heuristic=3,nobody=1"], "'nobody' is neither a player"),
    (["--opponent", "heuristic=x"], "the weight of 'heuristic' must be a number"),
    (["--opponent", "heuristic=-1,random=1"], "must be a non-negative number"),
    (["--opponent", "heuristic=0"], "the weights give nobody a game"),
    (["--opponent", "heuristic=1,heuristic=2"], "'heuristic' appears twice"),
    (["--opponent", "self=1,heuristic=1"], "a mixture holds fixed players"),
    (["--opponent", "heuristic=1,heuristic-v0=1"], "--hold-out heuristic-v0 is in the --opponent mixture"),
    (["--critic", "everything"], "--critic must be one of observation, hands"),
    (["--critic", "hands", "--warm-start", "heuristic", "--hold-out", "none"], "--warm-start fits a critic of observations only"),
])
def test_bad_options_are_refused_naming_them(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        train.parse_args(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_resume_without_a_checkpoint_is_an_error_naming_the_path(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        train.parse_args(["--resume", "--out", str(tmp_path / "empty")])
    assert exit_.value.code == 2
    assert f"no checkpoint at {tmp_path / 'empty' / 'checkpoint.zip'}" in capsys.readouterr().err
    assert not (tmp_path / "empty").exists()  # nothing created


def test_checkpoints_are_replaced_atomically(tmp_path):
    path = tmp_path / "checkpoint.zip"
    path.write_bytes(b"the previous checkpoint")

    def crash_half_way(temporary):
        with open(temporary, "wb") as file:
            file.write(b"half a ")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train.write_through_temporary(str(path), crash_half_way)
    assert path.read_bytes() == b"the previous checkpoint" and os.listdir(tmp_path) == ["checkpoint.zip"]
    train.write_through_temporary(str(path), lambda temporary: pathlib.Path(temporary).write_bytes(b"the new one"))
    assert path.read_bytes() == b"the new one" and os.listdir(tmp_path) == ["checkpoint.zip"]


def test_a_new_run_where_a_checkpoint_is_is_refused_unless_overwrite(tmp_path, capsys):
    checkpoint = tmp_path / "checkpoint.zip"
    checkpoint.write_bytes(b"an earlier run")
    with pytest.raises(SystemExit) as exit_:
        train.parse_args(["--out", str(tmp_path)])
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and f"{checkpoint} already holds a run" in error
    assert "--resume" in error and "--overwrite" in error and "another --out" in error
    with pytest.raises(SystemExit) as exit_:
        train.parse_args(["--out", str(tmp_path), "--resume", "--overwrite"])
    assert exit_.value.code == 2 and "contradict" in capsys.readouterr().err
    assert train.parse_args(["--out", str(tmp_path), "--overwrite"]).overwrite
    with pytest.raises(SystemExit) as exit_:  # not a zip: a resume is refused before anything is written
        train.parse_args(["--out", str(tmp_path), "--resume"])
    assert exit_.value.code == 2 and f"cannot read the checkpoint {checkpoint}" in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["checkpoint.zip"] and checkpoint.read_bytes() == b"an earlier run"  # nothing written


def test_an_unloadable_opponent_or_teacher_is_refused_before_anything_is_written(tmp_path, capsys):
    corrupt = tmp_path / "corrupt.safetensors"
    corrupt.write_bytes(b"not an agent at all")
    out = tmp_path / "run"
    four_player = next(name for name in agents.available() if name.endswith("_4p"))
    for argv, message in [
        (["--opponent", four_player], f"--opponent {four_player}: "),
        (["--opponent", str(corrupt)], f"--opponent {corrupt}: "),
        (["--warm-start", four_player], f"--warm-start {four_player}: "),
    ]:
        with pytest.raises(SystemExit) as exit_:
            train.parse_args([*argv, "--out", str(out)])
        error = capsys.readouterr().err
        assert exit_.value.code == 2 and message in error and "Traceback" not in error, (argv, error)
    assert not out.exists()
    assert train.parse_args(["--opponent", "heuristic", "--out", str(out)]).opponent == "heuristic"  # a loadable one passes


def test_an_output_folder_that_cannot_be_created_is_a_clean_error(tmp_path, capsys):
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    assert train.main(["--out", str(not_a_folder / "run")]) == 2
    assert f"error: cannot create the output folder --out {not_a_folder / 'run'}" in capsys.readouterr().err


def test_a_new_run_with_a_hands_critic_exports_an_agent_that_plays_from_observations(tmp_path, capsys):
    out = tmp_path / "run"
    assert train.main(["--timesteps", "512", "--eval-every", "0", "--critic", "hands", "--out", str(out), *TINY]) == 0
    assert "trained 512 steps" in capsys.readouterr().out
    assert json.loads((out / "config.json").read_text())["options"]["critic"] == "hands"
    agent = agents.load(str(out / "agent.safetensors"), num_players=2)
    assert agent.describe()["network"]["input_size"] == observation_size(2)


def test_a_fresh_run_warm_starts_from_the_heuristic_unless_told_or_unable(tmp_path):
    """Cloning the heuristic first makes a stronger agent in the default run's 300k steps than PPO from random weights
    (47.9% against the heuristic, to 32.9%: docs/training.md), so a fresh run does it unless told otherwise.
    A hands critic cannot be warm-started, and a resumed run holds its weights: neither gets the default."""
    assert train.parse_args(["--out", str(tmp_path / "a")]).warm_start == "heuristic"
    assert train.parse_args(["--out", str(tmp_path / "a"), "--warm-start", "none"]).warm_start == "none"
    assert train.parse_args(["--out", str(tmp_path / "a"), "--critic", "hands"]).warm_start == "none"
    with pytest.raises(SystemExit):
        train.parse_args(["--out", str(tmp_path / "a"), "--critic", "hands", "--warm-start", "heuristic"])


@pytest.mark.parametrize("critic", ["observation", "hands"])
def test_a_network_from_random_weights_plays_a_card_when_it_can_so_its_rounds_end(critic, tmp_path):
    """A fresh network that draws as often as it plays makes rounds of a thousand decisions and more, which PPO
    cannot learn from (it learned to stall, and won 0.0% against the random player); an untrained one (no warm start,
    as a hands critic has by default) starts out playing a card when it can: its rounds end, and it wins."""
    from agents.evaluation.rounds import win_rate
    from agents.training.agent_file import live_agent
    from agents.training.model import new_model
    from hpuno_env import HPUnoVecEnv
    from hpuno_env.encoding import observation_scale

    argv = ["--warm-start", "none", "--critic", critic, "--out", str(tmp_path / "run")]
    options = train.training_options(train.parse_args(argv), argv)
    env = HPUnoVecEnv(num_envs=2, num_players=2, learner_seat="random", scale_observations=True,
                      critic_sees_hands=critic == "hands")
    model = new_model(options.ppo, env, "cpu", seed=options.run.seed, num_players=2, untrained=True)
    untrained = live_agent(model, 2, observation_scale=observation_scale(2))
    result = win_rate(untrained, agents.load("random", num_players=2, seed=1), 2, rounds=100, seed=0, max_turns=2000)
    assert result["win_rate"] >= 0.9 and result["mean_decisions"] < 400, result


def test_ppo_from_random_weights_learns_to_beat_the_random_player(tmp_path):
    """python train.py --warm-start none (its help's example), in 16k steps of PPO: the agent wins against the random
    player and its training rounds stay short."""
    out = tmp_path / "run"
    printed = run_train("--warm-start", "none", "--timesteps", "16384", "--eval-every", "0", "--final-rounds", "200",
                        "--hold-out", "none", "--no-progress", "--out", str(out))
    final = {row["opponent"]: row for row in read_csv(out / "evaluations.csv")}
    assert float(final["random"]["win_rate"]) >= 0.9 and int(final["random"]["truncated"]) == 0, printed
    assert max(float(row["ep_len_mean"]) for row in read_csv(out / "losses.csv")) < 300


def test_the_final_evaluation_shows_its_rounds_as_they_finish(capsys):
    """A bar of the rounds played over the table, moving within each cell: a slow cell (a weak agent's long rounds)
    shows where it is instead of minutes of silence."""
    from agents.training.final_table import evaluation_table

    rows = {"random": agents.load("random", num_players=2, seed=0), "heuristic": agents.load("heuristic", num_players=2, seed=0)}
    table = evaluation_table(rows, {"random": agents.load("random", num_players=2, seed=1)}, 2, 300, 0, {}, progress=True)
    assert [table[row]["random"]["rounds"] for row in rows] == [300, 300]
    bar = capsys.readouterr().err
    assert "final evaluation" in bar and "600/600" in bar and "heuristic vs random" in bar, bar[-500:]
    shown = [int(done) for done in re.findall(r"\| *(\d+)/600 \[", bar)]
    assert any(0 < done < 300 for done in shown) and shown == sorted(shown), shown  # inside the first cell, never back


# train.py as run from a terminal, the rules kernel's first load announced as numba's cache miss would announce it (the
# kernel's message, on its own line), so that where the first compile of a cold cache would come shows in the output.
FIRST_LOAD_ANNOUNCED = """
import runpy, sys
from hpuno_env import kernel

loads = kernel.RulesFunctionCache.load_overload

def load_announcing_the_first(self, sig, target_context):
    if not kernel._announced_compiling:
        kernel._announced_compiling = True
        print(kernel.COMPILING_MESSAGE, file=sys.stderr, flush=True)
    return loads(self, sig, target_context)

kernel.RulesFunctionCache.load_overload = load_announcing_the_first
sys.argv = ["train.py", *sys.argv[1:]]
runpy.run_path("train.py", run_name="__main__")
"""


def test_each_step_is_announced_on_its_own_line_and_the_kernel_loads_before_any_progress_bar(tmp_path):
    """The first wait of a new machine is numba compiling the rules (a minute or two on 2 cores): it is the run's
    first step, announced, with the kernel's notice on its own line and no bar started; then the warm start, PPO and
    the final evaluation, each announced before its bar."""
    from hpuno_env.kernel import COMPILING_MESSAGE

    result = subprocess.run(
        [sys.executable, "-c", FIRST_LOAD_ANNOUNCED, "--out", str(tmp_path / "run"), "--warm-start-decisions", "2000",
         "--warm-start-epochs", "1", "--timesteps", "512", "--envs", "16", "--n-steps", "32", "--eval-every", "0",
         "--final-rounds", "20", "--hold-out", "none", "--rules", '{"max_turns": 500}'],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600, cwd=ROOT)
    output = result.stdout
    assert result.returncode == 0, output[-3000:]
    steps = ["[1/4] rules kernel: ", COMPILING_MESSAGE, "  ready (", "[2/4] warm start: ", "warm start: collecting",
             "[3/4] PPO: ", "training:", "[4/4] final evaluation: ", "final evaluation:"]
    where = [output.find(step) for step in steps]
    assert -1 not in where and where == sorted(where), list(zip(steps, where))
    lines = output.replace("\r", "\n").splitlines()
    assert COMPILING_MESSAGE in lines and "%|" not in output[:where[2]], output[:where[2] + 200]


def test_no_warm_start_and_no_hold_out_go_together(tmp_path):
    args = train.parse_args(["--warm-start", "none", "--hold-out", "none", "--out", str(tmp_path / "run")])
    assert (args.warm_start, args.hold_out) == ("none", "none")


def test_an_opponent_file_made_under_other_rules_plays_with_one_warning_line(tmp_path, capsys):
    from agents.training.opponents import install_opponents
    from hpuno_env import HPUnoVecEnv

    shipped = str(ROOT / "agents" / "weights" / "ppo_2p.safetensors")  # trained under the default rules
    for opponent, rule, warned in ((shipped, "uno_penalty=4", True), (f"heuristic=1,{shipped}=1", "uno_penalty=4", True),
                                   (shipped, "uno_penalty=2", False)):
        argv = ["--opponent", opponent, "--rule", rule, "--out", str(tmp_path / "run")]
        options = train.training_options(train.parse_args(argv), argv)
        env = HPUnoVecEnv(num_envs=2, num_players=2, learner_seat="random", seed=0, **options.run.rules)
        assert install_opponents(options.opponents, options.run, env, None) is None
        lines = capsys.readouterr().err.splitlines()
        if warned:
            assert len(lines) == 1 and lines[0].startswith("warning: agent") and "uno_penalty" in lines[0], lines
        else:
            assert lines == []


def test_an_error_after_parsing_is_its_line_and_a_hint_not_the_usage(tmp_path):
    (tmp_path / "config.json").write_text("{}")  # an earlier run's, as when the README's command is run twice
    result = subprocess.run([sys.executable, str(ROOT / "train.py"), "--out", str(tmp_path)], capture_output=True, text=True,
                            timeout=600, cwd=ROOT)
    lines = result.stderr.splitlines()
    assert result.returncode == 2 and len(lines) == 2 and "usage" not in result.stderr, result.stderr
    assert lines[0] == f"train.py: error: {tmp_path} (config.json) already holds a run"
    assert "--resume" in lines[1] and "--overwrite" in lines[1] and "another --out" in lines[1]


def test_the_commands_name_themselves_as_they_were_run(monkeypatch, capsys):
    from agents import play

    # run as `python train.py`: test_an_error_after_parsing_is_its_line_and_a_hint_not_the_usage
    for argv0, name in (("/venv/bin/hpuno-train", "hpuno-train"), ("-c", "python -m agents.training.train")):
        monkeypatch.setattr(sys, "argv", [argv0])
        with pytest.raises(SystemExit) as exit_:
            train.parse_args(["--seed", "-1"])
        assert exit_.value.code == 2 and capsys.readouterr().err.startswith(f"{name}: error: --seed must be"), argv0
    monkeypatch.setattr(sys, "argv", ["/venv/bin/hpuno-play"])
    assert play.build_parser().prog == "hpuno-play"
