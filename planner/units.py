"""Unit conversions: the model works in bytes and hours (hours_at), display units only at the edges."""
from __future__ import annotations

import math

TB = 10**12
TiB = 2**40
GB = 10**9
GiB = 2**30
MiB = 2**20


def bytes_to(value_bytes: float, unit: str) -> float:
    return value_bytes / {"TB": TB, "TiB": TiB, "GB": GB, "GiB": GiB, "MiB": MiB}[unit]


def fmt_bytes(value_bytes: float, binary: bool = False) -> str:
    steps = [("PiB", 2**50), ("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", 2**10)] if binary else \
        [("PB", 10**15), ("TB", TB), ("GB", GB), ("MB", 10**6), ("kB", 10**3)]
    for name, size in steps:
        if abs(value_bytes) >= size:
            return f"{value_bytes / size:,.1f} {name}"
    return f"{value_bytes:,.0f} B"


def fmt_hours(hours: float) -> str:
    if hours >= 48:
        return f"{hours / 24:,.1f} days"
    if hours >= 1:
        return f"{hours:,.1f} h"
    return f"{hours * 60:,.0f} min"


def fmt_usd(usd: float) -> str:
    return f"${usd:,.0f}" if abs(usd) >= 100 else f"${usd:,.2f}"


def hours_at(amount: float, per_second: float) -> float:
    """Hours to get through `amount` at `per_second`; nothing to do takes 0 h, a zero rate infinite
    hours (plan() then refuses the plan and names the input), never a ZeroDivisionError."""
    if not amount:
        return 0.0
    return amount / per_second / 3600 if per_second > 0 else math.inf
