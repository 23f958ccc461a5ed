"""Agent files from a live MaskablePPO model: ``export`` writes one, ``live_agent`` plays with the model's weights.

The file format, and reading it back without running code, are the player's
(``agents.players.trained``); this is the training side, which knows what an
SB3 policy is: an ``MlpPolicy``'s actor, or a ``HandsCriticPolicy``'s
(``agents.training.critic``), whose actor reads only the observation.
"""

from __future__ import annotations

import datetime
import json
import os
import shlex
import sys
from importlib.metadata import PackageNotFoundError, version

import numpy as np
import safetensors.torch
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.torch_layers import FlattenExtractor, MlpExtractor
from torch import nn

import hpuno_env

from agents.players.trained import (
    ACTIVATIONS, ANY_PLAYERS, FILE_SUFFIX, FORMAT_NAME, FORMAT_VERSION, METADATA_KEY, OBSERVATION_TRANSFORM, UNIVERSAL_LAYOUT,
    ActorNetwork, TrainedAgent,
)
from hpuno_env._output import write_atomically
from hpuno_env.cards import NUM_ACTIONS
from hpuno_env.encoding import OBSERVATION_VERSION, observation_size
from hpuno_env.options import RulesOptions, check_num_players
from hpuno_env.universal import UNIVERSAL_VERSION, universal_size

from .critic import HandsCriticExtractor, HandsCriticPolicy


def live_agent(
model, num_players: int, deterministic: bool = True, *, seed: int | None = None,
observation_scale=None, observation_shift=None, universal: bool = False, rules_options=None,
) -> TrainedAgent:
    """Act with a live MaskablePPO model's current weights (shared, not copied: updates show at once).
    ``universal``: the model reads the universal layout (``hpuno_env.universal``), converted in ``act`` from
    num_players' observations under ``rules_options``."""
    num_players = check_num_players(num_players)
    architecture = _model_architecture(model, num_players, universal)
    policy = model.policy
    device = policy.action_net.weight.device
    size = architecture["input_size"]
    network = ActorNetwork(
        policy.mlp_extractor.policy_net,
        policy.action_net,
        _observation_transform(observation_scale, "observation_scale", size, 1.0).to(device),
        _observation_transform(observation_shift, "observation_shift", size, 0.0).to(device),
    )
    metadata = _metadata(model, ANY_PLAYERS if universal else num_players, architecture, network, rules_options=None, training=None,
                         evaluation=None, extra={})
    agent = TrainedAgent(network, num_players, metadata, deterministic, seed, source="live model")
    agent.set_rules(rules_options)
    return agent


