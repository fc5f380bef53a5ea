"""The page's exports: every format the CLI's `export` has (planner/export/commands.py EXPORT_FORMATS),
the layout's own pipeline first, and the sharded forms of `export --nodes` / `--scheduler slurm`
(planner/export/slurm.py), each built by the same planner function the CLI calls."""
from __future__ import annotations

from urllib.parse import urlencode

from planner.errors import PlannerInputError
from planner.export import sharding
from planner.export.commands import EXPORT_FORMATS
from planner.export.manifest import Manifest
from planner.presets.layouts import layout_presets

MANIFEST_PATH = "manifest.yaml"     # what the commands call the manifest (the YAML download's file name)
SHELL = [k for k, f in EXPORT_FORMATS.items() if f.kind == "shell"]


def pipeline_order(layout: str) -> list[str]:
    """The pipelines' command formats, the one whose files this layout plans first."""
    spec = layout_presets().get(layout)
    own = spec.pipeline if spec is not None else None
    return sorted(SHELL, key=lambda k: k != own)


def own_pipeline(layout: str) -> str | None:
    spec = layout_presets().get(layout)
    return spec.pipeline if spec is not None and spec.pipeline in SHELL else None


def commands(m: Manifest, fmt: str) -> str:
    """`planner export MANIFEST --format fmt`."""
    return EXPORT_FORMATS[fmt].render(m, MANIFEST_PATH)


def sharded(m: Manifest, fmt: str, nodes: int, kind: str, catalog=None) -> str:
    """`planner export MANIFEST --format fmt --nodes N` (kind 'ranks') or with `--scheduler slurm`
    (kind 'slurm'); the CLI's own checks, in the CLI's words but naming the page's field."""
    from planner.export import slurm
    if fmt not in sharding.SHARDED_FORMATS:
        raise PlannerInputError("format", fmt, f"a multi-node export is made for {', '.join(sharding.SHARDED_FORMATS)}")
    sharding.check_count(nodes, "nodes", "nodes")
    rows = sum(c.rows_selected for c in m.components)
    if nodes > rows:
        raise PlannerInputError("nodes", nodes, f"the manifest selects {rows:,} rows; give at most {rows:,} nodes so "
                                "that every rank has a row")
    if kind == "slurm":
        return slurm.slurm_script(m, fmt, nodes, MANIFEST_PATH, catalog=catalog)
    return slurm.rank_commands(m, fmt, nodes, MANIFEST_PATH, catalog=catalog)


def share_link(base: str, params: dict[str, str]) -> str:
    """The page's link with the scenario (s) and the pinned and saved ones (c); never the undo history
    (h): it is this browser's, and a link is for someone else."""
    kept = {k: v for k, v in params.items() if k in ("s", "c") and v}
    return f"{base}?{urlencode(kept)}" if kept else base


def blocked_warning(findings) -> str | None:
    """The line above the exports when the plan cannot run as configured (a finding of severity
    `blocks`, planner/findings.py): its first blocker and fix, and how many more there are. Plain text:
    the page escapes it."""
    blocks = [f for f in findings if f.severity == "blocks"]
    if not blocks:
        return None
    first = blocks[0]
    more = f" (and {len(blocks) - 1} more blocking finding{'s' * (len(blocks) > 2)})" if len(blocks) > 1 else ""
    fix = f" Fix: {first.fix}." if first.fix else ""
    return (f"This plan cannot run as configured: {first.text.rstrip('.')}{more}. These files export it as it "
            f"is, so the run would hit the same wall.{fix}")
