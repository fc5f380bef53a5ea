"""Phase 2: running the target model over the mix (regenerate responses, then capture).

Three throughput modes:
- fixed: the article's method, one tokens/s figure per GPU times a batching factor;
- roofline: prefill is compute-bound at MFU x peak; decode runs the largest batch that the
  engine's scheduler (max_num_seqs, max_num_batched_tokens) allows and whose KV cache and
  linear-attention state fit beside the weights, each step taking the longer of the bytes it moves
  / (bandwidth x efficiency) and its FLOPs / (peak x decode MFU). The capture pass is also capped by
  the disk's write bandwidth;
- calibrated (the default): the roofline's prefill and decode rates scaled by measured / roofline of
  the nearest published measurement (planner/phases/throughput_calibration.py); without a matching row, the roofline.

FLOPs per token count the parameters a text forward runs (ModelSpec.forward_params: no vision
tower, MTP head or untied input embedding) and causal attention over the context.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from pydantic import BaseModel, Field

from planner.distributions import band_from_residuals
from planner.errors import PlannerInputError
from planner.findings import Finding, finding
from planner.phases.assumption_rows import Assumption, RowContext, paired, take
from planner.phases.reuse import Reuse
from planner.phases.stored_bytes import Workload
from planner.phases.throughput_calibration import (
    Calibration,
    architecture,
    calibration_assumptions,
    generation,
    kept,
    measurements,
    nearest,
    nearest_preset,
    preset_rows,
)
from planner.presets.capture_paths import CapturePath, CaptureTime, capture_time
from planner.presets.specs import GPUSpec, ModelSpec, efficiency, efficiency_source, engine_defaults
from planner.scenario import Throughput
from planner.units import hours_at

TP_DEGREES = (1, 2, 4, 8, 16, 32, 64)


BandEnd = float | None    # one end of a band of hours; None: no such band for this plan


class OnNodes(BaseModel):
    """A phase's GPUs: which, how many, on how many nodes (the scenario's, or as the GPUs need)."""
    gpu: str
    gpus: int
    nodes: int = 1
    gpus_per_node: int = 8


class ExtractionPlan(OnNodes):
    mode: str
    gpus_used: int
    tensor_parallel: int
    tensor_parallel_efficiency: float = 1.0   # per-GPU throughput kept at this TP degree (1 without TP)
    replicas: int
    decode_batch: int
    max_num_seqs: int = 0                     # the scheduler caps in force
    max_batched_tokens: int = 0
    kv_dtype: str = "bf16"
    gpu_hours: float
    wall_hours: float
    # the band to bet on (issue 22): the per-phase calibration's band, widened to the sampled profiles'
    # ends where components are sampled (planner/planning.py); the sampled band alone outside calibrated mode
    wall_hours_low: BandEnd = None
    wall_hours_high: BandEnd = None
    # the band of the per-phase calibration (held-out spread of its kind of match); None outside calibrated mode
    calibrated_wall_hours_low: BandEnd = None
    calibrated_wall_hours_high: BandEnd = None
    sampled_wall_hours_low: BandEnd = None     # the sampled profiles' 95% band alone (planner/planning.py)
    sampled_wall_hours_high: BandEnd = None
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
    # the capture path in force (planner/presets/capture_paths.yaml): its id, how a replica's GPUs share the
    # model (tensor: a tensor-parallel group; layers: device_map's layer split, one GPU computing at a time)
    # and the GPUs per replica (replicas = GPUs used / tp_per_replica); prefill-server is the model before it
    capture_path: str = "prefill-server"
    capture_split: str = "tensor"
    tp_per_replica: int = 1
    capture_tokens_per_s_per_gpu: float = 0.0   # captured tokens / (capture hours x GPUs used), disk included
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


def rates(model: ModelSpec, gpu: GPUSpec, tensor_parallel: int, engine: Engine, *, prefill_ctx: float,
          decode_ctx: float, seq_tokens: float, concurrency: int | None = None) -> Rates:
    """Roofline prefill and decode rates per GPU on a TP group of `tensor_parallel`: prefill at MFU x peak; decode
    at the largest batch the scheduler, the concurrency and the memory left for KV cache and state allow."""
    weights = model.weight_bytes(engine.weight_dtype)
    peak = gpu.peak_flops(engine.weight_dtype)
    tp_eff = engine.tp_efficiency if tensor_parallel > 1 else 1.0
    kv = model.kv_bytes_per_token(engine.kv_dtype)
    seq_bytes = kv * max(seq_tokens, 1.0) + model.linear_state_bytes()
    prefill = peak * engine.prefill_mfu / prefill_flops_per_token(model, prefill_ctx) * tp_eff
    free = tensor_parallel * usable_memory_bytes(gpu) - weights
    cap = min(engine.max_num_seqs, engine.max_batched_tokens, concurrency or engine.max_num_seqs)
    batch = max(1, min(cap, int(free // seq_bytes) if seq_bytes else cap))
    dctx = max(decode_ctx, 1.0)
    moved = weights + batch * (kv * dctx + 2 * model.linear_state_bytes())
    t_mem = moved / (tensor_parallel * gpu.bandwidth_tb_s * 1e12 * engine.bandwidth_efficiency)
    t_compute = batch * decode_flops_per_token(model, dctx) / (tensor_parallel * peak * engine.decode_mfu)
    step = max(t_mem, t_compute)
    decode = batch / step / tensor_parallel * tp_eff
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


def engine_for(gpu: GPUSpec, throughput: Throughput, *, weight_dtype: str, kv_dtype: str, prefill_mfu: float,
               usage: str = "llm_class") -> Engine:
    seqs, tokens, _ = engine_defaults(gpu, usage)
    return Engine(weight_dtype=weight_dtype, kv_dtype=kv_dtype, prefill_mfu=prefill_mfu,
                  decode_mfu=throughput.decode_mfu or efficiency("decode_mfu"),
                  bandwidth_efficiency=throughput.decode_bandwidth_efficiency,
                  tp_efficiency=throughput.tensor_parallel_efficiency, max_num_seqs=throughput.max_batch or seqs,
                  max_batched_tokens=throughput.max_batched_tokens or tokens)


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


def measured_ratio(row, models: dict[str, ModelSpec], gpus: dict[str, GPUSpec], throughput: Throughput,
                   kv_dtype: str = "bf16") -> tuple[float, float]:
    """(roofline, measured) for a table row in its metric, with the row's engine caps and the
    scenario's efficiencies (the GPU preset's prefill MFU unless the scenario sets one)."""
    r = _row_rates(row, models, gpus, throughput, kv_dtype)
    out, total = serving(r.prefill, r.decode, row.isl, row.osl)
    predicted = {"output": out, "total": total, "prefill": r.prefill}[row.metric]
    return predicted, row.value


@functools.cache
def _preset_roofline(row_id: str, decode_mfu: float | None = None) -> tuple[float, float]:
    """(roofline, measured) of a table row at the preset efficiencies (constant: computed once);
    `decode_mfu` another decode MFU than the preset's (a refit without a held-out publication)."""
    from planner.presets.specs import gpu_presets, model_presets
    row = next(r for r in measurements().rows if r.id == row_id)
    return measured_ratio(row, model_presets(), gpu_presets(), Throughput(mode="roofline", decode_mfu=decode_mfu))


