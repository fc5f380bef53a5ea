"""CLI: estimate (plan storage, GPU time, transfer, training and cost)."""
from __future__ import annotations

import argparse
import json

from planner.cli._common import add_scenario_flags, scenario_from_args
from planner.cli._parser import add_command
from planner.export import report
from planner.planning import plan
from planner.text import printable_lines


def run(args: argparse.Namespace) -> int:
    measured = None
    if args.calibration:
        from planner.runs.calibration import Measured, load
        measured = Measured.of(load(args.calibration))
    p = plan(scenario_from_args(args), measured=measured)
    if args.json:
        from planner.export.plan_json import to_json_dict  # the result models load only when JSON is asked for
        d = to_json_dict(p)
        if measured is not None:
            d["measured"] = measured.summary()
        print(json.dumps(d, indent=2))
    else:
        marks = {"measured": measured.label} if measured is not None else {}
        print(printable_lines(report.text_report(p, binary=args.binary, **marks)))
    return 0


def register(sub) -> None:
    est = add_command(sub, "estimate")
    add_scenario_flags(est)
    est.add_argument("--json", action="store_true")
    est.add_argument("--binary", action="store_true", help="show TiB instead of TB")
    est.add_argument("--calibration", help="a calibration file (planner calibrate --out): plan with its measured "
                     "bytes per token and per file and its capture rate")
    est.set_defaults(func=run)
