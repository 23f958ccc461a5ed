"""Ray RLlib: the env side (``hpuno_env.rllib``: RLlib's env check, illegal actions, reward credit, the batched env
and runner against the engine and RLlib's own episodes) and the learner's (``agents.training.rllib_learner``: the
league mapping, one PPO iteration with a worker process, ``train_rllib.py``), the names kept at their 0.2 home."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import ray
import torch
from ray.rllib.utils.pre_checks.env import check_multiagent_environments

from agents.training.rllib_learner import LEARNER_POLICY, LeagueMapping, RLModulePolicy, frozen_policy, ppo_config
from hpuno_env import VectorEngine
from hpuno_env.rllib import HPUnoMultiAgentEnv, HPUnoVectorMultiAgentEnv


def test_importing_the_package_does_not_import_ray():
    code = "import sys, hpuno_env; hpuno_env.env(2); assert 'ray' not in sys.modules, 'ray imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_env_side_imports_nothing_of_agents():
    code = ("import sys, hpuno_env, hpuno_env.rllib, hpuno_env.rllib_sampling; "
            "loaded = [m for m in sys.modules if m == 'agents' or m.startswith('agents.')]; assert not loaded, loaded")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_learners_names_at_their_0_2_home_resolve_with_a_deprecation_warning():
    """hpuno-env 0.2's RLlib checkpoints pickle the module class, the mapping and the league by their path under
    hpuno_env.rllib: a pickled reference there loads the object at its home, and says where that is."""
    import pickle

    import hpuno_env.rllib
    from agents.training import rllib_learner

    assert hpuno_env.rllib.MOVED_TO_LEARNER
    for name in sorted(hpuno_env.rllib.MOVED_TO_LEARNER):
        with pytest.warns(DeprecationWarning, match=f"hpuno_env.rllib.{name} is agents.training.rllib_learner.{name}"):
            assert pickle.loads(f"chpuno_env.rllib\n{name}\n.".encode()) is getattr(rllib_learner, name)
    with pytest.warns(DeprecationWarning):
        from hpuno_env.rllib import ppo_config as old_ppo_config
    assert old_ppo_config is ppo_config
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        hpuno_env.rllib.nothing  # noqa: B018


def test_rllib_env_check_passes_with_unmasked_random_actions():
    env = HPUnoMultiAgentEnv({"num_players": 3})
    for _ in range(30):  # the check steps one unmasked random action: mostly illegal
        check_multiagent_environments(env)
    observations, _ = env.reset(seed=0)
    (agent, view), = observations.items()
    assert env.observation_spaces[agent].contains(view)
    assert view["observations"].dtype == np.float32 and view["action_mask"].dtype == np.float32


def _illegal_action(view) -> int:
    return int(np.flatnonzero(view["action_mask"] == 0)[0])


def test_illegal_action_loses_the_round_or_raises():
    env = HPUnoMultiAgentEnv({"num_players": 3})
    observations, _ = env.reset(seed=1)
    (agent, view), = observations.items()
    observations, rewards, terminateds, truncateds, infos = env.step({agent: _illegal_action(view)})
    assert terminateds["__all__"] and not truncateds["__all__"]
    assert rewards == {name: (-1.0 if name == agent else 0.0) for name in env.possible_agents}
    assert set(observations) == set(env.possible_agents) and "illegal_action" in infos[agent]
    with pytest.raises(ValueError, match="round is over"):
        env.step({agent: 0})

    strict = HPUnoMultiAgentEnv({"num_players": 3, "illegal_action": "raise"})
    observations, _ = strict.reset(seed=1)
    (agent, view), = observations.items()
    with pytest.raises(ValueError, match="illegal action"):
        strict.step({agent: _illegal_action(view)})
    with pytest.raises(ValueError, match="no action for"):
        strict.step({})
    with pytest.raises(TypeError, match="must be an int"):
        strict.step({agent: 1.5})
    legal = int(np.flatnonzero(view["action_mask"])[0])
    strict.step({agent: legal})  # nothing changed: the agent to act still acts

    with pytest.raises(ValueError, match="illegal_action"):
        HPUnoMultiAgentEnv({"illegal_action": "ignore"})
    with pytest.raises(ValueError, match="no_such_rule"):
        HPUnoMultiAgentEnv({"no_such_rule": 1})


def test_batched_env_pays_each_seat_what_the_engine_paid_it():
    """Random legal play in 4 games of 3-player matches with points paid at every round's end
    (to seats that are not moving): the batched env hands each seat exactly the engine's
    payments, each with one of that seat's own observations, and flags the same endings."""
    rules = {"num_players": 3, "episode": "match", "reward": "points", "target_score": 150}
    games, seed = 4, 7
    env = HPUnoVectorMultiAgentEnv(games, {**rules, "seed": seed})
    engine = VectorEngine(num_games=games, seed=seed, auto_reset=False, **rules)
    observations, _ = env.reset(seed=seed)
    engine.reset(seed=seed)
    rng = np.random.default_rng(0)
    paid_by_engine = np.zeros((games, 3))
    paid_by_env = np.zeros((games, 3))
    ended = 0
    for _ in range(3000):
        masks = engine.legal_mask()
        actions = (rng.random(masks.shape) * masks).argmax(axis=1)
        action_dicts = []
        for g in range(games):
            if engine.current_player[g] < 0:  # over: the env deals it again in this step
                action_dicts.append({})
                continue
            (agent, view), = observations[g].items()
            assert agent == f"player_{engine.current_player[g]}"
            assert np.array_equal(view["action_mask"] > 0, masks[g])
            action_dicts.append({agent: int(actions[g])})
        running = engine.current_player >= 0
        stepped = np.where(running, actions, -1)
        rewards, terminated, truncated = engine.step(stepped, partial=True)
        paid_by_engine += rewards
        engine.reset(games=np.flatnonzero(~running))
        observations, env_rewards, terminateds, truncateds, _ = env.step(action_dicts)
        for g in range(games):
            assert set(env_rewards[g]) <= set(observations[g]), "a reward without an observation"
            for agent, reward in env_rewards[g].items():
                paid_by_env[g, int(agent.split("_")[1])] += reward
            if running[g]:
                assert terminateds[g]["__all__"] == terminated[g] and truncateds[g]["__all__"] == truncated[g]
                ended += terminated[g]
    assert ended >= 2, "too few matches ended to test anything"
    np.testing.assert_allclose(paid_by_env, paid_by_engine, atol=1e-5)


