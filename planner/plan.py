"""plan(scenario) -> Plan: the one call the app, the CLI and the tests go through.

It resolves the presets, runs the phases (storage, extraction, transfer, training, costs), each of
which returns its own model, attaches warnings to the components they concern and refuses a plan
with a figure that is not finite.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from pydantic import BaseModel

from planner._version import __version__
from planner.assumptions import Assumption, AssumptionContext, assumptions
from planner.catalog.stats import StatsCatalog, get_catalog
from planner.costs import CostPlan, costs, storage_preset_id
from planner.distributions import Atoms, fan_out, point_mass, shortest
from planner.errors import PlannerInputError
from planner.findings import Finding, finding
from planner.extraction import TP_DEGREES, ExtractionPlan, extraction, serving_decode_rate
from planner.scenario import MixItem, Scenario
from planner.layouts import Effective, LayoutSpec, effective, files_and_overhead, layout_presets
from planner.padding import padded
from planner.specs import GPUSpec, ModelSpec, disk_presets, gpu_presets, model_presets, storage_price_presets
from planner.storage import NO_WORK, CaptureLayout, RowLengths, Workload, resolve_layout, workload
from planner.drafter import NO_ROWS, drafter_params as estimated_drafter_params, drafter_shape, epoch_flops, knobs, row_sums
from planner.specs import network_efficiency
from planner.training import TrainingPlan, disaggregated, training
from planner.quality import QualityPlan, payback, quality, reference_tokens
from planner.transfer import transfer
from planner.nodes import NodePlan, node_plan, writing_nodes

class ComponentPlan(BaseModel):
    id: str
    name: str
    family: str
    origin: str
    rows: int                   # conversations selected
    training_rows: float        # rows after fan-out (files written)
    tokens: float               # stored tokens
    training_tokens: float = 0.0   # each conversation's tokens once, after the cap (the quality model's data)
    truncated_share: float      # share of tokens cut by the sequence cap
    output_tokens: float
    storage_bytes: float
    share_of_rows: float
    share_of_bytes: float
    mean_tokens: float
    tokens_tag: str
    notes: list[str] = []       # the warnings that concern this component (overlap, licence, cap, rows)



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


def resolved_mix(s: Scenario, cat: StatsCatalog) -> list[MixItem]:
    """The scenario's components: its own list, or the catalog's default mix when it gives none
    (unchecked ones included)."""
    return list(s.mix) if s.mix is not None else [MixItem(id=i, rows=r) for i, r in cat.default_mix()]


def included_mix(s: Scenario, cat: StatsCatalog) -> list[MixItem]:
    """The components the plan counts: the checked ones."""
    return [m for m in resolved_mix(s, cat) if m.include]


@dataclass(frozen=True)
class MixRow:
    """One component of the mix as the plan needs it: identity, rows and length distributions."""

    id: str
    name: str
    family: str
    origin: str
    tokens_tag: str
    rows: int
    conv: Atoms        # per-conversation lengths
    turn: Atoms        # per-turn fan-out of the same
    # a sampled profile: (low, high) of its mean tokens per row over the mean, per unit (the 95% interval)
    band: dict[str, tuple[float, float]] | None = None


def _mix_rows(s: Scenario, cat: StatsCatalog | None) -> list[MixRow]:
    if s.uniform is not None:
        u = s.uniform
        conv = point_mass(u.tokens, u.response_tokens, u.turns)
        return [MixRow("uniform", f"{u.samples:,} x {u.tokens:g} tokens", "uniform", "yours", "yours", u.samples,
                       conv, fan_out(conv))]
    out = []
    for i, item in enumerate(resolved_mix(s, cat)):
        if not item.include:
            continue
        comp = cat.components.get(item.id)
        if comp is None:
            raise PlannerInputError(f"mix[{i}].id", item.id, f"known components: {', '.join(cat.components)}")
        conv, turn = comp.conversation, comp.turn
        if item.selection == "shortest" and item.rows:
            # the n shortest rows of all that exist: a truncated distribution, fanned out again
            conv = shortest(conv, min(1.0, item.rows / max(comp.rows_available, 1)))
            turn = fan_out(conv)
        out.append(MixRow(item.id, comp.name, comp.family, comp.origin, comp.value_tag("mean_tokens"), item.rows,
                          conv, turn, _band(comp.sampled, comp.conversation, comp.turn)))
    return out


def _band(sampled: dict | None, conv: Atoms, turn: Atoms) -> dict[str, tuple[float, float]] | None:
    """A sampled component's 95% intervals of mean tokens per conversation and per turn row, as
    factors on its measured means (what the plan scales its lengths by for the low and high ends)."""
    if not sampled:
        return None
    out = {}
    for unit, atoms, key in (("conversation", conv, "mean_tokens_ci"), ("turn", turn, "mean_turn_tokens_ci")):
        ci, rows = sampled.get(key), float(atoms.rows.sum())
        mean = float((atoms.rows * atoms.tokens).sum()) / rows if rows else 0.0
        if ci and mean > 0:
            out[unit] = (min(1.0, ci[0] / mean), max(1.0, ci[1] / mean))
    return out or None


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


def plan(s: Scenario, catalog: StatsCatalog | None = None, *, band: bool = True, _end: int | None = None,
         measured=None) -> Plan:
    """The plan of `s`. When a component was profiled from a sample, the plan is made again at the
    low and the high end of every sampled component's 95% interval of mean tokens per row (all at
    the same end together: a conservative band) for `storage_bytes_low/high` and the extraction's
    `sampled_wall_hours_low/high` (its `wall_hours_low/high` widened to them); `_end` (0 low, 1 high) is that inner call. `band=False` skips it (trim's and
    the sensitivity's many inner plans, whose band nobody reads)."""
    cat = catalog or (get_catalog() if s.uniform is None else None)
    model = resolve_model(s)
    layout_spec = layout_presets().get(s.layout)
    if layout_spec is None:
        raise PlannerInputError("layout", s.layout, f"known layouts: {', '.join(layout_presets())}")
    layout = resolve_layout(layout_spec, model, s.layers, s.layer_count, s.hidden_dtype)
    if measured is not None:   # a run's own figures (planner/run_calibration.py Measured): bytes and file overhead
        layout, layout_spec = measured.apply(s, layout, layout_spec)
    ex_gpu = resolve_gpu("extraction_gpu", s.extraction_gpu, s.custom_gpu)
    tr_gpu = resolve_gpu("training.gpu", s.training.gpu, s.custom_gpu)
    disk = _lookup(disk_presets(), "disk", s.disk)
    tr_disk = _lookup(disk_presets(), "training.disk", s.training.disk)
    store = _lookup(storage_price_presets(), "costs.storage", storage_preset_id(s))
    warn = _Warnings()

    # -- storage, per component, with the pipeline's unit, cap and capture padding
    eff = effective(layout_spec, unit=s.unit, max_seq_len=s.max_seq_len, capture_batch_size=s.capture_batch_size,
                    sort_by_length=s.sort_by_length)
    mix = _mix_rows(s, cat)
    pairs = [workload(m.conv, m.turn, m.rows, cap=eff.max_seq_len, unit=eff.unit, regenerate=s.regenerate,
                      multiplier=s.response_multiplier, overflow=eff.overflow,
                      scale=s.length_scale * (m.band[eff.unit][_end] if _end is not None and m.band
                                              and eff.unit in m.band else 1.0)) for m in mix]
    unpadded = [w for w, _ in pairs]
    row_lengths = [r for _, r in pairs]
    works = _padded(unpadded, row_lengths, eff)
    total = sum(works, NO_WORK)
    data = sum(w.tokens for w in works) * layout.bytes_per_token
    files, overhead = files_and_overhead(layout_spec, total.rows, data, model.hidden_size, model.vocab_size)
    components = _components(eff, cat, mix, works, unpadded, layout, overhead, warn)
    storage_bytes = sum(c.storage_bytes for c in components)
    compressed = storage_bytes / s.compression
    unpadded_tokens = sum(u.tokens for u in unpadded)
    _padding_warning(layout_spec, eff, total.tokens, unpadded_tokens, total.rows, sum(u.rows for u in unpadded),
                     warn)

    # -- the phases
    mfu = s.throughput.prefill_mfu or ex_gpu.prefill_mfu
    # the capture write rate depends on the nodes that write, which tensor parallelism may leave
    # idle: first with every node, then (if that changes the writers) with the nodes that hold a group
    write_bytes = compressed * (2 if s.staging_double_write else 1)
    writers = s.extraction_node_count
    for _ in range(2):
        nodes = node_plan(s, stored_bytes=compressed, writers=writers, disk=disk, training_disk=tr_disk)
        ex = extraction(model, ex_gpu, s.throughput, total, gpus=s.extraction_gpus, weight_dtype=s.weight_dtype,
                        prefill_mfu=mfu, write_bytes=write_bytes, write_bytes_per_s=nodes.capture_write_bytes_per_s,
                        write_bound=nodes.capture_write_bound, nodes=nodes.extraction_nodes,
                        gpus_per_node=s.gpus_per_node, kv_dtype=s.kv_dtype,
                        measured_tokens_per_s=measured.tokens_per_s_per_gpu if measured is not None else None)
        used = writing_nodes(s.extraction_node_count, s.gpus_per_node, ex.tensor_parallel, ex.replicas)
        if used == writers:
            break
        writers = used
    egress = s.transfer.egress_usd_per_gb
    if egress is None:
        egress = store["egress_usd_per_gb"] if s.transfer.method == "object_store" else 0.0
    tr = transfer(compressed, s.transfer, egress)
    drafter_layers = s.training.drafter_layers or eff.draft_layers
    recipe = knobs(layout_spec, model, captured_layers=len(layout.layers), draft_layers=drafter_layers,
                   ttt_steps=s.training.ttt_steps, num_anchors=s.training.num_anchors,
                   block_size=s.training.block_size)
    shape = drafter_shape(model)
    estimate = estimated_drafter_params(shape, recipe)
    drafter_params = s.training.drafter_params or estimate
    rows = NO_ROWS
    for w, u, r in zip(works, unpadded, row_lengths):
        if u.tokens:
            rows = rows + row_sums(r.lengths, r.weights, r.supervised, u.conversations, padded_tokens=w.tokens,
                                   num_anchors=recipe.num_anchors, window=recipe.attention_window)
    flops = epoch_flops(shape, recipe, rows, params_scale=drafter_params / estimate)
    trn = training(model, tr_gpu, s.training, total, flops, recipe, drafter_params=drafter_params,
                   prefill_mfu=tr_gpu.prefill_mfu, bytes_on_disk=compressed,
                   read_bytes_per_s=nodes.training_read_bytes_per_s, read_bound=nodes.training_read_bound,
                   nodes=nodes.training_nodes)
    d = s.disaggregated
    disaggregated(trn, d, total, capture_gpus=d.capture_gpus or ex.gpus_used, train_gpus=d.train_gpus or s.training.gpus,
                  tensor_parallel=ex.tensor_parallel, capture_tokens_per_s_per_gpu=ex.prefill_tokens_per_s_per_gpu,
                  regeneration_gpu_hours=ex.decode_hours * ex.gpus_used, train_gpu=tr_gpu, train_mfu=s.training.mfu,
                  stream_bytes_per_token=layout.hidden_state_bytes_per_token + layout.scale_bytes_per_token,
                  node_network_gbps=s.node_network_gbps, network_efficiency=network_efficiency(s.node_network),
                  capture_gpus_per_node=s.gpus_per_node,
                  max_row_tokens=float(eff.max_seq_len or max((float(r.lengths.max()) for r in row_lengths
                                                                if len(r.lengths)), default=0.0)))
    # the states exist from the capture pass's first write to the last training epoch; a capture that
    # rides along the decode (the fixed mode) writes from the start
    held_hours = (ex.capture_hours or ex.wall_hours) + nodes.gather_hours + tr.hours + trn.offline_wall_hours
    cost = costs(s.costs, ex, trn, tr, ex_gpu=ex_gpu, tr_gpu=tr_gpu, store=store, stored_bytes=compressed,
                 timeline_days=held_hours / 24)
    trn.breakeven_epochs = cost.breakeven_epochs
    trn.breakeven_epochs_disaggregated = cost.breakeven_epochs_disaggregated
    qual = _quality(s, cat, model, ex_gpu, ex, layout_spec, components, cost, eff)
    for f in nodes.warnings + ex.warnings + trn.warnings + cost.warnings + qual.warnings:
        warn.add(f)

    _plan_warnings(s, cat, layout, files, compressed, components, warn)
    if band and _end is None:
        _lossless_fixes(s, cat, eff, compressed, cost, nodes, warn.found)
    for c in components:
        c.notes = warn.notes.get(c.id, [])

    context = AssumptionContext(scenario=s, model=model, layout=layout, extraction_gpu=ex_gpu, training_gpu=tr_gpu,
                                disk=disk, store=store, prefill_mfu=mfu, drafter_params=drafter_params,
                                catalog_mix=cat is not None and s.uniform is None, effective=eff, recipe=recipe, extraction=ex,
                                quality=qual)
    plan_ = Plan(
        planner_version=__version__, scenario=s, model=model.id, layout=layout.id, layers=layout.layers,
        hidden_dtype=layout.hidden_dtype, conversations=int(total.conversations), samples=total.rows,
        tokens=total.tokens, uncapped_tokens=total.uncapped_tokens, output_tokens=total.output_tokens,
        bytes_per_token=layout.bytes_per_token, hidden_state_bytes_per_token=layout.hidden_state_bytes_per_token,
        id_mask_bytes_per_token=layout.token_id_bytes + layout.loss_mask_bytes, file_overhead_bytes=layout.file_overhead_bytes, storage_bytes=storage_bytes,
        storage_bytes_compressed=compressed, drafter=layout_spec.drafter, unit=eff.unit, max_seq_len=eff.max_seq_len,
        overflow=eff.overflow, capture_batch_size=eff.capture_batch_size, padding=eff.padding,
        sort_by_length=eff.sort_by_length, drop_last=eff.drop_last, from_layout=list(eff.from_layout),
        unpadded_tokens=unpadded_tokens, files=files, extraction=ex, nodes=nodes, placement=nodes.placement,
        storage_per_node_bytes=nodes.storage_per_node_bytes, gather_hours=nodes.gather_hours,
        transfer_method=tr.method, transfer_hours=tr.hours, training=trn, cost_usd=cost, quality=qual,
        wall_days_offline=(ex.wall_hours + nodes.gather_hours + tr.hours + trn.offline_wall_hours) / 24,
        wall_days_online=(ex.decode_hours + trn.online_wall_hours) / 24,
        wall_days_disaggregated=trn.disaggregated_wall_hours / 24,
        components=components, warnings=warn.texts, findings=warn.found, assumptions=assumptions(context),
    )
    if measured is not None:
        plan_.assumptions = measured.assumptions() + plan_.assumptions
    _refuse_non_finite(plan_)
    if band and _end is None and any(m.band and m.rows and eff.unit in m.band for m in mix):
        low, high = plan(s, cat, _end=0, measured=measured), plan(s, cat, _end=1, measured=measured)
        plan_.storage_bytes_low, plan_.storage_bytes_high = low.storage_bytes, high.storage_bytes
        ex.sampled_wall_hours_low, ex.sampled_wall_hours_high = low.extraction.wall_hours, high.extraction.wall_hours
        # the band to bet on: the low end's calibration band low, the high end's high (issue 22)
        ex.wall_hours_low = min(low.extraction.wall_hours_low or math.inf, low.extraction.wall_hours)
        ex.wall_hours_high = max(high.extraction.wall_hours_high or 0.0, high.extraction.wall_hours)
        plan_.sampled_components = [m.id for m in mix if m.band and m.rows and eff.unit in m.band]
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
    shares: dict[str, float] = {}
    for cid, rows in cat.default_mix():
        comp = cat.components[cid]
        shares[comp.family] = shares.get(comp.family, 0.0) + rows * comp.conversation.mean_tokens()
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


def _components(eff: Effective, cat: StatsCatalog | None, mix: list[MixRow], works: list[Workload],
                unpadded: list[Workload], layout: CaptureLayout, overhead: float,
                warn: _Warnings) -> list[ComponentPlan]:
    """Storage per component (its tokens x bytes per token, and its rows' share of the files'
    overhead), with its shares and the warnings about its rows and the cap."""
    rows = sum(w.rows for w in works)
    sizes = [w.tokens * layout.bytes_per_token + (overhead * w.rows / rows if rows else 0.0) for w in works]
    storage_bytes = sum(sizes)
    tot_rows = sum(m.rows for m in mix) or 1
    out = []
    for m, w, u, nbytes in zip(mix, works, unpadded, sizes):
        truncated = 1 - u.tokens / u.uncapped_tokens if u.uncapped_tokens else 0.0
        out.append(ComponentPlan(
            id=m.id, name=m.name, family=m.family, origin=m.origin, rows=m.rows, training_rows=w.rows,
            tokens=w.tokens, training_tokens=w.conversation_tokens, truncated_share=max(0.0, truncated),
            output_tokens=w.output_tokens,
            storage_bytes=nbytes, share_of_rows=m.rows / tot_rows,
            share_of_bytes=nbytes / storage_bytes if storage_bytes else 0.0,
            mean_tokens=w.tokens / w.rows if w.rows else 0.0, tokens_tag=m.tokens_tag))
        if cat is not None and m.id in cat.components and m.rows > cat.components[m.id].rows_available:
            warn.add("rows-over-available", f"{m.id}: {m.rows:,} rows selected but only "
                     f"{cat.components[m.id].rows_available:,} exist", (m.id,))
        if truncated > 0.2 and m.rows:
            verb = "drops rows holding" if eff.overflow == "skip" else "cuts"
            warn.add("cap-truncates", f"{m.id}: the {eff.max_seq_len:,}-token cap {verb} {truncated:.0%} of its tokens",
                     (m.id,))
    return out


STORAGE_BLOCKERS = ("disk-capacity", "training-disk-capacity", "shared-capacity")


def _lossless_fixes(s: Scenario, cat: StatsCatalog | None, eff: Effective, stored: float, cost: CostPlan,
                    nodes: NodePlan, found: list[Finding]) -> None:
    """A blocking finding about where the bytes fit names the fixes that drop no row first, each with
    its effect on the real plan: no batch padding (a capture batch of 1, or length-sorted batches),
    then the nodes that spread the bytes; the finding's own fix (trim, fp8, fewer layers) follows."""
    blockers = [f for f in found if f.code in STORAGE_BLOCKERS]
    if not blockers:
        return
    tried: list[str] = []
    if eff.padding == "batch":
        options = [("a capture batch of 1", {"capture_batch_size": 1})]
        if not eff.sort_by_length:
            options.append(("length-sorted capture batches", {"sort_by_length": True}))
        for label, change in options:
            try:
                q = plan(s.with_changes(**change), cat, band=False)
            except PlannerInputError:       # a figure that would not be finite: no fix to offer
                continue
            tried.append(f"{label}: {q.storage_bytes_compressed / 1e12:,.1f} TB (from {stored / 1e12:,.1f}), "
                         f"${q.cost_usd.total_offline:,.0f} offline (from ${cost.total_offline:,.0f}), no row dropped")
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


def _padded(works: list[Workload], lengths: list[RowLengths], eff: Effective) -> list[Workload]:
    """Each component's rows as captured: padded to the batch's longest row, or to the cap;
    drop_last leaves out the last partial batch. A batch holds rows of one component: SpecForge reads
    the file in order (DistributedSampler(shuffle=False), specforge/data/utils.py:199-243) and
    materialize writes one component after another. Padded tokens are stored and run through prefill."""
    if eff.padding == "none" or not works:
        return works
    if eff.padding == "max_length":
        if eff.max_seq_len is None:
            return works
        cap = float(eff.max_seq_len)
        return [Workload(w.conversations, w.rows, w.rows * cap, w.uncapped_tokens, w.output_tokens,
                         w.rows * cap * cap, w.decode_ctx_sum, w.conversation_tokens) for w in works]
    n = eff.capture_batch_size
    all_rows = sum(w.rows for w in works)
    kept = math.floor(all_rows / n) * n / all_rows if eff.drop_last and all_rows else 1.0
    out = []
    for r, w in zip(lengths, works):
        if not w.rows or not r.weights.sum():
            out.append(w)
            continue
        p = padded(r.lengths, r.weights, w.rows, n, sort_by_length=eff.sort_by_length, drop_last=False)
        rows = w.rows * kept
        out.append(Workload(w.conversations, rows, rows * p.tokens_per_row, w.uncapped_tokens, w.output_tokens,
                            rows * p.tokens_sq_per_row, w.decode_ctx_sum, w.conversation_tokens * kept))
    return out


def _padding_warning(spec: LayoutSpec, eff: Effective, tokens: float, unpadded_tokens: float, rows: float,
                     rows_before: float, warn: _Warnings) -> None:
    if eff.padding != "none" and unpadded_tokens and tokens > 1.05 * unpadded_tokens:
        why = (f"batches of {eff.capture_batch_size} padded to their longest row" if eff.padding == "batch"
               else f"every row padded to {eff.max_seq_len:,} tokens")
        warn.add("padding", f"{spec.name}: {why} store {tokens / unpadded_tokens:.2f}x the tokens of the rows themselves"
                 + (" (a capture batch of 1, or length-sorted batches, avoid it)" if eff.padding == "batch" else ""))
    dropped = rows_before - rows
    if dropped >= 0.5:
        warn.add("drop-last", f"{spec.name}: drop_last leaves out the last partial capture batch: {dropped:,.0f} of "
                 f"{rows_before:,.0f} rows are never captured")


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


def is_finite_plan(p: Plan) -> bool:
    nums = [p.storage_bytes, p.tokens, p.output_tokens, p.extraction.gpu_hours, p.transfer_hours,
            p.training.offline_gpu_hours, p.training.online_gpu_hours, p.cost_usd.total_offline, p.cost_usd.total_online]
    return all(math.isfinite(x) and x >= 0 for x in nums)
