"""Phase 4: training the drafter, offline (read stored hidden states every epoch) against online
(run the target forward pass every epoch on the training GPUs)."""
from __future__ import annotations

import math

from pydantic import BaseModel, Field

from planner.extraction import GPUS_PER_NODE, prefill_flops_per_token, usable_memory_bytes
from planner.scenario import Training
from planner.specs import GPUSpec, ModelSpec
from planner.storage import Workload
from planner.units import hours_at


class TrainingPlan(BaseModel):
    gpu: str
    gpus: int
    epochs: float
    drafter_layers: int
    drafter_params: float
    flops_per_token: float
    offline_gpu_hours: float
    offline_wall_hours: float
    offline_bound: str
    online_gpu_hours: float
    online_wall_hours: float
    breakeven_epochs: float | None          # from the costs (planner/costs.py); None: offline never pays off
    compute_hours_per_epoch: float = 0.0    # drafter forward + backward, the same offline and online
    read_hours_per_epoch: float = 0.0       # offline: reading the stored hidden states
    target_forward_hours_per_epoch: float = 0.0   # online: the target's forward pass
    online_fits: bool = True
    warnings: list[str] = Field(default_factory=list, exclude=True)   # also in Plan.warnings


def estimate_drafter_params(model: ModelSpec, drafter_layers: int, captured_layers: int) -> float:
    """Estimate: ~12 H^2 per decoder layer (attention + SwiGLU MLP) plus the fusion projection
    from the captured layers (captured x H^2). Qwen3.6-27B, 5 layers: 1.70B; Qwen3-8B: 1.09B."""
    H = model.hidden_size
    return drafter_layers * 12 * H * H + captured_layers * H * H


def training(model: ModelSpec, gpu: GPUSpec, t: Training, work: Workload, *, drafter_layers: int,
             drafter_params: float, prefill_mfu: float, bytes_on_disk: float,
             disk_read_bytes_per_s: float) -> TrainingPlan:
    """`t.epochs` over `work.tokens` on `t.gpus` x `gpu`; offline reads `bytes_on_disk` every epoch
    from one disk per node of 8 GPUs."""
    warnings: list[str] = []
    # 6 x params per trained token for the drafter, plus the frozen target LM head the drafter
    # scores through: forward and input-gradient, 4 x H x vocab.
    flops_per_token = 6 * drafter_params + 4 * model.hidden_size * model.vocab_size
    peak = gpu.peak_flops("bf16")
    gpus = t.gpus
    compute_h = hours_at(work.tokens * flops_per_token, gpus * peak * t.mfu)
    nodes = math.ceil(gpus / GPUS_PER_NODE)
    read_h = hours_at(bytes_on_disk, disk_read_bytes_per_s * nodes)
    epoch_off = max(compute_h, read_h)
    bound = "disk read" if read_h > compute_h else "compute"
    if bound == "disk read":
        warnings.append(f"offline training is I/O-bound: reading the hidden states takes {read_h:,.1f} h per epoch "
                        f"against {compute_h:,.1f} h of compute")
    target_h = hours_at(work.tokens * prefill_flops_per_token(model, work.prefill_ctx), gpus * peak * prefill_mfu)
    online_fits = model.weight_bytes("bf16") + 16 * drafter_params <= gpus * usable_memory_bytes(gpu)
    if not online_fits:
        warnings.append(f"online training needs the target ({model.weight_bytes('bf16') / 1e9:,.0f} GB) and the "
                        f"drafter's training state on the {gpus} x {gpu.id}: it does not fit")
    epoch_on = compute_h + target_h
    return TrainingPlan(
        gpu=gpu.id, gpus=gpus, epochs=t.epochs, drafter_layers=drafter_layers, drafter_params=drafter_params,
        flops_per_token=flops_per_token, offline_gpu_hours=t.epochs * epoch_off * gpus,
        offline_wall_hours=t.epochs * epoch_off, offline_bound=bound, online_gpu_hours=t.epochs * epoch_on * gpus,
        online_wall_hours=t.epochs * epoch_on, breakeven_epochs=None, compute_hours_per_epoch=compute_h,
        read_hours_per_epoch=read_h, target_forward_hours_per_epoch=target_h, online_fits=online_fits,
        warnings=warnings)
