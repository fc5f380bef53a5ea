"""The answer to the seed article's question for one scenario: is it cheaper to extract the hidden
states, store them and train offline, to train online (the target runs beside the trainer), or to
stream them (disaggregated)? One sentence, and the break-evens that would flip it.

A break-even is the value of one input at which the cheapest mode changes, found on the real plan
(plan() re-run with that input changed). Each total moves monotonically with each of these inputs, so the
cheapest mode holds over one interval of the input. The storage price, the days held and the extraction
GPU price each multiply one term of costs.py, so every total is a + b x in them: the scenario's plan and
one plan at a bound give the three lines, and where the cheapest one meets another is solved. The epochs
and the link are searched between the scenario's value and a bound whose plan flips the answer, by
interpolating where the two totals meet and planning either side of it (to PRECISION). The crossing
nearest the scenario's value is reported, None when neither end flips it. Every input moves the dollars
only through the plan's phases (planner.phases.figures: plan() without quality, findings and assumptions),
so no formula is written twice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from pydantic import BaseModel

from planner.catalog.stats import StatsCatalog
from planner.errors import PlannerInputError
from planner.costs import DAYS_PER_MONTH
from planner.phases import figures
from planner.plan import Plan, plan
from planner.scenario import Costs, Scenario, Training, Transfer
from planner.sensitivity import _sub, field_bounds
from planner.units import fmt_usd

MODES = ("offline", "online", "disaggregated")
BISECT = 60          # steps at most in a search; stops at PRECISION relative
PRECISION = 1e-10


class Verdict(BaseModel):
    cheapest: str                                 # offline | online | disaggregated
    sentence: str
    totals_usd: dict[str, float]
    states_ready_days: float                      # offline: capture, gather and transfer done
    breakeven: dict[str, float | None]            # input -> the value where the cheapest mode flips
    flips_to: dict[str, str | None]               # input -> the mode that is cheapest past it


def totals(p) -> dict[str, float]:
    """The three totals of a Plan or of planner.phases.Figures (the same cost_usd)."""
    c = p.cost_usd
    return {"offline": c.total_offline, "online": c.total_online, "disaggregated": c.total_disaggregated}


def cheapest(p: Plan) -> str:
    t = totals(p)
    return min(MODES, key=lambda m: (t[m], MODES.index(m)))


@dataclass(frozen=True)
class _Input:
    key: str                                       # the JSON name
    model: type[BaseModel]
    field: str
    current: Callable[[Plan], float]
    set: Callable[[Scenario, float], Scenario]
    applies: Callable[[Plan], bool] = lambda p: True
    linear: bool = False                           # every total is a + b x in it (costs.py)


def _held(s: Scenario, days: float) -> Scenario:
    return _sub(s, "costs", "storage_months", days / DAYS_PER_MONTH)


INPUTS = (
    _Input("storage_usd_per_tb_month", Costs, "storage_usd_per_tb_month",
           lambda p: p.cost_usd.storage_usd_per_tb_month,
           lambda s, x: _sub(s, "costs", "storage_usd_per_tb_month", x), linear=True),
    _Input("days_held", Costs, "storage_months", lambda p: p.cost_usd.storage_days_held, _held,
           linear=True),
    _Input("epochs", Training, "epochs", lambda p: p.scenario.training.epochs,
           lambda s, x: _sub(s, "training", "epochs", x)),
    _Input("link_gbps", Transfer, "link_gbps", lambda p: p.scenario.transfer.link_gbps,
           lambda s, x: _sub(s, "transfer", "link_gbps", x),
           lambda p: p.transfer_method in ("link", "object_store")),
    _Input("extraction_gpu_usd_per_hour", Costs, "extraction_usd_per_gpu_hour",
           lambda p: p.cost_usd.extraction_usd_per_gpu_hour,
           lambda s, x: _sub(s, "costs", "extraction_usd_per_gpu_hour", x), linear=True),
)


def _totals_at(s: Scenario, inp: _Input, x: float, catalog: StatsCatalog | None) -> dict[str, float] | None:
    """The three totals with `inp` set to x; None where no plan can be made (a figure that would not be finite)."""
    try:   # the budget figures alone (planner.phases.figures): no quality, findings or assumptions to build
        t = totals(figures(inp.set(s, x), catalog))
    except PlannerInputError:
        return None
    return t if all(math.isfinite(v) for v in t.values()) else None


def _best(t: dict[str, float] | None) -> str | None:
    return None if t is None else min(MODES, key=lambda m: (t[m], MODES.index(m)))


def _linear_crossings(x0: float, t0: dict[str, float], x1: float, t1: dict[str, float], here: str,
                      lo: float, hi: float) -> list[tuple[float, str]]:
    """Each total is a + b x in this input (costs.py: a price or the days held multiplies one term), so
    two plans give every line and the cheapest way changes where `here`'s line meets another: the first
    such meeting on each side of x0 inside [lo, hi], with the way that is cheapest past it."""
    slope = {m: (t1[m] - t0[m]) / (x1 - x0) for m in MODES}
    out = []
    for side in (1, -1):                      # towards hi, towards lo
        hits = []
        for m in MODES:
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


def _searched_crossing(s: Scenario, inp: _Input, catalog: StatsCatalog | None, x0: float, t0: dict[str, float],
                       end: float, t_end: dict[str, float] | None, here: str) -> tuple[float, str | None]:
    """The value between x0 (where `here` is cheapest) and `end` (where it is not) at which the answer
    flips, within PRECISION. Each step interpolates where `here`'s total meets the flipped way's (in x,
    or in 1/x for the link, whose hours go as 1/x), then plans just either side of that point: a total
    that is linear there closes the bracket in one step; otherwise the bracket still shrinks, and after
    a few steps plain bisection finishes the job."""
    inverse = inp.key == "link_gbps"
    a, ta, b, tb = x0, t0, end, t_end           # a keeps the answer, b flips it

    def split(a, ta, b, tb):
        if ta is not None and tb is not None and a > 0 and b > 0:
            m = _best(tb)
            ga, gb = ta[m] - ta[here], tb[m] - tb[here]     # >= 0 at a, <= 0 at b
            if ga != gb:
                ua, ub = (1 / a, 1 / b) if inverse else (a, b)
                u = ua + (ub - ua) * ga / (ga - gb)
                x = 1 / u if inverse else u
                if min(a, b) < x < max(a, b):
                    return x
        return math.sqrt(a * b) if a > 0 and b > 0 else (a + b) / 2

    for step in range(BISECT):
        if abs(b - a) <= PRECISION * max(abs(a), abs(b)):
            break
        guess = split(a, ta, b, tb) if step < 6 else (math.sqrt(a * b) if a > 0 and b > 0 else (a + b) / 2)
        probes = [guess]
        if step < 6:
            d = PRECISION / 4 * abs(guess) * math.copysign(1, b - a)
            probes = [x for x in (guess - d, guess + d) if min(a, b) < x < max(a, b)] or [guess]
        for x in probes:
            if not min(a, b) < x < max(a, b):
                continue
            tx = _totals_at(s, inp, x, catalog)
            if _best(tx) == here:
                a, ta = x, tx
            else:
                b, tb = x, tx
    return (a + b) / 2, _best(tb)


def span(inp: _Input, p: Plan) -> tuple[float, float, float]:
    """The input's bounds (from the Scenario model, the days held in days) and its value in `p`, inside them."""
    lo, hi = field_bounds(inp.model, inp.field)
    if inp.key == "days_held":
        lo, hi = lo * DAYS_PER_MONTH, hi * DAYS_PER_MONTH
    return lo, hi, min(max(inp.current(p), lo), hi)


