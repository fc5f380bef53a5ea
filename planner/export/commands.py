"""Pipeline commands for a manifest (vLLM speculators, SpecForge), and the registry of every export
format the CLI offers.

Every value that comes from the manifest or the command line (model path, hub repo, subset,
split, component ids, file paths) is shell-quoted, in commands and in comment lines alike, and no
value can put a newline or a bidi control into the output: a value with control, format (bidi) or
separator characters (ids.UNSHOWN_PATTERN) is written in bash's $'...' quoting with each such byte
as \\xNN. The exported text is meant to be read, then run with
bash.
"""
from __future__ import annotations

import functools
import json
import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Literal

from planner.catalog.paths import load_shipped_yaml
from planner.export.manifest import Manifest, dump_manifest
from planner.ids import has_unshown
from planner.presets.layouts import Effective, LayoutSpec, effective, layout_presets
from planner.presets.specs import ModelSpec, model_presets, num_layers
from planner.variants import Registry


def quote(value: object) -> str:
    """One shell word that bash reads back as exactly `value`, on one line."""
    text = str(value)
    if not has_unshown(text):
        return shlex.quote(text)
    out: list[str] = []
    for ch in text:
        if ch in "\\'" or has_unshown(ch):
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8", "surrogatepass"))
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


def join(argv: list[object]) -> str:
    """shlex.join, with quote() for values holding control characters."""
    return " ".join(quote(a) for a in argv)


def value(raw: object) -> str:
    """A value where a command expects one: never starting with '-', which the pipeline's argparse
    would read as a flag (argument injection, which shell quoting does not stop); a path that does
    is written ./-name, the same file."""
    text = str(raw)
    return "./" + text if text.startswith("-") else text


def _command(*groups: list[object]) -> str:
    """A command written over several lines: each group of arguments on its own line."""
    return " \\\n    ".join(join(g) for g in groups)


def _model_path(m: Manifest) -> str:
    s = m.scenario
    if s.model == "custom" and s.custom_model is not None:
        return value(s.custom_model.hf_id or "<path-to-your-model>")
    spec = model_presets().get(s.model)
    return value(spec.hf_id if spec and spec.hf_id else s.model)


def _model_spec(m: Manifest) -> ModelSpec | None:
    s = m.scenario
    return s.custom_model if s.model == "custom" else model_presets().get(s.model)


def write_lines(path: str, text: str) -> list[str]:
    """Lines of bash that write `text` (the planner's own JSON) to `path` with the printf builtin, each
    line of the text one shell-quoted word: nothing is expanded, no program but bash is needed."""
    return ["printf '%s\\n' \\", *(f"    {quote(line)} \\" for line in text.split("\n")), f"    > {quote(value(path))}"]


def _train_gpus(m: Manifest) -> tuple[int, int]:
    """The planned training GPUs as (nodes, GPUs per node): Scenario.training.gpus over
    training.gpus_per_node, the last node partly filled."""
    t = m.scenario.training
    per = max(1, min(t.gpus, t.gpus_per_node))
    return math.ceil(t.gpus / per), per


def _epochs(m: Manifest) -> tuple[int, list[str]]:
    """Whole epochs for a trainer that takes an integer, and a note when the plan's are not whole."""
    e = m.scenario.training.epochs
    whole = max(1, math.ceil(e))
    return whole, ([] if whole == e else [f"# note: the plan trains {e:g} epochs; the trainer takes whole epochs "
                                          f"({whole}): set its step limit to stop earlier"])


def _nodes_note(m: Manifest, how: str) -> list[str]:
    nodes, per = _train_gpus(m)
    return [] if nodes == 1 else [f"# the plan trains on {nodes} nodes of {per} GPUs: {how}"]


@functools.cache
def pipeline_flags() -> dict:
    """presets of every exported script's accepted flags (planner/export/pipeline_flags.yaml)."""
    return load_shipped_yaml(Path(__file__).resolve().parent / "pipeline_flags.yaml")


def _target(pipeline: str) -> str:
    e = pipeline_flags()[pipeline]
    return f"{e['repo']}@{e['commit'][:12]} (command lines read 2026-12-02; check them against your version)"


