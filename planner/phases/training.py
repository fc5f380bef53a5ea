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
published runs' residuals (`planner.distributions.band_from_residuals`, training_throughput.yaml `band`;
bench/fidelity.py scores it leaving each publication out).
"""
from __future__ import annotations

import functools
import math

from pydantic import Field, computed_field

from planner.findings import Finding, finding
from planner.phases.assumption_rows import Assumption, RowContext, take
from planner.phases.extraction import OnNodes, prefill_flops_per_token, usable_memory_bytes
from planner.phases.stored_bytes import Workload
from planner.presets.drafter_kinds import DRAFTER_KINDS, DrafterFlops, DrafterKnobs
from planner.presets.specs import GPUSpec, ModelSpec, load_preset
from planner.scenario import Disaggregated, Scenario, Training
from planner.units import GiB, hours_at


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


def floor_extrapolation(gpu_id: str) -> str:
    """'' on a training GPU the floor was fitted on; else that it is an extrapolation there, and why
    the band is not widened: the published runs on other GPUs (training_throughput.yaml) lie inside it
    with the floor as fitted (test_training_basis checks it)."""
    fitted = overhead_gpus()
    if gpu_id in fitted:
        return ""
    others = _runs_elsewhere()
    return (f"{gpu_id} is not among the GPUs the per-sample floor was fitted on ({', '.join(fitted)}): an "
            f"extrapolation; the band is not widened, as the published runs on other GPUs ({', '.join(others)}) "
            "lie inside it with the floor as fitted")


@functools.cache
def _runs_elsewhere() -> tuple[str, ...]:
    """The published runs on GPUs the floor was not fitted on (training_throughput.yaml, read once)."""
    fitted = overhead_gpus()
    return tuple(f"{r['id']} on {r['gpu']}" for r in load_preset("training_throughput.yaml")["rows"]
                 if r["gpu"] not in fitted)


@functools.cache
def step_overhead_s_per_pass() -> float:
    """EAGLE's per-step overhead: trainer-GPU seconds per optimizer step x TTT step
    (training_throughput.yaml `step_overhead`)."""
    return float(load_preset("training_throughput.yaml")["step_overhead"]["s_per_pass"])


def fit_step_overhead(runs: list[dict]) -> float:
    """The per-step overhead as fitted on `runs` (rows of training_throughput.yaml: gpus, batch,
    samples_per_s, ttt_steps): the mean of their trainer-GPU seconds per optimizer step x TTT step,
    gpus x batch / samples_per_s / ttt_steps."""
    return sum(r["gpus"] * r.get("batch", 1) / r["samples_per_s"] / r["ttt_steps"] for r in runs) / len(runs)


def optimizer_steps(recipe: DrafterKnobs, work: Workload, gpus: int) -> float:
    """Optimizer steps per GPU per epoch: rows / (batch x GPUs) where the trainer batches rows
    (SpecForge), stored tokens / (pack x GPUs) where it packs them (speculators: one pack per GPU per
    step). Not rounded up (an estimate: the last step of each rank may be short)."""
    if recipe.scope == "pack" and recipe.pack_tokens:
        return work.tokens / recipe.pack_tokens / gpus
    return work.rows / (max(recipe.batch_size, 1) * gpus)


def overhead_seconds(recipe: DrafterKnobs, work: Workload, gpus: int) -> tuple[float, str]:
    """The overhead floor of one epoch on `gpus` trainers (seconds) and its term. EAGLE kinds unroll
    the draft layer over `ttt_steps` passes one after another at every optimizer step (SpecForge
    specforge/algorithms/eagle3/model.py:364-427; speculators models/eagle3/core.py:269-300), so their
    floor is steps x passes x s_per_pass. A DFlash drafter drafts its blocks in one pass: where its
    trainer takes rows one by one (SpecForge, TorchSpec: anchors drawn per row,
    dflash_family_model.py:179-210) it keeps the per-token floor fitted on those trainers' runs
    (training_throughput.yaml `overhead`); where it packs rows (speculators: one 8,192-token pack per GPU
    per step, anchors per pack, models/dflash/core.py:359-367) the per-row work is paid once a pack, so
    its floor is one pass per optimizer step at EAGLE's s_per_pass (an extrapolation: no packed DFlash
    run was fitted; speculators' own 5K tutorial lands inside the band, bench/users_reports.yaml)."""
    blocks = DRAFTER_KINDS.lookup(recipe.kind).drafts_blocks
    if blocks and recipe.scope != "pack":
        return work.tokens * overhead_s_per_token() / gpus, "per token"
    steps = optimizer_steps(recipe, work, gpus)
    if blocks:
        return steps * step_overhead_s_per_pass(), "per optimizer step"
    return steps * (recipe.ttt_steps or 1) * step_overhead_s_per_pass(), "per optimizer step x TTT step"


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


