"""The headline figures of a plan, written once: name, label, unit, getter and which way is better.

Trim's budgets read their figures here (planner/decisions/trim.py BUDGET_HEADLINE); the dashboard's metrics and
Compare can take their labels, getters and delta colours from the same table. A getter takes a Plan,
or for the budget figures (storage, gpu_days, transfer_hours, usd, days) also plan.Figures, which
gives them under the same names. Values are in the headline's `unit`; storage is in bytes (the
display divides by units.TB or units.TiB).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable


@dataclass(frozen=True)
class Headline:
    name: str
    label: str
    unit: str                        # what get() returns: bytes, GPU-days, days, h, $, rows, tokens, tau, x
    get: Callable[[Any], float]      # a Plan or a Figures: the same names on both (duck-typed)
    better: str                      # "lower" or "higher"

    def delta_color(self) -> str:
        """Streamlit's st.metric delta_color: a rise shown green when higher is better."""
        return "normal" if self.better == "higher" else "inverse"


HEADLINES: dict[str, Headline] = {h.name: h for h in (
    Headline("samples", "Samples", "rows", lambda p: p.samples, "higher"),
    Headline("tokens", "Stored tokens", "tokens", lambda p: p.tokens, "lower"),
    Headline("storage", "Storage", "bytes", lambda p: p.storage_bytes_compressed, "lower"),
    Headline("raw_storage", "Raw storage", "bytes", lambda p: p.storage_bytes, "lower"),
    Headline("storage_per_node", "Per node", "bytes", lambda p: p.storage_per_node_bytes, "lower"),
    Headline("gpu_days", "Extraction", "GPU-days", lambda p: p.extraction.gpu_hours / 24, "lower"),
    Headline("extraction_days", "Extraction", "days", lambda p: p.extraction.wall_hours / 24, "lower"),
    Headline("transfer_hours", "Transfer", "h", lambda p: p.transfer_hours, "lower"),
    Headline("gather_hours", "Gather", "h", lambda p: p.gather_hours, "lower"),
    Headline("train_offline_gpu_days", "Train offline", "GPU-days", lambda p: p.training.offline_gpu_hours / 24,
             "lower"),
    Headline("train_online_gpu_days", "Train online", "GPU-days", lambda p: p.training.online_gpu_hours / 24,
             "lower"),
    Headline("usd", "Offline: store, train", "$", lambda p: p.cost_usd.total_offline, "lower"),
    Headline("usd_online", "Online: no storage", "$", lambda p: p.cost_usd.total_online, "lower"),
    Headline("usd_disaggregated", "Disaggregated", "$", lambda p: p.cost_usd.total_disaggregated, "lower"),
    Headline("days", "Offline, wall", "days", lambda p: p.wall_days_offline, "lower"),
    Headline("days_online", "Online, wall", "days", lambda p: p.wall_days_online, "lower"),
    Headline("acceptance_length", "Acceptance length", "tau", lambda p: p.quality.acceptance_length, "higher"),
    Headline("speedup", "Speedup", "x", lambda p: p.quality.speedup, "higher"),
)}

# the decimals each unit is shown with (bytes in TB or TiB): the metrics and Compare round a figure, and
# take a difference between the figures as shown (issue 35: Compare's +87 beside the headline's +$86)
DECIMALS: dict[str, int] = {"rows": 0, "tokens": 0, "bytes": 2, "GPU-days": 2, "days": 2, "h": 1, "$": 0,
                            "tau": 2, "x": 2}


def shown_difference(unit: str, value: float, base: float) -> float:
    """`value - base` as the two figures are shown (each rounded to its unit's decimals first)."""
    d = DECIMALS.get(unit, 2)
    return round(round(value, d) - round(base, d), d)
