"""train.py's --device, --threads and --precision: CPU runs train exactly as before; the update gets the threads, the
rollout one; bfloat16 layers keep the float32 weights, names and agent file."""

from __future__ import annotations

import csv
import json
import os

import pytest
import torch
from sb3_contrib import MaskablePPO

import agents
from agents.training import precision, train
from agents.training.train import TimedVecEnv

# A seeded run through the warm start and two PPO iterations (16 games x 32 steps), the rounds capped at 500 decisions.
SEEDED = ["--timesteps", "1024", "--warm-start", "heuristic", "--warm-start-decisions", "2000", "--warm-start-epochs", "1",
          "--envs", "16", "--n-steps", "32", "--eval-every", "0", "--eval-rounds", "10", "--final-rounds", "10",
          "--rules", '{"max_turns": 500}', "--no-progress"]
LOSSES = ["timesteps", "train_win_rate", "ep_rew_mean", "ep_len_mean", *train.UPDATE_COLUMNS]

# The SEEDED run as train.py trained it before --device existed, re-recorded for observation layout 4 (torch 2.13.0
# CPU, one thread): losses.csv's update columns as written (6 significant digits), and each weight tensor's sum of
# absolute values. A change of the observation or of the game's seeding moves them.
BEFORE_DEVICE_LOSSES = [
    {"timesteps": "512", "train_win_rate": "", "ep_rew_mean": "", "ep_len_mean": "", "loss": "-0.00229516",
     "policy_gradient_loss": "-0.0103067", "value_loss": "0.059844", "entropy_loss": "-1.12517", "approx_kl": "0.0013095419",
     "clip_fraction": "0", "explained_variance": "-0.364314", "learning_rate": "0.0003"},
    {"timesteps": "1024", "train_win_rate": "", "ep_rew_mean": "", "ep_len_mean": "", "loss": "-0.0129017",
     "policy_gradient_loss": "-0.00787664", "value_loss": "0.0341502", "entropy_loss": "-1.0017", "approx_kl": "0.0019430106",
     "clip_fraction": "0", "explained_variance": "0.0671716", "learning_rate": "0.0003"},
]
BEFORE_DEVICE_WEIGHTS = {
    "mlp_extractor.policy_net.0.weight": 6935.455637381548, "mlp_extractor.policy_net.0.bias": 0.48444157333142357,
    "mlp_extractor.policy_net.2.weight": 4632.302266981995, "mlp_extractor.policy_net.2.bias": 0.49633909880867577,
    "mlp_extractor.value_net.0.weight": 6924.788049339202, "mlp_extractor.value_net.0.bias": 0.1997605691794888,
    "mlp_extractor.value_net.2.weight": 4624.839347215597, "mlp_extractor.value_net.2.bias": 0.17018510412890464,
    "action_net.weight": 34.80516726161244, "action_net.bias": 0.12155826775482392,
    "value_net.weight": 12.698132458899636, "value_net.bias": 0.0006253982428461313,
}


def losses_and_weights(out) -> tuple[list[dict], dict]:
    with open(out / "losses.csv", newline="") as file:
        losses = [{column: row[column] for column in LOSSES} for row in csv.DictReader(file)]
    weights = MaskablePPO.load(out / "checkpoint.zip", device="cpu").policy.state_dict()
    return losses, weights


def assert_close_to_recorded(losses: list[dict]) -> None:
    """losses.csv's rows equal BEFORE_DEVICE_LOSSES: empty cells exactly, numbers to 1e-4 relative."""
    assert [row.keys() for row in losses] == [row.keys() for row in BEFORE_DEVICE_LOSSES]
    for row, recorded in zip(losses, BEFORE_DEVICE_LOSSES):
        for column, value in recorded.items():
            if value == "":
                assert row[column] == value, column
            else:
                assert float(row[column]) == pytest.approx(float(value), rel=1e-4, abs=1e-9), column