ACT_BYTES_PER_H = 34       # activation bytes per position per draft layer, in units of H (an estimate below)
LOGIT_BYTES = 8            # a head logit and its gradient, fp32 (an estimate)
DFLASH_CHUNK_BLOCKS = 128  # SpecForge specforge/config/schema.py:539 (objective_chunk_blocks 128)
ACT_BAND = (0.5, 1.5)      # the band on the activations (an estimate: the fixed parts are counted exactly)


def memory_parts(model: ModelSpec, recipe: DrafterKnobs, *, drafter_params: float, row_tokens: float,
                 gpus: int) -> dict[str, float]:
    """Bytes per training GPU at the run's longest row (`row_tokens`; a packed trainer's row is its pack),
    by part, offline (the target's share online is added by the caller):
    - drafter weights, bf16: 2 P (every GPU holds them: SpecForge FSDP SHARD_GRAD_OP, specforge/config/schema.py:514);
    - gradients and the optimizer, sharded over the trainers: bf16 gradients 2 P and AdamW's fp32 master copy
      and two fp32 moments 12 P (SpecForge specforge/optimizer.py:12-44; speculators keeps fp32 masters,
      src/speculators/train/config/schema.py:222-224), so 14 P / GPUs;
    - the frozen embedding and head the drafter runs, bf16: 2 x 2 V H (an estimate: one of each);
    - activations (an estimate, ACT_BYTES_PER_H x H per position and layer, as for a transformer layer in
      16-bit with flash attention, Korthikanti et al. 2022, arXiv:2205.05198 section 4.1; no T x T scores are
      held: SpecForge trains with flex_attention unless told otherwise, specforge/config/schema.py:523-525
      @a6b6b02, an eager or sdpa backend chosen by hand holds them and is not modelled): EAGLE keeps every
      one of its TTT passes for the backward, batch x T positions each, with their head's logits (LOGIT_BYTES
      per logit over the head's vocabulary) and the teacher's soft labels (fp32, once); DFlash runs min(anchors,
      T) x block positions through its layers over the row's context K/V, its head in chunks of
      DFLASH_CHUNK_BLOCKS blocks where the trainer checkpoints it (3 passes), at once otherwise;
    - the captured states fed to the fc, bf16: T x n_aux x H x 2."""
    H, V = model.hidden_size, model.vocab_size
    kv = model.num_kv_heads * model.head_dim
    P = drafter_params
    kind = DRAFTER_KINDS.lookup(recipe.kind)
    T = row_tokens * (1 if recipe.scope == "pack" else max(recipe.batch_size, 1))
    if kind.drafts_blocks:
        positions = min(recipe.num_anchors or 512, row_tokens) * (recipe.block_size or 16) * \
            (1 if recipe.scope == "pack" else max(recipe.batch_size, 1))
        head_positions = min(positions, DFLASH_CHUNK_BLOCKS * (recipe.block_size or 16)) if recipe.head_passes == 3 \
            else positions
        context = T * recipe.layers * 2 * kv * 2
        labels = 0.0
    else:
        positions = head_positions = T * (recipe.ttt_steps or 1)
        context = 0.0
        labels = T * recipe.head_vocab * 4 if recipe.teacher_vocab else 0.0
    return {
        "drafter weights": 2 * P,
        "gradients and optimizer": 14 * P / max(gpus, 1),
        "frozen embedding and head": 2 * 2 * V * H,
        "activations": positions * recipe.layers * ACT_BYTES_PER_H * H
        + head_positions * recipe.head_vocab * LOGIT_BYTES + context + labels,
        "captured states": T * recipe.n_aux * H * 2,
    }


def memory_gib(parts: dict[str, float], end: int | None = None) -> float:
    """GiB of `parts`; `end` 0 or 1: the activations at the low or high end of ACT_BAND."""
    scale = 1.0 if end is None else ACT_BAND[end]
    return sum(v * (scale if k == "activations" else 1.0) for k, v in parts.items()) / GiB


