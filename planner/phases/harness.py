"""Where tau is measured, and at what batch the speedup is given (planner/presets/harness.yaml, each
pair cited there). An ESTIMATE fitted on published pairs of one drafter measured on two harnesses.

A harness drafting K tokens a step with a per-position acceptance alpha commits
    tau = (1 - alpha^(K+1)) / (1 - alpha)          (the bonus token counted; K + 1 at alpha = 1)
A reference level measured by the paper's harness at its depth D gives alpha_ref; an engine accepts
alpha_ref x c_engine x c_T^T at its own K. c_engine and c_T are the least-squares fits (log tau)
over the pairs; the band is the spread of the leave-one-source-out residuals (each source predicted
by the factors fitted without it). The paper harness at its own depth and T = 0 returns the
reference levels unchanged.

Speedup at serving batch B: the verify step carries B (K + 1) tokens, so the gain is kept in the
share r(x) = 1 / (1 + (x / x_half)^p), x = B (K + 1), of what batch 1 gets:
    S(B) = 1 + (S(1) - 1) r(B (K + 1)) / r(K + 1)
(x_half, p) fitted on published sweeps; past batch 1 the band is the spread of the
leave-one-series-out residuals (none at batch 1, the figure the papers report).
"""
from __future__ import annotations

import functools
import math

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from planner.phases.assumption_rows import Assumption, changed_tag

ENGINES = ("paper", "vllm", "sglang")
MAX_TEMPERATURE = 2.0


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Depth(_Strict):
    value: int = Field(ge=1, le=64)
    source: str


class PaperTree(_Strict):
    """The paper harness's tree (EAGLE's): top-k a step and the tokens it verifies."""
    topk: int = Field(ge=1)
    tokens: int = Field(ge=2)
    source: str


class Engine(_Strict):
    label: str
    k: dict[str, int]
    source: str


class _Pair(_Strict):
    """One drafter measured two ways: its id, source, draft depth d and the second way's tau."""
    id: str
    source: str
    d: int = Field(ge=1)
    tau: float = Field(gt=1)
    note: str = ""


class EnginePair(_Pair):
    drafter: str
    target: str
    bench: str
    ref: float = Field(gt=1)
    engine: str
    k: int = Field(ge=1)
    t: float = Field(ge=0)


class TemperaturePair(_Pair):
    t0: float = Field(gt=1)
    t: float = Field(gt=0)


class Sweep(_Strict):
    series: str
    source: str
    engine: str
    k: int = Field(ge=1)
    points: list[tuple[float, float]] = Field(min_length=2)
    note: str = ""


class Fitted(_Strict):
    engine_factor: dict[str, float]                 # c per engine/group (paper: 1)
    temperature_factor: float
    tau_band: tuple[float, float]                   # (min, max) leave-one-source-out log residual, all pairs
    batch_x_half: float
    batch_p: float
    batch_band: tuple[float, float]                 # log band past batch 1


class HarnessPresets(_Strict):
    paper_depth: dict[str, Depth]
    paper_tree: PaperTree
    engines: dict[str, Engine]
    engine_pairs: list[EnginePair] = Field(min_length=8)
    temperature_pairs: list[TemperaturePair] = Field(min_length=2)
    batch_sweeps: list[Sweep] = Field(min_length=2)
    fitted: Fitted


@functools.cache
def harness_presets() -> HarnessPresets:
    from planner.presets.specs import load_preset
    h = HarnessPresets(**load_preset("harness.yaml"))
    if tuple(h.engines) != ENGINES:
        raise ValueError(f"harness.yaml engines {list(h.engines)} must be {list(ENGINES)}")
    for p in h.engine_pairs:
        if p.engine not in ENGINES[1:]:
            raise ValueError(f"harness.yaml pair {p.id}: engine {p.engine!r} is not one of {ENGINES[1:]}")
    return h


# ---------------------------------------------------------------- the chain rule
def chain_tau(alpha: float, k: int) -> float:
    """tau of a chain of k drafted tokens, each accepted with probability alpha after the last."""
    if alpha >= 1:
        return k + 1.0
    return (1 - alpha ** (k + 1)) / (1 - alpha)


