"""Trained players: a MaskablePPO actor network saved as one ``.safetensors`` file that loads without running code.

The agent file format ("hpuno-agent", version 1)
-------------------------------------------------
One ``.safetensors`` file per agent. safetensors stores raw tensors and a
JSON header; reading it never unpickles anything, so a file handed to
``agents.load`` cannot run code (an SB3 ``.zip`` can: it holds cloudpickled
objects). The file holds:

- tensors: the actor of sb3-contrib's ``MaskablePPO`` ``MlpPolicy``, that is
  the policy MLP (``policy_net.<i>.weight`` / ``.bias``, a copy of
  ``policy.mlp_extractor.policy_net``) and the logits layer
  (``action_net.weight`` / ``.bias``), all float32; and a fixed per-feature
  observation transform ``obs_scale`` and ``obs_shift`` (float32, one entry per
  observation feature). The network's input is
  ``float32(observation) * obs_scale + obs_shift``, where ``observation`` is
  the engine's raw int8 ``VectorEngine.observe()`` row, so an agent trained on
  scaled float observations acts correctly on raw ones. The value network is
  not stored: acting does not need it.
- the header's ``__metadata__["hpuno_agent"]``: a JSON document, returned by
  ``TrainedAgent.describe()``::

      format, format_version      "hpuno-agent", 1
      num_players                 the player count the agent plays, or "any" for a universal agent
      observation                 {"version": hpuno_env.encoding.OBSERVATION_VERSION, "size": ...,
                                   "transform": "...", "scaled": bool}; a universal agent's also has
                                  "layout": "universal" (its version is then hpuno_env.universal.UNIVERSAL_VERSION)
      rules_options               every RulesOptions field it was trained under
      network                     {"input_size", "hidden_sizes", "activation", "num_actions", "source"}
      training                    {"timesteps", "algorithm", "command", ... whatever the caller adds}
      evaluation                  a dict the trainer fills in (e.g. win rates per opponent), or {}
      created, package_version    UTC ISO date; hpuno-env's version
      extra                       export()'s extra keyword arguments

A universal agent (``"layout": "universal"``) reads ``hpuno_env.universal``'s
layout, the same for every table: it loads at any player count, and ``act``
converts each batch of per-count observations (with the rules it was loaded
for) before its network.

``agents.load`` refuses, with a ``ValueError`` naming the file: another
player count, a newer observation version, a size other than its version's, a corrupt or truncated
file, a file of another format (an SB3 ``.zip``, a ``torch.save`` or pickle
file: recognised by their first bytes and never opened further), a file
that is not a regular file (a FIFO, a device such as ``/dev/zero``), and a
network larger than the bounds ``MAX_HIDDEN_LAYERS``, ``MAX_LAYER_SIZE`` and
``MAX_PARAMETERS``. Only the 8-byte size and the JSON header are read first:
the metadata and the header's tensor shapes are checked against each other
before any tensor is read or any network built, so a small crafted file
cannot make ``agents.load`` allocate gigabytes. Each refusal is one line
naming the file and the field.

Public API
----------
``TrainedAgent.load(path, num_players, seed=None, deterministic=True)``
    Read a file (no SB3, no pickle); ``act`` then picks the legal action with
    the highest logit, or samples from the masked softmax with
    ``deterministic=False`` (seeded by ``seed``).
``agent.act(observations, action_masks)``, ``agent.action_probabilities(observations, action_masks)`` (the
    masked softmax of its logits), ``agent.set_rules(rules_options)``, ``agent.describe()``, ``repr(agent)``.

Writing a file from a live MaskablePPO model (``export``), and the same player
around a live model (``live_agent``), are training's:
``agents.training.agent_file``.

To turn one's own SB3 checkpoint into an agent file: ``python -m agents.training.export --help``.
"""

from __future__ import annotations

import copy
import os
import warnings

import numpy as np
import safetensors.torch
import torch
from torch import nn