def _fewer_passes(recipe: DrafterKnobs, fits) -> list[str]:
    """memory_fixes' fewer TTT steps (EAGLE: the most that fit) or anchors (DFlash: halved until they fit,
    down to 16)."""
    if recipe.ttt_steps and recipe.ttt_steps > 1 and not DRAFTER_KINDS.lookup(recipe.kind).drafts_blocks:
        for k in range(recipe.ttt_steps - 1, 0, -1):
            if m := fits(knobs=recipe.model_copy(update={"ttt_steps": k})):
                return [f"{k} TTT steps ({m / GiB:,.1f} GiB per GPU)"]
    if recipe.num_anchors and DRAFTER_KINDS.lookup(recipe.kind).drafts_blocks:
        a = recipe.num_anchors // 2
        while a >= 16 and not fits(knobs=recipe.model_copy(update={"num_anchors": a})):
            a //= 2
        if a >= 16:
            return [f"{a} anchors ({fits(knobs=recipe.model_copy(update={'num_anchors': a})) / GiB:,.1f} GiB per GPU)"]
    return []


def memory_fixes(model: ModelSpec, recipe: DrafterKnobs, *, drafter_params: float, row_tokens: float, gpus: int,
                 capacity: float, target_share: float = 0.0) -> list[str]:
    """Which changes make the training fit `capacity` bytes per GPU, each checked by re-counting the memory
    with it: a shorter cap (halved until it fits, down to 256 tokens), fewer TTT steps (EAGLE) or anchors
    (DFlash), more trainers (which shard only the optimizer: up to 8x), and, online, training offline."""
    def fits(knobs: DrafterKnobs = recipe, tokens: float = row_tokens, gpu_count: int = gpus,
             share: float = target_share) -> float:
        total = sum(memory_parts(model, knobs, drafter_params=drafter_params, row_tokens=tokens,
                                 gpus=gpu_count).values()) + share
        return total if total <= capacity else 0.0
    out = []
    if target_share and (m := fits(share=0.0)):
        out.append(f"offline instead of online ({m / GiB:,.1f} GiB per GPU)")
    cap = row_tokens / 2
    while cap >= 256 and not fits(tokens=cap):
        cap /= 2
    if cap >= 256:
        out.append(f"a sequence cap of {cap:,.0f} tokens ({fits(tokens=cap) / GiB:,.1f} GiB per GPU)")
    out += _fewer_passes(recipe, fits)
    for more in (2 * gpus, 4 * gpus, 8 * gpus):
        if m := fits(gpu_count=more):
            out.append(f"{more} training GPUs ({m / GiB:,.1f} GiB per GPU)")
            break
    return out


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
    # mode -> bound -> tokens/s (the finite ones; online's supply: the target's forward)
    stage_rates: dict[str, dict[str, float]] = {}
    # which term binds the offline training and why (issue 33): `bound` is bounds["offline"]
    bound: str = ""
    bound_reason: str = ""
    # the floor's form: "per token" (DFlash by rows) | "per optimizer step" (DFlash packed) |
    # "per optimizer step x TTT step" (EAGLE)
    overhead_term: str = ""
    optimizer_steps_per_epoch: float = 0.0   # per GPU (rows / batch / GPUs, or stored tokens / pack / GPUs)
    # memory per training GPU at the run's longest row (planner.phases.training.memory_parts), GiB; the band
    # on the activations (an estimate); online adds the target's share (its bf16 weights over the trainers)
    memory_gib_per_gpu: float = 0.0
    memory_gib_per_gpu_low: float = 0.0
    memory_gib_per_gpu_high: float = 0.0
    memory_parts_gib: dict[str, float] = {}
    memory_row_tokens: float = 0.0
    memory_capacity_gib: float = 0.0         # usable memory per GPU (planner.phases.extraction.usable_memory_bytes)
    online_memory_gib_per_gpu: float = 0.0
    fits: bool = True                         # offline: memory_gib_per_gpu within the capacity
    warnings: list[Finding] = Field(default_factory=list, exclude=True)   # also in Plan.findings

    # the band on the hours: hours = tokens / rate, so the fast end (rate_high) gives the low hours.
    # The disaggregated regeneration (a decode pass on the capture GPUs, before training) is not a
    # training rate and keeps its hours at both ends.
    def _banded(self, hours: float, fixed: float = 0.0) -> tuple[float, float]:
        return (fixed + (hours - fixed) / self.rate_high,
                fixed + (hours - fixed) / self.rate_low if self.rate_low else math.inf)

    # <mode>_wall_hours_<low|high>: each mode's hours at the two ends of the rate band; the disaggregated
    # regeneration (disaggregated_regeneration_hours) kept at both ends
    @computed_field  # type: ignore[prop-decorator]  # mypy: no decorator over @property (pydantic docs)
    @property
    def offline_wall_hours_low(self) -> float:
        return self._banded(self.offline_wall_hours)[0]

    @computed_field  # type: ignore[prop-decorator]  # mypy: no decorator over @property (pydantic docs)
    @property
    def offline_wall_hours_high(self) -> float:
        return self._banded(self.offline_wall_hours)[1]

    @computed_field  # type: ignore[prop-decorator]  # mypy: no decorator over @property (pydantic docs)
    @property
    def online_wall_hours_low(self) -> float:
        return self._banded(self.online_wall_hours)[0]

    @computed_field  # type: ignore[prop-decorator]  # mypy: no decorator over @property (pydantic docs)
    @property
    def online_wall_hours_high(self) -> float:
        return self._banded(self.online_wall_hours)[1]

    @computed_field  # type: ignore[prop-decorator]  # mypy: no decorator over @property (pydantic docs)
    @property
    def disaggregated_wall_hours_low(self) -> float:
        return self._banded(self.disaggregated_wall_hours, self.disaggregated_regeneration_hours)[0]

    @computed_field  # type: ignore[prop-decorator]  # mypy: no decorator over @property (pydantic docs)
    @property
    def disaggregated_wall_hours_high(self) -> float:
        return self._banded(self.disaggregated_wall_hours, self.disaggregated_regeneration_hours)[1]


