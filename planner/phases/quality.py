"""Phase 6: what the drafter is expected to gain from the mix, the other side of the tradeoff. An
ESTIMATE on a few published points (planner/presets/quality.yaml, each cited there).

For a drafter kind, a data-scaling series gives a saturating curve of the acceptance length
    tau(D) = 1 + A D / (D + D_half)          (D: training tokens)
and its full-data reference run gives each domain's level tau_ref[d]. A domain d of the serving
workload then reaches
    tau_d = 1 + (tau_ref[d] - 1) x s(D'_d) / s(D_ref),   s(D) = D / (D + D_half)
where D'_d = D_d + transfer x (D - D_d) counts the domain's own training tokens fully and the other
domains' at `transfer` (a domain with no data is worse, not zero), in reference-epoch equivalents:
D x g(E) / g(E_ref), g(E) = 1 + R* (1 - exp(-(E - 1) / R*)) (Muennighoff et al. 2023, eq. 5). A mix
whose responses are not regenerated loses the regeneration gain (the references regenerated).
The workload-weighted tau is sum_d w_d tau_d; speedup = a tau + b from the same paper's pairs,
never below tau / (1 + c) with c that paper's mean per-cycle overhead.

Where it is served (planner/phases/harness.py): each domain's paper-harness tau becomes the engine's tau
at its temperature and K (the chain rule with an acceptance factor fitted on published pairs), and
the band widens by the leave-one-source-out spread of those pairs. The speedup is given at the
serving batch, and the payback uses the speedup at the fleet's batch (the same module's batch rule),
each divided by the cycle's cost as the target is served (planner/phases/serving.py: an MoE verify step's
experts, tensor parallelism, SGLang's tree) against the pairs' dense target at TP 1; nothing clamps it
at 1, and a band below 1x is said to be a slowdown (served_speedup, slowdown_finding).

The reference run gets its own levels: each domain's reference tokens are the reference mix's own
tokens of that family plus `transfer` x the rest (the same rule a mix gets), counted as the plan
counts them (after the layout's cap) when the plan passes them.

The target: the levels were measured on the reference run's target; another target of P parameters
takes them x (P / P_ref)^beta, beta the mean slope of ln tau on ln P over the drafter kind's published
same-data series at T = 0 (quality.yaml target_size, target_term), the band from every series' slope,
widened on both sides by 1 + |ln(P / P_edge)| outside the sizes they cover.

The band: the curve re-fitted through the points moved by their reading error either way, the
low side the larger regeneration gain, both sides the target term's; it widens by 1 + |ln(D / D_edge)|
outside the range of the published points (extrapolation). Where it is served, the low end reaches at
least tau - 1 x (1 - drafter_spread) of the served centre: the drafters users train and serve land up to
that far below one trained like the reference run (quality.yaml drafter_spread, fitted by
bench/fidelity.py on its fit sources only, never on the reports it scores).
"""
from __future__ import annotations

import functools
import math
import statistics
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict, Field, model_validator

from planner.catalog.paths import SHIPPED_CATALOG, load_shipped_yaml
from planner.errors import PlannerInputError
from planner.findings import Finding, finding
from planner.ids import FAMILIES
from planner.phases.assumption_rows import Assumption, paired
from planner.phases.harness import fitted, harness_assumptions, max_tree_tokens, resolve, speedup_at
from planner.phases.serving import ServedCost, served_assumption
from planner.presets.specs import ModelSpec, load_preset, model_presets
from planner.scenario import Scenario


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _Sized(_Strict):
    """Samples sized by catalog components or by tokens per sample (tokens_of takes one of them)."""
    component: str | list[str] | None = None
    tokens_per_sample: float | None = None

    @model_validator(mode="after")
    def _one_size(self) -> _Sized:
        if self.component is None and self.tokens_per_sample is None:
            raise ValueError("needs component or tokens_per_sample")
        return self


class Point(_Sized):
    label: str
    samples: int | list[int]
    component: str | list[str] | None = None     # catalog components whose mean tokens size a sample
    tokens_per_sample: float | None = None       # or an estimate
    tau: float
    error: float = Field(ge=0)
    source: str


class Scaling(_Strict):
    source: str
    points: list[Point] = Field(min_length=2)
    fitted: dict[str, float]


class Reference(_Sized):
    label: str
    samples: int | list[int]
    component: str | list[str] | None = None
    tokens_per_sample: float | None = None
    tokens_source: str | None = None
    epochs: float
    epochs_source: str
    regenerated: bool
    target: str | None = None                    # the target model the levels were measured on
    families: list[str] | None = None            # the families its data covered (None: its components')
    families_source: str | None = None


class Level(_Strict):
    tau: float = Field(gt=1)
    source: str


class Speedup(_Strict):
    source: str
    target: str          # the dense target the pairs were measured on (a model preset id): planner/phases/serving.py
    pairs: list[tuple[float, float]] = Field(min_length=2)
    fitted: dict[str, float]


class Valued(_Strict):
    value: float
    range: list[float] | None = None
    source: str


class Ranged(Valued):
    range: list[float]          # a value whose range the planner reads (its band)


class DrafterQuality(_Strict):
    name: str
    scaling: Scaling
    reference: Reference
    domains: dict[str, Level]
    speedup: Speedup
    epoch_saturation: Valued


class SizeSeries(_Strict):
    id: str
    source: str                                  # the publication (leave-one-source-out drops it)
    drafter: str
    temperature: float = 0.0
    spread_only: bool = False                    # in the band, not in beta
    points: list[tuple[str, float, float]] = Field(min_length=2)   # (target, params in billions, tau)
    cite: str


class TargetSize(_Strict):
    source: str
    series: list[SizeSeries]


class DrafterSpread(_Strict):
    """How far below a reference-trained drafter the drafters users train and serve land: the share of
    tau - 1 they may lose, fitted on `fit_sources` only (bench/fidelity.py fit_drafter_spread)."""
    value: float = Field(ge=0, lt=1)
    fit_sources: list[str] = Field(min_length=1)
    source: str


class QualityPresets(_Strict):
    families: list[str]
    transfer: Valued
    regeneration: Ranged
    target_size: TargetSize
    drafter_spread: DrafterSpread
    drafters: dict[str, DrafterQuality]


def pairs_target(kind: str) -> ModelSpec:
    """The dense target the drafter kind's (tau, speedup) pairs were measured on: its curve's speedup
    `target` (quality.yaml), so a new drafter kind is its curve and nothing else (planner/phases/serving.py)."""
    return model_presets()[quality_presets().drafters[kind].speedup.target]


