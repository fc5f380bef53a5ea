"""Exported commands are safe to run: every value from a manifest or the command line reaches the
program as one intact argument, and nothing in a value runs (issue 10).

The hostile manifests are built with model_construct, which skips validation: the exporter must be
safe on its own, whatever the models refuse."""
import json
import re
import shutil
import subprocess

import pytest
import yaml

from planner.cli.main import build_parser
from planner.export.commands import EXPORT_FORMATS, quote, speculators_commands
from planner.export.commands import value as as_value
from planner.export.manifest import Manifest, ManifestComponent, PredictedTotals, build_manifest
from planner.presets.specs import ModelSpec
from planner.scenario import Scenario

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is needed to run the exported commands")

# Each writes a file named PWNED if it ever runs. PATH holds only the stubs below, so the payloads
# use bash builtins (echo, redirection); `touch` would be "command not found" (also checked).
HOSTILE = [
    "$(echo > PWNED)",
    "`echo > PWNED`",
    "x; echo > PWNED",
    "x' ; echo > PWNED; echo '",
    "repo\necho > PWNED",
    "--flag-looking=1",
    "$(touch PWNED)",
    "esc\x1b[31m\r\x85tab\t|&<>*?~{a,b}",
]

# Records its name and argv, NUL-separated, one record per call (0x1e ends a record).
STUB = """#!/bin/sh
printf '%s\\0' {name} "$@" >> "$STUB_LOG"
printf '\\036\\0' >> "$STUB_LOG"
"""


def hostile_manifest(v: str) -> Manifest:
    spec = ModelSpec.model_construct(id="custom", name=v, hf_id=v)
    s = Scenario().model_copy(update={"model": "custom", "custom_model": spec, "max_seq_len": 4096})
    comps = [ManifestComponent.model_construct(id=v, name=v, hf_repo=v, subset=v, split=v, local_path=None,
                                               format=None, rows_selected=5, rows_available=10,
                                               selection="uniform", seed=0, licence=v),
             ManifestComponent.model_construct(id="local", name="local", hf_repo=None, subset=None, split=None,
                                               local_path=v, format=None, rows_selected=3, rows_available=3,
                                               selection="uniform", seed=0, licence=None)]
    zeros = {k: 0 for k in PredictedTotals.model_fields}
    return Manifest.model_construct(schema_version=1, created_at=v, planner_version=v, scenario=s,
                                    components=comps, predicted=PredictedTotals(**zeros), statistics=v,
                                    layers=[1, 16], notes=[v])


WRITTEN = {"draft_config.json", "train_config.json"}     # the files an export writes itself (bash's printf)


def run_bash(script: str, tmp_path) -> tuple[subprocess.CompletedProcess, list[list[str]]]:
    """Run `script` with bash in an empty folder, PATH = the stubs only; the stubs' argv lists. Only
    the files of WRITTEN may appear in the folder."""
    work = tmp_path / "work"
    stubs = tmp_path / "stubs"
    for d in (work, stubs):
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
    for name in ("python", "torchrun", "specforge", "bash", "automodel"):
        f = stubs / name
        f.write_text(STUB.replace("{name}", name))
        f.chmod(0o755)
    log = tmp_path / "calls.bin"
    log.write_bytes(b"")
    r = subprocess.run([BASH, "-c", script], cwd=work, capture_output=True, timeout=30,
                       env={"PATH": str(stubs), "STUB_LOG": str(log), "LC_ALL": "C"})
    calls, current = [], []
    for token in log.read_bytes().split(b"\0")[:-1]:
        if token == b"\x1e":
            calls.append(current)
            current = []
        else:
            current.append(token.decode("utf-8", "surrogateescape"))
    assert not (work / "PWNED").exists() and {p.name for p in work.iterdir()} <= WRITTEN, list(work.iterdir())
    return r, calls


def command_starts(text: str) -> int:
    """Every line is blank, a comment, a command (python/torchrun/specforge/bash/automodel) or the
    continuation of one (a flag, or an OmegaConf key=value override), or bash's printf writing a file,
    one quoted line a word; only the commands are counted."""
    starts, continued, printing = 0, False, False
    for line in text.split("\n"):
        if printing:
            assert line.startswith(("    '", "    > ")), line
        elif continued:
            assert re.match(r"    (\$?')?(--|[a-z_]+(\.[a-z_]+)+=)", line), line
        elif line.startswith("printf "):
            printing = True
        elif line and not line.startswith("#"):
            assert line.split(" ", 1)[0] in ("python", "torchrun", "specforge", "bash", "automodel"), line
            starts += 1
        continued = line.endswith(" \\")
        printing = printing and continued
    return starts


def test_export_choices_are_the_registry():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    fmt = next(a for a in sub.choices["export"]._actions if a.dest == "format")
    assert list(fmt.choices) == list(EXPORT_FORMATS)
    assert {f.kind for f in EXPORT_FORMATS.values()} <= {"shell", "data"}


