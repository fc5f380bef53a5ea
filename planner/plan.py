"""plan(scenario) -> Plan: the one call the app, the CLI and the tests go through.

It resolves the presets and composes the phases, each a function that returns its own result:
storage (planner/storage_phase.py), extraction with the nodes it writes on, transfer, training,
costs and quality. Figures that join two phases (break-even, the sampled band, the lossless fixes)
are worked out here, where the phases meet; no phase changes another's result. It attaches
warnings to the components they concern and refuses a plan with a figure that is not finite.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from pydantic import BaseModel

from planner._version import __version__
from planner.assumptions import Assumption, AssumptionContext, assumptions
from planner.catalog.stats import StatsCatalog, get_catalog
from planner.costs import CostPlan, costs, storage_preset_id
from planner.errors import PlannerInputError
from planner.findings import Finding, finding
from planner.extraction import (TP_DEGREES, ExtractionPlan, extraction, replicas_on_nodes, sequence,
                                serving_decode_rate, tensor_parallel_needed)
from planner.scenario import Scenario
from planner.layouts import Effective, LayoutSpec, effective, layout_presets
from planner.specs import GPUSpec, ModelSpec, disk_presets, gpu_presets, model_presets, storage_price_presets
from planner.memo import ByIdentity
from planner.storage import CaptureLayout, Workload, resolve_layout, workload
from planner.storage_phase import (ComponentPlan, StoragePhase, components as component_plans, default_family_tokens,
                                   included_mix, resolved_mix, storage_phase)
from planner.drafter import NO_ROWS, drafter_params as estimated_drafter_params, drafter_shape, epoch_flops, knobs, row_sums
from planner.specs import network_efficiency
from planner.training import TrainingPlan, disaggregated, training
from planner.quality import QualityPlan, payback, quality, reference_tokens
from planner.transfer import TransferPlan, transfer
from planner.nodes import NodePlan, node_plan, writing_nodes

__all__ = ["ComponentPlan", "Figures", "Plan", "figures", "plan", "included_mix", "resolved_mix"]

class Plan(BaseModel):
    planner_version: str
    scenario: Scenario
    model: str
    layout: str
    layers: list[int]
    hidden_dtype: str
    conversations: int
    samples: float              # training rows (files); = conversations in the conversation unit
    tokens: float
    uncapped_tokens: float
    output_tokens: float
    bytes_per_token: int
    hidden_state_bytes_per_token: int
    id_mask_bytes_per_token: int = 0     # token ids, loss mask and the pipeline's other per-token fields
    file_overhead_bytes: float
    storage_bytes: float
    storage_bytes_compressed: float
    # the 95% band when components were profiled from a sample (None: every length is measured in full)
    storage_bytes_low: float | None = None
    storage_bytes_high: float | None = None
    sampled_components: list[str] = []
    # the pipeline's values in force (the scenario's, or the layout's where it leaves them unset)
    drafter: str = "dflash"
    unit: str = "conversation"
    max_seq_len: int | None = None
    overflow: str = "truncate"
    capture_batch_size: int = 1
    padding: str = "none"
    sort_by_length: bool = False
    drop_last: bool = False
    from_layout: list[str] = []
    unpadded_tokens: float = 0.0     # stored tokens had no row been padded
    files: float = 0.0
    extraction: ExtractionPlan
    nodes: NodePlan
    placement: str = "local"
    storage_per_node_bytes: float = 0.0      # on each extraction node's disk (local placement)
    gather_hours: float = 0.0                # local shards to the training nodes (planner/nodes.py)
    transfer_method: str
    transfer_hours: float
    training: TrainingPlan
    cost_usd: CostPlan
    quality: QualityPlan | None = None
    wall_days_offline: float
    wall_days_online: float
    wall_days_disaggregated: float = 0.0
    components: list[ComponentPlan]
    warnings: list[str]                  # the findings' texts
    findings: list[Finding] = []
    assumptions: list[Assumption]


def resolve_model(s: Scenario) -> ModelSpec:
    if s.model == "custom":
        if s.custom_model is None:
            raise PlannerInputError("model", "custom", "a custom model needs custom_model (hidden size, layers, heads ...)")
        return s.custom_model
    models = model_presets()
    if s.model not in models:
        raise PlannerInputError("model", s.model, f"known models: {', '.join(models)} or custom")
    return models[s.model]


def resolve_gpu(field: str, gpu_id: str, custom: GPUSpec | None) -> GPUSpec:
    if gpu_id == "custom":
        if custom is None:
            raise PlannerInputError(field, "custom", "a custom GPU needs custom_gpu (memory, bandwidth, TFLOPS)")
        return custom
    gpus = gpu_presets()
    if gpu_id not in gpus:
        raise PlannerInputError(field, gpu_id, f"known GPUs: {', '.join(gpus)} or custom")
    return gpus[gpu_id]


def _lookup(table: dict, field: str, key: str) -> dict:
    if key not in table:
        raise PlannerInputError(field, key, f"known: {', '.join(table)}")
    return table[key]



@dataclass
class _Warnings:
    """The plan's findings (planner/findings.py), each also noted on the components it concerns."""

    found: list[Finding] = field(default_factory=list)
    notes: dict[str, list[str]] = field(default_factory=dict)

    def add(self, code: str | Finding, text: str = "", ids: tuple[str, ...] = ()) -> None:
        f = code if isinstance(code, Finding) else finding(code, text, ids)
        self.found.append(f)
        for i in f.components:
            self.notes.setdefault(i, []).append(f.text)

    @property
    def texts(self) -> list[str]:
        return [f.text for f in self.found]