# The decode MFU is the one roofline efficiency fitted on the table (the prefill MFU is a per-GPU
# estimate, planner/presets/gpus.yaml): the grid value whose roofline is nearest the published rows.
DECODE_MFU_GRID = tuple(x / 100 for x in range(20, 91, 5))


@functools.cache
def fit_decode_mfu(exclude_sources: frozenset = frozenset()) -> tuple[float, float]:
    """(decode MFU, rms log(roofline / measured)): the DECODE_MFU_GRID value nearest every row (every
    metric) of the publications not excluded. hardware.yaml's decode_mfu is this fit on every row
    (bench/fidelity.py --fit); bench/fidelity.py refits it without each held-out publication."""
    rows = [r for r in measurements().rows if source_key(r) not in exclude_sources]

    def err(mfu: float) -> float:
        return _rms([math.log(_preset_roofline(r.id, mfu)[0] / r.value) for r in rows])
    return min(((m, err(m)) for m in DECODE_MFU_GRID), key=lambda x: x[1])


@functools.cache
def row_phase(row_id: str, decode_mfu: float | None = None) -> str:
    """prefill or decode: where the roofline puts most of a table row's GPU time (a prefill-metric
    row is prefill)."""
    from planner.presets.specs import gpu_presets, model_presets
    row = next(r for r in measurements().rows if r.id == row_id)
    if row.metric == "prefill" or not row.osl:
        return "prefill"
    r = _row_rates(row, model_presets(), gpu_presets(), Throughput(mode="roofline", decode_mfu=decode_mfu))
    return "prefill" if row.isl / r.prefill > row.osl / r.decode else "decode"


def source_key(row) -> str:
    """The publication a row comes from (the short name its source starts with; TensorRT-LLM's
    perf-overview revisions TRT10, TRTDG and TRT17 are one: one team, one tool)."""
    key = row.source.split()[0]
    return "TRT" if key.startswith("TRT") else key


# ---------------------------------------------------------------- how far a calibration reaches
# A calibration transfers a row's measured / roofline to another case. How far it reaches is the
# furthest of: another decode regime (the roofline's compute- or memory-bound batch, the
# concurrency band; decode only), another engine family, another GPU generation, another
# architecture class; "none" when no row is near (the roofline alone).
REACH = ("same", "concurrency", "engine", "generation", "class", "none")
# vLLM and SGLang schedule alike (continuous batching, paged KV, their own kernels); TensorRT-LLM
# is the other family. The plan's extraction runs vLLM (the LLM class).
ENGINE_FAMILY = {"trtllm": "trtllm", "vllm-serve": "vllm", "sglang": "vllm"}
PLAN_ENGINE = "vllm"
# A reach level's own transfers decide it only when there are at least this many of them among
# the publications left in; fewer, and the level takes the roofline's spread (below).
MIN_TRANSFERS = 2
# A scaling level's band is its transfers' 90% prediction interval only from this many of them (2 degrees
# of freedom, t = 2.92); with fewer (2: t = 6.31 on one degree of freedom, an interval the t's tail
# makes rather than the errors) it falls back to the roofline's spread, the wider level's band.
MIN_INTERVAL = 3


