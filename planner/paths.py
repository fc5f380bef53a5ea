"""Where the planner keeps what it builds: PLANNER_HOME (default <repo>/.planner)."""
from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHIPPED_CATALOG = REPO / "datasets_meta" / "components.yaml"


def planner_home() -> Path:
    home = Path(os.environ.get("PLANNER_HOME") or (REPO / ".planner"))
    home.mkdir(parents=True, exist_ok=True)
    return home


def user_catalog_path() -> Path:
    """Profiled (measured) components live here, never in the shipped catalog."""
    return planner_home() / "user_catalog.json"
