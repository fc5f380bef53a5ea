"""Phase 4: training the drafter, offline (read stored hidden states every epoch) against online
(run the target forward pass every epoch on the training GPUs)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from planner.extraction import GPUS_PER_NODE, prefill_flops_per_token, usable_memory_bytes
from planner.specs import GPUSpec, ModelSpec


@dataclass
class TrainingResult:
    gpus: int
    epochs: float
    drafter_layers: int
    drafter_params: float
    flops_per_token: float
    compute_hours_per_epoch: float
    read_hours_per_epoch: float
    offline_wall_hours: float
    offline_gpu_hours: float
    offline_bound: str
    target_forward_hours_per_epoch: float
    online_wall_hours: float
    online_gpu_hours: float
    online_fits: bool
    warnings: list[str] = field(default_factory=list)


def estimate_drafter_params(model: ModelSpec, drafter_layers: int, captured_layers: int) -> float:
    """Estimate: ~12 H^2 per decoder layer (attention + SwiGLU MLP) plus the fusion projection
    from the captured layers (captured x H^2). Qwen3.6-27B, 5 layers: 1.70B; Qwen3-8B: 1.09B."""
    H = model.hidden_size
    return drafter_layers * 12 * H * H + captured_layers * H * H


def training(model: ModelSpec, gpu: GPUSpec, *, gpus: int, epochs: float, drafter_layers: int,
             drafter_params: float, mfu: float, prefill_mfu: float, tokens: float, prefill_ctx: float,
             bytes_on_disk: float, disk_read_bytes_per_s: float) -> TrainingResult:
    warnings: list[str] = []
    # 6 x params per trained token for the drafter, plus the frozen target LM head the drafter
    # scores through: forward and input-gradient, 4 x H x vocab.
    flops_per_token = 6 * drafter_params + 4 * model.hidden_size * model.vocab_size
    peak = gpu.peak_flops("bf16")
    compute_h = tokens * flops_per_token / (gpus * peak * mfu) / 3600
    nodes = math.ceil(gpus / GPUS_PER_NODE)
    read_h = bytes_on_disk / (disk_read_bytes_per_s * nodes) / 3600
    epoch_off = max(compute_h, read_h)
    bound = "disk read" if read_h > compute_h else "compute"
    if bound == "disk read":
        warnings.append(f"offline training is I/O-bound: reading the hidden states takes {read_h:,.1f} h per epoch "
                        f"against {compute_h:,.1f} h of compute")
    target_h = tokens * prefill_flops_per_token(model, prefill_ctx) / (gpus * peak * prefill_mfu) / 3600
    online_fits = model.weight_bytes("bf16") + 16 * drafter_params <= gpus * usable_memory_bytes(gpu)
    if not online_fits:
        warnings.append(f"online training needs the target ({model.weight_bytes('bf16') / 1e9:,.0f} GB) and the "
                        f"drafter's training state on the {gpus} x {gpu.id}: it does not fit")
    epoch_on = compute_h + target_h
    return TrainingResult(gpus, epochs, drafter_layers, drafter_params, flops_per_token, compute_h, read_h,
                          epochs * epoch_off, epochs * epoch_off * gpus, bound, target_h, epochs * epoch_on,
                          epochs * epoch_on * gpus, online_fits, warnings)