@dataclass(frozen=True)
class _Resolved:
    """The presets a scenario names, looked up once."""

    model: ModelSpec
    spec: LayoutSpec
    layout: CaptureLayout
    ex_gpu: GPUSpec
    tr_gpu: GPUSpec
    disk: dict
    tr_disk: dict
    store: dict


def _resolve(s: Scenario, measured=None) -> _Resolved:
    model = resolve_model(s)
    spec = layout_presets().get(s.layout)
    if spec is None:
        raise PlannerInputError("layout", s.layout, f"known layouts: {', '.join(layout_presets())}")
    layout = resolve_layout(spec, model, s.layers, s.layer_count, s.hidden_dtype)
    if measured is not None:   # a run's own figures (planner/run_calibration.py Measured): bytes and file overhead
        layout, spec = measured.apply(s, layout, spec)
    return _Resolved(model, spec, layout, resolve_gpu("extraction_gpu", s.extraction_gpu, s.custom_gpu),
                     resolve_gpu("training.gpu", s.training.gpu, s.custom_gpu), _lookup(disk_presets(), "disk", s.disk),
                     _lookup(disk_presets(), "training.disk", s.training.disk),
                     _lookup(storage_price_presets(), "costs.storage", storage_preset_id(s)))


def _effective(s: Scenario, spec: LayoutSpec) -> Effective:
    return effective(spec, unit=s.unit, max_seq_len=s.max_seq_len, capture_batch_size=s.capture_batch_size,
                     sort_by_length=s.sort_by_length)


def _stored(s: Scenario, cat: StatsCatalog | None, r: _Resolved, eff: Effective, end: int | None = None,
            same_rows: StoragePhase | None = None) -> StoragePhase:
    return storage_phase(s, cat, r.layout, r.spec, eff, r.model.hidden_size, r.model.vocab_size, end=end,
                         same_rows=same_rows)