def alpha_of(tau: float, depth: int) -> float:
    """The alpha whose chain of `depth` reaches tau (bisection; tau clipped to (1, depth + 1])."""
    if tau >= depth + 1:
        return 1.0
    if tau <= 1:
        return 0.0
    lo, hi = 0.0, 1.0
    n, top = depth + 1, depth + 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        # chain_tau(mid, depth) written out, the same operations (a varied plan asks for about 15
        # new alphas, 900 steps)
        if (top if mid >= 1 else (1 - mid ** n) / (1 - mid)) < tau:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def served_tau(tau_ref: float, depth: int, *, factor: float, k: int) -> float:
    return chain_tau(min(1.0, alpha_of(tau_ref, depth) * factor), k)


def _argmin(fn, lo: float, hi: float) -> float:
    """The minimum of a unimodal fn on [lo, hi] (golden section)."""
    g = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(80):
        c, d = b - g * (b - a), a + g * (b - a)
        if fn(c) < fn(d):
            b = d
        else:
            a = c
    return (a + b) / 2


# ---------------------------------------------------------------- fits
def _engine_error(pairs: list[EnginePair], c: float) -> float:
    return sum(math.log(served_tau(p.ref, p.d, factor=c, k=p.k) / p.tau) ** 2 for p in pairs)


def fit_engine(pairs: list[EnginePair]) -> float:
    """c_engine: least squares of log tau over `pairs` (all T = 0)."""
    return _argmin(lambda c: _engine_error(pairs, c), 0.2, 1.5)


def fit_temperature(pairs: list[TemperaturePair]) -> float:
    """c_T: alpha at temperature t = alpha at 0 x c_T^t (least squares of log tau)."""
    def err(c: float) -> float:
        return sum(math.log(served_tau(p.t0, p.d, factor=c ** p.t, k=p.d) / p.tau) ** 2 for p in pairs)
    return _argmin(err, 0.2, 1.5)


def loso_residuals(items: list, fit, predict) -> list[tuple[str, str, float]]:
    """(source, id, log(measured / predicted)) of every item, predicted by the fit without its source."""
    out = []
    for src in dict.fromkeys(i.source for i in items):
        rest = [i for i in items if i.source != src]
        if not rest:
            continue
        f = fit(rest)
        out += [(src, i.id, math.log(i.tau / predict(i, f))) for i in items if i.source == src]
    return out


def _engine_predict(p: EnginePair, c: float) -> float:
    return served_tau(p.ref, p.d, factor=c, k=p.k)


def _temperature_predict(p: TemperaturePair, c: float) -> float:
    return served_tau(p.t0, p.d, factor=c ** p.t, k=p.d)


def group_of(drafter: str) -> str:
    """The paper harness a drafter kind's levels come from: EAGLE's tree or DFlash's block."""
    from planner.presets.drafter_kinds import DRAFTER_KINDS
    return "block" if DRAFTER_KINDS.lookup(drafter).drafts_blocks else "tree"


def engine_groups(pairs: list[EnginePair]) -> dict[str, list[EnginePair]]:
    """The pairs each (engine, paper-harness group) is fitted on, `engine/group`: the group's own when
    at least two sources measured it on that engine, else all of the engine's (pooled)."""
    out = {}
    for e in ENGINES[1:]:
        mine = [p for p in pairs if p.engine == e]
        for g in ("tree", "block"):
            own = [p for p in mine if group_of(p.drafter) == g]
            out[f"{e}/{g}"] = own if len({p.source for p in own}) >= 2 else mine
    return out




def _band(res: list[float]) -> tuple[float, float]:
    """The held-out residuals' largest error, either way (a few residuals seldom show both sides)."""
    m = max((abs(r) for r in res), default=0.0)
    return -m, m


@functools.cache
def fitted() -> Fitted:
    """The fitted constants as written in harness.yaml (`fitted`; a test re-fits them with refit())."""
    return harness_presets().fitted


