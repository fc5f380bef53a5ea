"""CLI: materialize (write a manifest's exact rows as JSONL, and a `datasets` script for hub components)."""
from __future__ import annotations

import argparse
import os

from planner.cli._common import check_replaceable, warn_sources
from planner.cli._parser import add_command
from planner.errors import PlannerInputError
from planner.export import sharding
from planner.export.commands import join
from planner.export.manifest import load_manifest
from planner.export.materialize import (
    HUB_SCRIPT_HEAD,
    hub_script,
    input_files,
    is_ours,
    local_sources,
    materialize_local,
)
from planner.ids import is_id
from planner.safe_io import atomic_write
from planner.text import count, dealt_note, printable


def _is_hub_script(head: bytes) -> bool:
    return head.startswith(HUB_SCRIPT_HEAD.split("{", 1)[0].encode())


def parse_local(items: list[str]) -> dict[str, str]:
    """--local ID=FILE (repeatable): the files the user names for components of the manifest."""
    local: dict[str, str] = {}
    for item in items:
        cid, sep, file = item.partition("=")
        if not sep or not is_id(cid) or not file:
            raise PlannerInputError("--local", item, "give ID=FILE, ID a component id of the manifest")
        if cid in local:
            raise PlannerInputError("--local", item, f"{cid!r} is given twice")
        local[cid] = file
    return local


def _written(a: argparse.Namespace, m, written: dict[str, int], outs: list[str]) -> None:
    """Each component's rows and where they went (one file, or the span of the shards and how they split)."""
    where = printable(a.out if a.shards is None else f"{outs[0]} ... {outs[-1]}" if len(outs) > 1 else outs[0])
    for cid, n in written.items():
        print(f"{printable(cid)}: {n:,} rows -> {where}")
    if a.shards is not None:
        print(f"{count(a.shards, 'shard')}: {dealt_note(sharding.placed(m.components)[1], a.shards)}")


def cmd_materialize(args: argparse.Namespace) -> int:
    local = parse_local(args.local)
    if args.shards is not None:
        sharding.check_count(args.shards, "--shards")
    m = warn_sources(load_manifest(args.manifest))
    # every output is checked against every input before any row is read or anything written
    inputs = [args.manifest, *input_files(local_sources(m, local))]
    outs = ([sharding.shard_path(args.out, r, args.shards) for r in range(args.shards)] if args.shards is not None
            else [args.out])
    for out in outs:
        check_replaceable(out, "--out", inputs, args.force, is_ours, "rows materialize wrote (each head row "
                          "marked \"materialized_by\": \"drafter-planner\")")
    if args.hub_script:
        check_replaceable(args.hub_script, "--hub-script", inputs, args.force, _is_hub_script,
                          "a script materialize wrote")
        if any(os.path.abspath(args.hub_script) == os.path.abspath(o) for o in outs):
            raise PlannerInputError("--hub-script", args.hub_script, "is the same file as --out")
    res = materialize_local(m, args.out, local=local, inputs=(args.manifest,), shards=args.shards)
    _written(args, m, res["written"], outs)
    if res["hub_components"]:
        names = printable(", ".join(res["hub_components"]))
        if args.hub_script:
            atomic_write(args.hub_script, hub_script(m, res["hub_components"]), field="--hub-script",
                         inputs=[*inputs, *outs])
            if args.shards is None:
                run_it = join(["python", args.hub_script, "--out", args.out, "--append"])
            else:
                run_it = join(["python", args.hub_script, "--out", outs[0], "--append", "--rank", 0,
                               "--world-size", args.shards])
                if args.shards > 1:
                    run_it += f"` and likewise for every rank up to {args.shards - 1} (its own shard) `"
            print(f"hub components ({names}): run `{run_it}` where the hub is reachable")
        else:
            print(f"hub components not materialized ({names}): add --hub-script FILE")
    return 0


def register(sub) -> None:
    mz = add_command(sub, "materialize")
    mz.add_argument("manifest")
    mz.add_argument("--out", required=True)
    mz.add_argument("--hub-script", help="also write a `datasets` script for the hub components")
    mz.add_argument("--shards", type=int, metavar="N",
                    help="write N files beside --out (mix-00000-of-0000N.jsonl ...): row p of the materialized "
                         "order in file p mod N (about 1/N of every component in each), each row in exactly one "
                         "(1 to 10,000)")
    mz.add_argument("--force", action="store_true",
                    help="replace existing --out / --hub-script files even when materialize did not write them")
    mz.add_argument("--local", action="append", default=[], metavar="ID=FILE",
                    help="read component ID from FILE (repeatable); a manifest's own local paths are only "
                         "read when you profiled that file under that id")
    mz.set_defaults(func=cmd_materialize)
