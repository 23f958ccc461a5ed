"""A MaskablePPO policy whose critic also sees the other seats' hands (training only).

UNO hides most of what decides a round, so a critic that reads only the seat's
observation explains little of the outcome (explained variance about 0.55 in
4-player training against the heuristic), and PPO's advantages are noisy. A
critic is only used while training, so it may read what the player cannot:
``HandsCriticPolicy`` gives its critic the whole vector of
``HPUnoVecEnv(critic_sees_hands=True)`` (the observation, then the others'
hands) and its actor only the first ``actor_inputs`` entries (the observation).
The actor is the same network an ordinary ``MlpPolicy`` has, so an agent
exported from it (``agents.training.agent_file.export``) is an ordinary agent file that
plays from observations alone. (The idea is the asymmetric actor-critic of
Pinto et al. 2017, used for card games by PerfectDou's perfect-information
critic.)

    env = HPUnoVecEnv(64, 4, learner_seat="random", scale_observations=True, critic_sees_hands=True)
    model = MaskablePPO(HandsCriticPolicy, env, policy_kwargs={"actor_inputs": observation_size(4)})

``widened`` continues a checkpoint on an env with more inputs than it was made
for (``train.py --resume`` calls it): observation fields a later layout version
appended, or the hands, when a run switches to this critic. The new inputs get
zero weights, so the model plays on as it did and learns to use them.
"""

from __future__ import annotations

import torch
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor

from hpuno_env.encoding import OBSERVATION_VERSION, observation_size, observation_size_in_version


class HandsCriticExtractor(MlpExtractor):
    """SB3's MlpExtractor, but the policy net reads only the first ``actor_inputs`` features."""

    def __init__(self, feature_dim: int, actor_inputs: int, net_arch, activation_fn, device="auto"):
        if not 0 < actor_inputs < feature_dim:
            raise ValueError(f"actor_inputs must be in (0, {feature_dim}), got {actor_inputs}")
        super().__init__(feature_dim, net_arch, activation_fn, device)
        self.actor_inputs = actor_inputs
        self.policy_net = MlpExtractor(actor_inputs, net_arch, activation_fn, device).policy_net

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., : self.actor_inputs])


class HandsCriticPolicy(MaskableActorCriticPolicy):
    """MaskablePPO's MlpPolicy with a critic that reads the whole input and an actor that reads its first
    ``actor_inputs`` entries (pass ``policy_kwargs={"actor_inputs": observation_size(num_players)}``)."""

    def __init__(self, observation_space, action_space, lr_schedule, actor_inputs: int, **kwargs):
        self.actor_inputs = int(actor_inputs)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = HandsCriticExtractor(self.features_dim, self.actor_inputs, self.net_arch, self.activation_fn, self.device)

    def _get_constructor_parameters(self) -> dict:
        return {**super()._get_constructor_parameters(), "actor_inputs": self.actor_inputs}


def actor_inputs(model) -> int:
    """How many entries of its input ``model``'s actor reads (the observation, without a hands critic's extra)."""
    return model.policy.actor_inputs if isinstance(model.policy, HandsCriticPolicy) else model.observation_space.shape[0]


def needs_widening(model, env) -> bool:
    """Does ``env`` give ``model`` more inputs than it was made for: observation fields a later layout version added,
    or, for a critic of observations, the hands of ``critic_sees_hands=True``?"""
    return model.observation_space.shape[0] < env.observation_space.shape[0]


def widened(model, env, learning_rate):
    """A MaskablePPO on ``env`` that continues ``model``, an MlpPolicy or hands-critic one whose inputs are fewer than
    ``env``'s: the same PPO settings, step count and weights, with zero weights on each new input, so that its first
    actions and values are the old ones and it learns to use the new inputs from there. The new inputs are
    observation fields appended by a later layout version (``hpuno_env.encoding.FIELDS_ADDED_IN_VERSION``) and, when
    ``env`` has ``critic_sees_hands=True`` and ``model`` a critic of observations only, the hands (the critic then
    becomes a ``HandsCriticPolicy``). The optimiser starts afresh (its moments were kept for the old shapes).
    ValueError if ``model``'s observation is not an earlier version of ``env``'s, or its critic reads hands ``env``
    does not give."""
    num_players = env.num_players
    old_observation, new_observation = actor_inputs(model), observation_size(num_players)
    earlier = [observation_size_in_version(num_players, version) for version in range(1, OBSERVATION_VERSION + 1)]
    if old_observation not in earlier:
        raise ValueError(f"the model reads {old_observation}-entry observations; {num_players}-player observations of "
                         f"layout versions 1 to {OBSERVATION_VERSION} have {earlier} (a model made for another player count?)")
    hands = env.observation_space.shape[0] - new_observation  # 0 unless env gives the critic the hands
    old_hands = model.observation_space.shape[0] - old_observation
    if old_hands not in (0, hands):
        raise ValueError(f"the model's critic reads {old_hands} entries of hands, but this env gives {hands}")
    policy_kwargs = {key: value for key, value in model.policy_kwargs.items() if key != "actor_inputs"}
    continued = MaskablePPO(
        HandsCriticPolicy if hands else "MlpPolicy", env, learning_rate=learning_rate, n_steps=model.n_steps,
        batch_size=model.batch_size, n_epochs=model.n_epochs, gamma=model.gamma, gae_lambda=model.gae_lambda,
        clip_range=model.clip_range, ent_coef=model.ent_coef, vf_coef=model.vf_coef, max_grad_norm=model.max_grad_norm,
        policy_kwargs={**policy_kwargs, **({"actor_inputs": new_observation} if hands else {})}, seed=model.seed,
        device=model.device, verbose=0,
    )
    weights, new_weights = model.policy.state_dict(), continued.policy.state_dict()
    for first_layer in ("mlp_extractor.policy_net.0.weight", "mlp_extractor.value_net.0.weight"):
        old = weights[first_layer]
        grown = torch.zeros_like(new_weights[first_layer])
        grown[:, :old_observation] = old[:, :old_observation]
        if old_hands and first_layer.startswith("mlp_extractor.value_net"):
            grown[:, new_observation:] = old[:, old_observation:]
        weights = {**weights, first_layer: grown}
    continued.policy.load_state_dict(weights)
    continued.num_timesteps = model.num_timesteps
    return continued
