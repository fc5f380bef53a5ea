"""Phase 3: moving the stored hidden states from the extraction site to the training site."""
from __future__ import annotations

from pydantic import BaseModel

from planner.phases.assumption_rows import Assumption, paired
from planner.presets.specs import link_efficiency
from planner.scenario import Transfer
from planner.units import hours_at


class TransferPlan(BaseModel):
    method: str
    hours: float
    bytes_moved: float
    egress_usd: float
    effective_gb_s: float | None     # link rate x efficiency (None: nothing crosses a link)


def transfer(bytes_on_disk: float, t: Transfer, egress_usd_per_gb: float) -> TransferPlan:
    """none: same machine; link: one pass at link x efficiency; object_store: upload then download
    over the same link (two passes); egress is charged on the bytes that leave (the download, or
    the one pass over a link when the caller gives a price); drives: given days."""
    if t.method == "none":
        return TransferPlan(method=t.method, hours=0.0, bytes_moved=0.0, egress_usd=0.0, effective_gb_s=None)
    if t.method == "drives":
        return TransferPlan(method=t.method, hours=t.drive_days * 24.0, bytes_moved=bytes_on_disk, egress_usd=0.0,
                            effective_gb_s=None)
    rate = t.link_gbps * 1e9 / 8 * t.efficiency          # bytes per second
    passes = 2 if t.method == "object_store" else 1
    return TransferPlan(method=t.method, hours=passes * hours_at(bytes_on_disk, rate),
                        bytes_moved=bytes_on_disk * passes, egress_usd=bytes_on_disk / 1e9 * egress_usd_per_gb,
                        effective_gb_s=rate / 1e9)


def transfer_assumptions(tr: Transfer) -> list[Assumption]:
    """The transfer's row of the Assumptions table: shipped drives or a link at its efficiency."""
    if tr.method == "drives":
        return [Assumption(name="transfer", value=f"shipped drives, {tr.drive_days:g} days", tag="yours",
                           source="the days you gave for shipping the drives")]
    if tr.method != "none":
        link = link_efficiency()
        return [paired("transfer", tr.efficiency, float(link["value"]), link["source"],
                       shown=f"{tr.method}: {tr.link_gbps:g} Gb/s x {tr.efficiency:g} efficiency")]
    return []