def _plan_values(m: Manifest, own_layout: str) -> tuple[LayoutSpec, Effective]:
    """The layout and the values in force for this pipeline: the manifest's layout when it is this
    pipeline's, else the pipeline's own layout; the scenario's values where it sets them."""
    s = m.scenario
    spec = layout_presets().get(s.layout)
    own = layout_presets()[own_layout]
    if spec is None or spec.pipeline != own.pipeline:
        spec = own
    return spec, effective(spec, unit=s.unit, max_seq_len=s.max_seq_len, capture_batch_size=s.capture_batch_size,
                           sort_by_length=s.sort_by_length)


def _split_last(m: Manifest) -> tuple[list[int], bool]:
    """The planned layer ids without the model's last layer, and whether the plan stores it."""
    L = num_layers(m.scenario.model, m.scenario.custom_model)
    return [x for x in m.layers if x != L], L in m.layers


def _materialize(manifest_path: str) -> list[str]:
    manifest_path = value(manifest_path)
    return [
        "# The exact rows of this manifest, one component after another (per-source counts cannot be",
        "# expressed with --max-samples / --num-samples of the pipelines, which cap the whole input):",
        join(["python", "-m", "planner", "materialize", manifest_path, "--out", "mix.jsonl"])
        + "     # local (profiled) components",
        join(["python", "-m", "planner", "materialize", manifest_path, "--out", "mix.jsonl",
              "--hub-script", "materialize_hub.py"]),
        "python materialize_hub.py --out mix.jsonl --append      # hub components, on a machine with the hub",
        "",
    ]


def _layout_note(m: Manifest, pipeline: str) -> list[str]:
    spec = layout_presets().get(m.scenario.layout)
    if spec is not None and spec.pipeline == pipeline:
        return []
    return [f"# note: this manifest was planned with the {quote(m.scenario.layout)} layout; {pipeline} writes its own",
            "# files, so the bytes differ from the plan (plan it with the layout of this pipeline to see them)"]


def speculators_commands(manifest: Manifest, manifest_path: str = "manifest.yaml") -> str:
    """vLLM speculators: launch_vllm.py (a vLLM server that writes hidden states), prepare_data.py
    (one row per assistant turn), data_generation_offline.py (one request and one file per row)."""
    spec, eff = _plan_values(manifest, "speculators")
    model = _model_path(manifest)
    captured, last = _split_last(manifest)
    data_args: list[object] = []
    for c in manifest.components:
        if c.rows_selected == 0:
            continue
        source = value(c.local_path) if c.local_path else f"hf:{c.hf_repo}:{c.subset or 'default'}:{c.split or 'train'}"
        data_args += ["--data", source]
    total = sum(c.rows_selected for c in manifest.components)
    per_source = ", ".join(f"{quote(c.id)}={c.rows_selected:,}" for c in manifest.components if c.rows_selected)
    seq = ["--seq-length", eff.max_seq_len] if eff.max_seq_len else []
    lines = [
        f"# vLLM speculators: commands for this manifest, for {_target('speculators')}",
        f"# target {quote(model)}; capture layers {manifest.layers}"
        + (" (launch_vllm.py appends the last layer)" if last else " (no last layer: --no-include-last-layer)"),
        "# one training row per assistant turn holding the prefix (preprocessing.py _render_boundary_rows)"
        + (f", --seq-length {eff.max_seq_len}" if eff.max_seq_len
           else ", no cap given: the speculators default of 8192 applies"),
        *_layout_note(manifest, "speculators"),
        *(["# note: the plan counts one row per conversation; speculators always writes one per assistant turn"]
          if eff.unit != "turn" else []),
        f"# this mix: {per_source}",
        "",
        *_materialize(manifest_path),
        "# 1. in another shell: a vLLM server that writes the hidden states of these layers",
        _command(["python", "scripts/launch_vllm.py", model],
                 ["--hidden-states-path", "./hidden_states_staging", "--target-layer-ids", *captured,
                  *([] if last else ["--no-include-last-layer"])],
                 ["--", "--port", "8000"]),
        "# 2. render the rows through that server",
        _command(["python", "scripts/prepare_data.py", "--model", model, "--data", "./mix.jsonl"],
                 [*seq, "--seed", 0, "--output", "./prepared"],
                 ["--render-endpoint", "http://localhost:8000"]),
        "# 3. capture: one request and one hs_{idx}.safetensors per row, into ./prepared/hidden_states, where",
        "#    train.py reads them (src/speculators/train/data.py:163, 183: the dataset dir + /hidden_states)",
        _command(["python", "scripts/data_generation_offline.py", "--endpoint", "http://localhost:8000/v1"],
                 ["--preprocessed-data", "./prepared", "--output", "./prepared/hidden_states"]),
        "",
        *speculators_train_lines(manifest, spec, eff),
        "",
        "# The direct form, for reference only (it cannot honour the per-source counts above):",
        "# " + join(["python", "scripts/prepare_data.py", "--model", model, *data_args,
                     *seq, "--max-samples", total]),
    ]
    return "\n".join(lines) + "\n"


