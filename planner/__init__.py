"""drafter data planner: what a speculative-decoding drafter's training data will cost.

The package never imports streamlit: the dashboard, the CLI and the tests all call `plan()`.
Importing the package loads nothing but its version: `plan`, `Plan`, `Scenario` and the rest load on
first use, so `planner --help` does not import the model (or DuckDB) it does not run.
"""
from __future__ import annotations

import importlib

from planner import _moved as moved
from planner._version import __version__

# the public names and the module holding each, imported on first access
_PUBLIC = {"Plan": "planner.planning", "plan": "planner.planning", "PlannerInputError": "planner.errors",
           "Scenario": "planner.scenario.model", "default_scenario": "planner.scenario.model",
           "seed_article_scenario": "planner.scenario.model"}
__all__ = [*_PUBLIC, "__version__"]


def __getattr__(name: str):
    if name in _PUBLIC:
        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


moved.install()
