"""Sampled profiling: a uniform sample of a dataset's rows and the confidence of what it measures.

JSONL is sampled with reservoir sampling (Li's Algorithm L: a seeded sequence of the stream
positions that enter a k-item reservoir, so most lines are skipped without a random draw). The
whole stream is still read, to count its lines and hash its bytes, but a skipped line is only
counted (newlines found in large chunks), never decoded or parsed; the k kept lines are parsed
afterwards. Memory is O(k) lines. A JSON array is streamed element by element (formats.iter_raw)
through the same seeded reservoir (`sample_json_array`); Parquet uses DuckDB's reservoir sample
(formats.sample_duckdb).

The 95% interval of a mean is the normal approximation with the sample's standard deviation and a
finite-population correction (the dataset's row count is known after the pass): it collapses to
the mean when the sample is the whole dataset.
"""
from __future__ import annotations

import math
import os
import queue
import random
import threading
from typing import Iterable, Iterator, TypeVar

import numpy as np

from planner.catalog.formats import MAX_LINE_BYTES, Dataset, Raw, iter_raw
from planner.safe_io import open_binary

CHUNK_BYTES = 4 * 2**20
Z95 = 1.959963984540054      # the standard normal's 97.5% quantile
MAX_SAMPLE = 10_000_000      # rows a sample may keep (they are held in memory)
MAX_SKIP = 2**62


def picks(size: int, seed: int) -> Iterator[tuple[int, int]]:
    """(stream position, reservoir slot) of every item that enters a `size`-item reservoir, in order:
    positions 0..size-1 fill slots 0..size-1, then Algorithm L's geometric jumps. Deterministic for a
    seed; every position of a stream of any length ends in the reservoir with probability size/n."""
    rng = random.Random(seed)
    yield from ((i, i) for i in range(size))
    w = math.exp(math.log(1.0 - rng.random()) / size)
    i = size - 1
    while True:
        i += _skip(rng, w) + 1
        yield i, rng.randrange(size)
        w *= math.exp(math.log(1.0 - rng.random()) / size)


def _skip(rng: random.Random, w: float) -> int:
    """Items passed over before the next one enters (a geometric variable with success rate w)."""
    if w >= 1.0:
        return 0
    s = math.log(1.0 - rng.random()) / math.log1p(-w)
    return int(s) if s < MAX_SKIP else MAX_SKIP


_Item = TypeVar("_Item")


def reservoir(items: Iterable[_Item], size: int, seed: int) -> list[tuple[int, _Item]]:
    """A uniform sample of `size` items of any iterable, as (position, item) in stream order."""
    gen = picks(size, seed)
    target, slot = next(gen)
    kept: list = [None] * size
    n = 0
    for n, item in enumerate(items, 1):
        if n - 1 == target:
            kept[slot] = (n - 1, item)
            target, slot = next(gen)
    return sorted(x for x in kept[:min(size, n)] if x is not None)


class _LineReservoir:
    """The state of one pass of reservoir sampling over the lines of a dataset's files."""

    def __init__(self, k: int, seed: int):
        self.gen = picks(k, seed)
        self.target, self.slot = next(self.gen)
        self.kept: list[Raw | None] = [None] * k
        self.g = 0              # position of the current (not yet ended) line in the dataset, 0-based
        self.pieces: list[bytes] = []   # the current line's bytes so far, while it is the target
        self.length = 0
        self.partial = False    # the current line has bytes but no newline yet

    def _collect(self, piece: bytes) -> None:
        if self.length <= MAX_LINE_BYTES + 1:   # an enormous line is measured, not held
            self.pieces.append(piece)
        self.length += len(piece)

    def _keep(self, file: str | None, first: int) -> None:
        """The target line, complete: into its reservoir slot; then the next target."""
        ended = bool(self.pieces) and self.pieces[-1].endswith(b"\n")
        line, at = self.target + 1, self.target - first + 1
        if self.length - ended > MAX_LINE_BYTES:
            raw = Raw(line, None, f"line longer than {MAX_LINE_BYTES // 2**20} MiB", file, at)
        else:
            raw = Raw(line, b"".join(self.pieces), None, file, at)
        self.kept[self.slot] = raw
        self.pieces, self.length = [], 0
        self.target, self.slot = next(self.gen)

    def scan(self, chunk: bytes, file: str | None, first: int) -> None:
        """Count the chunk's lines (numpy finds its newlines); copy out only the target lines."""
        nl = np.flatnonzero(np.frombuffer(chunk, np.uint8) == 10)
        base, count = self.g, len(nl)
        while self.target < base + count:
            j = self.target - base
            self._collect(chunk[0 if j == 0 else int(nl[j - 1]) + 1:int(nl[j]) + 1])
            self._keep(file, first)
        self.g = base + count
        tail = int(nl[-1]) + 1 if count else 0
        if self.target == self.g and tail < len(chunk):
            self._collect(chunk[tail:])
        self.partial = tail < len(chunk) or (self.partial and not count)

    def end_of_file(self, file: str | None, first: int) -> None:
        """A last line without a newline is a line; the next file starts a new one."""
        if self.partial:
            if self.g == self.target:
                self._keep(file, first)
            self.g += 1
        self.partial = False


