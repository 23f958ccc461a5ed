"""The package as an ecosystem meets it: one version, license and typing markers, console scripts, Gymnasium's
registry (``gymnasium.make`` passes Gymnasium's env checker, ``gymnasium.make_vec`` is the batched env), and a
non-editable ``pip install .`` whose commands work from another folder."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import tomllib
import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import agents
import hpuno_env
from hpuno_env import HPUnoGymVectorEnv
from hpuno_env.gym_env import HPUnoEnv

ROOT = pathlib.Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SCRIPTS = PYPROJECT["project"]["scripts"]


def test_the_version_is_written_once_and_the_changelog_names_it():
    project = PYPROJECT["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "hpuno_env.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", hpuno_env.__version__)
    changelog = (ROOT / "CHANGELOG.md").read_text()
    first_release = re.search(r"^## \[?(\d+\.\d+\.\d+)\]?", changelog, re.M)
    assert first_release and first_release.group(1) == hpuno_env.__version__


def test_license_typing_markers_and_metadata():
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in license_text
    assert PYPROJECT["project"]["license"] == {"text": "MIT"}
    assert "License :: OSI Approved :: MIT License" in PYPROJECT["project"]["classifiers"]
    for package in ("hpuno_env", "agents"):
        assert (ROOT / package / "py.typed").is_file()
        assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"][package]
    assert PYPROJECT["project"]["keywords"] and PYPROJECT["project"]["urls"]


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_console_script_targets_a_main_that_prints_help(script, capsys):
    module_name, function_name = SCRIPTS[script].split(":")
    module = __import__(module_name, fromlist=[function_name])
    with pytest.raises(SystemExit) as exit_info:
        getattr(module, function_name)(["--help"])
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out


def test_train_py_at_the_root_is_the_installed_training_script():
    import agents.training.train

    source = (ROOT / "train.py").read_text()
    assert "from agents.training.train import main" in source and len(source.splitlines()) < 20
    assert SCRIPTS["hpuno-train"] == "agents.training.train:main" and callable(agents.training.train.main)


# ---------------------------------------------------------------- Gymnasium


def test_gymnasium_make_gives_the_single_agent_env_and_it_passes_the_env_checker():
    env = gymnasium.make("hpuno/HPUno-v1", num_players=3)
    assert isinstance(env.unwrapped, HPUnoEnv) and isinstance(env.unwrapped, gymnasium.Env)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker's warnings too
        check_env(env.unwrapped)
    assert env.observation_space.shape == (hpuno_env.observation_size(3),)
    observation, info = env.reset(seed=4)
    assert env.observation_space.contains(observation)
    assert info["action_mask"].dtype == np.int8 and info["action_mask"].any()
    assert np.array_equal(env.unwrapped.action_masks(), info["action_mask"].astype(bool))


def play_episode(env, seed: int):
    """Uniformly random legal actions (seeded by seed) to the episode's end: (actions, rewards)."""
    rng = np.random.default_rng(seed)
    observation, info = env.reset(seed=seed)
    actions, rewards = [], []
    while True:
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        observation, reward, terminated, truncated, info = env.step(action)
        actions.append(action)
        rewards.append(reward)
        if terminated or truncated:
            assert not info["action_mask"].any() and not env.unwrapped.action_masks().any()
            return actions, rewards


def test_episodes_are_one_round_credited_to_the_learner_and_seeded():
    env = gymnasium.make("hpuno/HPUno-v1", num_players=2, opponent=agents.load("heuristic", 2), voluntary_draw=False)
    first = play_episode(env, seed=3)
    assert first == play_episode(env, seed=3), "the same seed replays the same episode"
    assert first[1][-1] in (-1.0, 1.0) and sum(first[1][:-1]) == 0.0
    results = [play_episode(env, seed=seed)[1][-1] for seed in range(40)]
    assert set(results) == {-1.0, 1.0}, "the heuristic beats a random player often, not always"
    assert results.count(-1.0) > results.count(1.0)