def _floor_text(overhead_term: str, steps: float, recipe: DrafterKnobs) -> str:
    """The overhead floor in words: per token, per optimizer step, or per optimizer step x TTT step."""
    if overhead_term == "per token":
        return f"{overhead_s_per_token():.4g} s per token per GPU"
    if overhead_term == "per optimizer step":
        return f"{step_overhead_s_per_pass():.4g} s per optimizer step per GPU ({steps:,.0f} steps an epoch)"
    return (f"{step_overhead_s_per_pass():.4g} s per optimizer step x TTT step per GPU ({steps:,.0f} steps x "
            f"{recipe.ttt_steps or 1} passes an epoch)")


def _bound_reason(kind: str, mfu: float, per_s: dict[str, float], floor_text: str, read_bound: str) -> str:
    """Why the bound (compute, io or overhead) sets offline training's hours."""
    return {"compute": f"the drafter's FLOPs at the training MFU {mfu:g} ({per_s['compute']:,.0f} tokens/s) are "
                       f"slower than the overhead floor ({per_s['overhead']:,.0f} tokens/s: {floor_text})",
            "io": f"reading the stored states from the {read_bound} ({per_s['io']:,.0f} tokens/s) is slower than the "
                  f"drafter's compute ({per_s['compute']:,.0f}) and the overhead floor ({per_s['overhead']:,.0f})",
            "overhead": f"the overhead floor, {floor_text}, allows {per_s['overhead']:,.0f} tokens/s, below the "
                        f"{per_s['compute']:,.0f} the drafter's FLOPs allow at the training MFU {mfu:g}"}[kind]


def _floor_finding(overhead_term: str, floor_text: str, gpu_id: str, gpus: int, per_s: dict[str, float],
                   mfu: float) -> Finding:
    extra = floor_extrapolation(gpu_id) if overhead_term == "per token" else ""
    return finding("training-floor", f"offline training is bound by the {overhead_term} overhead floor, "
                   f"{floor_text}: {gpus} x {gpu_id} train at most "
                   f"{per_s['overhead']:,.0f} tokens/s, against {per_s['compute']:,.0f} from their compute "
                   f"at the training MFU {mfu:g}, which does not set these hours"
                   + (f"; {extra}" if extra else ""))


