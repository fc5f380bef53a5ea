"""CLI: status RUN_DIR --manifest M: each rank of a sharded capture, complete, partial or missing
against its shard (planner/runs/status.py; the file names from planner/runs/rundir.py)."""
from __future__ import annotations

import argparse
import json
import os

from planner.cli._common import CliError, read_manifest
from planner.cli._parser import add_command
from planner.export import sharding
from planner.export.commands import quote
from planner.presets.layouts import layout_presets
from planner.runs import formats as run_formats
from planner.runs.status import status
from planner.text import count, printable
from planner.units import fmt_bytes


def rank_status(manifest, fmt: str | None, nodes: int | None, run_dir: str, mix: str | None, verify: bool = False):
    """The status of RUN_DIR for `manifest` (shared by `status` and `export --resume`)."""
    if fmt is None:
        spec = layout_presets().get(manifest.scenario.layout)
        fmt = {"specforge": "specforge", "speculators": "speculators", "modelopt": "modelopt"}.get(
            spec.pipeline if spec is not None else "")
        if fmt is None:
            raise CliError(f"--format: the manifest's layout {manifest.scenario.layout} is not a sharded pipeline's; "
                           f"give --format {'|'.join(sharding.SHARDED_FORMATS)}")
    if fmt not in sharding.SHARDED_FORMATS:
        raise CliError(f"--format: a sharded run is one of {', '.join(sharding.SHARDED_FORMATS)}, not {fmt}")
    world = nodes if nodes is not None else manifest.scenario.extraction_node_count
    sharding.check_count(world, "--nodes", "nodes")
    return status(manifest, run_dir, fmt, world, mix=mix, verify=verify)


# What each format's capture does with a row whose file already exists, read from its source (the
# snapshots of planner/presets/layouts.yaml): only these formats are sharded (export/slurm.py
# Sharded), and each skips such a row, so a truncated file must go before a resume.
#   specforge    sgl-project/SpecForge@a6b6b023:scripts/prepare_hidden_states.py:548-576 (exists check per
#                file), 631-655 (the batch's rows whose files exist are skipped)
#   speculators  vllm-project/speculators@c05b95b3:src/speculators/data_generation/offline.py:57-74
#                (existing hs_i.safetensors), 110-113 (the rank's rows less those)
#   modelopt     NVIDIA/Model-Optimizer@a2fbac7b:examples/speculative_decoding/collect_hidden_states/
#                compute_hidden_states_hf.py:128-140 (a conversation whose .pt exists is filtered out)
# Not so DeepSpec (deepseek-ai/DeepSpec@afdfa7c9:deepspec/data/target_cache_dataset.py:238-247, called by
# scripts/data/prepare_target_cache.py:233-234): it refuses a non-empty output folder, so it neither
# skips nor resumes; a format missing here gets advice that claims nothing about its pipeline.
RESUME_SKIPS_EXISTING = {fmt: "the pipeline skips a row whose file exists" for fmt in ("specforge", "speculators",
                                                                                       "modelopt")}


def suspect_lines(status) -> list[str]:
    """The suspect files of a status, each with its reason, and how to clear them before a resume
    (shared by `status` and `export --resume`). Paths are shell-quoted: a name in RUN_DIR is input."""
    if not status.suspect:
        return []
    many = status.suspect != 1
    out = [f"  suspect: {status.suspect:,} finished file{'s look' if many else ' looks'} truncated (a capture killed "
           f"mid-write?) and {'do' if many else 'does'} not count as done:"]
    out += [f"    {quote(path)}: {printable(why)}" for path, why in status.suspect_examples]
    more = status.suspect - len(status.suspect_examples)
    if more:
        out.append(f"    ... and {more:,} more (not listed; run status again once these are removed)")
    why = RESUME_SKIPS_EXISTING.get(status.format)
    out.append((f"  {why}, so a resumed rank would skip these rows again: " if why else "  ")
               + "remove the suspect files before resuming (planner deletes nothing in RUN_DIR):")
    out.append("    rm -- " + " ".join(quote(os.path.join(status.run_dir, *p.split("/")))
                                       for p, _ in status.suspect_examples))
    return out


def run(args: argparse.Namespace) -> int:
    m = read_manifest(args.manifest, "--manifest")
    st = rank_status(m, args.format, args.nodes, args.run_dir, args.mix, args.verify)
    if args.json:
        print(json.dumps(st.as_dict(), indent=2))
        return 0
    ranks = st.ranks
    print(f"{printable(st.run_dir)}: {st.format} ({st.layout}), {count(st.world, 'rank')}: "
          f"{len(st.by_state('complete')):,} complete, {len(st.by_state('partial')):,} partial, "
          f"{len(st.by_state('missing')):,} missing")
    for r in ranks:
        print(f"  rank {r.rank}: {r.state:8} {r.done:,} of {r.files:,} files ({r.rows:,} rows), "
              f"{fmt_bytes(r.bytes_done)} of {fmt_bytes(r.bytes_predicted)} predicted"
              + (f", {r.suspect:,} suspect" if r.suspect else ""))
    if st.skipped:
        print("  not counted: " + "; ".join(f"{n:,} {printable(why)}" for why, n in sorted(st.skipped.items())))
    if not st.scan_complete:
        print("  the scan stopped at its bound: the counts are a lower bound")
    for line in suspect_lines(st):
        print(line)
    v = st.verify
    if v is None:
        print("  files checked by name and size only (--verify reads each one's metadata)")
    elif not v["complete"]:
        slow, cut = v.get("too_slow", 0), v["not_verified"] - v.get("too_slow", 0)
        if slow:
            print(f"  --verify: {slow:,} files took over {run_formats.MAX_FILE_SECONDS:g} s each to read: NOT "
                  "verified (checked by name and size only)")
        if cut:
            print(f"  --verify read {v['verified']:,} files before its {v['seconds']:g} s bound: the other "
                  f"{cut:,} were NOT verified (checked by name and size only)")
    else:
        print(f"  --verify read all {v['verified']:,} finished files' metadata")
    if st.unfinished:
        from planner.export.commands import quote
        print(f"resume: planner export {quote(args.manifest)} --format {st.format} --scheduler slurm|ray "
              f"--resume {quote(st.run_dir)}   (ranks {','.join(str(r) for r in st.unfinished)})")
    return 0


def register(sub) -> None:
    s = add_command(sub, "status")
    s.add_argument("run_dir", metavar="RUN_DIR", help="the folder the ranks write to (PLANNER_OUT_DIR)")
    s.add_argument("--manifest", required=True, help="the manifest the run was exported from")
    s.add_argument("--format", choices=["speculators", "specforge", "modelopt"],
                   help="the pipeline the run uses (default: the manifest layout's)")
    s.add_argument("--nodes", type=int, metavar="N", help="the ranks the run was exported with (default: the "
                                                          "manifest's extraction nodes)")
    s.add_argument("--mix", metavar="FILE", help="the mix.jsonl the ranks' shards were made from "
                                                 "(Model-Optimizer with local components: its rows are named by their "
                                                 "line; the shards mix-0000R-of-0000N.jsonl beside it are read)")
    s.add_argument("--verify", action="store_true", help="read each finished file's metadata (headers only, "
                                                           "bounded in time) to find truncated files")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run)


__all__ = ["CliError", "rank_status", "register", "suspect_lines"]
