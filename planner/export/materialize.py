"""The exact selected rows of a manifest as JSONL ({"id", "conversation_id", "conversations": [{"role", "content"}],
"materialized_by": "drafter-planner"}), locally for profiled components, and a `datasets` script for hub components.

`materialized_by` is the positive mark of a file materialize wrote: an existing --out is replaced
without --force only when its head rows carry it (a ShareGPT row's own {"id", "conversations"} is
not enough: that is the user's data). The pipelines ignore the extra key: speculators and SpecForge
drop every original column after their tokenizing map (speculators@c05b95b3:
src/speculators/data_generation/preprocessing.py:551,585; SpecForge@a6b6b023:
specforge/data/preprocessing.py:233,323), Model-Optimizer reads only `conversations` and
`conversation_id` by name (Model-Optimizer@a2fbac7bad8a:
examples/speculative_decoding/collect_hidden_states/compute_hidden_states_hf.py:130).

A manifest may come from anyone, so it never chooses which local file is read: a component is read
from the file the user profiled under that id (the user catalog's path, checked against the
sha256 recorded when it was profiled), or from a file the user names (`--local ID=FILE`).
"""
from __future__ import annotations

import hashlib
import inspect
import json
import random
from pathlib import Path

from planner.catalog import formats
from planner.catalog import user_catalog as uc
from planner.catalog.paths import user_catalog_path
from planner.errors import PlannerInputError
from planner.export import sharding
from planner.export.manifest import Manifest
from planner.safe_io import atomic_writer

MARK_KEY, MARK_VALUE = "materialized_by", "drafter-planner"
HEAD_ROWS = 8                      # rows of an existing --out that must carry the mark


def is_ours(head: bytes) -> bool:
    """Whether the first rows of a file (up to HEAD_ROWS complete lines of `head`) are all rows
    materialize wrote: each a JSON object whose MARK_KEY is MARK_VALUE."""
    lines = [ln for ln in head.split(b"\n")[:-1] if ln.strip()][:HEAD_ROWS] if b"\n" in head else [head]
    if not lines:
        return False
    for ln in lines:
        try:
            row = json.loads(ln)
        except (ValueError, RecursionError):
            return False
        if not isinstance(row, dict) or row.get(MARK_KEY) != MARK_VALUE:
            return False
    return True


def input_files(sources: dict) -> list[str]:
    """Every file the local components read: each file of a directory or a glob, not the
    directory (an output compared with a directory's inode would pass over its shards)."""
    out: list[str] = []
    for field, file, _ in sources.values():
        out.extend(str(f) for f in formats.dataset_files(file, field).files)
    return out


def selected_indices(n_total: int, count: int, selection: str, seed: int,
                     lengths: list[int] | None = None) -> list[int]:
    """Deterministic choice of `count` of n_total row positions: the first count, a seeded uniform sample,
    or the count shortest (by characters of text, ties in file order)."""
    count = min(count, n_total)
    if selection == "first":
        return list(range(count))
    if selection == "shortest":
        if lengths is None:
            raise ValueError("shortest selection needs the row lengths")
        return sorted(sorted(range(n_total), key=lambda i: (lengths[i], i))[:count])
    return sorted(random.Random(seed).sample(range(n_total), count))


def local_sources(manifest: Manifest, local: dict[str, str] | None = None,
                  user_catalog: Path | None = None) -> dict[str, tuple[str, str, str | None]]:
    """{component id: (field, file, expected sha256 or None)} for the components read from local
    files; refuses a manifest's local_path the user did not profile under that id, an unknown
    format, and a --local id that is not in the manifest."""
    local = dict(local or {})
    ids = {c.id for c in manifest.components}
    for cid, file in local.items():
        if cid not in ids:
            raise PlannerInputError("--local", f"{cid}={file}", f"{cid!r} is not a component of the manifest "
                                                               f"({', '.join(sorted(ids)) or 'none'})")
    registered = None
    out: dict[str, tuple[str, str, str | None]] = {}
    for c in manifest.components:
        if c.rows_selected == 0:
            continue
        fmt = c.format or "auto"
        if fmt not in formats.FORMATS:
            raise PlannerInputError(f"components.{c.id}.format", fmt, f"one of {', '.join(formats.FORMATS)}")
        if c.id in local:
            out[c.id] = ("--local", local[c.id], None)
        elif c.local_path:
            if registered is None:
                registered = uc.load(Path(user_catalog) if user_catalog is not None else user_catalog_path())[0]
            out[c.id] = _profiled_source(c, registered)
    return out


