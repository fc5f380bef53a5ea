"""README.md's "Trim to a budget, export, run" commands, run as written (in-process through the
CLI's main(), in a temporary directory), so the example cannot go stale again: its 10 TB budget
was under the 10.02 TB that protecting the tool-calling components alone needs (issue 19)."""
from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from planner.cli.main import main as cli_main

README = Path(__file__).resolve().parent.parent / "README.md"
PREFIX = [".venv/bin/python", "-m", "planner"]


def section_commands(title: str) -> list[list[str]]:
    """The `planner` commands of the first fenced block under `## title`, as argv lists: comments
    dropped, optional [--flag VALUE] parts left out."""
    text = README.read_text(encoding="utf-8")
    body = text.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```[a-z]*\n(.*?)```", body, re.S).group(1)
    out = []
    for line in block.splitlines():
        argv = shlex.split(re.sub(r"\[[^\]]*\]", "", line), comments=True)
        if argv:
            assert argv[:3] == PREFIX, line
            out.append(argv[3:])
    return out


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
