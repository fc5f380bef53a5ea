"""Sharded capture (issue 15): the split of a manifest's rows over N ranks, each rank's predicted
bytes, per-rank pipeline commands and a Slurm array script.

A rank is one node for all three pipelines (for vLLM speculators that is its own model:
`--world-size` "is the number of nodes (not the number of gpus)", scripts/data_generation_offline.py
at c05b95b3).

The planner's own shards (SpecForge's and Model-Optimizer's ranks each read theirs,
mix-0000R-of-0000N.jsonl) deal the rows in turn (issue 35 item 11): row p of the materialized order
goes to rank p % N (`rank_of`; rank r holds positions r, r+N, r+2N, ...: `positions`). Every rank
so holds 1/N of every component, give or take one row, and its predicted bytes are 1/N of the whole
give or take one row of each component: a split by contiguous blocks of rows gave the rank holding
the long-row components twice the bytes of another (docs/guide.md's example, the mix trimmed to
20 TB over 4 Model-Optimizer nodes: 1.1, 2.4, 2.0 and 1.1 TB; dealt, 1.6 TB each), and the slowest
rank sets the capture's end. The dealing is
stratified rather than a longest-processing-time packing on the plan's bytes per row: it needs
nothing but the manifest's rows_selected (every rank computes the same split without
communication, and a plan's bytes per row, an estimate, cannot move a row), and an error of the
estimate falls on every rank alike. A rank still holds T // N rows, the first T % N ranks one more
(the counts of contiguous blocks).

The pipelines' own splits stay contiguous blocks (`block`): `datasets.Dataset.shard(W, r)`
(contiguous=True, the default), speculators' `get_indices_to_process`
(src/speculators/data_generation/offline.py:103-108) and SpecForge's `start_idx`/`samples_per_dp`
(scripts/prepare_hidden_states.py:887-901); speculators' ranks split its own shuffled prepared
rows so, a random draw of the mix (each rank's bytes are expected to be its share of the whole).

The positions are those of the materialized order (planner materialize: the components with a local
file first, then the hub components, each in manifest order; row k of a component at its start + k),
counted with the manifest's rows_selected, so a shard's rows never depend on another shard's file.
"""
from __future__ import annotations

import bisect
import contextlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from planner.errors import PlannerInputError

MAX_SHARDS = 10_000
# The disk check asks for the predicted bytes times this: the plan's bytes come from length
# statistics (an estimate), a rank's rows are not an average sample, and files, directories and
# staging take room the plan does not count.
DISK_MARGIN = 1.25
SCHEDULERS = ("slurm", "ray")
SHARDED_FORMATS = ("speculators", "specforge", "modelopt")


def block(total, world, rank):
    """[start, end) of rank `rank` of `world` over `total` rows: contiguous blocks, the first
    total % world ranks one row longer (datasets.Dataset.shard with contiguous=True)."""
    div, mod = divmod(total, world)
    start = div * rank + min(rank, mod)
    return start, start + div + (1 if rank < mod else 0)


def rank_of(position: int, world: int) -> int:
    """The planner shard (rank) of row `position` of the materialized order: dealt in turn."""
    return position % world


def positions(total: int, world: int, rank: int) -> range:
    """The positions of rank `rank`'s shard, in order (its k-th row is position rank + k * world)."""
    return range(rank, total, world)


def shard_rows(total: int, world: int, rank: int) -> int:
    """How many rows rank `rank` holds: total // world, the first total % world ranks one more."""
    return len(positions(total, world, rank))


def check_count(count: object, flag: str, what: str = "shards") -> int:
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_SHARDS:
        raise PlannerInputError(flag, count, f"a whole number of {what} from 1 to {MAX_SHARDS:,}")
    return count


def shard_path(out: str | os.PathLike, rank: int, world: int) -> str:
    """mix.jsonl -> mix-00002-of-00004.jsonl, beside it (the Hugging Face naming)."""
    p = Path(out)
    suffix = p.suffix if p.suffix and p.stem else ""
    stem = p.name[:-len(suffix)] if suffix else p.name
    return str(p.with_name(f"{stem}-{rank:05d}-of-{world:05d}{suffix}"))


@dataclass(frozen=True)
class Placed:
    """A component at its place in the materialized order."""
    id: str
    start: int
    rows: int
    local: bool


def placed(components, local_ids: set[str] | None = None) -> tuple[list[Placed], int]:
    """The components with rows in the materialized order (local ones first, then the hub ones,
    each in manifest order), and the total rows. local_ids: the components materialize reads from
    a file (default: those with a local_path)."""
    comps = [c for c in components if c.rows_selected]
    local = (lambda c: c.id in local_ids) if local_ids is not None else (lambda c: bool(c.local_path))
    out, pos = [], 0
    for c in [c for c in comps if local(c)] + [c for c in comps if not local(c)]:
        out.append(Placed(c.id, pos, c.rows_selected, local(c)))
        pos += c.rows_selected
    return out, pos


class Ranks:
    """Which contiguous block (`block`) each position is in, for `world` blocks over `total` rows: the
    pipelines' own splits (a rank's DP processes, speculators' ranks), not the planner's shards."""

    def __init__(self, total: int, world: int):
        self.total, self.world = total, world
        self.starts = [block(total, world, r)[0] for r in range(world)]

    def of(self, position: int) -> int:
        return bisect.bisect_right(self.starts, position) - 1


