"""The page against links, imports and uploads it did not make (issue 10) and its own round trips
(issue 9): AppTest, no browser."""
from __future__ import annotations

import base64
import inspect
import json
import re
import zlib

import pytest
from streamlit.testing.v1 import AppTest

from planner.catalog.stats import get_catalog
from planner.export.share import encode
from planner.presets.specs import GPUSpec, ModelSpec
from planner.scenario import Scenario
from tests.app.mix_table_util import edit_rows, mix_frame
from tests.app.test_wiring import open_tab
from tests.helpers import ROOT, page_errors

APP = str(ROOT / "app.py")


def _app(tmp_path, monkeypatch, link: str | None = None) -> AppTest:
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    app = AppTest.from_file(APP, default_timeout=90)
    if link is not None:
        app.query_params["s"] = link
    app.run()
    assert not app.exception, app.exception
    return app


def _raw_link(d: dict) -> str:
    """A link as anyone can make it: JSON, zlib, base64url, without the page's validation."""
    return "v1." + base64.urlsafe_b64encode(zlib.compress(json.dumps(d).encode())).decode().rstrip("=")


def _messages(app) -> list[str]:
    return [e.value for kind in ("error", "warning", "info", "success", "markdown", "caption")
            for e in getattr(app, kind)]


CUSTOM = Scenario(
    model="custom", extraction_gpu="custom",
    custom_model=ModelSpec(hidden_size=2048, num_layers=48, full_attention_layers=12, linear_attention_layers=36,
                           num_q_heads=16, num_kv_heads=4, head_dim=128, vocab_size=151936, params=9e9,
                           active_params=9e9, linear_state_bytes_per_layer=100_000),
    custom_gpu=GPUSpec(memory_gb=96, bandwidth_tb_s=4.0, bf16_tflops=500, price_low=5.0, price_high=5.0))


def test_a_custom_model_and_gpu_link_loads_as_sent(tmp_path, monkeypatch):
    link = encode(CUSTOM)
    app = _app(tmp_path, monkeypatch, link)
    assert app.number_input(key="w_cg_price_low").value == 5.0
    assert app.number_input(key="w_cg_price_high").value == 5.0
    assert app.number_input(key="w_cm_state").value == 100_000
    assert app.query_params["s"] == link      # nothing was changed, so the link is not rewritten


def test_custom_values_survive_switching_away_and_back(tmp_path, monkeypatch):
    app = _app(tmp_path, monkeypatch)
    app.selectbox(key="w_model").set_value("custom").run()
    app.selectbox(key="w_ex_gpu").set_value("custom").run()
    app.number_input(key="w_cm_hidden").set_value(2048).run()
    app.number_input(key="w_cg_mem").set_value(96.0).run()
    app.selectbox(key="w_model").set_value("qwen3-8b").run()
    app.selectbox(key="w_ex_gpu").set_value("b200").run()
    app.number_input(key="w_ex_gpus").set_value(4).run()      # another run with both hidden
    app.selectbox(key="w_model").set_value("custom").run()
    app.selectbox(key="w_ex_gpu").set_value("custom").run()
    assert not app.exception, app.exception
    assert app.number_input(key="w_cm_hidden").value == 2048   # was reset to 5120
    assert app.number_input(key="w_cg_mem").value == 96.0      # was reset to 80


def test_schema_valid_values_outside_the_old_widget_ranges(tmp_path, monkeypatch):
    s = Scenario(compression=3.0, response_multiplier=10.0, transfer={"efficiency": 0.02})
    link = encode(s)
    app = _app(tmp_path, monkeypatch, link)
    assert not page_errors(app) and not app.warning
    assert app.number_input(key="w_compression").value == 3.0
    assert app.number_input(key="w_link_eff").value == 0.02
    assert app.number_input(key="w_resp_mult").value == 10.0
    assert app.query_params["s"] == link


@pytest.mark.parametrize("name", ["[login](https://example.invalid)", "![x](https://example.invalid/x.png)"])
def test_a_link_cannot_inject_markdown(tmp_path, monkeypatch, name):
    app = _app(tmp_path, monkeypatch, _raw_link({"model": name}))
    warning = next(w.value for w in app.warning if "could not be used" in w.value)
    assert "example\\.invalid" in warning                     # the value is shown, escaped
    for text in _messages(app):
        # a markdown link or image needs an unescaped "](" ; every "]" from the link is "\]"
        assert not re.search(r"(?<!\\)\]\(", text), text
        # nor may a bare URL stay whole: GitHub-flavoured markdown links it even when escaped
        assert not re.search(r"https?\\?:/", text), text
    assert app.selectbox(key="w_model").value == "qwen3.6-27b"    # the defaults instead