from hpuno_env._reading import is_json_int, open_regular_file, parse_json
from hpuno_env.cards import NUM_ACTIONS
from hpuno_env.encoding import OBSERVATION_VERSION, observation_size_in_version
from hpuno_env.options import RulesOptions, check_num_players
from hpuno_env.universal import UNIVERSAL_VERSION, universal_observation, universal_size

from ._base import SeededAgent
from ._batch import check_batch
from .shipped import FILE_SUFFIX, SHIPPED, WEIGHTS_DIR  # noqa: F401  (WEIGHTS_DIR: part of this module's interface)

FORMAT_NAME = "hpuno-agent"
FORMAT_VERSION = 1
METADATA_KEY = "hpuno_agent"  # the safetensors header's __metadata__ entry holding the JSON document
# Activations the rebuilt network supports: metadata name -> torch module class (built with no arguments, as SB3 does).
ACTIVATIONS = {"tanh": nn.Tanh, "relu": nn.ReLU, "elu": nn.ELU, "leaky_relu": nn.LeakyReLU, "gelu": nn.GELU, "silu": nn.SiLU}
OBSERVATION_TRANSFORM = "float32(observation) * obs_scale + obs_shift"
EXPORT_COMMAND = "python -m agents.training.export CHECKPOINT.zip OUT.safetensors --players N"
UNIVERSAL_LAYOUT = "universal"  # observation.layout of an agent that reads hpuno_env.universal's layout
ANY_PLAYERS = "any"  # num_players of a universal agent