def rows_by_rank(components, world: int, local_ids: set[str] | None = None) -> list[list[tuple[str, int]]]:
    """[(component id, rows)] of every planner shard: each component's positions dealt to the rank."""
    order, _ = placed(components, local_ids)
    out = []
    for r in range(world):
        out.append([(p.id, n) for p in order
                    if (n := len(range(p.start + (r - p.start) % world, p.start + p.rows, world))) > 0])
    return out


# A rank's predicted bytes go into a shell script as integers its test compares: bounded well below
# 2**63, where bash's arithmetic and `[` stop being exact.
MAX_RANK_BYTES = 2**53


def bytes_per_row(manifest, layout: str, catalog=None) -> list[float]:
    """Predicted bytes per row of each manifest component (in manifest order), planned with
    `layout` (the pipeline's own when the manifest's is another's). A manifest the planner cannot
    plan (a component no longer in the catalog, an edited scenario, a model built without
    validation) is refused: its own predicted totals are the one number a sharded export must not
    trust, since they size every rank's disk check (ManifestError, one sentence). `catalog`: the
    one the manifest's user components live in (the dashboard's session catalog), else the CLI's."""
    from planner.export.manifest import ManifestError
    from planner.planning import plan
    try:
        s = manifest.scenario if manifest.scenario.layout == layout else manifest.scenario.with_changes(layout=layout)
        per = {c.id: c.storage_bytes / c.rows for c in plan(s, catalog, band=False).components if c.rows}
    except (PlannerInputError, ValueError, AttributeError, TypeError) as exc:
        raise ManifestError(f"scenario: the planner cannot plan this manifest ({_short(exc)}); a sharded export "
                            f"sizes each rank's disk from the plan, so it needs one that plans") from None
    missing = [c.id for c in manifest.components if c.rows_selected and c.id not in per]
    if missing:
        raise ManifestError(f"components: {_short(missing[0])} has rows but no place in the plan of the manifest's "
                            f"scenario; a sharded export needs the scenario that made these components")
    out = [per.get(c.id, 0.0) for c in manifest.components]
    if any(not 0 <= b * c.rows_selected <= MAX_RANK_BYTES for b, c in zip(out, manifest.components, strict=True)):
        raise ManifestError(f"components: predicted bytes outside 0 to {MAX_RANK_BYTES:,}")
    return out


def _short(value: object) -> str:
    from planner.text import printable
    text = printable(value)
    return text if len(text) <= 80 else text[:77] + "..."


def rank_bytes(manifest, world: int, layout: str, *, expected: bool = False, catalog=None) -> list[float]:
    """Predicted bytes of every rank. expected=True (speculators: the pipeline splits its own
    shuffled rows): each rank's share of the whole, by the size of its block."""
    per = bytes_per_row(manifest, layout, catalog)
    by_id: dict[str, float] = {}
    for c, b in zip(manifest.components, per, strict=True):
        by_id.setdefault(c.id, b)
    if expected:
        total_rows = sum(c.rows_selected for c in manifest.components)
        total = sum(c.rows_selected * b for c, b in zip(manifest.components, per, strict=True))
        if not total_rows:
            return [0.0] * world
        sizes = [hi - lo for lo, hi in (block(total_rows, world, r) for r in range(world))]
        return [total * n / total_rows for n in sizes]
    return [sum(n * by_id[cid] for cid, n in rank) for rank in rows_by_rank(manifest.components, world)]


class ShardWriter:
    """Writes rows to N shard files in any order of ranks (the rows are dealt in turn); the files
    replace their paths only when every row is written (commit), else nothing is left behind
    (abort). At most OPEN files are open at a time (a shard's file is reopened to append to it)."""

    OPEN = 256                                # well under the usual 1,024 descriptors

    def __init__(self, paths: list[str], *, field: str, inputs=()):
        from planner.safe_io import check_output
        self.targets = [check_output(p, field, inputs) for p in paths]
        self.tmps: dict[int, str] = {}
        self.open: dict[int, TextIO] = {}        # rank -> handle, oldest first

    def _handle(self, rank: int):
        fh = self.open.pop(rank, None)
        if fh is None:
            if len(self.open) >= self.OPEN:
                self.open.pop(next(iter(self.open))).close()
            if rank in self.tmps:
                fh = open(self.tmps[rank], "a", encoding="utf-8")  # noqa: SIM115 (closed by commit/abort)
            else:
                target = self.targets[rank]
                fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
                self.tmps[rank] = tmp
                fh = os.fdopen(fd, "w", encoding="utf-8")
        self.open[rank] = fh                     # the most recent last
        return fh

    def write(self, rank: int, text: str) -> None:
        if not 0 <= rank < len(self.targets):
            raise ValueError(f"rank {rank} is not a shard of {len(self.targets)}")
        self._handle(rank).write(text)

    def commit(self) -> None:
        from planner.safe_io import _umask
        for r in range(len(self.targets)):       # a shard with no rows is an empty file
            if r not in self.tmps:
                self._handle(r)
        while self.open:
            self.open.pop(next(iter(self.open))).close()
        for r in range(len(self.targets)):
            fd = os.open(self.tmps[r], os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            os.chmod(self.tmps[r], 0o666 & ~_umask())
        for r, target in enumerate(self.targets):
            os.replace(self.tmps.pop(r), target)

    def abort(self) -> None:
        for fh in self.open.values():
            with contextlib.suppress(OSError):
                fh.close()
        self.open.clear()
        for tmp in self.tmps.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        self.tmps.clear()
