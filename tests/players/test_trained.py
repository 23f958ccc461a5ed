"""Agent files (.safetensors + JSON metadata): export, load, refusals, and no code run from a file handed to agents.load."""

from __future__ import annotations

import base64
import copy
import json
import os
import pathlib
import pickle
import zipfile

import numpy as np
import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save as safetensors_bytes
from sb3_contrib import MaskablePPO
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

import agents
from agents.training import export as export_cli
from agents.training.export import disagreements, engine_observations
from agents.players.trained import METADATA_KEY, TrainedAgent
from agents.training.agent_file import export, live_agent
from hpuno_env import HPUnoVecEnv, observation_size
from hpuno_env.encoding import OBSERVATION_VERSION


def tiny_model(num_players: int = 2, **policy_kwargs) -> MaskablePPO:
    """An untrained MaskablePPO (random initial weights are as good as any for checking that files reproduce them)."""
    env = HPUnoVecEnv(num_envs=4, num_players=num_players, seed=0)
    return MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=32, seed=0, device="cpu", policy_kwargs=policy_kwargs or None)


@pytest.fixture(scope="module")
def model():
    return tiny_model(2)


@pytest.fixture(scope="module")
def observations():
    return engine_observations(2, 2000, seed=3)


@pytest.fixture
def agent_file(model, tmp_path):
    path = tmp_path / "agent.safetensors"
    export(model, path, num_players=2)
    return path


def read_file(path):
    """(tensors, metadata document) of an agent file, read with safetensors (no pickle)."""
    with safe_open(str(path), framework="pt") as file:
        return {name: file.get_tensor(name) for name in file.keys()}, json.loads(file.metadata()[METADATA_KEY])


def write_file(path, tensors, document):
    path.write_bytes(safetensors_bytes(tensors, metadata={METADATA_KEY: json.dumps(document)}))


# ---- round trip


@pytest.mark.parametrize("num_players, policy_kwargs", [(2, {}), (3, {"net_arch": [32, 16], "activation_fn": torch.nn.ReLU})])
def test_exported_agent_chooses_the_models_actions(tmp_path, num_players, policy_kwargs):
    model = tiny_model(num_players, **policy_kwargs)
    path = tmp_path / "agent.safetensors"
    export(model, path, num_players=num_players)
    agent = agents.load(str(path), num_players=num_players)
    observations, masks = engine_observations(num_players, 2000, seed=1)
    expected, _ = model.predict(observations, action_masks=masks, deterministic=True)
    assert (agent.act(observations, masks) == expected).all()
    assert agent.describe()["network"]["hidden_sizes"] == (policy_kwargs.get("net_arch") or [64, 64])
    assert os.listdir(tmp_path) == ["agent.safetensors"]  # no temporary file left behind


def test_observation_transform_maps_raw_observations_to_what_the_model_saw(model, tmp_path, observations):
    raw, masks = observations
    scale = 1.0 / (1.0 + np.arange(observation_size(2)) % 7)
    path = tmp_path / "scaled.safetensors"
    export(model, path, num_players=2, observation_scale=scale, observation_shift=-0.25)
    agent = agents.load(str(path), num_players=2)
    expected, _ = model.predict(raw.astype(np.float32) * scale.astype(np.float32) - np.float32(0.25), action_masks=masks, deterministic=True)
    assert (agent.act(raw, masks) == expected).all()
    assert agent.describe()["observation"]["scaled"] is True
    unscaled, _ = model.predict(raw, action_masks=masks, deterministic=True)
    assert (agent.act(raw, masks) != unscaled).any()  # the transform matters: it is really applied


def test_live_agent_shares_the_live_weights(observations):
    model = tiny_model(2)
    raw, masks = observations
    live = live_agent(model, 2)
    snapshot = copy.deepcopy(live)
    expected, _ = model.predict(raw, action_masks=masks, deterministic=True)
    assert disagreements(model, live, raw, masks) == 0 and (live.act(raw, masks) == expected).all()
    with torch.no_grad():
        model.policy.action_net.bias[55] += 1000.0  # "draw" is legal in every play phase
    assert (live.act(raw, masks)[masks[:, 55]] == 55).all()
    assert (snapshot.act(raw, masks) == expected).all()  # a deep copy stays frozen
    assert "live model" in repr(live)


def test_sampling_is_legal_seeded_and_not_greedy(agent_file, observations):
    raw, masks = observations
    first = TrainedAgent.load(agent_file, 2, seed=7, deterministic=False).act(raw, masks)
    second = TrainedAgent.load(agent_file, 2, seed=7, deterministic=False).act(raw, masks)
    greedy = TrainedAgent.load(agent_file, 2).act(raw, masks)
    assert masks[np.arange(len(masks)), first].all() and (first == second).all() and (first != greedy).any()


