"""`planner status RUN_DIR --manifest M`: each rank of a sharded capture against its shard (issue 25).

The files each rank should write, their names and rows, come from planner/runs/rundir.py (the
pipelines' naming); the scan of RUN_DIR is rundir.scan (bounded in entries and time, symlinks
never followed out, special files, files still being written and other layouts' files skipped with
a reason). Here: the count per rank of finished files against its expected files, so a rank is
complete (every file), partial (some) or missing (none), with rows and bytes; and the ranks a
resumed export runs again (export --resume RUN_DIR).

A rank that runs again rewrites nothing it finished: each format status reads (specforge, speculators,
modelopt: the sharded ones) skips a row whose file exists
(SpecForge scripts/prepare_hidden_states.py:548-576 and 631-655, per batch; speculators
src/speculators/data_generation/offline.py:57-74 and 110-113; Model-Optimizer
compute_hidden_states_hf.py:128-140; cli/status.py RESUME_SKIPS_EXISTING; DeepSpec, not sharded here,
refuses a non-empty output folder instead). Nothing here writes or deletes in RUN_DIR.

Model-Optimizer names a local component's row by its line in the source file, which the manifest
does not know: those rows are placed by the materialized mix.jsonl the ranks read (--mix; its
leading ids only, each line's first 4 KiB), and without it such a run is refused in one sentence.

Suspect files. A capture killed mid-write (OOM, scancel, a node lost) can leave a truncated file
under its final name; since these pipelines skip a row whose file exists (above), a resumed rank would
never rewrite it. So a finished file is suspect, and not done, when its size (the scan's, nothing
read) is 0 or under the smallest its format can be (run_formats.min_size); and, with verify=True,
when its own metadata cannot be read (run_formats.read_file: FormatError) or contradicts the plan
(a per-row file holding other than one row, or no tokens). The reading is bounded per file by
run_formats' limits and in all by `verify_seconds`; the files past it are counted, not verified.
"""
from __future__ import annotations

import os
import re
import stat
import time
from collections import Counter
from dataclasses import dataclass, field

from planner.errors import PlannerInputError
from planner.export import sharding
from planner.export.slurm import Sharded
from planner.runs import formats as run_formats
from planner.runs import rundir
from planner.text import count

MAX_MIX_LINE_PREFIX = 4096      # bytes of a mix line read for its id (the rest of the line is skipped)
_ID = re.compile(rb'^\{"id": "([^"\\]{1,200})"')
MAX_SUSPECT_EXAMPLES = 20       # suspect files kept by path (all are counted)
VERIFY_SECONDS = rundir.MAX_SECONDS   # wall-clock bound of --verify's reading, as the scan's
_clock = time.monotonic


@dataclass
class RankStatus:
    rank: int
    rows: int                   # rows of its shard
    files: int                  # files it should write
    done: int = 0               # of them, finished (and not suspect)
    bytes_done: int = 0
    bytes_predicted: float = 0.0
    suspect: int = 0            # finished files that look truncated: not done, the rank runs again

    @property
    def state(self) -> str:
        if self.done >= self.files and not self.suspect:
            return "complete"
        return "missing" if self.done == 0 and not self.suspect else "partial"

    def as_dict(self) -> dict:
        return {"rank": self.rank, "state": self.state, "rows": self.rows, "files": self.files,
                "files_done": self.done, "suspect": self.suspect, "bytes_done": self.bytes_done,
                "bytes_predicted": int(self.bytes_predicted)}


@dataclass
class RunStatus:
    run_dir: str
    format: str
    layout: str
    world: int
    ranks: list[RankStatus]
    skipped: Counter = field(default_factory=Counter)
    examples: list[tuple[str, str]] = field(default_factory=list)
    scan_complete: bool = True
    suspect: int = 0
    suspect_examples: list[tuple[str, str]] = field(default_factory=list)   # (path, reason), the first few
    verify: dict | None = None  # with verify: {"verified", "not_verified", "complete", "seconds", "too_slow"}

    def by_state(self, state: str) -> list[int]:
        return [r.rank for r in self.ranks if r.state == state]

    @property
    def unfinished(self) -> list[int]:
        return [r.rank for r in self.ranks if r.state != "complete"]

    def as_dict(self) -> dict:
        return {"run_dir": self.run_dir, "format": self.format, "layout": self.layout, "world": self.world,
                "complete": self.by_state("complete"), "partial": self.by_state("partial"),
                "missing": self.by_state("missing"), "ranks": [r.as_dict() for r in self.ranks],
                "skipped": dict(self.skipped), "scan_complete": self.scan_complete,
                "suspect": self.suspect,
                "suspect_examples": [{"path": p, "reason": why} for p, why in self.suspect_examples],
                "verify": self.verify}


