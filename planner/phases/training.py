"""Phase 4: training the drafter, three ways.

- offline: read the stored hidden states every epoch; the slower of the drafter's compute and the
  disk read sets the pace;
- online (co-located): the target's forward pass runs on the training GPUs every epoch, then the
  drafter trains on its states;
- disaggregated: capture servers (extraction GPUs) stream the states to trainers over the node
  network every epoch, nothing stored but a buffer; the slowest of capture, network and training
  sets the pace.

The drafter's FLOPs per epoch come from planner/presets/drafter_kinds.py (per drafter kind, as the pipelines
run them); this module turns them into hours at the training GPUs' peak x training MFU, never
faster than the per-sample overhead floor (a trainer GPU's seconds per training token whatever the
FLOPs, fitted on published runs: presets/training_throughput.yaml `overhead`). Training is then as
fast as the slowest of the trainers' compute, the capture supply (disaggregated), the reader's I/O
(offline: the stored states; disaggregated: the stream's network) and the floor (`pace`, the bound
named compute|supply|io|overhead in TrainingPlan.bounds); co-located, the target's forward and the
drafter take turns (`online_pace`). Every rate carries a band: the 90% prediction interval of the
published runs' residuals (`planner.distributions.band_from_residuals`, training_throughput.yaml `band`; bench/fidelity.py
scores it leaving each publication out).
"""
from __future__ import annotations

import functools
import math

from pydantic import BaseModel, Field, computed_field

from planner.presets.drafter_kinds import DrafterFlops, DrafterKnobs
from planner.findings import Finding, finding
from planner.phases.extraction import OnNodes, prefill_flops_per_token, usable_memory_bytes
from planner.scenario import Disaggregated, Training
from planner.presets.specs import GPUSpec, ModelSpec, load_preset
from planner.phases.stored_bytes import Workload
from planner.units import hours_at


@functools.cache
def overhead_s_per_token() -> float:
    """The per-sample overhead floor: trainer-GPU seconds per training token (training_throughput.yaml)."""
    return float(load_preset("training_throughput.yaml")["overhead"]["s_per_token"])


@functools.cache
def overhead_gpus() -> tuple[str, ...]:
    """The training GPUs the floor was fitted on (its rows' `gpu`, training_throughput.yaml): on any
    other the floor is an extrapolation."""
    t = load_preset("training_throughput.yaml")
    fitted = set(t["overhead"]["rows"])
    return tuple(sorted({r["gpu"] for r in t["rows"] if r["id"] in fitted}))


@functools.cache     # a plan asks it per mode, the verdict per re-plan: the preset is read once per GPU
def floor_extrapolation(gpu_id: str) -> str:
    """'' on a training GPU the floor was fitted on; else that it is an extrapolation there, and why
    the band is not widened: the published runs on other GPUs (training_throughput.yaml) lie inside it
    with the floor as fitted (test_training_basis checks it)."""
    fitted = overhead_gpus()
    if gpu_id in fitted:
        return ""
    others = [f"{r['id']} on {r['gpu']}" for r in load_preset("training_throughput.yaml")["rows"]
              if r["gpu"] not in fitted]
    return (f"{gpu_id} is not among the GPUs the per-sample floor was fitted on ({', '.join(fitted)}): an "
            f"extrapolation; the band is not widened, as the published runs on other GPUs ({', '.join(others)}) "
            "lie inside it with the floor as fitted")


def fit_overhead(runs: list[dict]) -> float:
    """The floor as fitted on `runs` (rows of training_throughput.yaml: gpus, samples_per_s, tokens):
    the mean of their trainer-GPU seconds per token, gpus / samples_per_s / tokens."""
    return sum(r["gpus"] / r["samples_per_s"] / r["tokens"] for r in runs) / len(runs)


BOUNDS = ("compute", "supply", "io", "overhead")


def pace(*, compute: float, supply: float = math.inf, io: float = math.inf,
         overhead: float = math.inf) -> tuple[float, str]:
    """Training throughput (tokens/s) as its stages run side by side: the minimum of the trainers'
    compute (FLOPs at the training MFU), the capture supply (inference GPUs x their capture rate;
    online and disaggregated modes), the reader's I/O (the stored states, or the stream's network)
    and the per-sample overhead floor (trainers / overhead s per token); inf: no such stage. Returns
    the rate and which bound binds (the first of BOUNDS on a tie)."""
    rates = {"compute": compute, "supply": supply, "io": io, "overhead": overhead}
    bound = min(BOUNDS, key=lambda k: rates[k])
    return rates[bound], bound