def test_league_mapping_is_fixed_per_episode_and_fair():
    class Episode:
        def __init__(self, id_):
            self.id_ = id_

    mapping = LeagueMapping(num_players=3, num_frozen=2)
    learner_seats = []
    for index in range(600):
        episode = Episode(f"{index:032x}")
        modules = [mapping(f"player_{seat}", episode) for seat in range(3)]
        assert modules == [mapping(f"player_{seat}", episode) for seat in range(3)]
        assert modules.count(LEARNER_POLICY) == 1
        assert set(modules) - {LEARNER_POLICY} <= {frozen_policy(0), frozen_policy(1)}
        learner_seats.append(modules.index(LEARNER_POLICY))
    assert min(np.bincount(learner_seats, minlength=3)) > 150
    with pytest.raises(ValueError, match="num_frozen"):
        LeagueMapping(3, 0)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the learner runs here; extra threads only contend on a busy machine
    yield
    torch.set_num_threads(threads)
    ray.shutdown()


def _runner_weights(algo, module_id: str) -> np.ndarray:
    """The first layer's bias of module_id as the env runner process holds it."""
    return algo.env_runner_group.foreach_env_runner(
        lambda runner: next(iter(runner.module[module_id].state_dict().values())).numpy().copy(), local_env_runner=False)[0]


def _learner_weights(algo) -> np.ndarray:
    return next(iter(algo.learner_group.get_weights([LEARNER_POLICY])[LEARNER_POLICY].values()))


