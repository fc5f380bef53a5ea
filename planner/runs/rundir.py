"""A capture run's output directory against a manifest: which file each row goes to, what the plan
predicts for it, and a bounded, safe scan of what the pipeline has written so far.

No file content is read here (planner/runs/formats.py reads the headers); this module only names,
lists and stats. Nothing is followed out of the run directory, nothing is written or run in it.

File naming, read in each pipeline's code (the snapshots presets/layouts.yaml cites):

- SpecForge (sgl-project/SpecForge@a6b6b023): `rows_{g}-{g+2000}/data_{idx}.ckpt` (`.ckpt.gz` with
  --compress), g = idx // 2000 * 2000 (scripts/prepare_hidden_states.py:389, 418, 588-594). idx
  counts from a contiguous start per DP rank (:887-901) while DistributedSampler(shuffle=False)
  hands DP rank d the rows d, d+D, d+2D, ... (specforge/data/utils.py:224-243; drop_last drops the
  last partial batch): file idx = start_d + j holds row d + j*D. The planner's sharded export runs
  one torchrun per node on its shard into `rank-{r:05d}/` (planner/export/slurm.py), the numbering
  restarting at 0 there; row j of shard r is position r + j*N of the materialized order (the rows
  are dealt in turn: sharding.positions).
- vLLM speculators (vllm-project/speculators@c05b95b3): `hs_{idx}.safetensors` in one flat folder
  (scripts/data_generation_offline.py:227; src/speculators/data_generation/offline.py:56-72), idx
  the row of the *prepared* dataset: one row per assistant turn, shuffled with --seed
  (preprocessing.py:791, 829). Ranks take contiguous blocks of it (offline.py:103-108) and write
  into the same folder. A file's row is a random draw of the mix, so its prediction is the mix's mean.
- Model-Optimizer (NVIDIA/Model-Optimizer@a2fbac7b): `{conversation_id}.pt`, flat
  (examples/speculative_decoding/collect_hidden_states/compute_hidden_states_hf.py:130-132,
  190-193); `planner materialize` writes conversation_id = "{component id}-{n}" (line n of a local
  file, row n of a hub component: planner/export/materialize.py), so the name gives the component.
  The planner's sharded export gives each rank its own shard (rows dealt in turn: sharding.rank_of);
  every rank writes into the same folder.
- NeMo Automodel (NVIDIA-NeMo/Automodel@36044ad3): `shard-{i:06d}.safetensors` holding samples
  [i*256, (i+1)*256) in order (components/datasets/llm/offline_cache.py:56-58;
  components/speculative/precompute_eagle3.py:207 "sample i lives in shard i // shard_size"),
  written to a `.tmp` then renamed (offline_cache.py:47-53); plus manifest.json and
  target_embeddings.safetensors (datasets/llm/eagle3_cache.py:33-37, 157-167).
- DeepSpec (deepseek-ai/DeepSpec@afdfa7c9): while running, rank g writes
  `_tmp/rank_{g}/shard-local-{i:05d}.bin` and `_tmp/rank_{g}/samples.local.idx`
  (scripts/data/prepare_target_cache.py:237; deepspec/data/target_cache_dataset.py:306-336),
  its rows the contiguous block of compute_local_sample_range (:231-236); at the end
  `shard-{i:05d}.bin`, `samples.idx` and `manifest.json` (:520-606). Shards hold many rows each:
  which rows, only the index says (run_formats reads it).
- EAGLE-1/2 (SafeAILab/EAGLE ge_data): `data_{idx}.ckpt` (the layout's file_pattern; not re-read).
"""
from __future__ import annotations

import bisect
import os
import re
import stat
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterator

from planner.errors import PlannerInputError
from planner.export import sharding
from planner.presets.layouts import LayoutSpec, layout_presets

MIN_AGE_SECONDS = 60           # a file modified more recently may still be being written
MAX_ENTRIES = 2_000_000        # directory entries looked at, at most
MAX_SECONDS = 120.0            # wall-clock bound of a scan
MAX_DEPTH = 6                  # folders below the run directory
EXAMPLES_PER_REASON = 20       # skipped entries kept by name, per reason (all are counted)
SPECFORGE_GROUP = 2000         # --file-group-size default (prepare_hidden_states.py:389)

