"""Issue 20, the page (AppTest wiring): undo that holds (apply, import and preset are one step each, in
a fresh session too, and the history survives a reload), the exports of every pipeline, the nodes,
compare's input differences and the delta modes."""
import pytest
from streamlit.testing.v1 import AppTest

from planner import default_scenario
from planner.export.manifest import build_manifest, dump_manifest

from tests.test_app import APP, at, metric, open_tab  # noqa: F401 (the fixture)


def _rows(app) -> dict:
    return {m["id"]: m["rows"] for m in app.session_state["mix_rows"]}


def test_undo_after_apply_in_a_fresh_session_restores_the_mix(at):
    before = _rows(at)
    assert at.button(key="w_undo").disabled            # nothing to undo yet
    at.number_input(key="w_b_storage").set_value(10.0).run()
    at.button(key="w_b_trim").click().run()
    at.button(key="w_b_apply").click().run()
    assert _rows(at) != before and not at.button(key="w_undo").disabled
    at.button(key="w_undo").click().run()
    assert _rows(at) == before
    at.button(key="w_redo").click().run()              # and redo brings the applied mix back
    assert _rows(at) != before


def test_a_preset_is_one_step_and_undo_goes_back_to_the_scenario_before_it(at):
    # the case: 4 GPUs -> load a preset -> Undo gave 8 (the step before the preset was skipped)
    at.number_input(key="w_ex_gpus").set_value(4).run()
    at.selectbox(key="w_preset_pick").set_value("seed-article").run()
    at.button(key="w_preset_load").click().run()
    assert at.session_state["w_preset"] == "seed-article"
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 4 and at.session_state["w_preset"] == "default"
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 8


def test_an_import_is_one_step(at):
    at.number_input(key="w_ex_gpus").set_value(3).run()
    s = default_scenario().with_changes(mix=[{"id": "openorca", "rows": 1000}], extraction_gpus=2)
    at.file_uploader(key="w_import").set_value(("m.yaml", dump_manifest(build_manifest(s)).encode(),
                                                "application/yaml")).run()
    assert _rows(at) == {"openorca": 1000} and at.number_input(key="w_ex_gpus").value == 2
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 3 and len(_rows(at)) > 1


def test_the_history_survives_a_reload_as_a_copy(at, tmp_path, monkeypatch):
    at.number_input(key="w_ex_gpus").set_value(4).run()
    at.number_input(key="w_ex_gpus").set_value(5).run()
    link = {k: at.query_params[k] for k in ("s", "h")}
    assert link["h"]
    # a reload is a new session with the same link
    again = AppTest.from_file(APP, default_timeout=90)
    for k, v in link.items():
        again.query_params[k] = v
    again.run()
    assert again.number_input(key="w_ex_gpus").value == 5 and not again.button(key="w_undo").disabled
    again.button(key="w_undo").click().run()
    assert again.number_input(key="w_ex_gpus").value == 4
    # the reloaded session wrote into a history of its own: the first one still has both steps
    assert again.query_params["h"] != link["h"]
    at.button(key="w_undo").click().run()
    at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 8
    # an unknown or malformed h= is ignored: nothing to undo, no error
    bad = AppTest.from_file(APP, default_timeout=90)
    bad.query_params["h"] = "../../etc/passwd"
    bad.run()
    assert not bad.exception and bad.button(key="w_undo").disabled
