"""The old flat module paths (planner/_moved.py MOVED) import for one release with a
DeprecationWarning naming the old and the new path, attributed to the importing line, and give the
new module itself; no file of the repository uses an old path (scripts/rewrite_imports.py --check).

This file names old paths on purpose: it is the one file the check leaves out."""
from __future__ import annotations

import importlib
import subprocess
import sys
import warnings

import pytest

import planner
from planner import _moved
from tests.helpers import ROOT


def _fresh_import(old: str):
    """Import `old` as a first import would (the alias dropped from sys.modules and its parent)."""
    sys.modules.pop(old, None)
    parent, _, child = old.rpartition(".")
    if child in vars(sys.modules[parent]):
        delattr(sys.modules[parent], child)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = importlib.import_module(old)
    return module, caught


@pytest.mark.parametrize("old", [o for o in _moved.MOVED if o not in _moved.SHADOWED])
def test_an_old_path_warns_and_is_the_new_module(old):
    new = _moved.MOVED[old]
    module, caught = _fresh_import(old)
    assert module is importlib.import_module(new)
    assert module.__name__ == new and module.__spec__.name == new     # the new module, untouched
    ours = [w for w in caught if issubclass(w.category, DeprecationWarning) and str(w.message).startswith(old)]
    assert len(ours) == 1 and f"{old} moved to {new};" in str(ours[0].message)


def test_the_warning_points_at_the_importing_line():
    # each form of import, run as a script: the warning names the script's own line
    code = ("import warnings; warnings.simplefilter('always')\n"
            "import planner.storage\n"
            "from planner import trim\n"
            "from planner.phases import figures\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stderr.splitlines() if "DeprecationWarning" in x]
    assert [x.split(": DeprecationWarning")[0] for x in lines][:3] == ["<string>:2", "<string>:3", "<string>:4"], lines
    assert "planner.storage moved to planner.phases.stored_bytes" in lines[0]
    assert "planner.trim moved to planner.decisions.trim" in lines[1]
    assert "planner.phases.figures moved to planner.phases.compose.figures" in lines[2]


def test_the_same_module_object_and_planner_plan_stays_the_function():
    import planner.phases.stored_bytes as new
    old, caught = _fresh_import("planner.storage")
    assert [str(w.message).split(";")[0] for w in caught] == ["planner.storage moved to planner.phases.stored_bytes"]
    assert old is new and planner.storage is new
    # planner.plan is the function plan(); its old module is refused with the new path, and that
    # leaves planner.plan the function
    with pytest.raises(ModuleNotFoundError, match="the module moved to planner.planning"):
        importlib.import_module("planner.plan")
    assert callable(planner.plan) and planner.plan.__module__ == "planner.planning"


def test_the_scenario_package_re_exports_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        from planner.scenario import Scenario, default_scenario, seed_article_scenario
        from planner.scenario.model import Scenario as S
    assert Scenario is S and default_scenario().model_dump() == Scenario().model_dump()
    assert seed_article_scenario is importlib.import_module("planner.scenario.model").seed_article_scenario


@pytest.mark.parametrize("new", sorted({*_moved.MOVED.values(), *_moved.FACADES.values()}))
def test_every_new_path_imports(new):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert importlib.import_module(new).__name__ == new


def test_the_old_names_are_not_files_any_more_and_the_new_ones_are():
    for old, new in {**_moved.MOVED, **_moved.FACADES}.items():
        assert not (ROOT / (old.replace(".", "/") + ".py")).exists(), old
        assert (ROOT / (new.replace(".", "/") + ".py")).exists(), new


CHECKED = ["planner", "drafter_dashboard", "app.py", "tests", "bench", "scripts", "docs", "README.md", "pyproject.toml"]
# the table itself, the tool that reads it (its help names the old forms) and this file
LEFT_OUT = {"planner/_moved.py", "scripts/rewrite_imports.py", "tests/unit/planner/test_moved.py"}


def _check(paths: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "scripts/rewrite_imports.py", "--check", *paths], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


def test_no_file_of_the_repository_uses_an_old_path():
    files = subprocess.run(["git", "ls-files", *CHECKED], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    files = [f for f in files if f not in LEFT_OUT and f.rsplit(".", 1)[-1] in ("py", "md", "toml", "txt", "cfg",
                                                                                 "ini", "yaml", "sh")]
    assert len(files) > 200
    r = _check(files)
    assert r.returncode == 0, r.stdout


def test_the_check_fails_on_an_old_path_and_the_rewrite_fixes_it(tmp_path):
    f = tmp_path / "script.py"
    f.write_text("from planner import storage, plan\nfrom planner.phases import figures, padding\n"
                 "import planner.trim\nx = planner.trim.trim\nfrom planner.plan import Plan\n"
                 "p = planner.plan(None)\nm = 'planner.storage_phase.resolved_mix'  # planner/output.py\n")
    r = _check([str(f)])
    assert r.returncode == 1 and "script.py: uses old planner paths" in r.stdout
    subprocess.run([sys.executable, "scripts/rewrite_imports.py", str(f)], cwd=ROOT, check=True, timeout=120)
    assert f.read_text() == (
        "from planner.phases import stored_bytes as storage\nfrom planner import plan\n"
        "from planner.phases.compose import figures\nfrom planner.phases import padding\n"
        "import planner.decisions.trim\nx = planner.decisions.trim.trim\nfrom planner.planning import Plan\n"
        "p = planner.plan(None)\nm = 'planner.phases.mix_storage.resolved_mix'  # planner/export/plan_json.py\n")
    assert _check([str(f)]).returncode == 0
