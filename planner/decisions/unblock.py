"""Which ways a plan's blocking findings stop, the fixes that would let them run (each planned and
checked before it is offered), and the band every way's dollars carry (issue 35).

- A way is blocked by the plan's blocking findings that concern it: where the stored states do not
  fit (disk-capacity, training-disk-capacity, shared-capacity) stops offline alone, which stores
  them; a finding that stops the extraction (tp-raised, rows-over-available: every way regenerates
  the responses on the extraction GPUs, planner/phases/costs.py) stops every way; online also stops when
  the target and the drafter's training state do not fit the training GPUs (training.online_fits).
- A fix of a storage blocker is a scenario change that drops no row: no batch padding (a capture
  batch of 1, length-sorted batches: the padding finding's own fix), the nodes that spread the
  bytes, both, or the states on a network volume. Each is planned (planner.phases.compose.Figures: the
  phases from storage to costs of the changed scenario) and its blockers found again, so a fix is
  offered as a fix only when it clears them; one that does not says which remains.
- The band: the extraction hours carry the calibration band (ExtractionPlan.wall_hours_low/high)
  and every training mode's hours the rate band (TrainingPlan.rate_low/high). Each total is a sum of
  extraction-priced and training-priced hours (planner/phases/costs.py), so it moves linearly with each
  factor and its extremes over the band are at the four corners; two totals whose order differs at a
  corner are a tie: the band does not tell them apart.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from planner.catalog.stats import StatsCatalog, get_catalog
from planner.errors import PlannerInputError
from planner.findings import Finding
from planner.finite import all_finite
from planner.phases.compose import Figures, in_force, resolve, stored
from planner.phases.reuse import Reuse
from planner.scenario import Scenario

WAYS = ("offline", "online", "disaggregated")
STORAGE_BLOCKERS = ("disk-capacity", "training-disk-capacity", "shared-capacity")


def blocked_ways(findings: list[Finding], online_fits: bool = True) -> dict[str, list[Finding]]:
    """way -> the blocking findings that stop it (empty: it runs as configured)."""
    out: dict[str, list[Finding]] = {w: [] for w in WAYS}
    for f in findings:
        if f.severity == "blocks":
            for w in (("offline",) if f.code in STORAGE_BLOCKERS else WAYS):
                out[w].append(f)
        elif f.code == "online-does-not-fit" and not online_fits:
            out["online"].append(f)
    return out


def figures_findings(figures: Figures) -> list[Finding]:
    """The findings of a Figures that can block a way (those plan() gathers from the same phases)."""
    return [*figures.storage.findings(), *figures.nodes.warnings, *figures.extraction.warnings,
            *figures.training.warnings]


def way_totals(plan) -> dict[str, float]:
    c = plan.cost_usd
    return {"offline": c.total_offline, "online": c.total_online, "disaggregated": c.total_disaggregated}


def way_days(plan) -> dict[str, float]:
    """The wall-clock days each way takes, from the start to the last epoch (as plan() counts them)."""
    online = (plan.extraction.decode_hours + plan.training.online_wall_hours) / 24
    return {"offline": plan.wall_days_offline, "online": online,
            "disaggregated": plan.training.disaggregated_wall_hours / 24}


@dataclass(frozen=True)
class Band:
    extraction: tuple[float, float]        # the extraction hours' factor, low and high
    training: tuple[float, float]          # every training mode's hours' factor
    corners: tuple[tuple[float, float, dict[str, float]], ...]   # (x, y, totals) at each corner and (1, 1)


def band(plan) -> Band:
    """The three totals at the corners of the extraction and training bands (a Plan or a Figures)."""
    ex, trn, c, s = plan.extraction, plan.training, plan.cost_usd, plan.scenario
    xs = (1.0, 1.0)
    if ex.wall_hours and ex.wall_hours_low is not None and ex.wall_hours_high is not None:
        xs = (ex.wall_hours_low / ex.wall_hours, ex.wall_hours_high / ex.wall_hours)
    ys = (1 / trn.rate_high, 1 / trn.rate_low) if trn.rate_low and trn.rate_high else (1.0, 1.0)
    capture_h = ex.capture_hours or ex.wall_hours
    fixed_h = plan.nodes.gather_hours + plan.transfer_hours
    held = c.storage_days_held

    def at(x: float, y: float) -> dict[str, float]:
        rent = c.storage
        if s.costs.storage_months is None and held > 0:    # rent follows the timeline (planner/phases/costs.py)
            days = (capture_h * x + fixed_h + trn.offline_wall_hours * y) / 24 + s.costs.keep_days
            rent = c.storage * days / held
        regen_dis = c.total_disaggregated - c.training_disaggregated
        return {"offline": c.extraction * x + c.transfer + rent + c.training_offline * y,
                "online": c.regeneration * x + c.training_online * y,
                "disaggregated": regen_dis * x + c.training_disaggregated * y}
    corners = tuple((x, y, at(x, y)) for x in xs for y in ys)
    return Band(extraction=xs, training=ys, corners=corners)


def tied(band: Band, best: str, other: str) -> str | None:
    """None when `best` costs less than `other` at every corner of the band; else what would tell
    them apart: "extraction" (the extraction band alone turns the order), "training", or "both"."""
    if all(t[best] < t[other] for _, _, t in band.corners):
        return None
    by_x = any(t[other] <= t[best] for t in (_linear_at(band, e, 1.0) for e in band.extraction))
    by_y = any(t[other] <= t[best] for t in (_linear_at(band, 1.0, e) for e in band.training))
    return "extraction" if by_x and not by_y else "training" if by_y and not by_x else "both"


def _linear_at(b: Band, x: float, y: float) -> dict[str, float]:
    """The totals at (x, y), from three corners (each total is a x + b y + c over the band)."""
    (x0, y0, t00), (_, y1, t01), (x1, _, t10) = b.corners[0], b.corners[1], b.corners[2]
    out = {}
    for k in t00:
        a = (t10[k] - t00[k]) / (x1 - x0) if x1 != x0 else 0.0
        c = (t01[k] - t00[k]) / (y1 - y0) if y1 != y0 else 0.0
        out[k] = t00[k] + a * (x - x0) + c * (y - y0)
    return out


@dataclass(frozen=True)
class Fix:
    label: str                     # "a capture batch of 1 on 2 extraction nodes (16 GPUs)"
    scenario: Scenario
    stored_bytes: float
    per_node_bytes: float
    totals: dict[str, float]
    days: dict[str, float]
    blocked: dict[str, list[Finding]]  # way -> what still stops it
    band: Band
    storage_usd_per_tb_month: float
    kind: str = "padding"          # padding (no batch padding, on the nodes it needs too), nodes, volume; fp8
                                   # (lossy: the states' precision)

    @property
    def lossless(self) -> bool:
        return self.kind != "fp8"

    def clears(self, way: str = "offline") -> bool:
        return not self.blocked[way]


def _changed(s: Scenario, change: dict) -> Scenario:
    d = s.model_dump()
    for k, v in change.items():
        part = d
        *path, last = k.split(".")
        for p in path:
            part = part[p]
        part[last] = v
    return Scenario.model_validate(d)


def _planned(label: str, s: Scenario, cat: StatsCatalog | None, rows, change: dict,
             reuse: Reuse | None = None) -> Fix | None:
    """The fix `change` planned: its figures and what still blocks each way; None where no finite
    plan can be made of it. `rows`: the storage phase whose rows and lengths the change keeps (None:
    the change's own, planned afresh)."""
    try:
        changed = _changed(s, change)
        r = resolve(changed)
        eff = in_force(changed, r.spec)
        q = Figures(changed, r, stored(changed, cat, r, eff, same_rows=rows, reuse=reuse), eff, reuse=reuse)
        totals = way_totals(q)
        if not (all(math.isfinite(v) for v in totals.values()) and math.isfinite(q.storage_bytes_compressed)
                and all_finite(q.extraction, q.nodes, q.training, q.cost_usd)):
            return None
        blocked = blocked_ways(figures_findings(q), q.training.online_fits)
        return Fix(label, changed, q.storage_bytes_compressed, q.nodes.storage_per_node_bytes or
                   q.storage_bytes_compressed, totals, way_days(q), blocked, band(q),
                   q.cost_usd.storage_usd_per_tb_month)
    except (PlannerInputError, ValueError):      # a change the scenario refuses, or a figure not finite
        return None


def _nodes_change(s: Scenario, code: str, on_disk: float) -> tuple[str, dict] | None:
    """The nodes whose disks hold `on_disk` bytes: (label, change), None when the disk is not given."""
    if code == "disk-capacity" and s.disk_capacity_tb:
        need, per = math.ceil(on_disk / (s.disk_capacity_tb * 1e12)), s.gpus_per_node
        if need <= s.extraction_node_count:
            return None
        change = {"extraction_gpus": need * per, "extraction_nodes": need if s.extraction_nodes else None}
        return f"{need} extraction nodes ({need * per} GPUs)", change
    if code == "training-disk-capacity" and s.training.disk_capacity_tb:
        need, per = math.ceil(on_disk / (s.training.disk_capacity_tb * 1e12)), s.training.gpus_per_node
        if need <= s.training_node_count:
            return None
        change = {"training.gpus": need * per, "training.nodes": need if s.training.nodes else None}
        return f"{need} training nodes ({need * per} GPUs)", change
    return None


def _lossless_fixes(s: Scenario, cat, rows, codes: list[str], padding: bool, sorted_already: bool,
                    reuse: Reuse | None = None) -> list[Fix]:
    """No padding (a capture batch of 1, length-sorted batches), each planned, and each with the nodes
    the bytes it leaves need where it alone does not clear the blockers."""
    out: list[Fix] = []
    lossless = []
    if padding:
        lossless.append(("a capture batch of 1", {"capture_batch_size": 1}))
        if not sorted_already:
            lossless.append(("length-sorted capture batches", {"sort_by_length": True}))
    for label, change in lossless:
        fix = _planned(label, s, cat, rows, change, reuse)
        if fix is None:
            continue
        out.append(fix)
        if not fix.clears():
            for code in codes:
                more = _nodes_change(s, code, fix.stored_bytes)
                if more:
                    both = _planned(f"{label} on {more[0]}", s, cat, rows, {**change, **more[1]}, reuse)
                    if both is not None:
                        out.append(both)
    return out


def _candidates(s: Scenario, cat, rows, codes: list[str], on_disk: float, padding: bool, sorted_already: bool,
                reuse: Reuse | None = None):
    """Each fix of the storage blockers `codes`, planned: no padding, nodes, both, a network volume."""
    out = _lossless_fixes(s, cat, rows, codes, padding, sorted_already, reuse)
    for code in codes:
        more = _nodes_change(s, code, on_disk)
        if more:
            fix = _planned(more[0], s, cat, rows, more[1], reuse)
            if fix is not None:
                out.append(replace(fix, kind="nodes"))
    # lossy: precision. The rows and lengths are the plan's (the dtype moves the bytes a token alone: the rows
    # follow the cap, unit, overflow and lengths, mix_storage.storage_phase)
    if resolve(s).layout.hidden_dtype != "fp8":
        fix = _planned("fp8 hidden states", s, cat, rows, {"hidden_dtype": "fp8"}, reuse)
        if fix is not None:
            out.append(replace(fix, kind="fp8"))
    if s.placement == "local" and "disk-capacity" in codes:
        fix = _planned("the states on a network volume", s, cat, rows,
                       {"placement": "shared", "costs.storage": "network-volume"}, reuse)
        if fix is not None:
            out.append(replace(fix, kind="volume", label=f"the states on a network volume at "
                                                        f"${fix.storage_usd_per_tb_month:,.2f} per TB-month"))
    return out


def storage_fixes(scenario: Scenario, cat: StatsCatalog | None, rows, findings: list[Finding], on_disk: float,
                  padding: bool, sorted_already: bool, reuse: Reuse | None = None) -> tuple[Fix, ...]:
    """Every planned fix of the plan's storage blockers (none: no such blocker). `rows`: the plan's
    storage phase, or a call that gives it (the fixes change the capture batches and the nodes, not the
    rows). `reuse`: the plan's own (planner/phases/reuse.py), for the figures its fixes share with it."""
    codes = sorted({f.code for f in findings if f.severity == "blocks" and f.code in STORAGE_BLOCKERS})
    if not codes:
        return ()
    phase = rows() if callable(rows) else rows
    return tuple(_candidates(scenario, cat, phase, codes, on_disk, padding, sorted_already, reuse))


def _rows(s: Scenario, cat: StatsCatalog | None):
    """A call giving the storage phase of `s`."""
    def get():
        r = resolve(s)
        return stored(s, cat, r, in_force(s, r.spec))
    return get


def plan_fixes(plan, cat: StatsCatalog | None) -> tuple[Fix, ...]:
    """storage_fixes of a Plan: those plan() planned (it keeps them on the plan it returns), else
    worked out once for this plan object (Plan.worked_out)."""
    s = plan.scenario
    if not any(f.severity == "blocks" and f.code in STORAGE_BLOCKERS for f in plan.findings):
        return ()
    cat = _catalog(s, cat)
    return plan.worked_out(("fixes", cat), lambda: storage_fixes(
        s, cat, _plan_rows(plan, cat), plan.findings, plan.storage_bytes_compressed, plan.padding == "batch",
        bool(plan.sort_by_length)))


def padding_levers(plan, cat: StatsCatalog | None) -> tuple[Fix, ...]:
    """The lossless fixes of batch padding planned on a plan that no storage finding blocks."""
    if plan.padding != "batch":
        return ()
    s = plan.scenario
    cat = _catalog(s, cat)
    options = [("a capture batch of 1", {"capture_batch_size": 1})]
    if not plan.sort_by_length:
        options.append(("length-sorted capture batches", {"sort_by_length": True}))

    def compute():
        rows = _plan_rows(plan, cat)()
        return tuple(f for f in (_planned(label, s, cat, rows, ch) for label, ch in options) if f is not None)
    return plan.worked_out(("levers", cat), compute)


def _plan_rows(plan, cat: StatsCatalog | None):
    """A call giving the storage phase `plan` was worked out with (Plan.own_figures: its rows and lengths, which
    the fixes keep), else its scenario's planned afresh."""
    own = plan.own_figures()
    return (lambda: own.storage) if own is not None else _rows(plan.scenario, cat)


def _catalog(s: Scenario, cat: StatsCatalog | None) -> StatsCatalog | None:
    return cat or (get_catalog() if s.uniform is None else None)


def remaining(fix: Fix, way: str = "offline") -> str:
    """What still stops `way` after the fix, in the finding's own words."""
    return "; ".join(f.text for f in fix.blocked[way])


def fixes_text(fixes: tuple[Fix, ...], on_disk: float, offline_usd: float) -> str:
    """The storage blocker's lossless fixes in words: those that clear every blocker of offline, each
    with its figures, then those that do not, each with what remains ('' when there are none)."""
    clear = [x for x in fixes if x.lossless and x.clears()]
    short = [x for x in fixes if x.lossless and not x.clears()]
    parts = []
    for x in clear:
        each = f", {x.per_node_bytes / 1e12:,.2f} TB on each node" if "extraction nodes" in x.label else ""
        size, usd = f"{x.stored_bytes / 1e12:,.1f}", f"${x.totals['offline']:,.0f}"
        was, was_usd = f"{on_disk / 1e12:,.1f}", f"${offline_usd:,.0f}"
        parts.append(f"{x.label}: {size} TB" + (f" (from {was})" if size != was else "") + each
                     + f", {usd} offline" + (f" (from {was_usd})" if usd != was_usd else ""))
    text = "; ".join(parts) + ("; none drops a row" if parts else "")
    if short:
        text += (". Not enough alone: " if parts else "none clears it alone: ") + "; ".join(
            f"{x.label} ({x.stored_bytes / 1e12:,.1f} TB: {remaining(x)})" for x in short)
    return text


def storage_limit_tb(scenario: Scenario, code: str) -> float | None:
    """The TB a storage blocker's disks hold together (None: not a storage blocker, or no capacity given)."""
    limit = {"disk-capacity": (scenario.disk_capacity_tb or 0) * scenario.extraction_node_count,
             "training-disk-capacity": (scenario.training.disk_capacity_tb or 0) * scenario.training_node_count,
             "shared-capacity": scenario.shared_capacity_tb or 0}.get(code)
    return limit or None


def lossy_text(scenario: Scenario, code: str, fixes: tuple[Fix, ...]) -> str:
    """What a storage blocker's fix costs in rows or precision, each checked: a trim to what the disks
    hold (every trim proposal is planned and says what still blocks it), fp8 states planned ('' for
    a code that is not a storage blocker)."""
    limit = storage_limit_tb(scenario, code)
    if not limit:
        return ""
    parts = [f"trim the mix in Budget to at most {limit:,.2f} TB (drops rows)"]
    for x in (x for x in fixes if not x.lossless):
        parts.append(f"{x.label}: {x.stored_bytes / 1e12:,.1f} TB, ${x.totals['offline']:,.0f} offline" if x.clears()
                     else f"{x.label} ({x.stored_bytes / 1e12:,.1f} TB: {remaining(x)})")
    return "; ".join(parts) + ("; or give the real disk size" if code != "shared-capacity" else "")