class ActorNetwork(nn.Module):
    """Observation transform, policy MLP and logits layer: the acting half of a MaskablePPO MlpPolicy."""

    def __init__(self, policy_net: nn.Sequential, action_net: nn.Linear, obs_scale: torch.Tensor, obs_shift: torch.Tensor):
        super().__init__()
        self.policy_net = policy_net
        self.action_net = action_net
        self.register_buffer("obs_scale", obs_scale)
        self.register_buffer("obs_shift", obs_shift)

    @classmethod
    def build(cls, input_size: int, hidden_sizes: list[int], activation: str, num_actions: int) -> ActorNetwork:
        """A fresh network of the given shape (weights to be loaded), laid out as SB3's MlpExtractor lays it out."""
        layers, width = [], input_size
        for size in hidden_sizes:
            layers += [nn.Linear(width, size), ACTIVATIONS[activation]()]
            width = size
        return cls(nn.Sequential(*layers), nn.Linear(width, num_actions), torch.ones(input_size), torch.zeros(input_size))

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Raw observations (any numeric dtype) -> action logits."""
        inputs = observations.to(torch.float32) * self.obs_scale + self.obs_shift
        return self.action_net(self.policy_net(inputs))


class TrainedAgent(SeededAgent):
    """A trained actor network choosing among legal actions: the best logit, or a sample of the masked softmax."""

    def __init__(
        self, network: ActorNetwork, num_players: int, metadata: dict, deterministic: bool = True, seed: int | None = None,
        source: str = "",
    ):
        if not isinstance(network, ActorNetwork):
            raise TypeError(
                f"network must be an agents.players.trained.ActorNetwork, got {type(network).__name__}; "
                "for a live MaskablePPO model use agents.training.agent_file.live_agent(model, num_players), for a file TrainedAgent.load(path, num_players)"
            )
        super().__init__(num_players, seed)  # the stream is used by deterministic=False only
        self.network = network
        self.metadata = metadata
        self.deterministic = bool(deterministic)
        self.source = source  # the file it came from, or "live model"
        self.universal = is_universal(metadata)
        self.rules = RulesOptions()  # the table's rules, which a universal agent's input states

    def set_rules(self, rules_options) -> None:
        """The rules of the games it plays (a dict or RulesOptions): a universal agent tells its network."""
        self.rules = rules_options if isinstance(rules_options, RulesOptions) else RulesOptions.from_kwargs(**(rules_options or {}))

    @classmethod
    def load(cls, path: str, num_players: int, seed: int | None = None, deterministic: bool = True,
             rules_options: dict | None = None) -> TrainedAgent:
        """Read an agent file made by ``export`` for games of num_players; never runs code from the file.
        rules_options: the rules of the games it will play (None: not known); other rules than those it
        was trained under give a ``UserWarning`` naming them (docs/rules.md §15.10)."""
        num_players = check_num_players(num_players)
        path = os.fspath(path)
        metadata, tensors = _read_agent_file(path, num_players)
        network = _network_from_file(metadata, tensors, path)
        if rules_options is not None and not is_universal(metadata):  # a universal agent trained on many rules
            warn_if_other_rules(metadata["rules_options"], rules_options, path)
        agent = cls(network, num_players, metadata, deterministic, seed, source=path)
        agent.set_rules(rules_options)
        return agent

    def act(self, observations, action_masks) -> np.ndarray:
        masks = check_batch(observations, action_masks, self.num_players)
        logits = self._logits(observations)
        if self.deterministic:
            return np.where(masks, logits, -np.inf).argmax(axis=1)
        # Gumbel-max: the argmax of logits plus Gumbel noise is a sample of the softmax over the legal actions.
        noisy = logits.astype(np.float64) + self.rng.gumbel(size=logits.shape)
        return np.where(masks, noisy, -np.inf).argmax(axis=1)

    def action_probabilities(self, observations, action_masks) -> np.ndarray:
        """The masked softmax of its logits: per row, the probability of each action (0 for an illegal one, the
        legal ones summing to 1), which ``act`` samples from with ``deterministic=False`` (greedy: its argmax)."""
        masks = check_batch(observations, action_masks, self.num_players)
        logits = np.where(masks, self._logits(observations).astype(np.float64), -np.inf)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return shifted / shifted.sum(axis=1, keepdims=True)

    def _logits(self, observations) -> np.ndarray:
        """The network's logits for a batch of raw observations (a universal agent's converted under ``rules``)."""
        if self.universal:
            inputs = universal_observation(_whole_numbers(observations), self.num_players, self.rules)
        else:  # an agent of an older observation layout reads the prefix of today's that its version had
            inputs = np.asarray(observations)[:, : self.network.obs_scale.shape[0]]
        with torch.no_grad():
            return self.network(torch.as_tensor(inputs, device=self.network.obs_scale.device)).cpu().numpy()

    def describe(self) -> dict:
        """The agent's metadata (format, players, observation version, rules, network, training, evaluation)."""
        return copy.deepcopy(self.metadata)

    def __repr__(self) -> str:
        network = self.metadata["network"]
        shape = "-".join(str(n) for n in [network["input_size"], *network["hidden_sizes"], network["num_actions"]])
        steps = self.metadata["training"].get("timesteps")
        return (
            f"TrainedAgent({self.source!r}, {self.num_players} players, "
            f"{'universal' if self.universal else 'observation'} v{self.metadata['observation']['version']}, MLP {shape} {network['activation']}, "
            f"{steps if steps is not None else '?'} steps, {'greedy' if self.deterministic else 'sampling'})"
        )


def is_universal(metadata: dict) -> bool:
    """Whether an agent's metadata says it reads the universal layout (any player count)."""
    return metadata.get("observation", {}).get("layout") == UNIVERSAL_LAYOUT


def _whole_numbers(observations) -> np.ndarray:
    """Raw observations as integers; float ones (the gym envs') only when they hold whole numbers."""
    array = np.asarray(observations)
    if array.dtype.kind in "iu":
        return array
    converted = array.astype(np.int8)
    if not np.array_equal(converted, array):
        raise ValueError("a universal agent reads the raw observation (whole numbers, not scaled)")
    return converted


