import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _isolated_home(tmp_path_factory):
    """Every test session builds its own catalog and user catalog under a temp PLANNER_HOME."""
    home = tmp_path_factory.mktemp("planner_home")
    old = os.environ.get("PLANNER_HOME")
    os.environ["PLANNER_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("PLANNER_HOME", None)
    else:
        os.environ["PLANNER_HOME"] = old
