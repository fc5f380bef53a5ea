"""The command line as a package: no import cycles, no abbreviations, the README's flags, hostile
flag values (issue 10) and the --out file of trim."""
import ast
import json
import os
import re
from pathlib import Path

import pytest

import planner.cli
from planner.cli import _common
from planner.cli.main import CliError, build_parser, main
from planner.planning import plan
from planner.scenario import default_scenario
from tests.helpers import ROOT, run_cli

CLI_DIR = Path(planner.cli.__file__).parent


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, out: str, err: str, *needles: str) -> str:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("planner: error: "), err
    assert len(lines[0]) < 400, lines[0]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# ---------------------------------------------------------------- the package
def import_graph(folder: Path, package: str) -> dict[str, set[str]]:
    """module -> the package's modules it imports (anywhere in the file, functions included)."""
    modules = {(package if p.stem == "__init__" else f"{package}.{p.stem}"): p for p in folder.glob("*.py")}
    graph = {}
    for name, path in modules.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                base = node.module if node.level == 0 else f"{package}.{node.module}"
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            edges |= {t for t in targets if t in modules and t != name}
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every elementary cycle found by depth-first search (each reported once, from its smallest node)."""
    found = []

    def walk(start, node, path):
        for nxt in sorted(graph[node]):
            if nxt == start:
                found.append(path[:])
            elif nxt not in path and nxt > start:
                walk(start, nxt, path + [nxt])
    for start in sorted(graph):
        walk(start, start, [start])
    return found


def test_cycle_finder_finds_cycles(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from pkg.a import x\n")
    (pkg / "a.py").write_text("from pkg import b\nx = 1\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.a import x\n    return x\n")   # inside a function
    (pkg / "c.py").write_text("import pkg.a\n")
    g = import_graph(pkg, "pkg")
    assert g == {"pkg": {"pkg.a"}, "pkg.a": {"pkg.b"}, "pkg.b": {"pkg.a"}, "pkg.c": {"pkg.a"}}
    assert cycles(g) == [["pkg.a", "pkg.b"]]


def test_cli_package_has_no_import_cycle():
    assert cycles(import_graph(CLI_DIR, "planner.cli")) == []


def test_every_command_module_has_register_and_run():
    for name in ("estimate", "components", "trim", "export"):
        mod = __import__(f"planner.cli.{name}", fromlist=["register", "run"])
        assert callable(mod.register) and callable(mod.run)
    assert planner.cli.main is main and CliError is _common.CliError


def test_entry_points():
    assert "planner = \"planner.cli:main\"" in (ROOT / "pyproject.toml").read_text()
    r = run_cli("estimate", "--compress", "1.5")   # python -m planner reaches main(), which refuses the abbreviation
    assert r.returncode == 2 and r.stderr == "planner: error: unrecognized arguments: --compress 1.5\n"


def all_parsers():
    root = build_parser()
    sub = next(a for a in root._actions if a.dest == "command")
    return [root, *sub.choices.values()]


def test_no_parser_accepts_abbreviations(capsys):
    assert all(p.allow_abbrev is False for p in all_parsers())
    # both were accepted as abbreviations of --compression and --samples
    one_line_error(*cli(capsys, "estimate", "--compress", "1.5"), "unrecognized arguments: --compress")
    one_line_error(*cli(capsys, "estimate", "--sample", "5", "--tokens", "3"), "unrecognized arguments: --sample")


def test_readme_flags_are_all_accepted():
    readme = (ROOT / "docs" / "guide.md").read_text()     # the user guide, out of the README (issue 19)
    sections = [readme[readme.index(h):] for h in ("## Command line", "## Trim to a budget", "## Your own data",
                                                          "## Beyond one node")]
    text = "".join(s[:s.index("\n## ", 3)] for s in sections)
    flags = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
    known = {o for p in all_parsers() for a in p._actions for o in a.option_strings}
    # the rest are the pipelines' own flags, quoted where the README explains them: each must be one
    # their scripts accept (planner/export/pipeline_flags.yaml), and the Slurm script's --dry-run
    from planner.export.commands import pipeline_flags
    theirs = {f for e in pipeline_flags().values() if isinstance(e, dict) for sc in e.get("scripts", {}).values()
              for f in sc.get("flags", {}) if f.startswith("--")}
    torchrun = {"--nnodes", "--node_rank", "--nproc_per_node", "--standalone"}
    foreign = flags - known
    assert len(flags) > 45 and {"--data", "--max-samples", "--dp-world-size"} <= foreign
    assert foreign <= theirs | torchrun | {"--dry-run"}, foreign - theirs


def test_one_table_names_every_scenario_path():
    # a validation error deep in the scenario names the flag of the table
    assert _common.flag_for("mix.3.rows") == "--components"
    assert _common.flag_for("throughput.prefill_mfu") == "--mfu"
    assert _common.flag_for("budget.usd", _common.ALL_FLAGS) == "--budget-usd"
    dests = [f.dest for f in _common.ALL_FLAGS]
    assert len(dests) == len(set(dests))


# ---------------------------------------------------------------- hostile values
BIG = "1" + "0" * 5000
NUMERIC = [f.flag for f in _common.ALL_FLAGS
           if f.convert in (_common.number, _common.positive_int, _common.positive_number, _common.seq_cap,
                            _common.truncated_int)]


@pytest.mark.parametrize("flag", NUMERIC)
def test_numbers_over_4300_digits_are_refused_in_one_short_line(flag, capsys):
    assert len(NUMERIC) >= 20
    extra = ["--tokens", "5"] if flag == "--samples" else ["--samples", "5"] if flag in ("--tokens",
                                                                                        "--response-tokens") else []
    cmd = ["trim", "--out", "/nonexistent/x.yaml"] if flag in {f.flag for f in _common.TRIM_FLAGS} else ["estimate"]
    line = one_line_error(*cli(capsys, *cmd, *extra, flag, BIG), flag + ":", "5,001 characters")
    assert "0" * 200 not in line   # the 5,001 characters are not echoed


@pytest.mark.parametrize("args, flag", [
    (["--components", f"openorca={BIG}"], "--components"),
    (["--layers", f"1,{BIG}"], "--layers"),
    (["--samples", "5", "--tokens", "5", "--response-tokens", BIG], "--response-tokens"),
])
def test_huge_numbers_inside_lists(args, flag, capsys):
    one_line_error(*cli(capsys, "estimate", *args), flag + ":")


@pytest.mark.parametrize("flag", ["--model", "--layout", "--gpu", "--train-gpu", "--components", "--layers",
                                  "--manifest", "--drop"])
@pytest.mark.parametrize("value", ["", "  ", ","])
def test_empty_values_are_refused(flag, value, capsys):
    if value == "," and flag not in ("--components", "--layers", "--drop"):
        return
    one_line_error(*cli(capsys, "estimate", flag, value), flag + ":", repr(value))


def test_drop_strips_every_name(capsys):
    code, out, err = cli(capsys, "estimate", "--drop", "agentic, glaive_fc", "--json")
    assert code == 0, err
    ids = [c["id"] for c in json.loads(out)["components"]]
    default_ids = [c.id for c in plan(default_scenario()).components]
    assert ids == [i for i in default_ids if i not in ("agentic", "glaive_fc")] and len(ids) == 8
    one_line_error(*cli(capsys, "estimate", "--drop", "agentic, nosuch"), "--drop:", "'nosuch'")


@pytest.mark.parametrize("args, needles", [
    (["--roofline", "--tokens-per-s", "100"], ["--roofline", "--tokens-per-s 100"]),
    (["--batching", "2", "--roofline"], ["--roofline", "--batching 2"]),
    (["--preset", "seed-article", "--manifest", "m.yaml"], ["--preset", "'seed-article'", "--manifest", "m.yaml"]),
    (["--preset", "default", "--manifest", "m.yaml"], ["--preset", "'default'", "--manifest"]),
])
def test_conflicting_flags_are_refused(args, needles, capsys):
    one_line_error(*cli(capsys, "estimate", *args), *needles)


def test_preset_defaults_to_none_and_means_default(tmp_path, capsys):
    assert build_parser().parse_args(["estimate"]).__dict__.get("preset") is None
    code, plain, _ = cli(capsys, "estimate", "--json")
    code2, explicit, _ = cli(capsys, "estimate", "--preset", "default", "--json")
    assert code == code2 == 0 and json.loads(plain)["preset"] == "default" and plain == explicit
    # a seed-article manifest without --preset keeps its own scenario
    cli(capsys, "trim", "--preset", "seed-article", "--budget-storage-tb", "1000", "--out", str(tmp_path / "m.json"))
    code, out, err = cli(capsys, "estimate", "--manifest", str(tmp_path / "m.json"), "--json")
    assert code == 0, err
    # 913,786 x 800 tokens x 51,204 bytes (README): the article's figure, not the default mix's
    assert json.loads(out)["storage_bytes"] == 913_786 * 800 * 51_204


def test_fixed_rate_without_roofline_still_switches_the_mode(capsys):
    code, out, err = cli(capsys, "estimate", "--preset", "seed-article", "--batching", "1", "--json")
    assert code == 0, err
    # the article's single stream: 456,893,000 generated tokens at 120 tok/s = 1,057.6 h
    assert json.loads(out)["extraction"]["wall_hours"] == pytest.approx(456_893_000 / 120 / 3600, rel=1e-3)


def test_terminal_output_escapes_what_it_prints_from_data(capsys, monkeypatch):
    import planner.export.report
    monkeypatch.setattr(planner.export.report, "text_report", lambda p, binary=False: "name \x1b[2J\x07 ok\nnext")
    code, out, _ = cli(capsys, "estimate")
    assert code == 0
    assert out == "name \\x1b[2J\\x07 ok\nnext\n"


def test_error_messages_are_one_line_whatever_the_value(capsys):
    one_line_error(*cli(capsys, "estimate", "--model", "bad\nname\x1b[31m"), "--model", "\\x1b")


# ---------------------------------------------------------------- manifest inputs
@pytest.mark.parametrize("cmd", [["estimate", "--manifest"], ["export", "--format", "yaml"],
                                 ["trim", "--budget-usd", "5", "--out", "m.yaml", "--manifest"]])
def test_manifest_inputs_that_are_not_regular_files(cmd, tmp_path, capsys, monkeypatch):
    # short relative names: a message shows a long value cut to 80 characters, and tmp paths vary
    monkeypatch.chdir(tmp_path)
    os.mkfifo("pipe.yaml")
    os.mkdir("folder")
    field = "manifest" if cmd[0] == "export" else "--manifest"
    # /dev/zero was read until memory ran out; a FIFO with no writer made the open hang
    for path, kind in (("/dev/zero", "character device"), ("pipe.yaml", "FIFO"), ("folder", "directory")):
        one_line_error(*cli(capsys, *cmd, path), f"{field}: {path!r} is not allowed; it ", kind)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * 1_000_001)
    one_line_error(*cli(capsys, *cmd, str(big)), field, "1,000,000-byte limit")


def test_one_manifest_reader_and_its_message_says_it_once(tmp_path, capsys, monkeypatch):
    from planner.export.manifest import MAX_MANIFEST_BYTES, ManifestError, load_manifest
    from planner.safe_io import LIMITS
    monkeypatch.chdir(tmp_path)         # a short name: a long value is shown cut to 80 characters
    missing = "gone.yaml"
    # the CLI reads through load_manifest: the same one line, "cannot be read" said once
    with pytest.raises(ManifestError) as e:
        load_manifest(missing, "--manifest")
    line = one_line_error(*cli(capsys, "estimate", "--manifest", missing), "cannot be read")
    assert line == f"planner: error: {e.value}"
    assert line == f"planner: error: --manifest: {missing!r} is not allowed; it cannot be read: no such file"
    # one size limit for files and uploads: 1,000,000 bytes is read, one more is refused
    assert MAX_MANIFEST_BYTES is LIMITS["manifest"] and LIMITS["manifest"] == 1_000_000
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * 1_000_001)
    line = one_line_error(*cli(capsys, "export", str(big), "--format", "yaml"), "1,000,000-byte limit")
    assert line.count("1,000,000") == 1 and "is not allowed; it is over the 1,000,000-byte limit for a manifest" in line


def test_nemo_draft_vocabulary_flags_reach_the_plan(capsys):
    # Qwen3.6-27B (hidden 5,120, vocab 248,320): NeMo's 3 aux layers 30,720 + ids/masks 25 = 30,745;
    # default: + 248,320 x 2 = 527,385; --draft-vocab-size 32000: + 64,000 = 94,745;
    # --draft-vocab-size 32000 --target-probs-topk 64: + 64 x (2 + 4) = 31,129
    # (NeMo Automodel@36044ad3 precompute_eagle3.py:116-121, 310-324)
    code, out, _ = cli(capsys, "estimate", "--layout", "nemo-automodel", "--json")
    assert code == 0 and json.loads(out)["bytes_per_token"] == 527_385
    code, out, _ = cli(capsys, "estimate", "--layout", "nemo-automodel", "--draft-vocab-size", "32000", "--json")
    assert code == 0 and json.loads(out)["bytes_per_token"] == 94_745
    code, out, _ = cli(capsys, "estimate", "--layout", "nemo-automodel", "--draft-vocab-size", "32000",
                       "--target-probs-topk", "64", "--json")
    assert code == 0 and json.loads(out)["bytes_per_token"] == 31_129
    one_line_error(*cli(capsys, "estimate", "--target-probs-topk", "-3"), "--target-probs-topk", "-3")


def test_add_keeps_the_mix_and_profile_names_it(capsys):
    # --add appends a component and keeps the default mix (--components replaces it: issue 35 item 9);
    # an id already in the mix gets the rows given and stays ticked
    from planner.catalog.stats import get_catalog
    default = [i for i, _ in get_catalog().default_mix()]
    first = default[0]
    rc = main(["estimate", "--add", f"{first}=7", "--json"])
    comps = {c["id"]: c["rows"] for c in json.loads(capsys.readouterr().out)["components"]}
    assert rc == 0 and list(comps) == default and comps[first] == 7
    rc = main(["estimate", "--add", f"{first}=7", "--drop", default[1], "--json"])
    comps = {c["id"] for c in json.loads(capsys.readouterr().out)["components"]}
    assert rc == 0 and default[1] not in comps and first in comps


def test_profile_ends_with_the_command_that_adds_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    f = tmp_path / "d.jsonl"
    f.write_text('{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}\n' * 3)
    rc = main(["profile", str(f), "--name", "my_set", "--quiet"])
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert rc == 0 and last.endswith("add it to the mix: planner estimate --add my_set=3")


def test_a_capture_path_its_pipeline_lacks_is_one_line_naming_its_own(capsys):
    # issue 33 item 1: Model-Optimizer's layout captures with its HF loop alone (presets/capture_paths.yaml)
    one_line_error(*cli(capsys, "estimate", "--layout", "modelopt-eagle3", "--capture-path", "vllm-extract"),
                   "--capture-path: 'vllm-extract' is not allowed; the modelopt pipeline (layout modelopt-eagle3) "
                   "captures with hf-loop")
    one_line_error(*cli(capsys, "estimate", "--capture-path", "tgi"), "--capture-path", "invalid choice")
    code, out, _ = cli(capsys, "estimate", "--layout", "speculators", "--capture-path", "vllm-extract", "--json")
    assert code == 0 and json.loads(out)["extraction"]["capture_path"] == "vllm-extract"
