"""Phase 3: moving the stored hidden states from the extraction site to the training site."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TransferResult:
    method: str
    hours: float
    bytes_moved: float
    egress_usd: float
    effective_gb_s: float | None


def transfer(bytes_on_disk: float, method: str, link_gbps: float, efficiency: float, drive_days: float,
             egress_usd_per_gb: float) -> TransferResult:
    """none: same machine; link: one pass at link x efficiency; object_store: upload then download
    over the same link (two passes); egress is charged on the bytes that leave (the download, or
    the one pass over a link when the caller gives a price); drives: given days."""
    if method == "none":
        return TransferResult(method, 0.0, 0.0, 0.0, None)
    if method == "drives":
        return TransferResult(method, drive_days * 24.0, bytes_on_disk, 0.0, None)
    rate = link_gbps * 1e9 / 8 * efficiency          # bytes per second
    passes = 2 if method == "object_store" else 1
    hours = passes * bytes_on_disk / rate / 3600
    egress = bytes_on_disk / 1e9 * egress_usd_per_gb
    return TransferResult(method, hours, bytes_on_disk * passes, egress, rate / 1e9)
