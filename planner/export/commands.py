"""Pipeline commands for a manifest: vLLM speculators and SpecForge."""
from __future__ import annotations

import shlex

from planner.export.manifest import Manifest
from planner.specs import model_presets


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