def refit() -> Fitted:
    h = harness_presets()
    cf = {"paper/tree": 1.0, "paper/block": 1.0}
    for key, pairs in engine_groups(h.engine_pairs).items():
        cf[key] = fit_engine(pairs)
    xh, pw = fit_batch(h.batch_sweeps)
    return Fitted(engine_factor=cf, temperature_factor=fit_temperature(h.temperature_pairs),
                  tau_band=_band([r["residual"] for r in tau_residuals()]), batch_x_half=xh, batch_p=pw,
                  batch_band=_band(batch_residuals(h.batch_sweeps)))


def tau_residuals() -> list[dict]:
    """Every pair's log(measured / predicted), predicted by the factor fitted without its source: the
    engine pairs within their engine/group, the temperature pairs (per unit of temperature)."""
    h = harness_presets()
    out, seen = [], set()
    for _key, pairs in engine_groups(h.engine_pairs).items():
        for src, id_, r in loso_residuals(pairs, fit_engine, _engine_predict):
            if id_ not in seen:     # a pooled group repeats its engine's pairs
                seen.add(id_)
                out.append({"source": src, "id": id_, "kind": "engine", "residual": r})
    tp = {p.id: p for p in h.temperature_pairs}
    for src, id_, r in loso_residuals(h.temperature_pairs, fit_temperature, _temperature_predict):
        out.append({"source": src, "id": id_, "kind": "temperature", "residual": r / tp[id_].t})
    return out


# ---------------------------------------------------------------- speedup at the batch
def kept(batch: float, k: int, x_half: float, p: float) -> float:
    """The share of batch 1's gain kept at `batch` (1 at batch 1)."""
    r = lambda x: 1 / (1 + (x / x_half) ** p)  # noqa: E731
    return r(batch * (k + 1)) / r(k + 1)


def speedup_at(s1: float, batch: float, k: int, x_half: float, p: float) -> float:
    return 1 + (s1 - 1) * kept(batch, k, x_half, p)


def _batch_error(sweeps: list[Sweep], xh: float, p: float) -> float:
    err = 0.0
    for s in sweeps:
        s1 = s.points[0][1]
        err += sum(math.log(speedup_at(s1, b, s.k, xh, p) / v) ** 2 for b, v in s.points[1:])
    return err


def fit_batch(sweeps: list[Sweep]) -> tuple[float, float]:
    """(x_half, p) by a grid in log x_half and p, refined once around the best."""
    grid = [(math.exp(lx), p) for lx in np.linspace(math.log(16), math.log(8192), 60) for p in np.linspace(0.5, 4, 36)]
    xh, p = min(grid, key=lambda g: _batch_error(sweeps, *g))
    fine = [(xh * math.exp(dx), p + dp) for dx in np.linspace(-0.1, 0.1, 11) for dp in np.linspace(-0.05, 0.05, 11)]
    return min(fine, key=lambda g: _batch_error(sweeps, *g))


def batch_residuals(sweeps: list[Sweep]) -> list[float]:
    """log(measured / predicted) of every point past batch 1, each sweep predicted by the fit
    without it (leave one series out)."""
    out = []
    for s in sweeps:
        xh, p = fit_batch([o for o in sweeps if o is not s])
        s1 = s.points[0][1]
        out += [math.log(v / speedup_at(s1, b, s.k, xh, p)) for b, v in s.points[1:]]
    return out


# ---------------------------------------------------------------- what quality() uses
class Harness(BaseModel):
    """One serving setting, resolved: its engine, temperature, K, the tree (topk, the tokens a sequence
    the verify step carries, n) and the paper depth of the drafter."""
    engine: str
    temperature: float
    k: int
    topk: int = 1
    n: int = 0                       # verified tokens a sequence: K + 1 on a chain, num_draft_tokens on a tree
    tree_share: float = 0.0          # how far the tree is from a chain (0) to the paper's own tree (1)
    depth: int
    factor: float
    log_low: float
    log_high: float
    label: str

    def tau(self, tau_ref: float) -> float:
        return served_tau(tau_ref, self.depth, factor=self.factor, k=self.k)

    def table(self, top: float):
        """A fast tau_ref -> served tau (the trim evaluates it thousands of times): numpy interp
        over 512 points of the same rule on [1, top]."""
        xs = np.linspace(1.0, max(top, 1.0 + 1e-6), 512)
        return interpolator(xs.tolist(), [self.tau(x) for x in xs])


