"""CLI: trim (to a budget, writing a manifest), export (pipeline commands), materialize (rows)."""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

from pydantic import ValidationError

from planner.cli.main import CliError, _number, add_scenario_flags, scenario_from_args
from planner.errors import describe_validation_error


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent if str(path.parent) else ".")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def cmd_trim(a: argparse.Namespace) -> int:
    from planner.export.manifest import build_manifest, dump_manifest
    from planner.plan import plan
    from planner.trim import Budget, trim
    s = scenario_from_args(a)
    values = {"storage_tb": a.budget_storage_tb, "storage_tib": a.budget_storage_tib, "gpu_days": a.budget_gpu_days,
              "transfer_hours": a.budget_transfer_hours, "usd": a.budget_usd, "days": a.budget_days}
    flags = {"storage_tb": "--budget-storage-tb", "storage_tib": "--budget-storage-tib",
             "gpu_days": "--budget-gpu-days", "transfer_hours": "--budget-transfer-hours", "usd": "--budget-usd",
             "days": "--budget-days"}
    parsed = {k: _number(flags[k], v) for k, v in values.items() if v is not None}
    for k, v in parsed.items():
        if v <= 0:
            raise CliError(f"{flags[k]}: {v:g} must be positive")
    if not parsed:
        raise CliError("give at least one budget: --budget-storage-tb, --budget-storage-tib, --budget-gpu-days, "
                       "--budget-transfer-hours, --budget-usd or --budget-days")
    try:
        budget = Budget(**parsed)
    except ValidationError as exc:
        raise CliError(describe_validation_error(exc))
    weights = {}
    for part in filter(None, (x.strip() for x in (a.weights or "").split(","))):
        if "=" not in part:
            raise CliError(f"--weights: {part!r} must be ID=WEIGHT")
        k, v = part.split("=", 1)
        weights[k.strip()] = _number("--weights", v)
    protect = [x for x in (a.protect or "").split(",") if x.strip()]
    min_cap = None
    if a.min_cap is not None:
        min_cap = int(_number("--min-cap", a.min_cap))
    r = trim(s, budget, a.strategy, protect=protect, weights=weights, min_cap=min_cap)
    p = plan(r.scenario)
    m = build_manifest(r.scenario, p=p)
    out = Path(a.out)
    _atomic_write(out, dump_manifest(m, "json" if out.suffix.lower() == ".json" else "yaml"))
    if a.json:
        d = p.to_json_dict()
        d["trim"] = json.loads(r.model_dump_json(exclude={"scenario"}))
        print(json.dumps(d, indent=2))
    else:
        print(f"strategy {r.strategy}: {r.note or 'trimmed'}")
        for c in r.changes:
            print(f"  {c.id:<18}{c.before:>10,} -> {c.after:>10,}")
        if r.max_seq_len_after != r.max_seq_len_before:
            print(f"  max sequence length {r.max_seq_len_before} -> {r.max_seq_len_after}")
        for b in r.budgets:
            print(f"  budget {b.label}: {b.share:.1%} used")
        print(f"manifest written to {out}")
    return 0


def cmd_export(a: argparse.Namespace) -> int:
    from planner.export.commands import specforge_commands, speculators_commands
    from planner.export.manifest import dump_manifest, load_manifest
    m = load_manifest(a.manifest)
    if a.format == "speculators":
        print(speculators_commands(m, a.manifest), end="")
    elif a.format == "specforge":
        print(specforge_commands(m, a.manifest), end="")
    else:
        print(dump_manifest(m, a.format), end="")
    return 0


def register(sub) -> None:
    t = sub.add_parser("trim", help="trim the mix to a budget and write a manifest")
    add_scenario_flags(t)
    t.add_argument("--budget-storage-tb")
    t.add_argument("--budget-storage-tib")
    t.add_argument("--budget-gpu-days")
    t.add_argument("--budget-transfer-hours")
    t.add_argument("--budget-usd")
    t.add_argument("--budget-days")
    t.add_argument("--strategy", default="proportional", choices=["proportional", "protect", "value", "cap"])
    t.add_argument("--protect", help="components or families kept whole: ID_OR_FAMILY[,...]")
    t.add_argument("--weights", help="value strategy: ID=WEIGHT[,...] (default 1 each)")
    t.add_argument("--min-cap", help="cap strategy: the smallest sequence length to accept before scaling rows")
    t.add_argument("--out", required=True)
    t.add_argument("--json", action="store_true")
    t.set_defaults(func=cmd_trim)
    e = sub.add_parser("export", help="pipeline commands or the manifest in another format")
    e.add_argument("manifest")
    e.add_argument("--format", required=True, choices=["speculators", "specforge", "yaml", "json"])
    e.set_defaults(func=cmd_export)