def _memory(model: ModelSpec, gpu: GPUSpec, recipe: DrafterKnobs, drafter_params: float, row: float, gpus: int,
            warnings: list[Finding]):
    """Training memory per GPU at the longest row, offline and online (the target's share beside it), with
    a finding and the fixes that fit where either does not: (parts, GiB, fits, online GiB, online fits,
    usable bytes)."""
    parts = memory_parts(model, recipe, drafter_params=drafter_params, row_tokens=row, gpus=gpus)
    capacity = usable_memory_bytes(gpu)
    target_share = model.weight_bytes("bf16") / gpus
    mem = memory_gib(parts)
    fits = mem * GiB <= capacity
    online_mem = mem + target_share / GiB
    online_fits = online_mem * GiB <= capacity
    if not fits:
        fixes = memory_fixes(model, recipe, drafter_params=drafter_params, row_tokens=row, gpus=gpus, capacity=capacity)
        warnings.append(finding("training-memory", f"training does not fit in memory: {mem:,.1f} GiB per GPU "
                                f"(estimate {memory_gib(parts, 0):,.1f}-{memory_gib(parts, 1):,.1f}; activations "
                                f"{parts['activations'] / GiB:,.1f}) at the longest row of {row:,.0f} tokens against "
                                f"{capacity / GiB:,.1f} usable on a {gpu.id}; "
                                + ("what fits, each re-counted: " + "; ".join(fixes) if fixes else
                                   "none of a shorter cap, fewer TTT steps or anchors, or 8x the GPUs fits")))
    if not online_fits:
        fixes = memory_fixes(model, recipe, drafter_params=drafter_params, row_tokens=row, gpus=gpus, capacity=capacity,
                             target_share=target_share)
        warnings.append(finding("online-does-not-fit", f"online training needs the target "
                                f"({model.weight_bytes('bf16') / 1e9:,.0f} GB, {target_share / GiB:,.1f} GiB per GPU) "
                                f"and the drafter's training state ({mem:,.1f} GiB) on each of the {gpus} x {gpu.id} "
                                f"({capacity / GiB:,.1f} GiB usable): it does not fit"
                                + ("; what fits, each re-counted: " + "; ".join(fixes) if fixes else "")))
    return parts, mem, fits, online_mem, online_fits, capacity