def test_illegal_actions_lose_by_default_or_raise_and_change_nothing():
    env = gymnasium.make("hpuno/HPUno-v1", num_players=2)
    _, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    _, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-1.0, True, False)
    with pytest.raises(ValueError, match="reset"):
        env.step(0)

    strict = gymnasium.make("hpuno/HPUno-v1", num_players=2, illegal_action="raise").unwrapped
    _, info = strict.reset(seed=0)
    before = strict.batch.engine.game_state(0)
    with pytest.raises(ValueError, match="illegal"):
        strict.step(int(np.flatnonzero(info["action_mask"] == 0)[0]))
    with pytest.raises(ValueError, match="action must be an integer"):
        strict.step(1.5)
    assert strict.batch.engine.game_state(0) == before
    for bad in ({"num_players": 11}, {"render_mode": "human"}, {"uno_penalty": -1}, {"learner_seat": 2}):
        with pytest.raises(ValueError):
            HPUnoEnv(**bad)
    with pytest.raises(ValueError, match="options"):
        strict.reset(options={"deck": []})


def test_render_shows_the_learners_seat():
    env = gymnasium.make("hpuno/HPUno-v1", num_players=2, learner_seat=1, render_mode="ansi")
    env.reset(seed=1)
    assert "player_1's hand" in env.render()
    picture = gymnasium.make("hpuno/HPUno-v1", render_mode="rgb_array")
    picture.reset(seed=1)
    assert picture.render().ndim == 3


def test_make_vec_gives_the_batched_gymnasium_vector_env():
    envs = gymnasium.make_vec("hpuno/HPUno-v1", num_envs=16, num_players=4, seed=0, learner_seat="random")
    assert isinstance(envs, HPUnoGymVectorEnv) and envs.num_envs == 16
    observations, infos = envs.reset(seed=0)
    assert observations.shape == (16, hpuno_env.observation_size(4)) and infos["action_mask"].shape == (16, 75)
    actions = np.array([envs.single_action_space.sample(mask=mask) for mask in infos["action_mask"]])
    envs.step(actions)
    synced = gymnasium.make_vec("hpuno/HPUno-v1", num_envs=2, vectorization_mode="sync", num_players=2)
    assert isinstance(synced, gymnasium.vector.SyncVectorEnv)
    synced.reset(seed=0)


def test_maskable_ppo_trains_on_the_registered_env():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    vec = DummyVecEnv([lambda: gymnasium.make("hpuno/HPUno-v1", num_players=2, voluntary_draw=False)])
    model = MaskablePPO("MlpPolicy", vec, n_steps=128, batch_size=64, n_epochs=1, seed=0).learn(256)
    assert model.num_timesteps >= 256


def test_pettingzoo_registry_names_the_aec_env():
    import pettingzoo

    env = pettingzoo.make("aec", "hpuno/hpuno-v1", num_players=2)
    env.reset(seed=0)
    assert env.metadata["name"] == "hpuno_v1"


# ---------------------------------------------------------------- a non-editable install


def test_non_editable_install_runs_the_console_scripts_from_another_folder(tmp_path):
    """``pip install --no-deps .`` of this checkout into a fresh virtualenv, its dependencies taken from the
    running environment through a path file (so nothing is downloaded but the build backend); then every
    console script's ``--help`` from an empty folder, and the packages imported from the install, not the
    checkout (the weights and py.typed came with them)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", str(ROOT)],
                               capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (pathlib.Path(site) / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for script in sorted(SCRIPTS):
        result = subprocess.run([str(venv / "bin" / script), "--help"], capture_output=True, text=True, cwd=elsewhere,
                                env=environment, timeout=300)
        assert result.returncode == 0 and "usage:" in result.stdout, (script, result.stderr[-2000:])
    probe = ("import agents, hpuno_env, pathlib; print(hpuno_env.__file__); "
             "print(all((pathlib.Path(p.__file__).parent / 'py.typed').is_file() for p in (agents, hpuno_env))); "
             "print(agents.load('ppo_2p', 2).describe()['num_players']); "
             "from agents.belief import load_belief; print(type(load_belief(2)).__name__, type(load_belief(6)).__name__)")
    result = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=elsewhere, env=environment, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    location, typed, players, belief_2p, belief_6p = result.stdout.split()
    assert location.startswith(site) and typed == "True" and players == "2"
    assert belief_2p == belief_6p == "LearnedBelief"  # the belief files came with the install
