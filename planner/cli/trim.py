"""CLI: trim (the mix to a budget, writing a manifest)."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import yaml
from pydantic import ValidationError

from planner.cli._common import (
    BUDGET_FLAGS,
    TRIM_FLAGS,
    CliError,
    add_flags,
    add_scenario_flags,
    check_replaceable,
    given,
    scenario_from_args,
    validation_message,
)
from planner.cli._parser import add_command
from planner.decisions.trim import Budget, trim
from planner.export.manifest import build_manifest, dump_manifest
from planner.planning import plan
from planner.safe_io import LIMITS, atomic_write
from planner.text import printable


def _is_planner_manifest(data: bytes) -> bool:
    """A mapping with schema_version and planner_version: a file the planner wrote (or could have)."""
    try:
        text = data.decode("utf-8")
        obj = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError, RecursionError):
        return False
    return isinstance(obj, dict) and "schema_version" in obj and "planner_version" in obj


def check_out(path: str, inputs: list[str], force: bool) -> None:
    """--out: a new file, or one the planner wrote (a manifest at most LIMITS["manifest"] long)."""
    check_replaceable(path, "--out", inputs, force,
                      lambda head: len(head) <= LIMITS["manifest"] and _is_planner_manifest(head),
                      "a planner manifest")


def run(args: argparse.Namespace) -> int:
    inputs = [args.manifest] if getattr(args, "manifest", None) else []
    check_out(args.out, inputs, args.force)
    s = scenario_from_args(args)
    opts = {f.path: v for f, v in given(args, TRIM_FLAGS).values()}
    budget = {path.split(".", 1)[1]: v for path, v in opts.items() if path.startswith("budget.")}
    if not budget:
        raise CliError("give at least one budget: " + ", ".join(f.flag for f in BUDGET_FLAGS))
    try:
        limits = Budget(**budget)
    except ValidationError as exc:
        raise CliError(validation_message(exc, BUDGET_FLAGS, prefix="budget")) from exc
    r = trim(s, limits, opts.get("strategy", "proportional"), protect=opts.get("protect", []),
             weights=opts.get("weights", {}), min_cap=opts.get("min_cap"),
             min_family_share=opts.get("min_family_share"))
    p = plan(r.scenario)
    m = build_manifest(r.scenario, plan=p)
    out = atomic_write(args.out, dump_manifest(m, "json" if Path(args.out).suffix.lower() == ".json" else "yaml"),
                       field="--out", inputs=inputs)
    if args.json:
        from planner.export.plan_json import to_json_dict  # the result models load only when JSON is asked for
        d = to_json_dict(p)
        d["trim"] = json.loads(r.model_dump_json(exclude={"scenario"}))
        print(json.dumps(d, indent=2))
    else:
        print("\n".join(_text(r)))
        print(f"manifest written to {printable(out)}")
    return 0


def _text(r) -> list[str]:
    """A trim result in words: what each component kept, the budgets, storage and quality, its warnings."""
    lines = [f"strategy {r.strategy}: {printable(r.note or 'trimmed')}"]
    lines += [f"  {printable(c.id):<18}{c.before:>10,} -> {c.after:>10,}" for c in r.changes]
    if r.max_seq_len_after != r.max_seq_len_before:
        lines.append(f"  max sequence length {r.max_seq_len_before} -> {r.max_seq_len_after}")
    lines += [f"  budget {printable(b.label)}: {b.share:.1%} used" for b in r.budgets]
    lines.append(f"  storage {r.storage_bytes_before / 1e12:,.2f} -> {r.storage_bytes_after / 1e12:,.2f} TB; expected "
                 f"acceptance length {r.quality_before:.2f} -> {r.quality_after:.2f} ({r.quality_low_after:.2f}-"
                 f"{r.quality_high_after:.2f}, an estimate), speedup {r.speedup_after:.2f}x")
    lines += [f"  beyond rows: {printable(w)}" for w in r.beyond_rows]
    lines += [f"  warning: {printable(w)}" for w in r.warnings]
    return lines


def register(sub) -> None:
    t = add_command(sub, "trim")
    add_scenario_flags(t)
    add_flags(t, TRIM_FLAGS)
    t.add_argument("--out", required=True, help="the manifest to write (.json for JSON, else YAML)")
    t.add_argument("--force", action="store_true",
                   help="replace an existing --out file even when it is not a planner manifest")
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=run)
