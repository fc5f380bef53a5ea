"""CLI: preflight (issue 37): measure the capture on this machine before the fleet is rented, and
write what it measured as a calibration file for `estimate --calibration` (planner/runs/preflight.py)."""
from __future__ import annotations

import argparse
import json
import sys

from planner.cli._common import (
    check_replaceable,
    emit_calibration,
    positive_int,
    read_manifest,
    text_value,
)
from planner.cli._parser import add_command
from planner.cli.calibrate import _positive
from planner.runs import preflight
from planner.runs.calibration import KIND
from planner.text import printable
from planner.units import fmt_bytes


def _progress(line: str) -> None:
    print(f"preflight: {printable(line)}", file=sys.stderr, flush=True)


def text(result) -> str:
    c, d, g, cap = result.calibration, result.disk, result.gpus, result.capture
    rate = "not measured" if c.tokens_per_s_per_gpu is None else f"{c.tokens_per_s_per_gpu:,.1f} tokens/s per GPU"
    lines = [f"preflight: {printable(c.measured_by)} (layout {printable(c.layout)}, model {printable(c.model)})",
             f"  disk         {fmt_bytes(d['free_bytes'])} free against {fmt_bytes(d['bytes_per_node'])} the plan "
             f"writes per node: {'fits' if d['fits'] else 'does NOT fit'}",
             "  disk rate    " + (f"{fmt_bytes(d['write_bytes_per_s'])}/s written (fsync'd), "
                                  f"{fmt_bytes(d['read_bytes_per_s'] or 0)}/s read back, {d['files']} files of "
                                  f"{fmt_bytes(d['file_bytes'])}" if d["write_bytes_per_s"] else "not measured"),
             f"  GPUs         {g['count']}: " + (f"{printable(', '.join(g['names']))} (from {g['from']})"
                                             if g["names"] else g["from"])]
    lines += [f"               {printable(x)}" for x in g["against_plan"]]
    lines.append(f"  capture      {cap['rows']} rows, {cap['tokens']:,} tokens on {cap['device']}: {rate} "
                 f"(the plan's table: {cap['tabled_tokens_per_s_per_gpu']:,.1f}); {cap['layers_run']} of "
                 f"{cap['layers']} layers run, the forward scaled x {cap['scale']:.3g}")
    if c.data_bytes_per_token is not None:
        lines.append(f"  files        {c.data_bytes_per_token:,.1f} bytes of tensors per token, "
                     f"{c.overhead_bytes_per_file:,.0f} bytes per file beside them")
    lines += [f"note: {printable(n)}" for n in c.notes]
    lines.append("not measured: " + "; ".join(result.not_measured))
    return "\n".join(lines)


def _is_calibration(head: bytes) -> bool:
    try:
        obj = json.loads(head.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(obj, dict) and obj.get("kind") == KIND


def run(args: argparse.Namespace) -> int:
    if args.out:
        check_replaceable(args.out, "--out", [args.manifest], args.force, _is_calibration, "a calibration file")
    m = read_manifest(args.manifest, "--manifest")
    o = preflight.Options(layout=args.layout, device=args.device, layers_run=args.layers_run,
                          max_minutes=args.max_minutes, dir=args.dir, test_mb=args.test_mb, rows=args.rows,
                          seed=args.seed, progress=None if args.quiet else _progress)
    r = preflight.run(m, o)
    return emit_calibration(args, r.calibration, json.dumps(r.to_dict(), indent=2) if args.json else "",
                            "" if args.json else text(r))


def register(sub) -> None:
    p = add_command(sub, "preflight")
    p.add_argument("--manifest", required=True, type=lambda t: text_value("--manifest", t),
                   help="the manifest of the plan to check")
    p.add_argument("--layout", type=lambda t: text_value("--layout", t), help="the layout (default: the manifest's)")
    p.add_argument("--device", choices=("cuda", "cpu"), help="where the capture runs (default: cuda when present)")
    p.add_argument("--layers-run", type=lambda t: positive_int("--layers-run", t),
                   help="layers built at full width, their time scaled to all (default 2)")
    p.add_argument("--max-minutes", type=_positive("--max-minutes"), default=10.0,
                   help="the bound on the whole preflight (default 10)")
    p.add_argument("--dir", default=".", type=lambda t: text_value("--dir", t),
                   help="the folder the capture will write to (default: here); preflight removes what it writes")
    p.add_argument("--test-mb", type=_positive("--test-mb"), default=1024.0,
                   help="MB the disk test writes (default 1024)")
    p.add_argument("--rows", type=lambda t: positive_int("--rows", t), default=16,
                   help="rows captured at most (default 16)")
    p.add_argument("--seed", type=lambda t: positive_int("--seed", t), default=1, help="the rows' draw (default 1)")
    p.add_argument("--out", type=lambda t: text_value("--out", t), help="write the calibration file (JSON)")
    p.add_argument("--force", action="store_true", help="replace --out even when it is not a calibration file")
    p.add_argument("--json", action="store_true")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=run)