def export(
    model, path, *, num_players: int | None = None, rules_options=None, observation_scale=None, observation_shift=None,
    training: dict | None = None, evaluation: dict | None = None, universal: bool = False, **extra_metadata,
) -> dict:
    """Write a live MaskablePPO model's actor and metadata to ``path`` (.safetensors), atomically; return the metadata.

    ``universal=True``: the model reads the universal layout (``hpuno_env.universal``, as ``HPUnoMixtureVecEnv``
    gives it); the file then plays at any player count and ``num_players`` is not given."""
    path = os.fspath(path)
    if not path.endswith(FILE_SUFFIX):
        raise ValueError(f"path must end with {FILE_SUFFIX!r}, got {path!r}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"path's folder {folder!r} does not exist")
    if universal and num_players is not None:
        raise ValueError("a universal agent plays every player count: give universal=True without num_players")
    num_players = ANY_PLAYERS if universal else check_num_players(num_players)
    for name, value in (("training", training), ("evaluation", evaluation)):
        if value is not None and not isinstance(value, dict):
            raise TypeError(f"{name} must be a dict or None, got {type(value).__name__}")
    architecture = _model_architecture(model, num_players, universal)
    policy = model.policy
    size = architecture["input_size"]
    network = ActorNetwork(
        policy.mlp_extractor.policy_net,
        policy.action_net,
        _observation_transform(observation_scale, "observation_scale", size, 1.0),
        _observation_transform(observation_shift, "observation_shift", size, 0.0),
    )
    metadata = _metadata(model, num_players, architecture, network, rules_options, training, evaluation, extra_metadata)
    document = _to_json(metadata)
    tensors = {name: tensor.detach().to("cpu", torch.float32).contiguous().clone() for name, tensor in network.state_dict().items()}
    data = safetensors.torch.save(tensors, metadata={METADATA_KEY: document})
    write_atomically(path, data)
    return json.loads(document)


def _model_architecture(model, num_players, universal: bool = False) -> dict:
    """The network section of the metadata for a MaskablePPO MlpPolicy, or ValueError if the actor cannot be rebuilt."""
    policy = getattr(model, "policy", None)
    if not isinstance(policy, MaskableActorCriticPolicy):
        raise TypeError(f"model must be an sb3-contrib MaskablePPO with an MlpPolicy, got {type(model).__name__}")
    space = policy.observation_space
    expected = universal_size() if universal else observation_size(num_players)
    if universal:
        num_players = "universal"  # the messages below say "{num_players}-player observations"
    hands_critic = isinstance(policy, HandsCriticPolicy)  # its actor reads the observation, its critic more
    if hands_critic and policy.actor_inputs != expected:
        raise ValueError(f"model's actor reads {policy.actor_inputs} inputs, but {num_players}-player observations have {expected}")
    if not isinstance(space, spaces.Box) or (space.shape != (expected,) and not hands_critic):
        raise ValueError(f"model observes {space}, but {num_players}-player observations are a Box of shape ({expected},)")
    if not isinstance(policy.action_space, spaces.Discrete) or policy.action_space.n != NUM_ACTIONS:
        raise ValueError(f"model's action space is {policy.action_space}, expected Discrete({NUM_ACTIONS})")
    if type(policy.pi_features_extractor) is not FlattenExtractor:
        raise ValueError(
            f"model uses the features extractor {type(policy.pi_features_extractor).__name__}; only MlpPolicy's "
            "FlattenExtractor can be rebuilt from an agent file's metadata"
        )
    if type(policy.mlp_extractor) is not (HandsCriticExtractor if hands_critic else MlpExtractor):
        raise ValueError(f"model uses the MLP extractor {type(policy.mlp_extractor).__name__}; only SB3's MlpExtractor can be rebuilt")
    names = [name for name, cls in ACTIVATIONS.items() if policy.activation_fn is cls]
    if not names:
        raise ValueError(f"model's activation_fn {policy.activation_fn!r} is not one of {sorted(ACTIVATIONS)}")
    activation = ACTIVATIONS[names[0]]
    # The policy MLP must be exactly Linear, activation, Linear, activation, ... (no shared or extra layers).
    layers = list(policy.mlp_extractor.policy_net)
    hidden_sizes, width = [], expected
    for index in range(0, len(layers), 2):
        linear, act = layers[index], layers[index + 1] if index + 1 < len(layers) else None
        if type(linear) is not nn.Linear or linear.bias is None or linear.in_features != width or type(act) is not activation:
            raise ValueError(f"model's policy_net {policy.mlp_extractor.policy_net} is not a plain Linear/{activation.__name__} MLP from {expected} inputs")
        hidden_sizes.append(linear.out_features)
        width = linear.out_features
    action_net = policy.action_net
    if type(action_net) is not nn.Linear or action_net.bias is None or action_net.in_features != width or action_net.out_features != NUM_ACTIONS:
        raise ValueError(f"model's action_net {action_net} is not a Linear({width}, {NUM_ACTIONS}) layer")
    get_vec_normalize_env = getattr(model, "get_vec_normalize_env", None)
    normalizer = get_vec_normalize_env() if get_vec_normalize_env is not None else None
    if normalizer is not None and getattr(normalizer, "norm_obs", False):
        raise ValueError(
            "model's observations are normalised (and clipped) by VecNormalize, which an agent file cannot store; "
            "train with a fixed transform and pass it as observation_scale / observation_shift"
        )
    return {
        "input_size": expected,
        "hidden_sizes": hidden_sizes,
        "activation": names[0],
        "num_actions": NUM_ACTIONS,
        "source": "sb3-contrib MaskablePPO MlpPolicy actor: mlp_extractor.policy_net + action_net",
    }


def _observation_transform(value, name: str, size: int, default: float) -> torch.Tensor:
    """None, a number, or one finite number per feature -> a float32 tensor of shape (size,)."""
    if value is None:
        return torch.full((size,), default, dtype=torch.float32)
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        array = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a number or {size} numbers, got {type(value).__name__}") from error
    if array.ndim == 0:
        array = np.full(size, array, dtype=np.float32)
    if array.shape != (size,):
        raise ValueError(f"{name} must be a number or have shape ({size},), got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite")
    return torch.from_numpy(array.copy())


def _metadata(model, num_players, architecture, network, rules_options, training, evaluation, extra) -> dict:
    if isinstance(rules_options, RulesOptions):
        rules = rules_options.as_dict()
    elif rules_options is None or isinstance(rules_options, dict):
        rules = RulesOptions.from_kwargs(**(rules_options or {})).as_dict()
    else:
        raise TypeError(f"rules_options must be a dict, a RulesOptions or None, got {type(rules_options).__name__}")
    reserved = {"format", "format_version", "num_players", "observation", "rules_options", "network", "training", "evaluation"}
    clashing = sorted(set(extra) & reserved)
    if clashing:
        raise ValueError(f"extra metadata {clashing} would shadow the format's own fields")
    training = dict(training or {})
    training.setdefault("timesteps", int(getattr(model, "num_timesteps", 0)))
    training.setdefault("algorithm", type(model).__name__)
    training.setdefault("command", shlex.join([os.path.basename(sys.executable), *sys.argv]))
    scaled = not (bool((network.obs_scale == 1).all()) and bool((network.obs_shift == 0).all()))
    return {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "num_players": num_players,
        "observation": _observation_section(num_players == ANY_PLAYERS, architecture["input_size"], scaled),
        "rules_options": rules,
        "network": architecture,
        "training": training,
        "evaluation": dict(evaluation or {}),
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "package_version": _package_version(),
        "extra": dict(extra),
    }


def _observation_section(universal: bool, size: int, scaled: bool) -> dict:
    if universal:
        return {"layout": UNIVERSAL_LAYOUT, "version": UNIVERSAL_VERSION, "size": size, "transform": OBSERVATION_TRANSFORM, "scaled": scaled}
    return {"version": OBSERVATION_VERSION, "size": size, "transform": OBSERVATION_TRANSFORM, "scaled": scaled}


def _package_version() -> str:
    try:
        return version("hpuno-env")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return hpuno_env.__version__


def _to_json(metadata: dict) -> str:
    """JSON text of the metadata; numpy scalars and arrays become plain numbers and lists."""

    def plain(value):
        if isinstance(value, (np.generic, np.ndarray)):
            return value.tolist()
        raise TypeError(f"metadata value {value!r} of type {type(value).__name__} is not JSON-serialisable")

    return json.dumps(metadata, default=plain, sort_keys=False)
