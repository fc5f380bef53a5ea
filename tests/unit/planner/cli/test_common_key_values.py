"""The one KEY=VALUE reader (planner/cli/_common.py key_values) behind --workload, --min-family-share,
--components/--add and --weights: each caller keeps its own message and bounds (issue 32 item 3)."""
from __future__ import annotations

import pytest

from planner.cli._common import CliError, components, family_floor, family_shares, key_values, number, weights


def _refused(fn, text: str) -> str:
    with pytest.raises(CliError) as exc:
        fn("--x", text)
    return str(exc.value)


def test_pairs_in_order_split_at_the_first_equals_and_stripped():
    got = key_values("--x", " a = 1 , b=2=3,, ", "K=V", "names nothing", lambda part, k, v: v)
    assert got == [("a", "1"), ("b", "2=3")]


def test_family_shares():
    assert family_shares("--x", "code=0.3, general=0.7") == {"code": 0.3, "general": 0.7}
    assert _refused(family_shares, "code") == "--x: 'code' must be FAMILY=SHARE"
    assert _refused(family_shares, "chat=1") == "--x: 'chat' is not a family; use general, code, tool, agentic, math"
    assert _refused(family_shares, "code=1,code=2") == "--x: code is given twice"
    assert _refused(family_shares, "code=-1") == "--x: code=-1 must not be negative"
    assert _refused(family_shares, "code=x") == "--x: 'x' is not a number"
    # nothing given and shares summing to 0 are one message
    nothing = "gives no positive share; e.g. general=0.5,code=0.3,tool=0.2"
    assert _refused(family_shares, ",") == f"--x: ',' {nothing}"
    assert _refused(family_shares, "code=0") == f"--x: 'code=0' {nothing}"


def test_family_floor():
    # a family given twice: the last share (as before the one reader)
    assert family_floor("--x", "code=0.5,math=1,code=0.25") == {"code": 0.25, "math": 1.0}
    assert _refused(family_floor, "code") == "--x: 'code' must be FAMILY=F"
    assert _refused(family_floor, "code=1.5") == "--x: code=1.5 must be a share from 0 to 1"
    assert _refused(family_floor, "") == "--x: '' names no family; e.g. code=0.5"


def test_components():
    assert components("--x", "a=1_000,b=0") == [{"id": "a", "rows": 1000}, {"id": "b", "rows": 0}]
    assert _refused(components, "a") == "--x: 'a' must be ID=ROWS"
    assert _refused(components, "=5") == "--x: '=5' has no component id"
    assert _refused(components, "a=1.5") == "--x: 'a=1.5' has rows '1.5', not a whole number"
    assert _refused(components, "a=-1") == "--x: 'a=-1' has a negative row count"
    assert _refused(components, " , ") == "--x: ' , ' names nothing; give at least one ID=ROWS"


def test_weights():
    assert weights("--x", "a=2,b=0.5") == {"a": 2.0, "b": 0.5}
    assert _refused(weights, "a") == "--x: 'a' must be ID=WEIGHT"
    assert _refused(weights, "a=inf") == "--x: 'inf' must be a finite number"
    assert _refused(weights, "") == "--x: '' names nothing; give ID=WEIGHT[,...]"
    assert number("--x", "1e3") == 1000.0
