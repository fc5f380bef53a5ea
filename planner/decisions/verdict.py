"""The answer to the seed article's question for one scenario: is it cheaper to extract the hidden
states, store them and train offline, to train online (the target runs beside the trainer), or to
stream them (disaggregated)? One sentence, and the break-evens that would flip it.

Only the ways that run as configured are compared (issue 35; planner/decisions/unblock.py): a way a blocking
finding stops is named with what stops it and the fixes that would let it run, each planned and
checked, with its dollars and days; two ways whose order the figures' bands (the extraction hours'
and the training rate's) can turn are a tie, with what would decide it; the days each way takes
stand beside its dollars; the lossless lever (no batch padding, the nodes or a volume the bytes
need) is offered where it changes the answer.

A break-even is the value of one input at which the cheapest mode changes, found on the real plan
(plan() re-run with that input changed). Each total moves monotonically with each of these inputs, so the
cheapest mode holds over one interval of the input. The storage price, the days held and the extraction
GPU price each multiply one term of costs.py, so every total is a + b x in them: the scenario's plan and
one plan at a bound give the three lines, and where the cheapest one meets another is solved. The epochs
and the link are searched between the scenario's value and a bound whose plan flips the answer, by
interpolating where the two totals meet and planning either side of it (planner/decisions/bracket.py flip, to
PRECISION). The crossing nearest the scenario's value is reported, None when neither end flips it. Every
input moves the dollars only through the plan's phases (planner.phases.compose.figures: plan() without quality,
findings and assumptions), so no formula is written twice; each input names the phase it feeds (INPUTS), and a
probe works out that phase and the costs again on the scenario's own figures (Figures.moved: the stored rows and
the other phases kept; tests/unit/planner/decisions/test_verdict.py checks every input against the whole figures).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from pydantic import BaseModel

from planner.catalog.stats import StatsCatalog
from planner.decisions.bracket import flip
from planner.decisions.sensitivity import _sub, field_bounds
from planner.decisions.unblock import (
    STORAGE_BLOCKERS,
    Band,
    Fix,
    band,
    blocked_ways,
    padding_levers,
    plan_fixes,
    remaining,
    tied,
    way_days,
    way_totals,
)
from planner.errors import PlannerInputError
from planner.phases.compose import Figures, figures
from planner.phases.costs import DAYS_PER_MONTH
from planner.phases.reuse import Reuse
from planner.planning import Plan
from planner.scenario import Costs, Scenario, Training, Transfer
from planner.units import fmt_usd

MODES = ("offline", "online", "disaggregated")
BISECT = 60          # steps at most in a search; stops at PRECISION relative
PRECISION = 1e-10


class Verdict(BaseModel):
    cheapest: str                                 # the cheapest way that runs as configured (of all: none runs)
    sentence: str
    totals_usd: dict[str, float]
    states_ready_days: float                      # offline: capture, gather and transfer done
    breakeven: dict[str, float | None]            # input -> the value where the cheapest mode flips
    flips_to: dict[str, str | None]               # input -> the mode that is cheapest past it
    feasible: dict[str, bool] = {}                # way -> it runs as configured (no blocking finding stops it)
    blocked_by: dict[str, list[str]] = {}         # way -> the codes of the blocking findings that stop it
    tie: bool = False                             # another way that runs is inside the figures' bands
    tied_with: list[str] = []                     # those ways
    decided_by: str | None = None                 # a tie: "extraction", "training" or "both" rates measured
    wall_days: dict[str, float] = {}              # way -> days from the start to the last epoch
    lever: str | None = None                      # the lossless change offered where it changes the answer


totals = way_totals     # the three totals of a Plan or of planner.phases.compose.Figures (planner/decisions/unblock.py)


def cheapest(plan: Plan, ways: tuple[str, ...] = MODES) -> str:
    return _cheapest_of(totals(plan), ways)


@dataclass(frozen=True)
class _Input:
    key: str                                       # the JSON name
    model: type[BaseModel]
    field: str
    current: Callable[[Plan], float]
    set: Callable[[Scenario, float], Scenario]
    phase: str                                     # the phase of planner.phases.compose.Figures it feeds
    applies: Callable[[Plan], bool] = lambda p: True
    linear: bool = False                           # every total is a + b x in it (costs.py)


def _held(s: Scenario, days: float) -> Scenario:
    return _sub(s, "costs", "storage_months", days / DAYS_PER_MONTH)


INPUTS = (
    _Input("storage_usd_per_tb_month", Costs, "storage_usd_per_tb_month",
           lambda p: p.cost_usd.storage_usd_per_tb_month,
           lambda s, x: _sub(s, "costs", "storage_usd_per_tb_month", x), "costs", linear=True),
    _Input("days_held", Costs, "storage_months", lambda p: p.cost_usd.storage_days_held, _held, "costs",
           linear=True),
    _Input("epochs", Training, "epochs", lambda p: p.scenario.training.epochs,
           lambda s, x: _sub(s, "training", "epochs", x), "training"),
    _Input("link_gbps", Transfer, "link_gbps", lambda p: p.scenario.transfer.link_gbps,
           lambda s, x: _sub(s, "transfer", "link_gbps", x), "transfer",
           lambda p: p.transfer_method in ("link", "object_store")),
    _Input("extraction_gpu_usd_per_hour", Costs, "extraction_usd_per_gpu_hour",
           lambda p: p.cost_usd.extraction_usd_per_gpu_hour,
           lambda s, x: _sub(s, "costs", "extraction_usd_per_gpu_hour", x), "costs", linear=True),
)


def _totals_at(base: Figures, inp: _Input, x: float) -> dict[str, float] | None:
    """The three totals with `inp` set to x; None where no plan can be made (a figure that would not be
    finite). `base`: the scenario's budget figures (planner.phases.compose.figures: no quality, findings or
    assumptions); only the phase `inp` feeds and the costs are worked out again (Figures.moved)."""
    try:
        t = totals(base.moved(inp.set(base.scenario, x), inp.phase))
    except PlannerInputError:
        return None
    return t if all(math.isfinite(v) for v in t.values()) else None


def _cheapest_of(t: dict[str, float], ways: tuple[str, ...] = MODES) -> str:
    return min(ways, key=lambda m: (t[m], MODES.index(m)))


def _best(t: dict[str, float] | None, ways: tuple[str, ...] = MODES) -> str | None:
    return None if t is None else _cheapest_of(t, ways)


def _linear_crossings(x0: float, t0: dict[str, float], x1: float, t1: dict[str, float], here: str,
                      lo: float, hi: float, ways: tuple[str, ...] = MODES) -> list[tuple[float, str | None]]:
    """Each total is a + b x in this input (costs.py: a price or the days held multiplies one term), so
    two plans give every line and the cheapest way changes where `here`'s line meets another: the first
    such meeting on each side of x0 inside [lo, hi], with the way that is cheapest past it."""
    slope = {m: (t1[m] - t0[m]) / (x1 - x0) for m in MODES}
    out: list[tuple[float, str | None]] = []
    for side in (1, -1):                      # towards hi, towards lo
        hits = []
        for m in ways:
            db = (slope[here] - slope[m]) * side    # how fast `here` loses to m going this way
            if m == here or db <= 0:
                continue
            x = x0 + side * (t0[m] - t0[here]) / db
            if lo <= x <= hi:
                hits.append((abs(x - x0), -slope[m] * side, x, m))   # nearest, then the one falling fastest
        if hits:
            _, _, x, m = min(hits)
            out.append((x, m))
    return out


def _searched_crossing(base: Figures, inp: _Input, x0: float, t0: dict[str, float] | None,
                       end: float, t_end: dict[str, float] | None, here: str,
                       ways: tuple[str, ...] = MODES) -> tuple[float, str | None]:
    """The value between x0 (where `here` is cheapest) and `end` (where it is not) at which the answer
    flips, within PRECISION (planner/decisions/bracket.py flip): its regula falsi steps interpolate where `here`'s
    total meets the flipped way's (in x, or in 1/x for the link, whose hours go as 1/x)."""
    def probe(x: float) -> tuple[bool, dict[str, float] | None]:
        tx = _totals_at(base, inp, x)
        return _best(tx, ways) == here, tx

    def gaps(at_a: dict[str, float] | None, at_b: dict[str, float] | None) -> tuple[float, float] | None:
        if at_a is None or at_b is None:
            return None
        m = _cheapest_of(at_b, ways)              # the way cheapest where the answer has flipped
        return at_a[m] - at_a[here], at_b[m] - at_b[here]   # >= 0 at x0's side, <= 0 at end's

    x, t_flipped = flip(probe, x0, t0, end, t_end, gaps=gaps, inverse=inp.key == "link_gbps", rtol=PRECISION,
                        steps=BISECT)
    return x, _best(t_flipped, ways)