def _mix_positions(path: str, shards: int = 1) -> dict[str, int]:
    """{row id: position} from the materialized mix the ranks read (each line's leading id only).
    shards=N: the N shard files beside `path` the ranks read (sharding.shard_path; the mix.jsonl given
    names them), line k of shard r at position r + k*N (the rows are dealt in turn)."""
    if shards == 1:
        return _file_positions(path, range(1 << 62))
    out: dict[str, int] = {}
    for r in range(shards):
        out.update(_file_positions(sharding.shard_path(path, r, shards), range(r, 1 << 62, shards)))
    return out


def _file_positions(path: str, slots: range) -> dict[str, int]:
    """{row id: slots[line]} of one materialized file."""
    from planner.safe_io import open_binary
    out: dict[str, int] = {}
    with open_binary(path, "--mix") as fh:
        pos = 0
        while True:
            head = fh.readline(MAX_MIX_LINE_PREFIX)
            if not head:
                break
            line = head
            while not line.endswith(b"\n"):          # skip the rest of a long line, in bounded pieces
                line = fh.readline(1 << 20)
                if not line:
                    break
            if not head.strip():
                continue
            mt = _ID.match(head)
            if mt is None:
                raise PlannerInputError("--mix", path, f"a mix.jsonl `planner materialize` wrote (line {pos + 1} "
                                                       "does not start with its id)")
            out[mt.group(1).decode("utf-8", "replace")] = slots[pos]
            pos += 1
    return out


def _too_small(f: rundir.Found) -> str | None:
    """Why a finished file of this size cannot be whole (its size only), or None."""
    if f.size == 0:
        return "empty (0 bytes): cut off before anything was written"
    least, what = run_formats.min_size(f.path)
    if f.size < least:
        return f"{f.size:,} bytes, under the {least:,} bytes of the smallest {what}: truncated"
    return None


def _contradiction(f: rundir.Found, info: run_formats.FileInfo) -> str | None:
    """Why a file that reads contradicts what the plan expects of it, or None. Only where that is
    known: a per-row file holds one row, and its token tensor (run_formats.TOKEN_TENSORS, which each
    pipeline stores: run_formats' docstring) has tokens."""
    if f.expected.kind != "row" or info.format not in ("safetensors", "torch-zip"):
        return None
    if info.tokens is None:
        return f"holds no {' or '.join(run_formats.TOKEN_TENSORS)} tensor, which the pipeline stores for every row"
    if info.rows != 1:
        return f"holds {info.rows:,} rows, where the pipeline writes one row per file"
    if info.tokens == 0 and f.expected.predicted_tokens > 0:
        return "holds 0 tokens"
    return None


def _changed(root: str, f: rundir.Found) -> bool:
    """Gone, no longer a regular file (a symlink put in its place is never followed), another file
    (device and inode) or another size than the scan saw."""
    try:
        st = os.lstat(os.path.join(root, *f.path.split("/")))
    except OSError:
        return True
    return not stat.S_ISREG(st.st_mode) or st.st_size != f.size or (
        f.ident is not None and (st.st_dev, st.st_ino) != f.ident)


def _verify(root: str, files: list[rundir.Found], seconds: float) -> tuple[dict[str, str], set[str], dict]:
    """Reads each file's metadata (run_formats.read_file, bounded per file) until `seconds` pass.
    Returns {path: why suspect}, the paths whose size changed since the scan (still being written),
    and the verify summary."""
    t0 = _clock()
    bad: dict[str, str] = {}
    changing: set[str] = set()
    read = slow = 0
    for f in sorted(files, key=lambda x: x.path):
        spent = _clock() - t0
        if spent >= seconds:
            break
        read += 1
        if _changed(root, f):
            changing.add(f.path)
            continue
        try:
            # the bound in all reaches into the read: a file still being read when it passes is not verified
            info = run_formats.read_file(os.path.join(root, *f.path.split("/")), expect_size=f.size,
                                         expect_id=f.ident, deadline=run_formats._clock() + seconds - spent)
        except run_formats.OutOfTime:
            read -= 1
            break
        except run_formats.TooSlow:        # not verified: a slow read says nothing of the file
            read, slow = read - 1, slow + 1
            continue
        except run_formats.FormatError as exc:
            if _changed(root, f):          # gone, or its size changed since the scan: still being written
                changing.add(f.path)
            else:
                bad[f.path] = str(exc)
            continue
        why = _contradiction(f, info)
        if why is not None:
            bad[f.path] = why
    return bad, changing, {"verified": read, "not_verified": len(files) - read, "complete": read == len(files),
                           "seconds": seconds, "too_slow": slow}


