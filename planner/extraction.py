"""Phase 2: running the target model over the mix (regenerate responses, then capture).

Three throughput modes:
- fixed: the article's method, one tokens/s figure per GPU times a batching factor;
- roofline: prefill is compute-bound at MFU x peak; decode runs the largest batch that the
  engine's scheduler (max_num_seqs, max_num_batched_tokens) allows and whose KV cache and
  linear-attention state fit beside the weights, each step taking the longer of the bytes it moves
  / (bandwidth x efficiency) and its FLOPs / (peak x decode MFU). The capture pass is also capped by
  the disk's write bandwidth;
- calibrated (the default): the roofline's prefill and decode rates scaled by measured / roofline of
  the nearest published measurement (planner/calibration.py); without a matching row, the roofline.

FLOPs per token count the parameters a text forward runs (ModelSpec.forward_params: no vision
tower, MTP head or untied input embedding) and causal attention over the context.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from pydantic import BaseModel, Field

from planner.calibration import (MAX_DISTANCE, Calibration, architecture, measurements, nearest,
                                 preset_distances)
from planner.errors import PlannerInputError
from planner.findings import Finding, finding
from planner.scenario import Throughput
from planner.specs import GPUSpec, ModelSpec, efficiency, engine_defaults
from planner.memo import ByIdentity
from planner.storage import Workload
from planner.units import hours_at

TP_DEGREES = (1, 2, 4, 8, 16, 32, 64)


class ExtractionPlan(BaseModel):
    gpu: str
    mode: str
    gpus: int
    gpus_used: int
    nodes: int = 1                            # extraction nodes (Scenario.extraction_nodes or as the GPUs need)
    gpus_per_node: int = 8
    tensor_parallel: int
    tensor_parallel_efficiency: float = 1.0   # per-GPU throughput kept at this TP degree (1 without TP)
    replicas: int
    decode_batch: int
    max_num_seqs: int = 0                     # the scheduler caps in force
    max_batched_tokens: int = 0
    kv_dtype: str = "bf16"
    gpu_hours: float
    wall_hours: float
    wall_hours_low: float | None = None       # the band of sampled profiles (planner/plan.py)
    wall_hours_high: float | None = None
    # the band of the per-phase calibration (held-out spread of its kind of match); None outside calibrated mode
    calibrated_wall_hours_low: float | None = None
    calibrated_wall_hours_high: float | None = None
    decode_hours: float
    capture_hours: float
    prefill_tokens_per_s_per_gpu: float
    decode_tokens_per_s_per_gpu: float
    # prefill and decode mixed as benchmark_serving counts them, at this mix's prompt and response lengths
    serving_output_tokens_per_s_per_gpu: float = 0.0
    serving_total_tokens_per_s_per_gpu: float = 0.0
    calibration: Calibration | None = None    # the phase that takes the longer (calibrated mode)
    prefill_calibration: Calibration | None = None
    decode_calibration: Calibration | None = None
    bound: str
    decode_bound: str
    capture_bound: str
    warnings: list[Finding] = Field(default_factory=list, exclude=True)   # also in Plan.findings


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
    """2 x forward params, plus causal attention over a row of `ctx` tokens: 2 x layers x width x ctx."""
    return 2 * model.forward_params() + 2 * model.full_attention_layers * model.attention_width() * ctx


def decode_flops_per_token(model: ModelSpec, ctx: float) -> float:
    return 2 * model.forward_params() + 4 * model.full_attention_layers * model.attention_width() * ctx


@dataclass(frozen=True)
class Engine:
    """The roofline's inputs besides the model and the GPU."""

    weight_dtype: str
    kv_dtype: str
    prefill_mfu: float
    decode_mfu: float
    bandwidth_efficiency: float
    tp_efficiency: float
    max_num_seqs: int
    max_batched_tokens: int


@dataclass(frozen=True)
class Rates:
    prefill: float           # tokens/s per GPU
    decode: float
    batch: int
    decode_bound: str


