"""Create the project's virtual environment on first use and keep it in step with pyproject.toml.

Only the standard library is used here, so that `python3 scripts/run.py` and
`python3 scripts/test.py` work on a machine that has nothing but Python 3.11+.

`scripts/run.py` installs only what the dashboard needs (the runtime dependencies); the test tools
(pytest, Playwright, Ray, datasets: the `test` extra) wait for `scripts/test.py` (issue 35 item 13:
they took about half of the first run). The test extra holds the runtime dependencies too, so a venv
set up by test.py serves run.py without another install. Each step prints one `[setup i/n]` line.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
RUNTIME = "runtime"      # the stamp's name for the dashboard's install (the runtime and the profile extra)
# the exact set the tests ran with (pip freeze of the venv, the project left out): every install is
# constrained to it, so a fresh clone and CI get what was tested; pyproject.toml keeps the ranges
LOCK = ROOT / "requirements.lock"


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _stamp(extras: str, digest: str) -> Path:
    return VENV / f".installed-{extras}-{digest}"


def install_steps(py: Path, extras: str) -> list[tuple[str, list[str]]]:
    """The pip commands of a first install, each with its progress line, constrained to requirements.lock.
    The dashboard's install takes the `profile` extra too (the tokenizers: profiling your own data on
    the page). No pip upgrade (the venv's own pip installs an editable PEP 660 project) and no
    byte-compiling of every installed file (`--no-compile`: Python compiles what it imports, on first import)."""
    target = f"{ROOT}[profile]" if extras == RUNTIME else f"{ROOT}[{extras}]"
    what = ("the dashboard's runtime dependencies and the project (the test tools wait for scripts/test.py)"
            if extras == RUNTIME else f"the project with its {extras!r} extra")
    return [(f"installing {what}", [str(py), "-m", "pip", "install", "-q", "--no-compile", "-c", str(LOCK),
                                    "-e", target])]


def digest() -> str:
    """What an install depends on: pyproject.toml and the lock; a change to either installs again."""
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + LOCK.read_bytes()).hexdigest()[:16]


def ensure_env(extras: str = RUNTIME) -> Path:
    """Return the venv's python, (re)installing the project when pyproject.toml changed. `extras` is
    RUNTIME (what the dashboard needs) or an extra of pyproject.toml ("test")."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11+ is needed, this is {sys.version.split()[0]}")
    py = venv_python()
    stamp = digest()
    # the test extra includes the runtime dependencies: its stamp serves a runtime request
    wanted = [_stamp(extras, stamp)] + ([_stamp("test", stamp)] if extras == RUNTIME else [])
    if py.exists() and any(s.exists() for s in wanted):
        return py
    steps = ([] if py.exists() else [(f"creating the virtual environment {VENV}", None)])
    steps += install_steps(py, extras)
    start = time.monotonic()
    for i, (line, cmd) in enumerate(steps, 1):
        print(f"[setup {i}/{len(steps)}] {line} (first run only)", flush=True)
        if cmd is None:
            venv.EnvBuilder(with_pip=True).create(VENV)
        elif subprocess.call(cmd) != 0:
            sys.exit(f"[setup {i}/{len(steps)}] failed: {' '.join(cmd)} (run it by hand to see why)")
    for old in VENV.glob(f".installed-{extras}-*"):
        old.unlink()
    _stamp(extras, stamp).touch()
    print(f"[setup] done in {time.monotonic() - start:.0f} s", flush=True)
    return py
