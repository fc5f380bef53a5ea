"""Start the dashboard: `python3 scripts/run.py [--port 8501]` (installs what it needs on first use)."""
from __future__ import annotations

import os
import sys

from _bootstrap import ROOT, ensure_env

if __name__ == "__main__":
    py = ensure_env("test")
    args = [str(py), "-m", "streamlit", "run", str(ROOT / "app.py"),
            "--server.headless", "true", "--browser.gatherUsageStats", "false", *sys.argv[1:]]
    os.chdir(ROOT)
    os.execv(str(py), args)