def rates(model: ModelSpec, gpu: GPUSpec, tp: int, e: Engine, *, prefill_ctx: float, decode_ctx: float,
          seq_tokens: float, concurrency: int | None = None) -> Rates:
    """Roofline prefill and decode rates per GPU on a TP group of `tp`: prefill at MFU x peak; decode
    at the largest batch the scheduler, the concurrency and the memory left for KV cache and state allow."""
    weights = model.weight_bytes(e.weight_dtype)
    peak = gpu.peak_flops(e.weight_dtype)
    tp_eff = e.tp_efficiency if tp > 1 else 1.0
    kv = model.kv_bytes_per_token(e.kv_dtype)
    seq_bytes = kv * max(seq_tokens, 1.0) + model.linear_state_bytes()
    prefill = peak * e.prefill_mfu / prefill_flops_per_token(model, prefill_ctx) * tp_eff
    free = tp * usable_memory_bytes(gpu) - weights
    cap = min(e.max_num_seqs, e.max_batched_tokens, concurrency or e.max_num_seqs)
    batch = max(1, min(cap, int(free // seq_bytes) if seq_bytes else cap))
    dctx = max(decode_ctx, 1.0)
    moved = weights + batch * (kv * dctx + 2 * model.linear_state_bytes())
    t_mem = moved / (tp * gpu.bandwidth_tb_s * 1e12 * e.bandwidth_efficiency)
    t_compute = batch * decode_flops_per_token(model, dctx) / (tp * peak * e.decode_mfu)
    step = max(t_mem, t_compute)
    decode = batch / step / tp * tp_eff
    return Rates(prefill, decode, batch, "memory bandwidth" if t_mem >= t_compute else "compute")


def serving(prefill: float, decode: float, isl: float, osl: float) -> tuple[float, float]:
    """(output, total) tokens/s per GPU of requests of `isl` prompt and `osl` generated tokens when
    the GPU spends its time on both phases (as benchmark_serving counts tok/s)."""
    def per(tokens: float, rate: float) -> float:
        return tokens / rate if rate > 0 else (math.inf if tokens else 0.0)
    seconds = per(isl, prefill) + per(osl, decode)
    if not seconds or not math.isfinite(seconds):
        return 0.0, 0.0
    return osl / seconds, (isl + osl) / seconds


def engine_for(gpu: GPUSpec, t: Throughput, *, weight_dtype: str, kv_dtype: str, prefill_mfu: float,
               usage: str = "llm_class") -> Engine:
    seqs, tokens, _ = engine_defaults(gpu, usage)
    return Engine(weight_dtype=weight_dtype, kv_dtype=kv_dtype, prefill_mfu=prefill_mfu,
                  decode_mfu=t.decode_mfu or efficiency("decode_mfu"), bandwidth_efficiency=t.decode_bandwidth_efficiency,
                  tp_efficiency=t.tensor_parallel_efficiency, max_num_seqs=t.max_batch or seqs,
                  max_batched_tokens=t.max_batched_tokens or tokens)


def _row_rates(row, models: dict[str, ModelSpec], gpus: dict[str, GPUSpec], t: Throughput,
               kv_dtype: str = "bf16") -> Rates:
    model, gpu = models[row.model], gpus[row.gpu]
    if row.engine == "vllm-serve":
        seqs, tokens, _ = engine_defaults(gpu, "serve")
    else:
        caps = measurements().engines[row.engine]
        seqs, tokens = caps.max_num_seqs, caps.max_batched_tokens
    e = Engine(weight_dtype=row.weight_dtype, kv_dtype=kv_dtype, prefill_mfu=t.prefill_mfu or gpu.prefill_mfu,
               decode_mfu=t.decode_mfu or efficiency("decode_mfu"), bandwidth_efficiency=t.decode_bandwidth_efficiency,
               tp_efficiency=t.tensor_parallel_efficiency, max_num_seqs=seqs, max_batched_tokens=tokens)
    return rates(model, gpu, row.tp, e, prefill_ctx=row.isl, decode_ctx=row.isl + row.osl / 2,
                 seq_tokens=row.isl + row.osl, concurrency=row.concurrency)


def measured_ratio(row, models: dict[str, ModelSpec], gpus: dict[str, GPUSpec], t: Throughput,
                   kv_dtype: str = "bf16") -> tuple[float, float]:
    """(roofline, measured) for a table row in its metric, with the row's engine caps and the
    scenario's efficiencies (the GPU preset's prefill MFU unless the scenario sets one)."""
    r = _row_rates(row, models, gpus, t, kv_dtype)
    out, total = serving(r.prefill, r.decode, row.isl, row.osl)
    predicted = {"output": out, "total": total, "prefill": r.prefill}[row.metric]
    return predicted, row.value


@functools.cache
def _preset_roofline(row_id: str) -> tuple[float, float]:
    """(roofline, measured) of a table row at the preset efficiencies (constant: computed once)."""
    from planner.specs import gpu_presets, model_presets
    row = next(r for r in measurements().rows if r.id == row_id)
    return measured_ratio(row, model_presets(), gpu_presets(), Throughput(mode="roofline"))


@functools.cache
def row_phase(row_id: str) -> str:
    """prefill or decode: where the roofline puts most of a table row's GPU time (a prefill-metric
    row is prefill)."""
    from planner.specs import gpu_presets, model_presets
    row = next(r for r in measurements().rows if r.id == row_id)
    if row.metric == "prefill" or not row.osl:
        return "prefill"
    r = _row_rates(row, model_presets(), gpu_presets(), Throughput(mode="roofline"))
    return "prefill" if row.isl / r.prefill > row.osl / r.decode else "decode"


def source_key(row) -> str:
    """The publication a row comes from (the short name its source starts with; TensorRT-LLM's
    perf-overview revisions TRT10, TRTDG and TRT17 are one: one team, one tool)."""
    key = row.source.split()[0]
    return "TRT" if key.startswith("TRT") else key


def _pick(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float, phase: str,
          exclude=lambda r: False):
    """The nearest row of `phase` within MAX_DISTANCE: of the model's architecture class when one is
    near, else of any class; (row, distance) or None."""
    from planner.specs import model_presets
    models = model_presets()
    dist = preset_distances(model, gpu_id, weight_dtype, isl, osl)
    cands = [(dist[r.id], r) for r in measurements().rows
             if not exclude(r) and r.model in models and row_phase(r.id) == phase]
    cands = [(d, r) for d, r in cands if d <= MAX_DISTANCE]
    same = [(d, r) for d, r in cands if architecture(models[r.model]) == architecture(model)]
    best = min(same or cands, key=lambda x: x[0], default=None)
    return None if best is None else (best[1], best[0])


def _transfer(row, model: ModelSpec, gpu_id: str) -> bool:
    from planner.specs import model_presets
    return architecture(model_presets()[row.model]) != architecture(model) or row.gpu != gpu_id


@functools.cache
def held_out_phase(phase: str, by_source: bool = False) -> tuple[tuple[str, str, float, float, bool], ...]:
    """Every row of `phase` calibrated by the nearest *other* row (the same rule; `by_source`: of
    another publication): (row, from, measured, calibrated, a transfer across class or GPU) - the
    held-out residuals the band is made of."""
    from planner.specs import model_presets
    models = model_presets()
    out = []
    for r in measurements().rows:
        if r.model not in models or row_phase(r.id) != phase:
            continue
        own = source_key(r)
        hit = _pick(models[r.model], r.gpu, r.weight_dtype, r.isl, r.osl, phase,
                    exclude=lambda o: o.id == r.id or (by_source and source_key(o) == own))
        roof_r, meas_r = _preset_roofline(r.id)
        if hit is None:     # no row near: the roofline alone (the plan's fallback)
            out.append((r.id, "", meas_r, roof_r, None))
            continue
        n = hit[0]
        roof_n, meas_n = _preset_roofline(n.id)
        out.append((r.id, n.id, meas_r, roof_r * meas_n / roof_n, _transfer(n, models[r.model], r.gpu)))
    return tuple(out)


def phase_band(phase: str, transfer: bool | None, exclude: str = "") -> tuple[float, float]:
    """(-m, m), m the largest |log(calibrated / measured)| over the held-out rows of `phase` (rows named
    `exclude` left out): a match within class and GPU takes such matches' spread; a transfer takes every held-out
    match's (the few transfers alone are too few to bound it); None (no row near: the roofline alone)
    takes the roofline's own spread over the phase's rows."""
    return spread(held_out_phase(phase), transfer, lambda rid: rid == exclude)


def spread(rows, transfer: bool | None, exclude) -> tuple[float, float]:
    """phase_band over `rows` of held_out_phase (those `exclude(row id)` names left out)."""
    rows = [x for x in rows if not exclude(x[0])]
    if transfer is None:
        res = [math.log(_preset_roofline(rid)[0] / m) for rid, _, m, _, _ in rows]
    else:
        res = [math.log(c / m) for _, _, m, c, tr in rows if tr is not None and (transfer or not tr)]
    m = max((abs(r) for r in res), default=0.0)      # the largest held-out error, either way
    return -m, m


def calibrate(model: ModelSpec, gpu: GPUSpec, *, weight_dtype: str, isl: float, osl: float,
              phase: str | None = None) -> Calibration:
    """The nearest row's measured / roofline (planner/calibration.py), or a note that none matched.
    The row's roofline takes the preset efficiencies, so the factor is a property of the table and
    the scenario's own efficiencies still move the user's roofline (and the plan) as they say.
    `phase`: the nearest row of that phase (same architecture class first), with its band."""
    from planner.specs import model_presets
    hit = nearest(model, gpu.id, weight_dtype, isl, osl, model_presets()) if phase is None else \
        _pick(model, gpu.id, weight_dtype, isl, osl, phase)
    if hit is None:
        return Calibration(phase=phase or "", extrapolated=True,
                           band=phase_band(phase, None) if phase else (0.0, 0.0),
                           note=f"no published {phase + ' ' if phase else ''}measurement is near {model.id} on "
                                f"{gpu.id} in {weight_dtype}: the roofline alone is used")
    row, dist = hit
    predicted, measured = _preset_roofline(row.id)
    out = Calibration(row=row.id, source=row.source, date=row.date, metric=row.metric, measured=measured,
                      roofline=predicted, factor=measured / predicted, distance=dist)
    if phase is not None:
        tr = _transfer(row, model, gpu.id)
        out.phase, out.extrapolated, out.band = phase, tr, phase_band(phase, tr)
        if tr:
            out.note = (f"an extrapolation: {row.id} is {architecture(model_presets()[row.model])} on {row.gpu}, "
                        f"the plan {architecture(model)} on {gpu.id}")
    return out


def serving_decode_rate(model: ModelSpec, gpu: GPUSpec, t: Throughput, *, weight_dtype: str, kv_dtype: str,
                        components, calibration: Calibration | None) -> float | None:
    """Decode tokens/s per GPU when serving the target on `gpu` under `vllm serve`'s caps, at the
    mix's mean prompt and response (conversation tokens less / plus the generated ones), scaled by
    the extraction's calibration factor; None when the weights do not fit."""
    rows = sum(c.rows for c in components) or 1
    tokens = sum(c.training_tokens for c in components) / rows
    osl = sum(c.output_tokens for c in components) / rows or tokens / 2
    isl = max(tokens - osl, 1.0)
    seq = isl + osl
    tp = tensor_parallel_needed(model.weight_bytes(weight_dtype),
                                model.kv_bytes_per_token(kv_dtype) * seq + model.linear_state_bytes(), gpu)
    if tp is None:
        return None
    e = engine_for(gpu, t, weight_dtype=weight_dtype, kv_dtype=kv_dtype, prefill_mfu=t.prefill_mfu or gpu.prefill_mfu,
                   usage="serve")
    r = rates(model, gpu, tp, e, prefill_ctx=isl, decode_ctx=isl + osl / 2, seq_tokens=seq)
    return r.decode * (calibration.factor if calibration is not None else 1.0)


def sequence(model: ModelSpec, work: Workload, kv_dtype: str) -> tuple[float, float]:
    """The sequence a TP group must hold beside the weights: its tokens (the longer mean context) and
    their KV cache and state in bytes."""
    seq_tokens = max(work.decode_ctx, work.prefill_ctx, 1.0)
    return seq_tokens, model.kv_bytes_per_token(kv_dtype) * seq_tokens + model.linear_state_bytes()


def replicas_on_nodes(gpus: int, gpus_per_node: int, tp: int) -> int:
    """Tensor-parallel groups of `tp` that `gpus` on nodes of `gpus_per_node` hold: a group stays
    within a node when it fits in one (the last node may be partly filled); a larger group spans
    whole nodes."""
    if tp > gpus_per_node:
        return gpus // tp
    full, rest = divmod(gpus, gpus_per_node)
    return full * (gpus_per_node // tp) + rest // tp


# calibrate() per model and GPU (the objects), dtype, lengths and phase: the same plan, planned again, asks again
_CALIBRATIONS = ByIdentity(1024)


def extraction(model: ModelSpec, gpu: GPUSpec, t: Throughput, work: Workload, *, gpus: int, weight_dtype: str,
               prefill_mfu: float, write_bytes: float, write_bytes_per_s: float, write_bound: str = "local disks",
               nodes: int = 1, gpus_per_node: int = 8, kv_dtype: str = "bf16",
               measured_tokens_per_s: float | None = None) -> ExtractionPlan:
    """Regenerate `work.output_tokens` and capture `work.tokens` on `gpus` x `gpu` in `nodes` nodes of
    `gpus_per_node`, writing `write_bytes` at `write_bytes_per_s` (all nodes together, planner/nodes.py).
    measured_tokens_per_s: the capture rate per GPU a run of the user's measured (planner calibrate),
    in place of the table's prefill rate; it already holds that run's disk writes."""
    warnings: list[Finding] = []
    weights = model.weight_bytes(weight_dtype)
    seq_tokens, seq_bytes = sequence(model, work, kv_dtype)
    tp = tensor_parallel_needed(weights, seq_bytes, gpu)
    if tp is None:
        room = TP_DEGREES[-1] * usable_memory_bytes(gpu)
        if weights <= room:   # the weights fit: one sequence's KV cache (and state) is what does not
            raise PlannerInputError(
                "extraction_gpu", gpu.id,
                f"one sequence's KV cache does not fit beside {model.id}'s weights even on {TP_DEGREES[-1]} x "
                f"{gpu.id} ({gpu.memory_gb:g} GB each): {seq_tokens:,.0f} tokens x "
                f"{model.kv_bytes_per_token(kv_dtype):,.0f} bytes a token in {kv_dtype} is {seq_bytes / 1e9:,.0f} GB "
                f"beside {weights / 1e9:,.0f} GB of weights in {weight_dtype}; cap the sequence length, use an fp8 KV "
                f"cache, or a larger GPU")
        raise PlannerInputError(
            "extraction_gpu", gpu.id,
            f"{model.id} weights ({weights / 1e9:,.0f} GB in {weight_dtype}) do not fit even on {TP_DEGREES[-1]} "
            f"x {gpu.id} ({gpu.memory_gb:g} GB each); choose a larger GPU or fp8 weights")
    replicas = replicas_on_nodes(gpus, gpus_per_node, tp)
    if replicas == 0:
        warnings.append(finding("tp-raised", f"{model.id} needs tensor parallelism {tp} on {gpu.id} ({weights / 1e9:,.0f} GB "
                                             f"of weights); you gave {gpus} GPU(s), so the plan uses {tp}"))
        replicas = 1
    elif gpus - replicas * tp:
        idle = gpus - replicas * tp
        within = f" within nodes of {gpus_per_node}" if tp <= gpus_per_node and gpus % tp == 0 else ""
        warnings.append(finding("idle-gpus", f"{idle} of {gpus} extraction GPUs sit idle: tensor parallelism {tp} "
                                             f"groups them by {tp}{within}"))
    if tp > gpus_per_node:
        warnings.append(finding("tp-spans-nodes", f"tensor parallelism {tp} spans {-(-tp // gpus_per_node)} nodes of "
                                f"{gpus_per_node} GPUs: every layer's all-reduce crosses the node network"))
    gpus_used = replicas * tp
    tp_eff = t.tensor_parallel_efficiency if tp > 1 else 1.0
    disk_rate = write_bytes_per_s
    e = engine_for(gpu, t, weight_dtype=weight_dtype, kv_dtype=kv_dtype, prefill_mfu=prefill_mfu)
    conversations = max(work.conversations, 1.0)
    isl = max(work.tokens - work.output_tokens, 0.0) / conversations if work.tokens else 1.0
    osl = work.output_tokens / conversations
    calibration = pcal = dcal = None
    band_hours = None

    if t.mode == "fixed":
        rate = t.tokens_per_s * t.batching
        decode_tps = prefill_tps = table_prefill = rate
        if measured_tokens_per_s is not None:
            prefill_tps = measured_tokens_per_s
        decode_hours = hours_at(work.output_tokens, rate * gpus_used)
        # The article counts generation only: capture rides along with it. Without regeneration
        # the same rate is applied to the tokens run through the model.
        capture_hours = 0.0 if work.output_tokens else hours_at(work.tokens, prefill_tps * gpus_used)
        decode_bound = capture_bound = "fixed rate"
        batch = int(t.batching)
    else:
        r = rates(model, gpu, tp, e, prefill_ctx=work.prefill_ctx, decode_ctx=work.decode_ctx, seq_tokens=seq_tokens)
        prefill_tps, decode_tps, batch, decode_bound = r.prefill, r.decode, r.batch, r.decode_bound
        if t.mode == "calibrated":
            # every argument of calibrate() is in the key (the model and GPU by identity)
            pcal, dcal = (_CALIBRATIONS.get((model, gpu), (weight_dtype, max(isl, 1.0), osl, phase), lambda ph=phase:
                          calibrate(model, gpu, weight_dtype=weight_dtype, isl=max(isl, 1.0), osl=osl, phase=ph))
                          for phase in ("prefill", "decode"))
            prefill_tps *= pcal.factor
            decode_tps *= dcal.factor
            for c in (pcal, dcal):
                if not c.row:
                    warnings.append(finding("calibration", f"calibrated {c.phase} throughput: {c.note}"))
                elif c.extrapolated:
                    warnings.append(finding("calibration", f"calibrated {c.phase} throughput is {c.note}: the "
                                    f"band is {math.exp(c.band[0]):.2f}-{math.exp(c.band[1]):.2f}x the hours"))
        table_prefill = prefill_tps
        if measured_tokens_per_s is not None:
            prefill_tps = measured_tokens_per_s
        decode_hours = hours_at(work.output_tokens, decode_tps * gpus_used)
        gpu_capture = hours_at(work.tokens, prefill_tps * gpus_used)
        disk_capture = hours_at(write_bytes, disk_rate)
        capture_hours = max(gpu_capture, disk_capture)
        capture_bound = "disk write" if disk_capture > gpu_capture else "compute"
        if dcal is not None:
            # true hours = planned x calibrated / measured: each phase's held-out spread
            band_hours = tuple(decode_hours * math.exp(dcal.band[i]) + max(gpu_capture * math.exp(pcal.band[i]),
                                                                            disk_capture) for i in (0, 1))
            calibration = dcal if decode_hours >= capture_hours else pcal
        if capture_bound == "disk write":
            warnings.append(finding("capture-io-bound", f"hidden-state capture is I/O-bound: the {write_bound} "
                                    f"{'write' if write_bound.endswith('s') else 'takes'} "
                                    f"{disk_rate / 1e9:,.1f} GB/s, the GPUs could produce "
                                    f"{write_bytes / (gpu_capture * 3600) / 1e9:,.1f} GB/s"))
    # serving the target (the payback's rate) keeps the table's prefill rate: a measured capture rate
    # holds the capture's own disk writes
    serve_out, serve_total = serving(table_prefill, decode_tps, max(isl, 1.0), osl)
    wall = decode_hours + capture_hours
    bound = f"{decode_bound} (decode)" if decode_hours >= capture_hours else f"{capture_bound} (capture)"
    return ExtractionPlan(
        gpu=gpu.id, mode=t.mode, gpus=gpus, gpus_used=gpus_used, nodes=nodes, gpus_per_node=gpus_per_node,
        tensor_parallel=tp, tensor_parallel_efficiency=tp_eff,
        replicas=replicas, decode_batch=batch, max_num_seqs=e.max_num_seqs, max_batched_tokens=e.max_batched_tokens,
        kv_dtype=kv_dtype, gpu_hours=wall * gpus_used, wall_hours=wall, decode_hours=decode_hours,
        capture_hours=capture_hours, prefill_tokens_per_s_per_gpu=prefill_tps, decode_tokens_per_s_per_gpu=decode_tps,
        serving_output_tokens_per_s_per_gpu=serve_out, serving_total_tokens_per_s_per_gpu=serve_total,
        calibration=calibration, prefill_calibration=pcal, decode_calibration=dcal,
        calibrated_wall_hours_low=band_hours[0] if band_hours else None,
        calibrated_wall_hours_high=band_hours[1] if band_hours else None, bound=bound, decode_bound=decode_bound, capture_bound=capture_bound,
        warnings=warnings)
