"""planner/units.py: the unit conversions and the display formats, each worked by hand."""
from __future__ import annotations

import math

from planner.units import bytes_to, fmt_bytes, fmt_hours, fmt_usd, hours_at


def test_bytes_to_each_unit():
    assert bytes_to(3e12, "TB") == 3.0               # 3e12 / 1e12
    assert bytes_to(2**41, "TiB") == 2.0             # 2^41 / 2^40
    assert bytes_to(4.5e9, "GB") == 4.5              # 4.5e9 / 1e9
    assert bytes_to(1.5 * 2**30, "GiB") == 1.5       # 1.5 x 2^30 / 2^30
    assert bytes_to(2**20 * 7, "MiB") == 7.0         # 7 x 2^20 / 2^20


def test_fmt_bytes_decimal_steps_and_boundaries():
    assert fmt_bytes(999) == "999 B"                 # under 1 kB: plain bytes
    assert fmt_bytes(1000) == "1.0 kB"               # exactly 10^3: the kB step
    assert fmt_bytes(999_999) == "1,000.0 kB"        # 999,999 / 1e3 = 999.999 -> 1,000.0 (still kB: under 1e6)
    assert fmt_bytes(1.5e12) == "1.5 TB"             # 1.5e12 / 1e12
    assert fmt_bytes(1.234e18) == "1,234.0 PB"       # over the last step: PB with a thousands comma
    assert fmt_bytes(-2e9) == "-2.0 GB"              # the step is chosen on the magnitude


def test_fmt_bytes_binary_steps():
    assert fmt_bytes(3 * 2**30, binary=True) == "3.0 GiB"   # 3 x 2^30 / 2^30
    assert fmt_bytes(2**10 - 1, binary=True) == "1,023 B"   # under 1 KiB
    assert fmt_bytes(1e12, binary=True) == "931.3 GiB"      # 1e12 / 2^30 = 931.32...; under 2^40 = 1.0995e12
    assert fmt_bytes(2.5 * 2**40, binary=True) == "2.5 TiB"  # 2.5 x 2^40 / 2^40
    assert fmt_bytes(2**50, binary=True) == "1.0 PiB"


def test_fmt_hours_minutes_hours_days():
    assert fmt_hours(0.5) == "30 min"                # 0.5 x 60
    assert fmt_hours(1) == "1.0 h"                   # exactly 1 h: hours
    assert fmt_hours(47.9) == "47.9 h"               # under 48 h: still hours
    assert fmt_hours(48) == "2.0 days"               # 48 / 24
    assert fmt_hours(100) == "4.2 days"              # 100 / 24 = 4.166...


def test_fmt_usd_cents_under_100_dollars():
    assert fmt_usd(99.994) == "$99.99"
    assert fmt_usd(100) == "$100"                    # from $100: whole dollars
    assert fmt_usd(1234.4) == "$1,234"
    assert fmt_usd(-150) == "$-150"                  # the magnitude decides: no cents


def test_hours_at_never_divides_by_zero():
    assert hours_at(7200, 1) == 2.0                  # 7,200 units at 1/s = 7,200 s = 2 h
    assert hours_at(3.6e6, 500) == 2.0               # 3.6e6 / 500 = 7,200 s
    assert hours_at(0, 0) == 0.0                     # nothing to do takes no time, even at rate 0
    assert hours_at(5, 0) == math.inf                # something at rate 0: never done
    assert hours_at(5, -1) == math.inf               # a negative rate is no rate