@functools.cache
def row_regime(row_id: str, decode_mfu: float | None = None) -> str:
    """The roofline's decode bound of a table row ("compute" or "memory bandwidth"): its concurrency band."""
    from planner.presets.specs import gpu_presets, model_presets
    row = next(r for r in measurements().rows if r.id == row_id)
    return _row_rates(row, model_presets(), gpu_presets(),
                      Throughput(mode="roofline", decode_mfu=decode_mfu)).decode_bound


def reach(row, model: ModelSpec, gpu_id: str, engine: str, regime: str, phase: str,
          decode_mfu: float | None = None) -> str:
    """How far calibrating (model, GPU, engine family, decode regime) by table row `row` reaches (REACH)."""
    from planner.presets.specs import model_presets
    if architecture(model_presets()[row.model]) != architecture(model):
        return "class"
    if generation(row.gpu) != generation(gpu_id):
        return "generation"
    if ENGINE_FAMILY[row.engine] != engine:
        return "engine"
    if phase == "decode" and regime and row_regime(row.id, decode_mfu) != regime:
        return "concurrency"
    return "same"


def _pick(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float, phase: str,
          exclude_sources: frozenset = frozenset(), exclude_row: str = "", decode_mfu: float | None = None,
          reuse: Reuse | None = None):
    """The nearest row of `phase` within MAX_DISTANCE, of no excluded publication: of the model's
    architecture class when one is near, else of any class; (row, distance) or None."""
    return nearest_preset(model, gpu_id, weight_dtype, isl, osl, prefer_class=True,
                          allowed=_phase_rows(phase, exclude_sources, exclude_row, decode_mfu), reuse=reuse)


@functools.lru_cache(maxsize=1024)
def _phase_rows(phase: str, exclude_sources: frozenset, exclude_row: str, decode_mfu: float | None):
    """The preset-model rows (a mask in calibration's order) of `phase`, of no excluded publication."""
    return kept([r.id != exclude_row and source_key(r) not in exclude_sources and row_phase(r.id, decode_mfu) == phase
                 for r in preset_rows()[0]], bool)


def _log_roofline_error(row_id: str, decode_mfu: float | None = None) -> float:
    roof, measured = _preset_roofline(row_id, decode_mfu)
    return math.log(roof / measured)


@functools.cache
def transfers(phase: str, exclude_sources: frozenset = frozenset(),
              decode_mfu: float | None = None) -> tuple[tuple[str, str, str, float, float], ...]:
    """Every row of `phase` of a publication not excluded, calibrated by the nearest row of *another*
    publication also not excluded (the plan's own rule; nested: excluding a source removes its rows
    both as the calibrated and as the calibrating): (row, from, reach, log(calibrated / measured),
    log(roofline / measured)); the roofline at `decode_mfu` (None: the preset's)."""
    from planner.presets.specs import model_presets
    models = model_presets()
    out = []
    for r in measurements().rows:
        own = source_key(r)
        if r.model not in models or own in exclude_sources or row_phase(r.id, decode_mfu) != phase:
            continue
        hit = _pick(models[r.model], r.gpu, r.weight_dtype, r.isl, r.osl, phase, exclude_sources | {own},
                    decode_mfu=decode_mfu)
        roof = _log_roofline_error(r.id, decode_mfu)
        if hit is None:
            out.append((r.id, "", "none", roof, roof))
            continue
        n = hit[0]
        level = reach(n, models[r.model], r.gpu, ENGINE_FAMILY[r.engine], row_regime(r.id, decode_mfu), phase,
                      decode_mfu)
        out.append((r.id, n.id, level, roof - _log_roofline_error(n.id, decode_mfu), roof))
    return tuple(out)


@dataclass(frozen=True)
class Rule:
    """What a reach level does: scale by the nearest row or keep the roofline, and the band's half-width
    (log), from `evidence` held-out transfers of that level (0: the roofline's spread over `rows` rows;
    `tested` transfers of the level, too few for an interval, did not set it)."""
    calibrate: bool
    band: float
    evidence: int
    rows: int = 0
    tested: int = 0

    def basis(self) -> str:
        """The band's basis and its nominal coverage, as the plan says it."""
        if self.evidence:
            return (f"the 90% prediction interval of {self.evidence} held-out transfers of that reach (Student t, "
                    f"{self.evidence - 1} degrees of freedom, x sqrt(1 + 1/{self.evidence}))")
        return (f"the roofline's largest error over the {self.rows} published rows (covers about "
                f"{self.rows}/{self.rows + 1} of new rows)" +
                (f" ({self.tested} held-out transfers of that reach are too few for an interval, fewer than "
                 f"{MIN_INTERVAL})" if self.calibrate and self.tested else
                 " (no held-out transfer of that reach bounds it)" if self.calibrate else ""))


def _rms(xs) -> float:
    return math.sqrt(sum(x * x for x in xs) / len(xs))


