"""CLI: estimate (plan storage, GPU time, transfer, training and cost)."""
from __future__ import annotations

import argparse
import json

from planner.cli._common import add_scenario_flags, scenario_from_args
from planner.text import printable


def run(a: argparse.Namespace) -> int:
    from planner.plan import plan
    from planner.report import text_report
    p = plan(scenario_from_args(a))
    if a.json:
        print(json.dumps(p.to_json_dict(), indent=2))
    else:
        print(printable(text_report(p, binary=a.binary)))
    return 0


def register(sub) -> None:
    est = sub.add_parser("estimate", help="plan storage, GPU time, transfer, training and cost")
    add_scenario_flags(est)
    est.add_argument("--json", action="store_true")
    est.add_argument("--binary", action="store_true", help="show TiB instead of TB")
    est.set_defaults(func=run)