def span(inp: _Input, plan: Plan) -> tuple[float, float, float]:
    """The input's bounds (from the Scenario model, the days held in days) and its value in `plan`, inside them."""
    lo, hi = field_bounds(inp.model, inp.field)
    assert lo is not None and hi is not None     # every input of INPUTS is a field bounded both ways
    if inp.key == "days_held":
        lo, hi = lo * DAYS_PER_MONTH, hi * DAYS_PER_MONTH
    return lo, hi, min(max(inp.current(plan), lo), hi)


def _crossing(base: Figures, inp: _Input, p: Plan,
              ways: tuple[str, ...] = MODES) -> tuple[float | None, str | None]:
    """The value of `inp` nearest the scenario's at which another of `ways` becomes the cheapest; `base`:
    the budget figures of `p`'s scenario (figures(p.scenario))."""
    if not inp.applies(p) or len(ways) < 2:
        return None, None
    lo, hi, x0 = span(inp, p)
    here = cheapest(p, ways)
    t0 = totals(p) if x0 == inp.current(p) else _totals_at(base, inp, x0)
    found: list[tuple[float, str | None]] = []
    if inp.linear and t0 is not None:
        x1 = hi if x0 != hi else lo
        t1 = _totals_at(base, inp, x1)
        if t1 is not None:
            found = _linear_crossings(x0, t0, x1, t1, here, lo, hi, ways)
    else:
        for end in (lo, hi):
            if end == x0:
                continue
            t_end = _totals_at(base, inp, end)
            if _best(t_end, ways) in (here, None):
                continue
            found.append(_searched_crossing(base, inp, x0, t0, end, t_end, here, ways))
    if not found:
        return None, None
    x, m = min(found, key=lambda f: abs(math.log((f[0] + 1e-12) / (x0 + 1e-12))))
    return x, m