def test_ppo_trains_one_iteration_with_a_worker_process(local_ray):
    """One PPO iteration of a learner against a frozen snapshot of itself, sampled by one env
    runner process: the snapshot the runner plays is the learner's weights at the start and
    after the refresh, the sampled actions are legal, and every finished round pays +1 to its
    winner and -1 to the other seat."""
    # Without voluntary draws an untrained policy ends a round in about a hundred decisions
    # (thousands with them), so the sample below holds finished rounds to check.
    config = ppo_config(2, runners=1, games_per_runner=8, train_batch=256, minibatch=128, epochs=1, hidden=(64,),
                        league=1, snapshot_every=1, voluntary_draw=False, max_turns=200)
    algo = config.build_algo()
    try:
        start = _learner_weights(algo)
        assert np.allclose(_runner_weights(algo, frozen_policy(0)), start)
        result = algo.train()
        assert result["env_runners"]["num_env_steps_sampled"] >= 256
        assert np.isfinite(result["learners"][LEARNER_POLICY]["total_loss"])
        trained = _learner_weights(algo)
        assert not np.allclose(trained, start) and result["league_refreshed"] == frozen_policy(0)
        assert np.allclose(_runner_weights(algo, frozen_policy(0)), trained)
        chunks = algo.env_runner_group.foreach_env_runner(lambda runner: runner.sample(num_timesteps=1600),
                                                          local_env_runner=False)[0]
        finished = 0
        for chunk in chunks:
            for single in chunk.agent_episodes.values():
                masks = np.asarray(single.get_observations()["action_mask"])[:len(single)]
                actions = np.asarray(single.get_actions())
                assert masks[np.arange(len(actions)), actions].all(), "an illegal action was sampled"
            final = sorted(single.get_rewards()[-1] for single in chunk.agent_episodes.values())
            if chunk.is_terminated:
                finished += 1
                assert final == [-1.0, 1.0]
            elif chunk.is_truncated:  # max_turns: nobody won, and the value is bootstrapped
                assert final == [0.0, 0.0] and not any(single.is_terminated for single in chunk.agent_episodes.values())
        assert finished >= 4, "too few rounds ended to check the credit"
        policy = RLModulePolicy(algo.get_module(LEARNER_POLICY), num_players=2)
        engine = VectorEngine(num_games=64, num_players=2, seed=3)
        engine.reset()
        masks = engine.legal_mask()
        actions = policy.act(engine.observe(), masks)
        assert masks[np.arange(64), actions].all()
    finally:
        algo.stop()


def test_batched_runner_logs_rllibs_sample_counts_once_per_sample():
    """HPUnoEnvRunner logs the step, episode, agent and module counts RLlib's MultiAgentEnvRunner logs
    (overriding its private ``_increase_sampled_metrics``), one value per sample() instead of six per step."""
    from hpuno_env.rllib import HPUnoEnvRunner

    config = ppo_config(2, runners=0, games_per_runner=8, hidden=(16,), voluntary_draw=False, max_turns=200, seed=5)
    runner = HPUnoEnvRunner(config=config)
    try:
        episodes = runner.sample(num_timesteps=2000)
        metrics = runner.get_metrics()
    finally:
        runner.stop()
    env_steps = sum(episode.env_steps() for episode in episodes)
    finished = sum(episode.is_done for episode in episodes)
    assert finished >= 2
    assert metrics["num_env_steps_sampled"].peek() == env_steps == metrics["num_env_steps_sampled_lifetime"].peek()
    assert metrics["num_episodes"].peek() == finished
    # an agent step is an observation handed out: one a step, and every seat's last view when a game ends
    agent_steps = {agent: stats.peek() for agent, stats in metrics["num_agent_steps_sampled"].items()}
    assert sorted(agent_steps) == ["player_0", "player_1"] and sum(agent_steps.values()) == env_steps + finished
    assert metrics["num_module_steps_sampled"]["shared"].peek() == env_steps + finished


def load_train_rllib():
    import importlib.util
    import pathlib

    spec = importlib.util.spec_from_file_location("train_rllib_script", pathlib.Path(__file__).resolve().parents[2] / "train_rllib.py")
    script = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = script  # dataclasses look their module up there
    spec.loader.exec_module(script)
    return script


@pytest.mark.parametrize("argv, message", [
    (["--hidden", "256,0"], "--hidden must be positive layer sizes"),
    (["--rules", '{"uno_penalt": 3}'], "--rules: unknown rules option(s) ['uno_penalt']"),
    (["--rules", "[1]"], "--rules: expected a JSON object"),
    (["--iterations", "0"], "--iterations must be at least 1"),
    (["--players", "1"], "--players must be in [2, 10], got 1"),
    (["--lr", "0"], "--lr must be in (0, 1]"),
    (["--entropy-coeff", "-1"], "--entropy-coeff must be >= 0"),
    (["--out", "/proc/version/rllib"], "--out: "),
    (["--checkpoint-every", "-1"], "--checkpoint-every must be at least 0"),
])
def test_train_rllib_refuses_bad_options_before_ray_starts(argv, message, capsys, tmp_path):
    script = load_train_rllib()
    assert script.parse_args(["--players", "4", "--out", str(tmp_path)]).players == 4
    ray_was_running = ray.is_initialized()  # another test may have started it
    with pytest.raises(SystemExit) as exit_:
        script.parse_args(["--out", str(tmp_path), *argv])
    assert exit_.value.code == 2 and message in capsys.readouterr().err and ray.is_initialized() == ray_was_running


