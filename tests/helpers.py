import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True,
                          cwd=ROOT, env=full_env, timeout=timeout)


def page_errors(app) -> list[str]:
    """The error messages on the page other than the plan's blocking findings (the banner above the
    metrics names each with its fix: 'To fix: ...')."""
    return [e.value for e in app.error if "To fix" not in e.value]