def _writers(s: Scenario, r: _Resolved, total: Workload) -> int:
    """The extraction nodes that hold a tensor-parallel group. Tensor parallelism depends on the
    model, the GPU and the sequence's bytes alone, so it is known before the nodes are planned."""
    tp = tensor_parallel_needed(r.model.weight_bytes(s.weight_dtype), sequence(r.model, total, s.kv_dtype)[1], r.ex_gpu)
    if tp is None:       # extraction() refuses the plan, naming why
        return s.extraction_node_count
    replicas = replicas_on_nodes(s.extraction_gpus, s.gpus_per_node, tp) or 1
    return writing_nodes(s.extraction_node_count, s.gpus_per_node, tp, replicas)


def _capture(s: Scenario, r: _Resolved, st: StoragePhase, measured=None) -> tuple[NodePlan, ExtractionPlan, float]:
    """The nodes the states are written on and the extraction run that writes them (and its MFU)."""
    mfu = s.throughput.prefill_mfu or r.ex_gpu.prefill_mfu
    nodes = node_plan(s, stored_bytes=st.compressed, writers=_writers(s, r, st.total), disk=r.disk,
                      training_disk=r.tr_disk)
    ex = extraction(r.model, r.ex_gpu, s.throughput, st.total, gpus=s.extraction_gpus, weight_dtype=s.weight_dtype,
                    prefill_mfu=mfu, write_bytes=st.compressed * (2 if s.staging_double_write else 1),
                    write_bytes_per_s=nodes.capture_write_bytes_per_s, write_bound=nodes.capture_write_bound,
                    nodes=nodes.extraction_nodes, gpus_per_node=s.gpus_per_node, kv_dtype=s.kv_dtype,
                    measured_tokens_per_s=measured.tokens_per_s_per_gpu if measured is not None else None)
    return nodes, ex, mfu


class Figures:
    """A scenario's phases without the plan around them (no quality, findings or assumptions), each
    worked out when first read: what trim's inner steps compare against the budgets (a storage budget
    reads the storage phase alone), under the names the Plan gives the same figures."""

    def __init__(self, s: Scenario, r: _Resolved, st: StoragePhase, eff: Effective, measured=None):
        self.scenario, self.storage, self._r, self._eff, self._measured = s, st, r, eff, measured

    @property
    def storage_bytes_compressed(self) -> float:
        return self.storage.compressed

    @property
    def samples(self) -> float:
        return self.storage.total.rows

    @property
    def conversations(self) -> int:
        return int(self.storage.total.conversations)

    @functools.cached_property
    def _capture(self) -> tuple[NodePlan, ExtractionPlan, float]:
        return _capture(self.scenario, self._r, self.storage, self._measured)

    @property
    def nodes(self) -> NodePlan:
        return self._capture[0]

    @property
    def extraction(self) -> ExtractionPlan:
        return self._capture[1]

    @property
    def mfu(self) -> float:
        return self._capture[2]

    @functools.cached_property
    def transfer(self) -> TransferPlan:
        s = self.scenario
        egress = s.transfer.egress_usd_per_gb
        if egress is None:
            egress = self._r.store["egress_usd_per_gb"] if s.transfer.method == "object_store" else 0.0
        return transfer(self.storage.compressed, s.transfer, egress)

    @property
    def transfer_hours(self) -> float:
        return self.transfer.hours

    @functools.cached_property
    def _training(self) -> tuple[TrainingPlan, object, float]:
        return _training(self.scenario, self._r, self.storage, self._eff, self.nodes, self.extraction)

    @property
    def training(self) -> TrainingPlan:
        return self._training[0]

    @property
    def recipe(self):
        return self._training[1]

    @property
    def drafter_params(self) -> float:
        return self._training[2]

    @functools.cached_property
    def cost_usd(self) -> CostPlan:
        # the states exist from the capture pass's first write to the last training epoch; a capture
        # that rides along the decode (the fixed mode) writes from the start
        ex, trn, tr, r = self.extraction, self.training, self.transfer, self._r
        held_hours = (ex.capture_hours or ex.wall_hours) + self.nodes.gather_hours + tr.hours + trn.offline_wall_hours
        return costs(self.scenario.costs, ex, trn, tr, ex_gpu=r.ex_gpu, tr_gpu=r.tr_gpu, store=r.store,
                     stored_bytes=self.storage.compressed, timeline_days=held_hours / 24)

    @property
    def wall_days_offline(self) -> float:
        return (self.extraction.wall_hours + self.nodes.gather_hours + self.transfer.hours
                + self.training.offline_wall_hours) / 24