def sample_jsonl(dataset: Dataset, size: int, seed: int, hasher=None, progress=None,
                 field: str = "PATH") -> tuple[list[Raw], int]:
    """A uniform sample of `size` lines of a JSONL dataset (one reservoir over all its files, in stream
    order) and the number of lines. Blank lines are lines here: the caller scales by the share
    of sampled lines that are conversations. `hasher` sees every byte, in a thread of its own
    (hashlib releases the GIL on large updates), so hashing overlaps the scan."""
    state = _LineReservoir(size, seed)
    total, done = max(sum(os.stat(f).st_size for f in dataset.files), 1), 0
    with _BackgroundHash(hasher) as update:
        for f in dataset.files:
            name = f.name if dataset.several else None
            first = state.g
            with open_binary(f, field) as fh:
                while chunk := fh.read(CHUNK_BYTES):
                    update(chunk)
                    state.scan(chunk, name, first)
                    done += len(chunk)
                    if progress:
                        progress(min(done / total, 1.0))
            state.end_of_file(name, first)
    kept = sorted((r for r in state.kept if r is not None), key=lambda r: r.line)
    return kept, state.g


def sample_json_array(dataset: Dataset, size: int, seed: int, hasher=None, progress=None,
                      field: str = "PATH") -> tuple[list[Raw], int]:
    """A uniform sample of `size` elements of a JSON-array dataset (one seeded reservoir over its
    files' elements, in stream order, each numbered by its position) and the number of elements.
    Every element is scanned (at most MAX_LINE_BYTES of one held); only the kept are parsed."""
    total = 0

    def counted() -> Iterator[Raw]:
        nonlocal total
        for raw in iter_raw(dataset, progress, hasher, field):
            total += 1
            yield raw

    return [raw for _, raw in reservoir(counted(), size, seed)], total


class _BackgroundHash:
    """`update(chunk)` hands chunks to a thread that feeds the hasher in order (at most 4 chunks
    queued: memory stays bounded); leaving the block waits until every byte is hashed."""

    def __init__(self, hasher):
        self.hasher = hasher
        self.queue: queue.Queue = queue.Queue(maxsize=4)
        self.thread = threading.Thread(target=self._run, daemon=True) if hasher is not None else None

    def _run(self) -> None:
        while (chunk := self.queue.get()) is not None:
            self.hasher.update(chunk)

    def __enter__(self):
        if self.thread is None:
            return lambda _chunk: None
        self.thread.start()
        return self.queue.put

    def __exit__(self, *exc) -> None:
        if self.thread is not None:
            self.queue.put(None)
            self.thread.join()


def _fpc(n: int, population: int | None) -> float:
    """The finite-population correction of a standard error: 0 when the sample is everything."""
    if population is None:
        return 1.0
    if population <= n or population < 2:
        return 0.0
    return math.sqrt((population - n) / (population - 1))


def mean_ci(values, population: int | None) -> tuple[float, float] | None:
    """The 95% interval of the population mean from a simple random sample (None: one row of more)."""
    x = np.asarray(values, float)
    n = len(x)
    if n == 0:
        return None
    m = float(x.mean())
    f = _fpc(n, population)
    if f == 0.0:
        return m, m
    if n < 2:
        return None
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(n) * f
    return max(m - half, 0.0), m + half


def ratio_ci(num, den, population: int | None) -> tuple[float, float] | None:
    """The 95% interval of sum(num) / sum(den) over the population (a ratio estimator, linearised:
    here tokens of every turn row over turn rows, sampled by conversation)."""
    y, x = np.asarray(num, float), np.asarray(den, float)
    n = len(y)
    if n == 0 or x.sum() <= 0:
        return None
    r = float(y.sum() / x.sum())
    f = _fpc(n, population)
    if f == 0.0:
        return r, r
    if n < 2:
        return None
    d = y - r * x
    half = Z95 * math.sqrt(float(d.var(ddof=1)) / n) / float(x.mean()) * f
    return max(r - half, 0.0), r + half