def test_train_rllib_checkpoints_resumes_with_its_own_options_and_saves_on_ctrl_c(local_ray, tmp_path, monkeypatch, capsys):
    from ray.rllib.algorithms.ppo import PPO

    script = load_train_rllib()
    out = str(tmp_path / "run")
    tiny = ["--runners", "0", "--games-per-runner", "8", "--train-batch", "256", "--minibatch", "128", "--epochs", "1",
            "--eval-rounds", "0", "--rules", '{"voluntary_draw": false, "max_turns": 200}']
    assert script.main(["--iterations", "1", "--hidden", "32", "--out", out, *tiny]) == 0
    progress = json.loads((tmp_path / "run" / "checkpoint" / "progress.json").read_text())
    assert progress["iterations"] == 1 and progress["options"]["hidden"] == "32"
    assert progress["env_steps"] >= 256 and progress["seconds"] > 0  # one batch of 256 steps, at least
    assert ray.is_initialized()  # the Ray it found running is left running

    for argv, message in ((["--out", out], "already holds a checkpoint: --resume continues it"),
                          (["--out", out, "--resume", "--hidden", "64"], "--hidden 64: the checkpoint"),
                          (["--out", str(tmp_path / "none"), "--resume"], "--resume: no checkpoint in"),
                          (["--out", out, "--resume", "--overwrite"], "contradict each other")):
        with pytest.raises(SystemExit) as exit_:
            script.parse_args(argv)
        assert exit_.value.code == 2 and message in capsys.readouterr().err
    assert script.parse_args(["--out", out, "--resume", "--hidden", " 32"]).hidden == " 32"  # the same layers, written otherwise

    real_train, calls = PPO.train, []

    def train_then_interrupt(self):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real_train(self)

    monkeypatch.setattr(PPO, "train", train_then_interrupt)
    # --hidden not given: the run's own 32, or restoring its weights would fail
    assert script.main(["--iterations", "5", "--out", out, "--resume"]) == 130
    printed = capsys.readouterr().out
    assert "resumed from" in printed and "at iteration 1" in printed and "iter    2" in printed
    # the start says what it waits for, then how long it took
    assert "starting PPO's learner and 0 env runners" in printed and "  done in " in printed
    assert "training: iterations 2 to 5" in printed
    assert "interrupted after iteration 2" in printed and f"resume with: python train_rllib.py --out {out} --resume" in printed
    resumed = json.loads((tmp_path / "run" / "checkpoint" / "progress.json").read_text())
    assert resumed["iterations"] == 2 and resumed["env_steps"] > progress["env_steps"] and resumed["seconds"] > progress["seconds"]
    assert sorted(os.listdir(tmp_path / "run")) == ["checkpoint"]  # no half-written folder left
    monkeypatch.setattr(PPO, "train", real_train)
    assert script.main(["--iterations", "2", "--out", out, "--resume"]) == 0
    assert "at iteration 2 (" in (printed := capsys.readouterr().out) and "; nothing to train" in printed
    assert script.main(["--iterations", "1", "--hidden", "16", "--overwrite", "--out", out, *tiny]) == 0  # a new run there
    progress = json.loads((tmp_path / "run" / "checkpoint" / "progress.json").read_text())
    assert progress["iterations"] == 1 and progress["options"]["hidden"] == "16"