def test_an_import_with_a_hostile_file_name_is_escaped(tmp_path, monkeypatch):
    app = _app(tmp_path, monkeypatch)
    open_tab(app, "Export / import / profile")
    app.file_uploader(key="w_import").set_value(("![x](https:example.invalid).yaml", b"scenario: [oops",
                                                 "application/yaml")).run()
    assert not app.exception
    errors = [e.value for e in app.error]
    assert errors and all(not re.search(r"(?<!\\)\]\(", e) for e in errors), errors


def test_an_unexpected_error_is_one_line_without_details(tmp_path, monkeypatch):
    import drafter_dashboard.metrics

    def broken(*args, **kwargs):
        raise RuntimeError("/srv/secret/path/to/file.py went wrong")
    monkeypatch.setattr(drafter_dashboard.metrics, "headline", broken)
    app = _app(tmp_path, monkeypatch)
    assert not app.exception
    texts = " ".join(_messages(app))
    assert "RuntimeError" in texts and "/srv/secret" not in texts and "Traceback" not in texts


@pytest.mark.parametrize("view", ["table", "spreadsheet"])
def test_a_mix_edit_costs_one_run(tmp_path, monkeypatch, view):
    log = tmp_path / "runs.log"
    monkeypatch.setenv("PLANNER_TIMING_LOG", str(log))
    app = _app(tmp_path, monkeypatch)
    if view == "spreadsheet":
        app.toggle(key="w_mix_spreadsheet").set_value(True).run()
    before = len(log.read_text().splitlines())
    if view == "table":
        edit_rows(app, {0: {"rows": 1000}})
    else:
        key = f"mix_editor_{app.session_state['mix_version']}"
        app.session_state[key] = {"edited_rows": {0: {"rows": 1000}}, "added_rows": [], "deleted_rows": []}
        app.run()
    assert len(log.read_text().splitlines()) == before + 1     # was 2: the edit, then st.rerun
    samples = next(m.value for m in app.metric if m.label.startswith("Samples"))
    # OpenOrca's 250,430 rows -> 1,000; captured in SpecForge's batches of 32 (last partial one dropped)
    assert samples == f"{(913_786 - 250_430 + 1000) // 32 * 32:,}"


def test_the_manifest_is_built_once_per_scenario(tmp_path, monkeypatch):
    import drafter_dashboard.io_panel
    calls = []
    real = drafter_dashboard.io_panel.build_manifest
    monkeypatch.setattr(drafter_dashboard.io_panel, "build_manifest", lambda *a, **k: calls.append(1) or real(*a, **k))
    app = _app(tmp_path, monkeypatch)
    open_tab(app, "Export / import / profile")                # the export panel is built while its tab is open
    first = len(calls)
    assert first <= 1                                         # the default scenario: built at most once
    app.number_input(key="w_ex_gpus").set_value(3).run()      # a new scenario: one build
    assert len(calls) == first + 1
    app.radio(key="w_units").set_value("TiB").run()           # a display setting, same scenario: cached
    app.toggle(key="w_show_manifest").set_value(True).run()   # the preview reads the same text
    assert len(calls) == first + 1 and "extraction_gpus: 3" in app.code[0].value
    app.number_input(key="w_ex_gpus").set_value(5).run()      # a new scenario: one more
    assert len(calls) == first + 2


def _profile(app, name: str, rows: bytes, file_name: str = "mine.jsonl"):
    if app.session_state["w_tab"] != "Export / import / profile":
        open_tab(app, "Export / import / profile")      # the profile panel is built while its tab is open
    app.file_uploader(key="w_profile_file").set_value((file_name, rows, "application/jsonl")).run()
    app.text_input(key="w_profile_name").input(name).run()
    app.button(key="w_profile_go").click().run()
    assert not app.exception, app.exception


GOOD = b'{"conversations": [{"from": "human", "value": "abcd"}, {"from": "gpt", "value": "efgh"}]}\n' * 3


def test_a_failed_upload_leaves_no_file(tmp_path, monkeypatch):
    app = _app(tmp_path, monkeypatch)
    _profile(app, "broken", b"{not json\n{nor this\n")
    assert any("Not profiled" in e.value for e in app.error)
    uploads = list((tmp_path / "home" / "sessions").glob("*/uploads/*"))
    assert uploads == []                                      # was: uploads/tmpXXXX.jsonl left behind
    assert all("/sessions/" not in e.value for e in app.error)   # no server path in the message