def _crossing(s: Scenario, inp: _Input, p: Plan, catalog: StatsCatalog | None) -> tuple[float | None, str | None]:
    if not inp.applies(p):
        return None, None
    lo, hi, x0 = span(inp, p)
    here = cheapest(p)
    t0 = totals(p) if x0 == inp.current(p) else _totals_at(s, inp, x0, catalog)
    found: list[tuple[float, str | None]] = []
    if inp.linear and t0 is not None:
        x1 = hi if x0 != hi else lo
        t1 = _totals_at(s, inp, x1, catalog)
        if t1 is not None:
            found = _linear_crossings(x0, t0, x1, t1, here, lo, hi)
    else:
        for end in (lo, hi):
            if end == x0:
                continue
            t_end = _totals_at(s, inp, end, catalog)
            if _best(t_end) in (here, None):
                continue
            found.append(_searched_crossing(s, inp, catalog, x0, t0, end, t_end, here))
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


def verdict(p: Plan, catalog: StatsCatalog | None = None) -> Verdict:
    """The cheapest way for `p`'s scenario, by how much, when the states are usable, and the value of
    each input at which another way becomes the cheapest."""
    s = p.scenario
    t = totals(p)
    best = cheapest(p)
    others = sorted((m for m in MODES if m != best), key=lambda m: t[m])
    ready = (p.extraction.wall_hours + p.gather_hours + p.transfer_hours) / 24
    breakeven, flips, now = {}, {}, {}
    for inp in INPUTS:
        breakeven[inp.key], flips[inp.key] = _crossing(s, inp, p, catalog)
        now[inp.key] = inp.current(p)
    runner = others[0]
    gap = t[runner] - t[best]
    sentence = (f"{best.capitalize()} is cheapest: {fmt_usd(t[best])} against {fmt_usd(t[runner])} {runner} "
                f"({fmt_usd(gap)} less) and {fmt_usd(t[others[1]])} {others[1]}; ")
    if best == "offline":
        sentence += f"the stored states are usable after {ready:,.1f} days, training ends on day {p.wall_days_offline:,.1f}. "
    else:
        sentence += (f"it ends on day {p.wall_days_online if best == 'online' else p.wall_days_disaggregated:,.1f} "
                     f"(offline's stored states would be usable after {ready:,.1f} days). ")
    by_mode: dict[str, list[str]] = {}
    for k, v in breakeven.items():
        if v is not None:
            by_mode.setdefault(flips[k], []).append(_fmt(k, v, now[k]))
    sentence += (" ".join(f"{m.capitalize()} would be cheapest with " + "; or ".join(parts) + "."
                          for m, parts in by_mode.items()) if by_mode
                 else "No storage price, time held, epoch count, link speed or extraction GPU price inside their "
                      "bounds changes that.")
    return Verdict(cheapest=best, sentence=sentence, totals_usd=t, states_ready_days=ready, breakeven=breakeven,
                   flips_to=flips)