def _rllib_episodes_step_by_step(env_config: dict, seed: int, steps: list, samples: list[int], mapping) -> list[list]:
    """What RLlib's MultiAgentEnvRunner makes of the same games and actions: each step filed with
    ``MultiAgentEpisode.add_env_step``, a game dealt again as soon as its episode ends, episodes cut at the
    end of each sample (``samples``: steps per sample) and returned as RLlib returns them (pruned, numpy)."""
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
    from ray.rllib.utils.metrics import WEIGHTS_SEQ_NO

    from hpuno_env.rllib import MultiAgentGames

    games = MultiAgentGames(len(steps[0][0]), env_config)
    spaces_ = (dict.fromkeys(games.agents, games.observation_space), dict.fromkeys(games.agents, games.action_space))

    def deal(indices, seed=None):
        observations, infos = games.reset(np.asarray(indices), seed=seed)
        for g, observation, info in zip(indices, observations, infos):
            episodes[g] = MultiAgentEpisode(observation_space=spaces_[0], action_space=spaces_[1], agent_to_module_mapping_fn=mapping)
            episodes[g].add_env_reset(observations=observation, infos=info)

    episodes = [None] * games.num_games
    deal(list(range(games.num_games)), seed)
    stepping, results, steps = np.ones(games.num_games, np.bool_), [], iter(steps)
    for count in samples:
        done = []
        for _ in range(count):
            actions, log_probs, logits = next(steps)
            acting = [games.agents[seat] for seat in games.engine.current_player]
            moves = [{agent: int(action)} for agent, action in zip(acting, actions)]
            for g, step in enumerate(zip(*games.step(moves, stepping))):
                observation, reward, terminated, truncated, info = step
                outputs = {acting[g]: {Columns.ACTION_DIST_INPUTS: logits[g], Columns.ACTION_LOGP: log_probs[g], WEIGHTS_SEQ_NO: 0}}
                episodes[g].add_env_step(observations=observation, actions=moves[g], rewards=reward, infos=info,
                                         terminateds=terminated, truncateds=truncated, extra_model_outputs=outputs)
            ended = [g for g, episode in enumerate(episodes) if episode.is_done]
            done += [episodes[g] for g in ended]
            if ended:
                deal(ended)
        ongoing = [episode for episode in episodes if episode.env_t > 0]
        episodes = [episode.cut(len_lookback_buffer=1) for episode in episodes]
        for episode in done + ongoing:
            for agent in [agent for agent, single in episode.agent_episodes.items() if not len(single)]:
                del episode.agent_episodes[agent]
            episode.to_numpy()
        results.append(done + ongoing)
    return results


def _content_key(episode):
    return (len(episode), episode.env_t_started, tuple(sorted(
        (agent, single.get_extra_model_outputs("action_logp").tobytes()) for agent, single in episode.agent_episodes.items())))


def test_batched_runner_builds_the_episodes_rllib_builds_step_by_step(monkeypatch):
    """HPUnoEnvRunner's episodes, built from arrays once per sample(), hold what RLlib's per-step path
    builds from the same games and actions: per seat the observations, actions, rewards, log-probabilities,
    logits, ends and agent steps, over rounds that end and cut, chunks that go on across sample() calls
    under the same ids (with the seat's previous step as lookback), every env step in one chunk."""
    from ray.rllib.core.columns import Columns

    from agents.training.rllib_learner import shared_policy_mapping
    from hpuno_env.rllib import HPUnoEnvRunner
    from hpuno_env.rllib_sampling import BatchSampler

    config = ppo_config(3, runners=0, games_per_runner=5, hidden=(16,), voluntary_draw=False, max_turns=60,
                        reward="points", seed=11)
    recorded, act = [], BatchSampler._act

    def recording_act(self, explore):
        outputs = act(self, explore)
        recorded.append(tuple(np.copy(output) for output in outputs))
        return outputs

    monkeypatch.setattr(BatchSampler, "_act", recording_act)
    runner = HPUnoEnvRunner(config=config)
    try:
        samples, counts = [], []
        for timesteps in (23, 300, 7, 500):
            before = len(recorded)
            samples.append(runner.sample(num_timesteps=timesteps))
            counts.append(len(recorded) - before)
        reference = _rllib_episodes_step_by_step(config.env_config, runner._seed, recorded, counts, shared_policy_mapping)
    finally:
        runner.stop()
    ends = [(episode.is_terminated, episode.is_truncated) for chunk in samples for episode in chunk]
    assert ends.count((True, False)) >= 3 and ends.count((False, True)) >= 3, ends
    fields = (lambda e: e.get_actions(), lambda e: e.get_rewards(), lambda e: e.get_extra_model_outputs(Columns.ACTION_LOGP),
              lambda e: e.get_extra_model_outputs(Columns.ACTION_DIST_INPUTS))
    for ours, theirs, steps in zip(samples, reference, counts):
        assert sum(episode.env_steps() for episode in ours) == 5 * steps  # every game's every step, once
        assert sorted(map(_content_key, ours)) == sorted(map(_content_key, theirs))
        for mine, rllib in zip(sorted(ours, key=_content_key), sorted(theirs, key=_content_key)):
            assert (mine.is_terminated, mine.is_truncated, mine.env_t) == (rllib.is_terminated, rllib.is_truncated, rllib.env_t)
            for agent, single in mine.agent_episodes.items():
                other = rllib.agent_episodes[agent]
                assert (single.t_started, len(single), single.is_terminated, single.is_truncated, single.module_id) == (
                    other.t_started, len(other), other.is_terminated, other.is_truncated, other.module_id)
                for key, column in single.get_observations(slice(0, len(single) + 1)).items():
                    np.testing.assert_array_equal(column, other.get_observations(slice(0, len(other) + 1))[key])
                for field in fields:
                    np.testing.assert_allclose(field(single), field(other), rtol=0, atol=1e-6)
    for episode in samples[1]:  # RLlib's learner group slices episodes by env steps to share a batch
        cut = len(episode) // 3
        pieces = [episode[:cut], episode.slice(slice(cut, None), len_lookback_buffer=1)]
        assert [len(piece) for piece in pieces] == [cut, len(episode) - cut] and pieces[1].is_done == episode.is_done
        for agent, single in episode.agent_episodes.items():
            parts = [piece.agent_episodes[agent] for piece in pieces if agent in piece.agent_episodes]
            assert all(part.module_id == single.module_id and part.agent_id == agent for part in parts)
            np.testing.assert_array_equal(np.concatenate([part.get_actions() for part in parts]), single.get_actions())
            np.testing.assert_array_equal(np.concatenate([part.get_rewards() for part in parts]), single.get_rewards())
    for previous, chunk in zip(samples, samples[1:]):  # each ongoing chunk goes on under its ids
        following = {episode.id_: episode for episode in chunk}
        for episode in previous:
            if episode.is_done:
                continue
            successor = following[episode.id_]
            assert successor.env_t_started == episode.env_t
            for agent, single in episode.agent_episodes.items():
                if agent in successor.agent_episodes:
                    later = successor.agent_episodes[agent]
                    assert later.id_ == single.id_ and later.t_started == single.t and later.observations.lookback == 1
                    np.testing.assert_array_equal(later.get_observations(-1, neg_index_as_lookback=True)["observations"],
                                                  single.get_observations(-2)["observations"])