_LABEL = {"storage_usd_per_tb_month": "storage at {} per TB-month", "days_held": "the states held {} days",
          "epochs": "{} epochs", "link_gbps": "a {} Gb/s link", "extraction_gpu_usd_per_hour":
          "extraction GPUs at {} per GPU-hour"}


def _num(key: str, x: float) -> str:
    if key in ("storage_usd_per_tb_month", "extraction_gpu_usd_per_hour"):
        return f"${x:,.2f}"
    return f"{x:,.3g}" if x < 100 else f"{x:,.0f}"


def _fmt(key: str, x: float, now: float) -> str:
    """'storage at $15.68 per TB-month or more (now $0.00)'."""
    side = "or more" if x > now else "or less" if key not in ("epochs",) else "or fewer"
    return f"{_LABEL[key].format(_num(key, x))} {side} (now {_num(key, now)})"


def _days(d: float) -> str:
    return f"day {d:,.1f}"


def _each_ends(best: str, others: list[str], t: dict[str, float], days: dict[str, float]) -> str:
    """Time beside money: when each other way ends; a dearer way that finishes sooner says by how much and for
    how much."""
    return "".join(f"; {m} ends on {_days(days[m])}" + (
        f" ({days[best] - days[m]:,.1f} days sooner, for {fmt_usd(t[m] - t[best])} more)"
        if days[best] - days[m] >= 0.05 else "") for m in others)


