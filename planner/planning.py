"""plan(scenario) -> Plan: the one call the app, the CLI and the tests go through.

It composes the phases (planner/phases/compose.py: presets, storage in planner/phases/mix_storage.py, capture on
the nodes, transfer, training, costs) with quality, findings and assumptions. Figures that join two
phases (break-even, the sampled band, the lossless fixes) are worked out here, where the phases meet;
no phase changes another's result. It attaches warnings to the components they concern and refuses a
plan with a figure that is not finite (planner/finite.py).

The phases keep nothing between calls. plan() holds the one cache: a plan is kept by the scenario's
canonical JSON (sorted keys), the catalog's version (planner/catalog/stats.py StatsCatalog.version),
the registries' version (planner/variants.py) and plan()'s other arguments, and returned frozen.
"""
from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Self, TypedDict

from pydantic import BaseModel, ConfigDict, PrivateAttr

from planner._version import __version__
from planner.catalog.stats import StatsCatalog, get_catalog
from planner.decisions.unblock import STORAGE_BLOCKERS, fixes_text, lossy_text, storage_fixes
from planner.findings import Finding, finding
from planner.finite import is_finite_plan, refuse_non_finite
from planner.phases.assumptions import Assumption, AssumptionContext, assumptions
from planner.phases.compose import Figures, Resolved, capture, figures, in_force, resolve, resolve_gpu, stored
from planner.phases.costs import CostPlan
from planner.phases.extraction import TP_DEGREES, ExtractionPlan, serving_decode_rate
from planner.phases.mix_storage import ComponentPlan, StoragePhase, default_family_tokens, included_mix, resolved_mix
from planner.phases.mix_storage import components as component_plans
from planner.phases.nodes import NodePlan
from planner.phases.quality import QualityPlan, payback, quality, reference_tokens
from planner.phases.reuse import Reuse, reused
from planner.phases.stored_bytes import CaptureLayout, workload
from planner.phases.training import TrainingPlan
from planner.presets.layouts import Effective, LayoutSpec
from planner.presets.specs import GPUSpec, ModelSpec
from planner.scenario import Scenario
from planner.variants import registries_version

__all__ = ["ComponentPlan", "Figures", "Plan", "counted_reference_tokens", "figures", "included_mix", "is_finite_plan",
           "plan", "plan_cache_clear", "resolved_mix"]