def _profiled_source(c, registered: uc.UserCatalog) -> tuple[str, str, str | None]:
    """(field, file, sha256) of a manifest component's local_path: the file this user profiled under
    its id (`registered`: the user catalog), never the path the manifest names."""
    entry = registered.get(c.id)
    if entry is None or not entry.local_path:
        raise PlannerInputError(f"components.{c.id}.local_path", c.local_path,
                                "a manifest may only name files you profiled under that id; profile it "
                                f"(planner profile FILE --name {c.id}) or name it with --local {c.id}=FILE")
    return f"components.{c.id}.local_path", entry.local_path, entry.sha256


def _check_digest(cid: str, field: str, file: str, expected: str | None, digest) -> None:
    if expected is not None and digest.hexdigest() != expected:
        raise PlannerInputError(field, file, f"changed since it was profiled as {cid!r} (sha256 differs); "
                                             f"profile it again with --replace, or name it with --local {cid}=FILE")


def _write_local(m: Manifest, sources: dict, write, written: dict, starts: dict | None = None) -> None:
    """Every selected row of the local components, in the materialized order: write(position, line)."""
    uc._fault_point("materialize-writing")   # the data-safety tests stop the command here (SIGTERM)
    for c in m.components:
        if c.id not in sources:
            continue
        field, file, expected = sources[c.id]
        path = Path(file)
        fmt = c.format or "auto"
        digest = hashlib.sha256()
        valid, lengths = [], []
        for r in formats.iter_records(path, fmt, hasher=digest, field=field):
            if r.turns is not None:
                valid.append(r.line)
                lengths.append(sum(len(t) for _, t in r.turns))
        _check_digest(c.id, field, file, expected, digest)
        keep = set(selected_indices(len(valid), c.rows_selected, c.selection, c.seed, lengths))
        wanted = {valid[i] for i in keep}
        n = 0
        start = (starts or {}).get(c.id, 0)
        digest = hashlib.sha256()
        for r in formats.iter_records(path, fmt, hasher=digest, field=field):
            if r.turns is not None and r.line in wanted:
                rid = f"{c.id}-{r.line}"
                # conversation_id: Model-Optimizer's compute_hidden_states_hf.py asserts a row has one
                # (a2fbac7bad8a, lines 130-131); the other pipelines read `conversations` and ignore it
                write(start + n, json.dumps({"id": rid, "conversation_id": rid, "conversations": [
                    {"role": role, "content": text} for role, text in r.turns], MARK_KEY: MARK_VALUE},
                    ensure_ascii=False) + "\n")
                n += 1
        _check_digest(c.id, field, file, expected, digest)   # unchanged between the two passes
        written[c.id] = n


def materialize_local(manifest: Manifest, out: str | Path, local: dict[str, str] | None = None,
                      user_catalog: Path | None = None, inputs: tuple = (), shards: int | None = None) -> dict:
    """Write the exact selected rows of every local component to `out`, atomically (nothing is
    written or replaced on any error). `local`: {component id: file} named by the user.
    shards=N: to N files beside `out` instead (sharding.shard_path), row at position p of the
    materialized order in shard sharding.rank_of(p, N) = p % N (dealt in turn: every shard about 1/N
    of every component, so of the bytes); all of them or none are written.
    Returns {component id: rows written} and the hub components left for the script."""
    sources = local_sources(manifest, local, user_catalog)
    hub = [c.id for c in manifest.components if c.rows_selected and c.id not in sources]
    written: dict[str, int] = {}
    files = input_files(sources)
    if shards is None:
        with atomic_writer(out, field="--out", inputs=[*inputs, *files]) as fh:
            _write_local(manifest, sources, lambda _pos, text: fh.write(text), written)
    else:
        # the same rows, each in the shard of its position in the materialized order (sharding.rank_of)
        order, _ = sharding.placed(manifest.components, set(sources))
        starts = {p.id: p.start for p in order}
        writer = sharding.ShardWriter([sharding.shard_path(out, r, shards) for r in range(shards)],
                                      field="--out", inputs=[*inputs, *files])
        try:
            _write_local(manifest, sources, lambda pos, text: writer.write(sharding.rank_of(pos, shards), text),
                         written, starts)
            writer.commit()
        except BaseException:
            writer.abort()
            raise
    return {"written": written, "hub_components": hub}


