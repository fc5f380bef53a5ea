"""Tests mirror the package (docs/architecture.md, issue 32 item 7): planner/<pkg>/<module>.py is tested in
tests/unit/planner/<pkg>/test_<module>.py, or, for a module whose tests are many, in several files
test_<module>_<aspect>.py (a leading underscore of the module is dropped: cli/_common.py -> test_common.py).

Two ways to fail: a planner module with no mirror file that is in neither list below, and a file under
tests/unit/planner/ that names no module of its folder's package (stale after a rename or a move: tests
of several modules together belong in tests/integration/)."""
from __future__ import annotations

from pathlib import Path

from tests.helpers import ROOT

PACKAGE = ROOT / "planner"
UNIT = ROOT / "tests" / "unit" / "planner"

# Modules with nothing to test on their own (each says why). Only trivial modules belong here.
EXEMPT = {
    "planner/__main__.py": "two lines: `python -m planner` calls planner.cli.main.main (tested in cli/test_main.py)",
    "planner/_version.py": "one constant, the version string (tests/integration/test_packaging.py reads it)",
}

# Modules not yet mirrored: empty since every planner module got its mirror file (issue 32 item 7). Kept so a
# module moved in a hurry can be listed with a reason; one listed that has a mirror file fails the test below.
PENDING: set[str] = set()        # empty: every module has its mirror file (issue 32 item 7 done)


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py")


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def _name(module: Path) -> str:
    return module.stem.lstrip("_")


def names_module(test_stem: str, module_name: str) -> bool:
    """test_<module> or test_<module>_<aspect>."""
    rest = test_stem.removeprefix("test_")
    return rest == module_name or rest.startswith(module_name + "_")


def mirror_files(module: Path) -> list[Path]:
    folder = UNIT / module.parent.relative_to(PACKAGE)
    return [t for t in sorted(folder.glob("test_*.py")) if names_module(t.stem, _name(module))]


def test_names_module_is_exact_or_an_aspect():
    assert names_module("test_trim", "trim")
    assert names_module("test_trim_quality", "trim")
    assert not names_module("test_trimmed", "trim")
    assert not names_module("test_node_plan", "nodes")


def test_every_planner_module_has_a_mirror_file():
    missing = [_rel(m) for m in modules()
               if not mirror_files(m) and _rel(m) not in EXEMPT and _rel(m) not in PENDING]
    assert not missing, ("planner modules with no tests/unit/planner/<pkg>/test_<module>[_<aspect>].py: "
                         f"{missing}")


def test_the_lists_name_modules_that_exist_and_pending_only_shrinks():
    known = {_rel(m) for m in modules()}
    assert not (set(EXEMPT) | PENDING) - known, "EXEMPT/PENDING name a module that no longer exists"
    assert not set(EXEMPT) & PENDING
    mirrored = sorted(m for m in PENDING if mirror_files(ROOT / m))
    assert not mirrored, f"now mirrored: take them out of PENDING: {mirrored}"


def test_every_unit_test_file_names_a_module_of_its_package():
    stale = []
    for test in sorted(UNIT.rglob("test_*.py")):
        package = PACKAGE / test.parent.relative_to(UNIT)
        names = {_name(m) for m in package.glob("*.py") if m.name != "__init__.py"} if package.is_dir() else set()
        if not any(names_module(test.stem, n) for n in names):
            stale.append(_rel(test))
    assert not stale, f"test files that name no module of their package (stale after a rename?): {stale}"