def status(manifest, run_dir: str, fmt: str, world: int, *, mix: str | None = None,
           min_age: float = rundir.MIN_AGE_SECONDS, max_entries: int = rundir.MAX_ENTRIES,
           max_seconds: float = rundir.MAX_SECONDS, verify: bool = False,
           verify_seconds: float = VERIFY_SECONDS) -> RunStatus:
    if mix is None and fmt == "modelopt" and any(c.local_path and c.rows_selected for c in manifest.components):
        raise PlannerInputError("--mix", None, "the mix.jsonl the ranks read: Model-Optimizer names a local "
                                "component's row by its line in the source file, which only the mix places")
    x = Sharded(manifest, fmt, world, "")
    dp = x.gpus if fmt == "specforge" else 1          # the export's torchrun --nproc_per_node
    names = rundir.naming(manifest, x.spec.id, world=world, data_parallel=dp)
    ranks = _expected_ranks(names, x.total_rows(), world)
    scan = rundir.scan(run_dir, names, others=rundir.other_namings(names), min_age=min_age,
                       max_entries=max_entries, max_seconds=max_seconds)
    positions = _mix_positions(mix, world if x.shards else 1) if mix else None
    counted = _counted(scan, positions, world)
    suspect = {f.path: why for f, _ in counted if (why := _too_small(f)) is not None}
    checked = None
    changing: set[str] = set()
    if verify:
        bad, changing, checked = _verify(scan.root, [f for f, _ in counted if f.path not in suspect], verify_seconds)
        suspect.update(bad)
        for path in sorted(changing):
            scan.skip(path, rundir.CHANGING)
    _tally(ranks, counted, suspect, changing)
    out = RunStatus(run_dir, fmt, x.spec.id, world, ranks, scan.skipped_counts, scan.skipped, scan.complete,
                    suspect=len(suspect), suspect_examples=sorted(suspect.items())[:MAX_SUSPECT_EXAMPLES],
                    verify=checked)
    _refuse_another_run(scan, ranks, run_dir, world)
    return out


def _expected_ranks(names, total_rows: int, world: int) -> list[RankStatus]:
    """Each rank's rows, files and predicted bytes as the manifest's export writes them."""
    ranks = [RankStatus(r, sharding.shard_rows(total_rows, world, r), 0) for r in range(world)]
    for e in names.expected():                        # lazy: one pass, counts only
        ranks[e.rank].files += 1
        ranks[e.rank].bytes_predicted += e.predicted_bytes
    return ranks


def _counted(scan, positions: dict | None, world: int) -> list[tuple[rundir.Found, int]]:
    """The scan's row and shard files, each with the rank that wrote it. A Model-Optimizer local row is placed by its
    position in the mix (`positions`); one the mix does not place is skipped as not in the manifest."""
    counted: list[tuple[rundir.Found, int]] = []
    for f in scan.found.values():
        e = f.expected
        if e.kind not in ("row", "shard"):
            continue
        rank = e.rank
        if e.positions is None and e.component is not None and positions is not None:   # Model-Optimizer, local
            pos = positions.get(f.path[:-len(".pt")])
            if pos is None:
                scan.skip(f.path, rundir.NOT_IN_MANIFEST)
                continue
            rank = sharding.rank_of(pos, world) if world > 1 else 0
        counted.append((f, rank))
    return counted


def _tally(ranks: list[RankStatus], counted, suspect: dict, changing: set[str]) -> None:
    """Count each file on its rank: suspect, or done with its bytes; a file still changing is neither."""
    for f, rank in counted:
        if f.path in suspect:
            ranks[rank].suspect += 1
        elif f.path not in changing:
            ranks[rank].done += 1
            ranks[rank].bytes_done += f.size


def _refuse_another_run(scan, ranks: list[RankStatus], run_dir: str, world: int) -> None:
    """A directory whose files all name rows the manifest does not have is another run's: say so, once."""
    n_other = scan.skipped_counts[rundir.NOT_IN_MANIFEST]
    if n_other and not any(r.done or r.suspect for r in ranks):
        example = next(p for p, why in scan.skipped if why == rundir.NOT_IN_MANIFEST)
        raise PlannerInputError("RUN_DIR", run_dir, f"a run of this manifest: {n_other:,} of its files name rows the "
                                f"manifest does not have over {count(world, 'rank')} (e.g. {example}); give the "
                                "manifest and --nodes the run was exported with")