def online_pace(*, compute: float, supply: float, overhead: float = math.inf) -> tuple[float, str]:
    """Co-located (online) training: the target's forward (the supply, tokens/s on the trainers) and
    then the drafter (the slower of its compute and the overhead floor) run one after the other on
    the same GPUs, so their times add: 1 / (1/drafter + 1/supply). The bound is the larger part."""
    drafter, kind = pace(compute=compute, overhead=overhead)
    if drafter <= 0 or supply <= 0:
        return 0.0, ("supply" if supply <= 0 else kind)
    time = 1 / drafter + 1 / supply
    rate = 1 / time if time else math.inf
    return rate, ("supply" if supply < drafter else kind)


def _finite(rates: dict[str, float]) -> dict[str, float]:
    return {k: v for k, v in rates.items() if math.isfinite(v)}


@functools.cache
def rate_band() -> tuple[float, float]:
    """The planner's band on a training rate (training_throughput.yaml `band`, refitted by bench/fidelity.py)."""
    b = load_preset("training_throughput.yaml")["band"]
    return float(b["low"]), float(b["high"])


def _hours_band(mode: str, end: int, fixed: str | None = None):
    """A computed field of TrainingPlan: the mode's wall hours at one end (0 low, 1 high) of the rate
    band, `fixed` (the disaggregated regeneration) kept at both ends."""
    def get(p: "TrainingPlan") -> float:
        return p._banded(getattr(p, f"{mode}_wall_hours"), getattr(p, fixed) if fixed else 0.0)[end]
    return computed_field(property(get), return_type=float)


class TrainingPlan(OnNodes):
    epochs: float
    drafter_layers: int
    drafter_params: float
    flops_per_token: float           # the drafter's training FLOPs per stored token (the epoch's mean)
    drafter: str = "dflash"
    # the recipe: training-time-test steps (EAGLE) or anchors x block size (DFlash), and which of
    # them the layout's code set
    ttt_steps: int | None = None
    num_anchors: int | None = None
    block_size: int | None = None
    recipe_from_layout: list[str] = []
    flops_per_sample: float = 0.0    # per training row
    flops_per_epoch: float = 0.0
    flops_parts: dict[str, float] = {}
    tokens_per_s: float = 0.0        # offline training: stored tokens per second over all training GPUs
    samples_per_s: float = 0.0
    offline_gpu_hours: float
    offline_wall_hours: float
    offline_bound: str
    online_gpu_hours: float
    online_wall_hours: float
    breakeven_epochs: float | None          # from the costs (planner/phases/costs.py); None: offline never pays off
    compute_hours_per_epoch: float = 0.0    # drafter forward + backward (or the overhead floor), offline and online
    overhead_hours_per_epoch: float = 0.0   # the per-sample overhead floor alone
    read_hours_per_epoch: float = 0.0       # offline: reading the stored hidden states
    target_forward_hours_per_epoch: float = 0.0   # online: the target's forward pass
    online_fits: bool = True
    disaggregated_capture_gpus: int = 0
    disaggregated_train_gpus: int = 0
    disaggregated_gpu_hours: float = 0.0
    disaggregated_wall_hours: float = 0.0
    disaggregated_bound: str = ""
    disaggregated_hours_per_epoch: float = 0.0
    disaggregated_regeneration_hours: float = 0.0
    disaggregated_rates_tokens_per_s: dict[str, float] = {}   # capture, network, training
    breakeven_epochs_disaggregated: float | None = None      # offline cheaper from this many epochs on
    # which bound binds each mode (planner.phases.training.BOUNDS: compute|supply|io|overhead; online: the
    # larger of its two serial parts, the drafter's compute-or-overhead and the target's forward, "supply")
    bounds: dict[str, str] = {}
    rate_low: float = 1.0            # the band on every mode's rate (x the predicted; hours / these), 90%
    rate_high: float = 1.0           # prediction interval of published runs' residuals (training_throughput.yaml band)
    samples_per_s_low: float = 0.0   # offline samples/s, the band's ends
    samples_per_s_high: float = 0.0
    stage_rates: dict[str, dict[str, float]] = {}   # mode -> bound -> tokens/s (the finite ones; online's supply: the target's forward)
    warnings: list[Finding] = Field(default_factory=list, exclude=True)   # also in Plan.findings

    # the band on the hours: hours = tokens / rate, so the fast end (rate_high) gives the low hours.
    # The disaggregated regeneration (a decode pass on the capture GPUs, before training) is not a
    # training rate and keeps its hours at both ends.
    def _banded(self, hours: float, fixed: float = 0.0) -> tuple[float, float]:
        return (fixed + (hours - fixed) / self.rate_high,
                fixed + (hours - fixed) / self.rate_low if self.rate_low else math.inf)

    # <mode>_wall_hours_<low|high>: each mode's hours at the two ends of the rate band
    offline_wall_hours_low = _hours_band("offline", 0)
    offline_wall_hours_high = _hours_band("offline", 1)
    online_wall_hours_low = _hours_band("online", 0)
    online_wall_hours_high = _hours_band("online", 1)
    disaggregated_wall_hours_low = _hours_band("disaggregated", 0, "disaggregated_regeneration_hours")
    disaggregated_wall_hours_high = _hours_band("disaggregated", 1, "disaggregated_regeneration_hours")