HUB_SCRIPT_HEAD = '''#!/usr/bin/env python3
"""Materialize the hub components of a drafter-planner manifest into one JSONL file
({"id", "conversations": [{"role", "content"}]}) with the `datasets` library:
load each component, shuffle with its seed (keep file order for "first", sort by characters of
text for "shortest"), select the first n.

    python materialize_hub.py --out mix.jsonl [--append] [--local ID=FILE ...]
    python materialize_hub.py --out mix-00002-of-00004.jsonl --append --rank 2 --world-size 4

--local ID=FILE reads a component from a local JSON/JSONL/Parquet file instead of the hub.
--rank R --world-size W writes only the rows of shard R of W, the split `planner materialize
--shards W` makes: row k of a component sits at its "start" + k of the TOTAL rows of the
materialized order, and the rows are dealt in turn: position p goes to shard p % W.
Generated by drafter planner {version}; the conversion functions below are copied from it.
"""
import argparse
import json
import re

COMPONENTS = json.loads({components})
TOTAL = {total}
MARK_KEY, MARK_VALUE = {mark}
'''

HUB_SCRIPT_MAIN = '''

def load(c, local):
    from datasets import load_dataset
    if c["id"] in local:
        path = local[c["id"]]
        kind = "parquet" if path.endswith(".parquet") else "json"
        return load_dataset(kind, data_files=path, split="train")
    return load_dataset(c["hf_repo"], c["subset"], split=c["split"] or "train")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--append", action="store_true")
    ap.add_argument("--local", action="append", default=[], help="ID=FILE")
    ap.add_argument("--rank", type=int, help="write only this shard (with --world-size)")
    ap.add_argument("--world-size", type=int, help="the number of shards (planner materialize --shards)")
    a = ap.parse_args()
    if (a.rank is None) != (a.world_size is None):
        ap.error("--rank and --world-size go together")
    if a.world_size is not None and not 1 <= a.world_size <= 10000:
        ap.error(f"--world-size: {a.world_size} is not from 1 to 10000")
    if a.rank is not None and not 0 <= a.rank < a.world_size:
        ap.error(f"--rank: {a.rank} is not from 0 to {a.world_size - 1} (--world-size {a.world_size})")
    local = dict(x.split("=", 1) for x in a.local)
    with open(a.out, "a" if a.append else "w", encoding="utf-8") as fh:
        for c in COMPONENTS:
            ds = load(c, local)
            fmt = c["format"] or "auto"
            if c["selection"] == "shortest":
                def length(row, i):
                    try:
                        return {"_chars": sum(len(t) for _, t in to_turns(dict(row), fmt)), "_row": i}
                    except RecordError:
                        return {"_chars": -1, "_row": i}
                ds = ds.map(length, with_indices=True).filter(lambda r: r["_chars"] >= 0)
                ds = ds.sort(["_chars", "_row"])   # ties in file order
            elif c["selection"] != "first":
                ds = ds.shuffle(seed=c["seed"])
            n = min(c["rows"], len(ds))
            # this shard's part: the rows whose position start + i is dealt to it (p % W == R)
            mine = range(n) if a.rank is None else range((a.rank - c["start"]) % a.world_size, n, a.world_size)
            written = 0
            for i, row in zip(mine, ds.select(mine)):
                try:
                    turns = to_turns(dict(row), fmt)   # datasets may hand over a lazy row
                except RecordError:
                    continue
                fh.write(json.dumps({"id": f"{c['id']}-{i}", "conversation_id": f"{c['id']}-{i}", "conversations": [
                    {"role": r, "content": t} for r, t in turns], MARK_KEY: MARK_VALUE}, ensure_ascii=False) + "\\n")
                written += 1
            print(f"{c['id']}: {written} rows")


if __name__ == "__main__":
    main()
'''


def hub_script(manifest: Manifest, ids: list[str] | None = None) -> str:
    """The `datasets` script for components `ids` (default: those without a local file)."""
    from planner._version import __version__
    hub = [c for c in manifest.components if c.rows_selected and (c.id in ids if ids is not None else not c.local_path)]
    order, total = sharding.placed(manifest.components, {c.id for c in manifest.components} - {c.id for c in hub})
    start = {p.id: p.start for p in order if not p.local}
    comps = [{"id": c.id, "hf_repo": c.hf_repo, "subset": c.subset, "split": c.split, "rows": c.rows_selected,
              "selection": c.selection, "seed": c.seed, "format": c.format, "start": start[c.id]} for c in hub]
    parts = [HUB_SCRIPT_HEAD.replace("{version}", __version__).replace("{components}", repr(json.dumps(comps)))
             .replace("{total}", str(int(total))).replace("{mark}", repr((MARK_KEY, MARK_VALUE)))]
    copies = formats.HUB_COPIES
    parts += [f"{name} = {getattr(formats, name)!r}\n" for name in copies["values"]]
    parts += [f"{name} = re.compile({getattr(formats, name).pattern!r})\n" for name in copies["patterns"]]
    parts.append("\n")
    for obj in [getattr(formats, name) for name in copies["sources"]]:
        parts.append("\n" + inspect.getsource(obj))
    parts.append(HUB_SCRIPT_MAIN)
    return "".join(parts)
