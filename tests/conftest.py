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
