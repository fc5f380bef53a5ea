"""Issue 23: the collapsed sidebar sections (Transfer, Training, Nodes, Serving, Prices) are built only
while open. A control that is not built keeps the value the link gave it: in the scenario (so in the
plan, the next link and the manifest) through any change of a control that is built, and it shows that
value when its section is opened."""
import pytest
import yaml
from streamlit.testing.v1 import AppTest

from drafter_dashboard.sidebar import SECTIONS
from planner import default_scenario
from planner.export.share import decode, encode
from planner.scenario import Costs, Transfer
from tests.app.test_wiring import APP, metric, open_tab


def _closed_app(tmp_path, monkeypatch, link: str) -> AppTest:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(AppTest, "open_sections", False, raising=False)   # conftest opens them otherwise
    app = AppTest.from_file(APP, default_timeout=90)
    app.query_params["s"] = link
    app.run()
    assert not app.exception, app.exception
    return app


def test_closed_sections_keep_their_values_in_the_scenario_link_and_manifest(tmp_path, monkeypatch):
    s = default_scenario()
    s = s.with_changes(transfer=Transfer(method="link", link_gbps=25.0, efficiency=0.35),
                       training=s.training.model_copy(update={"epochs": 7.0}),
                       costs=Costs(storage_usd_per_tb_month=12.0))
    app = _closed_app(tmp_path, monkeypatch, encode(s))
    keys = {w.key for w in app.number_input} | {w.key for w in app.selectbox}
    # not built: the epochs (Training), the link (Transfer), the storage price (Prices)
    assert not {"w_epochs", "w_link", "w_link_eff", "w_tb_price"} & keys
    assert not any(app.session_state[k] for k in SECTIONS.values())
    storage = metric(app, "Storage (TB)")
    # a control that is built changes the scenario twice; the closed ones keep the link's values
    for gpus in (3, 5):
        app.number_input(key="w_ex_gpus").set_value(gpus).run()
        assert not app.exception, app.exception
    now = decode(app.query_params["s"])
    assert now.extraction_gpus == 5
    assert (now.training.epochs, now.transfer.link_gbps, now.transfer.efficiency,
            now.costs.storage_usd_per_tb_month) == (7.0, 25.0, 0.35, 12.0)
    assert metric(app, "Storage (TB)") == storage          # the GPU count moves no byte
    # the manifest carries them too
    open_tab(app, "Export / import / profile")
    app.toggle(key="w_show_manifest").set_value(True).run()
    exported = yaml.safe_load(app.code[0].value)["scenario"]
    assert exported["training"]["epochs"] == 7.0 and exported["transfer"]["link_gbps"] == 25.0
    assert exported["costs"]["storage_usd_per_tb_month"] == 12.0
    # opening a section builds its controls with the kept values, and they move the plan again
    app.session_state[SECTIONS["Training"]] = True
    app.run()
    assert app.number_input(key="w_epochs").value == 7.0
    days = metric(app, "Train offline (GPU-days)")
    app.number_input(key="w_epochs").set_value(14.0).run()
    assert decode(app.query_params["s"]).training.epochs == 14.0
    # twice the epochs, twice the offline training GPU-days (each epoch reads the same states)
    assert metric(app, "Train offline (GPU-days)") == pytest.approx(2 * days, rel=0.02)
    # closed again: the value set while it was open stays through other changes (Streamlit drops the
    # state of a widget a run does not draw; the page puts it back)
    app.session_state[SECTIONS["Training"]] = False
    app.run()
    app.number_input(key="w_ex_gpus").set_value(4).run()
    app.number_input(key="w_ex_gpus").set_value(6).run()
    assert "w_epochs" not in {w.key for w in app.number_input}
    assert decode(app.query_params["s"]).training.epochs == 14.0


def test_the_first_screen_builds_only_the_models_and_the_gpus_controls(tmp_path, monkeypatch):
    """The sections open on load are the target model and the extraction hardware; Samples, the throughput
    details and the disks are built when opened (issue 23: each control drawn is the browser's work on
    every run). A section re-opened by default, or a field moved into an open one, fails here."""
    app = _closed_app(tmp_path, monkeypatch, encode(default_scenario()))
    drawn = {w.key for kind in ("number_input", "selectbox", "radio", "text_input", "toggle", "checkbox")
             for w in getattr(app.sidebar, kind) if w.key and not w.key.startswith("w_open_")}
    assert drawn == {"w_preset_pick", "w_units",                                    # the header
                     "w_model", "w_layout", "w_hidden_dtype", "w_layer_count", "w_layers",   # the model
                     "w_ex_gpu", "w_ex_gpus", "w_weight_dtype", "w_kv_dtype", "w_tp_mode",   # the GPUs
                     "w_save_name", "w_delta_mode"}                                  # undo, pin, save, deltas
    # and the session holds only those (Streamlit 1.67 copies the whole session state for every select,
    # radio, number and text input drawn): a closed section's control, or a preset model's custom fields,
    # keep their values outside it (state.KEPT)
    from drafter_dashboard.registry import KEYS
    assert {k for k in KEYS if k in app.session_state} == drawn - {"w_preset_pick", "w_units", "w_save_name",
                                                                   "w_delta_mode"}
    # a closed section's control still holds its value: Tokens per sample x (Samples) is in the plan
    app.session_state[SECTIONS["Samples"]] = True
    app.run()
    app.number_input(key="w_length_scale").set_value(2.0).run()
    app.session_state[SECTIONS["Samples"]] = False
    app.run()
    assert "w_length_scale" not in {w.key for w in app.number_input}
    assert decode(app.query_params["s"][0] if isinstance(app.query_params["s"], list) else app.query_params["s"]
                  ).length_scale == 2.0
