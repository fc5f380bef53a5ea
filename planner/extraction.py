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
from dataclasses import dataclass, field

from planner.errors import PlannerInputError
from planner.specs import GPUSpec, ModelSpec, efficiency

TP_DEGREES = (1, 2, 4, 8, 16, 32, 64)
GPUS_PER_NODE = 8


@dataclass
class ExtractionResult:
    mode: str
    gpus: int
    gpus_used: int
    tensor_parallel: int
    replicas: int
    decode_batch: int
    decode_hours: float
    capture_hours: float
    wall_hours: float
    gpu_hours: float
    prefill_tokens_per_s_per_gpu: float
    decode_tokens_per_s_per_gpu: float
    decode_bound: str
    capture_bound: str
    bound: str
    fits: bool
    warnings: list[str] = field(default_factory=list)


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


def extraction(model: ModelSpec, gpu: GPUSpec, *, gpus: int, weight_dtype: str, mode: str,
               fixed_tokens_per_s: float, fixed_batching: float, prefill_mfu: float,
               bandwidth_efficiency: float, max_batch: int, tp_efficiency: float,
               prefill_tokens: float, prefill_ctx: float, output_tokens: float, decode_ctx: float,
               write_bytes: float, disk_write_bytes_per_s: float) -> ExtractionResult:
    warnings: list[str] = []
    weights = model.weight_bytes(weight_dtype)
    seq_bytes = model.kv_bytes_per_token() * max(decode_ctx, prefill_ctx, 1.0) + model.linear_state_bytes()
    tp = tensor_parallel_needed(weights, seq_bytes, gpu)
    if tp is None:
        raise PlannerInputError(
            "extraction_gpu", gpu.id,
            f"{model.id} weights ({weights / 1e9:,.0f} GB in {weight_dtype}) do not fit even on {TP_DEGREES[-1]} "
            f"x {gpu.id} ({gpu.memory_gb:g} GB each); choose a larger GPU or fp8 weights")
    fits = True
    replicas = gpus // tp
    if replicas == 0:
        warnings.append(f"{model.id} needs tensor parallelism {tp} on {gpu.id} ({weights / 1e9:,.0f} GB of weights); "
                        f"you gave {gpus} GPU(s), so the plan uses {tp}")
        replicas = 1
    elif gpus % tp:
        warnings.append(f"{gpus % tp} of {gpus} extraction GPUs sit idle: tensor parallelism {tp} groups them by {tp}")
    gpus_used = replicas * tp
    tp_eff = tp_efficiency if tp > 1 else 1.0
    peak = gpu.peak_flops(weight_dtype)
    nodes = math.ceil(gpus_used / GPUS_PER_NODE)
    disk_rate = disk_write_bytes_per_s * nodes

    if mode == "fixed":
        rate = fixed_tokens_per_s * fixed_batching
        decode_tps = prefill_tps = rate
        decode_hours = output_tokens / (rate * gpus_used) / 3600 if output_tokens else 0.0
        # The article counts generation only: capture rides along with it. Without regeneration
        # the same rate is applied to the tokens run through the model.
        capture_hours = 0.0 if output_tokens else prefill_tokens / (rate * gpus_used) / 3600
        decode_bound = capture_bound = "fixed rate"
        batch = int(fixed_batching)
    else:
        mean_ctx = prefill_ctx
        prefill_tps = peak * prefill_mfu / prefill_flops_per_token(model, mean_ctx) * tp_eff
        free = tp * usable_memory_bytes(gpu) - weights
        batch = max(1, min(max_batch, int(free // seq_bytes)))
        dctx = max(decode_ctx, 1.0)
        moved = weights + batch * (model.kv_bytes_per_token() * dctx + 2 * model.linear_state_bytes())
        t_mem = moved / (tp * gpu.bandwidth_tb_s * 1e12 * bandwidth_efficiency)
        t_compute = batch * decode_flops_per_token(model, dctx) / (tp * peak * prefill_mfu)
        step = max(t_mem, t_compute)
        decode_bound = "memory bandwidth" if t_mem >= t_compute else "compute"
        decode_tps = batch / step / tp * tp_eff
        decode_hours = output_tokens / (decode_tps * gpus_used) / 3600 if output_tokens else 0.0
        gpu_capture = prefill_tokens / (prefill_tps * gpus_used) / 3600
        disk_capture = write_bytes / disk_rate / 3600 if disk_rate > 0 else 0.0
        capture_hours = max(gpu_capture, disk_capture)
        capture_bound = "disk write" if disk_capture > gpu_capture else "compute"
        if capture_bound == "disk write":
            warnings.append(f"hidden-state capture is I/O-bound: the disks write {disk_rate / 1e9:,.1f} GB/s, "
                            f"the GPUs could produce {write_bytes / (gpu_capture * 3600) / 1e9:,.1f} GB/s")
    wall = decode_hours + capture_hours
    bound = f"{decode_bound} (decode)" if decode_hours >= capture_hours else f"{capture_bound} (capture)"
    return ExtractionResult(mode, gpus, gpus_used, tp, replicas, batch, decode_hours, capture_hours, wall,
                            wall * gpus_used, prefill_tps, decode_tps, decode_bound, capture_bound, bound, fits,
                            warnings)