# ---- metadata


def test_describe_shows_the_metadata(model, tmp_path):
    path = tmp_path / "described.safetensors"
    export(
        model, path, num_players=2, rules_options={"uno_penalty": 4}, training={"command": "python train.py --seed 3", "config": {"envs": 128}},
        evaluation={"heuristic": {"win_rate": np.float64(0.55), "rounds": np.int64(20000)}}, notes="round-trip test",
    )
    agent = agents.load(str(path), num_players=2)
    described = agent.describe()
    assert described["format"] == "hpuno-agent" and described["format_version"] == 1
    assert described["num_players"] == 2
    assert described["observation"]["version"] == OBSERVATION_VERSION and described["observation"]["size"] == observation_size(2)
    assert described["rules_options"]["uno_penalty"] == 4 and described["rules_options"]["target_score"] == 500
    assert described["network"] == {
        "input_size": 574, "hidden_sizes": [64, 64], "activation": "tanh", "num_actions": 75,
        "source": "sb3-contrib MaskablePPO MlpPolicy actor: mlp_extractor.policy_net + action_net",
    }
    assert described["training"] == {"command": "python train.py --seed 3", "config": {"envs": 128}, "timesteps": 0, "algorithm": "MaskablePPO"}
    assert described["evaluation"] == {"heuristic": {"win_rate": 0.55, "rounds": 20000}}
    assert described["extra"] == {"notes": "round-trip test"}
    assert described["created"].endswith("+00:00") and described["package_version"]
    described["num_players"] = 4  # a copy: the agent keeps its own
    assert agent.describe()["num_players"] == 2
    assert "2 players" in repr(agent) and "574-64-64-75 tanh" in repr(agent) and "greedy" in repr(agent)


def test_shipped_agent_is_a_safetensors_file_for_two_players():
    assert "ppo_2p" in agents.available()
    described = agents.load("ppo_2p", num_players=2).describe()
    assert described["num_players"] == 2 and described["network"]["hidden_sizes"] == [256, 256]
    # the shipped ppo_2p is the checkpoint kept for --resume (README: how the shipped agents were trained)
    kept = json.loads((pathlib.Path(__file__).resolve().parents[2] / "checkpoints" / "ppo_2p" / "checkpoint.json").read_text())
    assert described["training"]["timesteps"] == kept["timesteps"] > 50_000_000
    with pytest.raises(ValueError, match="made for 2-player games"):
        agents.load("ppo_2p", num_players=4)


# ---- refusals


@pytest.mark.parametrize(
    "section, key, value, message",
    [
        (None, "num_players", 3, "made for 3-player games"),
        ("observation", "version", OBSERVATION_VERSION + 1, "observation layout version"),
        ("observation", "size", 300, "observations of size 300"),
        (None, "format", "other-agent", "not an hpuno agent"),
        (None, "format_version", 2, "format version 2"),
        ("network", "activation", "swish", "cannot build"),
        ("network", "hidden_sizes", [64], "corrupt: its tensors"),
        (None, "training", "lots", "'training' is not a dict"),
    ],
)
def test_load_refuses_files_made_for_something_else(agent_file, section, key, value, message):
    tensors, document = read_file(agent_file)
    (document[section] if section else document)[key] = value
    write_file(agent_file, tensors, document)
    with pytest.raises(ValueError, match=message):
        agents.load(str(agent_file), num_players=2)


def test_load_refuses_another_player_count(agent_file):
    with pytest.raises(ValueError, match="made for 2-player games and cannot play 4-player games"):
        agents.load(str(agent_file), num_players=4)


