"""The phases of a plan, one module each (stored_bytes, mix_storage, padding, extraction, nodes,
transfer, training, costs, serving, quality, harness, throughput_calibration), each with its own rows of the
Assumptions table; assumption_rows (what those rows share) and assumptions (the table gathered in order); and
compose.py, which resolves the presets and runs them in order.

planner/phases/compose.py was the module compose.py is now: its names still answer here for one release,
with a DeprecationWarning (import them from planner.phases.compose)."""
from __future__ import annotations

import importlib
import warnings


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    from planner import _moved
    compose = importlib.import_module("planner.phases.compose")
    if not hasattr(compose, name):
        raise AttributeError(f"module 'planner.phases.compose' has no attribute {name!r}")
    warnings.warn(_moved.message(f"planner.phases.{name}", f"planner.phases.compose.{name}"),
                  DeprecationWarning, stacklevel=_moved.stacklevel())
    return getattr(compose, name)