@pytest.mark.parametrize("value", HOSTILE)
def test_quote_reads_back_intact_on_one_line(value, tmp_path):
    word = quote(value)
    assert "\n" not in word and "\r" not in word
    r, calls = run_bash(f"python {word}", tmp_path)
    assert r.returncode == 0 and r.stderr == b""
    assert calls == [["python", value]]


@pytest.mark.parametrize("fmt", list(EXPORT_FORMATS))
@pytest.mark.parametrize("value", HOSTILE)
def test_every_export_format_is_safe(fmt, value, tmp_path):
    m = hostile_manifest(value)
    manifest_path = f"{value}.yaml"
    out = EXPORT_FORMATS[fmt].render(m, manifest_path)
    kind = EXPORT_FORMATS[fmt].kind
    if kind == "data":
        data = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        c = data["components"][0]
        assert (c["id"], c["hf_repo"], c["subset"], c["split"]) == (value, value, value, value)
        assert data["scenario"]["custom_model"]["hf_id"] == value
        return
    assert kind == "shell", f"export format {fmt!r} of kind {kind!r} has no safety test"
    assert "\r" not in out
    starts = command_starts(out)
    r, calls = run_bash(out, tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stderr == b"", r.stderr           # nothing else ran: not even a `command not found`
    assert len(calls) == starts >= 3
    for argv in calls:
        # no value lands where a flag would be read (issue 21: argument injection): a value that starts
        # with '-' is written as the path ./-value, the same file
        assert not any(a.startswith("--flag-looking") for a in argv)
        if "materialize" in argv and argv[1] == "-m":
            assert argv[:5] == ["python", "-m", "planner", "materialize", as_value(manifest_path)]
        for flag in EXPORT_FORMATS[fmt].model_flags:
            if flag in argv:
                assert argv[argv.index(flag) + 1] == as_value(value)
    if EXPORT_FORMATS[fmt].model_flags:
        assert sum(flag in argv for argv in calls for flag in EXPORT_FORMATS[fmt].model_flags) >= 1
    if fmt == "specforge":
        # the run config the export writes names the target intact (JSON in a quoted here-document)
        train = json.loads((tmp_path / "work" / "train_config.json").read_text())
        assert train["model"]["target_model_path"] == as_value(value)
        assert json.loads((tmp_path / "work" / "draft_config.json").read_text())["architectures"]
    # the commented "direct form" is a command too: uncommented, it passes every source intact
    direct = [line[2:] for line in out.split("\n") if line.startswith("# python ")]
    if direct:
        r, calls = run_bash("\n".join(direct), tmp_path)
        assert r.returncode == 0 and r.stderr == b""
        argv = calls[0]
        data = [argv[i + 1] for i, a in enumerate(argv) if a == "--data"]
        assert data == [f"hf:{value}:{value}:{value}", as_value(value)]
        assert argv[argv.index("--model") + 1] == as_value(value)


def test_valid_manifest_commands_are_unchanged_by_quoting():
    # hub names and ids of the shipped catalog hold no character shell-quoting changes
    text = speculators_commands(build_manifest(Scenario(mix=[{"id": "openorca", "rows": 1000},
                                                             {"id": "glaive_fc", "rows": 20}])))
    assert "--data hf:Open-Orca/OpenOrca:default:train --data hf:glaiveai/glaive-function-calling-v2:default:train" \
        in text
    assert "python -m planner materialize manifest.yaml --out mix.jsonl     # local (profiled) components" in text
    assert "# this mix: openorca=1,000, glaive_fc=20" in text
    assert "'" not in text.replace("SpecForge's", "")



@pytest.mark.parametrize("gpus, per_node, expect", [
    (8, 4, 4),       # two nodes of 4: each torchrun starts 4 processes, not 8
    (16, 16, 16),    # one node of 16: all 16 (a fixed cap of 8 would leave half idle)
    (2, 8, 2),       # 2 GPUs on a node of 8: only the 2 the plan has
])
def test_specforge_and_its_slurm_form_agree_on_gpus_per_node(gpus, per_node, expect):
    from planner.export.commands import specforge_commands
    from planner.export.slurm import rank_commands, slurm_script
    m = build_manifest(Scenario(mix=[{"id": "openorca", "rows": 1000}], extraction_gpus=gpus, gpus_per_node=per_node))
    forms = {"single": specforge_commands(m), "slurm": slurm_script(m, "specforge", 2),
             "ranks": rank_commands(m, "specforge", 2)}
    for name, text in forms.items():
        counts = [text.split("--nproc_per_node ")[k].split()[0] for k in range(1, text.count("--nproc_per_node ") + 1)]
        assert counts and set(counts) == {str(expect)}, (name, counts)
