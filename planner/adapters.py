"""From a manifest to something a pipeline runs: speculators / SpecForge commands, and the exact
selected rows as JSONL ({"id", "conversations": [{"role", "content"}]}), or a script that makes
them with `datasets` on a machine that has the hub."""
from __future__ import annotations

import inspect
import json
import os
import random
import shlex
import tempfile
from pathlib import Path

from . import formats
from .manifest import Manifest
from .specs import model_presets


def _model_path(m: Manifest) -> str:
    s = m.scenario
    if s.model == "custom" and s.custom_model is not None:
        return s.custom_model.hf_id or "<path-to-your-model>"
    spec = model_presets().get(s.model)
    return (spec.hf_id if spec and spec.hf_id else s.model)


def speculators_commands(m: Manifest, manifest_path: str = "manifest.yaml") -> str:
    s = m.scenario
    seq = s.max_seq_len or 8192
    model = _model_path(m)
    layers = " ".join(str(x) for x in m.layers)
    data_flags = []
    for c in m.components:
        if c.rows_selected == 0:
            continue
        if c.local_path:
            data_flags.append(f"--data {shlex.quote(c.local_path)}")
        else:
            data_flags.append(f"--data hf:{c.hf_repo}:{c.subset or 'default'}:{c.split or 'train'}")
    total = sum(c.rows_selected for c in m.components)
    per_source = ", ".join(f"{c.id}={c.rows_selected:,}" for c in m.components if c.rows_selected)
    q = shlex.quote(manifest_path)
    lines = [
        "# vLLM speculators: commands for this manifest",
        f"# target {model}, layers {m.layers}, sequence length {seq}, unit {s.unit}",
        "#",
        "# What speculators cannot express: per-source row counts. Its --data flags are repeatable but",
        "# --max-samples is one global cap with no per-source weight, so it would not reproduce",
        f"# this mix ({per_source}).",
        "# The answer: materialize the exact rows into one JSONL file and give speculators that file.",
        "",
        f"python -m planner materialize {q} --out mix.jsonl     # local (profiled) components",
        f"python -m planner materialize {q} --out mix.jsonl --hub-script materialize_hub.py",
        "python materialize_hub.py --out mix.jsonl               # hub components, on a machine with the hub",
        "",
        f"python scripts/prepare_data.py --model {model} --data ./mix.jsonl \\",
        f"    --seq-length {seq} --seed 0 --output ./prepared",
        f"python scripts/data_generation_offline.py --target-model-path {model} \\",
        f"    --train-data-path ./prepared --seq-length {seq} --layer-ids {layers} \\",
        "    --output-dir ./hidden_states",
        "",
        "# The direct form, for reference only (it cannot honour the per-source counts above):",
        "# python scripts/prepare_data.py --model " + model + " " + " ".join(data_flags) +
        f" --seq-length {seq} --max-samples {total}",
        "# Check flag names against your speculators version; they have changed between releases.",
    ]
    return "\n".join(lines) + "\n"


def specforge_commands(m: Manifest, manifest_path: str = "manifest.yaml") -> str:
    s = m.scenario
    seq = s.max_seq_len or 2048
    model = _model_path(m)
    q = shlex.quote(manifest_path)
    return "\n".join([
        "# SpecForge: commands for this manifest",
        "# SpecForge's prepare_data.py --sample-size takes the first N rows of one dataset; per-source",
        "# counts come from the materialized file instead.",
        f"python -m planner materialize {q} --out mix.jsonl --hub-script materialize_hub.py",
        "python materialize_hub.py --out mix.jsonl",
        "torchrun --nproc_per_node 8 scripts/prepare_hidden_states.py \\",
        f"    --target-model-path {model} --data-path ./mix.jsonl \\",
        f"    --max-length {seq} --output-path ./cache/hidden_states",
        f"# capture layers {m.layers}; check flag names against your SpecForge version",
    ]) + "\n"