def corruptions(data: bytes, tensors, document):
    """name -> bytes of a damaged agent file."""
    header_end = 8 + int.from_bytes(data[:8], "little")
    nan = dict(tensors, **{"action_net.bias": torch.full((75,), float("nan"))})
    half = {name: tensor.half() for name, tensor in tensors.items()}
    without_ours = safetensors_bytes(tensors, metadata={"something": "else"})
    return {
        "truncated in the weights": data[: len(data) // 2],
        "truncated in the header": data[: header_end // 2],
        "cut to four bytes": data[:4],
        "empty": b"",
        "header bytes scrambled": data[:8] + bytes(255 - b for b in data[8:header_end]) + data[header_end:],
        "size field wrong": (header_end + 10).to_bytes(8, "little") + data[8:],
        "one byte missing at the end": data[:-1],
        "random bytes": np.random.default_rng(0).bytes(4096),
        "NaN weights": safetensors_bytes(nan, metadata={METADATA_KEY: json.dumps(document)}),
        "float16 weights": safetensors_bytes(half, metadata={METADATA_KEY: json.dumps(document)}),
        "plain safetensors": without_ours,
        "metadata not JSON": safetensors_bytes(tensors, metadata={METADATA_KEY: "{not json"}),
    }


def test_load_refuses_corrupt_and_truncated_files(agent_file, tmp_path):
    tensors, document = read_file(agent_file)
    for name, damaged in corruptions(agent_file.read_bytes(), tensors, document).items():
        path = tmp_path / "damaged.safetensors"
        path.write_bytes(damaged)
        with pytest.raises(ValueError, match=r"damaged\.safetensors") as error:
            agents.load(str(path), num_players=2)
        assert any(word in str(error.value) for word in ("corrupt", "truncated", "not an", "not a")), (name, error.value)
    with pytest.raises(ValueError, match="cannot read agent file"):
        agents.load(str(tmp_path), num_players=2)  # a folder


# ---- planted pickle payloads: refused, never executed


class Payload:
    """Unpickling this writes a marker file: what a malicious agent file would do (with a shell command instead)."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return exec, (f"open({self.marker!r}, 'w').write('payload ran')",)


def sb3_like_zip(path, marker):
    """A .zip laid out as MaskablePPO.save lays it out, whose data and policy entries unpickle the payload."""
    payload = pickle.dumps(Payload(marker))
    data = {"policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": base64.b64encode(payload).decode()}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
        archive.writestr("policy.pth", payload)
        archive.writestr("pytorch_variables.pth", payload)
        archive.writestr("_stable_baselines3_version", "2.9.2")


def torch_save(path, marker):
    torch.save({"policy": Payload(marker)}, path)


def legacy_torch_save(path, marker):
    torch.save({"policy": Payload(marker)}, path, _use_new_zipfile_serialization=False)


def renamed_pickle(path, marker):
    path.write_bytes(pickle.dumps(Payload(marker)))


def renamed_protocol_0_pickle(path, marker):
    path.write_bytes(pickle.dumps(Payload(marker), protocol=0))


def sb3_load(path):
    MaskablePPO.load(str(path), device="cpu")


def torch_load(path):
    torch.load(path, weights_only=False)


def pickle_load(path):
    with open(path, "rb") as file:
        pickle.load(file)


@pytest.mark.filterwarnings("ignore:Detected pickle protocol")  # torch, about the control's crafted file
@pytest.mark.parametrize(
    "make, name, unsafe_load, message",
    [
        (sb3_like_zip, "agent.zip", sb3_load, "zip archive .*python -m agents.training.export"),
        (torch_save, "agent.pt", torch_load, "zip archive"),
        (legacy_torch_save, "agent.pth", torch_load, "Python pickle"),
        (renamed_pickle, "agent.safetensors", pickle_load, "Python pickle"),
        (renamed_protocol_0_pickle, "agent.safetensors", pickle_load, "not an agent file"),
    ],
)
def test_planted_pickle_payload_is_refused_and_never_runs(tmp_path, make, name, unsafe_load, message):
    # The control: the same kind of file, opened by the loader it was made for, does run the payload.
    control_marker = tmp_path / "control_marker"
    (tmp_path / "control").mkdir()
    make(tmp_path / "control" / name, control_marker)
    try:
        unsafe_load(tmp_path / "control" / name)
    except Exception:
        pass  # the crafted file is no real checkpoint: the loader fails after unpickling it
    assert control_marker.read_text() == "payload ran"
    # agents.load refuses the file and the payload never runs.
    marker = tmp_path / "marker"
    make(tmp_path / name, marker)
    with pytest.raises(ValueError, match=message):
        agents.load(str(tmp_path / name), num_players=2)
    assert not marker.exists()


# ---- export refusals


class TinyExtractor(BaseFeaturesExtractor):
    def __init__(self, observation_space):
        super().__init__(observation_space, features_dim=16)
        self.linear = torch.nn.Linear(observation_space.shape[0], 16)

    def forward(self, observations):
        return self.linear(observations)


@pytest.mark.parametrize(
    "policy_kwargs, message",
    [
        ({"features_extractor_class": TinyExtractor}, "features extractor TinyExtractor"),
        ({"activation_fn": torch.nn.Hardswish}, "activation_fn"),
    ],
)
def test_export_refuses_architectures_it_cannot_rebuild(tmp_path, policy_kwargs, message):
    with pytest.raises(ValueError, match=message):
        export(tiny_model(2, **policy_kwargs), tmp_path / "agent.safetensors", num_players=2)
    assert os.listdir(tmp_path) == []


def test_export_refuses_bad_arguments_and_writes_nothing(model, tmp_path):
    path = tmp_path / "agent.safetensors"
    with pytest.raises(ValueError, match="3-player observations are a Box of shape \\(642,\\)"):
        export(model, path, num_players=3)
    with pytest.raises(ValueError, match="must end with '.safetensors'"):
        export(model, tmp_path / "agent.zip", num_players=2)
    with pytest.raises(ValueError, match="observation_scale"):
        export(model, path, num_players=2, observation_scale=np.ones(10))
    with pytest.raises(ValueError, match="observation_shift must be finite"):
        export(model, path, num_players=2, observation_shift=float("nan"))
    with pytest.raises(ValueError, match="unknown rules option"):
        export(model, path, num_players=2, rules_options={"uno_penaltyy": 4})
    with pytest.raises(ValueError, match="shadow"):
        export(model, path, num_players=2, network="mine")
    with pytest.raises(TypeError, match="not JSON-serialisable"):
        export(model, path, num_players=2, evaluation={"when": object()})
    with pytest.raises(TypeError, match="MaskablePPO"):
        export(object(), path, num_players=2)
    with pytest.raises(TypeError, match="live_agent"):
        TrainedAgent(model, 2, {})
    assert os.listdir(tmp_path) == []


def test_export_is_atomic(model, tmp_path, monkeypatch, agent_file):
    before = agent_file.read_bytes()

    def failing_replace(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        export(model, agent_file, num_players=2, evaluation={"new": 1})
    assert agent_file.read_bytes() == before and os.listdir(agent_file.parent) == [agent_file.name]


def test_export_command_converts_a_checkpoint(model, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        export_cli.main(["--help"])
    assert exit_info.value.code == 0 and "UNPICKLES" in capsys.readouterr().out
    checkpoint = tmp_path / "checkpoint.zip"
    model.save(checkpoint)
    out = tmp_path / "agent.safetensors"
    status = export_cli.main([str(checkpoint), str(out), "--players", "2", "--command", "python train.py", "--verify-steps", "500"])
    assert status == 0 and "500 same actions, 0 different" in capsys.readouterr().out
    described = agents.load(str(out), num_players=2).describe()
    assert described["training"]["command"] == "python train.py" and described["training"]["converted_from"] == str(checkpoint)
    with pytest.raises(ValueError, match="python -m agents.training.export"):
        agents.load(str(checkpoint), num_players=2)


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["{missing}", "{out}", "--players", "2"], "no checkpoint file"),
        (["{not_zip}", "{out}", "--players", "2"], "is not an SB3 checkpoint"),
        (["{checkpoint}", "{out}", "--players", "12"], "--players"),
        (["{checkpoint}", "{txt}", "--players", "2"], "must end in .safetensors"),
        (["{foreign_zip}", "{out}", "--players", "2"], "cannot load"),
    ],
)
def test_export_command_refuses_bad_input_before_writing(model, tmp_path, capsys, arguments, message):
    import zipfile

    checkpoint = tmp_path / "checkpoint.zip"
    model.save(checkpoint)
    (tmp_path / "not_zip.json").write_text("{}")
    with zipfile.ZipFile(tmp_path / "foreign.zip", "w") as archive:
        archive.writestr("readme.txt", "not a model")
    paths = {
        "missing": tmp_path / "missing.zip", "not_zip": tmp_path / "not_zip.json", "checkpoint": checkpoint,
        "foreign_zip": tmp_path / "foreign.zip", "out": tmp_path / "agent.safetensors", "txt": tmp_path / "agent.txt",
    }
    with pytest.raises(SystemExit) as exit_info:
        export_cli.main([argument.format(**{key: str(value) for key, value in paths.items()}) for argument in arguments])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
    assert not paths["out"].exists() and not paths["txt"].exists()


@pytest.mark.parametrize("name", sorted(agents.players.SHIPPED))
def test_every_shipped_agent_reads_the_layout_it_was_trained_on(name):
    """Observations of today's layout, with the fields appended since the agent's layout scrambled, get the
    same actions: an agent reads the prefix its layout had (a universal agent, the fields of its base)."""
    from agents.players.trained import is_universal
    from hpuno_env import VectorEngine
    from hpuno_env.encoding import observation_size_in_version
    from hpuno_env.universal import UNIVERSAL_BASE_VERSION

    agent = agents.load(name, num_players=2 if "4p" not in name else 4, seed=0)
    num_players = agent.num_players
    engine = VectorEngine(num_games=64, num_players=num_players, seed=1)
    engine.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        masks = engine.legal_mask()
        engine.step((rng.random(masks.shape) * masks).argmax(axis=1))
    observations, masks = engine.observe(), engine.legal_mask()
    version = UNIVERSAL_BASE_VERSION if is_universal(agent.describe()) else agent.describe()["observation"]["version"]
    prefix = observation_size_in_version(num_players, version)
    assert observations[:, prefix:].any()  # the round's history is there to be misread
    scrambled = observations.copy()
    scrambled[:, prefix:] = rng.integers(0, 100, scrambled[:, prefix:].shape)
    np.testing.assert_array_equal(agent.act(observations, masks), agent.act(scrambled, masks))
