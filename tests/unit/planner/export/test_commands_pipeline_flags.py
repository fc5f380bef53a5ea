"""Exports that run (issue 11): every flag an exported command passes to a pipeline script is one
that script defines (planner/export/pipeline_flags.yaml, read from its argparse at the commit the
export names), and the commands carry the layers, strategy, lengths and batch that were planned."""
import shlex

import pytest

from planner.cli.main import build_parser
from planner.export.commands import EXPORT_FORMATS, pipeline_flags
from planner.export.manifest import build_manifest
from planner.presets.layouts import layout_presets
from planner.scenario import Scenario, UniformMix

SHELL = [k for k, f in EXPORT_FORMATS.items() if f.kind == "shell"]
OURS = {"materialize_hub.py": {"--out", "--append", "--local"}}


ENTRY_POINTS = {"specforge"}      # console scripts whose first word is a subcommand: `specforge train`
PROGRAMS = {"automodel"}          # console scripts whose first word is a config file: `automodel RECIPE.yaml`


def commands(text: str) -> list[list[str]]:
    """The commands of an export (continuation lines joined; comments and blank lines skipped; bash's
    printf, which writes the files the export holds, is not a pipeline's command)."""
    out, pending = [], ""
    for line in text.split("\n"):
        if not pending and (not line or line.startswith("#")):
            continue
        pending += line[:-1] + " " if line.endswith(" \\") else line
        if not line.endswith(" \\"):
            argv = shlex.split(pending, comments=True)
            if argv[0] != "printf":
                out.append(argv)
            pending = ""
    return out


def script_and_flags(argv: list[str]) -> tuple[str, list[str]]:
    """The script a command runs and the flags it gives that script (up to a bare `--`, after which
    launch_vllm.py hands the rest to `vllm serve`)."""
    if argv[0] in PROGRAMS:
        return argv[0], [a.split("=", 1)[0] for a in argv[2:] if a.startswith("--")]
    if argv[0] in ENTRY_POINTS:
        return f"{argv[0]} {argv[1]}", [a.split("=", 1)[0] for a in argv[2:] if a.startswith("--")]
    if argv[0] == "torchrun":
        i = next(k for k, a in enumerate(argv) if a.endswith(".py"))
    else:
        i = 1
    if argv[i] == "-m":
        script, rest = argv[i + 1].replace(".", "/") + ".py", argv[i + 2:]
    else:
        script, rest = argv[i], argv[i + 1:]
    if "--" in rest:
        rest = rest[:rest.index("--")]
    return script, [a.split("=", 1)[0] for a in rest if a.startswith("--")]


class Accepted(set):
    """A script's flags; a flag ending in '*' stands for every flag it begins (automodel's
    --recipe_args.KEY overrides)."""

    def __ge__(self, flags):
        return all(f in self or any(p.endswith("*") and f.startswith(p[:-1]) for p in self) for f in flags)


def accepted(script: str) -> set[str] | None:
    for e in pipeline_flags().values():
        if script in e["scripts"]:
            return Accepted(e["scripts"][script]["flags"])
    return None


def manifest_for(layout: str, **kw):
    s = Scenario(uniform=UniformMix(samples=1000, tokens=900, response_tokens=300), layout=layout, **kw)
    return build_manifest(s)


@pytest.mark.parametrize("layout", list(layout_presets()))
@pytest.mark.parametrize("fmt", SHELL)
def test_every_exported_flag_is_one_the_script_defines(fmt, layout):
    text = EXPORT_FORMATS[fmt].render(manifest_for(layout), "m.yaml")
    planner_cli = build_parser()
    seen = 0
    for argv in commands(text):
        script, flags = script_and_flags(argv)
        if script == "planner/__main__.py" or script == "planner.py":
            planner_cli.parse_args(argv[3:])           # our own CLI accepts what we print
            continue
        known = OURS.get(script) or accepted(script)
        assert known is not None, f"{fmt}: {script} is not in pipeline_flags.yaml"
        assert known >= set(flags), (fmt, script, set(flags) - known)
        seen += script not in OURS
    assert seen >= 1
    # the export names the pipeline version it targets
    assert any(e["commit"][:12] in text for e in pipeline_flags().values())


