"""How each assumption's plausible range moves storage, time and cost (for the tornado chart)."""
from __future__ import annotations

from dataclasses import dataclass

from planner.plan import Plan, plan
from planner.scenario import Scenario
from planner.catalog.stats import StatsCatalog

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


def _variants(s: Scenario) -> list[tuple[str, str, str, Scenario, Scenario]]:
    t, tr, trn = s.throughput, s.transfer, s.training
    out = [
        ("compression", "1.0x", "2.0x", s.with_changes(compression=1.0), s.with_changes(compression=2.0)),
        ("tokens per sample", "-20%", "+20%", s.with_changes(length_scale=s.length_scale * 0.8),
         s.with_changes(length_scale=s.length_scale * 1.2)),
    ]
    if t.mode == "roofline":
        out += [
            ("prefill MFU", "0.30", "0.55", s.with_changes(throughput=t.model_copy(update={"prefill_mfu": 0.30})),
             s.with_changes(throughput=t.model_copy(update={"prefill_mfu": 0.55}))),
            ("decode bandwidth efficiency", "0.6", "0.8",
             s.with_changes(throughput=t.model_copy(update={"decode_bandwidth_efficiency": 0.6})),
             s.with_changes(throughput=t.model_copy(update={"decode_bandwidth_efficiency": 0.8}))),
        ]
    else:
        out.append(("tokens/s", "80", "120", s.with_changes(throughput=t.model_copy(update={"tokens_per_s": 80})),
                    s.with_changes(throughput=t.model_copy(update={"tokens_per_s": 120}))))
    if tr.method in ("link", "object_store"):
        out.append(("link efficiency", "0.1", "0.8", s.with_changes(transfer=tr.model_copy(update={"efficiency": 0.1})),
                    s.with_changes(transfer=tr.model_copy(update={"efficiency": 0.8}))))
    out.append(("training MFU", "0.30", "0.40", s.with_changes(training=trn.model_copy(update={"mfu": 0.30})),
                s.with_changes(training=trn.model_copy(update={"mfu": 0.40}))))
    return out


def sensitivity(s: Scenario, base: Plan | None = None, catalog: StatsCatalog | None = None) -> list[Swing]:
    base = base or plan(s, catalog)
    values = lambda p: {k: f(p) for k, (_, f) in METRICS.items()}  # noqa: E731
    b = values(base)
    return [Swing(name, lo_l, hi_l, b, values(plan(lo, catalog)), values(plan(hi, catalog)))
            for name, lo_l, hi_l, lo, hi in _variants(s)]