def test_profiling_an_existing_id_asks_first(tmp_path, monkeypatch):
    app = _app(tmp_path, monkeypatch)
    _profile(app, "mine", GOOD)
    open_tab(app, "Mix")
    assert "mine" in list(mix_frame(app)["id"])
    _profile(app, "mine", GOOD * 2, "again.jsonl")
    assert any("already profiled" in e.value for e in app.error)
    open_tab(app, "Mix")
    rows = mix_frame(app).set_index("id").loc["mine", "rows"]
    assert rows == 3                                          # unchanged
    # the upload went with its closed tab (as in a browser: an uploader not drawn forgets its file)
    _profile(app, "mine", GOOD * 2, "again.jsonl")
    assert any("already profiled" in e.value for e in app.error)
    app.checkbox(key="w_profile_replace").check().run()
    app.button(key="w_profile_go").click().run()
    assert not app.exception, app.exception
    open_tab(app, "Mix")
    assert mix_frame(app).set_index("id").loc["mine", "rows"] == 6   # the second file, 6 rows


def test_each_session_has_its_own_upload_folder(tmp_path, monkeypatch):
    a = _app(tmp_path, monkeypatch)
    b = _app(tmp_path, monkeypatch)
    _profile(a, "mine", GOOD)
    _profile(b, "theirs", GOOD)
    sessions = tmp_path / "home" / "sessions"
    assert sorted(p.relative_to(sessions).parts[1:] for p in sessions.glob("*/uploads/*")) == \
        [("uploads", "mine.jsonl"), ("uploads", "theirs.jsonl")]
    assert len({p.parent.parent for p in sessions.glob("*/uploads/*")}) == 2   # two folders, one file each


@pytest.mark.skipif("user_catalog" not in inspect.signature(get_catalog).parameters,
                    reason="needs planner.catalog.stats.get_catalog(user_catalog=...) (catalog helper's branch)")
def test_one_visitors_upload_is_not_shown_to_another(tmp_path, monkeypatch):
    a = _app(tmp_path, monkeypatch)
    b = _app(tmp_path, monkeypatch)
    _profile(a, "mine", GOOD)
    open_tab(a, "Mix")
    assert "mine" in list(mix_frame(a)["id"])
    b.run()
    assert "mine" not in b.multiselect(key="w_add_components").options


def test_a_link_that_breaks_the_page_falls_back_to_the_defaults(tmp_path, monkeypatch):
    import drafter_dashboard.metrics
    real = drafter_dashboard.metrics.headline

    def fragile(p, base, unit, *rest):   # a page bug that only this scenario (3 extraction GPUs) hits
        if p.scenario.extraction_gpus == 3:
            raise KeyError("/srv/app/secret.py")
        return real(p, base, unit, *rest)
    monkeypatch.setattr(drafter_dashboard.metrics, "headline", fragile)
    app = _app(tmp_path, monkeypatch, encode(Scenario(extraction_gpus=3)))
    assert any("could not be shown" in w.value and "KeyError" in w.value for w in app.warning)
    assert app.number_input(key="w_ex_gpus").value == 8                   # the defaults
    # 913,786 in batches of 32 (drop_last)
    assert next(m.value for m in app.metric if m.label.startswith("Samples")) == "913,760"
    assert not page_errors(app) and "/srv/app" not in " ".join(_messages(app))


def test_no_server_path_in_an_upload_error(tmp_path, monkeypatch):
    # the profile panel's errors name the uploaded file, never a path on the server: the temporary upload, the
    # uploads folder, the session's folder (its user catalog: a lock timeout, a full disk) and the planner's
    # home, as given and resolved (a home under a symlink), in a PlannerInputError's value (text or a path, put
    # right before the error shortens it) and in any other error's line (review of 9cebc80)
    from drafter_dashboard.io_panel import _without_server_paths
    from planner.errors import PlannerInputError
    real = tmp_path / "real-home"
    (real / "sessions" / ("0123" * 8) / "uploads").mkdir(parents=True)
    (tmp_path / "home").symlink_to(real)
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    folder = tmp_path / "home" / "sessions" / ("0123" * 8) / "uploads"
    upload = folder / ("tmpabc" + "x" * 60 + ".parquet")
    cases = [PlannerInputError("PATH", str(upload), "too big"),
             PlannerInputError("PATH", upload, "too big"),                                  # a Path, long
             PlannerInputError("user catalog file", str(folder.parent / "user_catalog.json"), "locked"),
             PlannerInputError("user catalog file", str(folder.resolve().parent / "user_catalog.json"), "locked"),
             OSError(28, "No space left on device", str(folder.parent / "user_catalog.json.tmp")),
             ValueError(f"cannot read {upload.resolve()}")]
    for exc in cases:
        said = _without_server_paths(exc, upload, folder, "mine.parquet")
        assert str(tmp_path) not in said and "sessions" not in said and "0123" not in said, said
    assert "mine.parquet" in _without_server_paths(cases[1], upload, folder, "mine.parquet")
    assert "this session's folder" in _without_server_paths(cases[4], upload, folder, "mine.parquet")