def test_train_rllib_trains_with_two_learner_processes(local_ray, tmp_path, capsys):
    """--learners 2: RLlib's learner group of two processes, each updating on half of every batch (the
    episodes HPUnoEnvRunner builds, sliced between them), trains an iteration and checkpoints."""
    config = ppo_config(2, runners=0, learners=2, train_batch=256, minibatch=128)
    assert (config.num_learners, config.train_batch_size_per_learner, config.minibatch_size) == (2, 128, 64)
    script = load_train_rllib()
    argv = ["--iterations", "1", "--runners", "0", "--learners", "2", "--games-per-runner", "8", "--train-batch", "512",
            "--minibatch", "128", "--epochs", "1", "--hidden", "32", "--eval-rounds", "0", "--out", str(tmp_path / "run"),
            "--rules", '{"voluntary_draw": false, "max_turns": 200}']
    assert script.main(argv) == 0
    printed = capsys.readouterr().out
    assert "0 runners x 8 games; 2 learner processes" in printed and "iter    1" in printed
    progress = json.loads((tmp_path / "run" / "checkpoint" / "progress.json").read_text())
    assert progress["iterations"] == 1 and progress["env_steps"] >= 512


def test_batched_runner_hands_what_it_cannot_batch_to_rllibs_loop():
    """Greedy sampling stays batched (the arg max of the masked logits: legal, log-probability 0); whole
    episodes and random actions go to RLlib's own loop, which deals afresh, and batched sampling resumes."""
    from hpuno_env.rllib import HPUnoEnvRunner

    config = ppo_config(2, runners=0, games_per_runner=4, hidden=(16,), voluntary_draw=False, max_turns=60, seed=2)
    runner = HPUnoEnvRunner(config=config)
    try:
        greedy = runner.sample(num_timesteps=200, explore=False)
        for episode in greedy:
            for single in episode.agent_episodes.values():
                masks = single.get_observations(slice(0, len(single)))["action_mask"]
                assert masks[np.arange(len(single)), single.get_actions()].all()
                assert not single.get_extra_model_outputs("action_logp").any()
        whole = runner.sample(num_episodes=2)
        assert len(whole) >= 2 and all(episode.is_done for episode in whole)
        assert runner._sampler is None
        assert sum(episode.env_steps() for episode in runner.sample(num_timesteps=40, random_actions=True)) >= 40
        assert sum(episode.env_steps() for episode in runner.sample(num_timesteps=40)) >= 40 and runner._sampler is not None
    finally:
        runner.stop()
