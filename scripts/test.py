"""Run the whole test suite: `python3 scripts/test.py [pytest args]` (installs what it needs on first use).

Browser tests drive Debian's chromium at /usr/bin/chromium; without it they are skipped locally
and fail under CI (CI=true), where .ci/run installs it. The tests run in one worker process per
core (pytest-xdist, `-n auto`); give `-n 0` (or any -n) to choose otherwise.
"""
from __future__ import annotations

import os
import sys

from _bootstrap import ROOT, ensure_env

if __name__ == "__main__":
    py = ensure_env("test")
    os.chdir(ROOT)
    args = sys.argv[1:]
    # loadgroup: the tests of one real cluster (xdist_group "slurm", "ray") share one worker, so the
    # cluster starts once
    workers = ([] if any(a == "-n" or a.startswith(("-n", "--numprocesses")) for a in args)
               else ["-n", "auto", "--dist", "loadgroup"])
    os.execv(str(py), [str(py), "-m", "pytest", "-q", *workers, *args])