@functools.cache
def quality_presets() -> QualityPresets:
    q = QualityPresets(**load_preset("quality.yaml"))
    if tuple(q.families) != FAMILIES:
        raise ValueError(f"quality.yaml families {q.families} must be planner.ids.FAMILIES {FAMILIES}")
    for kind, d in q.drafters.items():
        if sorted(d.domains) != sorted(q.families):
            raise ValueError(f"quality.yaml {kind}: domains {sorted(d.domains)} must be the families {q.families}")
    check_size_series(q)
    return q


def check_size_series(q: QualityPresets) -> None:
    """Each target-size series names a drafter kind, positive sizes (two at least, distinct) and tau >= 1."""
    for s in q.target_size.series:
        if s.drafter not in q.drafters:
            raise ValueError(f"quality.yaml target_size {s.id}: drafter {s.drafter!r} is not one of "
                             f"{sorted(q.drafters)}")
        if any(not (p > 0 and t >= 1) for _, p, t in s.points) or len({p for _, p, _ in s.points}) < 2:
            raise ValueError(f"quality.yaml target_size {s.id}: points need two or more distinct sizes > 0 "
                             f"and tau >= 1, got {s.points}")


@functools.cache
def _shipped_components() -> dict[str, tuple[float, str]]:
    """The shipped catalog's (mean tokens per conversation, family) per component
    (datasets_meta/components.yaml), the one place those figures are written."""
    data = load_shipped_yaml(SHIPPED_CATALOG)
    return {c["id"]: (float(c["mean_tokens"]["value"]), c["family"]) for c in data["components"]}


def _catalog_mean_tokens() -> dict[str, float]:
    return {k: v[0] for k, v in _shipped_components().items()}


def reference_tokens(kind: str, mean_of=None) -> dict[str, float]:
    """The reference run's training tokens per family: its components' rows x `mean_of(component)`
    (the plan passes the catalog's mean after the layout's cap; default the shipped catalog's mean),
    or its tokens split evenly over the families its data covered."""
    r = quality_presets().drafters[kind].reference
    out = {f: 0.0 for f in FAMILIES}
    if r.component is not None:
        names = r.component if isinstance(r.component, list) else [r.component]
        counts = r.samples if isinstance(r.samples, list) else [r.samples]
        shipped = _shipped_components()
        for n, c in zip(counts, names, strict=True):
            mean = mean_of(c) if mean_of is not None else None
            out[family_of(shipped[c][1])] += n * (shipped[c][0] if mean is None else mean)
        return out
    fams = r.families or list(FAMILIES)
    total = tokens_of(r.samples, None, r.tokens_per_sample)
    for f in fams:
        out[f] += total / len(fams)
    return out


def _reference_effective(kind: str, ref: dict[str, float] | None, t: float) -> dict[str, float]:
    """Each domain's reference tokens under the transfer rule: its own + t x the others'. A reference
    the caller's cap leaves nothing of (a cap shorter than every row) is counted as shipped; a domain
    the reference had no data for, with no transfer, at the reference's total (its level was
    measured without data of its own)."""
    if ref is None or not sum(ref.values()) > 0:
        ref = reference_tokens(kind)
    total = sum(ref.values())
    out = {f: ref[f] + t * (total - ref[f]) for f in FAMILIES}
    return {f: v if v > 0 else total for f, v in out.items()}


def tokens_of(samples: int | list[int], component: str | list[str] | None, tokens_per_sample: float | None) -> float:
    counts = samples if isinstance(samples, list) else [samples]
    if component is not None:
        names = component if isinstance(component, list) else [component]
        means = _catalog_mean_tokens()
        return float(sum(n * means[c] for n, c in zip(counts, names, strict=True)))
    assert tokens_per_sample is not None    # Point / Reference (_Sized): one of component, tokens_per_sample
    return float(sum(counts) * tokens_per_sample)