def figures(s: Scenario, catalog: StatsCatalog | None = None) -> Figures:
    """The phases of `s` from storage to costs: the figures of plan(s), without its quality, findings,
    assumptions and band."""
    cat = catalog or (get_catalog() if s.uniform is None else None)
    r = _resolve(s)
    eff = _effective(s, r.spec)
    return Figures(s, r, _stored(s, cat, r, eff), eff)


_ROW_SUMS = ByIdentity(4096)     # a component's training rows, for the same rows, padding and recipe


def _training(s: Scenario, r: _Resolved, st: StoragePhase, eff: Effective, nodes: NodePlan,
              ex: ExtractionPlan) -> tuple[TrainingPlan, object, float]:
    """The drafter's training on the stored rows: (its plan, the recipe, the drafter's parameters)."""
    recipe = knobs(r.spec, r.model, captured_layers=len(r.layout.layers),
                   draft_layers=s.training.drafter_layers or eff.draft_layers, ttt_steps=s.training.ttt_steps,
                   num_anchors=s.training.num_anchors, block_size=s.training.block_size)
    shape = drafter_shape(r.model)
    estimate = estimated_drafter_params(shape, recipe)
    drafter_params = s.training.drafter_params or estimate
    rows = NO_ROWS
    for w, u, rl in zip(st.works, st.unpadded, st.row_lengths):
        if u.tokens:
            rows = rows + _ROW_SUMS.get((rl,), (u.conversations, w.tokens, recipe.num_anchors, recipe.attention_window),
                                        lambda: row_sums(rl.lengths, rl.weights, rl.supervised, u.conversations,
                                                         padded_tokens=w.tokens, num_anchors=recipe.num_anchors,
                                                         window=recipe.attention_window))
    flops = epoch_flops(shape, recipe, rows, params_scale=drafter_params / estimate)
    trn = training(r.model, r.tr_gpu, s.training, st.total, flops, recipe, drafter_params=drafter_params,
                   prefill_mfu=r.tr_gpu.prefill_mfu, bytes_on_disk=st.compressed,
                   read_bytes_per_s=nodes.training_read_bytes_per_s, read_bound=nodes.training_read_bound,
                   nodes=nodes.training_nodes)
    d = s.disaggregated
    layout = r.layout
    disaggregated(trn, d, st.total, capture_gpus=d.capture_gpus or ex.gpus_used,
                  train_gpus=d.train_gpus or s.training.gpus,
                  tensor_parallel=ex.tensor_parallel, capture_tokens_per_s_per_gpu=ex.prefill_tokens_per_s_per_gpu,
                  regeneration_gpu_hours=ex.decode_hours * ex.gpus_used, train_gpu=r.tr_gpu, train_mfu=s.training.mfu,
                  stream_bytes_per_token=layout.hidden_state_bytes_per_token + layout.scale_bytes_per_token,
                  node_network_gbps=s.node_network_gbps, network_efficiency=network_efficiency(s.node_network),
                  capture_gpus_per_node=s.gpus_per_node,
                  max_row_tokens=float(eff.max_seq_len or max((float(x.lengths.max()) for x in st.row_lengths
                                                                if len(x.lengths)), default=0.0)))
    return trn, recipe, drafter_params