def interpolator(xs: list[float], ys: list[float]):
    """x -> float(np.interp(x, xs, ys)) for one float x. numpy's own, not a copy: per call it costs
    2.71 us against 0.56 us for the bit-exact hand copy it replaced (512 knots), but in the hot path,
    trim's quality strategy, 79.2 ms against 69.4 ms (medians of 5 alternating runs of bench/run.py's
    bench_trim, 2026-12-06, a shared 2-core machine): 1.14x, inside issue 32's 2x (docs/benchmarks.md)."""
    knots, values, interp = np.asarray(xs, dtype=float), np.asarray(ys, dtype=float), np.interp

    def at(x: float) -> float:
        return float(interp(x, knots, values))
    return at


def default_k(engine: str, drafter: str) -> int:
    return harness_presets().engines[engine].k[drafter]


def tree_share(topk: int, n: int, k: int) -> float:
    """How far an SGLang tree of `topk` a step, K steps and n verified tokens is from a chain (0) to the
    paper harness's own tree (1, harness.yaml paper_tree: top-k 10, 60 tokens over its depth): the
    log of its mean width, min(topk, (n - 1) / K), over the log of the paper tree's. An ESTIMATE that
    interpolates between the two measured ends: the engines' chains (engine_pairs) and the paper's tree."""
    if topk <= 1:
        return 0.0
    p, depth = harness_presets().paper_tree, harness_presets().paper_depth["eagle3"].value
    width = min(topk, (n - 1) / k)
    paper = min(p.topk, (p.tokens - 1) / depth)
    return max(0.0, min(1.0, math.log(max(width, 1.0)) / math.log(paper)))


def max_tree_tokens(topk: int, k: int) -> int:
    """The most tokens SGLang's tree can verify: the root, topk at the first step and topk x topk
    candidates at each later one (sglang python/sglang/srt/speculative/eagle_utils.py organize_draft_results keeps
    the best num_draft_tokens - 1 of them)."""
    return 1 + topk + (k - 1) * topk * topk


def resolve(drafter: str, engine: str, temperature: float, k: int | None, topk: int = 1,
            num_draft_tokens: int | None = None) -> Harness:
    """The setting as served. A tree (topk > 1, SGLang) accepts alpha x c_engine^(1 - share) where share
    is tree_share: the engine's chain factor at topk 1, the paper's own tree at its width."""
    h, f = harness_presets(), fitted()
    depth = h.paper_depth[drafter].value
    kk = default_k(engine, drafter) if k is None else k
    n = kk + 1 if topk <= 1 or num_draft_tokens is None else num_draft_tokens
    share = tree_share(topk, n, kk) if engine != "paper" else 0.0
    key = f"{engine}/{group_of(drafter)}"
    factor = f.engine_factor[key] ** (1 - share) * f.temperature_factor ** temperature
    # the band: the pairs' held-out spread once for the engine, once per unit of temperature
    widen = (engine != "paper") + temperature
    lo, hi = widen * f.tau_band[0], widen * f.tau_band[1]
    tree = f", topk {topk}, {n} draft tokens" if topk > 1 else ""
    label = f"{h.engines[engine].label}, K={kk}{tree}, T={temperature:g}"
    return Harness(engine=engine, temperature=temperature, k=kk, topk=topk, n=n, tree_share=share, depth=depth,
                   factor=factor, log_low=lo, log_high=hi, label=label)


