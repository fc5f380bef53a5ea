"""planner/cli/estimate.py: `planner estimate` prints the plan of the scenario its flags give, as the text
report or as the plan's JSON, and --binary shows TiB."""
from __future__ import annotations

import json

from planner.cli.main import main
from planner.export.plan_json import to_json_dict
from planner.planning import plan
from planner.scenario import Scenario, UniformMix

FLAGS = ["--uniform-samples", "1000", "--uniform-tokens", "1000", "--model", "qwen3-8b"]


def _scenario() -> Scenario:
    return Scenario(uniform=UniformMix(samples=1000, tokens=1000), model="qwen3-8b")


def test_json_is_the_plan_of_the_flags(capsys):
    assert main(["estimate", *FLAGS, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = json.loads(json.dumps(to_json_dict(plan(_scenario()))))
    assert got == want
    assert "measured" not in got                      # no --calibration, no measured section


def test_text_shows_the_storage_in_tb_or_tib(capsys):
    p = plan(_scenario())
    assert main(["estimate", *FLAGS]) == 0
    text = capsys.readouterr().out
    assert main(["estimate", *FLAGS, "--binary"]) == 0
    binary = capsys.readouterr().out
    # the same plan, two units: the "storage (raw)" row in TB (bytes / 1e12) or TiB (bytes / 2^40), two decimals
    row = next(line for line in text.splitlines() if line.strip().startswith("storage (raw)"))
    brow = next(line for line in binary.splitlines() if line.strip().startswith("storage (raw)"))
    assert row.split()[-2:] == [f"{p.storage_bytes / 1e12:.2f}", "TB"]
    assert brow.split()[-2:] == [f"{p.storage_bytes / 2**40:.2f}", "TiB"]
