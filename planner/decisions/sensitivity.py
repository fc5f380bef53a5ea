"""How each assumption's plausible range moves storage, time and cost (for the tornado chart).

Every range is read from planner/presets/hardware.yaml (the same entries the Scenario takes its
defaults from) and kept inside the Scenario field's bounds.
"""
from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from planner.catalog.stats import StatsCatalog
from planner.phases.costs import DAYS_PER_MONTH
from planner.planning import Plan, plan
from planner.presets.specs import efficiency_range, link_efficiency, storage_price_presets
from planner.scenario import Scenario

METRICS = {
    "storage_tb": ("Storage (TB)", lambda p: p.storage_bytes_compressed / 1e12),
    "wall_days": ("Wall-clock days (offline)", lambda p: p.wall_days_offline),
    "usd": ("Total USD (offline)", lambda p: p.cost_usd.total_offline),
}


@dataclass
class Swing:
    assumption: str
    low_label: str
    high_label: str
    base: dict
    low: dict
    high: dict


@dataclass(frozen=True)
class _Variant:
    assumption: str
    low_label: str
    high_label: str
    low: Scenario
    high: Scenario


def field_bounds(model: type[BaseModel], name: str) -> tuple[float | None, float | None]:
    """(ge, le) of a Scenario field as its model defines them (None: unbounded on that side)."""
    lo = hi = None
    for m in model.model_fields[name].metadata:
        if getattr(m, "ge", None) is not None:
            lo = m.ge
        if getattr(m, "le", None) is not None:
            hi = m.le
    return lo, hi


def _within(model: type[BaseModel], name: str, value: float) -> float:
    """`value` clamped to the field's bounds (ge/le) as the Scenario defines them."""
    lo, hi = field_bounds(model, name)
    if lo is not None:
        value = max(value, lo)
    if hi is not None:
        value = min(value, hi)
    return value


def _sub(s: Scenario, part: str, name: str, value: float) -> Scenario:
    """`s` with `part.name` (or the top-level `name` when part is empty) set, inside its bounds."""
    if not part:
        return s.with_changes(**{name: _within(Scenario, name, value)})
    sub = getattr(s, part)
    return s.with_changes(**{part: sub.model_copy(update={name: _within(type(sub), name, value)})})


def _swept(s: Scenario, assumption: str, part: str, name: str, low: float, high: float, fmt: str = "{:g}") -> _Variant:
    return _Variant(assumption, fmt.format(low), fmt.format(high), _sub(s, part, name, low), _sub(s, part, name, high))


def _variants(s: Scenario, base: Plan | None = None) -> list[_Variant]:
    comp = efficiency_range("compression")
    scale = efficiency_range("length_scale")          # relative to the scenario's own scale
    out = [
        _swept(s, "compression", "", "compression", *comp, fmt="{:.1f}x"),
        _Variant("tokens per sample", f"{scale[0] - 1:+.0%}", f"{scale[1] - 1:+.0%}",
                 _sub(s, "", "length_scale", s.length_scale * scale[0]),
                 _sub(s, "", "length_scale", s.length_scale * scale[1])),
    ]
    if s.throughput.mode in ("roofline", "calibrated"):
        out += [_swept(s, "prefill MFU", "throughput", "prefill_mfu", *efficiency_range("prefill_mfu")),
                _swept(s, "decode bandwidth efficiency", "throughput", "decode_bandwidth_efficiency",
                       *efficiency_range("decode_bandwidth")),
                _swept(s, "decode compute efficiency", "throughput", "decode_mfu", *efficiency_range("decode_mfu"))]
    else:
        out.append(_swept(s, "tokens/s", "throughput", "tokens_per_s", *efficiency_range("fixed_tokens_per_s")))
    if s.transfer.method in ("link", "object_store"):
        low, high = link_efficiency()["range"]
        out.append(_swept(s, "link efficiency", "transfer", "efficiency", float(low), float(high)))
    if s.placement == "shared":
        out.append(_swept(s, "shared filesystem GB/s", "", "shared_fs_gb_s", *efficiency_range("shared_fs_gb_s")))
    elif s.gather_applies:
        out.append(_swept(s, "node network Gb/s", "", "node_network_gbps", *efficiency_range("node_network_gbps")))
    out.append(_swept(s, "training MFU", "training", "mfu", *efficiency_range("training_mfu")))
    return out + _storage_variants(s, base or plan(s, band=False))


def _storage_variants(s: Scenario, base: Plan) -> list[_Variant]:
    """The storage rent's two inputs: the price, from the cheapest to the dearest preset (the nodes'
    own disks cost nothing, presets/hardware.yaml), and the time held, from the plan's own timeline to
    one billing month kept beyond it."""
    prices = [float(v["usd_per_tb_month"]) for v in storage_price_presets().values()]
    # months given: their days are the time held; else the timeline without the days kept after it
    timeline = base.cost_usd.storage_days_held - (s.costs.keep_days if s.costs.storage_months is None else 0.0)
    days = (timeline, timeline + DAYS_PER_MONTH)
    return [_swept(s, "storage $/TB-month", "costs", "storage_usd_per_tb_month", min(prices), max(prices),
                   fmt="${:,.2f}"),
            _Variant("storage time held", f"{days[0]:,.1f} days", f"{days[1]:,.1f} days",
                     _sub(s, "costs", "storage_months", days[0] / DAYS_PER_MONTH),
                     _sub(s, "costs", "storage_months", days[1] / DAYS_PER_MONTH))]


def sensitivity(scenario: Scenario, base: Plan | None = None, catalog: StatsCatalog | None = None) -> list[Swing]:
    base = base or plan(scenario, catalog)
    values = lambda p: {k: f(p) for k, (_, f) in METRICS.items()}  # noqa: E731
    b = values(base)
    return [Swing(v.assumption, v.low_label, v.high_label, b, values(plan(v.low, catalog, band=False)),
                  values(plan(v.high, catalog, band=False)))
            for v in _variants(scenario, base)]
