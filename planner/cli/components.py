"""CLI: components (the catalog with provenance)."""
from __future__ import annotations

import argparse
import json
from typing import Any

from planner.catalog.stats import get_catalog
from planner.cli._parser import add_command
from planner.text import printable


def run(args: argparse.Namespace) -> int:
    cat = get_catalog()
    rows: list[dict[str, Any]] = []
    for c in cat.components.values():
        rows.append({"id": c.id, "name": c.name, "family": c.family, "hf_repo": c.hf_repo, "subset": c.subset,
                     "split": c.split, "licence": c.licence, "licence_note": c.licence_note,
                     "rows_in_mix": c.rows_in_mix, "rows_available": c.rows_available, "turns": c.turns,
                     "mean_tokens": c.mean_tokens, "median_tokens": c.median_tokens,
                     "assistant_share": c.assistant_share, "in_default_mix": c.in_default_mix, "origin": c.origin,
                     "provenance": c.provenance})
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'id':<18}{'family':<9}{'rows in mix':>12}{'available':>12}{'mean tok':>10}  origin    hf repo")
    for r in rows:
        tag = (r["provenance"].get("mean_tokens") or {}).get("tag", "")
        print(f"{printable(r['id']):<18}{printable(r['family']):<9}{r['rows_in_mix']:>12,}{r['rows_available']:>12,}"
              f"{r['mean_tokens']:>10,.0f}  {printable(r['origin']):<9} {printable(r['hf_repo'] or '')} "
              f"(tokens: {printable(tag)})")
    total = sum(r["rows_in_mix"] for r in rows if r["in_default_mix"])
    print(f"default mix: {total:,} rows")
    return 0


def register(sub) -> None:
    comp = add_command(sub, "components")
    comp.add_argument("--json", action="store_true")
    comp.set_defaults(func=run)