# skip reasons (the keys of Scan.skipped_counts)
SYMLINK_OUT = "symlink out of the run directory (refused)"
SYMLINK_IN = "symlink (not followed)"
SPECIAL = "not a regular file or folder"
YOUNG = "still being written (modified under a minute ago)"
CHANGING = "still being written (its size changed during the scan)"
TEMPORARY = "still being written (a temporary file)"
UNKNOWN = "unknown name for this layout"
OTHER_LAYOUT = "a file of another pipeline"
NOT_IN_MANIFEST = "names a row the manifest does not have"
OVER_BOUND = "not looked at (over the scan's bound)"
TOO_DEEP = "folder too deep (not looked into)"
UNREADABLE = "cannot be listed or stat-ed"


# ---------------------------------------------------------------- the plan, per row
@dataclass(frozen=True)
class RowPlan:
    """Predicted bytes and tokens of every row, in the materialized order (planner.export.sharding:
    local components first, then the hub ones). Per component: conversations, training rows (files
    of a per-row layout; more than conversations where a row is an assistant turn), and the plan's
    bytes and tokens per training row."""
    ids: tuple[str, ...]
    starts: tuple[int, ...]            # first position of each component
    rows: tuple[int, ...]              # conversations of each component
    local: tuple[bool, ...]            # read from a local file (materialize names its rows by line)
    files_per_row: tuple[float, ...]   # training rows per conversation
    bytes_per_file: tuple[float, ...]  # predicted bytes of one training row
    tokens_per_file: tuple[float, ...]
    total: int                         # conversations
    planned: bool                      # False: the plan could not be made; the manifest's totals spread evenly

    def component_at(self, position: int) -> int:
        return bisect.bisect_right(self.starts, position) - 1

    def index_of(self, cid: str) -> int | None:
        try:
            return self.ids.index(cid)
        except ValueError:
            return None

    @property
    def training_rows(self) -> float:
        return sum(n * f for n, f in zip(self.rows, self.files_per_row, strict=True))

    @property
    def bytes(self) -> float:
        return sum(n * f * b for n, f, b in zip(self.rows, self.files_per_row, self.bytes_per_file, strict=True))

    @property
    def tokens(self) -> float:
        return sum(n * f * t for n, f, t in zip(self.rows, self.files_per_row, self.tokens_per_file, strict=True))

    def mean_file(self) -> tuple[float, float]:
        """(bytes, tokens) of an average training row of the whole mix."""
        n = self.training_rows
        return (self.bytes / n, self.tokens / n) if n else (0.0, 0.0)


def _planned_per_row(m, layout: str) -> dict[str, tuple[float, float, float]] | None:
    """{component: (files per row, bytes per file, tokens per file)} of manifest `m` planned with
    `layout`; None for a manifest the plan cannot read (as sharding.bytes_per_row)."""
    per: dict[str, tuple[float, float, float]] = {}
    try:
        from planner.planning import plan
        s = m.scenario if m.scenario.layout == layout else m.scenario.with_changes(layout=layout)
        for c in plan(s).components:
            if c.rows and c.training_rows:
                per[c.id] = (c.training_rows / c.rows, c.storage_bytes / c.training_rows,
                             c.tokens / c.training_rows)
    except (PlannerInputError, ValueError, AttributeError):
        return None
    return per


def row_plan(manifest, layout: str) -> RowPlan:
    """The RowPlan of `manifest` as `layout` would store it (the manifest's own layout if None);
    a manifest the plan cannot read gets its own totals spread evenly."""
    order, total = sharding.placed(manifest.components)
    per = _planned_per_row(manifest, layout)
    planned = per is not None
    per = per or {}
    even = (1.0, float(manifest.predicted.storage_bytes) / total if total else 0.0,
            float(manifest.predicted.tokens) / total if total else 0.0)
    vals = [per.get(p.id, even) for p in order]
    return RowPlan(ids=tuple(p.id for p in order), starts=tuple(p.start for p in order),
                   rows=tuple(p.rows for p in order), local=tuple(p.local for p in order),
                   files_per_row=tuple(v[0] for v in vals),
                   bytes_per_file=tuple(v[1] for v in vals), tokens_per_file=tuple(v[2] for v in vals),
                   total=total, planned=planned and all(p.id in per for p in order))


