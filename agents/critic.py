"""A MaskablePPO policy whose critic also sees the other seats' hands (training only).

UNO hides most of what decides a round, so a critic that reads only the seat's
observation explains little of the outcome (explained variance about 0.55 in
4-player training against the heuristic), and PPO's advantages are noisy. A
critic is only used while training, so it may read what the player cannot:
``HandsCriticPolicy`` gives its critic the whole vector of
``HPUnoVecEnv(critic_sees_hands=True)`` (the observation, then the others'
hands) and its actor only the first ``actor_inputs`` entries (the observation).
The actor is the same network an ordinary ``MlpPolicy`` has, so an agent
exported from it (``agents.trained.export``) is an ordinary agent file that
plays from observations alone. (The idea is the asymmetric actor-critic of
Pinto et al. 2017, used for card games by PerfectDou's perfect-information
critic.)

    env = HPUnoVecEnv(64, 4, learner_seat="random", scale_observations=True, critic_sees_hands=True)
    model = MaskablePPO(HandsCriticPolicy, env, policy_kwargs={"actor_inputs": observation_size(4)})
"""

from __future__ import annotations

import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import MlpExtractor


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


def with_hands_critic(model, env, learning_rate):
    """A MaskablePPO on ``env`` (``critic_sees_hands=True``) that continues ``model`` (an ``MlpPolicy`` one): the same
    actor, PPO settings and step count, and a critic that starts where ``model``'s was: its weights, with zero weights
    on the new inputs (the hands), so its first values are the old ones and it learns to use the hands from there.
    The optimiser starts afresh (its moments were kept for the old shapes)."""
    from sb3_contrib import MaskablePPO

    actor_inputs = model.observation_space.shape[0]
    continued = MaskablePPO(
        HandsCriticPolicy, env, learning_rate=learning_rate, n_steps=model.n_steps, batch_size=model.batch_size,
        n_epochs=model.n_epochs, gamma=model.gamma, gae_lambda=model.gae_lambda, clip_range=model.clip_range,
        ent_coef=model.ent_coef, vf_coef=model.vf_coef, max_grad_norm=model.max_grad_norm,
        policy_kwargs={**model.policy_kwargs, "actor_inputs": actor_inputs}, seed=model.seed, device=model.device, verbose=0,
    )
    weights = model.policy.state_dict()
    first_critic_layer = "mlp_extractor.value_net.0.weight"
    widened = torch.zeros_like(continued.policy.state_dict()[first_critic_layer])
    widened[:, :actor_inputs] = weights[first_critic_layer]
    continued.policy.load_state_dict({**weights, first_critic_layer: widened})
    continued.num_timesteps = model.num_timesteps
    return continued
