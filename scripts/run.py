"""Start the dashboard: `python3 scripts/run.py [--port 8501]` (installs what the dashboard needs on first use).

`--port N` (or `--port=N`) picks the port; any other argument goes to `streamlit run` as it is
(e.g. `--server.address 0.0.0.0`)."""
from __future__ import annotations

import os
import sys

from _bootstrap import ROOT, ensure_env


def streamlit_args(argv: list[str]) -> list[str]:
    """`argv` with `--port N` / `--port=N` as streamlit's `--server.port N`; a port that is not a
    whole number from 1 to 65535 stops here with one line."""
    out, i = [], 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--port" or arg.startswith("--port="):
            if arg == "--port":
                if i + 1 >= len(argv):
                    sys.exit("run.py: --port needs a number, e.g. --port 8502")
                value, i = argv[i + 1], i + 2
            else:
                value, i = arg.partition("=")[2], i + 1
            if not (value.isdigit() and len(value) <= 5 and 1 <= int(value) <= 65535):
                sys.exit(f"run.py: --port {value[:20]!r} is not a port (a whole number from 1 to 65535)")
            out += ["--server.port", str(int(value))]
        else:
            out.append(arg)
            i += 1
    return out


if __name__ == "__main__":
    extra = streamlit_args(sys.argv[1:])
    py = ensure_env()   # the runtime dependencies only: the test tools wait for scripts/test.py
    args = [str(py), "-m", "streamlit", "run", str(ROOT / "app.py"),
            "--server.headless", "true", "--browser.gatherUsageStats", "false", *extra]
    os.chdir(ROOT)
    os.execv(str(py), args)
