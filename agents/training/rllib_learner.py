"""The learner's side of Ray RLlib training: the masking network, self-play mappings, the frozen league, a PPO config,
and a trained module as a player.

The env side (``hpuno_env.rllib``: the ``MultiAgentEnv``, the batched env runner) is what RLlib samples from;
this module is what it learns with, and what ``train_rllib.py`` runs:

* ``MaskedPPOTorchRLModule``: RLlib's default PPO network with the logits of illegal actions masked, reading
  the observation Dict of ``hpuno_env.rllib.HPUnoMultiAgentEnv``.
* ``shared_policy_mapping`` (every seat plays the one trained policy) and ``LeagueMapping`` + ``FrozenLeague``
  (one seat per game is the learner, the others frozen snapshots of it, refreshed every few iterations): self-play.
* ``ppo_config``: PPO with masking on all of the above.
* ``RLModulePolicy``: a trained module as a batched player (``act(observations, action_masks)``), for
  ``agents.evaluation.rounds.win_rate``.

RLlib (``pip install "hpuno-env[rllib]"``) is imported here and by ``hpuno_env.rllib``, never by ``import agents``
or ``import hpuno_env``. Every process that builds a module imports this one: RLlib hands the env runners their
config, which names the module class.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

try:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.models.base import ENCODER_OUT
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError('agents.training.rllib_learner needs Ray RLlib: pip install "hpuno-env[rllib]"') from error

from gymnasium import spaces

from hpuno_env._checks import check_int, check_positive_int
from hpuno_env.rllib import HPUnoEnvRunner, HPUnoMultiAgentEnv
from hpuno_env.seat_batch import ObservationFormat

SHARED_POLICY = "shared"  # the module id of the one policy at every seat (shared_policy_mapping)
LEARNER_POLICY = "learner"  # the module id of the league's learner (LeagueMapping)


def frozen_policy(index: int) -> str:
    """Module id of the league's index-th frozen snapshot."""
    return f"frozen_{index}"