def speculators_train_lines(manifest: Manifest, spec: LayoutSpec, eff: Effective) -> list[str]:
    """scripts/train.py (speculators at c05b95b3; its flags are the fields of
    src/speculators/train/config/schema.py, as docs/cli/train.md shows them under torchrun --standalone)."""
    nodes, per = _train_gpus(manifest)
    epochs, note = _epochs(manifest)
    captured = _split_last(manifest)[0]
    layers = manifest.scenario.training.drafter_layers or eff.draft_layers
    return ["# 4. train the drafter on ./prepared and its hidden states (--target-layer-ids: the captured ids without",
            "#    the last layer launch_vllm.py appends, schema.py:115-121)", *note,
            *_nodes_note(manifest, "run it under torchrun --nnodes/--node_rank on each instead of --standalone"),
            _command(["torchrun", "--standalone", "--nproc_per_node", per, "scripts/train.py"],
                     ["--verifier-name-or-path", _model_path(manifest), "--speculator-type", spec.drafter],
                     ["--data-path", "./prepared", "--save-path", "./checkpoints"],
                     ["--target-layer-ids", *captured, "--num-layers", layers],
                     ["--total-seq-len", eff.max_seq_len or 8192, "--epochs", epochs])]


def node_gpus(manifest: Manifest) -> int:
    """The GPUs of one extraction node, the --nproc_per_node of a capture: the scenario's GPUs per
    node, or all its GPUs when they fill less than one node. Every export form reads it here."""
    s = manifest.scenario
    return max(1, min(s.gpus_per_node, s.extraction_gpus))


def specforge_layout(manifest: Manifest) -> str:
    """SpecForge's own layout for this manifest: its layout (presets/layouts.yaml) of the plan's
    drafter kind, else its DFlash layout."""
    planned = layout_presets().get(manifest.scenario.layout)
    own = [s.id for s in layout_presets().values()
           if planned is not None and s.pipeline == "specforge" and s.drafter == planned.drafter]
    return own[0] if own else "specforge-dflash"


def specforge_strategy(spec: LayoutSpec) -> str:
    """prepare_hidden_states.py --strategy for a SpecForge layout: SpecForge's layouts name their
    drafter kind by its strategy name (eagle3, dflash)."""
    return spec.drafter


# SpecForge's draft config, as its own generator writes one for a target without a shipped config
# (specforge/training/model_loading.py:217-257 _generate_draft_config at a6b6b023): the target's
# architecture fields (:47-68 _TARGET_ARCHITECTURE_FIELDS) that the planner's model presets hold, then
# the strategy's defaults: EAGLE-3 specforge/algorithms/eagle3/providers.py:182-186 (llama, one layer,
# draft_vocab_size 32000), DFlash specforge/algorithms/dflash/providers.py:181-185 and
# model_providers.py:456-474 (qwen3, block_size 16, full-attention layers, dflash_config.target_layer_ids).
# The capture layers are the plan's (eagle_config / dflash_config, read by model_providers.py:188-241);
# a DFlash draft has as many layers as it captures, as SpecForge's shipped configs do
# (configs/qwen3-8b-dflash.json, configs/qwen3.6-27b-dflash.json: 5 and 5).
DRAFT_CONFIG = "./draft_config.json"
TRAIN_CONFIG = "./train_config.json"
SPECFORGE_LAYOUT_KEYS = {"eagle3": ("LlamaForCausalLMEagle3", "llama"), "dflash": ("DFlashDraftModel", "qwen3")}