def fit_curve(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(A, D_half) of tau = 1 + A D / (D + D_half) through two points (closed form); with more,
    the two at the ends of the range (the middle ones are read off charts and only bound it)."""
    (d1, t1), (d2, t2) = sorted(points)[0], sorted(points)[-1]
    y1, y2 = t1 - 1, t2 - 1
    x, r = d2 / d1, y2 / y1
    if not 1 < r < x:
        raise ValueError(f"points ({d1:g}, {t1:g}) and ({d2:g}, {t2:g}) do not rise and saturate")
    h = x * (1 - r) / (r - x) * d1
    return y1 * (d1 + h) / d1, h


def fit_speedup(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """Least squares speedup = a tau + b."""
    n = len(pairs)
    mt = sum(t for t, _ in pairs) / n
    ms = sum(s for _, s in pairs) / n
    a = sum((t - mt) * (s - ms) for t, s in pairs) / sum((t - mt) ** 2 for t, _ in pairs)
    return a, ms - a * mt


def epoch_equivalent(epochs: float, saturation: float) -> float:
    """g(E): how many epochs' worth of new data E passes over the same data are (E < 1: a fraction)."""
    if epochs <= 1:
        return epochs
    return 1 + saturation * (1 - math.exp(-(epochs - 1) / saturation))


def series_beta(points: list[tuple[str, float, float]]) -> float:
    """beta of one size series: the least-squares slope of ln tau on ln params (two points:
    ln(tau_b / tau_a) / ln(P_b / P_a))."""
    xs = [math.log(p) for _, p, _ in points]
    ys = [math.log(t) for _, _, t in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


class TargetTerm(BaseModel):
    factor: float = 1.0                          # tau multiplier (P / P_ref)^beta
    low: float = 1.0                             # the band's multipliers
    high: float = 1.0
    beta: float = 0.0
    basis: str = ""                              # what the term rests on ("" for the reference's target)
    extrapolated: bool = False


UNKNOWN_SIZE_RATIO = 10.0   # a target of unknown size: the band of a 10x size step (7B to 70B, the
#                             widest step the series publish), on both sides


@functools.cache
def _size_series(kind: str, leave_out: tuple[str, ...]):
    """quality.yaml's target_size series without `leave_out`'s: every one, this kind's, this kind's at
    temperature 0 fitted on, and every kind's at temperature 0 (pooled where the kind has none)."""
    every = [s for s in quality_presets().target_size.series if s.source not in leave_out]
    own = [s for s in every if s.drafter == kind]
    fit = [s for s in own if s.temperature == 0 and not s.spread_only]
    pooled = [s for s in every if s.temperature == 0 and not s.spread_only]
    return every, own, fit, pooled


def size_fit(kind: str, leave_out: tuple[str, ...] = ()) -> tuple[float, float, float, tuple[float, ...], str]:
    """(beta, how far the band's slopes reach below and above it, the published sizes in billions,
    what beta rests on) for a drafter kind from quality.yaml target_size, without the `leave_out`
    publications' series."""
    every, own, fit, pooled = _size_series(kind, leave_out)
    used = fit or pooled
    beta = statistics.fmean(series_beta(s.points) for s in used) if used else 0.0
    betas = [series_beta(s.points) for s in (own if len(own) >= 2 else every)] or [beta]
    sizes = tuple(p for s in (own or every) for _, p, _ in s.points)
    name = quality_presets().drafters[kind].name
    whose = (f"{len(fit)} published series of {name}" if fit else
             f"no published series of {name}: every kind's {len(pooled)}")
    return beta, max(0.0, beta - min(betas)), max(0.0, max(betas) - beta), sizes, whose


def target_term(kind: str, target: str | None, target_params: float | None = None,
                leave_out: tuple[str, ...] = ()) -> TargetTerm:
    """How tau moves from the reference run's target to `target` (params in units, None: the
    models.yaml preset's) at the same data: tau x (P / P_ref)^beta (quality.yaml target_size). The
    series of the `leave_out` publications are left out (bench/fidelity.py)."""
    from planner.presets.specs import model_presets
    q = quality_presets()
    ref = q.drafters[kind].reference.target
    # the name alone stands for the reference's target only when no size is given: a custom model
    # may carry the reference's name at another size
    if target is None or ref is None or (target == ref and target_params is None):
        return TargetTerm()
    models = model_presets()
    p_ref = models[ref].params / 1e9
    size = target_params if target_params is not None else (models[target].params if target in models else None)
    if size is not None and size / 1e9 == p_ref:   # the reference's size: no term
        return TargetTerm()
    beta, lo_dev, hi_dev, sizes, whose = size_fit(kind, leave_out)
    if size is None:
        ln_r = math.log(UNKNOWN_SIZE_RATIO)     # either way: larger or smaller than the reference's
        ends = [math.exp(x * ln_r) for x in (beta - lo_dev, beta + hi_dev, lo_dev - beta, -beta - hi_dev)]
        return TargetTerm(low=min(ends + [1.0]), high=max(ends + [1.0]), beta=beta, extrapolated=True,
                          basis=f"{target}'s size is not known: no size term, the band of a "
                                f"{UNKNOWN_SIZE_RATIO:g}x size step either way ({whose})")
    p = size / 1e9
    widen = 1 + max(0.0, math.log(min(sizes) / p), math.log(p / max(sizes)))
    ln_r = math.log(p / p_ref)
    a, b = math.exp((beta - lo_dev * widen) * ln_r), math.exp((beta + hi_dev * widen) * ln_r)
    basis = (f"tau x {p:.3g}B / {p_ref:.3g}B ({ref}) ^ {beta:+.4f} = x{math.exp(beta * ln_r):.3f} "
             f"(band x{min(a, b):.3f}-{max(a, b):.3f}), beta from {whose}")
    if widen > 1:
        basis += (f"; {p:.3g}B lies outside the {min(sizes):.3g}-{max(sizes):.3g}B they cover, so the band "
                  f"widens by {widen:.2f} on both sides")
    return TargetTerm(factor=math.exp(beta * ln_r), low=min(a, b), high=max(a, b), beta=beta, basis=basis,
                      extrapolated=widen > 1)


class QualityPlan(BaseModel):
    drafter: str
    acceptance_length: float
    acceptance_low: float
    acceptance_high: float
    speedup: float
    speedup_low: float
    speedup_high: float
    per_domain: dict[str, float]
    per_domain_low: dict[str, float] = {}
    per_domain_high: dict[str, float] = {}
    workload: dict[str, float]                 # serving shares per family (normalised)
    training_tokens: dict[str, float]          # the mix's training tokens per family
    effective_tokens: float = 0.0              # all of them in the reference's epoch equivalents
    extrapolated: bool = False                 # outside the published points' range
    payback_days: float | None = None
    eval_engine: str = "paper"                 # where tau is measured (planner/phases/harness.py)
    temperature: float = 0.0
    num_speculative_tokens: int | None = None
    harness: str = ""                          # the label: engine, K, temperature
    serving_batch: float = 1.0                 # the batch speedup is given at
    fleet_batch: float = 1.0                   # the batch the payback uses
    payback_speedup: float | None = None       # the speedup at the fleet's batch
    reference_tokens: dict[str, float] = Field(default_factory=dict, exclude=True)
    # the target model (another than the reference's: quality.yaml target_size)
    target: str | None = None
    # its size (the plan passes the model's own; None: the models.yaml preset's)
    target_params: float | None = Field(None, exclude=True)
    target_factor: float = 1.0                 # the tau multiplier of the target's size (target_term)
    target_factor_low: float = 1.0             # its band (target_term's low and high)
    target_factor_high: float = 1.0
    points: list | None = Field(None, exclude=True)   # the user's own runs (Scenario quality.points)
    serving_gpu: str | None = None
    # vLLM's and SGLang's acceptance rate of this tau, with its band (acceptance_rate below)
    acceptance_rate: float = 0.0
    acceptance_rate_low: float = 0.0
    acceptance_rate_high: float = 0.0
    acceptance_rate_basis: str = ""
    topk: int = 1                              # SGLang's tree (1: a chain)
    num_draft_tokens: int | None = None        # tokens a sequence the verify step carries (K + 1 on a chain)
    serving_tp: int = 1
    # the cycle's cost against the dense TP-1 pairs' (planner/phases/serving.py)
    served_cost: float = 1.0
    served_cost_basis: str = ""
    payback_speedup_low: float | None = None   # the low end of the speedup at the fleet's batch
    served: object = Field(None, exclude=True)        # planner.phases.serving.ServedCost at the serving batch
    fleet_served: object = Field(None, exclude=True)  # ... at the fleet's batch

    def context(self) -> dict:
        """Where this estimate is served and its reference tokens: the keywords quality() and
        tau_function() take, so that a re-estimate of another mix is on the same harness."""
        return dict(engine=self.eval_engine, temperature=self.temperature, k=self.num_speculative_tokens,
                    serving_batch=self.serving_batch, fleet_batch=self.fleet_batch, reference=self.reference_tokens,
                    target=self.target, target_params=self.target_params, points=self.points, topk=self.topk,
                    num_draft_tokens=self.num_draft_tokens if self.topk > 1 else None, served=self.served,
                    fleet_served=self.fleet_served)
    serving_decode_tokens_per_s_per_gpu: float | None = None
    saved_usd_per_day: float | None = None
    sources: list[str] = []
    warnings: list[Finding] = Field(default_factory=list, exclude=True)


def family_of(family: str) -> str:
    """A catalog family, or general for the names older catalogs used (custom, uniform)."""
    return family if family in FAMILIES else "general"


USER_POINT_ERROR = 0.05   # a user's own tau, +-5% of tau - 1: two harness scripts on one engine
#                          agree within about 5% (ROCm/ATOM PR #1881, 2026-08-13)


def to_paper(kind: str, tau: float, engine: str) -> float:
    """A tau measured on `engine` at its usual K and T = 0, as the paper's harness would give it (the
    inverse of planner/phases/harness.py's rule)."""
    from planner.phases.harness import alpha_of, chain_tau
    h = resolve(kind, engine, 0.0, None)
    return chain_tau(min(1.0, alpha_of(tau, h.k) / h.factor), h.depth)


def user_model(kind: str, points: list | None, saturation: float):
    """(points as (tokens, paper tau, error), levels per family, reference tokens) from a user's own
    runs of `kind` (Scenario quality.points; None when there are none): the curve through one
    family's runs when two or more sizes rise and saturate, else the preset's shape; each measured family's level is its
    runs' tau carried to the largest run, the others the preset's levels moved by the measured families'
    mean ratio. Tokens count in epoch equivalents, D x g(E)."""
    mine = [p for p in points or [] if p.drafter == kind]
    if not mine:
        return None
    d = quality_presets().drafters[kind]
    runs = [(p.training_tokens * epoch_equivalent(p.epochs, saturation), to_paper(kind, p.tau, p.eval_engine),
             p.family) for p in mine]
    pts, h, own_curve = _user_curve(runs, d)
    d_ref = max(x for x, _, _ in runs)
    s = lambda x: x / (x + h)  # noqa: E731
    # the shape is trusted for at most the rise of tau - 1 it was measured over (its points' least to
    # largest tokens), `cap`: carried further, s(D) / s(x) grows as D / x without bound below D_half
    # (a run at 2M tokens on the published shape, D_half 69M, would be carried 33x to 1.2B tokens)
    xs = sorted(x for x, _, _ in pts)
    cap = s(xs[-1]) / s(xs[0])
    levels: dict[str, list[float]] = {}
    for x, tau, f in runs:
        levels.setdefault(f, []).append(1 + (tau - 1) * carry(s(d_ref) / s(x), cap))
    mean = {f: sum(v) / len(v) for f, v in levels.items()}
    moved = sum(mean[f] / d.domains[f].tau for f in mean) / len(mean)
    out = {f: mean.get(f, d.domains[f].tau * moved) for f in FAMILIES}
    return pts, out, d_ref, own_curve, cap, (min(x for x, _, _ in runs), d_ref)


def _user_curve(runs: list[tuple[float, float, str]], d) -> tuple[list, float, bool]:
    """The curve's points and half-saturation from the family measured at the most training sizes (one
    family: the levels differ between families, the shape is shared), where they and their error band's
    ends rise and saturate; else the preset's shape. (points, h, whether it is your own curve)."""
    shape = max(FAMILIES, key=lambda f: len({x for x, _, g in runs if g == f}))
    pts = [(x, tau, USER_POINT_ERROR * (tau - 1)) for x, tau, g in runs if g == shape]
    try:
        _, h = fit_curve([(x, tau) for x, tau, _ in pts])
        fit_curve([(sorted(pts)[0][0], sorted(pts)[0][1] - sorted(pts)[0][2]),
                   (sorted(pts)[-1][0], sorted(pts)[-1][1] + sorted(pts)[-1][2])])
        fit_curve([(sorted(pts)[0][0], sorted(pts)[0][1] + sorted(pts)[0][2]),
                   (sorted(pts)[-1][0], sorted(pts)[-1][1] - sorted(pts)[-1][2])])
        return pts, h, True
    except (ValueError, ZeroDivisionError):
        pts = [(tokens_of(p.samples, p.component, p.tokens_per_sample), p.tau, p.error) for p in d.scaling.points]
        _, h = fit_curve([(x, tau) for x, tau, _ in pts])
        return pts, h, False


def carry(ratio: float, cap: float | None) -> float:
    """The shape's factor s(D) / s(x) on tau - 1 from size x to D, at most `cap` (None: unbounded, the
    published model)."""
    return ratio if cap is None else min(ratio, cap)


def _tau_domain(level: float, d_eff: float, d_ref: float, d_half: float, cap: float | None = None) -> float:
    s = lambda d: d / (d + d_half)  # noqa: E731
    if cap is None:
        return 1 + (level - 1) * s(d_eff) / s(d_ref)
    return 1 + (level - 1) * carry(s(d_eff) / s(d_ref), cap)


def _curves(pts: list[tuple[float, float, float]]) -> tuple[float, float, float, float, float]:
    """(D_half, the steeper and the flatter curve's D_half, the points' least and largest tokens) of
    the curve through (tokens, tau, error) points."""
    _, h = fit_curve([(x, tau) for x, tau, _ in pts])
    lo_pts = sorted(pts)
    # the curve through the points moved by their errors either way: steeper (lower on the small
    # side) and flatter
    _, h_steep = fit_curve([(lo_pts[0][0], lo_pts[0][1] - lo_pts[0][2]), (lo_pts[-1][0],
                                                                          lo_pts[-1][1] + lo_pts[-1][2])])
    _, h_flat = fit_curve([(lo_pts[0][0], lo_pts[0][1] + lo_pts[0][2]), (lo_pts[-1][0], lo_pts[-1][1] - lo_pts[-1][2])])
    return h, h_steep, h_flat, lo_pts[0][0], lo_pts[-1][0]


@functools.cache
def _preset_curves(kind: str) -> tuple[float, float, float, float, float]:
    """_curves of a drafter kind's published points (quality.yaml, which ships with the package:
    fitted once per process, not per plan)."""
    d = quality_presets().drafters[kind]
    return _curves([(tokens_of(p.samples, p.component, p.tokens_per_sample), p.tau, p.error)
                    for p in d.scaling.points])


@functools.cache
def _speedup_line(kind: str) -> tuple[float, float, float]:
    """(a, b) of the least-squares speedup = a tau + b over the kind's published pairs, and c, their
    mean tau / speedup - 1 (the floor speedup = tau / (1 + c)): once per process."""
    pairs = quality_presets().drafters[kind].speedup.pairs
    a, b = fit_speedup(pairs)
    return a, b, sum(t_ / s_ - 1 for t_, s_ in pairs) / len(pairs)


# Each engine's acceptance rate as it prints it beside the acceptance length tau (the bonus token counted):
# vLLM: accepted draft tokens / drafted tokens (vllm/v1/spec_decode/metrics.py SpecDecodingLogging.log,
# "Avg Draft acceptance rate", num_accepted_tokens / num_draft_tokens), (tau - 1) / K; SGLang: accepted
# drafts / drafted tokens a round, num_draft_tokens - 1 of them (python/sglang/srt/managers/
# scheduler_metrics_mixin.py log_decode_stats, "accept rate"), (tau - 1) / (n - 1): K on a chain, the
# tree's tokens on a tree. Older SGLang releases (0.5.3, sgl-project/sglang issue #11948's logs) printed
# tau / n instead. The paper's harness: as vLLM.
RATE_BASIS = {
    "vllm": "vLLM's 'Avg Draft acceptance rate': accepted / drafted tokens = (tau - 1) / K "
            "(vllm/v1/spec_decode/metrics.py)",
    "sglang": "SGLang's 'accept rate': accepted drafts / (num_draft_tokens - 1) a round = (tau - 1) / (n - 1) "
              "(python/sglang/srt/managers/scheduler_metrics_mixin.py; releases up to 0.5.3 printed tau / n)",
    "paper": "accepted / drafted tokens = (tau - 1) / K, as vLLM counts it",
}


def acceptance_rate(engine: str, tau: float, k: int, n: int) -> float:
    """The acceptance rate `engine` prints for acceptance length tau at K drafted tokens a step and n
    verified tokens a sequence (RATE_BASIS)."""
    drafted = (n - 1) if engine == "sglang" else k
    return max(0.0, tau - 1) / drafted


def check_tree(kind: str, engine: str, k: int | None, topk: int, n: int | None) -> None:
    """A tree needs an EAGLE drafter (DFlash drafts a block) and at most the tokens SGLang's tree holds
    at the K in force (planner/phases/harness.py max_tree_tokens)."""
    from planner.phases.harness import default_k
    from planner.presets.drafter_kinds import DRAFTER_KINDS
    if topk > 1 and DRAFTER_KINDS.lookup(kind).drafts_blocks:
        raise PlannerInputError("--topk", topk, f"{kind} drafts a block, not a tree: give topk 1")
    if topk > 1 and n is not None:
        kk = default_k(engine, kind) if k is None else k
        if not kk + 1 <= n <= max_tree_tokens(topk, kk):
            raise PlannerInputError("--num-draft-tokens", n, f"between K + 1 = {kk + 1} and "
                                    f"{max_tree_tokens(topk, kk)} (a tree of topk {topk} and K {kk})")


def _tp(sv) -> int:
    return int(getattr(sv, "tp", 1) or 1)


def slowdown_finding(speed: float, low: float, batch: float, h, sv) -> Finding:
    """Where the speedup's band reaches below 1x: say so, and what would lift it."""
    lifts = []
    if h.topk > 1:
        lifts.append(f"a smaller tree (--topk 1, or fewer than {h.n} --num-draft-tokens)")
    if h.k > 1:
        lifts.append(f"fewer draft tokens (--num-speculative-tokens below {h.k})")
    if sv.experts_verify > sv.experts_one * 1.2:
        lifts.append(f"a larger batch (the verify step reads {sv.experts_verify:.0f} experts a layer against "
                     f"{sv.experts_one:.0f} for a one-token step at batch {batch:g}; the gap closes as the batch "
                     "grows)")
    elif batch > 1:
        lifts.append(f"a smaller batch than {batch:g}")
    if _tp(sv) > 1:
        lifts.append(f"a smaller --serving-tp than {_tp(sv)} (fewer all-reduces a step)")
    lifts.append("another engine (--eval-engine), or serving without a drafter")
    where = "is below 1x" if speed < 1 else f"reaches {low:.2f}x"
    return finding("speedup-slowdown", f"speedup: the expected speedup {speed:.2f}x (band {low:.2f}x) {where} at "
                   f"batch {batch:g}: below 1x the drafter makes serving slower than without it. What would lift "
                   "it: " + "; ".join(lifts))


def served_speedup(kind: str, taus: tuple[float, float, float], batch: float, n: int,
                   served: ServedCost) -> tuple[float, float, float]:
    """(speedup, its low and high end) of acceptance lengths (tau, low, high) at `batch` with n tokens a
    sequence verified: the kind's pairs' line a tau + b (never below tau / (1 + c)), kept at the batch by
    planner/phases/harness.py's rule on the n - 1 drafted tokens (with its band past batch 1), divided by the
    cycle's cost as served (planner/phases/serving.py; its band's ends on the band's ends). Never clamped at 1:
    a band below 1x is a slowdown, said so (slowdown_finding)."""
    a, b, c = _speedup_line(kind)
    hp = fitted()

    def at(x: float) -> float:
        return speedup_at(max(a * x + b, x / (1 + c)), batch, n - 1, hp.batch_x_half, hp.batch_p)
    s_lo, s_hi = hp.batch_band if batch > 1 else (0.0, 0.0)
    centre = at(taus[0]) / served.factor
    return (centre, min(centre, at(taus[1]) * math.exp(s_lo) / served.factor_high),
            max(centre, at(taus[2]) * math.exp(s_hi) / served.factor_low))


class _Curve(NamedTuple):
    """What every family's tau is worked out from: the levels, the epochs' scale, the reference's effective
    tokens, the curve's half-saturation (centre, steep and flat ends of its band), the range of the points
    it was fitted on, the carry's cap (your own runs), regeneration's gain, the drafter-quality term, the
    target-size term and the transfer between families."""
    levels: dict[str, float]
    scale: float
    d_ref: dict[str, float]
    h: float
    h_steep: float
    h_flat: float
    d_min: float
    d_max: float
    cap: float | None
    regen_gain: float
    regen_low: float
    spread: float
    tt: TargetTerm
    transfer: float
    own_runs: bool                      # refitted on your own points (user_model)


def _curve(kind: str, *, epochs: float, regenerated: bool, transfer: float, ref_tokens: dict[str, float],
           points: list | None, target: str | None, target_params: float | None, target_leave_out: tuple[str, ...],
           drafter_spread: float | None, warnings: list[Finding]) -> _Curve:
    """The published curve and levels (quality.yaml), or those refitted on your own points, and the
    target-size term; a finding where either is extrapolated."""
    q = quality_presets()
    d = q.drafters[kind]
    sat = d.epoch_saturation.value
    scale = epoch_equivalent(epochs, sat) / epoch_equivalent(d.reference.epochs, sat)
    d_ref = _reference_effective(kind, ref_tokens, transfer)
    levels = {f: d.domains[f].tau for f in FAMILIES}
    user = user_model(kind, points, sat)
    if user is not None:
        # the user's own runs: their curve and levels, tokens in absolute epoch equivalents
        pts, levels, ref_d, own_curve, cap, runs_range = user
        scale = epoch_equivalent(epochs, sat)
        d_ref = {f: ref_d for f in FAMILIES}
        assert points is not None         # user_model finds no runs without points
        warnings.append(finding("quality-extrapolated", f"drafter quality: refitted on your {len(points)} "
                                f"point(s) for {d.name}" + ("" if own_curve else "; they do not rise and saturate, so "
                                                              "the curve keeps the published shape")))
        h, h_steep, h_flat, _, _ = _curves(pts)
        # the band widens with the distance from the runs themselves, not from the shape's points
        d_min, d_max = runs_range
    else:
        cap = None
        h, h_steep, h_flat, d_min, d_max = _preset_curves(kind)
    regen_gain = 1.0 if regenerated or not d.reference.regenerated else 1 / (1 + q.regeneration.value)
    regen_low = 1.0 if regenerated or not d.reference.regenerated else 1 / (1 + q.regeneration.range[1])
    # the drafter as users train and serve it (quality.yaml drafter_spread; your own runs: none)
    spread = (q.drafter_spread.value if drafter_spread is None else drafter_spread) if user is None else 0.0
    # another target than the reference's: tau x (P / P_ref)^beta, with its band (quality.yaml target_size)
    tt = target_term(kind, target, target_params, target_leave_out) if user is None else TargetTerm()
    if tt.basis:
        levels = {f: v * tt.factor for f, v in levels.items()}
        warnings.append(finding("quality-extrapolated", f"drafter quality: the levels were measured on "
                                f"{d.reference.target}; for {target}: {tt.basis}"))
    return _Curve(levels, scale, d_ref, h, h_steep, h_flat, d_min, d_max, cap, regen_gain, regen_low, spread, tt,
                  transfer, user is not None)


def _family_tau(c: _Curve, h_, f: str, tokens: float, total: float) -> tuple[float, float, float, bool]:
    """One family's tau where it is served, its band's low and high ends, and whether its effective
    tokens lie outside the points the curve was fitted on (the band widened)."""
    own = tokens * c.scale
    eff = own + c.transfer * (total * c.scale - own)
    level = c.levels[f]
    if eff <= 0:
        return 1.0, 1.0, 1.0, False
    d_ref, tt = c.d_ref[f], c.tt
    centre = _tau_domain(level, eff, d_ref, c.h) * c.regen_gain
    a = _tau_domain(level, eff, d_ref, c.h_steep) * c.regen_low
    b = _tau_domain(level, eff, d_ref, c.h_flat) * c.regen_gain
    lo_, hi_ = min(a, b, centre) * tt.low / tt.factor, max(a, b, centre) * tt.high / tt.factor
    widen = 1 + max(0.0, math.log(c.d_min / eff), math.log(eff / c.d_max))
    lo_w, hi_w = centre - (centre - lo_) * widen, centre + (hi_ - centre) * widen
    mid = centre
    if c.cap is not None:
        # your runs: the estimate carries the level at most `cap` (user_model); the band keeps the
        # shape's uncapped carry widened with the distance from your runs, and holds the capped
        # estimate; above your largest run its floor is your level kept flat (no rise)
        mid = _tau_domain(level, eff, d_ref, c.h, c.cap) * c.regen_gain
        lo_w = min(mid, level * c.regen_gain) if eff > c.d_max else min(lo_w, mid)
        hi_w = max(hi_w, mid)
    # on the paper's harness, then where it is served (with that transfer's own band)
    per = h_.tau(mid)
    # the low end: the lower of the curve's and harness's band and the drafter-quality term, the
    # served centre's tau - 1 x (1 - drafter_spread) (a drafter trained or served as users do)
    low = max(1.0, min(h_.tau(max(1.0, lo_w)) * math.exp(h_.log_low), 1 + (per - 1) * (1 - c.spread)))
    high = min(h_.k + 1.0, h_.tau(hi_w) * math.exp(h_.log_high))
    return per, low, high, widen > 1


def _shares(tokens: dict[str, float], workload: dict[str, float] | None) -> dict[str, float]:
    """What is served, by family: the workload given, or the mix's own tokens."""
    total = sum(tokens.values())
    if workload is None:
        return {f: (tokens[f] / total if total else 1.0 / len(FAMILIES)) for f in FAMILIES}
    s = sum(workload.values())
    return {f: workload.get(f, 0.0) / s for f in FAMILIES}


def quality(kind: str, tokens_by_family: dict[str, float], *, epochs: float, regenerated: bool,
            workload: dict[str, float] | None, transfer: float | None = None, engine: str = "paper",
            temperature: float = 0.0, k: int | None = None, serving_batch: float = 1.0,
            fleet_batch: float = 1.0, reference: dict[str, float] | None = None,
            target: str | None = None, points: list | None = None, target_params: float | None = None,
            target_leave_out: tuple[str, ...] = (), topk: int = 1, num_draft_tokens: int | None = None,
            served=None, fleet_served=None, drafter_spread: float | None = None) -> QualityPlan:
    """Expected acceptance length and speedup for `tokens_by_family` training tokens (module docstring).
    `reference`: the reference run's tokens per family as the caller counts tokens (reference_tokens).
    `target_params`: the target's size (None: its models.yaml preset's); `target_leave_out`: the
    publications left out of the target-size fit (bench/fidelity.py's leave-one-source-out).
    `topk`, `num_draft_tokens`: SGLang's tree; `served`, `fleet_served`: the cycle's cost as the target
    runs it at the serving and the fleet's batch (planner/phases/serving.py ServedCost; None: a dense target at TP 1).
    `drafter_spread`: the drafter-quality term in place of quality.yaml's (bench/fidelity.py's refit)."""
    q = quality_presets()
    d = q.drafters[kind]
    check_tree(kind, engine, k, topk, num_draft_tokens)
    warnings: list[Finding] = []
    t = q.transfer.value if transfer is None else transfer
    tokens = {f: 0.0 for f in FAMILIES}
    for f, v in tokens_by_family.items():
        tokens[family_of(f)] += v
    total = sum(tokens.values())
    shares = _shares(tokens, workload)
    ref_tokens = reference if reference is not None else reference_tokens(kind)
    h_ = resolve(kind, engine, temperature, k, topk, num_draft_tokens)
    c = _curve(kind, epochs=epochs, regenerated=regenerated, transfer=t, ref_tokens=ref_tokens, points=points,
               target=target, target_params=target_params, target_leave_out=target_leave_out,
               drafter_spread=drafter_spread, warnings=warnings)
    per, low, high = {}, {}, {}
    extrapolated = False
    for f in FAMILIES:
        per[f], low[f], high[f], widened = _family_tau(c, h_, f, tokens[f], total)
        extrapolated |= widened
    tau = sum(shares[f] * per[f] for f in FAMILIES)
    tau_low = sum(shares[f] * low[f] for f in FAMILIES)
    tau_high = sum(shares[f] * high[f] for f in FAMILIES)
    if extrapolated:
        warnings.append(finding("quality-extrapolated", f"drafter quality: the mix's training tokens lie outside the "
                                f"{'runs you measured' if c.own_runs else 'published points'} for {d.name} "
                                f"({c.d_min / 1e6:,.0f}M-{c.d_max / 1e6:,.0f}M tokens): the band is wide"))
    speed, pay, rate, sv = _speedups(kind, engine, h_, (tau, tau_low, tau_high), serving_batch, fleet_batch, served,
                                     fleet_served, warnings)
    tt = c.tt
    return QualityPlan(
        drafter=kind, acceptance_length=tau, acceptance_low=tau_low, acceptance_high=tau_high,
        speedup=speed[0], speedup_low=speed[1], speedup_high=speed[2], per_domain=per, per_domain_low=low,
        per_domain_high=high, workload=shares, training_tokens=tokens, effective_tokens=total * c.scale,
        extrapolated=extrapolated, eval_engine=engine, temperature=temperature, num_speculative_tokens=h_.k,
        harness=h_.label, serving_batch=serving_batch, fleet_batch=fleet_batch,
        payback_speedup=pay[0], payback_speedup_low=min(pay[0], pay[1]), reference_tokens=ref_tokens, target=target,
        points=points, target_params=target_params, target_factor=tt.factor, target_factor_low=tt.low,
        target_factor_high=tt.high, acceptance_rate=rate[0], acceptance_rate_low=rate[1],
        acceptance_rate_high=rate[2], acceptance_rate_basis=RATE_BASIS[engine], topk=h_.topk,
        num_draft_tokens=h_.n, serving_tp=_tp(sv), served_cost=sv.factor, served_cost_basis=sv.basis,
        served=served, fleet_served=fleet_served, sources=_sources(kind), warnings=warnings)


def _speedups(kind: str, engine: str, h_, taus: tuple[float, float, float], serving_batch: float,
              fleet_batch: float, served, fleet_served, warnings: list[Finding]):
    """The speedup as served (centre, low, high), the fleet's payback speedup, the acceptance rate
    (centre, low, high) and the served cost used; a finding where served or a slowdown."""
    sv = served or ServedCost()
    speed = served_speedup(kind, taus, serving_batch, h_.n, sv)
    pay = served_speedup(kind, taus, fleet_batch, h_.n, fleet_served or ServedCost())
    rate = tuple(acceptance_rate(engine, x, h_.k, h_.n) for x in taus)
    if sv.basis:
        warnings.append(finding("quality-served", f"speedup as served: {sv.basis}"))
    if speed[1] < 1:
        warnings.append(slowdown_finding(speed[0], speed[1], serving_batch, h_, sv))
    return speed, pay, rate, sv


def _sources(kind: str) -> list[str]:
    q = quality_presets()
    d = q.drafters[kind]
    return [d.scaling.source, d.reference.label, d.speedup.source, q.transfer.source, q.regeneration.source,
            q.drafter_spread.source, q.target_size.source, d.epoch_saturation.source,
            "planner/presets/harness.yaml (tau where it is served; speedup at the batch)",
            "planner/presets/serving.yaml (the verify step's and the draft's cost as served)"]


def tau_function(kind: str, *, epochs: float, regenerated: bool, workload: dict[str, float],
                 transfer: float | None = None, engine: str = "paper", temperature: float = 0.0,
                 k: int | None = None, reference: dict[str, float] | None = None, points: list | None = None,
                 target: str | None = None, target_params: float | None = None, topk: int = 1,
                 num_draft_tokens: int | None = None, **_batch):
    """The expected tau of `quality()` as a fast function of the training tokens per family (for
    the trim's search, which evaluates it thousands of times): the same curve, levels and harness
    (its rule tabulated)."""
    q = quality_presets()
    d = q.drafters[kind]
    t = q.transfer.value if transfer is None else transfer
    sat = d.epoch_saturation.value
    scale = epoch_equivalent(epochs, sat) / epoch_equivalent(d.reference.epochs, sat)
    d_ref = _reference_effective(kind, reference, t)
    levels = {f: d.domains[f].tau for f in FAMILIES}
    pts = [(tokens_of(p.samples, p.component, p.tokens_per_sample), p.tau) for p in d.scaling.points]
    user = user_model(kind, points, sat)
    if user is not None:
        pts, levels, ref_d, _, cap, _ = user
        pts = [(x, tau) for x, tau, _ in pts]
        scale = epoch_equivalent(epochs, sat)
        d_ref = {f: ref_d for f in FAMILIES}
    else:
        cap = None
        m = target_term(kind, target, target_params).factor
        levels = {f: v * m for f, v in levels.items()}
    _, h = fit_curve(pts)
    gain = 1.0 if regenerated or not d.reference.regenerated else 1 / (1 + q.regeneration.value)
    terms = _served_terms(workload, levels, d_ref, h)
    h_ = resolve(kind, engine, temperature, k, topk, num_draft_tokens)
    if cap is not None:
        return _tau_bounded(terms, d_ref, h_, h, cap, scale, t, gain)
    top = max((1 + (lv - 1) / s_ref for _, _, lv, s_ref in terms), default=2.0)   # the curve's ceiling
    served = h_.table(top)
    fast = tuple((f, w, level - 1, s_ref) for f, w, level, s_ref in terms)    # level - 1 once, the same float

    def tau(tokens: dict[str, float]) -> float:
        total = sum(tokens.values()) * scale
        out = 0.0
        get = tokens.get
        for f, w, level_1, s_ref in fast:
            own = get(f, 0.0) * scale
            eff = own + t * (total - own)
            out += w * (served((1 + level_1 * (eff / (eff + h)) / s_ref) * gain) if eff > 0 else 1.0)
        return out
    return tau


def _served_terms(workload: dict[str, float], levels: dict[str, float], d_ref: dict[str, float],
                  h: float) -> list[tuple[str, float, float, float]]:
    """(family, its share of what is served, its level, s(reference) = D_ref / (D_ref + h)) of each
    family served."""
    total_w = sum(workload.values()) or 1.0
    return [(f, workload.get(f, 0.0) / total_w, levels[f], d_ref[f] / (d_ref[f] + h))
            for f in FAMILIES if workload.get(f, 0.0) > 0]


def _tau_bounded(terms, d_ref: dict[str, float], h_, h: float, cap: float, scale: float, t: float, gain: float):
    """tau_function's tau for your own runs: the carry capped (user_model); served's table spans the
    capped ceiling."""
    refs = {f: d_ref[f] for f, _, _, _ in terms}
    served = h_.table(max((1 + (lv - 1) * carry(1 / s_ref, cap) for _, _, lv, s_ref in terms), default=2.0))

    def tau_bounded(tokens: dict[str, float]) -> float:
        total = sum(tokens.values()) * scale
        out = 0.0
        for f, w, level, _s_ref in terms:
            own = tokens.get(f, 0.0) * scale
            eff = own + t * (total - own)
            out += w * (served(_tau_domain(level, eff, refs[f], h, cap) * gain) if eff > 0 else 1.0)
        return out
    return tau_bounded


def payback(qp: QualityPlan, *, serving_tokens_per_day: float | None, decode_tokens_per_s_per_gpu: float,
            usd_per_gpu_hour: float | None, one_off_usd: float, gpu: str) -> QualityPlan:
    """Days of serving `serving_tokens_per_day` until the GPU time speculation saves repays
    `one_off_usd` (extraction, storage, transfer and training): the GPU-hours a day without the
    drafter, T / (decode rate x 3600), shrink by 1 - 1/speedup. A new plan; `qp` is left as it was."""
    update: dict = {"serving_gpu": gpu, "serving_decode_tokens_per_s_per_gpu": decode_tokens_per_s_per_gpu}
    if not serving_tokens_per_day:
        return qp.model_copy(update=update)
    if usd_per_gpu_hour is None:
        return qp.model_copy(update={**update, "warnings": [
            *qp.warnings, finding("payback", f"payback: {gpu} has no public price; set a price to see the payback")]})
    gpu_hours = serving_tokens_per_day / (decode_tokens_per_s_per_gpu * 3600)
    s = qp.payback_speedup if qp.payback_speedup is not None else qp.speedup
    saved = gpu_hours * (1 - 1 / s) * usd_per_gpu_hour if s > 1 else 0.0
    update.update(saved_usd_per_day=saved, payback_days=one_off_usd / saved if saved > 0 else None)
    if saved <= 0:
        update["warnings"] = [*qp.warnings, finding("payback", f"payback: the expected speedup at the fleet's batch "
                                                    f"({qp.fleet_batch:g}) is not above 1, the drafter never pays "
                                                    "back")]
    elif qp.payback_speedup_low is not None and qp.payback_speedup_low <= 1:
        update["warnings"] = [*qp.warnings, finding("payback", f"payback: the speedup's band at the fleet's batch "
                                                    f"({qp.fleet_batch:g}) reaches {qp.payback_speedup_low:.2f}x: "
                                                    "at that end the drafter slows serving and never pays back")]
    return qp.model_copy(update=update)


# ---------------------------------------------------------------- the Assumptions rows of quality
def quality_assumptions(s: Scenario, qp: QualityPlan | None) -> list[Assumption]:
    """The Assumptions rows of the quality estimate of `qp`: the curve and its reference, the transfer between
    families, the serving workload, the regeneration gain (planner/presets/quality.yaml), then the harness's,
    the cycle as served, the band's drafter-quality term and your own runs."""
    if qp is None:
        return []
    q = quality_presets()
    d = q.drafters[qp.drafter]
    transfer = s.quality.domain_transfer
    shares = ", ".join(f"{f} {v:.0%}" for f, v in qp.workload.items() if v > 0)
    return [
        Assumption(name="drafter quality curve", value=f"{d.name}: tau = 1 + A D / (D + D_half), D_half "
                   f"{d.scaling.fitted['d_half_tokens'] / 1e6:,.1f}M tokens; levels from {d.reference.label}",
                   tag="estimate", source=f"{d.scaling.source}; planner/presets/quality.yaml"),
        paired("transfer between families", transfer if transfer is not None else q.transfer.value, q.transfer.value,
               q.transfer.source),
        Assumption(name="serving workload", value=shares, tag="yours" if isinstance(s.quality.workload, dict)
                   else "estimate",
                   source="set in the scenario" if isinstance(s.quality.workload, dict) else
                   "the mix's own training-token shares per family" if s.quality.workload == "mix" or s.uniform
                   else "the full mix's family shares (the catalog's default mix at its measured lengths): fixed, "
                        "so trimming or dropping a component never changes what is served"),
        Assumption(name="regenerated responses", value="regenerated, as the reference runs were" if s.regenerate
                   else f"reused: tau / {1 + q.regeneration.value:g} (low end / {1 + q.regeneration.range[1]:g})",
                   tag="published", source=q.regeneration.source),
        *harness_assumptions(qp, s.quality),
        served_assumption(qp, s.quality),
        _drafter_spread(qp, s.quality),
    ] + ([Assumption(name="your own runs", value=f"{len(s.quality.points)} point(s): the levels and curve refitted on "
                     "those of this drafter kind", tag="yours", source="set in the scenario (--quality-points)")]
         if s.quality.points else [])


def _drafter_spread(qp: QualityPlan, sq) -> Assumption:
    """The acceptance band's drafter-quality term (quality.yaml drafter_spread): its basis, in the band's text."""
    d = quality_presets().drafter_spread
    keep = 1 - (0.0 if sq.points else d.value)
    value = ("none: your own runs set the levels" if sq.points else
             f"the acceptance band's low end reaches tau - 1 x {keep:.3f} of the served centre "
             f"(tau {qp.acceptance_length:.2f}, band {qp.acceptance_low:.2f}-{qp.acceptance_high:.2f}): the drafters "
             "users train and serve land up to that far below one trained like the reference run")
    return Assumption(name="the band's drafter-quality term", value=value, tag="yours" if sq.points else "third-party",
                      source=f"fitted on {', '.join(d.fit_sources)} only (bench/users_reports.yaml split.fit; the "
                             "scored reports never); planner/presets/quality.yaml drafter_spread")