@pytest.fixture
def cpu_only(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


def test_device_auto_on_a_cpu_only_machine_trains_exactly_as_device_cpu_and_as_before_the_option(tmp_path, cpu_only):
    runs = {}
    for device in ("auto", "cpu"):
        assert train.main([*SEEDED, "--device", device, "--out", str(tmp_path / device)]) == 0
        runs[device] = losses_and_weights(tmp_path / device)
        assert json.loads((tmp_path / device / "config.json").read_text())["device"] == "cpu"
    (auto_losses, auto_weights), (cpu_losses, cpu_weights) = runs["auto"], runs["cpu"]
    assert auto_losses == cpu_losses
    assert auto_weights.keys() == cpu_weights.keys() and all(torch.equal(auto_weights[k], cpu_weights[k]) for k in auto_weights)
    # Bit-exact only between the two runs on this machine above; against numbers recorded on another CPU, within
    # float rounding (the vector units a CPU has change the order of a sum's additions).
    assert_close_to_recorded(auto_losses)
    for name, total in BEFORE_DEVICE_WEIGHTS.items():
        assert float(auto_weights[name].double().abs().sum()) == pytest.approx(total, rel=1e-4), name


def test_device_cuda_without_a_cuda_device_is_refused_when_the_options_are_read(tmp_path, cpu_only, capsys):
    with pytest.raises(SystemExit) as stopped:
        train.parse_args(["--device", "cuda", "--out", str(tmp_path / "run")])
    assert stopped.value.code == 2
    assert "--device cuda: no CUDA device here" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    with pytest.raises(SystemExit):
        train.parse_args(["--device", "tpu", "--out", str(tmp_path / "run")])
    assert "--device must be one of auto, cpu, cuda, got 'tpu'" in capsys.readouterr().err
    assert train.training_device("auto") == "cpu"


def test_the_update_runs_on_threads_threads_and_the_rollout_on_one(tmp_path, monkeypatch):
    seen = {"update": set(), "rollout": set()}
    update, step_wait = MaskablePPO.train, TimedVecEnv.step_wait

    def recorded_update(self):
        seen["update"].add(torch.get_num_threads())
        return update(self)

    def recorded_step(self):
        seen["rollout"].add(torch.get_num_threads())
        return step_wait(self)

    monkeypatch.setattr(MaskablePPO, "train", recorded_update)
    monkeypatch.setattr(TimedVecEnv, "step_wait", recorded_step)
    try:
        assert train.main([*SEEDED, "--warm-start", "none", "--threads", "2", "--out", str(tmp_path / "run")]) == 0
    finally:
        torch.set_num_threads(1)
    assert seen == {"update": {2}, "rollout": {1}}
    assert json.loads((tmp_path / "run" / "config.json").read_text())["update_threads"] == 2
    assert train.update_threads(0) == len(os.sched_getaffinity(0)) and train.update_threads(3) == 3


def test_bfloat16_layers_keep_the_parameters_and_names_and_give_float32_close_to_float32():
    model = MaskablePPO("MlpPolicy", train.HPUnoVecEnv(num_envs=4, num_players=2), policy_kwargs={"net_arch": [64, 64]}, seed=0, device="cpu")
    policy = model.policy
    before_names = list(policy.state_dict())
    parameters = [id(p) for p in policy.parameters()]
    inputs = torch.rand(32, policy.observation_space.shape[0])
    float32_latents = policy.mlp_extractor(inputs)
    precision.use_precision(policy, "bfloat16")
    assert type(policy.mlp_extractor.policy_net) is type(policy.mlp_extractor.value_net) is precision.BFloat16Layers
    assert list(policy.state_dict()) == before_names and [id(p) for p in policy.parameters()] == parameters  # the optimiser's tensors
    assert all(p.dtype == torch.float32 for p in policy.parameters())
    for exact, mixed in zip(float32_latents, policy.mlp_extractor(inputs)):
        assert mixed.dtype == torch.float32 and not torch.equal(exact, mixed)  # rounded for the products...
        assert torch.allclose(exact, mixed, atol=0.05)  # ...to bfloat16's 8 significant bits
    precision.use_precision(policy, "float32")
    assert type(policy.mlp_extractor.policy_net) is torch.nn.Sequential
    assert all(torch.equal(a, b) for a, b in zip(float32_latents, policy.mlp_extractor(inputs)))


def test_precision_auto_is_bfloat16_only_where_the_device_has_it_natively(monkeypatch, cpu_only):
    for avx512_bf16, amx, expected in ((True, False, "bfloat16"), (False, True, "bfloat16"), (False, False, "float32")):
        monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda value=avx512_bf16: value)
        monkeypatch.setattr(torch.cpu, "_is_amx_tile_supported", lambda value=amx: value)
        assert precision.training_precision("auto", "cpu") == expected
    assert precision.training_precision("float32", "cpu") == "float32" and precision.training_precision("bfloat16", "cpu") == "bfloat16"
    assert not precision.native_bfloat16("cuda")  # no CUDA device (cpu_only)
    with pytest.raises(ValueError, match="--precision must be one of auto, float32, bfloat16, got 'half'"):
        precision.training_precision("half", "cpu")


def test_a_bfloat16_run_trains_otherwise_and_exports_the_same_float32_agent_file(tmp_path, capsys):
    with pytest.raises(SystemExit):
        train.parse_args(["--precision", "fp16", "--out", str(tmp_path / "refused")])
    assert "--precision must be one of auto, float32, bfloat16, got 'fp16'" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()
    assert train.main([*SEEDED, "--device", "cpu", "--precision", "bfloat16", "--out", str(tmp_path / "mixed")]) == 0
    config = json.loads((tmp_path / "mixed" / "config.json").read_text())
    assert config["precision"] == "bfloat16" and config["options"]["precision"] == "bfloat16"
    losses, weights = losses_and_weights(tmp_path / "mixed")
    assert [row["timesteps"] for row in losses] == ["512", "1024"]
    recorded_kl = float(BEFORE_DEVICE_LOSSES[0]["approx_kl"])  # the products were bfloat16: further than float32 rounding
    assert float(losses[0]["approx_kl"]) != pytest.approx(recorded_kl, rel=1e-4)
    assert weights.keys() == BEFORE_DEVICE_WEIGHTS.keys() and all(w.dtype == torch.float32 for w in weights.values())
    agent = agents.load(str(tmp_path / "mixed" / "agent.safetensors"), num_players=2)
    assert agent.metadata["network"]["hidden_sizes"] == [256, 256]
    resumed = train.parse_args(["--out", str(tmp_path / "mixed"), "--resume", "--timesteps", "2048"])
    assert resumed.precision == "float32"  # a machine setting: this command's, not the run's