# ---------------------------------------------------------------- the pipelines' file names
@dataclass(frozen=True)
class ExpectedFile:
    """A file the pipeline writes for the manifest. `positions`: the rows it holds (positions in the
    materialized order), None when its name does not say (DeepSpec's shards: the index says).
    `component`: the component of its rows when the name says only that (Model-Optimizer's local
    rows). `draw`: its row is a random draw of the mix (speculators' shuffled prepared rows)."""
    path: str                              # relative to the run directory, '/'-separated
    rank: int                              # the rank that writes it (0 for an unsharded run)
    positions: range | tuple[int, ...] | None
    component: str | None
    predicted_bytes: float
    predicted_tokens: float
    draw: bool = False
    kind: str = "row"                      # "row" (one training row), "shard" (many rows), "index", "meta"


class Naming:
    """A layout's file names for a manifest over `world` ranks (`dp` data-parallel processes per
    rank for SpecForge). lookup(relative path) -> ExpectedFile, or a skip reason."""

    pipeline = ""
    per_row = True           # one training row per file

    def __init__(self, spec: LayoutSpec, plan: RowPlan, world: int = 1, dp: int = 1, batch: int = 1):
        self.spec, self.plan, self.world, self.dp, self.batch = spec, plan, world, dp, batch

    # the expected files, lazily (a manifest can have millions of rows)
    def expected(self) -> Iterator[ExpectedFile]:  # pragma: no cover - every subclass has its own
        raise NotImplementedError

    def lookup(self, rel: str) -> ExpectedFile | str:
        raise NotImplementedError

    def matches_name(self, rel: str) -> bool:
        """Whether `rel` has this pipeline's naming at all (to name another layout's files)."""
        got = self.lookup(rel)
        return not isinstance(got, str) or got == NOT_IN_MANIFEST

    def writer(self, expected: ExpectedFile) -> int:
        """The process that writes `expected`, of those that write side by side (the rate's each starts
        with its own first file): its rank."""
        return expected.rank

    def rank_of(self, position: int) -> int:
        """The planner shard (rank) `position` is dealt to (sharding.rank_of)."""
        return sharding.rank_of(position, self.world) if self.world > 1 else 0

    def _row_file(self, rel: str, rank: int, position: int) -> ExpectedFile:
        k = self.plan.component_at(position)
        return ExpectedFile(rel, rank, (position,), self.plan.ids[k], self.plan.bytes_per_file[k],
                            self.plan.tokens_per_file[k])


def _int(text: str) -> int | None:
    """A decimal index as the pipelines write it (no sign, no leading zeros but '0'), or None."""
    if not text.isascii() or not text.isdigit() or (len(text) > 1 and text[0] == "0") or len(text) > 12:
        return None
    return int(text)