@functools.cache
def rules(phase: str, exclude_sources: frozenset = frozenset(), decode_mfu: float | None = None) -> dict[str, Rule]:
    """Per reach level, from the transfers among the publications left in (transfers()): with at least
    MIN_TRANSFERS of that level, scale by the nearest row when that did better (rms log error) than the
    roofline alone on them; with fewer, scale only a `same` match (nothing nearer exists). A scaled level
    with at least MIN_INTERVAL transfers takes their 90% prediction interval (decide); any other (the
    roofline alone, or a scaled level with fewer transfers) the roofline's largest |log error| over every
    row left in (both phases). A level's band is never narrower than a nearer scaled level's band. The
    roofline at `decode_mfu` (None: the preset's)."""
    rows = [r for r in measurements().rows if source_key(r) not in exclude_sources]
    roof_spread = max((abs(_log_roofline_error(r.id, decode_mfu)) for r in rows), default=0.0)
    held = transfers(phase, exclude_sources, decode_mfu)
    out: dict[str, Rule] = {}
    floor = 0.0
    for level in REACH:
        out[level] = decide(level, [(cal, roof) for _, _, lv, cal, roof in held if lv == level], floor, roof_spread,
                            len(rows))
        if out[level].calibrate:
            floor = out[level].band
    return out


def decide(level: str, mine: list[tuple[float, float]], floor: float, roof_spread: float, rows: int = 0) -> Rule:
    """One reach level's Rule from its held-out transfers `mine` ((log calibrated / measured, log roofline /
    measured) each), the nearer scaled levels' band `floor` and the roofline's spread over `rows` rows
    (rules()). A scaled level's band, from n >= MIN_INTERVAL transfers, is the 90% prediction interval of
    the next one (planner/distributions.py band_from_residuals: mean +- t x sd x sqrt(1 + 1/n)), made symmetric
    by its farther end: the largest of n errors would cover only about n / (n + 1) of new cases."""
    enough = len(mine) >= MIN_TRANSFERS
    use = level != "none" and (_rms([c for c, _ in mine]) < _rms([r for _, r in mine]) if enough else level == "same")
    if use and len(mine) >= MIN_INTERVAL:
        low, high = band_from_residuals([-c for c, _ in mine])     # on log(measured / calibrated)
        return Rule(True, max(floor, -math.log(low), math.log(high)), len(mine), rows)
    return Rule(use, max(floor, roof_spread), 0, rows, len(mine) if use else 0)


def calibrate(model: ModelSpec, gpu: GPUSpec, *, weight_dtype: str, isl: float, osl: float,
              phase: str | None = None, engine: str = PLAN_ENGINE, regime: str = "",
              exclude_sources: frozenset = frozenset(), decode_mfu: float | None = None,
              reuse: Reuse | None = None) -> Calibration:
    """The nearest row's measured / roofline (planner/phases/throughput_calibration.py), or a note that none matched.
    The row's roofline takes the preset efficiencies, so the factor is a property of the table and
    the scenario's own efficiencies still move the user's roofline (and the plan) as they say.
    `phase`: the nearest row of that phase (same architecture class first), used or not and banded by
    the held-out transfers of its reach (rules()); `engine` the engine family and `regime` the decode
    bound of the case; `exclude_sources` the publications held out (bench/fidelity.py's leave one
    source out runs this same function, with `decode_mfu` refitted without that source: None, the preset's).
    `reuse`: a plan's or a search's (planner/phases/reuse.py), for the rows near the model whatever the lengths."""
    from planner.presets.specs import model_presets
    if phase is None:
        hit = nearest(model, gpu.id, weight_dtype, isl, osl, model_presets())
        if hit is None:
            return Calibration(note=f"no published measurement is near {model.id} on {gpu.id} in {weight_dtype}: "
                                    f"the roofline alone is used", extrapolated=True)
        row, dist = hit
        predicted, measured = _preset_roofline(row.id)
        return Calibration(row=row.id, source=row.source, date=row.date, metric=row.metric, measured=measured,
                           roofline=predicted, factor=measured / predicted, distance=dist)
    hit = _pick(model, gpu.id, weight_dtype, isl, osl, phase, exclude_sources, decode_mfu=decode_mfu, reuse=reuse)
    level = "none" if hit is None else reach(hit[0], model, gpu.id, engine, regime, phase, decode_mfu)
    rule = rules(phase, exclude_sources, decode_mfu)[level]
    basis = rule.basis()
    if hit is None:
        return Calibration(phase=phase, extrapolated=True, band=(-rule.band, rule.band),
                           note=f"no published {phase} measurement is near {model.id} on {gpu.id} in "
                                f"{weight_dtype}: the roofline alone is used, band {basis}")
    row, dist = hit
    predicted, measured = _preset_roofline(row.id, decode_mfu)
    extrapolated = level != "same" or row.gpu != gpu.id
    if not rule.calibrate:
        return Calibration(phase=phase, extrapolated=True, band=(-rule.band, rule.band), distance=dist,
                           note=f"the nearest {phase} row, {row.id}, reaches across {level}: such transfers "
                                f"did no better than the roofline on held-out publications, so the roofline "
                                f"alone is used, band {basis}")
    out = Calibration(row=row.id, source=row.source, date=row.date, metric=row.metric, measured=measured,
                      roofline=predicted, factor=measured / predicted, distance=dist, phase=phase,
                      extrapolated=extrapolated, band=(-rule.band, rule.band))
    if extrapolated:
        out.note = (f"an extrapolation: {row.id} is {architecture(model_presets()[row.model])} on {row.gpu} "
                    f"({row.engine}), the plan {architecture(model)} on {gpu.id} ({engine}); "
                    f"band {basis}")
    return out


