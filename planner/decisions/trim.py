"""Trim a mix to a budget: storage, extraction GPU-days, transfer hours, dollars, wall-clock days.

Strategies return a new Scenario and a diff, deterministically. Each is one row of STRATEGY_TABLE:
its name, the one function that searches for its answer over a _Search (the mix's rows, the budgets,
a step's figures, the bisection on one fraction or on the cap) and what it does.
Each step of a search is worked out by figures() (the phases from storage to costs, the same
arithmetic as plan() without its quality, findings and assumptions); the answer is then checked
against one full plan() before it is returned.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planner.catalog.stats import StatsCatalog, get_catalog
from planner.decisions.headlines import HEADLINES
from planner.decisions.unblock import storage_limit_tb
from planner.errors import PlannerInputError
from planner.ids import TRIM_STRATEGIES as STRATEGIES
from planner.phases.compose import in_force, resolve, stored
from planner.phases.reuse import Reuse
from planner.planning import Figures, Plan, counted_reference_tokens, plan, resolved_mix
from planner.scenario import MixItem, Scenario
from planner.units import TB, TiB

QUALITY_STEPS = 64
BISECT_STEPS = 48


def _bisect_steps(upper: dict[str, int]) -> int:
    """Bisection steps on a fraction of the rows until a step moves no component by a whole row
    (at most BISECT_STEPS): log2(2 x the largest row count)."""
    return min(BISECT_STEPS, max(1, math.ceil(math.log2(2 * max(max(upper.values(), default=1), 1))) + 1))


class Budget(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    storage_tb: float | None = Field(None, gt=0, le=1e9)
    storage_tib: float | None = Field(None, gt=0, le=1e9)
    gpu_days: float | None = Field(None, gt=0, le=1e9)
    transfer_hours: float | None = Field(None, gt=0, le=1e9)
    usd: float | None = Field(None, gt=0, le=1e12)
    days: float | None = Field(None, gt=0, le=1e9)

    @model_validator(mode="after")
    def _some(self) -> "Budget":
        if not self.limits():
            raise ValueError("give at least one budget (storage, GPU-days, transfer hours, USD or days)")
        return self

    def limits(self) -> list[tuple[str, float, str]]:
        """(budget name, limit in the metric's own unit, label)."""
        out = []
        if self.storage_tb is not None:
            out.append(("storage_tb", self.storage_tb * TB, f"{self.storage_tb:g} TB of storage"))
        if self.storage_tib is not None:
            out.append(("storage_tib", self.storage_tib * TiB, f"{self.storage_tib:g} TiB of storage"))
        if self.gpu_days is not None:
            out.append(("gpu_days", self.gpu_days, f"{self.gpu_days:g} extraction GPU-days"))
        if self.transfer_hours is not None:
            out.append(("transfer_hours", self.transfer_hours, f"{self.transfer_hours:g} transfer hours"))
        if self.usd is not None:
            out.append(("usd", self.usd, f"${self.usd:,.0f}"))
        if self.days is not None:
            out.append(("days", self.days, f"{self.days:g} wall-clock days"))
        return out


# each budget and the headline figure it limits (planner/decisions/headlines.py); storage in TB or TiB of its bytes
BUDGET_HEADLINE = {"storage_tb": "storage", "storage_tib": "storage", "gpu_days": "gpu_days",
                   "transfer_hours": "transfer_hours", "usd": "usd", "days": "days"}
STORAGE_UNIT = {"storage_tb": ("TB", TB), "storage_tib": ("TiB", TiB)}


def metric(plan: Plan | Figures, name: str) -> float:
    return HEADLINES[BUDGET_HEADLINE[name]].get(plan)


def _fmt(name: str, value: float) -> str:
    if name in STORAGE_UNIT:
        unit, size = STORAGE_UNIT[name]
        return f"{value:,.0f} bytes" if value < 1e10 else f"{value / size:,.2f} {unit}"
    h = HEADLINES[BUDGET_HEADLINE[name]]
    return f"${value:,.0f}" if h.unit == "$" else f"{value:,.2f} {h.unit}"


class BudgetUse(BaseModel):
    name: str
    label: str
    limit: float
    used: float
    share: float


class RowChange(BaseModel):
    id: str
    before: int
    after: int


class TrimResult(BaseModel):
    strategy: str
    scenario: Scenario
    changes: list[RowChange]
    budgets: list[BudgetUse]
    max_seq_len_before: int | None
    max_seq_len_after: int | None
    utility_before: float
    utility_after: float
    quality_before: float = 0.0      # expected acceptance length of the mix before and after (an estimate)
    quality_after: float = 0.0
    quality_low_after: float = 0.0
    quality_high_after: float = 0.0
    storage_bytes_before: float = 0.0
    storage_bytes_after: float = 0.0
    speedup_after: float = 0.0          # the expected speedup of the trimmed mix (an estimate)
    note: str
    # what the proposal costs beyond the budget: components left with no rows, protected rows the
    # cap cuts, an expected speedup below 1 (a slowdown), a blocking finding the proposal still has
    warnings: list[str] = Field(default_factory=list)
    # the proposal's own plan's blocking findings (issue 35: a proposal is checked, not only budgeted):
    # empty when it runs as configured
    blocked_by: list[str] = Field(default_factory=list)
    # what the proposal changes beyond row counts (a sequence cap, and what it cuts of each family)
    beyond_rows: list[str] = Field(default_factory=list)


class TrimInfeasible(PlannerInputError):
    pass


def _rows_of(s: Scenario, cat: StatsCatalog | None) -> list[dict]:
    """Every component of the mix, unchecked ones too (they stay in the trimmed scenario, unchanged)."""
    if s.uniform is not None:
        return [{"id": "uniform", "rows": s.uniform.samples, "include": True}]
    return [m.model_dump() for m in resolved_mix(s, cat)]


def _with_rows(s: Scenario, base: list[dict], rows: dict[str, int], cap=...) -> Scenario:
    if cap is ... and s.uniform is None:
        # only row counts change: each item is validated, the rest of the scenario was
        return s.model_copy(update={"mix": [MixItem(**(dict(m, rows=int(rows[m["id"]])) if m["id"] in rows else m))
                                            for m in base]})
    changes: dict = {}
    if s.uniform is not None:
        u = s.uniform.model_copy(update={"samples": max(1, rows["uniform"])})
        changes["uniform"] = u
    else:
        changes["mix"] = [dict(m, rows=int(rows[m["id"]])) if m["id"] in rows else m for m in base]
    if cap is not ...:
        changes["max_seq_len"] = cap
    return s.model_copy(update=changes) if s.uniform is not None else Scenario.model_validate(
        {**s.model_dump(), **changes})


class _StepItem(NamedTuple):
    """A mix item of a search step: a validated item's fields with a row count the search worked out
    (0 to the item's own rows). A step's scenario is read by the phases and never returned: the answer
    is planned from a validated scenario (_with_rows)."""
    id: str
    rows: int
    include: bool
    selection: str
    seed: int


def _step(s: Scenario, base: list[dict], rows: dict[str, int], cap=...) -> Scenario:
    """The scenario a search step's figures are worked out for: `s` with `rows` (and the cap), its
    items not validated again when only row counts change (about 2 us an item, 16 a step)."""
    if cap is ... and s.uniform is None:
        return s.model_copy(update={"mix": [_StepItem(m["id"], int(rows[m["id"]]) if m["id"] in rows else m["rows"],
                                                      m["include"], m["selection"], m["seed"]) for m in base]})
    return _with_rows(s, base, rows, cap)


class _Answer(NamedTuple):
    """A strategy's answer: the rows, the figures (or plan) they were found with, the cap, its note."""
    rows: dict[str, int]
    plan: "Plan | Figures"
    cap: int | None
    note: str


class _Search:
    """What every strategy searches over: the mix's rows (`upper`), the rows each keeps (`floor`), the
    budgets, the full plan, and each step's figures() with the presets resolved once (a step changes row
    counts and the cap, which resolve() does not read; the pipeline values in force are worked out per step)."""

    def __init__(self, s: Scenario, cat: StatsCatalog | None, base: list[dict], upper: dict[str, int],
                 limits: list[tuple[str, float, str]], full: Plan, floor: dict[str, int], protected: set[str],
                 weights: dict[str, float], min_cap: int | None):
        self.s, self.cat, self.base, self.upper, self.limits = s, cat, base, upper, limits
        self.full, self.floor, self.protected, self.weights, self.min_cap = full, floor, protected, weights, min_cap
        self.resolved = resolve(s)
        # what does not depend on the row counts (each component's figures per conversation and padding,
        # its training rows' sums, the reference run's tokens) is worked out once for this search: its own
        # Reuse, passed to the phases and dropped when trim returns (planner/phases/reuse.py)
        self.reuse = Reuse()
        self.cap_before = full.max_seq_len     # in force: the scenario's or the layout's (None: no cap)

    def run(self, rows: dict[str, int], cap=...) -> Figures:
        step = _step(self.s, self.base, rows, cap)
        eff = in_force(step, self.resolved.spec)
        return Figures(step, self.resolved, stored(step, self.cat, self.resolved, eff, reuse=self.reuse), eff,
                       reuse=self.reuse)

    def fits(self, plan: Plan | Figures) -> bool:
        # a mix whose rows are all left out of capture (drop_last of a last partial batch) is no answer
        captured = plan.samples > 0 or plan.conversations == 0
        return captured and all(metric(plan, n) <= lim * (1 + 1e-12) for n, lim, _ in self.limits)

    def infeasible(self, plan: Plan | Figures, what: str) -> TrimInfeasible:
        for n, lim, label in self.limits:
            used = metric(plan, n)
            if used > lim * (1 + 1e-12):
                return TrimInfeasible(f"budget.{n}", label,
                                      f"{what} alone need {_fmt(n, used)}, {_fmt(n, used - lim)} over the budget")
        return TrimInfeasible("budget", "?", "cannot be met")

    def scaled(self, fraction: float) -> dict[str, int]:
        return {i: max(self.floor[i], int(math.floor(fraction * u))) for i, u in self.upper.items()}

    def best_fraction(self, cap=...) -> tuple[dict[str, int], Plan | Figures]:
        """The largest fraction of every unprotected component's rows that fits (bisection)."""
        p1 = self.run(self.upper, cap)
        if self.fits(p1):
            return dict(self.upper), p1
        p0 = self.run(self.scaled(0.0), cap)
        if not self.fits(p0):
            raise self.infeasible(p0, "the protected components" if self.protected else
                                  "the family minimums" if any(self.floor.values()) else "the fixed costs")
        lo, hi = 0.0, 1.0
        for _ in range(_bisect_steps(self.upper)):
            mid = (lo + hi) / 2
            if self.fits(self.run(self.scaled(mid), cap)):
                lo = mid
            else:
                hi = mid
        rows = self.scaled(lo)
        return rows, self.run(rows, cap)

    def by_cap(self, floor: int | None) -> _Answer:
        """The largest cap that fits (bisection on whole tokens); at `floor` the proportional fraction
        does the rest."""
        if self.fits(self.full):
            return _Answer(dict(self.upper), self.full, self.cap_before, "")
        hi = self.cap_before or int(max(2**21, 1))
        lo = floor or 16
        if not self.fits(self.run(self.upper, lo)):
            if floor is None:
                raise self.infeasible(self.run(self.upper, lo), f"sequences capped at {lo} tokens")
            rows, p = self.best_fraction(cap=lo)
            return _Answer(rows, p, lo, f"the cap stopped at its floor of {lo} tokens; the mix was scaled down "
                                        "proportionally")
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.fits(self.run(self.upper, mid)):
                lo = mid
            else:
                hi = mid
        return _Answer(dict(self.upper), self.run(self.upper, lo), lo, "")

    def kept_quality(self, plan: Plan | Figures):
        """The trimmed mix's expected quality for the full mix's serving workload: what is served does
        not change because a family was trimmed (planner/phases/quality.py)."""
        return kept_quality_of(plan, self.full, self.cat, self.reuse)

    def planned(self, rows: dict[str, int], cap) -> Plan:
        """The full plan of a proposal (its scenario as trim returns it)."""
        s = _with_rows(self.s, self.base, rows, cap) if cap != self.cap_before else _with_rows(self.s, self.base, rows)
        return plan(s, self.cat, band=False)


def _proportional(search: _Search) -> _Answer:
    return _Answer(*search.best_fraction(), search.cap_before, "")


def _by_value(search: _Search) -> _Answer:
    prop_rows, prop_plan = search.best_fraction()
    rows, p = _value(search.upper, search.floor, search.weights, search.limits, search.full, search.run, search.fits)
    if utility(prop_rows, search.weights) > utility(rows, search.weights):
        return _Answer(prop_rows, prop_plan, search.cap_before,
                       "the proportional mix scored higher than the linearised optimum and was kept")
    return _Answer(rows, p, search.cap_before, "")


def _by_quality(search: _Search) -> _Answer:
    """The greedy search over rows, against the proportional mix and the shortest cap that fits: the one
    that keeps the most expected acceptance."""
    greedy = _quality_greedy(search.upper, search.floor, search.limits, search.full, search.run, search.fits)
    candidates = [_Answer(*greedy, search.cap_before, ""),
                  _Answer(*search.best_fraction(), search.cap_before,
                          "the proportional mix kept the most expected acceptance")]
    if not any(search.floor.values()):
        # the quality model counts the tokens a cap leaves but not what a drafter that never saw long
        # rows loses on them: the cap goes no lower than min_cap, or half the cap
        before = search.cap_before
        try:
            c = search.by_cap(search.min_cap or (before // 2 if before else None))
            candidates.append(c._replace(note=f"a {c.cap:,}-token cap kept the most expected acceptance"
                                         + (f" ({c.note})" if c.note else "")))
        except TrimInfeasible:
            pass
    # the one that keeps the most, from each candidate's figures
    return max(candidates, key=lambda c: search.kept_quality(c.plan).acceptance_length)


def _by_cap(search: _Search) -> _Answer:
    return search.by_cap(search.min_cap)


class Strategy(NamedTuple):
    """A way to fit a mix to a budget: its name (planner.ids.TRIM_STRATEGIES, the CLI's choices), the
    one function that searches for its answer, and what it does."""
    name: str
    search: Callable[[_Search], _Answer]
    description: str


STRATEGY_TABLE: dict[str, Strategy] = {k.name: k for k in (
    Strategy("proportional", _proportional, "one fraction for every unprotected component, the largest that fits"),
    Strategy("protect", _proportional, "named components or families stay whole, the rest scale by one fraction"),
    Strategy("value", _by_value, "maximise sum_j w_j log(1 + rows_j) under the budgets (concave objective, linear "
             "constraints), solved through its dual, so expensive-per-row components give way first (the heuristic "
             "of 0.1, kept for scripts; it is not tied to any measurement); never below proportional on it"),
    Strategy("cap", _by_cap, "the largest maximum sequence length that fits; with `min_cap`, the cap stops there "
             "and the proportional fraction does the rest"),
    Strategy("quality", _by_quality, "maximise the workload-weighted expected acceptance length "
             "(planner/phases/quality.py) under the budgets, greedily in steps of 1/64 of each component, the most tau "
             "per unit of budget first; against the proportional mix and a cap no lower than half the cap in "
             "force (or min_cap): the one that keeps the most expected acceptance"),
)}
assert sorted(STRATEGY_TABLE) == sorted(STRATEGIES), "every strategy planner.ids names has its one function here"


def utility(rows: dict[str, int], weights: dict[str, float]) -> float:
    return sum(weights.get(i, 1.0) * math.log1p(max(r, 0)) for i, r in rows.items())


def _check_weights(weights: dict[str, float], upper: dict[str, int]) -> None:
    for k, v in weights.items():
        if k not in upper:
            raise PlannerInputError("weights", k, f"weights name components of the mix: {', '.join(upper)}")
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise PlannerInputError(f"weights.{k}", v, "a weight must be a positive number")


def _search_of(s: Scenario, budget: Budget, strategy: str, protect: list[str] | None, weights: dict[str, float],
               min_cap: int | None, min_family_share: dict[str, float] | None,
               catalog: StatsCatalog | None) -> _Search:
    """The search space of one trim, every argument checked (a one-line PlannerInputError otherwise)."""
    if strategy not in STRATEGIES:
        raise PlannerInputError("strategy", strategy, f"one of {', '.join(STRATEGIES)}")
    cat = catalog or (get_catalog() if s.uniform is None else None)
    base = _rows_of(s, cat)
    upper = {m["id"]: int(m["rows"]) for m in base if m.get("include", True)}
    _check_weights(weights, upper)
    protected = _protected_ids(protect or [], upper, cat) if strategy in ("protect", "value", "quality") or protect \
        else set()
    limits = budget.limits()
    full = plan(s, cat, band=False)
    if strategy == "protect" and not protected:
        raise PlannerInputError("protect", protect, "name at least one component or family to protect")
    floor = _floors(upper, protected, min_family_share or {}, cat)
    return _Search(s, cat, base, upper, limits, full, floor, protected, weights, min_cap)


def trim(scenario: Scenario, budget: Budget, strategy: str = "proportional", protect: list[str] | None = None,
         weights: dict[str, float] | None = None, min_cap: int | None = None,
         min_family_share: dict[str, float] | None = None, catalog: StatsCatalog | None = None) -> TrimResult:
    """Fit the mix to the budget with one strategy (STRATEGY_TABLE). `min_family_share` {family: F}:
    every component of that family keeps at least F of its rows (a guardrail against a strategy that
    empties a family); protected components keep all."""
    weights = weights or {}
    search = _search_of(scenario, budget, strategy, protect, weights, min_cap, min_family_share, catalog)
    rows, _, cap_after, note = STRATEGY_TABLE[strategy].search(search)
    upper, full = search.upper, search.full
    if scenario.uniform is None and any(upper.values()) and not any(rows.values()):
        raise _no_rows_left(upper, search.limits, search.run, strategy,
                            full.capture_batch_size if full.drop_last else 1)
    if not note and rows == upper and cap_after == search.cap_before:
        note = "the mix already fits every budget"
    p = search.planned(rows, cap_after)       # the one full plan: the answer checked against it
    assert search.fits(p), "trim returned a plan over budget"
    return _result(search, strategy, rows, p, cap_after, note)


def _result(search: _Search, strategy: str, rows: dict[str, int], p: Plan, cap_after: int | None,
            note: str) -> TrimResult:
    upper, full, weights = search.upper, search.full, search.weights
    after = search.kept_quality(p)
    warnings = _proposal_warnings(strategy, upper, rows, search.protected, full, p, after.speedup)
    return TrimResult(
        strategy=strategy, scenario=p.scenario, quality_before=full.quality.acceptance_length,
        quality_after=after.acceptance_length, quality_low_after=after.acceptance_low,
        quality_high_after=after.acceptance_high, storage_bytes_before=full.storage_bytes_compressed,
        storage_bytes_after=p.storage_bytes_compressed,
        changes=[RowChange(id=i, before=upper[i], after=rows[i]) for i in upper],
        budgets=[BudgetUse(name=n, label=label, limit=lim, used=metric(p, n), share=metric(p, n) / lim)
                 for n, lim, label in search.limits],
        max_seq_len_before=search.cap_before, max_seq_len_after=cap_after,
        utility_before=utility(upper, weights), utility_after=utility(rows, weights), note=note,
        speedup_after=after.speedup, warnings=warnings,
        blocked_by=[f.code for f in p.findings if f.severity == "blocks"],
        beyond_rows=beyond_rows(full, p))


def _proposal_warnings(strategy: str, upper: dict[str, int], rows: dict[str, int], protected: set[str],
                       full: Plan, p: Plan, speedup: float) -> list[str]:
    """What a proposal gives up that its budget does not show."""
    out = _still_blocked(p)
    zeroed = [i for i, u in upper.items() if u > 0 and rows.get(i, 0) == 0]
    if zeroed:
        out.append(f"the {strategy} strategy leaves {len(zeroed)} component{'s' * (len(zeroed) > 1)} with no rows: "
                   f"{', '.join(zeroed)}")
    out += _protected_cut(protected, full, p)
    if speedup < 1:
        out.append(f"expected speedup {speedup:.2f}x: a slowdown: serving with this drafter is slower than without one")
    return out


def _still_blocked(p: Plan) -> list[str]:
    """Each blocking finding the proposal's own plan still has, with the storage budget that clears it."""
    out = []
    for f in (f for f in p.findings if f.severity == "blocks"):
        limit = storage_limit_tb(p.scenario, f.code)
        out.append(f"the proposal still cannot run as configured: {f.text}" + (
            f"; a storage budget of at most {limit:,.2f} TB as well fits it" if limit else ""))
    return out


def _protected_cut(protected: set[str], full: Plan, p: Plan) -> list[str]:
    """The protected components whose tokens the proposal's cap cuts more than the full mix's did."""
    before = {c.id: c.truncated_share for c in full.components}
    cut = [(c.id, c.truncated_share) for c in p.components
           if c.id in protected and c.rows and c.truncated_share > before.get(c.id, 0.0) + 1e-9]
    if not cut or p.max_seq_len is None:
        return []
    return [f"the {p.max_seq_len:,}-token cap cuts protected rows: " + ", ".join(
        f"{i} loses {share:.0%} of its tokens" for i, share in cut)]


def _family_cut(p: Plan) -> dict[str, float]:
    """family -> the share of its tokens the sequence cap cuts (of the components with rows)."""
    kept: dict[str, float] = {}
    whole: dict[str, float] = {}
    for c in p.components:
        if c.rows and c.truncated_share < 1:
            kept[c.family] = kept.get(c.family, 0.0) + c.training_tokens
            whole[c.family] = whole.get(c.family, 0.0) + c.training_tokens / (1 - c.truncated_share)
    return {f: 1 - kept[f] / whole[f] for f in whole if whole[f] > 0}


def beyond_rows(full: Plan, plan: Plan) -> list[str]:
    """What proposal `plan` changes beyond row counts: the sequence cap in force, and each family whose
    tokens it cuts more than the full mix's cap did (the long-row families: agentic, tool calls)."""
    if plan.max_seq_len == full.max_seq_len:
        return []
    before, after = _family_cut(full), _family_cut(plan)
    was = f"from {full.max_seq_len:,}" if full.max_seq_len else "from none"
    worse = sorted(((share, before.get(f, 0.0), f) for f, share in after.items()
                    if share > before.get(f, 0.0) + 0.005), reverse=True)
    return [f"cuts the sequence cap {was} to {plan.max_seq_len:,} tokens" + ("" if not worse else ": " + ", ".join(
        f"the {f} family loses {share:.0%} of its tokens (was {old:.0%})" for share, old, f in worse))]


def not_distinguishable(results: dict[str, "TrimResult | None"]) -> dict[str, list[str]]:
    """strategy -> the other strategies it cannot be told apart from by the expected acceptance length:
    each one's estimate lies inside the other's band (quality_low_after to quality_high_after)."""
    done = {k: r for k, r in results.items() if r is not None}

    def inside(one: "TrimResult", other: "TrimResult") -> bool:
        return other.quality_low_after <= one.quality_after <= other.quality_high_after
    return {k: [j for j, b in done.items() if j != k and inside(a, b) and inside(b, a)] for k, a in done.items()}


def every_strategy(scenario: Scenario, budget: Budget, *, protect: list[str] | None = None,
                   min_cap: int | None = None, min_family_share: dict[str, float] | None = None,
                   catalog: StatsCatalog | None = None) -> dict[str, tuple[TrimResult | None, str | None]]:
    """Every strategy on one budget with the same protection and guardrails (the protected
    components are kept whole by every strategy that scales rows): strategy -> (result, None) or
    (None, why it could not)."""
    out: dict[str, tuple[TrimResult | None, str | None]] = {}
    for k in STRATEGIES:
        if k == "protect" and not protect:
            out[k] = (None, "nothing to protect selected")
            continue
        try:
            out[k] = (trim(scenario, budget, k, protect=protect, min_cap=min_cap, min_family_share=min_family_share,
                           catalog=catalog), None)
        except PlannerInputError as exc:
            out[k] = (None, str(exc))
    return out


def kept_quality_of(plan: Plan | Figures, full: Plan, cat: StatsCatalog | None, reuse: Reuse | None = None):
    """quality_of(plan, full's serving workload); of a step's Figures (a scenario of `full`'s with other
    rows or another cap), what quality_of gives the step's full plan, from the same figures without
    planning it: each component's training tokens in the mix's order, `full`'s harness and target,
    the reference counted under the step's cap (tests/unit/planner/decisions/test_trim_quality.py)."""
    if isinstance(plan, Plan):
        return quality_of(plan, full.quality.workload)
    from planner.phases.quality import quality
    st, fq, step = plan.storage, full.quality, plan.scenario
    tokens: dict[str, float] = {}
    for m, w in zip(st.mix, st.works, strict=True):
        tokens[m.family] = tokens.get(m.family, 0.0) + w.conversation_tokens
    context = {**fq.context(), "reference": counted_reference_tokens(step, cat, st.eff, fq.drafter, reuse)}
    return quality(fq.drafter, tokens, epochs=step.training.epochs, regenerated=step.regenerate,
                   workload=fq.workload, transfer=step.quality.domain_transfer, **context)


def quality_of(plan: Plan, workload: dict[str, float]):
    """The expected quality of `plan`'s mix for a given serving workload."""
    from planner.phases.quality import quality
    tokens: dict[str, float] = {}
    for c in plan.components:
        tokens[c.family] = tokens.get(c.family, 0.0) + c.training_tokens
    s = plan.scenario
    return quality(plan.quality.drafter, tokens, epochs=s.training.epochs, regenerated=s.regenerate, workload=workload,
                   transfer=s.quality.domain_transfer, **plan.quality.context())


def _no_rows_left(upper: dict[str, int], limits, run, strategy: str, unit: int = 1) -> TrimInfeasible:
    """A budget so small that no row is left: an empty mix is no answer. Names the budget that one
    row of the cheapest component already exceeds, and by how much."""
    best = None   # (largest use/limit over the budgets, budget, limit, label, component, use)
    for i in (i for i, u in upper.items() if u > 0):
        # one row, or one capture batch where the pipeline drops a last partial batch
        p = run({j: unit * int(j == i) for j in upper})
        uses = [(metric(p, n) / lim, n, lim, label, i, metric(p, n)) for n, lim, label in limits]
        worst = max(uses, key=lambda u: u[0])
        if best is None or worst[0] < best[0]:
            best = worst
    assert best is not None   # trim calls this only where some component has rows (any(upper.values()))
    share, n, lim, label, cid, used = best
    what = "one row" if unit == 1 else f"one capture batch ({unit} rows)"
    if share <= 1 + 1e-12:
        return TrimInfeasible(f"budget.{n}", label, f"the {strategy} strategy leaves no rows, though {what} of "
                                                    f"{cid} alone would fit; give a larger budget or a smaller mix")
    return TrimInfeasible(f"budget.{n}", label, f"not one row fits: {what} of {cid} alone needs {_fmt(n, used)}, "
                                                f"{_fmt(n, used - lim)} over the budget")


def _protected_ids(names: list[str], upper: dict[str, int], cat: StatsCatalog | None) -> set[str]:
    out = set()
    for name in filter(None, (n.strip() for n in names)):
        if name in upper:
            out.add(name)
            continue
        fam = {i for i in upper if cat and i in cat.components and cat.components[i].family == name}
        if not fam:
            families = sorted({cat.components[i].family for i in upper if cat and i in cat.components})
            raise PlannerInputError("protect", name, f"name a component of the mix ({', '.join(upper)}) "
                                                     f"or a family ({', '.join(families)})")
        out |= fam
    return out


def _floors(upper: dict[str, int], protected: set[str], shares: dict[str, float], cat) -> dict[str, int]:
    """The rows each component keeps at least: all of a protected one, ceil(F x rows) of a family's."""
    from planner.ids import FAMILIES
    for fam, share in shares.items():
        if fam not in FAMILIES:
            raise PlannerInputError("min_family_share", fam, f"a family: {', '.join(FAMILIES)}")
        if not (isinstance(share, (int, float)) and 0 <= share <= 1):
            raise PlannerInputError(f"min_family_share.{fam}", share, "a share from 0 to 1")
    family = {i: (cat.components[i].family if cat and i in cat.components else "general") for i in upper}
    return {i: (u if i in protected else math.ceil(shares.get(family[i], 0.0) * u)) for i, u in upper.items()}


def _value(upper, floor, weights, limits, full: Plan, run, fits):
    """max sum w_j log(1+x_j) s.t. sum_j a_kj x_j <= B_k, 0 <= x_j <= U_j, through the dual:
    x_j(lambda) = clip(w_j / sum_k lambda_k a_kj - 1, 0, U_j), each lambda_k found by bisection
    (cyclically) as the smallest that meets its budget. a_kj is each component's marginal cost
    per row at the full mix, from plan() with the component removed."""
    ids = list(upper)
    free = [i for i in ids if floor[i] < upper[i]]
    a = _marginal_costs(upper, limits, full, run)
    fixed = [i for i in ids if i not in free]
    budget = [lim - sum(a[i][k] * upper[i] for i in fixed) for k, (_, lim, _) in enumerate(limits)]
    lam = [0.0] * len(limits)

    def x_of(lmb):
        out = {}
        for i in free:
            price = sum(lmb[k] * a[i][k] for k in range(len(limits)))
            w = weights.get(i, 1.0)
            out[i] = upper[i] if price <= 0 else min(max(w / price - 1.0, floor[i]), upper[i])
        return out

    def load(k, x):
        return sum(a[i][k] * x[i] for i in free)

    for _ in range(40):
        changed = False
        for k in range(len(limits)):
            def meets(lk: float, k: int = k) -> bool:
                return load(k, x_of([*lam[:k], lk, *lam[k + 1:]])) <= budget[k]
            new = _smallest_price(meets)
            if abs(new - lam[k]) > 1e-12 * max(1.0, abs(lam[k])):
                changed = True
            lam[k] = new
        if not changed:
            break
    x = x_of(lam)
    target = {i: (upper[i] if i in fixed else max(floor[i], int(math.floor(x[i])))) for i in ids}
    return _fit_down(target, floor, run, fits)


def _smallest_price(meets: Callable[[float], bool]) -> float:
    """The smallest dual price lambda_k >= 0 at which its budget is met (`meets`, monotone): 0 where it is
    met for free; else an upper end found by x4 steps (to 1e300), then 100 bisection steps."""
    if meets(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while not meets(hi):
        hi *= 4
        if hi > 1e300:
            break
    for _ in range(100):
        mid = (lo + hi) / 2
        if meets(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _marginal_costs(upper, limits, full: Plan, run) -> dict[str, list[float]]:
    """Each component's cost per row in every budget at the full mix (plan() with it removed)."""
    a = {}
    for i in upper:
        if upper[i] == 0:
            a[i] = [0.0] * len(limits)
            continue
        without = run({j: (0 if j == i else upper[j]) for j in upper})
        a[i] = [max((metric(full, n) - metric(without, n)) / upper[i], 1e-300) for n, _, _ in limits]
    return a


def _fit_down(target: dict[str, int], floor: dict[str, int], run, fits) -> tuple[dict[str, int], Plan | Figures]:
    """`target` if the real plan fits, else its free part scaled down (bisection) until it does:
    the linearised costs are exact for storage, approximate for time and dollars."""
    ids = list(target)
    p = run(target)
    if fits(p):
        return target, p
    lo, hi = 0.0, 1.0
    for _ in range(_bisect_steps(target)):
        mid = (lo + hi) / 2
        trial = {i: max(floor[i], int(math.floor(mid * target[i]))) for i in ids}
        if fits(run(trial)):
            lo = mid
        else:
            hi = mid
    final = {i: max(floor[i], int(math.floor(lo * target[i]))) for i in ids}
    return final, run(final)


def _best_step(costs, x: dict[str, int], room: list[float], lims: list[float], gain_of):
    """The next step of the greedy search: of each component's next step (at most its `step` rows, up
    to its upper rows) that fits the room left in every budget, the one with the most tau gained
    (`gain_of(i, n)`) per share of the budget it uses most; None where no step fits."""
    best, best_gain = None, 0.0
    fits_in = [r * (1 + 1e-12) for r in room]
    for i, a_i, u_i, step_i in costs:
        if x[i] >= u_i:
            continue
        n = min(step_i, u_i - x[i])
        use = [c * n for c in a_i]
        if any(u > r for u, r in zip(use, fits_in, strict=True)):
            continue
        gain = gain_of(i, n)
        cost = max(u / lim for u, lim in zip(use, lims, strict=True))
        score = gain / cost if cost > 0 else math.inf
        if best is None or score > best_gain:
            best, best_gain = (i, n, use), score
    return best


def _quality_greedy(upper, floor, limits, full: Plan, run, fits) -> tuple[dict[str, int], Plan | Figures]:
    """max expected tau under linear budgets: from the rows every component keeps (floor), add the step
    (1/64 of a component's rows) with the most tau per unit of the budget it uses most, while it
    fits; the serving workload stays the full mix's (or the scenario's), so a trimmed family still
    counts for what is served."""
    from planner.phases.quality import tau_function
    s = full.scenario
    q = full.quality
    # tabulated once per plan object (Plan.worked_out): every argument is the full plan's, and plan()
    # hands the same full plan to the next trim of the scenario
    tau = full.worked_out(("tau_function",), lambda: tau_function(
        q.drafter, epochs=s.training.epochs, regenerated=s.regenerate, workload=q.workload,
        transfer=s.quality.domain_transfer, **q.context()))
    comp = {c.id: c for c in full.components}
    per_row = {i: (comp[i].training_tokens / upper[i] if upper[i] else 0.0) for i in upper}
    fam = {i: comp[i].family for i in upper}
    a = _marginal_costs(upper, limits, full, run)
    room = [lim - sum(a[i][k] * floor[i] for i in upper) for k, (_, lim, _) in enumerate(limits)]
    x = dict(floor)

    def tokens(rows):
        out: dict[str, float] = {}
        for i, r in rows.items():
            out[fam[i]] = out.get(fam[i], 0.0) + r * per_row[i]
        return out
    members: dict[str, list[str]] = {}
    for i in x:
        members.setdefault(fam[i], []).append(i)

    def tokens_with(now: dict[str, float], component: str, rows: int) -> dict[str, float]:
        """tokens(x with `rows` more rows of `component`), to the bit: only its family is summed again, in
        the same order."""
        out, f = dict(now), fam[component]
        total = 0.0
        for j in members[f]:
            total = total + (x[j] + rows * (j == component)) * per_row[j]
        out[f] = total
        return out
    step = {i: max(1, -(-upper[i] // QUALITY_STEPS)) for i in upper}
    now = tokens(x)
    current = tau(now)
    lims = [lim for _, lim, _ in limits]
    costs = [(i, a[i], upper[i], step[i]) for i in upper]
    while True:
        best = _best_step(costs, x, room, lims,
                          lambda i, n, now=now, current=current: tau(tokens_with(now, i, n)) - current)
        if best is None:
            break
        i, n, use = best
        x[i] += n
        room = [r - u for r, u in zip(room, use, strict=True)]
        now = tokens(x)
        current = tau(now)
    return _fit_down(x, floor, run, fits)
