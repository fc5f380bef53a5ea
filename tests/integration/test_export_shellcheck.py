"""Every script an export writes passes shellcheck (issue 36, item 9: the Model-Optimizer Slurm script
set SHARD and never read it, SC2034): the shell formats' commands, each sharded format's per-rank
commands and Slurm array script (all ranks and a resume), and the commands the Ray driver runs (its
--dry-run prints them, shell-quoted), for a plain manifest and for hostile values.

shellcheck comes from Debian (apt-get install shellcheck); without it these tests skip, except under
CI, where .ci/run installs it and its absence is a failure (as with the browser tests' chromium)."""
import contextlib
import io
import os
import runpy
import shutil
import subprocess
import sys

import pytest

from planner.export import sharding, slurm
from planner.export.commands import EXPORT_FORMATS
from planner.export.manifest import build_manifest
from planner.export.ray_driver import ray_driver
from planner.scenario import Scenario
from tests.unit.planner.export.test_commands import HOSTILE, hostile_manifest

WORLD = 3


@pytest.fixture(scope="module")
def shellcheck() -> str:
    found = shutil.which("shellcheck")
    if found is None:
        if os.environ.get("CI"):
            raise RuntimeError("shellcheck is missing under CI: .ci/run must install Debian's shellcheck")
        pytest.skip("shellcheck not installed (apt-get install shellcheck); the exported scripts are not checked")
    return found


def _ray_commands(m, fmt, world, path, ranks, tmp_path) -> str:
    """The commands the Ray driver runs, as its --dry-run prints them ("rank R would run: CMD"), one a
    line (the driver run here as `python DRIVER --dry-run` would run it, without a second interpreter)."""
    driver = tmp_path / f"ray-{fmt}.py"
    driver.write_text(ray_driver(m, fmt, world, path, ranks))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", [str(driver), "--dry-run"])
        try:
            runpy.run_path(str(driver), run_name="__main__")
        except SystemExit as exc:
            assert exc.code in (0, None)
    cmds = [line.split(" would run: ", 1)[1] for line in printed.getvalue().splitlines()]
    assert len(cmds) >= len(ranks or range(world))
    return "#!/bin/bash\n" + "\n".join(cmds) + "\n"


def exported(m, path: str, tmp_path) -> dict[str, str]:
    """Every script of manifest `m`, by a name that says which: each shell format's commands, and for
    each sharded format its ranks' commands, its Slurm script (all ranks, and a resume of ranks 0 and 2)
    and its Ray driver's commands."""
    out = {f"commands-{f}.sh": e.render(m, path) for f, e in EXPORT_FORMATS.items() if e.kind == "shell"}
    for f in sharding.SHARDED_FORMATS:
        out[f"ranks-{f}.sh"] = slurm.rank_commands(m, f, WORLD, path)
        for ranks in (None, [0, 2]):
            tag = "resume" if ranks else "all"
            out[f"slurm-{f}-{tag}.sh"] = slurm.slurm_script(m, f, WORLD, path, ranks)
            out[f"ray-{f}-{tag}.sh"] = _ray_commands(m, f, WORLD, path, ranks, tmp_path)
    return out


def check(shellcheck, scripts: dict[str, str], folder, *flags: str) -> str:
    """shellcheck's findings over every script (one run; gcc format: file:line:col: level: message [SCnnnn])."""
    folder.mkdir()
    for name, text in scripts.items():
        (folder / name).write_text(text)
    r = subprocess.run([shellcheck, "--norc", "--shell=bash", "--format=gcc", *flags, *sorted(scripts)], cwd=folder,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode in (0, 1), r.stderr          # 1: findings; anything else: shellcheck itself failed
    return r.stdout


def test_every_exported_script_passes_shellcheck(shellcheck, tmp_path):
    scripts = exported(build_manifest(Scenario()), "manifest.yaml", tmp_path)
    # 5 shell formats; 3 sharded formats x (ranks + 2 Slurm + 2 Ray)
    assert len(scripts) == len([e for e in EXPORT_FORMATS.values() if e.kind == "shell"]) + 5 * 3
    assert check(shellcheck, scripts, tmp_path / "scripts") == ""


def test_hostile_values_pass_shellcheck(shellcheck, tmp_path, monkeypatch):
    # values with quotes, $( ), backticks, newlines and control characters, each quoted as one word
    # (its scenario does not plan, which a sharded export refuses: bytes a row, to test the quoting)
    monkeypatch.setattr(sharding, "bytes_per_row", lambda m, layout, catalog=None: [1000] * len(m.components))
    scripts = {}
    for i, value in enumerate(HOSTILE + ["safe\u202etxt.exe\u2066x\u2028y"]):       # and bidi controls
        work = tmp_path / f"v{i}"
        work.mkdir()
        scripts |= {f"v{i}-{k}": v for k, v in exported(hostile_manifest(value), f"{value}.yaml", work).items()}
    # SC2016 (a note: "$(...)" inside single quotes does not expand) is what quoting a hostile value is
    # for: '$(echo > PWNED)' is the literal text; every other finding stands
    assert check(shellcheck, scripts, tmp_path / "scripts", "--exclude=SC2016") == ""
    # a bidi control is written as its bytes ($'\xe2\x80\xae'), the Ray driver's own copy of quote() too
    assert [k for k, v in scripts.items() if any(c in v for c in "\u202e\u2066\u2028")] == []