# Settings of RulesOptions around the game, not rules of it: an agent plays the same game under any of them.
NOT_GAME_RULES = ("episode", "reward", "max_turns")


def rules_differences(trained_under: dict, rules_options) -> list[str]:
    """Every rules option whose value in rules_options (a dict or RulesOptions) differs from the one an agent
    trained under (fields an older file lacks are the defaults), as ``name=value (trained with value)``."""
    played = rules_options.as_dict() if isinstance(rules_options, RulesOptions) else RulesOptions.from_kwargs(**rules_options).as_dict()
    trained = {**RulesOptions().as_dict(), **trained_under}
    return [f"{name}={played[name]!r} (trained with {trained.get(name)!r})"
            for name in played if name not in NOT_GAME_RULES and played[name] != trained.get(name)]


def other_rules_warning(trained_under: dict, rules_options, source: str) -> str | None:
    """The sentence naming every rules option of rules_options that the agent did not train under
    (rules_differences), or None when it plays the rules it trained under."""
    differing = rules_differences(trained_under, rules_options)
    return f"agent {source!r} plays under other rules than it was trained under: {', '.join(differing)}" if differing else None


def warn_if_other_rules(trained_under: dict, rules_options, source: str) -> None:
    """A ``UserWarning`` saying ``other_rules_warning``. The agent still plays legally: it picks from the legal mask."""
    message = other_rules_warning(trained_under, rules_options, source)
    if message:
        warnings.warn(message, UserWarning, stacklevel=3)


def shipped_for(num_players: int, rules_options: dict | None = None) -> list[str]:
    """The names of the shipped trained agents made for games of num_players under these rules (None: the
    defaults), as ``agents.load`` takes them: the champions a table of such games lists. A universal agent, made
    for every table, is not listed: it is compared with them (benchmarks/bench_universal.py)."""
    found = []
    for name, path in SHIPPED.items():
        try:
            agent = TrainedAgent.load(path, num_players)
        except ValueError:  # made for another player count
            continue
        if not agent.universal and not rules_differences(agent.metadata["rules_options"], rules_options or {}):
            found.append(name)
    return found


# ---- reading: the file checked before anything is built from it

# Bounds on what an agent file may claim, checked on its header before anything is allocated: far above any network
# trained here (256-256 is 0.2 M parameters), far below what would exhaust a laptop.
MAX_FILE_BYTES = 1 << 30
MAX_HEADER_BYTES = 16 << 20
MAX_HIDDEN_LAYERS = 16
MAX_LAYER_SIZE = 8192
MAX_PARAMETERS = 64_000_000  # 256 MB of float32


def _read_agent_file(path: str, num_players: int) -> tuple[dict, dict]:
    """(metadata, tensors) of an agent file for num_players, everything checked before it is read or built."""
    def expected_tensors(metadata: dict) -> dict:
        _check_metadata(metadata, path, num_players)
        return _network_shapes(metadata["network"])

    return read_checked_safetensors(path, "agent", METADATA_KEY, expected_tensors)