class Plan(BaseModel):
    """A scenario's plan. Frozen: plan() keeps it and hands the same object to every caller of the same
    scenario, so no caller can change a field under another (a changed copy: `model_copy(update=...)`)."""

    model_config = ConfigDict(frozen=True)
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
    # the storage band: every component's lengths at the low and the high end of its band (a sampled
    # profile's 95% interval, the catalog's spread widened by its tag: storage_phase.length_band); equal
    # to storage_bytes where every length is exact. None only in a trim's inner plans (band=False)
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
    rows_before_drop: float = 0.0       # the rows selected, before drop_last leaves out the last partial batch
    from_layout: list[str] = []
    unpadded_tokens: float = 0.0     # stored tokens had no row been padded
    files: float = 0.0
    extraction: ExtractionPlan
    nodes: NodePlan
    placement: str = "local"
    storage_per_node_bytes: float = 0.0      # on each extraction node's disk (local placement)
    gather_hours: float = 0.0                # local shards to the training nodes (planner/phases/nodes.py)
    transfer_method: str
    transfer_hours: float
    training: TrainingPlan
    cost_usd: CostPlan
    quality: QualityPlan                     # plan() sets it always (_quality)
    wall_days_offline: float
    wall_days_online: float
    wall_days_disaggregated: float = 0.0
    components: list[ComponentPlan]
    warnings: list[str]                  # the findings' texts
    findings: list[Finding] = []
    assumptions: list[Assumption]
    # figures worked out from this plan when first asked (the verdict's fixes and levers,
    # planner/decisions/unblock.py), kept on the plan object: they live and die with it, no second cache
    _worked_out: dict = PrivateAttr(default_factory=dict)

    def own_figures(self) -> Figures | None:
        """The phases' figures this plan was worked out from (its storage phase, capture, training, transfer
        and costs, a calibration's measured figures in them), kept on the plan object by planned(); None for a
        plan made otherwise. The verdict's break-evens and the fixes start from them, so they move what the
        plan shows (`estimate --calibration`'s verdict once probed uncalibrated figures against calibrated
        totals)."""
        figures = self._worked_out.get(("figures",))
        # a copy with other fields (model_copy(update=...)) is another plan: it keeps nothing (model_copy below),
        # and figures of another scenario are never this plan's
        return figures if figures is not None and figures.scenario is self.scenario else None

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy that keeps nothing worked out from this plan (pydantic would share the dict: the copy's fixes
        and figures would be the original's)."""
        out = super().model_copy(update=update, deep=deep)
        object.__setattr__(out, "__pydantic_private__", {**(out.__pydantic_private__ or {}), "_worked_out": {}})
        return out

    def worked_out(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """compute(), once per plan object and `key` (its objects held with the result)."""
        hit = self._worked_out.get(key)
        if hit is None:
            hit = self._worked_out[key] = compute()
        return hit


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


PLAN_CACHE_SIZE = 256      # plans kept (a page's scenarios, a verdict's re-plans, a trim's answers)
_PLANS: OrderedDict[tuple, Plan] = OrderedDict()
_PLANS_LOCK = threading.Lock()


def plan_key(scenario: Scenario, cat: StatsCatalog | None, band: bool = True, measured=None) -> tuple:
    """What a plan is kept by: everything plan() reads. The scenario's canonical JSON (every field, sorted
    keys: a new input is in it with nothing written here), the catalog's version, the registries' version
    (a kind, rule or format registered or removed, tests' `temporarily` included) and plan()'s other
    arguments (`measured` is a frozen dataclass: its repr holds every field)."""
    return (json.dumps(scenario.model_dump(mode="json"), sort_keys=True), None if cat is None else cat.version, band,
            None if measured is None else repr(measured), registries_version())


def plan_cache_clear() -> None:
    """Forget every kept plan (the next plan() of any scenario is worked out cold)."""
    with _PLANS_LOCK:
        _PLANS.clear()


def plan(scenario: Scenario, catalog: StatsCatalog | None = None, *, band: bool = True, measured=None) -> Plan:
    """The plan of `scenario` (see planned()), kept by plan_key(): the same scenario, catalog and arguments
    get the same frozen Plan back without planning again."""
    cat = catalog or (get_catalog() if scenario.uniform is None else None)
    key = plan_key(scenario, cat, band, measured)
    with _PLANS_LOCK:
        hit = _PLANS.get(key)
        if hit is not None:
            _PLANS.move_to_end(key)
            return hit
    # the plan holds a copy of the scenario: the caller's own may be changed in place afterwards
    p = planned(scenario.model_copy(deep=True), cat, band=band, measured=measured)
    with _PLANS_LOCK:
        _PLANS[key] = p
        while len(_PLANS) > PLAN_CACHE_SIZE:
            _PLANS.popitem(last=False)
    return p


def planned(scenario: Scenario, catalog: StatsCatalog | None = None, *, band: bool = True, measured=None) -> Plan:
    """The plan of `scenario`, worked out (nothing kept: plan() keeps it). When a component was profiled from a
    sample, storage and extraction are worked out again at the low and the high end of every sampled component's
    95% interval of mean tokens per row (all at the same end together: a conservative band) for the extraction's
    `sampled_wall_hours_low/high` (its `wall_hours_low/high` widened to them); `storage_bytes_low/high`: the
    components' length bands at their ends. `band=False` skips both bands and the lossless fixes of a blocking
    finding (trim's and the sensitivity's many inner plans, which read neither). What the band ends and the fixes
    share with the plan (each component's figures per conversation, its padding and training rows, the reference
    run's tokens) is worked out once for this call: its own Reuse (planner/phases/reuse.py), dropped on return."""
    cat = catalog or (get_catalog() if scenario.uniform is None else None)
    r = resolve(scenario, measured)
    eff = in_force(scenario, r.spec)
    reuse = Reuse()
    st = stored(scenario, cat, r, eff, reuse=reuse)
    run = Figures(scenario, r, st, eff, measured, reuse=reuse)
    nodes, ex, tr, cost = run.nodes, run.extraction, run.transfer, run.cost_usd
    # break-even is a figure of the costs, shown beside the training it concerns
    trn = run.training.model_copy(update={"breakeven_epochs": cost.breakeven_epochs,
                                     "breakeven_epochs_disaggregated": cost.breakeven_epochs_disaggregated})
    comps = component_plans(st)
    qual = _quality(scenario, cat, r.model, r.ex_gpu, ex, r.spec, comps, cost, eff, trn.drafter_params, reuse)
    warn = _collected_warnings(scenario, cat, r.layout, st, comps, nodes.warnings + ex.warnings + trn.warnings
                               + cost.warnings + qual.warnings)
    sampled = st.sampled(eff.unit) if band else []
    ends: list[StoragePhase] = []
    fixes = None
    low = high = None
    if band:
        fixes = _lossless_fixes(scenario, cat, r, eff, st, cost, warn.found, reuse)
        if sampled:
            ex, ends = _sampled_ends(scenario, cat, r, eff, ex, measured, reuse)
        low, high = (stored(scenario, cat, r, eff, end, lengths=True, reuse=reuse).storage_bytes for end in (0, 1))
    for c in comps:
        c.notes = warn.notes.get(c.id, [])
    layout, total = r.layout, st.total
    plan_ = Plan(
        planner_version=__version__, scenario=scenario, model=r.model.id, layout=layout.id, layers=layout.layers,
        hidden_dtype=layout.hidden_dtype, conversations=int(total.conversations), samples=total.rows,
        tokens=total.tokens, uncapped_tokens=total.uncapped_tokens, output_tokens=total.output_tokens,
        bytes_per_token=layout.bytes_per_token, hidden_state_bytes_per_token=layout.hidden_state_bytes_per_token,
        id_mask_bytes_per_token=layout.token_id_bytes + layout.loss_mask_bytes,
        file_overhead_bytes=layout.file_overhead_bytes, storage_bytes=st.storage_bytes,
        storage_bytes_compressed=st.compressed, storage_bytes_low=low, storage_bytes_high=high,
        sampled_components=sampled if ends else [], drafter=r.spec.drafter, unit=eff.unit, max_seq_len=eff.max_seq_len,
        overflow=eff.overflow, capture_batch_size=eff.capture_batch_size, padding=eff.padding,
        sort_by_length=eff.sort_by_length, drop_last=eff.drop_last, from_layout=list(eff.from_layout),
        rows_before_drop=sum(u.rows for u in st.unpadded),
        unpadded_tokens=st.unpadded_tokens, files=st.files, extraction=ex, nodes=nodes, placement=nodes.placement,
        storage_per_node_bytes=nodes.storage_per_node_bytes, gather_hours=nodes.gather_hours,
        transfer_method=tr.method, transfer_hours=tr.hours, training=trn, cost_usd=cost, quality=qual,
        wall_days_offline=run.wall_days_offline,
        wall_days_online=(ex.decode_hours + trn.online_wall_hours) / 24,
        wall_days_disaggregated=trn.disaggregated_wall_hours / 24,
        components=comps, warnings=warn.texts, findings=warn.found,
        assumptions=_assumption_rows(scenario, cat, r, eff, run, ex, qual, trn, measured),
    )
    refuse_non_finite(plan_)
    return _kept_with(plan_, run, cat, fixes)


def _kept_with(plan_: Plan, run: Figures, cat, fixes: tuple | None) -> Plan:
    """`plan_` holding the figures it was worked out from (Plan.own_figures) and the fixes it planned."""
    plan_.worked_out(("figures",), run.kept)
    if fixes is not None:
        plan_.worked_out(("fixes", cat), lambda: fixes)
    return plan_


def _collected_warnings(s: Scenario, cat, layout, st: StoragePhase, comps, found: list) -> _Warnings:
    """The plan's findings: the storage phase's, then the other phases' (`found`), then the plan's own."""
    warn = _Warnings()
    for f in st.findings() + found:
        warn.add(f)
    _plan_warnings(s, cat, layout, st.files, st.compressed, comps, warn)
    return warn


def _assumption_rows(s: Scenario, cat, r, eff, run, ex, qual, trn, measured) -> list:
    """The Assumptions table: a calibration's own rows first, then every input's and preset's."""
    context = AssumptionContext(scenario=s, model=r.model, layout=r.layout, extraction_gpu=r.ex_gpu,
                                training_gpu=r.tr_gpu, disk=r.disk, store=r.store, prefill_mfu=run.mfu,
                                drafter_params=run.drafter_params, catalog_mix=cat is not None and s.uniform is None,
                                effective=eff, recipe=run.recipe, extraction=ex, quality=qual,
                                training=trn)
    return (measured.assumptions() if measured is not None else []) + assumptions(context)


def _sampled_ends(s: Scenario, cat, r, eff, ex, measured, reuse: Reuse) -> tuple[Any, list[StoragePhase]]:
    """The band of a plan with sampled components: storage and extraction again at each end of the sampled
    intervals. The extraction carries the sampled ends, and the band to bet on: the low end's calibration band
    low, the high end's high (issue 22)."""
    ends = [stored(s, cat, r, eff, end, reuse=reuse) for end in (0, 1)]
    lo_ex, hi_ex = (capture(s, r, e, measured, reuse)[1] for e in ends)
    ex = ex.model_copy(update={
        "sampled_wall_hours_low": lo_ex.wall_hours, "sampled_wall_hours_high": hi_ex.wall_hours,
        "wall_hours_low": min(lo_ex.wall_hours_low or math.inf, lo_ex.wall_hours),
        "wall_hours_high": max(hi_ex.wall_hours_high or 0.0, hi_ex.wall_hours)})
    return ex, ends


def serving_workload(scenario: Scenario, cat: StatsCatalog | None) -> dict[str, float] | None:
    """The serving workload tau is scored on (family -> share; None: the mix's own training-token
    shares). One workload, fixed: the scenario's shares when given, else the full mix's family shares
    (the catalog's default mix, each component's rows x its measured mean tokens), which no trim and
    no dropped component changes, so dropping data never raises tau. "mix" (a version-5 scenario) and a
    uniform mix (no families) take the mix's own shares."""
    w = scenario.quality.workload
    if isinstance(w, dict):
        return w
    if w == "mix" or scenario.uniform is not None or cat is None:
        return None
    shares = default_family_tokens(cat)
    return shares if sum(shares.values()) > 0 else None


def _quality(s: Scenario, cat: StatsCatalog | None, model: ModelSpec, ex_gpu: GPUSpec, ex: ExtractionPlan,
             spec: LayoutSpec, components: list[ComponentPlan], cost: CostPlan, eff: Effective,
             draft_params: float, reuse: Reuse | None = None) -> QualityPlan:
    """The expected acceptance length and speedup of this mix (planner/phases/quality.py) with the cycle's
    cost as the target is served (planner/phases/serving.py), and the payback of the offline run against
    serving `quality.serving_tokens_per_day` on the serving GPU."""
    q = s.quality
    tokens: dict[str, float] = {}
    for c in components:
        tokens[c.family] = tokens.get(c.family, 0.0) + c.training_tokens
    gpu = resolve_gpu("quality.serving_gpu", q.serving_gpu, s.custom_gpu) if q.serving_gpu else ex_gpu
    served, fleet = served_costs(s, model, gpu, spec.drafter, draft_params)
    qp = quality(spec.drafter, tokens, epochs=s.training.epochs, regenerated=s.regenerate,
                 workload=serving_workload(s, cat), transfer=q.domain_transfer, engine=q.eval_engine,
                 temperature=q.temperature, num_speculative_tokens=q.num_speculative_tokens,
                 serving_batch=q.serving_batch,
                 fleet_batch=q.fleet_batch, reference=counted_reference_tokens(s, cat, eff, spec.drafter, reuse),
                 target=model.id, target_params=model.params, points=q.points, topk=q.topk,
                 num_draft_tokens=q.num_draft_tokens, served=served, fleet_served=fleet)
    if isinstance(q.workload, dict) and abs(sum(q.workload.values()) - 1) > 1e-6:
        qp.warnings.append(finding("workload-scaled", f"quality.workload: the shares sum to "
                                   f"{sum(q.workload.values()):g}; they were scaled to 1"))
    rate = serving_decode_rate(model, gpu, s.throughput, weight_dtype=s.weight_dtype, kv_dtype=s.kv_dtype,
                               components=components, calibration=ex.decode_calibration)
    if rate is None:
        qp.warnings.append(finding("payback",
                                   f"payback: {model.id} does not fit on {TP_DEGREES[-1]} x {gpu.id} to serve"))
        return qp
    price = gpu.default_price() if q.serving_gpu or s.costs.extraction_usd_per_gpu_hour is None \
        else s.costs.extraction_usd_per_gpu_hour
    return payback(qp, serving_tokens_per_day=q.serving_tokens_per_day, decode_tokens_per_s_per_gpu=rate,
                   usd_per_gpu_hour=price, one_off_usd=cost.total_offline, gpu=gpu.id)


class _ServedArgs(TypedDict):
    """served_cost's arguments beside the model, the GPU and the batch (planner/phases/serving.py)."""
    pairs_target: ModelSpec
    n_verify: int
    draft_steps: int
    draft_tokens: int
    draft_layer_params: float
    tensor_parallel: int
    weight_dtype: str


def served_costs(scenario: Scenario, model: ModelSpec, gpu: GPUSpec, drafter: str, draft_params: float):
    """The cycle's cost as served (planner/phases/serving.py) at the serving batch and at the fleet's: the
    draft's steps (EAGLE: K over topk tokens a sequence; DFlash: one over its block), the verify step's
    n tokens a sequence, the draft's parameters (the training phase's) plus the head it reads (the
    target's width x its vocabulary: an estimate of the head's size) on `quality.serving_tp` GPUs of `gpu`."""
    from planner.phases.harness import resolve as resolve_harness
    from planner.phases.quality import check_tree, pairs_target
    from planner.phases.serving import served_cost
    from planner.presets.drafter_kinds import DRAFTER_KINDS
    q = scenario.quality
    check_tree(drafter, q.eval_engine, q.num_speculative_tokens, q.topk, q.num_draft_tokens)
    h = resolve_harness(drafter, q.eval_engine, q.temperature, q.num_speculative_tokens, q.topk, q.num_draft_tokens)
    block = DRAFTER_KINDS.lookup(drafter).drafts_blocks
    kw = _ServedArgs(pairs_target=pairs_target(drafter), n_verify=h.n, draft_steps=1 if block else h.k,
                     draft_tokens=h.n if block else h.topk,
                     draft_layer_params=draft_params, tensor_parallel=q.serving_tp, weight_dtype=scenario.weight_dtype)
    return served_cost(model, gpu, batch=q.serving_batch, **kw), served_cost(model, gpu, batch=q.fleet_batch, **kw)


def counted_reference_tokens(scenario: Scenario, cat: StatsCatalog | None, eff: Effective, kind: str,
                             reuse: Reuse | None = None) -> dict[str, float]:
    """reference_tokens(kind, _reference_mean(scenario, cat, eff)); a search's `reuse` (planner/phases/reuse.py)
    counts it once per catalog, drafter kind, cap, unit, overflow and length scale (all the count
    reads); a copy each time."""
    return dict(reused(reuse, "reference_tokens", (cat,), (kind, eff.max_seq_len, eff.unit, eff.overflow,
                                                           scenario.length_scale),
                       lambda: reference_tokens(kind, _reference_mean(scenario, cat, eff))))


def _reference_mean(s: Scenario, cat: StatsCatalog | None, eff: Effective):
    """A reference component's training tokens per conversation counted as this plan counts the mix's
    (the layout's unit, cap and overflow, the scenario's length scale; regenerated, as the reference
    runs were), so that the reference mix gets its published levels back (planner/phases/quality.py)."""
    def mean(cid: str) -> float | None:
        comp = cat.components.get(cid) if cat is not None else None
        if comp is None:
            return None
        assert comp.conversation is not None and comp.turn is not None    # StatsCatalog reads both (length_bins)
        w, _ = workload(comp.conversation, comp.turn, 1.0, cap=eff.max_seq_len, unit=eff.unit, regenerate=True,
                        multiplier=1.0, overflow=eff.overflow, scale=s.length_scale)
        return w.conversation_tokens
    return mean


def _lossless_fixes(s: Scenario, cat: StatsCatalog | None, r: Resolved, eff: Effective, st: StoragePhase,
                    cost: CostPlan, found: list[Finding], reuse: Reuse | None = None) -> tuple | None:
    """A blocking finding about where the bytes fit names the fixes that drop no row first, each
    planned again and checked (planner/decisions/unblock.py): no batch padding (a capture batch of 1, or
    length-sorted batches), the nodes that spread the bytes, both, a network volume; those that
    clear the blockers with their figures, those that do not with what remains; the finding's own
    fix (trim, fp8, fewer layers) follows. The tables' figures, not a run's measured ones. A blocking
    finding in `found` is replaced by a copy with its fix: the phase's own finding stays as it was.
    Returns the fixes planned (None: no blocker), which the plan keeps for the verdict."""
    blockers = [i for i, f in enumerate(found) if f.code in STORAGE_BLOCKERS]
    if not blockers:
        return None
    fixes = storage_fixes(s, cat, st, found, st.compressed, eff.padding == "batch", bool(eff.sort_by_length), reuse)
    text = fixes_text(fixes, st.compressed, cost.total_offline)
    for i in blockers:
        f = found[i]
        otherwise = lossy_text(s, f.code, fixes) or f.fix
        fix = ("lossless first: " + text + (f". Otherwise: {otherwise}" if otherwise else "")) if text else otherwise
        found[i] = f.model_copy(update={"fix": fix})
    return fixes


def _plan_warnings(s: Scenario, cat: StatsCatalog | None, layout: CaptureLayout, files: float, compressed: float,
                   components: list[ComponentPlan], warn: _Warnings) -> None:
    """Warnings on the whole plan (disk, files, compression, fixed rate) and on pairs of components."""
    if files > 1_000_000 and layout.spec.grouping == "per_row":
        warn.add("many-files", f"{files:,.0f} files, one per training row: plan for the inode count and "
                 f"per-file overhead of millions of small files")
    if s.compression > 1.2 and layout.hidden_dtype != "fp8":
        warn.add("compression",
                 f"compression {s.compression:g}x is optimistic: bf16 activations compress about 1.0-1.2x")
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
    out: list[tuple[tuple[str, ...], str]] = []
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
