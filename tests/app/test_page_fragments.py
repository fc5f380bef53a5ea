"""The page's tab fragments (drafter_dashboard/page.py, issue 23) in AppTest, no browser: an
unexpected error inside a tab is the page's one-line message, and the headline metrics and the other
tabs are still drawn (the browser side is tests/test_page_speed_fragments.py)."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.helpers import ROOT

APP = str(ROOT / "app.py")


def test_an_error_inside_a_tab_fragment_is_one_line_and_the_rest_of_the_page_is_drawn(tmp_path, monkeypatch):
    import drafter_dashboard.budget

    def broken(*args, **kwargs):
        raise RuntimeError("/srv/secret/path/to/budget.py went wrong")
    monkeypatch.setattr(drafter_dashboard.budget, "render", broken)
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    app = AppTest.from_file(APP, default_timeout=90)
    app.run()
    app.session_state["w_tab"] = "Budget"          # a closed tab draws nothing: open the broken one
    app.run()
    assert not app.exception, app.exception
    # (the default mix's blocking finding is an error banner too: its 82 TB over one node's disk)
    errors = [e.value for e in app.error if "went wrong" in e.value]
    assert len(errors) == 1 and "RuntimeError" in errors[0] and "/srv/secret" not in errors[0]
    labels = {m.label.split(" (")[0] for m in app.metric}
    assert {"Samples", "Stored tokens", "Extraction"} <= labels          # the headline is drawn
    assert app.number_input(key="w_ex_gpus").value == 8                  # so is the sidebar
    # and the page goes on after the broken tab: a change still reaches the link, written after the tabs
    from planner.export.share import decode
    app.number_input(key="w_ex_gpus").set_value(24).run()
    assert not app.exception, app.exception
    assert decode(app.query_params["s"]).extraction_gpus == 24
