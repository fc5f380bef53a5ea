"""Every Scenario input is reachable from the command line and from the page (issue 32 item 5).

The leaves are walked from the model's field declarations (a model inside the Scenario is walked into,
save one that is one input: a custom model or GPU), not from a hand list. For each: its flag derived
from its path (`costs.training_usd_per_gpu_hour` -> `--costs-training-usd-per-gpu-hour`) and every
older spelling of planner/cli/_common.py's ALIASES parse a value that lands at that path of the
Scenario; the page has a control for it (drafter_dashboard/registry.py) or this file says why not.
A value is made from the field's own type and bounds, so a new field is checked with nothing added here.
"""
from __future__ import annotations

import json
import typing

import pytest

from drafter_dashboard import registry
from planner.cli._common import (
    ALIASES,
    SCENARIO_FLAGS,
    CliError,
    Parser,
    add_scenario_flags,
    derived_flag,
    scenario_from_args,
)
from planner.presets.specs import gpu_presets, model_presets
from planner.scenario import QualityPoint, Scenario
from planner.scenario.inputs import _submodel, input_of, literal_choices, value_at

# The leaves without a control of drafter_dashboard/registry.py, and why the page reaches them anyway.
NOT_A_CONTROL = {
    "preset": "the sidebar's preset picker (w_preset_pick) loads a whole preset scenario",
    "mix": "the mix editor (drafter_dashboard/mix_editor.py) edits the rows",
    "uniform.samples": "uniform samples come with the seed-article preset, a manifest or a link",
    "uniform.tokens": "uniform samples come with the seed-article preset, a manifest or a link",
    "uniform.response_tokens": "uniform samples come with the seed-article preset, a manifest or a link",
    "uniform.turns": "uniform samples come with the seed-article preset, a manifest or a link",
    "quality.points": "the 'your own runs' CSV upload (drafter_dashboard/io_panel.py)",
}
# Flags a leaf's value needs beside it: a tree is SGLang's (Quality._tree), a uniform mix has samples and
# tokens, the preset and the mix are set by flags of their own.
WITH = {
    "quality.topk": ["--quality-eval-engine", "sglang"],
    "quality.num_draft_tokens": ["--quality-eval-engine", "sglang", "--quality-topk", "2"],
}
UNIFORM = ["--uniform-samples", "1000", "--uniform-tokens", "800"]
# Every flag a command line could give before the flags were derived (main at ee6d7a7), with the field it set:
# each must set the same field now.
OLD_FLAGS = {
    "--samples": "uniform.samples", "--tokens": "uniform.tokens", "--response-tokens": "uniform.response_tokens",
    "--model": "model", "--layout": "layout", "--layers": "layers", "--hidden-dtype": "hidden_dtype",
    "--draft-vocab-size": "draft_vocab_size", "--target-probs-topk": "target_probs_topk", "--unit": "unit",
    "--max-seq-len": "max_seq_len", "--capture-batch-size": "capture_batch_size",
    "--sort-by-length": "sort_by_length", "--no-sort-by-length": "sort_by_length", "--regenerate": "regenerate",
    "--no-regenerate": "regenerate", "--response-multiplier": "response_multiplier",
    "--roofline": "throughput.mode", "--calibrated": "throughput.mode", "--tokens-per-s": "throughput.tokens_per_s",
    "--batching": "throughput.batching", "--mfu": "throughput.prefill_mfu", "--decode-mfu": "throughput.decode_mfu",
    "--max-num-seqs": "throughput.max_batch", "--max-batched-tokens": "throughput.max_batched_tokens",
    "--weight-dtype": "weight_dtype", "--kv-dtype": "kv_dtype", "--gpu": "extraction_gpu",
    "--gpus": "extraction_gpus", "--nodes": "extraction_nodes", "--gpus-per-node": "gpus_per_node",
    "--disk-capacity-tb": "disk_capacity_tb", "--placement": "placement", "--shared-fs-gb-s": "shared_fs_gb_s",
    "--shared-capacity-tb": "shared_capacity_tb", "--node-network-gbps": "node_network_gbps",
    "--node-network": "node_network", "--disagg-capture-gpus": "disaggregated.capture_gpus",
    "--disagg-train-gpus": "disaggregated.train_gpus", "--stream-buffer-gb": "disaggregated.stream_buffer_gb",
    "--compression": "compression", "--transfer": "transfer.method", "--link-gbps": "transfer.link_gbps",
    "--link-efficiency": "transfer.efficiency", "--train-gpu": "training.gpu", "--train-gpus": "training.gpus",
    "--epochs": "training.epochs", "--train-mfu": "training.mfu", "--train-nodes": "training.nodes",
    "--train-gpus-per-node": "training.gpus_per_node", "--train-disk-capacity-tb": "training.disk_capacity_tb",
    "--ttt-steps": "training.ttt_steps", "--num-anchors": "training.num_anchors", "--block-size": "training.block_size",
    "--storage-months": "costs.storage_months", "--keep-days": "costs.keep_days", "--workload": "quality.workload",
    "--domain-transfer": "quality.domain_transfer", "--serving-tokens-per-day": "quality.serving_tokens_per_day",
    "--serving-gpu": "quality.serving_gpu", "--eval-engine": "quality.eval_engine",
    "--temperature": "quality.temperature", "--num-speculative-tokens": "quality.num_speculative_tokens",
    "--topk": "quality.topk", "--num-draft-tokens": "quality.num_draft_tokens", "--serving-tp": "quality.serving_tp",
    "--serving-batch": "quality.serving_batch", "--fleet-batch": "quality.fleet_batch",
    "--quality-points": "quality.points", "--preset": "preset", "--manifest": "manifest", "--components": "mix",
    "--add": "mix", "--drop": "mix", "--storage-price": "costs.storage",
}


