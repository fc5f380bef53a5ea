"""CLI: export (pipeline commands for a manifest, or the manifest in another format); with --nodes
or --scheduler slurm, the commands of every rank of a multi-node capture (planner/export/slurm.py)."""
from __future__ import annotations

import argparse
import sys

from planner.cli._common import CliError, check_replaceable, read_manifest
from planner.cli._parser import add_command
from planner.cli.status import rank_status, suspect_lines
from planner.export import sharding, slurm
from planner.export.commands import EXPORT_FORMATS
from planner.export.ray_driver import RAY_MARK, ray_driver
from planner.export.sharding import SCHEDULERS
from planner.export.slurm import SLURM_MARK
from planner.safe_io import atomic_write
from planner.text import count, printable


def _is_slurm_script(head: bytes) -> bool:
    return head.startswith((SLURM_MARK.encode(), RAY_MARK.encode()))


def _check_flags(a: argparse.Namespace) -> bool:
    """Refuse flags that do nothing in this combination; whether the export is sharded (--nodes or --scheduler)."""
    sharded = a.nodes is not None or a.scheduler is not None
    if sharded and a.format not in sharding.SHARDED_FORMATS:
        flag = "--nodes" if a.nodes is not None else "--scheduler"
        raise CliError(f"{flag}: a multi-node export is made for {', '.join(sharding.SHARDED_FORMATS)}, "
                       f"not {a.format}")
    if a.resume is not None and a.scheduler is None:
        raise CliError("--resume: writes a --scheduler slurm|ray script for the unfinished ranks; give --scheduler")
    if a.verify and a.resume is None:
        raise CliError("--verify: reads the files of a run for --resume; give --resume RUN_DIR")
    if a.mix is not None and a.resume is None:
        raise CliError("--mix: places the rows of a run for --resume; give --resume RUN_DIR")
    if a.out is not None and a.scheduler is None:
        raise CliError("--out: writes the --scheduler script; without --scheduler the commands go to stdout")
    if a.nodes is not None:
        sharding.check_count(a.nodes, "--nodes", "nodes")
    return sharded


def _unfinished(a: argparse.Namespace, m, nodes: int) -> list[int]:
    """The ranks of RUN_DIR (--resume) not complete yet, the suspect files' lines printed on stderr first."""
    st = rank_status(m, a.format, nodes, a.resume, a.mix, a.verify)
    for line in suspect_lines(st):      # the script reruns their ranks; the files must go first
        print(line, file=sys.stderr)
    return st.unfinished


def _write(a: argparse.Namespace, text: str, nodes: int, ranks: list[int] | None) -> None:
    """The scheduler script to --out (atomically), and what to do with it."""
    atomic_write(a.out, text, field="--out", inputs=[a.manifest])
    how = ("run it on the cluster: ray job submit --working-dir . -- python FILE" if a.scheduler == "ray"
           else "sbatch it")
    which = (f"{len(ranks):,} of {count(nodes, 'rank')} ({','.join(map(str, ranks))})" if ranks
             else count(nodes, "rank"))
    print(f"{which} -> {printable(a.out)}: {how} (add --dry-run to see each rank's commands)")


def run(args: argparse.Namespace) -> int:
    sharded = _check_flags(args)
    m = read_manifest(args.manifest, "manifest")
    if not sharded:
        print(EXPORT_FORMATS[args.format].render(m, args.manifest), end="")
        return 0
    nodes = args.nodes if args.nodes is not None else m.scenario.extraction_node_count
    rows = sum(c.rows_selected for c in m.components)
    if nodes > rows:
        # an empty rank has nothing to capture, and Model-Optimizer's dataset.shard raises on one
        raise CliError(f"--nodes: {nodes:,} ranks but the manifest selects {rows:,} rows; give at most {rows:,} "
                       f"nodes so that every rank has a row")
    if args.scheduler is None:
        print(slurm.rank_commands(m, args.format, nodes, args.manifest), end="")
        return 0
    ranks = None
    if args.resume is not None:
        ranks = _unfinished(args, m, nodes)
        if not ranks:
            print(f"every one of the {nodes:,} ranks is complete in {printable(args.resume)}: nothing to resume")
            return 0
    if args.out is not None:
        check_replaceable(args.out, "--out", [args.manifest], args.force, _is_slurm_script, "a script export wrote")
    if args.scheduler == "ray":
        text = ray_driver(m, args.format, nodes, args.manifest, ranks)
    else:
        text = slurm.slurm_script(m, args.format, nodes, args.manifest, ranks)
    if args.out is None:
        print(text, end="")
    else:
        _write(args, text, nodes, ranks)
    return 0


def register(sub) -> None:
    e = add_command(sub, "export")
    e.add_argument("manifest")
    e.add_argument("--format", required=True, choices=list(EXPORT_FORMATS))
    e.add_argument("--nodes", type=int, metavar="N",
                   help="capture on N nodes, one rank each (speculators, specforge, modelopt; default with "
                        "--scheduler: the manifest's extraction nodes)")
    e.add_argument("--scheduler", choices=list(SCHEDULERS),
                   help="write an sbatch array script (one array task per rank) or a Ray driver (one task per rank)")
    e.add_argument("--resume", metavar="RUN_DIR", help="only the ranks not complete in RUN_DIR (planner status)")
    e.add_argument("--mix", metavar="FILE", help="with --resume for modelopt: the mix.jsonl the ranks' shards "
                                                     "were made from (its mix-0000R-of-0000N.jsonl are read)")
    e.add_argument("--verify", action="store_true", help="with --resume: read each finished file's metadata "
                                                         "(planner status --verify) to rerun truncated ones' ranks")
    e.add_argument("--out", metavar="FILE", help="write the --scheduler script to FILE (default: stdout); a file "
                                                 "export did not write is never replaced")
    e.add_argument("--force", action="store_true", help="replace --out even when export did not write it")
    e.set_defaults(func=run)