def training(model: ModelSpec, gpu: GPUSpec, t: Training, work: Workload, flops: DrafterFlops, recipe: DrafterKnobs, *,
             drafter_params: float, prefill_mfu: float, bytes_on_disk: float,
             read_bytes_per_s: float, read_bound: str = "local disks", nodes: int = 1) -> TrainingPlan:
    """`t.epochs` of `flops` on `t.gpus` x `gpu` in `nodes` nodes; offline reads `bytes_on_disk` every
    epoch at `read_bytes_per_s` (all nodes together: their disks, or the shared filesystem; planner/phases/nodes.py)."""
    warnings: list[Finding] = []
    peak = gpu.peak_flops("bf16")
    gpus = t.gpus
    flops_h = hours_at(flops.total, gpus * peak * t.mfu)
    overhead_h = work.tokens * overhead_s_per_token() / gpus / 3600
    compute_h = max(flops_h, overhead_h)
    read_h = hours_at(bytes_on_disk, read_bytes_per_s)
    per_s = {k: work.tokens / (h * 3600) if h else math.inf for k, h in
             (("compute", flops_h), ("io", read_h), ("overhead", overhead_h))}
    rate, kind = pace(**per_s)
    epoch_off = hours_at(work.tokens, rate)
    bound = {"io": "disk read", "overhead": "per-sample overhead", "compute": "compute"}[kind]
    if bound == "disk read":
        warnings.append(finding("training-io-bound", f"offline training is I/O-bound: reading the hidden states from the {read_bound} takes "
                                f"{read_h:,.1f} h per epoch against {compute_h:,.1f} h of compute"))
    if kind == "overhead":
        extra = floor_extrapolation(gpu.id)
        warnings.append(finding("training-floor", f"offline training is bound by the per-sample overhead floor, "
                                f"{overhead_s_per_token():.4g} s per token per GPU: {gpus} x {gpu.id} train at most "
                                f"{per_s['overhead']:,.0f} tokens/s, against {per_s['compute']:,.0f} from their compute "
                                f"at the training MFU {t.mfu:g}, which does not set these hours"
                                + (f"; {extra}" if extra else "")))
    target_h = hours_at(work.tokens * prefill_flops_per_token(model, work.prefill_ctx), gpus * peak * prefill_mfu)
    online_fits = model.weight_bytes("bf16") + 16 * drafter_params <= gpus * usable_memory_bytes(gpu)
    if not online_fits:
        warnings.append(finding("online-does-not-fit", f"online training needs the target "
                                f"({model.weight_bytes('bf16') / 1e9:,.0f} GB) and the drafter's training state on the "
                                f"{gpus} x {gpu.id}: it does not fit"))
    target_rate = work.tokens / (target_h * 3600) if target_h else math.inf
    on_rate, on_kind = online_pace(compute=per_s["compute"], supply=target_rate, overhead=per_s["overhead"])
    epoch_on = hours_at(work.tokens, on_rate)
    seconds = epoch_off * 3600
    low, high = rate_band()
    return TrainingPlan(
        gpu=gpu.id, gpus=gpus, nodes=nodes, gpus_per_node=t.gpus_per_node, epochs=t.epochs, drafter=recipe.kind, drafter_layers=recipe.layers,
        drafter_params=drafter_params, ttt_steps=recipe.ttt_steps, num_anchors=recipe.num_anchors,
        block_size=recipe.block_size, recipe_from_layout=recipe.from_layout, flops_per_token=flops.per_token,
        flops_per_sample=flops.per_row, flops_per_epoch=flops.total, flops_parts=flops.parts,
        tokens_per_s=work.tokens / seconds if seconds else 0.0, samples_per_s=work.rows / seconds if seconds else 0.0,
        offline_gpu_hours=t.epochs * epoch_off * gpus, offline_wall_hours=t.epochs * epoch_off, offline_bound=bound,
        online_gpu_hours=t.epochs * epoch_on * gpus, online_wall_hours=t.epochs * epoch_on, breakeven_epochs=None,
        compute_hours_per_epoch=compute_h, overhead_hours_per_epoch=overhead_h, read_hours_per_epoch=read_h, target_forward_hours_per_epoch=target_h,
        online_fits=online_fits, warnings=warnings,
        bounds={"offline": kind, "online": on_kind},
        stage_rates={"offline": _finite(per_s), "online": _finite({"compute": per_s["compute"], "overhead": per_s["overhead"],
                                                                  "supply": target_rate})},
        rate_low=low, rate_high=high, samples_per_s_low=work.rows / seconds * low if seconds else 0.0,
        samples_per_s_high=work.rows / seconds * high if seconds else 0.0)