def selected_indices(n_total: int, n: int, selection: str, seed: int, lengths: list[int] | None = None) -> list[int]:
    """Deterministic choice of n of n_total row positions: the first n, a seeded uniform sample, or
    the n shortest (by characters of text, ties in file order)."""
    n = min(n, n_total)
    if selection == "first":
        return list(range(n))
    if selection == "shortest":
        if lengths is None:
            raise ValueError("shortest selection needs the row lengths")
        return sorted(sorted(range(n_total), key=lambda i: (lengths[i], i))[:n])
    return sorted(random.Random(seed).sample(range(n_total), n))


def materialize_local(m: Manifest, out: str | Path) -> dict:
    """Write the exact selected rows of every local (profiled) component to `out`, atomically.
    Returns {component id: rows written} and the hub components left for the script."""
    out = Path(out)
    written, hub = {}, []
    fd, tmp = tempfile.mkstemp(prefix=".mix.", suffix=".jsonl.tmp", dir=out.parent if str(out.parent) else ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for c in m.components:
                if c.rows_selected == 0:
                    continue
                if not c.local_path:
                    hub.append(c.id)
                    continue
                path = Path(c.local_path)
                fmt = c.format or "auto"
                valid, lengths = [], []
                for r in formats.iter_records(path, fmt):
                    if r.turns is not None:
                        valid.append(r.line)
                        lengths.append(sum(len(t) for _, t in r.turns))
                keep = set(selected_indices(len(valid), c.rows_selected, c.selection, c.seed, lengths))
                wanted = {valid[i] for i in keep}
                n = 0
                for r in formats.iter_records(path, fmt):
                    if r.turns is not None and r.line in wanted:
                        fh.write(json.dumps({"id": f"{c.id}-{r.line}", "conversations": [
                            {"role": role, "content": text} for role, text in r.turns]}, ensure_ascii=False) + "\n")
                        n += 1
                written[c.id] = n
        os.replace(tmp, out)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return {"written": written, "hub_components": hub}


HUB_SCRIPT_HEAD = '''#!/usr/bin/env python3
"""Materialize the hub components of a drafter-planner manifest into one JSONL file
({"id", "conversations": [{"role", "content"}]}) with the `datasets` library:
load each component, shuffle with its seed (keep file order for "first", sort by characters of
text for "shortest"), select the first n.

    python materialize_hub.py --out mix.jsonl [--append] [--local ID=FILE ...]

--local ID=FILE reads a component from a local JSON/JSONL/Parquet file instead of the hub.
Generated by drafter planner {version}; the conversion functions below are copied from it.
"""
import argparse
import json
import re

COMPONENTS = json.loads({components})
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
    a = ap.parse_args()
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
            written = 0
            for i, row in enumerate(ds.select(range(n))):
                try:
                    turns = to_turns(dict(row), fmt)   # datasets may hand over a lazy row
                except RecordError:
                    continue
                fh.write(json.dumps({"id": f"{c['id']}-{i}", "conversations": [
                    {"role": r, "content": t} for r, t in turns]}, ensure_ascii=False) + "\\n")
                written += 1
            print(f"{c['id']}: {written} rows")


if __name__ == "__main__":
    main()
'''


def hub_script(m: Manifest) -> str:
    from . import __version__
    comps = [{"id": c.id, "hf_repo": c.hf_repo, "subset": c.subset, "split": c.split, "rows": c.rows_selected,
              "selection": c.selection, "seed": c.seed, "format": c.format}
             for c in m.components if c.rows_selected and not c.local_path]
    parts = [HUB_SCRIPT_HEAD.replace("{version}", __version__).replace("{components}", repr(json.dumps(comps)))]
    for name in ("ROLE_MAP", "PROMPT_KEYS", "RESPONSE_KEYS"):
        parts.append(f"{name} = {getattr(formats, name)!r}\n")
    parts.append(f"GLAIVE_SPLIT = re.compile({formats.GLAIVE_SPLIT.pattern!r})\n")
    parts.append(f"FORMATS = {formats.FORMATS!r}\n\n")
    for obj in (formats.RecordError, formats._text, formats.detect_format, formats.to_turns):
        parts.append("\n" + inspect.getsource(obj))
    parts.append(HUB_SCRIPT_MAIN)
    return "".join(parts)
