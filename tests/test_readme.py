"""Every command in README.md and docs/**/*.md is run here as written, so no example can go stale
(issue 19): the `planner` commands in-process through the CLI's main(), the shell commands between
them (grep, the Slurm script's --dry-run) with bash, each document's commands in order in one
temporary directory (a copy of tests/fixtures/runs beside them, for the paths the docs name).

A command is one line of a ```bash block, or a `$ ` line of any other block; there the lines after
it are its output as the doc shows it, and each must be a line of the real output (up to a `...`;
MACHINE says which parts of a line are this machine's). The commands of a synopsis (a block with a placeholder such as
RUN_DIR) are parsed by the CLI's parser, not run; elsewhere optional parts in [brackets] are left out. A command that
cannot run here is listed in SKIPPED with the reason and
the test that runs it instead; a command that is none of these fails the scan.

The "Trim to a budget, export, run" example is also checked for what it says (its 10 TB budget was
once under the 10.02 TB that protecting the tool-calling components alone needs), and README.md's
headline numbers against the default plan."""
from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from planner.cli.main import build_parser
from planner.cli.main import main as cli_main

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# the interpreter README.md's setup gives (scripts/run.py and scripts/test.py create .venv), or the `planner`
# entry point it installs there ([project.scripts]): a bare `python -m planner` fails on a fresh machine
# (ModuleNotFoundError), so the docs may not show one (issue 35 item 12)
PLANNER = ([".venv/bin/python", "-m", "planner"], [".venv/bin/planner"])
PLACEHOLDERS = {"RUN_DIR", "CAPTURE_DIR", "data.jsonl", "data/train-*.parquet"}
SHELL = ("grep ", "PLANNER_OUT_DIR=")
# the parts of a shown output that are this machine's: the free bytes of the disk a rank checks, and the
# day a command ran (a calibration is dated when it is made: `[measured on your run: 3 rows, 2026-12-03]`
# in the doc is the day it was written; issue 31)
MACHINE = ((re.compile(r"not enough disk in \S+: (.*), \d+ free;"), r"not enough disk in _: \1, _ free;"),
           (re.compile(r"\b\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\+00:00|Z)?)?\b"), "YYYY-MM-DD"))
# the fixture run's files are dated here, well before any day the suite runs on: a clone's files are as
# new as the clone, and a scan skips a file younger than a minute as still being written (issue 31)
FIXTURE_MTIME = 1_780_000_000      # 2026-05-28 21:46:40 UTC


def _same(line: str) -> str:
    for pattern, repl in MACHINE:
        line = pattern.sub(repl, line)
    return line.strip()

_CLUSTER = ("needs a Slurm or Ray cluster: tests/cluster/test_slurm.py and tests/cluster/test_ray.py run these steps "
            "on real ones")
SKIPPED = {   # a command's start -> why it is not run here, and what runs it instead
    "python3 scripts/run.py": "starts the dashboard and stays up: tests/browser start it the same way "
                              "(tests/browser_util.py) and tests/integration/test_run_script.py checks --port",
    "python3 scripts/test.py": "the test suite itself",
    ".venv/bin/python bench/": "a benchmark of minutes; its figures are docs/benchmarks.md's",
    "sbatch ": _CLUSTER,
    "cat slurm-": _CLUSTER,
    "ray job submit": _CLUSTER,
    "python capture_ray.py": _CLUSTER,
    # m.yaml and out/ are the cluster test's manifest and run folder, resume.sbatch its export
    ".venv/bin/python -m planner export m.yaml": _CLUSTER,
    ".venv/bin/python -m planner status out ": _CLUSTER,
    "grep -n 'SBATCH --array' resume.sbatch": _CLUSTER,
    ".venv/bin/python -c \"import json; from planner.export.manifest import json_schema": "rewrites the committed "
        "manifest schema; tests/integration/test_trim_manifest.py checks that file equals json_schema()",
}


@dataclass
class Command:
    doc: str
    line: int
    text: str
    block: int           # the fenced block's first line
    shown: list[str]     # a `$ ` command's output as the doc shows it (up to the next `$ ` or `...`)


