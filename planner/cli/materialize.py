"""CLI: materialize (write a manifest's exact rows as JSONL, and a `datasets` script for hub components)."""
from __future__ import annotations

import argparse

from planner.safe_io import atomic_write


def cmd_materialize(a: argparse.Namespace) -> int:
    from planner.export.materialize import hub_script, materialize_local
    from planner.export.manifest import load_manifest
    m = load_manifest(a.manifest)
    res = materialize_local(m, a.out)
    for cid, n in res["written"].items():
        print(f"{cid}: {n:,} rows -> {a.out}")
    if res["hub_components"]:
        if a.hub_script:
            atomic_write(a.hub_script, hub_script(m), field="--hub-script", inputs=[a.manifest])
            print(f"hub components ({', '.join(res['hub_components'])}): run "
                  f"`python {a.hub_script} --out {a.out} --append` where the hub is reachable")
        else:
            print(f"hub components not materialized ({', '.join(res['hub_components'])}): add --hub-script FILE")
    return 0


def register(sub) -> None:
    mz = sub.add_parser("materialize", help="write the manifest's exact rows as JSONL")
    mz.add_argument("manifest")
    mz.add_argument("--out", required=True)
    mz.add_argument("--hub-script", help="also write a `datasets` script for the hub components")
    mz.set_defaults(func=cmd_materialize)