def specforge_draft_config(manifest: Manifest) -> dict:
    """The draft_config.json that prepare_hidden_states.py --draft-model-config and `specforge train`
    read for this manifest (SpecForge's own format; see DRAFT_CONFIG above)."""
    spec = _plan_values(manifest, specforge_layout(manifest))[0]
    strategy = specforge_strategy(spec)
    model = _model_spec(manifest)
    arch, model_type = SPECFORGE_LAYOUT_KEYS[strategy]
    out: dict = {"architectures": [arch], "model_type": model_type}
    for key, field in (("vocab_size", "vocab_size"), ("hidden_size", "hidden_size"),
                       ("num_attention_heads", "num_q_heads"), ("num_key_value_heads", "num_kv_heads"),
                       ("head_dim", "head_dim"), ("intermediate_size", "intermediate_size")):
        v = getattr(model, field, None)     # a custom model may leave a field out
        if isinstance(v, int) and not isinstance(v, bool):
            out[key] = v
    out.update(tie_word_embeddings=False, use_cache=True, pad_token_id=0, torch_dtype="bfloat16")
    if strategy == "eagle3":
        out.update(num_hidden_layers=1, draft_vocab_size=32000,
                   eagle_config={"eagle_aux_hidden_state_layer_ids": _split_last(manifest)[0]})
        return out
    n = manifest.scenario.training.drafter_layers or len(manifest.layers)
    out.update(num_hidden_layers=n, block_size=16, layer_types=["full_attention"] * n, sliding_window=None,
               use_sliding_window=False, auto_map={"AutoModel": "dflash.DFlashDraftModel"},
               dflash_config={"target_layer_ids": list(manifest.layers)})
    L = num_layers(manifest.scenario.model, manifest.scenario.custom_model)
    if L:
        out["num_target_layers"] = L
    return out


def draft_config_lines(manifest: Manifest) -> list[str]:
    """The lines of an export that write ./draft_config.json."""
    return ["# the draft model config (SpecForge's format, written as its generator would: model_loading.py:217-257);",
            "# copy rope_theta, rms_norm_eps and max_position_embeddings from the target's config.json, which the",
            "# planner does not hold (without them the config class's defaults apply)",
            *write_lines(DRAFT_CONFIG, json.dumps(specforge_draft_config(manifest), indent=2))]


def specforge_train_lines(manifest: Manifest, hidden_states: str = "./cache/hidden_states") -> list[str]:
    """`specforge train -c FILE` (specforge/cli.py:172-173 at a6b6b023) on a run config of the offline
    recipe's shape (examples/configs/qwen3-8b-dflash-offline.yaml; fields of specforge/config/schema.py:
    ModelConfig :37-54, DataConfig :129-141, TrainingConfig :507-509, TrainerDeploymentConfig :242-246)."""
    spec, eff = _plan_values(manifest, specforge_layout(manifest))
    nodes, per = _train_gpus(manifest)
    epochs, note = _epochs(manifest)
    cfg = {"model": {"target_model_path": _model_path(manifest), "draft_model_config": DRAFT_CONFIG},
           "data": {"hidden_states_path": hidden_states, "max_length": eff.max_seq_len or 2048},
           "training": {"strategy": specforge_strategy(spec), "num_epochs": epochs},
           "run_id": "drafter-planner", "output_dir": "./outputs",
           "deployment": {"mode": "local_colocated", "trainer": {"nnodes": nodes, "nproc_per_node": per}}}
    return ["# train the drafter on the captured hidden states (the offline recipe: data.hidden_states_path)",
            *note, *_nodes_note(manifest, "add deployment.trainer.master_addr and node_rank to the config on each"),
            *write_lines(TRAIN_CONFIG, json.dumps(cfg, indent=2)),
            join(["specforge", "train", "--config", TRAIN_CONFIG])]


def specforge_commands(manifest: Manifest, manifest_path: str = "manifest.yaml") -> str:
    """SpecForge: scripts/prepare_hidden_states.py under torchrun, with the strategy, the batch and
    the length that were planned; the capture layers come from the draft model config."""
    spec, eff = _plan_values(manifest, specforge_layout(manifest))
    model = _model_path(manifest)
    strategy = specforge_strategy(spec)
    key = ("dflash_config.target_layer_ids" if strategy == "dflash"
           else "eagle_config.eagle_aux_hidden_state_layer_ids")
    layers = _split_last(manifest)[0] if strategy == "eagle3" else manifest.layers
    return "\n".join([
        f"# SpecForge: commands for this manifest, for {_target('specforge')}",
        f"# target {quote(model)}; strategy {strategy}; capture layers {layers} from the draft model config",
        f"# ({key}); batches of {eff.capture_batch_size} padded to their longest row, drop_last",
        *_layout_note(manifest, "specforge"),
        "",
        *_materialize(manifest_path),
        *draft_config_lines(manifest),
        "",
        _command(["torchrun", "--nproc_per_node", node_gpus(manifest), "scripts/prepare_hidden_states.py"],
                 ["--target-model-path", model, "--strategy", strategy],
                 ["--draft-model-config", DRAFT_CONFIG, "--data-path", "./mix.jsonl"],
                 ["--max-length", eff.max_seq_len or 2048, "--batch-size", eff.capture_batch_size],
                 ["--output-path", "./cache/hidden_states"]),
        "",
        *specforge_train_lines(manifest),
    ]) + "\n"