def plan(s: Scenario, catalog: StatsCatalog | None = None, *, band: bool = True, measured=None) -> Plan:
    """The plan of `s`. When a component was profiled from a sample, storage and extraction are worked
    out again at the low and the high end of every sampled component's 95% interval of mean tokens per
    row (all at the same end together: a conservative band) for `storage_bytes_low/high` and the
    extraction's `wall_hours_low/high`. `band=False` skips that band and the lossless fixes of a
    blocking finding (trim's and the sensitivity's many inner plans, which read neither)."""
    cat = catalog or (get_catalog() if s.uniform is None else None)
    r = _resolve(s, measured)
    eff = _effective(s, r.spec)
    st = _stored(s, cat, r, eff)
    run = Figures(s, r, st, eff, measured)
    nodes, ex, tr, cost = run.nodes, run.extraction, run.transfer, run.cost_usd
    # break-even is a figure of the costs, shown beside the training it concerns
    trn = run.training.model_copy(update={"breakeven_epochs": cost.breakeven_epochs,
                                     "breakeven_epochs_disaggregated": cost.breakeven_epochs_disaggregated})
    comps = component_plans(st)
    qual = _quality(s, cat, r.model, r.ex_gpu, ex, r.spec, comps, cost, eff)
    warn = _Warnings()
    for f in st.findings() + nodes.warnings + ex.warnings + trn.warnings + cost.warnings + qual.warnings:
        warn.add(f)
    _plan_warnings(s, cat, r.layout, st.files, st.compressed, comps, warn)
    sampled = st.sampled(eff.unit) if band else []
    ends: list[StoragePhase] = []
    if band:
        _lossless_fixes(s, cat, r, eff, st, cost, warn.found, measured)
        if sampled:   # the band: storage and extraction again at each end of the sampled intervals
            ends = [_stored(s, cat, r, eff, end) for end in (0, 1)]
            low, high = (_capture(s, r, e, measured)[1].wall_hours for e in ends)
            ex = ex.model_copy(update={"wall_hours_low": low, "wall_hours_high": high})
    for c in comps:
        c.notes = warn.notes.get(c.id, [])
    layout = r.layout
    context = AssumptionContext(scenario=s, model=r.model, layout=layout, extraction_gpu=r.ex_gpu,
                                training_gpu=r.tr_gpu, disk=r.disk, store=r.store, prefill_mfu=run.mfu,
                                drafter_params=run.drafter_params, catalog_mix=cat is not None and s.uniform is None,
                                effective=eff, recipe=run.recipe, extraction=ex, quality=qual)
    total = st.total
    plan_ = Plan(
        planner_version=__version__, scenario=s, model=r.model.id, layout=layout.id, layers=layout.layers,
        hidden_dtype=layout.hidden_dtype, conversations=int(total.conversations), samples=total.rows,
        tokens=total.tokens, uncapped_tokens=total.uncapped_tokens, output_tokens=total.output_tokens,
        bytes_per_token=layout.bytes_per_token, hidden_state_bytes_per_token=layout.hidden_state_bytes_per_token,
        id_mask_bytes_per_token=layout.token_id_bytes + layout.loss_mask_bytes,
        file_overhead_bytes=layout.file_overhead_bytes, storage_bytes=st.storage_bytes,
        storage_bytes_compressed=st.compressed, drafter=r.spec.drafter, unit=eff.unit, max_seq_len=eff.max_seq_len,
        overflow=eff.overflow, capture_batch_size=eff.capture_batch_size, padding=eff.padding,
        sort_by_length=eff.sort_by_length, drop_last=eff.drop_last, from_layout=list(eff.from_layout),
        unpadded_tokens=st.unpadded_tokens, files=st.files, extraction=ex, nodes=nodes, placement=nodes.placement,
        storage_per_node_bytes=nodes.storage_per_node_bytes, gather_hours=nodes.gather_hours,
        transfer_method=tr.method, transfer_hours=tr.hours, training=trn, cost_usd=cost, quality=qual,
        wall_days_offline=run.wall_days_offline,
        wall_days_online=(ex.decode_hours + trn.online_wall_hours) / 24,
        wall_days_disaggregated=trn.disaggregated_wall_hours / 24,
        components=comps, warnings=warn.texts, findings=warn.found,
        assumptions=(measured.assumptions() if measured is not None else []) + assumptions(context),
    )
    _refuse_non_finite(plan_)
    if ends:
        plan_.storage_bytes_low, plan_.storage_bytes_high = (e.storage_bytes for e in ends)
        plan_.sampled_components = sampled
    return plan_


