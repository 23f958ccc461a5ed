"""The arithmetic of the policy's hidden layers in training: float32, or bfloat16 where the machine computes it natively.

PPO's update is dense matrix products of the two hidden MLPs (actor and critic), and on a CPU with AVX-512 BF16
(or AMX), or a CUDA GPU of compute capability 8 and up, bfloat16 products run about twice as fast as float32 ones
(docs/benchmarks.md). ``use_precision(policy, "bfloat16")`` runs those hidden layers under ``torch.autocast``: the weights, the
optimiser's state and every gradient step stay float32 (mixed precision), the layers' inputs and weights are
rounded to bfloat16 for the products (float32 sums), and their outputs come back as float32, so the logits, the
masked distribution, the value and the losses are float32 as before. The rollout acts with the same layers, so the
update's first epoch sees the probabilities the rollout sampled from.

The agent file is the same either way (float32 weights, played in float32): bfloat16 is a training setting.
"""

from __future__ import annotations

import torch
from torch import nn

PRECISIONS = ("auto", "float32", "bfloat16")  # train.py --precision


class BFloat16Layers(nn.Sequential):
    """An nn.Sequential whose forward runs under bfloat16 autocast and returns float32 (same children, same state_dict)."""

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        with torch.autocast(inputs.device.type, dtype=torch.bfloat16):
            return super().forward(inputs).float()


def native_bfloat16(device: str) -> bool:
    """Whether ``device`` ("cpu" or "cuda") multiplies bfloat16 matrices natively (faster than float32)."""
    if device.startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported(including_emulation=False)
    return torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported()


def training_precision(name: str, device: str) -> str:
    """--precision as float32 or bfloat16: auto is bfloat16 where ``device`` computes it natively, else float32."""
    if name not in PRECISIONS:
        raise ValueError(f"--precision must be one of {', '.join(PRECISIONS)}, got {name!r}")
    if name == "auto":
        return "bfloat16" if native_bfloat16(device) else "float32"
    return name


def use_precision(policy: nn.Module, precision: str) -> None:
    """Run ``policy``'s hidden MLPs (``mlp_extractor.policy_net`` and ``.value_net``) in ``precision``, in place.

    The layers keep their parameters (the optimiser holds the same tensors) and their state_dict names."""
    layers_class = BFloat16Layers if precision == "bfloat16" else nn.Sequential
    extractor = policy.mlp_extractor
    for name in ("policy_net", "value_net"):
        layers = getattr(extractor, name)
        if type(layers) is not layers_class:
            setattr(extractor, name, layers_class(*layers))