def disaggregated(tp: TrainingPlan, d: Disaggregated, work: Workload, *, capture_gpus: int, train_gpus: int,
                  tensor_parallel: int, capture_tokens_per_s_per_gpu: float, regeneration_gpu_hours: float,
                  train_gpu: GPUSpec, train_mfu: float, stream_bytes_per_token: float, node_network_gbps: float,
                  network_efficiency: float, max_row_tokens: float, capture_gpus_per_node: int = 8) -> TrainingPlan:
    """`tp` with the third mode added (a new plan; `tp` is left as it was): every epoch the capture GPUs prefill the rows and
    stream `stream_bytes_per_token` per token to the trainers over the smaller side's nodes (capture
    nodes of `capture_gpus_per_node`, trainer nodes of the training's GPUs per node) x
    `node_network_gbps` x efficiency; the slowest of the three rates sets the pace. The responses
    are regenerated once beforehand on the capture GPUs (as online)."""
    used = max(tensor_parallel, capture_gpus // tensor_parallel * tensor_parallel)
    capture_rate = capture_tokens_per_s_per_gpu * used
    nodes = min(math.ceil(used / capture_gpus_per_node), math.ceil(train_gpus / tp.gpus_per_node))
    network_rate = nodes * node_network_gbps * 1e9 / 8 * network_efficiency / stream_bytes_per_token \
        if stream_bytes_per_token else math.inf
    peak = train_gpu.peak_flops("bf16")
    compute_rate = train_gpus * peak * train_mfu / tp.flops_per_token if tp.flops_per_token else math.inf
    overhead_rate = train_gpus / overhead_s_per_token()
    rate, kind = pace(compute=compute_rate, supply=capture_rate, io=network_rate, overhead=overhead_rate)
    rates = {"capture": capture_rate, "network": network_rate, "training": min(compute_rate, overhead_rate)}
    bound = {"supply": "capture", "io": "network"}.get(kind, "training")
    epoch_h = hours_at(work.tokens, rate)
    regen_h = regeneration_gpu_hours / used if used else 0.0
    one_row = max_row_tokens * stream_bytes_per_token * train_gpus
    warnings = [] if d.stream_buffer_gb * 1e9 >= one_row else [finding(
        "buffer-small", f"disaggregated: the {d.stream_buffer_gb:g} GB stream buffer holds less "
        f"than one {max_row_tokens:,.0f}-token row per trainer ({one_row / 1e9:,.1f} GB): trainers wait on every row")]
    return tp.model_copy(update=dict(
        disaggregated_capture_gpus=used, disaggregated_train_gpus=train_gpus, disaggregated_bound=bound,
        bounds={**tp.bounds, "disaggregated": kind},
        stage_rates={**tp.stage_rates, "disaggregated": _finite(
            {"compute": compute_rate, "supply": capture_rate, "io": network_rate, "overhead": overhead_rate})},
        disaggregated_hours_per_epoch=epoch_h, disaggregated_regeneration_hours=regen_h,
        disaggregated_rates_tokens_per_s={k: (v if math.isfinite(v) else 0.0) for k, v in rates.items()},
        disaggregated_wall_hours=regen_h + tp.epochs * epoch_h,
        disaggregated_gpu_hours=regen_h * used + tp.epochs * epoch_h * (used + train_gpus),
        warnings=[*tp.warnings, *warnings]))