def read_checked_safetensors(path: str, kind: str, metadata_key: str, expected_tensors) -> tuple[dict, dict]:
    """(metadata, tensors) of an hpuno ``kind`` file ("agent", "belief"), a safetensors file whose header's
    ``__metadata__[metadata_key]`` is a JSON document; ``expected_tensors(metadata)`` checks that document (a
    ValueError naming what is wrong) and returns the float32 tensor shapes it describes.

    Only the 8-byte size and the JSON header are read first; the metadata is checked, the header's tensor
    shapes are compared with the network it describes, and only then are the tensor bytes (bounded by that
    network's size) read and parsed as safetensors. Nothing is unpickled."""
    with open_regular_file(path, f"{kind} file", MAX_FILE_BYTES) as file:
        file_size = os.fstat(file.fileno()).st_size
        prefix = file.read(9)
        _refuse_other_formats(prefix, path, file_size, kind)
        header_size = int.from_bytes(prefix[:8], "little")
        if header_size < 2:
            raise ValueError(f"{path!r} is corrupt: its header claims {header_size} bytes")
        if header_size > MAX_HEADER_BYTES:
            raise ValueError(f"{path!r} is corrupt: its header claims {header_size:,} bytes, more than the {MAX_HEADER_BYTES:,} an {kind} file's may have")
        header_bytes = prefix[8:] + file.read(header_size - 1)
        header = parse_json(header_bytes, f"{path!r} (its safetensors header)")
        stored = header.get("__metadata__") if isinstance(header, dict) else None
        if not isinstance(stored, dict) or metadata_key not in stored:
            raise ValueError(f"{path!r} is a {FILE_SUFFIX} file but not an hpuno {kind} (no {metadata_key!r} metadata)")
        if not isinstance(stored[metadata_key], str):
            raise ValueError(f"{path!r} is corrupt: its {metadata_key!r} metadata is not a JSON string")
        metadata = parse_json(stored[metadata_key], f"{path!r} (its {metadata_key!r} metadata)")
        if not isinstance(metadata, dict):
            raise ValueError(f"{path!r} is corrupt: its {metadata_key!r} metadata is not a JSON object")
        data_size = _check_header_tensors(header, expected_tensors(metadata), path, file_size - 8 - header_size)
        data = file.read(data_size)
    try:
        tensors = safetensors.torch.load(prefix[:8] + header_bytes + data)
    except Exception as error:  # safetensors' own error for bad offsets, dtypes or sizes: a damaged file
        raise ValueError(f"{path!r} is corrupt or truncated: {type(error).__name__}: {str(error)[:200]}") from error
    for name, tensor in tensors.items():
        if not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"{path!r} is corrupt: tensor {name!r} holds NaN or infinite values")
    return metadata, tensors


