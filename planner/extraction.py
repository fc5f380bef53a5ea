"""Phase 2: running the target model over the mix (regenerate responses, then capture).

Two throughput modes:
- fixed: the article's method, one tokens/s figure per GPU times a batching factor;
- roofline: prefill is compute-bound at MFU x peak; decode runs the largest batch whose KV cache
  and linear-attention state fit beside the weights, each step taking the longer of the bytes it
  moves / (bandwidth x efficiency) and its FLOPs / (peak x MFU). The capture pass is also capped
  by the disk's write bandwidth.
"""
from __future__ import annotations

import math

from pydantic import BaseModel, Field

from planner.errors import PlannerInputError
from planner.scenario import Throughput
from planner.specs import GPUSpec, ModelSpec, efficiency
from planner.storage import Workload
from planner.units import hours_at

TP_DEGREES = (1, 2, 4, 8, 16, 32, 64)
GPUS_PER_NODE = 8


class ExtractionPlan(BaseModel):
    gpu: str
    mode: str
    gpus: int
    gpus_used: int
    tensor_parallel: int
    tensor_parallel_efficiency: float = 1.0   # per-GPU throughput kept at this TP degree (1 without TP)
    replicas: int
    decode_batch: int
    gpu_hours: float
    wall_hours: float
    decode_hours: float
    capture_hours: float
    prefill_tokens_per_s_per_gpu: float
    decode_tokens_per_s_per_gpu: float
    bound: str
    decode_bound: str
    capture_bound: str
    warnings: list[str] = Field(default_factory=list, exclude=True)   # also in Plan.warnings


def usable_memory_bytes(gpu: GPUSpec) -> float:
    return gpu.memory_gb * 1e9 * efficiency("memory_usable_fraction") - efficiency("memory_runtime_gb") * 1e9


def tensor_parallel_needed(weights: float, per_seq_bytes: float, gpu: GPUSpec) -> int | None:
    """Smallest power-of-two TP degree whose memory holds the weights and one sequence."""
    usable = usable_memory_bytes(gpu)
    for tp in TP_DEGREES:
        if weights + per_seq_bytes <= tp * usable:
            return tp
    return None


def prefill_flops_per_token(model: ModelSpec, ctx: float) -> float:
    """2 x active params, plus causal attention over a row of `ctx` tokens: 2 x layers x width x ctx."""
    return 2 * model.active_params + 2 * model.full_attention_layers * model.attention_width() * ctx


def decode_flops_per_token(model: ModelSpec, ctx: float) -> float:
    return 2 * model.active_params + 4 * model.full_attention_layers * model.attention_width() * ctx


def extraction(model: ModelSpec, gpu: GPUSpec, t: Throughput, work: Workload, *, gpus: int, weight_dtype: str,
               prefill_mfu: float, write_bytes: float, disk_write_bytes_per_s: float) -> ExtractionPlan:
    """Regenerate `work.output_tokens` and capture `work.tokens` on `gpus` x `gpu`, writing `write_bytes`."""
    warnings: list[str] = []
    weights = model.weight_bytes(weight_dtype)
    seq_bytes = model.kv_bytes_per_token() * max(work.decode_ctx, work.prefill_ctx, 1.0) + model.linear_state_bytes()
    tp = tensor_parallel_needed(weights, seq_bytes, gpu)
    if tp is None:
        raise PlannerInputError(
            "extraction_gpu", gpu.id,
            f"{model.id} weights ({weights / 1e9:,.0f} GB in {weight_dtype}) do not fit even on {TP_DEGREES[-1]} "
            f"x {gpu.id} ({gpu.memory_gb:g} GB each); choose a larger GPU or fp8 weights")
    replicas = gpus // tp
    if replicas == 0:
        warnings.append(f"{model.id} needs tensor parallelism {tp} on {gpu.id} ({weights / 1e9:,.0f} GB of weights); "
                        f"you gave {gpus} GPU(s), so the plan uses {tp}")
        replicas = 1
    elif gpus % tp:
        warnings.append(f"{gpus % tp} of {gpus} extraction GPUs sit idle: tensor parallelism {tp} groups them by {tp}")
    gpus_used = replicas * tp
    tp_eff = t.tensor_parallel_efficiency if tp > 1 else 1.0
    peak = gpu.peak_flops(weight_dtype)
    nodes = math.ceil(gpus_used / GPUS_PER_NODE)
    disk_rate = disk_write_bytes_per_s * nodes

    if t.mode == "fixed":
        rate = t.tokens_per_s * t.batching
        decode_tps = prefill_tps = rate
        decode_hours = hours_at(work.output_tokens, rate * gpus_used)
        # The article counts generation only: capture rides along with it. Without regeneration
        # the same rate is applied to the tokens run through the model.
        capture_hours = 0.0 if work.output_tokens else hours_at(work.tokens, rate * gpus_used)
        decode_bound = capture_bound = "fixed rate"
        batch = int(t.batching)
    else:
        prefill_tps = peak * prefill_mfu / prefill_flops_per_token(model, work.prefill_ctx) * tp_eff
        free = tp * usable_memory_bytes(gpu) - weights
        batch = max(1, min(t.max_batch, int(free // seq_bytes) if seq_bytes else t.max_batch))
        dctx = max(work.decode_ctx, 1.0)
        moved = weights + batch * (model.kv_bytes_per_token() * dctx + 2 * model.linear_state_bytes())
        t_mem = moved / (tp * gpu.bandwidth_tb_s * 1e12 * t.decode_bandwidth_efficiency)
        t_compute = batch * decode_flops_per_token(model, dctx) / (tp * peak * prefill_mfu)
        step = max(t_mem, t_compute)
        decode_bound = "memory bandwidth" if t_mem >= t_compute else "compute"
        decode_tps = batch / step / tp * tp_eff
        decode_hours = hours_at(work.output_tokens, decode_tps * gpus_used)
        gpu_capture = hours_at(work.tokens, prefill_tps * gpus_used)
        disk_capture = hours_at(write_bytes, disk_rate)
        capture_hours = max(gpu_capture, disk_capture)
        capture_bound = "disk write" if disk_capture > gpu_capture else "compute"
        if capture_bound == "disk write":
            warnings.append(f"hidden-state capture is I/O-bound: the disks write {disk_rate / 1e9:,.1f} GB/s, "
                            f"the GPUs could produce {write_bytes / (gpu_capture * 3600) / 1e9:,.1f} GB/s")
    wall = decode_hours + capture_hours
    bound = f"{decode_bound} (decode)" if decode_hours >= capture_hours else f"{capture_bound} (capture)"
    return ExtractionPlan(
        gpu=gpu.id, mode=t.mode, gpus=gpus, gpus_used=gpus_used, tensor_parallel=tp, tensor_parallel_efficiency=tp_eff,
        replicas=replicas, decode_batch=batch, gpu_hours=wall * gpus_used, wall_hours=wall, decode_hours=decode_hours,
        capture_hours=capture_hours, prefill_tokens_per_s_per_gpu=prefill_tps, decode_tokens_per_s_per_gpu=decode_tps,
        bound=bound, decode_bound=decode_bound, capture_bound=capture_bound, warnings=warnings)