def _answer(best: str, ways: tuple[str, ...], t: dict[str, float], days: dict[str, float], ready: float,
            b: Band, ties: dict[str, str | None]) -> str:
    """Which way that runs is cheapest (or which tie), by how much, and the days each takes."""
    others = sorted((m for m in ways if m != best), key=lambda m: t[m])
    tied_with = [m for m in others if ties.get(m)]
    if len(ways) == 1:
        head = f"{best.capitalize()} is the only way that runs: {fmt_usd(t[best])}; "
    elif tied_with:
        runner = tied_with[0]
        head = (f"{best.capitalize()} and {runner} tie: {fmt_usd(t[best])} against {fmt_usd(t[runner])} {runner}, "
                f"a gap of {fmt_usd(t[runner] - t[best])} inside the figures' bands ({_bands(b)})"
                + "".join(f", and {fmt_usd(t[m])} {m}" for m in others if m != runner)
                + "; ")
    else:
        runner = others[0]
        head = (f"{best.capitalize()} is cheapest: {fmt_usd(t[best])} against {fmt_usd(t[runner])} {runner} "
                f"({fmt_usd(t[runner] - t[best])} less)" + "".join(f" and {fmt_usd(t[m])} {m}" for m in others[1:])
                + "; ")
    if best == "offline":
        head += f"the stored states are usable after {ready:,.1f} days, training ends on {_days(days[best])}"
    else:
        head += f"it ends on {_days(days[best])}"
        if "offline" in ways:
            head += f" (offline's stored states would be usable after {ready:,.1f} days)"
    head += _each_ends(best, others, t, days) + "."
    if tied_with:
        why = ties[tied_with[0]]
        assert why is not None                   # tied_with: the ways whose tie has a reason
        head += " " + _decider(why, best, tied_with[0], days)
    return head


def _bands(b: Band) -> str:
    """'the extraction hours x0.52-1.92, the training hours x0.69-1.62' (a factor without a band left out)."""
    parts = [f"the {what} hours x{lo:.2f}-{hi:.2f}" for what, (lo, hi) in
             (("extraction", b.extraction), ("training", b.training)) if (lo, hi) != (1.0, 1.0)]
    return ", ".join(parts) or "none"


_DECIDES = {"extraction": "the extraction rate measured on your GPUs (`planner calibrate` on a short capture run)",
            "training": "the training rate measured on your training GPUs (a short training run)",
            "both": "the extraction and training rates measured on your GPUs (a short capture run, "
                    "`planner calibrate`, and a short training run)"}


def _decider(why: str, a: str, b: str, days: dict[str, float]) -> str:
    fast, slow = sorted((a, b), key=lambda m: days[m])
    return (f"What would decide it: {_DECIDES[why]}; meanwhile {fast} finishes "
            f"{days[slow] - days[fast]:,.1f} days sooner.")