def serving_workload(s: Scenario, cat: StatsCatalog | None) -> dict[str, float] | None:
    """The serving workload tau is scored on (family -> share; None: the mix's own training-token
    shares). One workload, fixed: the scenario's shares when given, else the full mix's family shares
    (the catalog's default mix, each component's rows x its measured mean tokens), which no trim and
    no dropped component changes, so dropping data never raises tau. "mix" (a version-5 scenario) and a
    uniform mix (no families) take the mix's own shares."""
    w = s.quality.workload
    if isinstance(w, dict):
        return w
    if w == "mix" or s.uniform is not None or cat is None:
        return None
    shares = default_family_tokens(cat)
    return shares if sum(shares.values()) > 0 else None


def _quality(s: Scenario, cat: StatsCatalog | None, model: ModelSpec, ex_gpu: GPUSpec, ex: ExtractionPlan,
             spec: LayoutSpec, components: list[ComponentPlan], cost: CostPlan, eff: Effective) -> QualityPlan:
    """The expected acceptance length and speedup of this mix (planner/quality.py), and the payback
    of the offline run against serving `quality.serving_tokens_per_day` on the serving GPU."""
    q = s.quality
    tokens: dict[str, float] = {}
    for c in components:
        tokens[c.family] = tokens.get(c.family, 0.0) + c.training_tokens
    qp = quality(spec.drafter, tokens, epochs=s.training.epochs, regenerated=s.regenerate,
                 workload=serving_workload(s, cat), transfer=q.domain_transfer, engine=q.eval_engine,
                 temperature=q.temperature, k=q.num_speculative_tokens, serving_batch=q.serving_batch,
                 fleet_batch=q.fleet_batch, reference=reference_tokens(spec.drafter, _reference_mean(s, cat, eff)),
                 target=model.id, points=q.points)
    if isinstance(q.workload, dict) and abs(sum(q.workload.values()) - 1) > 1e-6:
        qp.warnings.append(finding("workload-scaled", f"quality.workload: the shares sum to "
                                   f"{sum(q.workload.values()):g}; they were scaled to 1"))
    gpu = resolve_gpu("quality.serving_gpu", q.serving_gpu, s.custom_gpu) if q.serving_gpu else ex_gpu
    rate = serving_decode_rate(model, gpu, s.throughput, weight_dtype=s.weight_dtype, kv_dtype=s.kv_dtype,
                               components=components, calibration=ex.decode_calibration)
    if rate is None:
        qp.warnings.append(finding("payback", f"payback: {model.id} does not fit on {TP_DEGREES[-1]} x {gpu.id} to serve"))
        return qp
    price = gpu.default_price() if q.serving_gpu or s.costs.extraction_usd_per_gpu_hour is None \
        else s.costs.extraction_usd_per_gpu_hour
    return payback(qp, serving_tokens_per_day=q.serving_tokens_per_day, decode_tokens_per_s_per_gpu=rate,
                   usd_per_gpu_hour=price, one_off_usd=cost.total_offline, gpu=gpu.id)


def _reference_mean(s: Scenario, cat: StatsCatalog | None, eff: Effective):
    """A reference component's training tokens per conversation counted as this plan counts the mix's
    (the layout's unit, cap and overflow, the scenario's length scale; regenerated, as the reference
    runs were), so that the reference mix gets its published levels back (planner/quality.py)."""
    def mean(cid: str) -> float | None:
        comp = cat.components.get(cid) if cat is not None else None
        if comp is None:
            return None
        w, _ = workload(comp.conversation, comp.turn, 1.0, cap=eff.max_seq_len, unit=eff.unit, regenerate=True,
                        multiplier=1.0, overflow=eff.overflow, scale=s.length_scale)
        return w.conversation_tokens
    return mean


