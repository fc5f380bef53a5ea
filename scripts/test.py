"""Run the whole test suite: `python3 scripts/test.py [pytest args]` (installs what it needs on first use).

Browser tests drive Debian's chromium at /usr/bin/chromium; without it they are skipped locally
and fail under CI (CI=true), where .ci/run installs it.
"""
from __future__ import annotations

import os
import sys

from _bootstrap import ROOT, ensure_env

if __name__ == "__main__":
    py = ensure_env("test")
    os.chdir(ROOT)
    os.execv(str(py), [str(py), "-m", "pytest", "-q", *sys.argv[1:]])
