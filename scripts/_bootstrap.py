"""Create the project's virtual environment on first use and keep it in step with pyproject.toml.

Only the standard library is used here, so that `python3 scripts/run.py` and
`python3 scripts/test.py` work on a machine that has nothing but Python 3.11+.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_env(extras: str = "test") -> Path:
    """Return the venv's python, (re)installing the project when pyproject.toml changed."""
    if sys.version_info < (3, 11):
        sys.exit(f"Python 3.11+ is needed, this is {sys.version.split()[0]}")
    py = venv_python()
    if not py.exists():
        print(f"[setup] creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{extras}-{digest}"
    if not stamp.exists():
        print("[setup] installing the project and its pinned dependencies (first run only)", flush=True)
        subprocess.check_call([str(py), "-m", "pip", "install", "-q", "--upgrade", "pip"])
        subprocess.check_call([str(py), "-m", "pip", "install", "-q", "-e", f"{ROOT}[{extras}]"])
        for old in VENV.glob(f".installed-{extras}-*"):
            old.unlink()
        stamp.touch()
    return py