class SpecForgeNaming(Naming):
    pipeline = "specforge"
    _re = re.compile(r"^(?:rank-(\d{5})/)?rows_(\d+)-(\d+)/data_(\d+)\.ckpt(\.gz)?$")

    def _shard(self, rank: int) -> range:
        """The positions of `rank`'s shard, in its file's order."""
        return sharding.positions(self.plan.total, self.world, rank) if self.world > 1 else range(self.plan.total)

    def position(self, rank: int, idx: int) -> int | None:
        """The manifest position of file idx of `rank` (see the module docstring)."""
        rows = self._shard(rank)
        n = len(rows)
        if idx >= n:
            return None
        if self.dp == 1:
            return rows[idx]
        # DP rank d numbers its files from start_d (contiguous) but reads rows d, d+D, ... (strided;
        # DistributedSampler pads by wrapping round to the first rows)
        ranks = sharding.Ranks(n, self.dp)
        d = ranks.of(idx)
        return rows[(d + (idx - ranks.starts[d]) * self.dp) % n]

    def writer(self, expected: ExpectedFile) -> int:
        """Its rank's DP process, which numbers its files from its own start: rank x dp + d."""
        if self.dp == 1:
            return expected.rank
        n = len(self._shard(expected.rank))
        m = self._re.match(expected.path)
        assert m is not None          # the scan took the file by this pattern
        return expected.rank * self.dp + sharding.Ranks(n, self.dp).of(int(m.group(4)))

    def path(self, rank: int, idx: int) -> str:
        g = idx // SPECFORGE_GROUP * SPECFORGE_GROUP
        return (f"rank-{rank:05d}/" if self.world > 1 else "") + f"rows_{g}-{g + SPECFORGE_GROUP}/data_{idx}.ckpt"

    def written(self, rank: int) -> list[range]:
        """The file indices each DP process of `rank` writes: from its start_idx, as many as its
        DataLoader yields. DistributedSampler gives every process ceil(n / D) rows (padded) and the
        DataLoader drops the last partial batch (drop_last=True, specforge/data/utils.py:231-240):
        floor(ceil(n / D) / batch) x batch files, at most its block (a longer count would run into
        the next process's numbers)."""
        n = len(self._shard(rank))
        if not n:
            return []
        per = -(-n // self.dp)
        kept = per // self.batch * self.batch if self.spec.defaults.drop_last.value else per
        out = []
        for d in range(self.dp):
            a, b = sharding.block(n, self.dp, d)
            out.append(range(a, a + min(b - a, kept)))
        return out

    def expected(self) -> Iterator[ExpectedFile]:
        for r in range(self.world):
            for span in self.written(r):
                for idx in span:
                    pos = self.position(r, idx)
                    assert pos is not None       # written() gives indices below the shard's length
                    yield self._row_file(self.path(r, idx), r, pos)

    def lookup(self, rel):
        mt = self._re.match(rel)
        if not mt:
            return UNKNOWN
        rank_s, g_s, g2_s, idx_s, _gz = mt.groups()
        idx, g, g2 = _int(idx_s), _int(g_s), _int(g2_s)
        if idx is None or g is None or g2 is None:
            return UNKNOWN
        if g != idx // SPECFORGE_GROUP * SPECFORGE_GROUP or g2 != g + SPECFORGE_GROUP:
            return UNKNOWN
        if (rank_s is not None) != (self.world > 1):
            return NOT_IN_MANIFEST
        rank = int(rank_s) if rank_s is not None else 0
        if rank >= self.world:
            return NOT_IN_MANIFEST
        pos = self.position(rank, idx)
        return NOT_IN_MANIFEST if pos is None else self._row_file(rel, rank, pos)


class SpeculatorsNaming(Naming):
    pipeline = "speculators"
    _re = re.compile(r"^hs_(\d+)\.safetensors$")

    @property
    def count(self) -> int:
        return round(self.plan.training_rows)

    def _file(self, rel: str, idx: int) -> ExpectedFile:
        b, t = self.plan.mean_file()
        rank = sharding.Ranks(self.count, self.world).of(idx) if self.world > 1 else 0
        return ExpectedFile(rel, rank, (idx,), None, b, t, draw=True)

    def expected(self):
        for idx in range(self.count):
            yield self._file(f"hs_{idx}.safetensors", idx)

    def lookup(self, rel):
        mt = self._re.match(rel)
        idx = _int(mt.group(1)) if mt else None
        if idx is None:
            return UNKNOWN
        return self._file(rel, idx) if idx < self.count else NOT_IN_MANIFEST


class ModelOptNaming(Naming):
    pipeline = "modelopt"
    _re = re.compile(r"^(.+)-(\d+)\.pt$")

    def expected(self):
        p = self.plan
        for k, cid in enumerate(p.ids):
            for n in range(p.rows[k]):
                # a hub component's row n; a local component's rows are named by their line in its
                # file, which only the file knows (these names stand for them, one per row)
                pos = p.starts[k] + n
                yield ExpectedFile(f"{cid}-{n}.pt", self.rank_of(pos), None if p.local[k] else (pos,), cid,
                                   p.bytes_per_file[k], p.tokens_per_file[k])

    def lookup(self, rel):
        mt = self._re.match(rel)
        if not mt or "/" in rel:
            return UNKNOWN
        cid, n = mt.group(1), _int(mt.group(2))
        k = self.plan.index_of(cid)
        if n is None or k is None:
            return NOT_IN_MANIFEST
        p = self.plan
        # a hub component's row n is position start + n; a local file's line n says only the component
        if p.local[k]:
            return ExpectedFile(rel, 0, None, cid, p.bytes_per_file[k], p.tokens_per_file[k])
        if n >= p.rows[k]:
            return NOT_IN_MANIFEST
        pos = p.starts[k] + n
        return ExpectedFile(rel, self.rank_of(pos), (pos,), cid, p.bytes_per_file[k], p.tokens_per_file[k])


class NemoNaming(Naming):
    pipeline = "nemo-automodel"
    per_row = False
    _re = re.compile(r"^shard-(\d{6})\.safetensors$")
    META = ("manifest.json", "target_embeddings.safetensors")

    @property
    def size(self) -> int:
        return self.spec.rows_per_file or 1

    def _shard(self, rel: str, i: int) -> ExpectedFile | str:
        lo = i * self.size
        if lo >= self.plan.total:
            return NOT_IN_MANIFEST
        hi = min(self.plan.total, lo + self.size)
        b = t = 0.0
        for pos in range(lo, hi):     # at most rows_per_file rows
            k = self.plan.component_at(pos)
            b += self.plan.bytes_per_file[k]
            t += self.plan.tokens_per_file[k]
        return ExpectedFile(rel, 0, range(lo, hi), None, b, t, kind="shard")

    def expected(self):
        for i in range(-(-self.plan.total // self.size)):
            yield self._shard(f"shard-{i:06d}.safetensors", i)

    def lookup(self, rel):
        if rel in self.META:
            return _meta(rel)
        if rel.endswith(".tmp"):
            return TEMPORARY
        mt = self._re.match(rel)
        return self._shard(rel, int(mt.group(1))) if mt else UNKNOWN


def _meta(rel: str, rank: int = 0) -> ExpectedFile:
    return ExpectedFile(rel, rank, None, None, 0.0, 0.0, kind="meta")


class DeepSpecNaming(Naming):
    pipeline = "deepspec"
    per_row = False
    _local = re.compile(r"^_tmp/rank_(\d+)/(shard-local-(\d{5})\.bin|samples\.local\.idx|summary\.json)$")
    _final = re.compile(r"^(shard-(\d{5})\.bin|samples\.idx|manifest\.json)$")

    def rank_block(self, rank: int) -> range:
        lo, hi = sharding.block(self.plan.total, self.world, rank)   # compute_local_sample_range, :231-236
        return range(lo, hi)

    def expected(self):
        for r in range(self.world):
            yield ExpectedFile(f"_tmp/rank_{r}/samples.local.idx", r, self.rank_block(r), None, 0.0, 0.0,
                               kind="index")

    def lookup(self, rel):
        if rel.endswith(".tmp"):
            return TEMPORARY
        mt = self._local.match(rel)
        if mt:
            rank = _int(mt.group(1))
            if rank is None or rank >= self.world:
                return NOT_IN_MANIFEST
            if rel.endswith(".idx"):      # its records are the rank's rows, in order
                return ExpectedFile(rel, rank, self.rank_block(rank), None, 0.0, 0.0, kind="index")
            return ExpectedFile(rel, rank, None, None, 0.0, 0.0, kind="shard" if mt.group(3) else "meta")
        mt = self._final.match(rel)
        if mt:
            if rel == "samples.idx":
                return ExpectedFile(rel, 0, range(self.plan.total), None, 0.0, 0.0, kind="index")
            return ExpectedFile(rel, 0, None, None, 0.0, 0.0, kind="shard" if mt.group(2) else "meta")
        return UNKNOWN


class EagleNaming(Naming):
    pipeline = "eagle"
    _re = re.compile(r"^data_(\d+)\.ckpt$")

    def expected(self):
        for pos in range(self.plan.total):
            yield self._row_file(f"data_{pos}.ckpt", 0, pos)

    def lookup(self, rel):
        mt = self._re.match(rel)
        idx = _int(mt.group(1)) if mt else None
        if idx is None:
            return UNKNOWN
        return self._row_file(rel, 0, idx) if idx < self.plan.total else NOT_IN_MANIFEST


NAMINGS: dict[str, type[Naming]] = {
    "specforge": SpecForgeNaming, "speculators": SpeculatorsNaming, "modelopt": ModelOptNaming,
    "nemo-automodel": NemoNaming, "deepspec": DeepSpecNaming, "eagle": EagleNaming,
}


def naming(manifest, layout: str | None = None, *, world: int = 1, data_parallel: int = 1, plan: RowPlan | None = None,
           batch: int | None = None) -> Naming:
    """The file naming of `layout` (default: the manifest's) for `manifest`, over `world` ranks
    (`data_parallel` DP processes per rank: SpecForge's torchrun --nproc_per_node with tp 1; `batch` its
    --batch-size, default the manifest's value in force for that layout)."""
    lid = layout or manifest.scenario.layout
    spec = layout_presets().get(lid)
    if spec is None:
        raise PlannerInputError("--layout", lid, f"one of {', '.join(layout_presets())}")
    cls = NAMINGS.get(spec.pipeline)
    if cls is None:
        raise PlannerInputError("--layout", lid, "a layout whose pipeline writes files (not "
                                f"{spec.pipeline!r}); one of " + ", ".join(
                                    k for k, v in layout_presets().items() if v.pipeline in NAMINGS))
    sharding.check_count(world, "--world", "ranks")
    sharding.check_count(data_parallel, "--dp", "data-parallel processes")
    if batch is None:
        from planner.presets.layouts import effective
        sc = manifest.scenario
        batch = effective(spec, unit=sc.unit, max_seq_len=sc.max_seq_len, capture_batch_size=sc.capture_batch_size,
                          sort_by_length=sc.sort_by_length).capture_batch_size
    sharding.check_count(batch, "--batch-size", "rows per batch")
    return cls(spec, plan or row_plan(manifest, lid), world, data_parallel, batch)


# ---------------------------------------------------------------- the scan
@dataclass(frozen=True)
class Found:
    path: str            # relative, '/'-separated
    size: int
    mtime: float         # seconds since the epoch
    expected: ExpectedFile
    ident: tuple[int, int] | None = None   # (st_dev, st_ino) the scan saw: a reader opens no other file


@dataclass
class Scan:
    root: str
    found: dict[str, Found] = field(default_factory=dict)
    skipped_counts: Counter = field(default_factory=Counter)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (path, reason), up to EXAMPLES_PER_REASON each
    entries: int = 0
    complete: bool = True          # False: a bound stopped the scan
    seconds: float = 0.0

    def skip(self, rel: str, reason: str, count: int = 1) -> None:
        if self.skipped_counts[reason] < EXAMPLES_PER_REASON:
            self.skipped.append((rel, reason))
        self.skipped_counts[reason] += count

    @property
    def files_skipped(self) -> int:
        return sum(self.skipped_counts.values())


def _inside(root_real: str, target: str) -> bool:
    return target == root_real or target.startswith(root_real.rstrip(os.sep) + os.sep)


def check_run_dir(run_dir: str | os.PathLike, field: str = "RUN_DIR") -> str:
    """The run directory as given, refused unless it is a directory (a symlink to one is followed,
    once, here: the user named it)."""
    text = os.fspath(run_dir)
    if not text:
        raise PlannerInputError(field, text, "give the run's output directory")
    try:
        st = os.stat(text)
    except OSError as exc:
        raise PlannerInputError(field, text, f"it cannot be read: {exc.strerror or exc}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise PlannerInputError(field, text, "it is not a directory; give the folder the pipeline writes to")
    return text


def scan(run_dir: str | os.PathLike, names: Naming, *, now: float | None = None,
         min_age: float = MIN_AGE_SECONDS, max_entries: int = MAX_ENTRIES, max_seconds: float = MAX_SECONDS,
         others: tuple[Naming, ...] = (), progress: Callable[[int], None] | None = None,
         recheck: bool = True) -> Scan:
    """Lists `run_dir` (lstat only, no file opened), matching each file to its expected row file.
    Bounded: `max_entries` entries, `max_seconds`, MAX_DEPTH folders deep; a bound reached leaves
    `complete` False. `others`: namings of the other pipelines, to name their files. `progress` is
    called with the entries seen every 10,000 entries. recheck: stat the matched files again at the
    end and skip those whose size or mtime changed."""
    root = check_run_dir(run_dir)
    root_real = os.path.realpath(root)
    now = time.time() if now is None else now
    t0 = time.monotonic()
    out = Scan(root=root)
    stack: list[tuple[str, str, int]] = [(root, "", 0)]
    while stack:
        path, prefix, depth = stack.pop()
        try:
            it = os.scandir(path)
        except OSError:
            out.skip(prefix or ".", UNREADABLE)
            continue
        with it:
            subdirs: list[tuple[str, str, int]] = []
            for entry in it:
                if out.entries >= max_entries or time.monotonic() - t0 > max_seconds:
                    out.complete = False
                    break
                out.entries += 1
                if progress is not None and out.entries % 10_000 == 0:
                    progress(out.entries)
                rel = prefix + entry.name
                _classify(entry, rel, depth, out, names, others, now, min_age, root_real, subdirs)
            stack.extend(reversed(subdirs))
        if not out.complete:
            out.skip(prefix or ".", OVER_BOUND)
            break
    if recheck:
        _recheck(root, out)
    out.seconds = time.monotonic() - t0
    return out


def _classify(entry, rel, depth, out, names, others, now, min_age, root_real, subdirs) -> None:
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        out.skip(rel, UNREADABLE)
        return
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        target = os.path.realpath(entry.path)
        out.skip(rel, SYMLINK_IN if _inside(root_real, target) else SYMLINK_OUT)
        return
    if stat.S_ISDIR(mode):
        if depth + 1 > MAX_DEPTH:
            out.skip(rel + "/", TOO_DEEP)
        else:
            subdirs.append((entry.path, rel + "/", depth + 1))
        return
    if not stat.S_ISREG(mode):
        out.skip(rel, SPECIAL)
        return
    got = names.lookup(rel)
    if isinstance(got, str):
        if got == UNKNOWN and any(o.matches_name(rel) for o in others):
            got = OTHER_LAYOUT
        out.skip(rel, got)
        return
    # an index (DeepSpec's samples.local.idx) grows by whole records while the run goes on: it is
    # read up to its last whole record, so a recent one is taken
    if now - st.st_mtime < min_age and got.kind != "index":
        out.skip(rel, YOUNG)
        return
    out.found[rel] = Found(rel, st.st_size, st.st_mtime, got, (st.st_dev, st.st_ino))


def _recheck(root: str, out: Scan) -> None:
    for rel, f in list(out.found.items()):
        try:
            st = os.lstat(os.path.join(root, *rel.split("/")))
        except OSError:
            del out.found[rel]
            out.skip(rel, CHANGING)
            continue
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != f.ident or (
                f.expected.kind != "index" and (st.st_size != f.size or st.st_mtime != f.mtime)):
            del out.found[rel]
            out.skip(rel, CHANGING)


def other_namings(names: Naming) -> tuple[Naming, ...]:
    """One naming of every other pipeline, over the same rows (to name their files in a scan)."""
    seen, out = {names.pipeline}, []
    for spec in layout_presets().values():
        cls = NAMINGS.get(spec.pipeline)
        if cls is not None and spec.pipeline not in seen:
            seen.add(spec.pipeline)
            out.append(cls(spec, names.plan, 1, 1))
    return tuple(out)
