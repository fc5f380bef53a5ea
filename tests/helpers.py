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


def assumed(**kw) -> dict:
    """The Assumptions rows, by name, of a small plan without the catalog: 10 samples of 1,000 tokens (500 of
    them the response) of Qwen3-8B, extracted on H100 SXM; `kw` sets or overrides the Scenario's fields."""
    from planner import Scenario, plan
    from planner.scenario import UniformMix
    base = dict(uniform=UniformMix(samples=10, tokens=1000, response_tokens=500), max_seq_len=None,
                model="qwen3-8b", extraction_gpu="h100-sxm")
    return {a.name: a for a in plan(Scenario(**{**base, **kw})).assumptions}


def efficiency_presets() -> dict:
    """planner/presets/hardware.yaml's efficiency table, read from the file (not through the planner), for the
    Assumptions rows' tests to check each row's value and source against."""
    from pathlib import Path

    import yaml
    path = Path(__file__).resolve().parents[1] / "planner" / "presets" / "hardware.yaml"
    return yaml.safe_load(path.read_text(encoding="utf-8"))["efficiency"]


def mine_manifest(tmp_path: Path, monkeypatch, **scenario) -> Path:
    """A manifest of 3 rows ('first' selection) of a 5-record component 'mine' profiled into a throw-away planner
    home under `tmp_path`; `scenario` sets the Scenario's other fields."""
    import json

    from planner.catalog.profile import profile_file
    from planner.export.manifest import build_manifest, dump_manifest
    from planner.scenario import Scenario
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    data = tmp_path / "mine.jsonl"
    data.write_text("".join(json.dumps({"instruction": f"q{i}", "output": "a"}) + "\n" for i in range(5)))
    profile_file(data, "mine")
    path = tmp_path / "m.yaml"
    path.write_text(dump_manifest(build_manifest(Scenario(mix=[{"id": "mine", "rows": 3, "selection": "first"}],
                                                          **scenario))))
    return path