def _blocked(blocked: dict[str, list], fixes: tuple[Fix, ...]) -> str:
    """Each way that cannot run as configured (ways stopped by the same findings together), what
    stops it and what would let it run: the checked storage fixes with their cost, else the findings'
    own fixes."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for m in MODES:
        if blocked[m]:
            groups.setdefault(tuple(f.text for f in blocked[m]), []).append(m)
    out = []
    for texts, ways in groups.items():
        found = blocked[ways[0]]
        out.append(f"{' and '.join(ways).capitalize()} cannot run as configured: {'; '.join(texts)}.")
        storage = [f for f in found if f.code in STORAGE_BLOCKERS]
        if "offline" in ways and storage:
            out.append(_storage_fixes(fixes, storage[0]))
        else:
            own = list(dict.fromkeys(f.fix for f in found if f.fix))
            out.append(f"To fix: {'; '.join(own)}." if own else "")
    return " ".join(x for x in out if x)


def _storage_fixes(fixes: tuple[Fix, ...], f) -> str:
    """The cheapest checked fix of each kind (no padding, nodes alone, a volume) that lets offline run,
    with its dollars and days; or what the first fix still leaves, and the finding's own fix."""
    clear = sorted((x for x in fixes if x.lossless and x.clears()),
                   key=lambda x: (x.totals["offline"], x.days["offline"]))
    shown, kinds = [], set()
    for x in clear:
        if x.kind not in kinds:
            kinds.add(x.kind)
            shown.append(f"{x.label}: {fmt_usd(x.totals['offline'])}, ending on {_days(x.days['offline'])}")
    if shown:
        return "It runs, dropping no row, with " + "; or with ".join(shown) + "."
    left = next((x for x in fixes if x.lossless), None)
    return ("No lossless fix lets it run" + (f" ({left.label} still leaves: {remaining(left)})" if left else "")
            + f"; otherwise {f.fix}.")


def _lever(p: Plan, catalog, fixes: tuple[Fix, ...], top: set[str], ways: tuple[str, ...]) -> tuple[str | None, str]:
    """The lossless change that lowers the cheapest way's total most, offered when it changes the
    answer (another way cheapest or tied, or a way runs that did not; `top`: the cheapest way and
    those it ties with): (its label, the sentence)."""
    candidates = [x for x in (fixes or padding_levers(p, catalog)) if x.lossless and any(x.clears(w) for w in MODES)]
    offers = []
    for x in candidates:
        x_ways = tuple(w for w in MODES if x.clears(w))
        x_best = _cheapest_of(x.totals, x_ways)
        # the answer: the ways that run, and the cheapest with those the bands cannot tell from it
        x_top = {x_best, *(m for m in x_ways if m != x_best and tied(x.band, x_best, m))}
        if x_top != top or set(x_ways) != set(ways):
            offers.append((x.totals[x_best], x, x_ways, x_best))
    if not offers:
        return None, ""
    _, x, x_ways, x_best = min(offers, key=lambda o: o[0])
    return x.label, _lever_text(x, x_ways, x_best, ways)


def _lever_text(x: Fix, x_ways: tuple[str, ...], x_best: str, ways: tuple[str, ...]) -> str:
    """'Lossless lever: ..., dropping no row[, lets online run]: then offline $... (ending on day ...) is
    cheapest[, against ...].' or the two that then tie inside the bands."""
    others = sorted((m for m in x_ways if m != x_best), key=lambda m: x.totals[m])
    why = tied(x.band, x_best, others[0]) if others else None
    runs = [w for w in x_ways if w not in ways]
    text = (f"Lossless lever: {x.label}, dropping no row" + (f", lets {' and '.join(runs)} run" if runs else "")
            + ": ")
    shown = f"{x_best} {fmt_usd(x.totals[x_best])} (ending on {_days(x.days[x_best])})"
    if why:
        return text + (f"then {shown} and {others[0]} {fmt_usd(x.totals[others[0]])} (ending on "
                       f"{_days(x.days[others[0]])}) tie inside the bands.")
    return text + f"then {shown} is cheapest" + (f", against {others[0]} {fmt_usd(x.totals[others[0]])}"
                                                   if others else "") + "."


