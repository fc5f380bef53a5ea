"""planner/findings.py: the one table of findings (code -> severity, fix) and what a plan's findings carry."""
from __future__ import annotations

import re

import pytest

from planner import Scenario, plan
from planner.findings import CODES, SEVERITIES, finding
from planner.scenario import UniformMix
from tests.helpers import ROOT


def test_a_finding_takes_its_severity_and_fix_from_the_table():
    f = finding("padding", "uniform: 12% padding", ["uniform"])
    assert (f.severity, f.code, f.text, f.components) == ("costs", "padding", "uniform: 12% padding", ["uniform"])
    assert f.fix == "a capture batch of 1 or length-sorted batches"
    assert finding("licence", "x").fix == "" and finding("licence", "x").severity == "note"
    with pytest.raises(KeyError):
        finding("no-such-code", "x")


def test_every_code_has_a_severity_and_what_blocks_or_costs_names_a_fix():
    for code, (severity, fix) in CODES.items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", code), code
        assert severity in SEVERITIES, code
        assert severity == "note" or fix, f"{code}: a {severity} finding names its fix"


def test_the_table_and_the_code_agree():
    # every finding("code", ...) of the planner is in the table, and every code of the table is written
    # somewhere in the planner outside the table (no dead rows)
    sources = {p: p.read_text() for p in (ROOT / "planner").rglob("*.py") if p.name != "findings.py"}
    used = {c for text in sources.values() for c in re.findall(r"finding\(\s*\"([a-z-]+)\"", text)}
    assert used and used <= set(CODES), used - set(CODES)
    unused = [c for c in CODES if not any(f'"{c}"' in text for text in sources.values())]
    assert not unused, unused


def test_a_disk_too_small_blocks_the_plan():
    # 1,000 samples x 500 tokens (cap 500) x 40,964 B a token (qwen3-8b, seed-article: tests/unit/planner/
    # test_planning.py works it) = 20.5 GB on a 0.01 TB (10 GB) disk: "disk-capacity", a blocking finding
    # (its fix is then the unblocking options, planner/decisions/unblock.py, so only its being named is checked)
    s = Scenario(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=500), max_seq_len=500,
                 model="qwen3-8b", layout="seed-article", extraction_gpu="h100-sxm", extraction_gpus=3,
                 disk_capacity_tb=0.01)
    (f,) = [f for f in plan(s).findings if f.code == "disk-capacity"]
    assert f.severity == "blocks" and f.fix
    assert "storage (0.02 TB) exceeds the 0.01 TB disk of its one node" in f.text
    assert not [f for f in plan(s.model_copy(update={"disk_capacity_tb": None})).findings if f.code == "disk-capacity"]