def leaves(model=Scenario, prefix=""):
    """(path, model, field name) of every leaf field, from the models' field declarations."""
    for name, f in model.model_fields.items():
        sub = _submodel(f.annotation)
        if sub is not None and input_of(model, name) is None:
            yield from leaves(sub, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", model, name


LEAVES = list(leaves())


def _parse(argv: list[str]):
    p = Parser(prog="t")
    add_scenario_flags(p)
    return scenario_from_args(p.parse_args(argv))


def _bases(ann) -> set:
    args = typing.get_args(ann) if typing.get_origin(ann) in (typing.Union, typing.Optional) or \
        type(ann).__name__ == "UnionType" else (ann,)
    return {typing.get_args(a)[0] if typing.get_origin(a) is typing.Annotated else a for a in args} - {type(None)}


def _number(model, name: str, integer: bool):
    """A value inside the field's bounds and off its default: the low bound's double, or the middle."""
    lo, hi = registry.bounds(model, name)
    default = model.model_fields[name].get_default(call_default_factory=True)
    lo = 1 if lo is None or lo <= 0 else lo
    for v in (lo * 2, (lo + (hi if hi is not None else lo * 4)) / 2, lo):
        v = int(v) if integer else v
        if v != default and (hi is None or v <= hi):
            return v
    raise AssertionError(name)


def value_for(path: str, model, name: str, tmp_path) -> tuple[str, object]:
    """(the text given to the flag, what the Scenario then holds at `path`)."""
    f = model.model_fields[name]
    default = f.get_default(call_default_factory=True)
    if path == "quality.points":
        row = {"drafter": "eagle3", "target": "qwen3-8b", "family": "code", "training_tokens": "1e9", "epochs": "2",
               "eval_engine": "vllm", "tau": "3.5"}
        csv = tmp_path / "runs.csv"
        csv.write_text(",".join(QualityPoint.model_fields) + "\n" + ",".join(row[k] for k in QualityPoint.model_fields)
                       + "\n")
        return str(csv), [QualityPoint.model_validate(row)]
    if path == "quality.workload":
        return "code=1", {"general": 0.0, "code": 1.0, "tool": 0.0, "agentic": 0.0, "math": 0.0}
    if path == "layers":
        return "1,2", [1, 2]
    if path == "max_seq_len":
        return "none", "none"
    if path in ("custom_model", "custom_gpu"):
        presets = model_presets() if path == "custom_model" else gpu_presets()
        spec = next(iter(presets.values())).model_dump()
        return json.dumps(spec), spec
    choices = literal_choices(f.annotation)
    if choices:
        v = next(c for c in choices if c != default)
        return v, v
    bases = _bases(f.annotation)
    if bases == {bool}:
        return "", True          # the flag; its --no- switch: False
    if int in bases:
        v = _number(model, name, True)
        return str(v), v
    if float in bases:
        v = _number(model, name, False)
        return repr(v), v
    return "x-test", "x-test"     # an id


def _argv(flag: str, text: str, path: str) -> list[str]:
    const = next((to[1] for old, to in ALIASES.items() if old == flag and isinstance(to, tuple)), None)
    head = [] if const is not None or text == "" else [text]
    # a uniform field goes with samples and tokens: the other of the two, or both
    extra = {"uniform.samples": UNIFORM[2:], "uniform.tokens": UNIFORM[:2]}.get(
        path, UNIFORM if path.startswith("uniform.") else [])
    return [flag, *head, *extra, *WITH.get(path, [])]


@pytest.mark.parametrize("path,model,name", [x for x in LEAVES if x[0] not in ("preset", "mix")],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_every_leaf_is_set_by_its_derived_flag_and_by_each_older_spelling(path, model, name, tmp_path):
    text, expected = value_for(path, model, name, tmp_path)
    flags = [derived_flag(path)] + [old for old, to in ALIASES.items()
                                    if (to if isinstance(to, str) else to[0]) == path and isinstance(to, str)]
    for flag in flags:
        s = _parse(_argv(flag, text, path))
        got = value_at(s, path)
        got = got.model_dump() if hasattr(got, "model_dump") else got
        assert got == expected, (flag, got, expected)
    if _bases(model.model_fields[name].annotation) == {bool}:   # its --no- switch sets the other value
        assert value_at(_parse(["--no-" + derived_flag(path)[2:]]), path) is False


def test_the_preset_and_the_mix_have_their_flags():
    assert _parse(["--preset", "seed-article"]).preset == "seed-article"
    assert [(m.id, m.rows) for m in _parse(["--components", "sharegpt_68k=10"]).mix] == [("sharegpt_68k", 10)]


def test_every_older_flag_sets_the_field_it_set():
    by_flag: dict[str, set] = {}
    for f in SCENARIO_FLAGS:
        by_flag.setdefault(f.flag, set()).add(f.path)
    assert {flag: by_flag.get(flag) for flag in OLD_FLAGS} == {flag: {path} for flag, path in OLD_FLAGS.items()}
    # the older switches set what they set
    assert _parse(["--roofline"]).throughput.mode == "roofline"
    assert _parse(["--calibrated"]).throughput.mode == "calibrated"
    assert _parse(["--no-regenerate"]).regenerate is False
    assert _parse(["--no-sort-by-length"]).sort_by_length is False


def test_no_flag_is_given_twice_and_every_alias_names_a_leaf():
    flags = [f.flag for f in SCENARIO_FLAGS]
    assert len(flags) == len(set(flags))
    paths = {p for p, _, _ in LEAVES}
    assert {to if isinstance(to, str) else to[0] for to in ALIASES.values()} <= paths


def test_both_gpu_prices_have_flags():
    """The CLI's verdict quotes the GPU price's break-even; now the prices can be given: $2.5 and $4.75."""
    s = _parse(["--costs-extraction-usd-per-gpu-hour", "2.5", "--costs-training-usd-per-gpu-hour", "4.75"])
    assert (s.costs.extraction_usd_per_gpu_hour, s.costs.training_usd_per_gpu_hour) == (2.5, 4.75)


@pytest.mark.parametrize("path,model,name", LEAVES, ids=lambda x: x if isinstance(x, str) else "")
def test_every_leaf_has_a_control_on_the_page_or_a_reason(path, model, name):
    paths = {".".join(c.path) for c in registry.CONTROLS}
    has = any(p == path or p.startswith(path + ".") for p in paths)
    assert has != (path in NOT_A_CONTROL), path


def _refused(argv: list[str]) -> str:
    with pytest.raises(CliError) as exc:
        _parse(argv)
    return str(exc.value)


@pytest.mark.parametrize("path,model,name", [x for x in LEAVES if x[0] not in ("preset", "mix")],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_a_bad_value_is_one_line_naming_the_flag_and_the_value(path, model, name):
    """Over the field's bound (or not a number, for a number without one), through the flag typed."""
    f = model.model_fields[name]
    bases = _bases(f.annotation)
    lo, hi = registry.bounds(model, name)
    if not bases & {int, float} or (path == "max_seq_len"):
        return
    text = str(int(hi * 10) if int in bases else hi * 10) if hi is not None else "abc"
    flags = [derived_flag(path)] + [old for old, to in ALIASES.items() if to == path]
    for flag in flags:
        msg = _refused(_argv(flag, text, path))
        assert msg.startswith(f"{flag}: ") and "\n" not in msg, (flag, msg)
        assert text in msg.replace(",", "") or f"{float(text):g}" in msg or "too large" in msg or "at most" in msg, msg


def test_a_custom_spec_is_a_json_object_and_a_bad_field_in_it_is_named():
    assert _refused(["--custom-model", "{"]) == "--custom-model: '{' is not a JSON object; give its fields, e.g. " \
        "'{\"name\": ...}'"
    assert _refused(["--custom-gpu", "[1]"]).startswith("--custom-gpu: '[1]' is not a JSON object")
    assert _refused(["--custom-model", '{"x": 1}']).startswith("--custom-model: ")
    spec = next(iter(gpu_presets().values())).model_dump() | {"memory_gb": -5}
    msg = _refused(["--custom-gpu", json.dumps(spec)])
    assert msg.startswith("--custom-gpu: memory_gb: -5") and "\n" not in msg, msg