def doc_commands(path: Path) -> list[Command]:
    """The commands of `path`'s fenced blocks, in order, continuation lines joined and comments dropped."""
    out = []
    text = path.read_text(encoding="utf-8")
    for m in re.finditer(r"^```([a-z]*)\n(.*?)^```", text, re.S | re.M):
        lang, body = m.groups()
        first = text[:m.start()].count("\n") + 2
        lines = body.split("\n")
        i = 0
        while i < len(lines):
            start, line = i, lines[i]
            while line.endswith("\\") and i + 1 < len(lines):
                i += 1
                line = line[:-1] + " " + lines[i].strip()
            i += 1
            if lang in ("bash", "sh"):
                cmd = line.strip()
            elif line.startswith("$ "):
                cmd = line[2:].strip()
            else:
                continue
            shown = []
            if lang not in ("bash", "sh"):
                j = i
                while j < len(lines) and not lines[j].startswith(("$ ", "...")):
                    shown.append(lines[j])
                    j += 1
            cmd = re.sub(r"\s+#\s.*$", "", cmd).strip()     # a trailing comment
            if cmd and not cmd.startswith("#"):
                out.append(Command(path.relative_to(ROOT).as_posix(), first + start, cmd, first,
                                   [x.strip() for x in shown if x.strip()]))
    return out


ALL = [c for d in DOCS for c in doc_commands(d)]



def planner_argv(cmd: str) -> list[str] | None:
    """The arguments after `python -m planner`, optional [--flag VALUE] parts left out; None if the
    command is not the planner."""
    while (bare := re.sub(r"\[[^\[\]]*\]", "", cmd)) != cmd:       # innermost first: [--sample N [--seed S]]
        cmd = bare
    argv = shlex.split(cmd, comments=True)
    for prefix in PLANNER:
        if argv[:len(prefix)] == prefix:
            return argv[len(prefix):]
    return None


# the blocks that are synopses: a placeholder in any of their commands
SYNOPSES = {(c.doc, c.block) for c in ALL if PLACEHOLDERS & set(shlex.split(c.text, comments=True))}


def skip_reason(cmd: str) -> str | None:
    return next((why for start, why in SKIPPED.items() if cmd.startswith(start)), None)


def test_a_shown_line_is_compared_without_its_date():
    # the doc's day and any other day are the same line; a different figure is not (issue 31)
    doc = "  bytes per token      176   [measured on your run: 3 rows, 2026-12-03]"
    assert _same(doc) == _same("  bytes per token      176   [measured on your run: 3 rows, 2027-12-06]")
    assert _same(doc) != _same("  bytes per token      176   [measured on your run: 4 rows, 2026-12-03]")
    assert _same("eta 2026-12-03T10:00:00+00:00 done") == _same("eta 2031-01-01T23:59:59+00:00 done")
    assert _same("x0.015 per row 12.9 kB") == "x0.015 per row 12.9 kB"          # no number is taken for a date


def test_the_scan_reads_the_commands_the_docs_show():
    # a few commands known by reading the docs, so a broken reader cannot pass the test below
    texts = [c.text for c in ALL]
    assert "python3 scripts/run.py" in texts and "python3 scripts/test.py" in texts
    # a `$ ` line and its continuation
    assert any(c.doc == "docs/guide.md"
               and c.text.startswith(".venv/bin/python -m planner calibrate tests/fixtures/runs/specforge")
               and "--out calibration.json" in c.text for c in ALL)
    assert ".venv/bin/python -m planner components --json" in texts          # its comment dropped
    assert planner_argv(".venv/bin/python -m planner watch RUN_DIR [--every 60] --once") == ["watch", "RUN_DIR",
                                                                                             "--once"]
    assert planner_argv(".venv/bin/python -m planner profile x [--sample N [--seed S]] --strict  # c") == \
        ["profile", "x", "--strict"]
    assert planner_argv("python -m planner estimate") is None      # not the setup's interpreter: not run, so it fails
    assert len(ALL) > 30


def test_every_command_is_run_parsed_or_skipped_with_a_reason():
    unknown = [f"{c.doc}:{c.line}: {c.text}" for c in ALL
               if planner_argv(c.text) is None and not skip_reason(c.text) and not c.text.startswith(SHELL)]
    assert unknown == []


@pytest.mark.parametrize("doc", [d.relative_to(ROOT).as_posix() for d in DOCS
                                 if any(planner_argv(c.text) is not None for c in doc_commands(d))])
