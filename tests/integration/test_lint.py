"""ruff passes on the tree (issue 32 item 6), so `python3 scripts/test.py` catches a finding before CI does; .ci/run
runs ruff and mypy itself (mypy is left to CI: it takes about a minute). The second test holds the configuration to
its rules: a file with one finding of each kind the tree was cleaned of is reported under the project's settings
(a config that selected nothing would pass the first test on any tree)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    # the venv's ruff (the test extra pins it), run as a module so no PATH is needed
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_ruff_passes_on_the_tree():
    r = _ruff("check", "--no-cache", ".")
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]


def test_the_configuration_reports_each_rule(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import sys\n"
        "import os\n"                                            # I001: os before sys
        "\n"
        "\n"
        "def f(a, b):\n"
        "    try:\n"
        "        return sum(x * y for x, y in zip(a, b))\n"        # B905: zip without strict
        "    except TypeError:\n"
        "        raise ValueError('not numbers')\n"               # B904: raise without from
        "\n"
        "\n"
        f"X = {'1 + ' * 40}1\n"                                  # E501: 4 + 160 characters
        "print(os.sep, sys.argv)\n", encoding="utf-8")
    r = _ruff("check", "--no-cache", "--config", str(ROOT / "pyproject.toml"), "--output-format", "json", str(bad))
    codes = sorted({d["code"] for d in json.loads(r.stdout)})
    assert r.returncode == 1 and codes == ["B904", "B905", "E501", "I001"], (codes, r.stderr)