STORAGE_BLOCKERS = ("disk-capacity", "training-disk-capacity", "shared-capacity")


def _lossless_fixes(s: Scenario, cat: StatsCatalog | None, r: _Resolved, eff: Effective, st: StoragePhase,
                    cost: CostPlan, found: list[Finding], measured=None) -> None:
    """A blocking finding about where the bytes fit names the fixes that drop no row first, each with
    its effect on the real plan: no batch padding (a capture batch of 1, or length-sorted batches),
    then the nodes that spread the bytes; the finding's own fix (trim, fp8, fewer layers) follows.
    Each fix's figures are the phases run again on the changed scenario (storage to costs; the
    tables' figures, not a run's measured ones)."""
    blockers = [f for f in found if f.code in STORAGE_BLOCKERS]
    if not blockers:
        return
    stored = st.compressed
    tried: list[str] = []
    if eff.padding == "batch":
        options = [("a capture batch of 1", {"capture_batch_size": 1})]
        if not eff.sort_by_length:
            options.append(("length-sorted capture batches", {"sort_by_length": True}))
        base = r if measured is None else _resolve(s)
        for label, change in options:
            changed = s.model_copy(update=change)
            try:
                e = _effective(changed, base.spec)
                # the capture batches change, not the rows: st's rows and lengths are taken as they are
                q = Figures(changed, base, _stored(changed, cat, base, e, same_rows=st), e)
                q_stored, q_usd = q.storage_bytes_compressed, q.cost_usd.total_offline
            except PlannerInputError:       # a figure that would not be finite: no fix to offer
                continue
            if not (math.isfinite(q_stored) and math.isfinite(q_usd)
                    and _finite(q.extraction, q.nodes, q.training, q.cost_usd)):
                continue
            tried.append(f"{label}: {q_stored / 1e12:,.1f} TB (from {stored / 1e12:,.1f}), "
                         f"${q_usd:,.0f} offline (from ${cost.total_offline:,.0f}), no row dropped")
    for f in blockers:
        extra = list(tried)
        cap = {"disk-capacity": s.disk_capacity_tb, "training-disk-capacity": s.training.disk_capacity_tb}.get(f.code)
        if cap:
            need = math.ceil(stored / (cap * 1e12))
            per = s.gpus_per_node if f.code == "disk-capacity" else s.training.gpus_per_node
            where = "extraction" if f.code == "disk-capacity" else "training"
            extra.append(f"{need} {where} nodes ({need * per} GPUs): {stored / need / 1e12:,.2f} TB on each "
                         f"{cap:g} TB disk")
        if extra:
            f.fix = "lossless first: " + "; ".join(extra) + (f". Otherwise: {f.fix}" if f.fix else "")


def _plan_warnings(s: Scenario, cat: StatsCatalog | None, layout: CaptureLayout, files: float, compressed: float,
                   components: list[ComponentPlan], warn: _Warnings) -> None:
    """Warnings on the whole plan (disk, files, compression, fixed rate) and on pairs of components."""
    if files > 1_000_000 and layout.spec.grouping == "per_row":
        warn.add("many-files", f"{files:,.0f} files, one per training row: plan for the inode count and "
                 f"per-file overhead of millions of small files")
    if s.compression > 1.2 and layout.hidden_dtype != "fp8":
        warn.add("compression", f"compression {s.compression:g}x is optimistic: bf16 activations compress about 1.0-1.2x")
    if s.throughput.mode == "fixed" and s.throughput.batching <= 8:
        warn.add("fixed-rate", f"fixed throughput: {s.throughput.batching:g}x batching understates batched serving "
                 f"engines by about an order of magnitude (use the roofline mode)")
    if cat is not None:
        for ids, text in overlap_warnings(cat, {c.id: c.rows for c in components}):
            warn.add("overlap", text, ids)
        for ids, text in licence_warnings(cat, [c.id for c in components if c.rows]):
            warn.add("licence", text, ids)