def test_the_commands_of_each_doc_run_as_written(doc, tmp_path, monkeypatch, capsys):
    shutil.copytree(ROOT / "tests" / "fixtures" / "runs", tmp_path / "tests" / "fixtures" / "runs")
    for p in (tmp_path / "tests").rglob("*"):
        os.utime(p, (FIXTURE_MTIME, FIXTURE_MTIME), follow_symlinks=False)
    monkeypatch.chdir(tmp_path)
    stale = []
    for c in (c for c in ALL if c.doc == doc):
        where = f"{c.doc}:{c.line}: {c.text}"
        if skip_reason(c.text):
            continue
        argv = planner_argv(c.text)
        if argv is None:
            r = subprocess.run(["bash", "-c", c.text], cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, (where, r.stdout[-500:], r.stderr[-500:])
            out = r.stdout + r.stderr
        elif (c.doc, c.block) in SYNOPSES:
            build_parser().parse_args(argv)                  # a synopsis: its flags, not a run
        else:
            capsys.readouterr()
            code = cli_main(argv)
            out, err = capsys.readouterr()
            assert code == 0, (where, err[-500:])
            out += err
        if argv is None or (c.doc, c.block) not in SYNOPSES:
            lines = {_same(x) for x in out.splitlines()}
            stale.extend(f"{where}\n    shows: {x}" for x in c.shown if _same(x) not in lines)
    assert stale == [], "\n".join(stale)


def test_the_setups_interpreter_runs_a_docs_command_verbatim():
    # the docs' commands above run in-process; here the first one runs as a reader types it, from the
    # repository root, with the interpreter and the entry point README.md's setup creates
    first = next(c for c in ALL if c.doc == "docs/guide.md" and planner_argv(c.text) == ["estimate"] and c.shown)
    for argv in (shlex.split(first.text), [".venv/bin/planner", "estimate"]):
        if not (ROOT / argv[0]).exists():
            pytest.skip(f"{argv[0]} is not here: scripts/run.py or scripts/test.py creates it")
        r = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr[-500:]
        assert {_same(x) for x in first.shown} <= {_same(x) for x in r.stdout.splitlines()}


def section_commands(title: str) -> list[list[str]]:
    """The `planner` commands of the first fenced block under `## title` of docs/guide.md."""
    text = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    body = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```[a-z]*\n(.*?)```", body, re.S).group(1)
    return [planner_argv(line) for line in block.splitlines() if planner_argv(line)]


def test_trim_export_run_example_runs_as_written(tmp_path, monkeypatch, capsys):
    cmds = section_commands("Trim to a budget, export, run")
    assert [c[0] for c in cmds] == ["trim", "estimate", "export", "materialize"]
    monkeypatch.chdir(tmp_path)
    outs = []
    for argv in cmds:
        capsys.readouterr()
        code = cli_main(argv)
        out, err = capsys.readouterr()
        assert code == 0, (argv, err)
        outs.append(out)
    budget = float(cmds[0][cmds[0].index("--budget-storage-tb") + 1])
    # the manifest restores the trimmed plan: its storage fits the budget (TB = 10^12 bytes)
    assert json.loads(outs[1])["storage_bytes_compressed"] <= budget * 1e12
    assert "data_generation_offline.py" in outs[2]
    assert {p.name for p in tmp_path.iterdir()} >= {"manifest.yaml", "mix.jsonl", "materialize_hub.py"}


def test_the_readme_headline_numbers_are_the_plans():
    # the default plan's figures as README.md's "The seed article, reproduced" states them, rounded as
    # written there: storage TB (10^12 B) to 0.1, extraction hours to 0.1, GPU-hours to 1, days to
    # 0.01, dollars to 1; then a month of network volume, and the plan without batch padding
    from planner import default_scenario, plan
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    m = re.search(r"It comes to \*\*([\d.]+) TB, ([\d.]+) h of extraction \(([\d,]+) GPU-hours\), ([\d.]+) days and "
                  r"\$([\d,]+) offline\*\*.*?network volume, \$([\d,]+)\); "
                  r"with `--capture-batch-size 1` \(no padding\) "
                  r"it is ([\d.]+) TB, ([\d.]+) h, ([\d.]+) days and \$([\d,]+)\.", text)
    assert m, "the headline sentence changed shape: update this test with it"
    s = default_scenario()

    def said(p) -> tuple[str, ...]:
        return (f"{p.storage_bytes_compressed / 1e12:.1f}", f"{p.extraction.wall_hours:.1f}",
                f"{p.wall_days_offline:.2f}",
                f"{p.cost_usd.total_offline:,.0f}")
    p = plan(s)
    assert (m[1], m[2], m[4], m[5]) == said(p) and m[3] == f"{p.extraction.gpu_hours:,.0f}"
    month = plan(s.with_changes(costs=s.costs.model_copy(update={"storage": "network-volume", "storage_months": 1})))
    assert m[6] == f"{month.cost_usd.total_offline:,.0f}"
    assert (m[7], m[8], m[9], m[10]) == said(plan(s.with_changes(capture_batch_size=1)))


# written on another branch of this round (issue 19's inputs work); drop the entry once it is merged
PENDING: set[str] = set()


def test_every_relative_link_of_the_docs_resolves():
    # the docs moved out of the README (issue 19): a link to a file or folder must still find it
    broken = []
    for d in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", d.read_text(encoding="utf-8")):
            path = target.split("#", 1)[0]
            found = (d.parent / path).resolve()
            if path and "://" not in path and not found.exists() and found.relative_to(ROOT).as_posix() not in PENDING:
                broken.append(f"{d.relative_to(ROOT)}: {target}")
    assert broken == []


def test_the_readmes_fidelity_table_is_the_benchs_output():
    # README's "How far to trust the figures" table is copied from bench/fidelity.py's first table:
    # recompute it (leave-one-source-out over the presets' published points, a few seconds) and find
    # it, line for line, in the README, so a change to a fit or a band cannot leave the README stale
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    import fidelity
    table = fidelity.area_markdown(fidelity.areas(fidelity.training_rows())).split("\n\n")[0].strip()
    assert table.count("\n") >= 7 and "| decode |" in table
    assert table in (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readmes_users_reports_table_is_the_benchs_output():
    # issue 34: README's users' reports table is bench/fidelity.py --users as printed; and none of those
    # reports' threads is a source of a fitted preset (the URL's repository and number appear in none)
    import re
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    import fidelity
    import yaml
    table = fidelity.users_markdown(fidelity.users_reports()) + "\n" + fidelity.spread_line()
    assert table.count("\n") >= 24 and "users' reports, MoE" in table and "leave one fit source out" in table
    assert table in (ROOT / "README.md").read_text(encoding="utf-8")
    fitted = "".join((ROOT / "planner" / "presets" / f).read_text(encoding="utf-8")
                     for f in ("harness.yaml", "quality.yaml", "serving.yaml", "tau_points.yaml"))
    # (the scored ones: the `fit` sources are cited by quality.yaml's drafter_spread, which is fitted on them)
    data = yaml.safe_load((ROOT / "bench" / "users_reports.yaml").read_text(encoding="utf-8"))
    for s in (data["sources"][k] for k in data["split"]["score"]):
        repo, number = re.match(r"https://github.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)$", s["url"]).groups()
        assert not re.search(rf"{re.escape(repo)}\S*\s*(?:issue|PR|pull request)?\s*#{number}\b", fitted), s["url"]


def test_the_readmes_users_disk_and_training_tables_are_the_benchs_output():
    # issue 33 item 7: README's users' training and disk tables are bench/fidelity.py --users as printed; the disk
    # table scores only sources that fit nothing (EAGLE #30 fits sharegpt_68k's length, SpecForge PR #37 the
    # training floor: both FIT), and a source cited by a fitted preset or the catalog is never SCORED
    import sys
    sys.path.insert(0, str(ROOT / "bench"))
    import fidelity
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert fidelity.training_users_markdown(fidelity.training_user_rows()) in readme
    rows = fidelity.disk_user_rows()
    table = fidelity.disk_users_markdown(rows)
    assert "users' disk reports:" in table and table in readme
    fitted = "".join((ROOT / p).read_text(encoding="utf-8") for p in (
        "planner/presets/training_throughput.yaml", "datasets_meta/components.yaml"))
    for r in rows:
        number = r["url"].rsplit("/", 1)[1]
        # a scored report's thread number is cited by no fitted preset; each FIT one is (EAGLE issue #30, PR #37)
        assert (f"#{number}" in fitted) == (r["fit_or_scored"] == "FIT"), r["url"]
    assert {r["id"] for r in rows if r["fit_or_scored"] == "FIT"} == {"eagle30-sharegpt68k",
                                                                      "specforge37-llama8b-sharegpt68k"}
