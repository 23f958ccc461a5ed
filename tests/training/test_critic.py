"""A critic that sees the other seats' hands (``HPUnoVecEnv(critic_sees_hands=True)``, ``agents.training.critic``): the env
adds exactly the hidden hands, the actor never reads them, and a run switched to such a critic starts where it was."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import VecEnvWrapper

import agents
from agents.training.critic import HandsCriticPolicy, widened
from agents.training.export import disagreements, engine_observations
from agents.training.agent_file import export, live_agent
from hpuno_env import HPUnoVecEnv
from hpuno_env.cards import CARD_LABELS, CARD_COPIES
from hpuno_env.encoding import observation_scale, observation_size, observation_size_in_version


def random_legal(masks, rng):
    return (rng.random(masks.shape) * masks).argmax(axis=1)


@pytest.mark.parametrize("num_players", [2, 4])
def test_the_env_adds_the_other_seats_hands_in_turn_order_and_nothing_else(num_players):
    size = observation_size(num_players)
    short = {"max_turns": 100}  # uniform random play makes long rounds: cut some short to cross round ends
    with_hands = HPUnoVecEnv(8, num_players, learner_seat="random", seed=3, scale_observations=True, critic_sees_hands=True, **short)
    plain = HPUnoVecEnv(8, num_players, learner_seat="random", seed=3, scale_observations=True, **short)
    assert with_hands.observation_space.shape == (size + (num_players - 1) * len(CARD_LABELS),)
    observations, expected = with_hands.reset(), plain.reset()
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(300):
        assert np.array_equal(observations[:, :size], expected)  # the observation itself is untouched
        assert with_hands.observation_space.contains(observations[0])
        for game in range(8):
            state = with_hands.batch.engine.game_state(game)
            seat = int(with_hands.batch.seats[game])
            hidden = (observations[game, size:] * np.tile(CARD_COPIES, num_players - 1)).round().astype(int)
            for k in range(1, num_players):  # other k: k seats to the learner's left, as the observation counts them
                counts = Counter(state["hands"][f"player_{(seat + k) % num_players}"])
                block = hidden[(k - 1) * len(CARD_LABELS):k * len(CARD_LABELS)]
                assert {CARD_LABELS[card]: int(n) for card, n in enumerate(block) if n} == dict(counts)
        actions = random_legal(with_hands.action_masks(), rng)
        observations, rewards, dones, infos = with_hands.step(actions)
        expected, plain_rewards, _, _ = plain.step(actions)
        assert np.array_equal(rewards, plain_rewards)
        for game in np.flatnonzero(dones):  # the finished round's hands are gone: zeros
            assert not infos[game]["terminal_observation"][size:].any()
            finished += 1
    assert finished > 0
    with pytest.raises(ValueError, match="critic_sees_hands"):
        HPUnoVecEnv(4, 2, critic_sees_hands="yes")


def small_model(env, policy="MlpPolicy", **policy_kwargs):
    return MaskablePPO(policy, env, n_steps=16, batch_size=128, n_epochs=1, seed=0, device="cpu",
                       policy_kwargs={"net_arch": [32, 32], **policy_kwargs})


def test_the_actor_reads_only_the_observation_and_exports_as_an_ordinary_agent(tmp_path):
    env = HPUnoVecEnv(8, 4, learner_seat="random", seed=1, scale_observations=True, critic_sees_hands=True,
                      opponent=agents.load("heuristic", 4))
    model = small_model(env, HandsCriticPolicy, actor_inputs=observation_size(4)).learn(256)
    observations = torch.as_tensor(env.reset())
    other_hands = observations.clone()
    other_hands[:, observation_size(4):] = torch.rand_like(other_hands[:, observation_size(4):])
    with torch.no_grad():
        logits = [model.policy.get_distribution(o).distribution.logits for o in (observations, other_hands)]
        values = [model.policy.predict_values(o) for o in (observations, other_hands)]
    assert torch.equal(logits[0], logits[1]) and not torch.equal(values[0], values[1])

    path = tmp_path / "agent.safetensors"
    export(model, str(path), num_players=4, observation_scale=observation_scale(4))
    loaded = agents.load(str(path), 4)
    assert loaded.describe()["network"]["input_size"] == observation_size(4)
    masks = env.action_masks()
    predicted, _ = model.predict(observations.numpy(), action_masks=masks, deterministic=True)
    assert np.array_equal(loaded.act(env.batch.observations, masks), predicted)
    live = live_agent(model, 4, observation_scale=observation_scale(4))
    assert np.array_equal(live.act(env.batch.observations, masks), predicted)
    raw, engine_masks = engine_observations(4, 256, seed=5)  # what python -m agents.training.export checks an export with
    assert disagreements(model, loaded, raw, engine_masks) == 0


def test_switching_a_model_to_a_hands_critic_keeps_its_actor_values_and_step_count():
    plain_env = HPUnoVecEnv(8, 2, seed=2, scale_observations=True)
    model = small_model(plain_env).learn(256)
    hands_env = HPUnoVecEnv(8, 2, seed=2, scale_observations=True, critic_sees_hands=True)
    continued = widened(model, hands_env, 1e-4)
    assert isinstance(continued.policy, HandsCriticPolicy) and continued.num_timesteps == model.num_timesteps
    assert (continued.n_steps, continued.batch_size, continued.gamma) == (model.n_steps, model.batch_size, model.gamma)
    observations = hands_env.reset()
    plain_observations = observations[:, :observation_size(2)]
    with torch.no_grad():
        before = model.policy.predict_values(torch.as_tensor(plain_observations))
        after = continued.policy.predict_values(torch.as_tensor(observations))  # the same observations, plus hands
        assert torch.allclose(before, after, atol=1e-6)
        old_logits = model.policy.get_distribution(torch.as_tensor(plain_observations)).distribution.logits
        new_logits = continued.policy.get_distribution(torch.as_tensor(observations)).distribution.logits
        assert torch.allclose(old_logits, new_logits)
    continued.learn(256, reset_num_timesteps=False)
    assert continued.num_timesteps == model.num_timesteps + 256


class FirstLayout(VecEnvWrapper):
    """An env as layout version 1 showed it: without the fields later versions appended to the observation."""

    def __init__(self, venv):
        self.kept = observation_size_in_version(venv.num_players, 1)
        self.dropped = slice(self.kept, observation_size(venv.num_players))
        size = venv.observation_space.shape[0] - (self.dropped.stop - self.dropped.start)
        super().__init__(venv, observation_space=spaces.Box(-np.inf, np.inf, (size,), np.float32))

    def earlier(self, observations):
        return np.delete(observations, np.arange(self.dropped.start, self.dropped.stop), axis=1)

    def reset(self):
        return self.earlier(self.venv.reset())

    def step_wait(self):
        observations, rewards, dones, infos = self.venv.step_wait()
        return self.earlier(observations), rewards, dones, infos


@pytest.mark.parametrize("num_players,hands", [(2, False), (4, True), (4, False)])
def test_a_checkpoint_of_the_first_layout_goes_on_with_zero_weights_on_the_new_fields(num_players, hands):
    def make():
        return HPUnoVecEnv(8, num_players, learner_seat="random", seed=4, scale_observations=True, critic_sees_hands=hands)

    old_env = FirstLayout(make())
    kwargs = {"actor_inputs": old_env.kept} if hands else {}
    model = small_model(old_env, HandsCriticPolicy if hands else "MlpPolicy", **kwargs).learn(256)
    env = make()
    continued = widened(model, env, 1e-4)
    assert isinstance(continued.policy, HandsCriticPolicy) == hands and continued.num_timesteps == model.num_timesteps
    observations = env.reset()
    for _ in range(20):  # some play, so that the new fields are not all zeros
        observations, *_ = env.step(random_legal(env.action_masks(), np.random.default_rng(0)))
    added = observations[:, old_env.dropped]
    assert added.any()
    with torch.no_grad():
        new, old = torch.as_tensor(observations), torch.as_tensor(old_env.earlier(observations))
        assert torch.allclose(model.policy.predict_values(old), continued.policy.predict_values(new), atol=1e-6)
        old_logits = model.policy.get_distribution(old).distribution.logits
        assert torch.allclose(old_logits, continued.policy.get_distribution(new).distribution.logits, atol=1e-6)
    continued.learn(256, reset_num_timesteps=False)
    assert continued.num_timesteps == model.num_timesteps + 256


def test_widening_refuses_a_model_of_another_player_count():
    model = small_model(HPUnoVecEnv(8, 3, seed=0, scale_observations=True))
    with pytest.raises(ValueError, match="another player count"):
        widened(model, HPUnoVecEnv(8, 4, seed=0, scale_observations=True), 1e-4)
