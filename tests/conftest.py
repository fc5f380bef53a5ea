import os
import sys

import pytest


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


@pytest.fixture(autouse=True)
def _keep_the_main_module():
    """AppTest.from_function runs its script as __main__ and leaves it there; a process pool started
    later (profiling with --workers, forkserver) would re-run that deleted script in each child and die.
    Each test gets back the __main__ it started with."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


_EXIT = {}


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _EXIT["status"] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    """End the test process right after pytest's own summary, so that the summary stays the last
    line: at interpreter teardown DuckDB's bindings print a list of objects still alive (harmless,
    but it buries the result). Skipped when pytest runs inside another process (pytester)."""
    if "status" in _EXIT and os.environ.get("PLANNER_TEST_NO_FAST_EXIT") is None:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(_EXIT["status"])


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """--dist loadgroup (scripts/test.py) for the pytest this project pins: xdist 3.8.0 names a test's
    group by setting `item._nodeid` (xdist/remote.py), which pytest 9 no longer reads (a node's id is
    `item._id`, a NodeId), so the group was lost and each xdist worker that drew a Ray or Slurm test
    started its own cluster. On a worker (xdist sets `loadgroup` there), a test marked xdist_group whose
    id lacks the '@group' suffix gets it, as xdist means to; a no-op once xdist's own suffix works."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                         for m in item.iter_markers("xdist_group")})
        suffix = "@" + "_".join(groups)
        if groups and not item.nodeid.endswith(suffix) and hasattr(item, "_id"):
            from _pytest.nodeid import NodeId  # pytest 9's structured id (private: only where xdist's fails)
            item._id = NodeId.parse(item.nodeid + suffix)


@pytest.fixture(autouse=True)
def _sidebar_sections_open(monkeypatch):
    """AppTest wiring tests reach every sidebar control, so the page they run opens every collapsed
    section (drafter_dashboard.sidebar.SECTIONS, built only while open). tests/app/test_lazy_sections.py
    starts them closed to check that a control not built keeps its value."""
    from streamlit.testing.v1 import AppTest
    real = AppTest.from_file.__func__

    def from_file(cls, *a, **k):
        app = real(cls, *a, **k)
        if getattr(cls, "open_sections", True):
            from drafter_dashboard.sidebar import SECTIONS
            for key in SECTIONS.values():
                app.session_state[key] = True
        return app
    monkeypatch.setattr(AppTest, "from_file", classmethod(from_file))