def modelopt_commands(manifest: Manifest, manifest_path: str = "manifest.yaml") -> str:
    """NVIDIA Model-Optimizer: collect_hidden_states/compute_hidden_states_hf.py, one .pt per
    conversation; conversations longer than --max-seq-len are skipped."""
    spec, eff = _plan_values(manifest, "modelopt-eagle3")
    model = _model_path(manifest)
    aux = _split_last(manifest)[0]
    return "\n".join([
        f"# NVIDIA Model-Optimizer: commands for this manifest, for {_target('model-optimizer')}",
        f"# target {quote(model)}; aux layers {aux} and the final layer; conversations over "
        f"{eff.max_seq_len or 3072} tokens are skipped",
        *_layout_note(manifest, "modelopt"),
        "",
        *_materialize(manifest_path),
        _command(["python", "examples/speculative_decoding/collect_hidden_states/compute_hidden_states_hf.py"],
                 ["--model", model, "--input-data", "./mix.jsonl", "--output-dir", "./hidden_states"],
                 ["--max-seq-len", eff.max_seq_len or 3072, "--aux-layers", ",".join(str(x) for x in aux)]),
        "",
        *modelopt_train_lines(manifest, eff),
    ]) + "\n"


def modelopt_train_lines(manifest: Manifest, eff: Effective, hidden_states: str = "./hidden_states") -> list[str]:
    """examples/speculative_decoding/launch_train.sh --config RECIPE key=value... (Model-Optimizer at a2fbac7b:
    launch_train.sh:31-42 its flags, the rest OmegaConf dotlist overrides of the recipe; README.md:120-129
    "Train Draft Model with Dumped Hidden States": data.offline_data_path makes it offline)."""
    epochs, note = _epochs(manifest)
    nodes, _ = _train_gpus(manifest)
    recipe = "modelopt_recipes/general/speculative_decoding/eagle3.yaml"
    return ["# train the drafter on the dumped hidden states (the EAGLE-3 recipe; launch_train.sh uses every GPU",
            "# it sees)",
            *note, *_nodes_note(manifest, "add --num_nodes N --head_node_ip IP (launch_train.sh:31-42) on each"),
            _command(["bash", "examples/speculative_decoding/launch_train.sh", "--config", recipe],
                     [f"model.model_name_or_path={_model_path(manifest)}", f"data.offline_data_path={hidden_states}"],
                     ["training.output_dir=./ckpts", f"training.num_train_epochs={epochs}",
                      f"training.training_seq_len={eff.max_seq_len or 3072}"])]


def nemo_commands(manifest: Manifest, manifest_path: str = "manifest.yaml") -> str:
    """NeMo Automodel: precompute_eagle3 writes shards of 256 samples padded to --seq-length."""
    spec, eff = _plan_values(manifest, "nemo-automodel")
    model = _model_path(manifest)
    return "\n".join([
        f"# NeMo Automodel: commands for this manifest, for {_target('nemo-automodel')}",
        f"# target {quote(model)}; every sample padded to {eff.max_seq_len or 2048} tokens; per token the target's",
        "# distribution over the draft vocabulary (the full vocabulary unless --draft-vocab-size or",
        "# --target-probs-topk is given)",
        *_layout_note(manifest, "nemo-automodel"),
        "",
        *_materialize(manifest_path),
        _command(["python", "-m", "nemo_automodel.components.speculative.precompute_eagle3"],
                 ["--target-model", model, "--input-data", "./mix.jsonl", "--output-dir", "./cache"],
                 ["--seq-length", eff.max_seq_len or 2048, "--batch-size", eff.capture_batch_size],
                 ["--shard-size", 256, "--dtype", "bf16"]
                 + (["--draft-vocab-size", manifest.scenario.draft_vocab_size]
                    if manifest.scenario.draft_vocab_size else [])
                 + (["--target-probs-topk", manifest.scenario.target_probs_topk]
                    if manifest.scenario.target_probs_topk else [])),
        "",
        *nemo_train_lines(manifest, eff),
    ]) + "\n"