def _breakeven_text(breakeven: dict[str, float | None], flips: dict[str, str | None],
                    now: dict[str, float]) -> str:
    """'Online would be cheapest with storage at ... or more (now ...); or ...' for each way a break-even
    flips the answer to; a sentence saying none does where no input inside its bounds changes it."""
    by_mode: dict[str, list[str]] = {}
    for k, v in breakeven.items():
        if v is not None:
            way = flips[k]
            assert way is not None               # _crossing gives a break-even with the way it flips to
            by_mode.setdefault(way, []).append(_fmt(k, v, now[k]))
    if not by_mode:
        return ("No storage price, time held, epoch count, link speed or extraction GPU price inside their bounds "
                "changes that.")
    return " ".join(f"{m.capitalize()} would be cheapest with " + "; or ".join(parts) + "."
                    for m, parts in by_mode.items())


def _among(answer: str, ways: tuple[str, ...], none_runs: bool) -> str:
    """The answer, said of the ways that run where a blocking finding stops some (or all) of them."""
    if none_runs:
        return "No way runs as configured; were they unblocked: " + answer[0].lower() + answer[1:]
    if len(ways) < len(MODES):
        return "Of the ways that run, " + answer[0].lower() + answer[1:]
    return answer


def _breakevens(p: Plan, catalog: StatsCatalog | None, ways: tuple[str, ...]):
    """Each input's break-even among `ways` (None: none inside its bounds), the way it flips to, its value now."""
    breakeven, flips, now = {}, {}, {}
    # the break-evens' figures share the plan's stored rows and every phase their input does not feed: the
    # figures the plan was worked out from (a calibration's measured figures in them), else its scenario's
    own = p.own_figures() if len(ways) > 1 else None
    base = own.kept(Reuse()) if own is not None else figures(p.scenario, catalog, Reuse()) if len(ways) > 1 else None
    for inp in INPUTS:
        breakeven[inp.key], flips[inp.key] = _crossing(base, inp, p, ways) if base is not None else (None, None)
        now[inp.key] = inp.current(p)
    return breakeven, flips, now


def _feasible(blocked: dict[str, list]) -> dict[str, dict]:
    """The Verdict's `feasible` (way -> it runs) and `blocked_by` (way -> the blocking findings' codes)."""
    return {"feasible": {m: not blocked[m] for m in MODES},
            "blocked_by": {m: [f.code for f in blocked[m]] for m in MODES}}


def verdict(plan: Plan, catalog: StatsCatalog | None = None) -> Verdict:
    """The cheapest way that runs as configured for `plan`'s scenario, by how much and in how many days,
    a tie where the figures' bands do not tell two ways apart, what stops a blocked way and what
    would let it run (each fix planned), the value of each input at which another way that runs
    becomes the cheapest, and the lossless lever where it changes the answer."""
    t = totals(plan)
    blocked = blocked_ways(plan.findings, plan.training.online_fits)
    ways = tuple(m for m in MODES if not blocked[m]) or MODES
    best = cheapest(plan, ways)
    b = band(plan)
    ties = {m: tied(b, best, m) for m in ways if m != best}
    days = way_days(plan)
    ready = (plan.extraction.wall_hours + plan.gather_hours + plan.transfer_hours) / 24
    breakeven, flips, now = _breakevens(plan, catalog, ways)
    fixes = plan_fixes(plan, catalog) if blocked["offline"] else ()
    none_runs = all(blocked.values())
    sentence = (_blocked(blocked, fixes) + " " + _among(_answer(best, ways, t, days, ready, b, ties), ways,
                                                        none_runs)).strip()
    if len(ways) > 1:
        sentence += " " + _breakeven_text(breakeven, flips, now)
    top = {best, *(m for m in ways if ties.get(m))}
    lever, text = _lever(plan, catalog, fixes, top, ways) if not none_runs else (None, "")
    if text:
        sentence += " " + text
    tied_with = [m for m in ways if ties.get(m)]
    return Verdict(cheapest=best, sentence=sentence.strip(), totals_usd=t, states_ready_days=ready,
                   breakeven=breakeven, flips_to=flips, **_feasible(blocked), tie=bool(tied_with),
                   tied_with=tied_with, decided_by=ties[tied_with[0]] if tied_with else None, wall_days=days,
                   lever=lever)