def overlap_warnings(cat: StatsCatalog, rows: dict[str, int]) -> list[tuple[tuple[str, ...], str]]:
    """Expected duplicate rows under independent uniform subsampling: n_A n_B |A and B| / (|A| |B|)."""
    out = []
    for o in cat.overlaps:
        na, nb = rows.get(o.a, 0), rows.get(o.b, 0)
        if na and nb:
            A, B = cat.components[o.a].rows_available, cat.components[o.b].rows_available
            dup = na * nb * o.shared_rows / (A * B)
            out.append(((o.a, o.b), f"{o.a} and {o.b} overlap ({o.shared_rows:,} shared rows, {o.tag}): "
                                    f"expect ~{dup:,.0f} duplicate rows in this mix"))
    return out


def licence_warnings(cat: StatsCatalog, ids: list[str]) -> list[tuple[tuple[str, ...], str]]:
    return [((i,), f"{i}: {cat.components[i].licence_note}") for i in ids
            if i in cat.components and cat.components[i].licence_note]


# The inputs a figure that overflowed can come from, per phase: rates multiply, so the one nearest
# zero is named. Bounds on the Scenario keep every value inside them finite; this is the last line.
def _suspects(s: Scenario, path: str) -> list[tuple[str, float]]:
    phase = path.split(".")[0]
    if phase in ("extraction", "wall_days_offline", "wall_days_online") or path in ("cost_usd.extraction",
                                                                                   "cost_usd.regeneration"):
        t = s.throughput
        if t.mode == "fixed":
            return [("throughput.tokens_per_s", t.tokens_per_s), ("throughput.batching", t.batching)]
        return [("throughput.prefill_mfu", t.prefill_mfu or 1.0),
                ("throughput.decode_bandwidth_efficiency", t.decode_bandwidth_efficiency),
                ("throughput.tensor_parallel_efficiency", t.tensor_parallel_efficiency)]
    if phase == "transfer_hours" or path == "cost_usd.transfer":
        return [("transfer.link_gbps", s.transfer.link_gbps), ("transfer.efficiency", s.transfer.efficiency)]
    if phase in ("training", "cost_usd"):
        return [("training.mfu", s.training.mfu), ("training.epochs", s.training.epochs)]
    return [("uniform.tokens", s.uniform.tokens)] if s.uniform is not None else [("mix", len(s.mix or ()))]


def _refuse_non_finite(p: Plan) -> None:
    """Every float of the plan, its phases and its components (not the scenario) must be finite."""
    parts: list[tuple[str, BaseModel]] = [("", p)]
    parts += [(f"{name}.", v) for name, v in p.__dict__.items() if isinstance(v, BaseModel) and name != "scenario"]
    parts += [(f"components[{i}].", c) for i, c in enumerate(p.components)]
    for prefix, obj in parts:
        floats = [(name, v) for name, v in obj.__dict__.items() if v.__class__ is float]
        if all(map(math.isfinite, (v for _, v in floats))):
            continue
        path, value = next((prefix + name, v) for name, v in floats if not math.isfinite(v))
        field_, given = min(_suspects(p.scenario, path), key=lambda fv: fv[1])
        raise PlannerInputError(field_, given, f"it makes {path} {value}; every figure must be finite "
                                f"(give a value inside the input's bounds)")


def _finite(*models: BaseModel) -> bool:
    return all(math.isfinite(v) for m in models for v in m.__dict__.values() if v.__class__ is float)


def is_finite_plan(p: Plan) -> bool:
    nums = [p.storage_bytes, p.tokens, p.output_tokens, p.extraction.gpu_hours, p.transfer_hours,
            p.training.offline_gpu_hours, p.training.online_gpu_hours, p.cost_usd.total_offline, p.cost_usd.total_online]
    return all(math.isfinite(x) and x >= 0 for x in nums)