def training(model: ModelSpec, gpu: GPUSpec, training: Training, work: Workload, flops: DrafterFlops,
             recipe: DrafterKnobs, *, drafter_params: float, prefill_mfu: float, bytes_on_disk: float,
             read_bytes_per_s: float, read_bound: str = "local disks", nodes: int = 1,
             max_row_tokens: float = 0.0) -> TrainingPlan:
    """`training.epochs` of `flops` on `training.gpus` x `gpu` in `nodes` nodes; offline reads `bytes_on_disk` every
    epoch at `read_bytes_per_s` (all nodes together: their disks, or the shared filesystem; planner/phases/nodes.py)."""
    warnings: list[Finding] = []
    peak = gpu.peak_flops("bf16")
    gpus = training.gpus
    flops_h = hours_at(flops.total, gpus * peak * training.mfu)
    overhead_s, overhead_term = overhead_seconds(recipe, work, gpus)
    overhead_h = overhead_s / 3600
    compute_h = max(flops_h, overhead_h)
    read_h = hours_at(bytes_on_disk, read_bytes_per_s)
    per_s = {k: work.tokens / (h * 3600) if h else math.inf for k, h in
             (("compute", flops_h), ("io", read_h), ("overhead", overhead_h))}
    rate, kind = pace(**per_s)
    epoch_off = hours_at(work.tokens, rate)
    bound = {"io": "disk read", "overhead": "per-sample overhead", "compute": "compute"}[kind]
    if bound == "disk read":
        warnings.append(finding("training-io-bound",
                                f"offline training is I/O-bound: reading the hidden states from the {read_bound} takes "
                                f"{read_h:,.1f} h per epoch against {compute_h:,.1f} h of compute"))
    steps = optimizer_steps(recipe, work, gpus)
    floor_text = _floor_text(overhead_term, steps, recipe)
    reason = _bound_reason(kind, training.mfu, per_s, floor_text, read_bound)
    if kind == "overhead":
        warnings.append(_floor_finding(overhead_term, floor_text, gpu.id, gpus, per_s, training.mfu))
    target_h = hours_at(work.tokens * prefill_flops_per_token(model, work.prefill_ctx), gpus * peak * prefill_mfu)
    row = max_row_tokens or (work.tokens / work.rows if work.rows else 0.0)
    parts, mem, fits, online_mem, online_fits, capacity = _memory(model, gpu, recipe, drafter_params, row, gpus,
                                                                  warnings)
    target_rate = work.tokens / (target_h * 3600) if target_h else math.inf
    on_rate, on_kind = online_pace(compute=per_s["compute"], supply=target_rate, overhead=per_s["overhead"])
    epoch_on = hours_at(work.tokens, on_rate)
    seconds = epoch_off * 3600
    low, high = rate_band()
    return TrainingPlan(
        gpu=gpu.id, gpus=gpus, nodes=nodes, gpus_per_node=training.gpus_per_node, epochs=training.epochs,
        drafter=recipe.kind, drafter_layers=recipe.layers,
        drafter_params=drafter_params, ttt_steps=recipe.ttt_steps, num_anchors=recipe.num_anchors,
        block_size=recipe.block_size, recipe_from_layout=recipe.from_layout, flops_per_token=flops.per_token,
        flops_per_sample=flops.per_row, flops_per_epoch=flops.total, flops_parts=flops.parts,
        tokens_per_s=work.tokens / seconds if seconds else 0.0, samples_per_s=work.rows / seconds if seconds else 0.0,
        offline_gpu_hours=training.epochs * epoch_off * gpus, offline_wall_hours=training.epochs * epoch_off,
        offline_bound=bound, online_gpu_hours=training.epochs * epoch_on * gpus,
        online_wall_hours=training.epochs * epoch_on, breakeven_epochs=None, compute_hours_per_epoch=compute_h,
        overhead_hours_per_epoch=overhead_h, read_hours_per_epoch=read_h, target_forward_hours_per_epoch=target_h,
        online_fits=online_fits, warnings=warnings,
        bounds={"offline": kind, "online": on_kind},
        stage_rates={"offline": _finite(per_s), "online": _finite({"compute": per_s["compute"],
                                                                   "overhead": per_s["overhead"],
                                                                  "supply": target_rate})},
        rate_low=low, rate_high=high, samples_per_s_low=work.rows / seconds * low if seconds else 0.0,
        samples_per_s_high=work.rows / seconds * high if seconds else 0.0,
        bound=kind, bound_reason=reason, overhead_term=overhead_term, optimizer_steps_per_epoch=steps,
        memory_gib_per_gpu=mem, memory_gib_per_gpu_low=memory_gib(parts, 0),
        memory_gib_per_gpu_high=memory_gib(parts, 1),
        memory_parts_gib={k: v / GiB for k, v in parts.items()}, memory_row_tokens=row,
        memory_capacity_gib=capacity / GiB, online_memory_gib_per_gpu=online_mem, fits=fits)