def _refuse_other_formats(prefix: bytes, path: str, file_size: int, kind: str = "agent") -> None:
    """ValueError for a zip archive, a pickle, or a file too short or too damaged to hold a safetensors header.

    A safetensors file is an 8-byte little-endian header size, then that many
    bytes of JSON starting with "{". Zip archives (SB3 checkpoints, torch.save
    files) and pickles are named as such, from their first bytes only.
    """
    only = f"hpuno-env only reads {FILE_SUFFIX} {kind} files"
    export_hint = (f". To turn your own checkpoint into one: {EXPORT_COMMAND} (see python -m agents.training.export --help)"
                   if kind == "agent" else "")
    if prefix[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        raise ValueError(
            f"{path!r} is a zip archive (an SB3 checkpoint .zip or a torch.save file), which holds pickled objects that "
            f"could run code; {only}{export_hint}"
        )
    header_size = int.from_bytes(prefix[:8], "little") if len(prefix) >= 8 else -1
    if len(prefix) > 8 and prefix[8:9] == b"{":
        if header_size > file_size - 8:
            raise ValueError(f"{path!r} is truncated: its header claims {header_size} bytes, the file has {file_size - 8} after the size")
        return
    if len(prefix) >= 2 and prefix[0] == 0x80 and 2 <= prefix[1] <= 5:
        raise ValueError(f"{path!r} is a Python pickle (e.g. a torch.save file), which could run code and is never unpickled; {only}")
    raise ValueError(f"{path!r} is not an {kind} file ({FILE_SUFFIX}): it does not start with a safetensors header")


def _check_metadata(metadata: dict, path: str, num_players: int) -> None:
    """ValueError unless the metadata describes a version-1 agent for num_players with today's observation layout,
    and a network within the bounds above; each error one line naming the file and the field."""
    if metadata.get("format") != FORMAT_NAME:
        raise ValueError(f"{path!r} is not an hpuno agent file: format {_short(metadata.get('format'))}, expected {FORMAT_NAME!r}")
    version = metadata.get("format_version")
    if not is_json_int(version) or not 1 <= version <= FORMAT_VERSION:
        raise ValueError(f"{path!r} has agent format version {_short(version)}; this hpuno-env reads versions 1 to {FORMAT_VERSION} (a newer file needs a newer hpuno-env)")
    observation = metadata.get("observation")
    if not isinstance(observation, dict):
        raise ValueError(f"{path!r} is corrupt: its metadata has no 'observation' section")
    expected = _check_observation(metadata, observation, path, num_players)
    network = metadata.get("network")
    if not isinstance(network, dict):
        raise ValueError(f"{path!r} is corrupt: its metadata has no 'network' section")
    _check_network(network, path, expected)
    for section in ("rules_options", "training", "evaluation"):
        if not isinstance(metadata.get(section), dict):
            raise ValueError(f"{path!r} is corrupt: its metadata's {section!r} is not a dict")


def _check_observation(metadata: dict, observation: dict, path: str, num_players: int) -> int:
    """ValueError unless the agent reads an observation this hpuno-env gives for num_players; returns its size."""
    made_for = metadata.get("num_players")
    layout = observation.get("layout")
    if layout == UNIVERSAL_LAYOUT:
        if made_for != ANY_PLAYERS:
            raise ValueError(f"{path!r} is corrupt: a universal agent's num_players is {ANY_PLAYERS!r}, not {_short(made_for)}")
        version = observation.get("version")
        if not is_json_int(version) or version != UNIVERSAL_VERSION:
            raise ValueError(f"agent {path!r} was trained on universal layout version {_short(version)}, but this hpuno-env "
                             f"reads version {UNIVERSAL_VERSION}: the agent would misread the observations; retrain it")
        if observation.get("size") != universal_size():
            raise ValueError(f"agent {path!r} reads universal observations of size {_short(observation.get('size'))}, this hpuno-env's have {universal_size()}")
        return universal_size()
    if layout is not None:
        raise ValueError(f"agent {path!r} reads the observation layout {_short(layout)}, which this hpuno-env does not know")
    if not is_json_int(made_for) or made_for != num_players:
        raise ValueError(f"agent {path!r} was made for {_short(made_for)}-player games and cannot play {num_players}-player games")
    layout_version = observation.get("version")
    if not is_json_int(layout_version) or not 1 <= layout_version <= OBSERVATION_VERSION:
        raise ValueError(
            f"agent {path!r} was trained on observation layout version {_short(layout_version)}, but this hpuno-env "
            f"reads versions 1 to {OBSERVATION_VERSION}: the agent would misread the observations; retrain it"
        )
    # Every layout version appends fields, so an older agent reads the prefix its version had (act slices it).
    expected = observation_size_in_version(num_players, layout_version)
    if not is_json_int(observation.get("size")) or observation.get("size") != expected:
        raise ValueError(f"agent {path!r} reads observations of size {_short(observation.get('size'))}, but {num_players} players give size {expected}")
    return expected


def _check_network(network: dict, path: str, expected: int) -> None:
    """ValueError unless the network section describes one this hpuno-env builds, from ``expected`` inputs."""

    def cannot_build(field: str, needs: str) -> ValueError:
        return ValueError(f"{path!r} describes a network this hpuno-env cannot build: network.{field} is "
                          f"{_short(network.get(field))}, it must be {needs}")

    if not is_json_int(network.get("input_size")) or network["input_size"] != expected:
        raise cannot_build("input_size", f"the int {expected}")
    if not is_json_int(network.get("num_actions")) or network["num_actions"] != NUM_ACTIONS:
        raise cannot_build("num_actions", f"the int {NUM_ACTIONS}")
    if not isinstance(network.get("activation"), str) or network["activation"] not in ACTIVATIONS:
        raise cannot_build("activation", f"one of {sorted(ACTIVATIONS)}")
    hidden = network.get("hidden_sizes")
    if (
        not isinstance(hidden, list) or len(hidden) > MAX_HIDDEN_LAYERS
        or not all(is_json_int(n) and 1 <= n <= MAX_LAYER_SIZE for n in hidden)
    ):
        raise cannot_build("hidden_sizes", f"a list of at most {MAX_HIDDEN_LAYERS} ints in [1, {MAX_LAYER_SIZE}]")
    parameters = sum(int(np.prod(shape)) for shape in _network_shapes(network).values())
    if parameters > MAX_PARAMETERS:
        raise cannot_build("hidden_sizes", f"a network of at most {MAX_PARAMETERS:,} parameters (it has {parameters:,})")


def _short(value) -> str:
    """repr cut to one short line: an error must not echo a 6 MB list."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _network_shapes(network_info: dict) -> dict[str, tuple[int, ...]]:
    """The tensor shapes ``ActorNetwork.build`` makes for a (checked) network section, computed without building it."""
    shapes, width = {}, network_info["input_size"]
    for index, size in enumerate(network_info["hidden_sizes"]):
        shapes[f"policy_net.{2 * index}.weight"], shapes[f"policy_net.{2 * index}.bias"] = (size, width), (size,)
        width = size
    shapes["action_net.weight"], shapes["action_net.bias"] = (network_info["num_actions"], width), (network_info["num_actions"],)
    shapes["obs_scale"] = shapes["obs_shift"] = (network_info["input_size"],)
    return shapes


def _check_header_tensors(header: dict, expected: dict, path: str, data_bytes: int) -> int:
    """ValueError unless the header lists exactly the expected float32 tensors, each of its shape, inside the file's
    data; returns the bytes of data to read."""
    found = {name: entry for name, entry in header.items() if name != "__metadata__"}
    missing, unexpected = sorted(set(expected) - set(found)), sorted(set(found) - set(expected))
    if missing or unexpected:
        raise ValueError(f"{path!r} is corrupt: its tensors do not match the network its metadata describes "
                         f"(missing {_short(missing)}, unexpected {_short(unexpected)})")
    end = 0
    for name, shape in expected.items():
        entry = found[name]
        if not isinstance(entry, dict) or entry.get("dtype") != "F32":
            raise ValueError(f"{path!r} is corrupt: tensor {name!r} is {_short(entry.get('dtype') if isinstance(entry, dict) else entry)}, expected float32 (F32)")
        stored = entry.get("shape")
        if not isinstance(stored, list) or not all(is_json_int(n) for n in stored) or tuple(stored) != shape:
            raise ValueError(f"{path!r} is corrupt: its tensors do not match the network its metadata describes: "
                             f"tensor {name!r} has shape {_short(tuple(stored) if isinstance(stored, list) else stored)}, the network needs {shape}")
        offsets = entry.get("data_offsets")
        if (not isinstance(offsets, list) or len(offsets) != 2 or not all(is_json_int(n) for n in offsets)
                or offsets[1] - offsets[0] != 4 * int(np.prod(shape)) or offsets[0] < 0):
            raise ValueError(f"{path!r} is corrupt: tensor {name!r} has data_offsets {_short(offsets)}, not {4 * int(np.prod(shape))} bytes")
        end = max(end, offsets[1])
    if end > data_bytes:
        raise ValueError(f"{path!r} is truncated: its tensors need {end:,} bytes of data, the file has {max(data_bytes, 0):,}")
    return end


def _network_from_file(metadata: dict, tensors: dict, path: str) -> ActorNetwork:
    network_info = metadata["network"]
    for name, tensor in tensors.items():
        if tensor.dtype != torch.float32:
            raise ValueError(f"{path!r} is corrupt: tensor {name!r} is {tensor.dtype}, expected float32")
    network = ActorNetwork.build(network_info["input_size"], network_info["hidden_sizes"], network_info["activation"], network_info["num_actions"])
    network.load_state_dict(tensors, strict=True)
    return network.eval()