def serving_decode_rate(model: ModelSpec, gpu: GPUSpec, throughput: Throughput, *, weight_dtype: str, kv_dtype: str,
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
    e = engine_for(gpu, throughput, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                   prefill_mfu=throughput.prefill_mfu or gpu.prefill_mfu, usage="serve")
    r = rates(model, gpu, tp, e, prefill_ctx=isl, decode_ctx=isl + osl / 2, seq_tokens=seq)
    return r.decode * (calibration.factor if calibration is not None else 1.0)


def sequence(model: ModelSpec, work: Workload, kv_dtype: str) -> tuple[float, float]:
    """The sequence a TP group must hold beside the weights: its tokens (the longer mean context) and
    their KV cache and state in bytes."""
    seq_tokens = max(work.decode_ctx, work.prefill_ctx, 1.0)
    return seq_tokens, model.kv_bytes_per_token(kv_dtype) * seq_tokens + model.linear_state_bytes()


def replicas_on_nodes(gpus: int, gpus_per_node: int, tensor_parallel: int) -> int:
    """Tensor-parallel groups of `tensor_parallel` that `gpus` on nodes of `gpus_per_node` hold: a group stays
    within a node when it fits in one (the last node may be partly filled); a larger group spans
    whole nodes."""
    if tensor_parallel > gpus_per_node:
        return gpus // tensor_parallel
    full, rest = divmod(gpus, gpus_per_node)
    return full * (gpus_per_node // tensor_parallel) + rest // tensor_parallel


def tensor_parallel_for(model: ModelSpec, gpu: GPUSpec, work: Workload, weight_dtype: str, kv_dtype: str,
                        held_bytes_per_token: float) -> int | None:
    """The tensor-parallel degree a replica needs for the weights and one sequence's KV cache (and what
    the capture path holds beside it); None where even the largest degree is too small. The one rule: the
    nodes (planner/phases/compose.py) and the extraction read it alike."""
    seq_tokens, seq_bytes = sequence(model, work, kv_dtype)
    return tensor_parallel_needed(model.weight_bytes(weight_dtype), seq_bytes + held_bytes_per_token * seq_tokens,
                                  gpu)


def _tensor_parallel(model: ModelSpec, gpu: GPUSpec, work: Workload, weight_dtype: str, kv_dtype: str,
                     held_bytes_per_token: float) -> tuple[int, float]:
    """tensor_parallel_for's degree with the sequence's tokens; a one-line PlannerInputError naming the GPU
    where even the largest degree is too small."""
    tp = tensor_parallel_for(model, gpu, work, weight_dtype, kv_dtype, held_bytes_per_token)
    seq_tokens, seq_bytes = sequence(model, work, kv_dtype)
    if tp is not None:
        return tp, seq_tokens
    seq_bytes += held_bytes_per_token * seq_tokens
    weights = model.weight_bytes(weight_dtype)
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


def _replicas(model: ModelSpec, gpu: GPUSpec, tp: int, gpus: int, gpus_per_node: int, weight_dtype: str,
              path: CapturePath | None, warnings: list[Finding]) -> int:
    """The replicas of `tp` GPUs the nodes hold (at least one: the plan raises the GPU count to `tp`),
    with a finding for GPUs left idle, a group that spans nodes, or a path that splits the layers."""
    replicas = replicas_on_nodes(gpus, gpus_per_node, tp)
    if replicas == 0:
        weights = model.weight_bytes(weight_dtype)
        warnings.append(finding("tp-raised",
                                f"{model.id} needs tensor parallelism {tp} on {gpu.id} ({weights / 1e9:,.0f} GB "
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
    if path is not None and path.split.value == "layers" and tp > 1:
        warnings.append(finding("capture-layer-split", f"{path.name} spreads {model.id}'s layers over {tp} {gpu.id} "
                                f"per replica (device_map): one of them computes at a time, {replicas} replica(s) "
                                f"on {replicas * tp} GPUs"))
    return replicas


@dataclass(frozen=True)
class _Phases:
    """What one throughput mode gives: the regeneration (decode) and capture hours and rates."""
    decode_hours: float
    capture_hours: float
    prefill_tps: float
    decode_tps: float
    table_prefill: float                # the table's prefill rate (the serving payback keeps it)
    batch: int
    decode_bound: str
    capture_bound: str
    prefill_calibration: Calibration | None = None
    decode_calibration: Calibration | None = None
    calibration: Calibration | None = None
    band_hours: tuple[float, float] | None = None


@dataclass(frozen=True)
class _Capture:
    """One capture's inputs beside the model and GPU: what it writes, where, on how many GPUs, on which path."""
    t: Throughput
    work: Workload
    tp: int
    replicas: int
    write_bytes: float
    write_bytes_per_s: float
    write_bound: str
    measured_tokens_per_s: float | None
    isl: float
    osl: float
    path: CapturePath | None
    stored_bytes: float | None
    reuse: Reuse | None = None

    @property
    def gpus_used(self) -> int:
        return self.replicas * self.tp

    @property
    def tp_eff(self) -> float:
        return self.t.tensor_parallel_efficiency if self.tp > 1 else 1.0

    def on_path(self, prefill_per_gpu: float, efficiency: float | None = None,
                startup_s: float | None = None) -> CaptureTime:
        """The capture on its path (_path_capture) at this prefill rate per GPU."""
        assert self.path is not None      # called only where the capture has a path (_modelled checks it)
        return _path_capture(self.path, self.work, prefill_per_gpu, self.tp, self.tp_eff, self.replicas,
                             self.write_bytes, self.write_bytes_per_s, self.stored_bytes, efficiency,
                             self.measured_tokens_per_s is not None, startup_s)


def _fixed(c: _Capture) -> _Phases:
    """throughput mode "fixed": the article's rate (tokens/s x batching) for every token."""
    rate = c.t.tokens_per_s * c.t.batching
    prefill_tps = c.measured_tokens_per_s if c.measured_tokens_per_s is not None else rate
    # The article counts generation only: capture rides along with it. Without regeneration
    # the same rate is applied to the tokens run through the model.
    capture_hours = 0.0 if c.work.output_tokens else hours_at(c.work.tokens, prefill_tps * c.gpus_used)
    return _Phases(decode_hours=hours_at(c.work.output_tokens, rate * c.gpus_used), capture_hours=capture_hours,
                   prefill_tps=prefill_tps, decode_tps=rate, table_prefill=rate, batch=int(c.t.batching),
                   decode_bound="fixed rate", capture_bound="fixed rate")


def _calibrations(model: ModelSpec, gpu: GPUSpec, c: _Capture, weight_dtype: str, decode_bound: str,
                  warnings: list[Finding]) -> tuple[Calibration, Calibration]:
    """throughput mode "calibrated": the prefill and decode factors of the measured rows nearest this
    model, GPU and lengths (planner/phases/throughput_calibration.py), with a finding for each extrapolated one."""
    isl = max(c.isl, 1.0)
    pcal = calibrate(model, gpu, weight_dtype=weight_dtype, isl=isl, osl=c.osl, phase="prefill", reuse=c.reuse)
    dcal = calibrate(model, gpu, weight_dtype=weight_dtype, isl=isl, osl=c.osl, phase="decode", regime=decode_bound,
                     reuse=c.reuse)
    for cal in (pcal, dcal):
        if cal.extrapolated:
            warnings.append(finding("calibration", f"calibrated {cal.phase} throughput "
                            f"{'is ' if cal.row else '- '}{cal.note}: the band is "
                            f"{math.exp(cal.band[0]):.2f}-{math.exp(cal.band[1]):.2f}x the {cal.phase} hours"))
    return pcal, dcal


def _modelled(model: ModelSpec, gpu: GPUSpec, c: _Capture, r: Rates, weight_dtype: str,
              warnings: list[Finding]) -> _Phases:
    """throughput modes "roofline" and "calibrated": the roofline's rates (times the calibration's
    factors); capture bound by the GPUs or the disk writes, whichever is slower, or timed on its path."""
    prefill_tps, decode_tps = r.prefill, r.decode
    pcal = dcal = calibration = band_hours = None
    if c.t.mode == "calibrated":
        pcal, dcal = _calibrations(model, gpu, c, weight_dtype, r.decode_bound, warnings)
        prefill_tps *= pcal.factor
        decode_tps *= dcal.factor
    table_prefill = prefill_tps
    if c.measured_tokens_per_s is not None:
        prefill_tps = c.measured_tokens_per_s
    decode_hours = hours_at(c.work.output_tokens, decode_tps * c.gpus_used)
    gpu_capture = hours_at(c.work.tokens, prefill_tps * c.gpus_used)
    disk_capture = hours_at(c.write_bytes, c.write_bytes_per_s)
    capture_hours = max(gpu_capture, disk_capture)
    capture_bound = "disk write" if disk_capture > gpu_capture else "compute"
    if c.path is not None:
        timed = c.on_path(prefill_tps)
        capture_hours, capture_bound = timed.hours, timed.bound
        gpu_capture = timed.compute_hours + timed.host_copy_hours + timed.request_hours
    if pcal is not None and dcal is not None:     # both set together (mode "calibrated")
        p_band, d_band, path = pcal.band, dcal.band, c.path
        # true hours = planned x calibrated / measured: each phase's held-out spread

        def at(end: int) -> float:
            return decode_hours * math.exp(d_band[end]) + max(gpu_capture * math.exp(p_band[end]), disk_capture)
        band_hours = (at(0), at(1))
        if path is not None:
            def on_path_at(end: int) -> float:
                return decode_hours * math.exp(d_band[end]) + c.on_path(
                    prefill_tps * math.exp(-p_band[end]), (path.efficiency.high, path.efficiency.low)[end],
                    (path.startup_s.low, path.startup_s.high)[end]).hours
            band_hours = (on_path_at(0), on_path_at(1))
        calibration = dcal if decode_hours >= capture_hours else pcal
    if capture_bound == "disk write":
        warnings.append(finding("capture-io-bound", f"hidden-state capture is I/O-bound: the {c.write_bound} "
                                f"{'write' if c.write_bound.endswith('s') else 'takes'} "
                                f"{c.write_bytes_per_s / 1e9:,.1f} GB/s, the GPUs could produce "
                                f"{c.write_bytes / (gpu_capture * 3600) / 1e9:,.1f} GB/s"))
    return _Phases(decode_hours, capture_hours, prefill_tps, decode_tps, table_prefill, r.batch, r.decode_bound,
                   capture_bound, pcal, dcal, calibration, band_hours)


def extraction(model: ModelSpec, gpu: GPUSpec, throughput: Throughput, work: Workload, *, gpus: int, weight_dtype: str,
               prefill_mfu: float, write_bytes: float, write_bytes_per_s: float, write_bound: str = "local disks",
               nodes: int = 1, gpus_per_node: int = 8, kv_dtype: str = "bf16",
               measured_tokens_per_s: float | None = None, path: CapturePath | None = None,
               held_bytes_per_token: float = 0.0, stored_bytes: float | None = None,
               reuse: Reuse | None = None) -> ExtractionPlan:
    """Regenerate `work.output_tokens` and capture `work.tokens` on `gpus` x `gpu` in `nodes` nodes of
    `gpus_per_node`, writing `write_bytes` at `write_bytes_per_s` (all nodes together, planner/phases/nodes.py).
    measured_tokens_per_s: the capture rate per GPU a run of the user's measured (planner calibrate),
    in place of the table's prefill rate; it already holds that run's disk writes.
    path: the capture path (planner/presets/capture_paths.py), None the model before it (a prefill server); its
    rows hold `held_bytes_per_token` beside their KV cache; `stored_bytes` the states without staging.
    One function per throughput mode: _fixed, _modelled (roofline and calibrated)."""
    warnings: list[Finding] = []
    tp, seq_tokens = _tensor_parallel(model, gpu, work, weight_dtype, kv_dtype, held_bytes_per_token)
    replicas = _replicas(model, gpu, tp, gpus, gpus_per_node, weight_dtype, path, warnings)
    e = engine_for(gpu, throughput, weight_dtype=weight_dtype, kv_dtype=kv_dtype, prefill_mfu=prefill_mfu)
    conversations = max(work.conversations, 1.0)
    isl = max(work.tokens - work.output_tokens, 0.0) / conversations if work.tokens else 1.0
    osl = work.output_tokens / conversations
    c = _Capture(throughput, work, tp, replicas, write_bytes, write_bytes_per_s, write_bound, measured_tokens_per_s,
                 isl, osl, path, stored_bytes, reuse)
    if throughput.mode == "fixed":
        ph = _fixed(c)
    else:
        r = rates(model, gpu, tp, e, prefill_ctx=work.prefill_ctx, decode_ctx=work.decode_ctx, seq_tokens=seq_tokens)
        ph = _modelled(model, gpu, c, r, weight_dtype, warnings)
    return _plan_of(ph, c, gpu, e, gpus, nodes, gpus_per_node, kv_dtype, warnings)


def _plan_of(ph: _Phases, c: _Capture, gpu: GPUSpec, e: Engine, gpus: int, nodes: int, gpus_per_node: int,
             kv_dtype: str, warnings: list[Finding]) -> ExtractionPlan:
    # serving the target (the payback's rate) keeps the table's prefill rate: a measured capture rate
    # holds the capture's own disk writes
    serve_out, serve_total = serving(ph.table_prefill, ph.decode_tps, max(c.isl, 1.0), c.osl)
    wall = ph.decode_hours + ph.capture_hours
    bound = f"{ph.decode_bound} (decode)" if ph.decode_hours >= ph.capture_hours else f"{ph.capture_bound} (capture)"
    low, high = ph.band_hours if ph.band_hours else (None, None)
    gpus_used, path = c.gpus_used, c.path
    return ExtractionPlan(
        gpu=gpu.id, mode=c.t.mode, gpus=gpus, gpus_used=gpus_used, nodes=nodes, gpus_per_node=gpus_per_node,
        tensor_parallel=c.tp, tensor_parallel_efficiency=c.tp_eff,
        replicas=c.replicas, decode_batch=ph.batch, max_num_seqs=e.max_num_seqs,
        max_batched_tokens=e.max_batched_tokens,
        kv_dtype=kv_dtype, gpu_hours=wall * gpus_used, wall_hours=wall, decode_hours=ph.decode_hours,
        capture_hours=ph.capture_hours, prefill_tokens_per_s_per_gpu=ph.prefill_tps,
        decode_tokens_per_s_per_gpu=ph.decode_tps,
        serving_output_tokens_per_s_per_gpu=serve_out, serving_total_tokens_per_s_per_gpu=serve_total,
        calibration=ph.calibration, prefill_calibration=ph.prefill_calibration,
        decode_calibration=ph.decode_calibration, calibrated_wall_hours_low=low, calibrated_wall_hours_high=high,
        wall_hours_low=low, wall_hours_high=high, bound=bound, decode_bound=ph.decode_bound,
        capture_bound=ph.capture_bound, capture_path=path.id if path is not None else "prefill-server",
        capture_split=path.split.value if path is not None else "tensor", tp_per_replica=c.tp,
        capture_tokens_per_s_per_gpu=c.work.tokens / (ph.capture_hours * 3600 * gpus_used) if ph.capture_hours
        else 0.0, warnings=warnings)


def _path_capture(path: CapturePath, work: Workload, prefill_per_gpu: float, tp: int, tp_eff: float, replicas: int,
                  write_bytes: float, disk_rate: float, stored_bytes: float | None,
                  efficiency: float | None = None, measured: bool = False,
                  startup_s: float | None = None) -> CaptureTime:
    """The capture of `work` on `path` (planner/presets/capture_paths.py capture_time) at this plan's prefill rate, or
    at a measured capture rate (`measured`)."""
    return capture_time(path, tokens=work.tokens, rows=work.rows,
                        stored_bytes=write_bytes if stored_bytes is None else stored_bytes, write_bytes=write_bytes,
                        prefill_per_gpu=prefill_per_gpu, tensor_parallel=tp, tp_efficiency=tp_eff, replicas=replicas,
                        write_bytes_per_s=disk_rate, efficiency=efficiency, measured=measured, startup_s=startup_s)


def _engine_caps(c: RowContext) -> Assumption:
    """The scheduler caps on the decode batch: the engine's defaults for the GPU's memory, or the user's."""
    t = c.scenario.throughput
    seqs, tokens, source = engine_defaults(c.extraction_gpu)
    value = f"max_num_seqs {t.max_batch or seqs:,}, max_num_batched_tokens {t.max_batched_tokens or tokens:,}"
    if t.max_batch is None and t.max_batched_tokens is None:
        return Assumption(name="scheduler caps", value=value, tag="published", source=source)
    return Assumption(name="scheduler caps", value=value, tag="yours", source=f"set in the scenario; the engine's "
                      f"default for {c.extraction_gpu.id}: {seqs:,} / {tokens:,} ({source})")


def throughput_assumptions(context: RowContext, extraction: ExtractionPlan | None,
                           plain: dict[str, Assumption]) -> list[Assumption]:
    """The Assumptions rows of the extraction's throughput: the article's fixed rate, or the roofline's
    efficiencies (with the declared rows of the decode bandwidth and tensor-parallel efficiencies, taken from
    `plain`), the engine's caps and the calibrations of `extraction`, the plan's."""
    s, ex_gpu, A = context.scenario, context.extraction_gpu, Assumption
    t = s.throughput
    if t.mode == "fixed":
        preset = (efficiency("fixed_tokens_per_s"), efficiency("fixed_batching"))
        return [A(name="throughput", value=f"fixed {t.tokens_per_s:g} tok/s x {t.batching:g} batching",
                  tag="yours", source=(efficiency_source("fixed_tokens_per_s") if (t.tokens_per_s, t.batching) == preset
                                       else f"set in the scenario; the preset's {preset[0]:g} tok/s x {preset[1]:g}: "
                                            f"{efficiency_source('fixed_tokens_per_s')}"))]
    cals = (None, None, None) if extraction is None else (extraction.prefill_calibration, extraction.decode_calibration,
                                                          extraction.calibration)
    return [
        paired("prefill MFU", context.prefill_mfu, ex_gpu.prefill_mfu,
               f"{ex_gpu.id} preset; {efficiency_source('prefill_mfu')}"),
        *take(plain, "throughput.decode_bandwidth_efficiency"),
        *take(plain, "throughput.tensor_parallel_efficiency"),
        A(name="usable GPU memory", value=f"{efficiency('memory_usable_fraction'):g} x memory - "
          f"{efficiency('memory_runtime_gb'):g} GB", tag="estimate",
          source=efficiency_source("memory_usable_fraction")),
        _engine_caps(context),
        paired("decode compute efficiency", t.decode_mfu or efficiency("decode_mfu"), efficiency("decode_mfu"),
               efficiency_source("decode_mfu")),
        A(name="KV cache", value=s.kv_dtype, tag="estimate" if s.kv_dtype == "bf16" else "yours",
          source="vLLM --kv-cache-dtype auto keeps the model's bf16; fp8 halves the KV bytes per token"),
        *calibration_assumptions(*cals),
    ]


def model_assumptions(context: RowContext) -> list[Assumption]:
    """The Assumptions rows of what the target's architecture adds to the extraction: linear attention's state,
    the forward's parameters, MoE decode, vLLM's staging write and the model's own estimates
    (planner/presets/specs.py)."""
    s, model, A, out = context.scenario, context.model, Assumption, []
    if model.linear_attention_layers:
        out.append(A(name="linear-attention state", value=f"{model.linear_state_bytes_each():,} bytes per layer and "
                     f"sequence x {model.linear_attention_layers} layers", tag=model.tag if not
                     model.linear_state_bytes_per_layer else "yours",
                     source="conv (kernel-1) x (2 key + value dims) in bf16 + value heads x value dim x key dim in "
                            f"{model.linear_state_dtype} (vLLM gated_delta_net_state_shape; {model.source})"))
    if model.vision_params or model.mtp_params or not model.tied_embeddings:
        out.append(A(name="forward parameters",
                     value=f"{model.forward_params() / 1e9:,.2f}B of {model.params / 1e9:,.2f}B "
                     f"(without vision {model.vision_params / 1e9:,.2f}B, MTP {model.mtp_params / 1e9:,.2f}B, input "
                     f"embedding {model.embedding_params() / 1e9:,.2f}B)",
                     tag="estimate" if model.estimates else model.tag,
                     source="a text forward runs neither the vision tower nor the MTP head; an untied embedding is a "
                            "lookup" + (f"; {model.estimates}" if model.estimates else "")))
    if model.active_params < model.params:
        out.append(A(name="MoE decode", value="every step reads all expert weights", tag="estimate",
                     source="at large batch nearly every expert is hit; conservative for small batches"))
    if s.staging_double_write:
        out.append(A(name="staging", value="every byte written twice", tag="published",
                     source="vLLM writes to a staging path and the client moves the file; across filesystems "
                            "that is a second write"))
    if model.estimates:
        out.append(A(name="model estimate", value=model.estimates, tag="estimate", source=model.source))
    return out