NEMO_RECIPE = "examples/speculative/eagle3/llama_eagle3_mvp.yaml"


def nemo_train_lines(manifest: Manifest, eff: Effective) -> list[str]:
    """`automodel RECIPE --nproc-per-node G --recipe_args.KEY=VALUE...` (NeMo Automodel at 36044ad3:
    nemo_automodel/cli/app.py:70-90; examples/speculative/README.md:94-106, 238-240, 573 the offline cache
    through recipe_args.cached_target_path)."""
    epochs, note = _epochs(manifest)
    _, per = _train_gpus(manifest)
    arg = lambda k, v: f"--recipe_args.{k}={v}"  # noqa: E731
    return [f"# train the drafter from the cache (the recipe {NEMO_RECIPE}: its other values, e.g. draft_vocab_size",
            "# 8192 and ttt_steps 4, are that recipe's; keep the draft vocabulary the cache was made with)", *note,
            *_nodes_note(manifest,
                         "add the recipe's multi-node launcher section (skypilot or nemo_run), or sbatch slurm.sub"),
            _command(["automodel", NEMO_RECIPE, "--nproc-per-node", per],
                     [arg("target_model_name_or_path", _model_path(manifest)), arg("train_data_path", "./mix.jsonl")],
                     [arg("cached_target_path", "./cache"), arg("seq_length", eff.max_seq_len or 2048)],
                     [arg("num_epochs", epochs), arg("output_dir", "./outputs")])]


def deepspec_commands(manifest: Manifest, manifest_path: str = "manifest.yaml") -> str:
    """DeepSpec: scripts/data/prepare_target_cache.py, 64 GiB shards plus samples.idx; the target,
    its layers and max_length come from the config file."""
    spec, eff = _plan_values(manifest, "deepspec")
    model = _model_path(manifest)
    return "\n".join([
        f"# DeepSpec: commands for this manifest, for {_target('deepspec')}",
        f"# the config must name the target {quote(model)}, target_layer_ids {_split_last(manifest)[0]}",
        f"# and max_length {eff.max_seq_len or 4096} (the last hidden state is stored as well)",
        *_layout_note(manifest, "deepspec"),
        "",
        *_materialize(manifest_path),
        _command(["python", "scripts/data/prepare_target_cache.py", "--config", "./target_config.py"],
                 ["--train-data-path", "./mix.jsonl", "--output-dir", "./cache"],
                 ["--local-batch-size", 32]),
        "",
        "# train the drafter from the cache: train.py (train.py:20-23 --config, --opts key=value;",
        "# scripts/train/train.sh) starts one worker per visible GPU (CUDA_VISIBLE_DEVICES); the epochs and the",
        "# rest are the config's",
        *_nodes_note(manifest, "set MASTER_ADDR, RANK (the node) and WORLD_SIZE (the nodes) on each, as train.sh does"),
        _command(["python", "train.py", "--config", "./target_config.py"],
                 ["--opts", "data.target_cache_path=./cache"]),
    ]) + "\n"


@dataclass(frozen=True)
class ExportFormat:
    """`kind` says how the output is meant to be used: `shell` is run with bash, `data` is parsed."""

    render: Callable[[Manifest, str], str]
    kind: Literal["shell", "data"]
    model_flags: tuple[str, ...] = ()      # the flags that carry the target model (tests check them)


# The CLI's `export --format` choices and the page's exports, by name (planner/variants.py); tests
# run every `shell` format with hostile values. A new format: its builder and one register() here.
EXPORT_FORMATS: Registry[ExportFormat] = Registry("export format", "--format")
EXPORT_FORMATS.register("speculators", ExportFormat(speculators_commands, "shell", ("--model",)))
EXPORT_FORMATS.register("specforge", ExportFormat(specforge_commands, "shell", ("--target-model-path",)))
EXPORT_FORMATS.register("modelopt", ExportFormat(modelopt_commands, "shell", ("--model",)))
EXPORT_FORMATS.register("nemo-automodel", ExportFormat(nemo_commands, "shell", ("--target-model",)))
EXPORT_FORMATS.register("deepspec", ExportFormat(deepspec_commands, "shell"))
EXPORT_FORMATS.register("yaml", ExportFormat(lambda m, _path: dump_manifest(m, "yaml"), "data"))
EXPORT_FORMATS.register("json", ExportFormat(lambda m, _path: dump_manifest(m, "json"), "data"))
