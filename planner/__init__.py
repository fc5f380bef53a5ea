"""drafter data planner: what a speculative-decoding drafter's training data will cost.

The package never imports streamlit: the dashboard, the CLI and the tests all call `plan()`.
Importing the package loads nothing but its version: `plan`, `Plan`, `Scenario` and the rest load on
first use, so `planner --help` does not import the model (or DuckDB) it does not run.
"""
from __future__ import annotations

import importlib
import sys
import types

from planner._version import __version__

# the public names and the module holding each, imported on first access
_PUBLIC = {"Plan": "planner.plan", "plan": "planner.plan", "PlannerInputError": "planner.errors",
           "Scenario": "planner.scenario", "default_scenario": "planner.scenario",
           "seed_article_scenario": "planner.scenario"}
__all__ = [*_PUBLIC, "__version__"]


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


class _Package(types.ModuleType):
    """`planner.plan` is the function plan(), as it always was, though planner/plan.py is also a
    submodule: importing that submodule sets the package's attribute `plan` to the module, which this
    property ignores (the submodule stays in sys.modules)."""

    @property
    def plan(self):
        return importlib.import_module("planner.plan").plan

    @plan.setter
    def plan(self, value) -> None:
        pass


sys.modules[__name__].__class__ = _Package