# ------------------------------------------------------------ the network


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO network on ``"observations"``, with the logits of the actions that
    ``"action_mask"`` forbids set to the lowest float, so they are never sampled.

    It reads the observation Dict that RLlib's example ``ActionMaskingTorchRLModule``
    reads (the env suits both); this one builds on ``DefaultPPOTorchRLModule``
    (the example's base class is deprecated in RLlib 2.60) and leaves the batch
    it is given unchanged.
    """

    def __init__(self, *, observation_space=None, **kwargs):
        if not (isinstance(observation_space, spaces.Dict) and {"observations", "action_mask"} <= set(observation_space.spaces)):
            raise ValueError(f"observation_space must be a Dict with 'observations' and 'action_mask', got {observation_space}")
        super().__init__(observation_space=observation_space["observations"], **kwargs)
        # The networks are built for the observations alone; the module's space (what
        # RLlib reads to rebuild it from a checkpoint) is the env's, with the mask.
        self.observation_space = observation_space

    def _forward(self, batch, **kwargs):
        mask, batch = _split_mask(batch)
        encoder = self.encoder
        if encoder.config.shared or getattr(encoder, "critic_encoder", None) is None or self.is_stateful():
            return _mask_logits(super()._forward(batch, **kwargs), mask)
        # The actor's encoder alone: RLlib's _forward runs the critic's too, for nothing, in every env
        # runner (RLlib builds a runner's modules of a multi-agent spec with their critics).
        return _mask_logits({Columns.ACTION_DIST_INPUTS: self.pi(encoder.actor_encoder(batch)[ENCODER_OUT])}, mask)

    def _forward_train(self, batch, **kwargs):
        mask, batch = _split_mask(batch)
        return _mask_logits(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch, embeddings=None):
        if embeddings is None:
            _, batch = _split_mask(batch)
        return super().compute_values(batch, embeddings)


def _split_mask(batch: dict) -> tuple[Any, dict]:
    """(action mask, a shallow copy of batch whose observations are the plain vectors)."""
    observations = batch[Columns.OBS]
    batch = dict(batch)
    batch[Columns.OBS] = observations["observations"]
    return observations["action_mask"], batch


def _mask_logits(outputs: dict, mask) -> dict:
    logits = outputs[Columns.ACTION_DIST_INPUTS]
    outputs[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask <= 0, FLOAT_MIN)
    return outputs


# ------------------------------------------------------------ self-play


def shared_policy_mapping(agent_id, episode, **kwargs) -> str:
    """Every seat plays the one trained policy (self-play with shared parameters)."""
    return SHARED_POLICY


class LeagueMapping:
    """One seat per game is the learner, every other seat one of ``num_frozen`` frozen snapshots.

    The choice is a function of the episode id and the agent (CRC32), so it is the
    same whichever process asks and whenever; over many games every seat is the
    learner's equally often and every snapshot is met equally often.
    """

    def __init__(self, num_players: int, num_frozen: int):
        num_frozen = check_positive_int(num_frozen, "num_frozen")
        self.num_players, self.num_frozen = num_players, num_frozen

    def __call__(self, agent_id, episode, **kwargs) -> str:
        learner_seat = zlib.crc32(episode.id_.encode()) % self.num_players
        if agent_id == f"player_{learner_seat}":
            return LEARNER_POLICY
        return frozen_policy(zlib.crc32(f"{episode.id_}/{agent_id}".encode()) % self.num_frozen)


class FrozenLeague:
    """Keeps the league's frozen snapshots: all copies of the learner at the start, then every
    ``snapshot_every`` training iterations the oldest one becomes the learner's current weights.

    Register both hooks: ``config.callbacks(on_algorithm_init=league.on_algorithm_init,
    on_train_result=league.on_train_result)`` (``ppo_config`` does).
    """

    def __init__(self, num_frozen: int, snapshot_every: int):
        snapshot_every = check_positive_int(snapshot_every, "snapshot_every")
        self.num_frozen, self.snapshot_every = num_frozen, snapshot_every
        self.next_slot = 0

    def on_algorithm_init(self, *, algorithm, **kwargs) -> None:
        self._copy_learner(algorithm, [frozen_policy(i) for i in range(self.num_frozen)])

    def on_train_result(self, *, algorithm, result: dict, **kwargs) -> None:
        if algorithm.iteration % self.snapshot_every == 0:
            self._copy_learner(algorithm, [frozen_policy(self.next_slot)])
            result["league_refreshed"] = frozen_policy(self.next_slot)
            self.next_slot = (self.next_slot + 1) % self.num_frozen

    @staticmethod
    def _copy_learner(algorithm, module_ids: list[str]) -> None:
        learners = algorithm.learner_group
        weights = learners.get_weights([LEARNER_POLICY])[LEARNER_POLICY]
        learners.set_weights({module_id: weights for module_id in module_ids})
        # Set on every env runner and waited for: EnvRunnerGroup.sync_weights sends its request
        # asynchronously and drops it while another sync is in flight (as one is, right after
        # the algorithm's own syncs), so the runners could keep playing the old snapshot.
        component = "learner/rl_module"
        state = learners.get_state(components=[f"{component}/{module_id}" for module_id in module_ids],
                                   inference_only=True)["learner"]["rl_module"]
        algorithm.env_runner_group.foreach_env_runner(lambda runner: runner.module.set_state(state), local_env_runner=True)


# ------------------------------------------------------------ PPO


# What PPO's update does beyond the options, as Stable-Baselines3's PPO (train.py) does it (ppo_config).
SB3_UPDATE = {"vf_loss_coeff": 0.5, "grad_clip": 0.5, "grad_clip_by": "global_norm", "use_kl_loss": False, "kl_coeff": 0.0,
              "vf_clip_param": float("inf")}


def ppo_config(num_players: int = 2, *, runners: int = 2, games_per_runner: int = 64, batched: bool = True,
               league: int = 0, snapshot_every: int = 5, train_batch: int = 4096, minibatch: int = 512, epochs: int = 4,
               lr: float = 3e-4, entropy_coeff: float = 0.01, gamma: float = 0.99, gae_lambda: float = 0.8,
               clip_range: float = 0.2, hidden: Sequence[int] = (256, 256), scale_observations: bool = True, learners: int = 0, learner_gpus: float = 0.0, seed: int | None = 0,
               **rule_options) -> PPOConfig:
    """PPO with action masking (``MaskedPPOTorchRLModule``) on Harry Potter UNO self-play.

    ``train_batch``, ``minibatch``, ``epochs``, ``lr``, ``entropy_coeff``, ``gamma``, ``gae_lambda``,
    ``clip_range`` and ``hidden`` are PPO's and the network's (the batch and minibatch sizes over all learners
    together), named and defaulted as train.py's. The rest of the update is set as Stable-Baselines3's PPO,
    which train.py runs: value loss weight 0.5, gradients clipped to a global norm of 0.5, no KL penalty and no
    value clipping (RLlib's defaults are 1.0, no clipping, a KL penalty of 0.2 and a value clip of 10), so that
    a recipe moves between the two.

    Args:
        num_players: seats per game.
        runners: env runner processes (0: sample in the driver).
        games_per_runner: games each runner steps together.
        batched: all of a runner's games in one engine (``HPUnoEnvRunner``), else RLlib's
            ``SyncVectorMultiAgentEnv`` over ``HPUnoMultiAgentEnv`` copies.
        league: 0 for one shared policy at every seat; k > 0 for a ``"learner"`` against
            k frozen snapshots of itself (``LeagueMapping``), refreshed every
            ``snapshot_every`` iterations (``FrozenLeague``).
        scale_observations: observations times ``encoding.observation_scale``.
        learners: learner processes (RLlib's ``num_learners``), each updating on its share of the
            batch, their gradients averaged; 0: one learner in the driver's process.
        learner_gpus: GPUs per learner (RLlib's ``num_gpus_per_learner``; 0: CPU).
        seed: seeds the games and the networks.
        **rule_options: ``RulesOptions`` fields.

    Build with ``.build_algo()`` after ``ray.init()``.
    """
    league = check_int(league, "league (the number of frozen snapshots)", low=0)
    learners = check_int(learners, "learners", low=0)
    if not learner_gpus >= 0:
        raise ValueError(f"learner_gpus must be >= 0, got {learner_gpus}")
    env_config = {"num_players": num_players, "scale_observations": scale_observations, "seed": seed, **rule_options}
    HPUnoMultiAgentEnv(env_config)  # bad options fail here, in the caller, not in a worker
    module = RLModuleSpec(module_class=MaskedPPOTorchRLModule,
                          model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": [], "vf_share_layers": False})
    shares = max(learners, 1)
    if league:
        module_ids = [LEARNER_POLICY] + [frozen_policy(i) for i in range(league)]
        mapping, trained = LeagueMapping(num_players, league), [LEARNER_POLICY]
    else:
        module_ids, mapping, trained = [SHARED_POLICY], shared_policy_mapping, [SHARED_POLICY]
    config = (
        PPOConfig()
        .environment(HPUnoMultiAgentEnv, env_config=env_config)
        .env_runners(num_env_runners=runners, num_envs_per_env_runner=games_per_runner,
                     env_runner_cls=HPUnoEnvRunner if batched else MultiAgentEnvRunner)
        .multi_agent(policies=set(module_ids), policy_mapping_fn=mapping, policies_to_train=trained)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={module_id: module for module_id in module_ids}))
        # RLlib's batch sizes are per learner: each learner samples and updates on its share
        .training(train_batch_size_per_learner=-(-train_batch // shares), minibatch_size=-(-minibatch // shares),
                  num_epochs=epochs, lr=lr, entropy_coeff=entropy_coeff, gamma=gamma, lambda_=gae_lambda,
                  clip_param=clip_range, **SB3_UPDATE)
        .learners(num_learners=learners, num_gpus_per_learner=learner_gpus)
        .debugging(seed=seed)
    )
    if league:
        keeper = FrozenLeague(league, snapshot_every)
        config.callbacks(on_algorithm_init=keeper.on_algorithm_init, on_train_result=keeper.on_train_result)
    return config


class RLModulePolicy:
    """A trained masking module as a batched player: ``act(observations, action_masks)`` takes the
    engine's int8 views and bool masks (as ``agents`` players do) and returns the greedy legal
    actions, so ``agents.evaluation.rounds.win_rate`` can measure it.

    ``scale_observations`` must be what the module was trained with.
    """

    def __init__(self, module, num_players: int, scale_observations: bool = True):
        self.module, self.num_players = module, num_players
        self.observation_format = ObservationFormat(num_players, np.float32, scale_observations)

    def act(self, observations, action_masks) -> np.ndarray:
        batch = {Columns.OBS: {
            "observations": torch.from_numpy(self.observation_format(np.asarray(observations))),
            "action_mask": torch.from_numpy(np.asarray(action_masks, dtype=np.float32)),
        }}
        with torch.no_grad():
            logits = self.module.forward_inference(batch)[Columns.ACTION_DIST_INPUTS]
        return logits.argmax(dim=1).numpy()
