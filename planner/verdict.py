"""The answer to the seed article's question for one scenario: is it cheaper to extract the hidden
states, store them and train offline, to train online (the target runs beside the trainer), or to
stream them (disaggregated)? One sentence, and the break-evens that would flip it.

A break-even is the value of one input at which the cheapest mode changes, found on the real plan
(plan() re-run with that input changed). Each total moves monotonically with each of these inputs
(linearly with a price, the days held, the epochs; through the transfer hours with the link), so the
cheapest mode holds over one interval of the input: the plan at each end of the input's bounds (from
the Scenario model) tells whether the answer flips on that side, and bisection between the scenario's
own value and that end finds where; the crossing nearest the scenario's value is reported, None when
neither end flips it. Every input moves the dollars only through plan(), so no formula is written twice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from pydantic import BaseModel

from planner.catalog.stats import StatsCatalog
from planner.errors import PlannerInputError
from planner.costs import DAYS_PER_MONTH
from planner.plan import Plan, plan
from planner.scenario import Costs, Scenario, Training, Transfer
from planner.sensitivity import _sub, field_bounds
from planner.units import fmt_usd

MODES = ("offline", "online", "disaggregated")
BISECT = 60          # at most, geometric once both ends are positive; stops at 1e-10 relative
PRECISION = 1e-10


class Verdict(BaseModel):
    cheapest: str                                 # offline | online | disaggregated
    sentence: str
    totals_usd: dict[str, float]
    states_ready_days: float                      # offline: capture, gather and transfer done
    breakeven: dict[str, float | None]            # input -> the value where the cheapest mode flips
    flips_to: dict[str, str | None]               # input -> the mode that is cheapest past it


def totals(p: Plan) -> dict[str, float]:
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


def _held(s: Scenario, days: float) -> Scenario:
    return _sub(s, "costs", "storage_months", days / DAYS_PER_MONTH)


INPUTS = (
    _Input("storage_usd_per_tb_month", Costs, "storage_usd_per_tb_month",
           lambda p: p.cost_usd.storage_usd_per_tb_month,
           lambda s, x: _sub(s, "costs", "storage_usd_per_tb_month", x)),
    _Input("days_held", Costs, "storage_months", lambda p: p.cost_usd.storage_days_held, _held),
    _Input("epochs", Training, "epochs", lambda p: p.scenario.training.epochs,
           lambda s, x: _sub(s, "training", "epochs", x)),
    _Input("link_gbps", Transfer, "link_gbps", lambda p: p.scenario.transfer.link_gbps,
           lambda s, x: _sub(s, "transfer", "link_gbps", x),
           lambda p: p.transfer_method in ("link", "object_store")),
    _Input("extraction_gpu_usd_per_hour", Costs, "extraction_usd_per_gpu_hour",
           lambda p: p.cost_usd.extraction_usd_per_gpu_hour,
           lambda s, x: _sub(s, "costs", "extraction_usd_per_gpu_hour", x)),
)


def _crossing(s: Scenario, inp: _Input, p: Plan, catalog: StatsCatalog | None) -> tuple[float | None, str | None]:
    if not inp.applies(p):
        return None, None
    lo, hi = field_bounds(inp.model, inp.field)
    if inp.key == "days_held":
        lo, hi = lo * DAYS_PER_MONTH, hi * DAYS_PER_MONTH
    x0 = min(max(inp.current(p), lo), hi)
    here = cheapest(p)

    def mode(x: float) -> str | None:
        """The cheapest way at x; None where no plan can be made (a figure that would not be finite)."""
        try:
            return cheapest(plan(inp.set(s, x), catalog, band=False))
        except PlannerInputError:
            return None
    best: tuple[float, float, str] | None = None      # (distance in log, value, the mode past it)
    for end in (lo, hi):
        if end == x0:
            continue
        flipped = mode(end)
        if flipped in (here, None):
            continue
        a, b = x0, end                                # a keeps the answer, b flips it
        for _ in range(BISECT):
            if abs(b - a) <= PRECISION * max(abs(a), abs(b)):
                break
            mid = math.sqrt(a * b) if a > 0 and b > 0 else (a + b) / 2
            if mode(mid) == here:
                a = mid
            else:
                b = mid
        x = (a + b) / 2
        dist = abs(math.log((x + 1e-12) / (x0 + 1e-12)))
        if best is None or dist < best[0]:
            best = (dist, x, mode(b))
    return (best[1], best[2]) if best else (None, None)


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
