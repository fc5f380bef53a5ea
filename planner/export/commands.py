"""Pipeline commands for a manifest (vLLM speculators, SpecForge), and the registry of every export
format the CLI offers.

Every value that comes from the manifest or the command line (model path, hub repo, subset,
split, component ids, file paths) is shell-quoted, in commands and in comment lines alike, and no
value can put a newline into the output: a value with control characters is written in bash's
$'...' quoting with each such byte as \\xNN. The exported text is meant to be read, then run with
bash.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Callable, Literal

from planner.export.manifest import Manifest, dump_manifest
from planner.ids import has_control
from planner.specs import model_presets


def quote(value: object) -> str:
    """One shell word that bash reads back as exactly `value`, on one line."""
    text = str(value)
    if not has_control(text):
        return shlex.quote(text)
    out = []
    for ch in text:
        if ch in "\\'" or has_control(ch):
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def join(argv: list[object]) -> str:
    """shlex.join, with quote() for values holding control characters."""
    return " ".join(quote(a) for a in argv)


def _command(*groups: list[object]) -> str:
    """A command written over several lines: each group of arguments on its own line."""
    return " \\\n    ".join(join(g) for g in groups)


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
    layers = [str(x) for x in m.layers]
    data_args: list[object] = []
    for c in m.components:
        if c.rows_selected == 0:
            continue
        source = c.local_path if c.local_path else f"hf:{c.hf_repo}:{c.subset or 'default'}:{c.split or 'train'}"
        data_args += ["--data", source]
    total = sum(c.rows_selected for c in m.components)
    per_source = ", ".join(f"{quote(c.id)}={c.rows_selected:,}" for c in m.components if c.rows_selected)
    lines = [
        "# vLLM speculators: commands for this manifest",
        f"# target {quote(model)}, layers {m.layers}, sequence length {seq}, unit {quote(s.unit)}",
        "#",
        "# What speculators cannot express: per-source row counts. Its --data flags are repeatable but",
        "# --max-samples is one global cap with no per-source weight, so it would not reproduce",
        f"# this mix ({per_source}).",
        "# The answer: materialize the exact rows into one JSONL file and give speculators that file.",
        "",
        join(["python", "-m", "planner", "materialize", manifest_path, "--out", "mix.jsonl"])
        + "     # local (profiled) components",
        join(["python", "-m", "planner", "materialize", manifest_path, "--out", "mix.jsonl",
              "--hub-script", "materialize_hub.py"]),
        "python materialize_hub.py --out mix.jsonl               # hub components, on a machine with the hub",
        "",
        _command(["python", "scripts/prepare_data.py", "--model", model, "--data", "./mix.jsonl"],
                 ["--seq-length", seq, "--seed", 0, "--output", "./prepared"]),
        _command(["python", "scripts/data_generation_offline.py", "--target-model-path", model],
                 ["--train-data-path", "./prepared", "--seq-length", seq, "--layer-ids", *layers],
                 ["--output-dir", "./hidden_states"]),
        "",
        "# The direct form, for reference only (it cannot honour the per-source counts above):",
        "# " + join(["python", "scripts/prepare_data.py", "--model", model, *data_args,
                     "--seq-length", seq, "--max-samples", total]),
        "# Check flag names against your speculators version; they have changed between releases.",
    ]
    return "\n".join(lines) + "\n"


def specforge_commands(m: Manifest, manifest_path: str = "manifest.yaml") -> str:
    s = m.scenario
    seq = s.max_seq_len or 2048
    model = _model_path(m)
    return "\n".join([
        "# SpecForge: commands for this manifest",
        "# SpecForge's prepare_data.py --sample-size takes the first N rows of one dataset; per-source",
        "# counts come from the materialized file instead.",
        join(["python", "-m", "planner", "materialize", manifest_path, "--out", "mix.jsonl",
              "--hub-script", "materialize_hub.py"]),
        "python materialize_hub.py --out mix.jsonl",
        _command(["torchrun", "--nproc_per_node", 8, "scripts/prepare_hidden_states.py"],
                 ["--target-model-path", model, "--data-path", "./mix.jsonl"],
                 ["--max-length", seq, "--output-path", "./cache/hidden_states"]),
        f"# capture layers {m.layers}; check flag names against your SpecForge version",
    ]) + "\n"


@dataclass(frozen=True)
class ExportFormat:
    """`kind` says how the output is meant to be used: `shell` is run with bash, `data` is parsed."""

    render: Callable[[Manifest, str], str]
    kind: Literal["shell", "data"]


# The CLI's `export --format` choices; tests run every `shell` format with hostile values.
EXPORT_FORMATS: dict[str, ExportFormat] = {
    "speculators": ExportFormat(speculators_commands, "shell"),
    "specforge": ExportFormat(specforge_commands, "shell"),
    "yaml": ExportFormat(lambda m, _path: dump_manifest(m, "yaml"), "data"),
    "json": ExportFormat(lambda m, _path: dump_manifest(m, "json"), "data"),
}