def test_the_table_is_read_from_named_commits():
    for name, e in pipeline_flags().items():
        assert len(e["commit"]) == 40 and "/" in e["repo"]
        for script, entry in e["scripts"].items():
            assert entry["parser_lines"] and entry["flags"], (name, script)


def _argv(text: str, script_end: str) -> list[str]:
    return next(a for a in commands(text) if any(x.endswith(script_end) for x in a))


def test_specforge_export_carries_the_planned_strategy_layers_length_and_batch():
    # the default DFlash layout: --strategy dflash (prepare_hidden_states.py defaults to eagle3, which
    # would capture other layers), the draft config that names the layers, 2,048 tokens, batch 32
    m = manifest_for("specforge-dflash")
    argv = _argv(EXPORT_FORMATS["specforge"].render(m, "m.yaml"), "prepare_hidden_states.py")
    value = lambda f: argv[argv.index(f) + 1]  # noqa: E731
    assert value("--strategy") == "dflash" and value("--draft-model-config").endswith(".json")
    assert value("--max-length") == "2048" and value("--batch-size") == "32"
    # Qwen3.6-27B, 64 layers: the DFlash rule's five ids, named in the export for the draft config
    assert "[1, 16, 31, 46, 61]" in EXPORT_FORMATS["specforge"].render(m, "m.yaml")
    e3 = manifest_for("specforge-eagle3", capture_batch_size=8, max_seq_len=4096)
    argv = _argv(EXPORT_FORMATS["specforge"].render(e3, "m.yaml"), "prepare_hidden_states.py")
    assert argv[argv.index("--strategy") + 1] == "eagle3"
    assert argv[argv.index("--batch-size") + 1] == "8" and argv[argv.index("--max-length") + 1] == "4096"


def test_speculators_export_uses_its_current_command_lines():
    # speculators' default layers for Qwen3.6-27B (L = 64): [2, 32, 61] + the last layer, which
    # launch_vllm.py appends itself; rows at --seq-length 8192 (prepare_data.py:117-122)
    text = EXPORT_FORMATS["speculators"].render(manifest_for("speculators"), "m.yaml")
    launch = _argv(text, "launch_vllm.py")
    i = launch.index("--target-layer-ids")
    assert launch[i + 1:i + 4] == ["2", "32", "61"] and "--no-include-last-layer" not in launch
    prep = _argv(text, "prepare_data.py")
    assert prep[prep.index("--seq-length") + 1] == "8192" and "--render-endpoint" in prep
    gen = _argv(text, "data_generation_offline.py")
    assert {"--endpoint", "--preprocessed-data", "--output"} <= set(gen)
    for gone in ("--target-model-path", "--train-data-path", "--layer-ids", "--output-dir"):
        assert gone not in gen


def test_modelopt_export_names_its_aux_layers_and_length():
    # Model-Optimizer's EAGLE-3 aux layers for L = 64: sorted({1, 31, 60}); --max-seq-len 3072
    argv = _argv(EXPORT_FORMATS["modelopt"].render(manifest_for("modelopt-eagle3"), "m.yaml"),
                 "compute_hidden_states_hf.py")
    assert argv[argv.index("--aux-layers") + 1] == "1,31,60"
    assert argv[argv.index("--max-seq-len") + 1] == "3072"


def test_nemo_export_carries_the_planned_draft_vocabulary():
    # the planned --draft-vocab-size / --target-probs-topk reach precompute_eagle3 (flags it defines:
    # NeMo Automodel@36044ad3 precompute_eagle3.py:310-324); left at the defaults, neither is passed
    def capture(m):      # the capture command (the training command comes after it)
        return next(a for a in commands(EXPORT_FORMATS["nemo-automodel"].render(m))
                    if any("precompute_eagle3" in x for x in a))
    argv = capture(manifest_for("nemo-automodel", draft_vocab_size=32000, target_probs_topk=64))
    assert argv[argv.index("--draft-vocab-size") + 1] == "32000" and argv[argv.index("--target-probs-topk") + 1] == "64"
    assert set(script_and_flags(argv)[1]) <= accepted(script_and_flags(argv)[0])
    plain = capture(manifest_for("nemo-automodel"))
    assert "--draft-vocab-size" not in plain and "--target-probs-topk" not in plain
