"""Where each module of the flat planner/ went when the package was split into one package per
concern (issue 32 item 4), written once: scripts/rewrite_imports.py reads this table to rewrite
imports, and the finder below keeps each old dotted name importing for one release.

An old name imports with a DeprecationWarning naming the old and the new path, attributed to the
line that imports it, and gives the new module itself (`planner.storage is
planner.phases.stored_bytes`): no copy, so state and monkeypatching are shared. planner.plan is
the exception (SHADOWED): that name is the function plan().

FACADES are old modules whose name is now a package: `planner.scenario` re-exports the public
names of planner.scenario.model (no warning); `planner.phases` answers the names of
planner.phases.compose with a warning (planner/phases/__init__.py)."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from pathlib import Path

MOVED = {
    "planner.inputs": "planner.scenario.inputs",
    "planner.quality_csv": "planner.scenario.quality_csv",
    "planner.specs": "planner.presets.specs",
    "planner.layouts": "planner.presets.layouts",
    "planner.drafter": "planner.presets.drafter_kinds",
    "planner.storage": "planner.phases.stored_bytes",
    "planner.storage_phase": "planner.phases.mix_storage",
    "planner.calibration": "planner.phases.throughput_calibration",
    "planner.padding": "planner.phases.padding",
    "planner.extraction": "planner.phases.extraction",
    "planner.nodes": "planner.phases.nodes",
    "planner.transfer": "planner.phases.transfer",
    "planner.training": "planner.phases.training",
    "planner.costs": "planner.phases.costs",
    "planner.serving": "planner.phases.serving",
    "planner.quality": "planner.phases.quality",
    "planner.harness": "planner.phases.harness",
    "planner.assumptions": "planner.phases.assumptions",
    "planner.verdict": "planner.decisions.verdict",
    "planner.trim": "planner.decisions.trim",
    "planner.sensitivity": "planner.decisions.sensitivity",
    "planner.unblock": "planner.decisions.unblock",
    "planner.headlines": "planner.decisions.headlines",
    "planner.rundir": "planner.runs.rundir",
    "planner.run_formats": "planner.runs.formats",
    "planner.run_calibration": "planner.runs.calibration",
    "planner.runstatus": "planner.runs.status",
    "planner.preflight": "planner.runs.preflight",
    "planner.report": "planner.export.report",
    "planner.output": "planner.export.plan_json",
    "planner.plan": "planner.planning",
}
# an old module whose name is now the package's public function (`planner.plan` is plan()): importing
# it as a module would rebind planner.plan to the module, so it is refused with its new path
SHADOWED = ("planner.plan",)
FACADES = {"planner.scenario": "planner.scenario.model", "planner.phases": "planner.phases.compose"}


def message(old: str, new: str) -> str:
    # starts with "planner." so pyproject's filterwarnings can make it an error in the tests
    return (f"{old} moved to {new}; import {new} (the old path goes in the next release; "
            f"scripts/rewrite_imports.py rewrites it)")


def stacklevel() -> int:
    """warnings.warn's stacklevel for the line that imports an old name, counted from the caller of
    warn(): the import machinery's frames are skipped by warnings itself, this file's and
    planner/phases/__init__.py's are counted here."""
    own = {__file__, str(Path(__file__).with_name("phases") / "__init__.py")}
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and (frame := frame.f_back) is not None:
        name = frame.f_code.co_filename
        if "importlib" in name and "_bootstrap" in name:
            continue
        level += 1
        if name not in own:
            break
    return level


class _Alias(importlib.abc.Loader):
    """Loads an old name as the new module object (its own __spec__ left as the new module's)."""

    def __init__(self, new: str) -> None:
        self.new = new

    def create_module(self, spec):
        module = importlib.import_module(self.new)
        self.spec = module.__spec__
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = self.spec       # the import system set it to the old name's spec


class MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        if fullname in SHADOWED:
            raise ModuleNotFoundError(f"{fullname} is the function plan() now; the module moved to {new}: "
                                      f"import {new}", name=fullname)
        warnings.warn(message(fullname, new), DeprecationWarning, stacklevel=stacklevel())
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MovedFinder())