# ---------------------------------------------------------------- fidelity (bench/fidelity.py)
def held_out_tau() -> list[dict]:
    """Every two-harness and temperature pair predicted with its source left out of the fit, and the
    band of the other sources' held-out residuals (the spread the shipped band is made of)."""
    h = harness_presets()
    res = tau_residuals()
    pairs = {p.id: p for p in h.engine_pairs}
    tps = {p.id: p for p in h.temperature_pairs}
    out = []
    for r in res:
        lo, hi = _band([o["residual"] for o in res if o["source"] != r["source"]])
        p = pairs.get(r["id"]) if r["kind"] == "engine" else tps[r["id"]]
        assert p is not None          # every residual is of a pair of the preset
        t = p.t if r["kind"] == "temperature" else 1.0
        predicted = p.tau / math.exp(r["residual"] * t)
        out.append(_row(r["id"], r["source"], r["kind"], p.tau, predicted, lo * t, hi * t))
    return out


def held_out_speedup() -> list[dict]:
    """Every sweep's points past batch 1 predicted with that series left out, and the rest's band."""
    sweeps = harness_presets().batch_sweeps
    out = []
    for s in sweeps:
        rest = [o for o in sweeps if o is not s]
        xh, p = fit_batch(rest)
        lo, hi = _band(batch_residuals(rest))
        s1 = s.points[0][1]
        for b, v in s.points[1:]:
            out.append(_row(f"{s.series}@{b:g}", s.source, "batch", v, speedup_at(s1, b, s.k, xh, p), lo, hi))
    return out


def _row(id_: str, source: str, kind: str, measured: float, predicted: float, lo: float, hi: float) -> dict:
    low, high = predicted * math.exp(lo), predicted * math.exp(hi)
    return {"id": id_, "source": source, "kind": kind, "measured": measured, "predicted": predicted,
            "low": low, "high": high, "ratio": predicted / measured, "inside": bool(low <= measured <= high)}


def fitted_yaml(f: Fitted) -> str:
    """The `fitted` block of harness.yaml (python -m planner.phases.harness prints it after a change of rows)."""
    r = lambda x: round(float(x), 4)  # noqa: E731
    return "\n".join([
        "fitted:",
        "  engine_factor: {" + ", ".join(f"{k}: {r(v)}" for k, v in f.engine_factor.items()) + "}",
        f"  temperature_factor: {r(f.temperature_factor)}",
        f"  tau_band: [{r(f.tau_band[0])}, {r(f.tau_band[1])}]",
        f"  batch_x_half: {r(f.batch_x_half)}",
        f"  batch_p: {r(f.batch_p)}",
        f"  batch_band: [{r(f.batch_band[0])}, {r(f.batch_band[1])}]"])


if __name__ == "__main__":
    print(fitted_yaml(refit()))


def harness_assumptions(qp, sq) -> list[Assumption]:
    """The Assumptions rows of the harness, for `qp` (the plan's QualityPlan) and `sq` (the scenario's quality):
    where tau is measured and the batches the speedup is given at (planner/presets/harness.yaml)."""
    h, f = harness_presets(), fitted()
    g = group_of(qp.drafter)
    fields = type(sq).model_fields
    n_pairs = len(h.engine_pairs)
    return [
        Assumption(name="tau measured on", value=f"{qp.harness}: acceptance x "
                   f"{f.engine_factor[f'{qp.eval_engine}/{g}']:.3f} x {f.temperature_factor:.3f}^T",
                   tag=changed_tag(sq.eval_engine, fields["eval_engine"].default),
                   source=f"fitted on {n_pairs} published pairs of one drafter on two harnesses and "
                          f"{len(h.temperature_pairs)} temperature pairs; K: {h.engines[qp.eval_engine].source}; "
                          "planner/presets/harness.yaml"),
        Assumption(name="speedup at the batch", value=f"speedup given at batch {qp.serving_batch:g}; payback at the "
                   f"fleet's batch {qp.fleet_batch:g} (x_half {f.batch_x_half:.0f} tokens a step, p {f.batch_p:.2f})",
                   tag=changed_tag((sq.serving_batch, sq.fleet_batch), (fields["serving_batch"].default,
                                                                        fields["fleet_batch"].default)),
                   source=f"fitted on {len(h.batch_sweeps)} published speedup-vs-batch sweeps "
                          "(planner/presets/harness.yaml)"),
    ]