def disaggregated(training_plan: TrainingPlan, disaggregated: Disaggregated, work: Workload, *, capture_gpus: int,
                  train_gpus: int,
                  tensor_parallel: int, capture_tokens_per_s_per_gpu: float, regeneration_gpu_hours: float,
                  train_gpu: GPUSpec, train_mfu: float, stream_bytes_per_token: float, node_network_gbps: float,
                  network_efficiency: float, max_row_tokens: float, capture_gpus_per_node: int = 8) -> TrainingPlan:
    """`training_plan` with the third mode added (a new plan; it is left as it was): every epoch the capture
    GPUs prefill the rows and stream `stream_bytes_per_token` per token to the trainers over the smaller side's
    nodes (capture nodes of `capture_gpus_per_node`, trainer nodes of the training's GPUs per node) x
    `node_network_gbps` x efficiency; the slowest of the three rates sets the pace. The responses
    are regenerated once beforehand on the capture GPUs (as online)."""
    used = max(tensor_parallel, capture_gpus // tensor_parallel * tensor_parallel)
    capture_rate = capture_tokens_per_s_per_gpu * used
    nodes = min(math.ceil(used / capture_gpus_per_node), math.ceil(train_gpus / training_plan.gpus_per_node))
    network_rate = nodes * node_network_gbps * 1e9 / 8 * network_efficiency / stream_bytes_per_token \
        if stream_bytes_per_token else math.inf
    peak = train_gpu.peak_flops("bf16")
    compute_rate = train_gpus * peak * train_mfu / training_plan.flops_per_token if training_plan.flops_per_token \
        else math.inf
    # the overhead floor scales with the trainers in both its terms (per token, per optimizer step)
    off = training_plan.stage_rates.get("offline", {}).get("overhead", math.inf)
    overhead_rate = off * train_gpus / training_plan.gpus if training_plan.gpus else math.inf
    rate, kind = pace(compute=compute_rate, supply=capture_rate, io=network_rate, overhead=overhead_rate)
    rates = {"capture": capture_rate, "network": network_rate, "training": min(compute_rate, overhead_rate)}
    bound = {"supply": "capture", "io": "network"}.get(kind, "training")
    epoch_h = hours_at(work.tokens, rate)
    regen_h = regeneration_gpu_hours / used if used else 0.0
    one_row = max_row_tokens * stream_bytes_per_token * train_gpus
    warnings = [] if disaggregated.stream_buffer_gb * 1e9 >= one_row else [finding(
        "buffer-small", f"disaggregated: the {disaggregated.stream_buffer_gb:g} GB stream buffer holds less "
        f"than one {max_row_tokens:,.0f}-token row per trainer ({one_row / 1e9:,.1f} GB): trainers wait on every row")]
    return training_plan.model_copy(update=dict(
        disaggregated_capture_gpus=used, disaggregated_train_gpus=train_gpus, disaggregated_bound=bound,
        bounds={**training_plan.bounds, "disaggregated": kind},
        stage_rates={**training_plan.stage_rates, "disaggregated": _finite(
            {"compute": compute_rate, "supply": capture_rate, "io": network_rate, "overhead": overhead_rate})},
        disaggregated_hours_per_epoch=epoch_h, disaggregated_regeneration_hours=regen_h,
        disaggregated_rates_tokens_per_s={k: (v if math.isfinite(v) else 0.0) for k, v in rates.items()},
        disaggregated_wall_hours=regen_h + training_plan.epochs * epoch_h,
        disaggregated_gpu_hours=regen_h * used + training_plan.epochs * epoch_h * (used + train_gpus),
        warnings=[*training_plan.warnings, *warnings]))


# ---------------------------------------------------------------- the Assumptions rows of training
def _recipe_row(c: RowContext, r: DrafterKnobs, name: str, key: str, value: str, default) -> Assumption:
    """One recipe value of the recipe `r` in force (c.recipe, set): published (or an estimate) from the layout's
    pipeline, SpecForge's where the pipeline has no default, or yours."""
    if key in r.from_layout and default is not None:
        return Assumption(name=name, value=value, tag="estimate" if default.source.startswith("estimate")
                          else "published", source=f"{c.layout.name}: {default.source}")
    if default is None and key not in r.from_layout and getattr(c.scenario.training, key) is None:
        return Assumption(name=name, value=value, tag="estimate", source="no pipeline default: SpecForge's")
    return Assumption(name=name, value=value, tag="yours",
                      source="set in the scenario" + (f"; the layout's default: {default.source}"
                                                      if default is not None else ""))


def _recipe(c: RowContext) -> list[Assumption]:
    """The trainer's recipe (TTT steps, anchors, block): published with the pipeline's code line when
    the layout supplies it, yours when the scenario sets it."""
    r, t = c.recipe, c.layout.spec.training
    if r is None:
        return []
    shown = []
    if not DRAFTER_KINDS.lookup(r.kind).drafts_blocks:
        shown.append(("training-time-test steps", "ttt_steps", f"{r.ttt_steps}", t.ttt_steps))
    else:
        shown.append(("DFlash anchors", "num_anchors",
                      f"{r.num_anchors} per {'pack' if r.scope == 'pack' else 'sample'}",
                      t.num_anchors))
        shown.append(("DFlash block size", "block_size", f"{r.block_size}", t.block_size))
    out = [_recipe_row(c, r, *row) for row in shown]
    head = "the full vocabulary" if r.head_vocab == c.model.vocab_size else f"a {r.head_vocab:,}-token draft vocabulary"
    out.append(Assumption(name="drafter head", value=f"{head}, {r.head_passes} passes"
                          + ("" if not r.teacher_vocab else f"; teacher pass over {r.teacher_vocab:,} tokens"),
                          tag="estimate" if t.head_vocab.source.startswith("estimate") else "published",
                          source=f"{c.layout.name}: {t.head_vocab.source}; {t.head_passes.source}; {t.teacher.source}"))
    if r.scope == "pack":
        out.append(Assumption(name="training rows", value=f"packed into {r.pack_tokens:,}-token sequences, each padded "
                              "to it", tag="published", source=f"{c.layout.name}: {t.scope.source}"))
    return out


_BOUND_NAMES = {"compute": "the trainers' compute (FLOPs at the training MFU)", "supply": "the capture supply",
                "io": "the reader's I/O", "overhead": "the per-sample overhead floor"}


def _training_basis(t: TrainingPlan | None) -> list[Assumption]:
    """The training rate's basis: the per-sample overhead floor (its value, the runs it is fitted on),
    which bound binds each mode, and the band on the hours."""
    if t is None:
        return []
    binds = "; ".join(f"{mode}: {_BOUND_NAMES.get(b, b)}" for mode, b in t.bounds.items())
    if t.overhead_term in ("", "per token"):
        floor = overhead_s_per_token()
        head = (f"{floor:.4g} s per training token per trainer GPU ({t.gpus} x {t.gpu}: at most "
                f"{t.gpus / floor:,.0f} tok/s)")
    else:   # issue 33: EAGLE's floor per optimizer step x TTT step, a packed DFlash trainer's per step
        passes = f" x {t.ttt_steps or 1} TTT passes" if "TTT" in t.overhead_term else ""
        head = (f"{step_overhead_s_per_pass():.4g} s {t.overhead_term} per trainer GPU "
                f"({t.optimizer_steps_per_epoch:,.0f} steps{passes} an epoch on {t.gpus} x {t.gpu}: at most "
                f"{t.stage_rates.get('offline', {}).get('overhead', 0.0):,.0f} tok/s)")
    value = (f"{head}; bound by {binds}; band: rate x{t.rate_low:.2f}-{t.rate_high:.2f}, "
             f"hours x{1 / t.rate_high:.2f}-{1 / t.rate_low:.2f} "
             f"(offline {t.offline_wall_hours_low:,.1f}-{t.offline_wall_hours_high:,.1f} h)")
    if t.bounds.get("offline") != "compute":
        value += "; the training MFU does not set the offline hours"
    extra = floor_extrapolation(t.gpu) if t.overhead_term in ("", "per token") else ""
    if extra:
        value += f"; {extra}"
    return [Assumption(name="training per-sample floor and band", value=value, tag="estimate",
                       source=_training_source())]


@functools.cache
def _training_source() -> str:
    """The floor's and the band's source, from the preset (read once per process)."""
    preset = load_preset("training_throughput.yaml")
    step = preset["step_overhead"]
    return (f"the per-token floor (DFlash by rows) fitted on {', '.join(preset['overhead']['rows'])}: "
            f"{preset['overhead']['source']}; the per-step floor (EAGLE, packed trainers) fitted on "
            f"{', '.join(step['rows'])}: {step['source']}; the band: "
            f"90% prediction interval of the {len(preset['rows'])} published runs' log(measured / "
            "predicted) (planner/presets/training_throughput.yaml)")


def training_assumptions(context: RowContext, training: TrainingPlan | None,
                         plain: dict[str, Assumption]) -> list[Assumption]:
    """The Assumptions rows of training: the trainer's efficiency (the declared row, taken from `plain`) and the
    basis of `training`, the plan's training, the drafter's size and its recipe (planner/presets/drafter_kinds.py).
    The epochs' row is epochs_assumption (the table places the quality rows between them)."""
    s, mine = context.scenario, "yours"
    A = Assumption
    return [
        *take(plain, "training.mfu"),
        *_training_basis(training),
        A(name="drafter parameters", value=f"{context.drafter_params / 1e9:,.2f}B",
          tag=mine if s.training.drafter_params else "estimate",
          source="the draft layers at the target's width, heads and MLP width, plus the fc from the captured "
                 "layers (planner/presets/drafter_kinds.py); the Qwen3.6-27B 5-layer DFlash drafter comes to ~1.8B"),
        *_recipe(context),
    ]


def epochs_assumption(scenario: Scenario) -> Assumption:
    """The epochs' row of the Assumptions table."""
    return Assumption(name="epochs", value=f"{scenario.training.epochs:g}", tag="yours",
                      source="DFlash recipes use 6 epochs; ~500K samples for 2-3 epochs is a maintainer's rule of "
                             "thumb")
