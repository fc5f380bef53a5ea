"""AppTest wiring: every control moves the metric it should; the mix editor, import/export,
budget trim, presets, shared links and profiling through the page."""
import re

import pytest
import yaml
from streamlit.testing.v1 import AppTest

from planner import default_scenario, plan
from planner.export.manifest import build_manifest, dump_manifest
from planner.export.share import encode
from tests.app.mix_table_util import edit_rows, mix_frame, table
from tests.helpers import ROOT, page_errors

APP = str(ROOT / "app.py")


@pytest.fixture()
def at(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    app = AppTest.from_file(APP, default_timeout=90)
    app.run()
    assert not app.exception, app.exception
    return app


def in_batches(rows: int) -> int:
    """Rows captured by the default SpecForge layout: batches of 32, the last partial one dropped
    (--batch-size 32, drop_last=True: specforge/data/utils.py:199-243)."""
    return rows // 32 * 32


def _metric(app, label):
    """The metric of that label; the unit in brackets may differ (TB or TiB, compressed or not)."""
    head = label.split(" (")[0]
    return next((m for m in app.metric if m.label == label), None) or \
        next(m for m in app.metric if m.label.split(" (")[0] == head)


def metric(app, label) -> float:
    m = _metric(app, label)
    text = m.value.replace(",", "").replace("$", "")
    num = float(re.search(r"-?[\d.]+", text).group())
    if "M" in text.split()[0]:
        num *= 1e6
    elif "B" in text.split()[0]:
        num *= 1e9
    return num


def open_tab(app, label: str) -> None:
    """Select a tab (the Charts and Compare tabs run only when open)."""
    app.session_state["w_tab"] = label
    app.run()


def plain(text: str) -> str:
    """A message as the reader sees it: the page escapes markdown in every user-supplied string."""
    return re.sub(r"\\(.)", r"\1", text)


def metric_text(app, label) -> str:
    return _metric(app, label).value


def test_loads_with_the_default_plan(at):
    p = plan(default_scenario())
    # SpecForge captures batches of 32 and drops the last partial one: floor(913,786 / 32) x 32 = 913,760
    assert metric(at, "Samples") == 913_760
    assert metric(at, "Storage (TB)") == pytest.approx(p.storage_bytes_compressed / 1e12, abs=0.006)
    assert metric(at, "Offline: store, train ($)") == pytest.approx(p.cost_usd.total_offline, abs=0.6)
    assert table(at) is not None and not at.data_editor     # the table, not the spreadsheet
    assert not page_errors(at)


# (widget kind, key, new value, metric, expected direction: +1 up, -1 down, or a ratio)
CONTROLS = [
    ("number_input", "w_ex_gpus", 4, "Extraction (days)", +1),
    ("number_input", "w_epochs", 6.0, "Train offline (GPU-days)", 2.0),
    ("number_input", "w_compression", 2.0, "Storage (TB)", 0.5),
    ("checkbox", "w_double_write", True, "Extraction (days)", +1),
    ("selectbox", "w_disk", "node-raid0", "Extraction (days)", 0),
    ("selectbox", "w_cap_mode", "none", "Stored tokens", +1),
    ("number_input", "w_capture_batch", 1, "Storage (TB)", -1),      # SpecForge pads batches of 32; 1 does not
    ("selectbox", "w_sort", "sorted", "Storage (TB)", -1),
    ("radio", "w_unit", "turn", "Samples", +1),
    ("toggle", "w_regen", False, "Extraction (days)", -1),
    ("number_input", "w_resp_mult", 2.0, "Stored tokens", +1),
    ("number_input", "w_length_scale", 0.8, "Stored tokens", -1),
    ("selectbox", "w_model", "qwen3-8b", "Storage (TB)", -1),
    ("selectbox", "w_layout", "specforge-eagle3", "Storage (TB)", -1),
    ("selectbox", "w_hidden_dtype", "fp8", "Storage (TB)", -1),
    ("number_input", "w_layer_count", 3, "Storage (TB)", -1),
    ("selectbox", "w_ex_gpu", "b200", "Extraction (GPU-days)", -1),
    ("radio", "w_weight_dtype", "fp8", "Extraction (GPU-days)", -1),
    ("radio", "w_tp_mode", "fixed", "Extraction (days)", +1),
    ("number_input", "w_bw_eff", 0.5, "Extraction (days)", +1),
    ("number_input", "w_max_batch", 8, "Extraction (days)", +1),
    ("number_input", "w_max_tokens", 16, "Extraction (days)", +1),
    ("radio", "w_kv_dtype", "fp8", "Extraction (days)", -1),
    # fewer DFlash draft positions (on A100s: BASE)
    ("number_input", "w_anchors", 128, "Train offline (GPU-days)", -1),
    ("number_input", "w_node_gbps", 1.0, "Disaggregated ($)", +1),     # the stream becomes network-bound
    ("selectbox", "w_link", 100.0, "Transfer (h)", 0.1),
    ("number_input", "w_link_eff", 0.25, "Transfer (h)", 2.0),
    ("selectbox", "w_transfer", "object_store", "Transfer (h)", 2.0),
    ("number_input", "w_tr_gpus", 16, "Online, wall (days)", -1),
    ("selectbox", "w_tr_gpu", "h100-sxm", "Train online (GPU-days)", +1),
    ("number_input", "w_tr_mfu", 0.5, "Train online (GPU-days)", -1),   # on A100s (BASE): compute binds
    # issue 20: the default storage is where the placement puts the states, the nodes' own disks, with no
    # rent beyond the node price ($0): the months held move nothing there, a price of $10 adds rent
    ("number_input", "w_months", 3.0, "Offline: store, train ($)", 0),
    ("number_input", "w_tb_price", 10.0, "Offline: store, train ($)", +1),
    ("number_input", "w_ex_price", 5.0, "Offline: store, train ($)", +1),
    ("number_input", "w_tr_price", 1.0, "Online: no storage ($)", -1),
    ("selectbox", "w_storage", "wasabi", "Offline: store, train ($)", +1),
    ("selectbox", "w_tr_disk", "nvme-gen4", "Train offline (GPU-days)", +1),   # 12 layers stored (BASE)
]

# Issue 22: on the default plan (8 x B200 trainers) the per-sample overhead floor binds training
# (training_throughput.yaml `overhead`: 2.5468e-4 trainer-GPU s per token, 3,926 tokens/s per GPU,
# against 2.25e15 x 0.32 / 5.61e10 FLOPs per token = 12,800 tokens/s by the drafter's FLOPs), so the
# anchors, the MFU and the training disk move nothing there. These controls start from a scenario
# where the figure they set binds:
# - A100 trainers: 312e12 x 0.32 / 5.61e10 = 1,780 tokens/s per GPU < 3,926, compute binds (1.60e9
#   tokens an epoch: 31.3 h against the floor's 14.2 h); 128 anchors cut the drafter's FLOPs to 2.08e10
#   a token (4,800 tokens/s: the floor's 14.2 h binds, still down from 31.3 h); MFU 0.5 gives
#   31.3 x 0.32 / 0.5 = 20.0 h (0.7 would land at 14.3 h, next to the floor).
# - 12 stored layers instead of DFlash's 5: 12/5 x 1.63 h = 3.9 h an epoch from the nodes' RAID 0
#   (the floor's 14.2 h binds); one NVMe gen4 drive reads 4.83x slower: 18.9 h, the disk binds.
BASE = {
    "w_anchors": [("selectbox", "w_tr_gpu", "a100-80gb")],
    "w_tr_mfu": [("selectbox", "w_tr_gpu", "a100-80gb")],
    "w_tr_disk": [("number_input", "w_layer_count", 12)],
}


@pytest.mark.parametrize("kind, key, value, label, expect", CONTROLS, ids=[c[1] for c in CONTROLS])
def test_every_control_moves_its_metric(at, kind, key, value, label, expect):
    for base_kind, base_key, base_value in BASE.get(key, []):
        getattr(at, base_kind)(key=base_key).set_value(base_value).run()
        assert not at.exception, at.exception
    before = metric(at, label)
    widget = getattr(at, kind)(key=key)
    widget.set_value(value).run()
    assert not at.exception, at.exception
    after = metric(at, label)
    if expect == 0:   # not the binding constraint here: nothing may move
        assert after == before
    elif expect == +1:
        assert after > before
    elif expect == -1:
        assert after < before
    else:
        assert after == pytest.approx(before * expect, rel=0.02)


def test_the_default_plans_bands_and_their_basis_are_on_the_page(at):
    """Issue 22: the extraction, tau and training figures show their band and basis without hovering,
    in a caption under the metrics; each number worked from the plan's fields as the caption rounds it."""
    p = plan(default_scenario())
    e, t, q = p.extraction, p.training, p.quality
    # as the reader sees it: markdown escapes and the zero-width space md_text puts after a colon removed
    text = plain(next(c.value for c in at.caption if "basis" in c.value)).replace("\u200b", "")
    # extraction: wall hours / 24 with the calibration band (widened by sampled profiles), 2 decimals
    assert f"Extraction {e.wall_hours / 24:,.2f} days (band {e.wall_hours_low / 24:,.2f}-" \
           f"{e.wall_hours_high / 24:,.2f})" in text
    assert e.wall_hours_low < e.wall_hours < e.wall_hours_high
    # its basis: each phase's calibration row, or the roofline alone, and whether it is an extrapolation
    for c in (e.prefill_calibration, e.decode_calibration):
        part = f"{c.phase} on {c.row or 'the roofline alone'}"
        assert (part + (", an extrapolation" if c.extrapolated else "")) in text, part
    # tau, its band, where it is measured, and the target-size term
    k = "" if q.num_speculative_tokens is None else f" K={q.num_speculative_tokens}"
    assert f"τ {q.acceptance_length:.2f} (band {q.acceptance_low:.2f}-{q.acceptance_high:.2f}) as " \
           f"{q.eval_engine}{k} T={q.temperature:g} measures it" in text
    assert f"target-size term x{q.target_factor:.2f} ({q.target_factor_low:.2f}-{q.target_factor_high:.2f})" in text
    # offline training: hours / rate band ends, / 24, and the bound that binds
    assert f"Offline training {t.offline_wall_hours / 24:,.2f} days (band {t.offline_wall_hours_low / 24:,.2f}-" \
           f"{t.offline_wall_hours_high / 24:,.2f}), bound by {t.bounds['offline']}" in text
    # the speedup at the serving batch and the payback's at the fleet's
    assert f"Speedup {q.speedup:.2f}x at batch {q.serving_batch:g}, {q.payback_speedup:.2f}x at the fleet's " \
           f"batch {q.fleet_batch:g}" in text


def test_units_switch_to_tib(at):
    tb = metric(at, "Storage (TB)")
    at.radio(key="w_units").set_value("TiB").run()
    # the storage band (issue 33) follows the unit: "Storage (TiB) ±x.xx"
    assert _metric(at, "Storage").label.startswith("Storage (TiB) ±")
    # 36.71 TB = 36.71e12 / 2^40 TiB = 33.39 TiB
    assert metric(at, "Storage (TB)") == pytest.approx(tb * 1e12 / 2**40, abs=0.01)


def edit(at, rows: dict):
    """Edits of the mix table by row number ({0: {"rows": 5}}), as its browser script sends them."""
    edit_rows(at, rows)
    assert not at.exception, at.exception


def test_editing_rows_changes_storage_and_shows_a_delta(at):
    before = metric(at, "Storage (TB)")
    openorca = next(c for c in plan(default_scenario()).components if c.id == "openorca")
    edit(at, {0: {"rows": 125_215}})   # half of OpenOrca's 250,430 rows
    after = metric(at, "Storage (TB)")
    # storage is linear in rows: half of OpenOrca's 6.345 TB goes away
    assert after == pytest.approx(before - openorca.storage_bytes / 2 / 1e12, abs=0.01)
    delta = _metric(at, "Storage (TB)").delta   # the label carries the band: "Storage (TB) ±x"
    assert delta.startswith("-")
    assert metric(at, "Samples") == in_batches(913_786 - 125_215)


def test_percent_and_include_columns(at):
    edit(at, {0: {"pct": 50.0}})
    assert metric(at, "Samples") == in_batches(913_786 - 125_215)
    tokens = metric(at, "Stored tokens")
    edit(at, {6: {"include": False}})   # drop the agentic traces
    assert metric(at, "Samples") == in_batches(913_786 - 125_215 - 15_000)
    assert metric(at, "Stored tokens") < tokens


def test_bad_rows_in_the_editor_are_refused(at):
    before = metric(at, "Storage (TB)")
    edit(at, {0: {"rows": -5}})
    assert any("rows for openorca" in plain(e.value) and "-5" in plain(e.value) for e in at.error)
    assert metric(at, "Storage (TB)") == before


def test_add_a_component_from_the_catalog(at):
    at.multiselect(key="w_add_components").select("gsm8k").run()
    at.button(key="w_add_button").click().run()
    assert not at.exception
    assert metric(at, "Samples") == in_batches(913_786 + 7_473)
    assert "gsm8k" in list(mix_frame(at)["id"])


def test_export_import_round_trip_through_the_ui(at, tmp_path):
    s = default_scenario().with_changes(mix=[{"id": "openorca", "rows": 1000}, {"id": "hermes_fc", "rows": 500}],
                                        extraction_gpus=2, compression=1.1)
    text = dump_manifest(build_manifest(s))
    open_tab(at, "Export / import / profile")
    at.file_uploader(key="w_import").set_value(("m.yaml", text.encode(), "application/yaml")).run()
    assert not at.exception, at.exception
    assert metric(at, "Samples") == in_batches(1500)
    open_tab(at, "Export / import / profile")      # the export panel is built while its tab is open
    at.toggle(key="w_show_manifest").set_value(True).run()
    exported = yaml.safe_load(at.code[0].value)   # the manifest preview the page exports
    assert exported["scenario"]["mix"] == [
        {"id": "openorca", "rows": 1000, "include": True, "selection": "uniform", "seed": 0},
        {"id": "hermes_fc", "rows": 500, "include": True, "selection": "uniform", "seed": 0}]
    assert exported["scenario"]["extraction_gpus"] == 2 and exported["scenario"]["compression"] == 1.1
    assert exported["predicted"]["storage_bytes"] == pytest.approx(plan(s).storage_bytes)
    # issue 20: besides the manifest (2), the CSV and the report, every pipeline export of the CLI: the
    # layout's own (SpecForge) commands, its per-rank commands and its Slurm script
    assert [b.label for b in at.download_button] == [
        "Manifest (YAML)", "Manifest (JSON)", "Component table (CSV)", "Report (HTML)", "specforge commands",
        "Per-rank commands (1 node)", "Slurm script"]


@pytest.mark.parametrize("content, message", [
    (b"schema_version: 1\nscenario: [oops", "invalid YAML"),
    (b"a: &a [1]\nb: [*a, *a]\n", "aliases"),
    (b"x" * 1_100_000, "limit"),
])
def test_a_bad_manifest_shows_an_error_and_changes_nothing(at, content, message):
    before = metric(at, "Storage (TB)")
    open_tab(at, "Export / import / profile")
    at.file_uploader(key="w_import").set_value(("bad.yaml", content, "application/yaml")).run()
    assert not at.exception
    assert any(message in plain(e.value) for e in at.error), [e.value for e in at.error]
    assert metric(at, "Storage (TB)") == before


def test_unknown_gpu_in_manifest_is_refused(at):
    data = yaml.safe_load(dump_manifest(build_manifest(default_scenario())))
    data["scenario"]["extraction_gpu"] = "tpu-v9"
    open_tab(at, "Export / import / profile")
    at.file_uploader(key="w_import").set_value(("m.yaml", yaml.safe_dump(data).encode(), "application/yaml")).run()
    assert any("extraction_gpu" in plain(e.value) and "tpu-v9" in plain(e.value) for e in at.error)
    assert metric(at, "Samples") == in_batches(913_786)


def test_shared_link_restores_the_scenario(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    s = default_scenario().with_changes(mix=[{"id": "agentic", "rows": 300}], max_seq_len=None, unit="turn")
    app = AppTest.from_file(APP, default_timeout=90)
    app.query_params["s"] = encode(s)
    app.run()
    assert not app.exception
    assert metric(app, "Samples") == pytest.approx(plan(s).samples, rel=0.001)
    assert app.query_params["s"] == encode(s)


@pytest.mark.parametrize("link", ["garbage", "v1.!!!!", "v1." + "A" * 9000,
                                  # damaged body, any version
                                  "{0}.x{2}".format(*encode(default_scenario()).partition("."))])
def test_invalid_link_falls_back_to_defaults_with_a_warning(tmp_path, monkeypatch, link):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    app = AppTest.from_file(APP, default_timeout=90)
    app.query_params["s"] = link
    app.run()
    assert not app.exception
    assert any("could not be used" in plain(w.value) for w in app.warning)
    assert metric(app, "Samples") == in_batches(913_786)


def test_link_of_the_wrong_shape(tmp_path, monkeypatch):
    import base64
    import json
    import zlib
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    bad = "v1." + base64.urlsafe_b64encode(zlib.compress(json.dumps({"extraction_gpus": -1}).encode())).decode()
    app = AppTest.from_file(APP, default_timeout=90)
    app.query_params["s"] = bad
    app.run()
    assert any("extraction_gpus" in plain(w.value) for w in app.warning)


def test_budget_trim_and_apply(at):
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(10.0).run()
    at.button(key="w_b_trim").click().run()
    assert not at.exception
    assert any(df.value.columns.tolist()[:4] == ["id", "family", "rows now", "proposed"] for df in at.dataframe)
    at.button(key="w_b_apply").click().run()
    assert not at.exception
    assert 9.9 <= metric(at, "Storage (TB)") <= 10.0


def test_infeasible_budget_says_why(at):
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(1.0).run()
    at.selectbox(key="w_b_strategy").set_value("protect").run()
    at.multiselect(key="w_b_protect").select("tool").run()
    at.button(key="w_b_trim").click().run()
    assert any("protected components alone need" in plain(e.value) for e in at.error)


def test_seed_article_preset(at):
    at.selectbox(key="w_preset_pick").set_value("seed-article").run()
    at.button(key="w_preset_load").click().run()
    assert not at.exception
    # 37,431,598,675,200 bytes / 1.5 = 24.95 TB on disk; 456,893,000 tokens at 480 tok/s = 11.0 days
    assert metric(at, "Storage (TB)") == pytest.approx(24.95, abs=0.01)
    assert metric(at, "Extraction (days)") == pytest.approx(11.02, abs=0.01)
    open_tab(at, "Against the article")              # its table is built while its tab is open
    assert any("37.4 TB" in str(t.value.to_dict()) for t in at.table)
    # the seed article compresses 1.5x: the headline shows the raw figure beside the compressed one
    # a uniform mix's lengths are the user's own: no storage band (issue 33; the default mix's label has one)
    assert _metric(at, "Storage").label == "Storage (TB, 1.5x compressed)"
    assert metric(at, "Raw storage (TB)") == pytest.approx(37.43, abs=0.01)


def test_custom_model_and_gpu(at):
    at.selectbox(key="w_model").set_value("custom").run()
    at.selectbox(key="w_ex_gpu").set_value("custom").run()
    assert not at.exception
    before = metric(at, "Storage (TB)")
    assert before > 0
    at.number_input(key="w_cm_hidden").set_value(2048).run()
    # 5 layers x hidden x 2 bytes + 16: (10,240 + 16) / (25,600 + 16) = 0.40 of the bytes per token
    assert metric(at, "Storage (TB)") == pytest.approx(before * 10_256 / 25_616, rel=0.01)


def test_profile_an_upload_through_the_page(at):
    rows = "\n".join('{"conversations": [{"from": "human", "value": "abcdefgh"}, '
                     '{"from": "gpt", "value": "abcdefghijkl"}]}' for _ in range(5)) + "\n{broken\n"
    open_tab(at, "Export / import / profile")
    at.file_uploader(key="w_profile_file").set_value(("mine.jsonl", rows.encode(), "application/jsonl")).run()
    at.text_input(key="w_profile_name").input("mine").run()
    # the default target (Qwen3.6-27B) ships its tokenizer: the counter defaults to it (issue 35 item 9)
    assert at.selectbox(key="w_profile_tok").value == "qwen3.6"
    at.button(key="w_profile_go").click().run()
    assert not at.exception, at.exception
    assert any("5 conversations" in plain(s.value) and "1 bad lines" in plain(s.value)
               and "qwen3.6" in plain(s.value) for s in at.success), [s.value for s in at.success]
    # said once, beside the button: the next run of the page no longer shows it
    at.run()
    assert not any("5 conversations" in plain(s.value) for s in at.success)
    open_tab(at, "Mix")
    df = mix_frame(at)
    assert "mine" in list(df["id"])
    assert "measured" in df.set_index("id").loc["mine", "provenance"]


def test_a_json_array_upload_names_its_bad_element(at):
    """A JSON array is read element by element: a bad one is an element, numbered from 1, not a line.
    Three elements: two conversations, then a number (not a record)."""
    good = '{"conversations": [{"from": "human", "value": "abcdefgh"}, {"from": "gpt", "value": "abcdefghijkl"}]}'
    open_tab(at, "Export / import / profile")
    at.file_uploader(key="w_profile_file").set_value(("arr.json", f"[{good}, {good}, 42]".encode(),
                                                      "application/json")).run()
    at.text_input(key="w_profile_name").input("arr").run()
    at.button(key="w_profile_go").click().run()
    assert not at.exception, at.exception
    notes = [plain(s.value).replace("\u200b", "") for s in at.success]
    assert any("2 conversations" in n and "1 bad elements skipped (first: element 3" in n for n in notes), notes


def test_profile_refuses_a_bad_name(at):
    open_tab(at, "Export / import / profile")
    at.file_uploader(key="w_profile_file").set_value(("x.jsonl", b"{}\n", "application/jsonl")).run()
    at.text_input(key="w_profile_name").input("Bad Name").run()
    at.button(key="w_profile_go").click().run()
    assert any("Component id" in plain(e.value) for e in at.error)


def test_a_huge_upload_is_refused(at, monkeypatch):
    import drafter_dashboard.io_panel
    monkeypatch.setattr(drafter_dashboard.io_panel, "MAX_PROFILE_UPLOAD_MB", 1)
    # the uploader takes its limit from the same constant (max_upload_size): in a browser a 2 MB file
    # never arrives. AppTest does not enforce a widget's limit, so the file arrives here, and the page's
    # own check refuses it: one error naming the limit, and nothing is profiled
    open_tab(at, "Export / import / profile")
    assert at.file_uploader(key="w_profile_file").proto.max_upload_size_mb == 1
    at.file_uploader(key="w_profile_file").set_value(("big.jsonl", b"x" * (2 * 2**20), "application/jsonl")).run()
    at.text_input(key="w_profile_name").input("big").run()
    assert not at.exception
    at.button(key="w_profile_go").click().run()
    assert [plain(e.value).replace("\u200b", "") for e in at.error if "upload limit" in e.value] == \
        ["big.jsonl: 2 MB is over the 1 MB upload limit"]
    open_tab(at, "Mix")
    assert "big" not in list(mix_frame(at)["id"])


def test_csv_export_neutralises_formula_cells():
    import pandas as pd

    from drafter_dashboard.io_panel import component_csv
    df = pd.DataFrame([{"id": "=HYPERLINK(\"http://x\")", "notes": "+1 day", "rows": 5},
                       {"id": "@SUM(A1)", "notes": "-2", "rows": 6}, {"id": "plain", "notes": "ok", "rows": 7}])
    lines = component_csv(df).splitlines()
    assert lines[1].startswith("\"'=HYPERLINK") and ",'+1 day," in lines[1]
    assert lines[2].startswith("'@SUM(A1),'-2,6")
    assert lines[3] == "plain,ok,7"


@pytest.mark.parametrize("chart", ["Rows vs bytes", "Timeline", "Sensitivity", "Storage vs rows"])
def test_each_chart_renders(at, chart):
    open_tab(at, "Charts")
    at.segmented_control(key="w_chart").set_value(chart).run()
    assert not at.exception, at.exception
    assert not at.warning
    assert at.segmented_control(key="w_chart").value == chart


def test_selection_column_in_the_editor(at):
    before = metric(at, "Stored tokens")
    edit(at, {2: {"selection": "shortest", "rows": 100_000}})   # ultrachat: the 100K shortest rows
    assert not page_errors(at)
    assert metric(at, "Stored tokens") < before
    assert mix_frame(at).set_index("id").loc["ultrachat", "selection"] == "shortest"


def test_hidden_controls_keep_their_values(at):
    # fixed-mode inputs exist only in fixed mode; Streamlit forgets undrawn widgets, the page must not
    at.radio(key="w_tp_mode").set_value("fixed").run()
    at.number_input(key="w_tps").set_value(90.0).run()
    at.radio(key="w_tp_mode").set_value("roofline").run()
    at.number_input(key="w_ex_gpus").set_value(4).run()
    assert not at.exception, at.exception
    at.radio(key="w_tp_mode").set_value("fixed").run()
    assert not at.exception, at.exception
    assert at.number_input(key="w_tps").value == 90.0
    at.selectbox(key="w_transfer").set_value("drives").run()
    at.selectbox(key="w_transfer").set_value("link").run()
    assert not at.exception and at.selectbox(key="w_link").value == 10.0


def test_seed_article_trim_and_apply(at):
    at.selectbox(key="w_preset_pick").set_value("seed-article").run()
    at.button(key="w_preset_load").click().run()
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(10.0).run()
    at.button(key="w_b_trim").click().run()
    at.button(key="w_b_apply").click().run()
    assert not at.exception, at.exception
    # 10 TB / (800 x 51,204 bytes x 1/1.5 compression) = 366,182 samples
    assert metric(at, "Samples") == 366_182     # the seed-article layout captures rows one by one
    assert metric(at, "Storage (TB)") == pytest.approx(10.0, abs=0.01)


def test_bad_layer_text_is_a_message_not_a_traceback(at):
    at.text_input(key="w_layers").input("1,x,3").run()
    assert not at.exception
    assert any("layers" in plain(e.value) and "1,x,3" in plain(e.value) for e in at.error)
    at.text_input(key="w_layers").input("1,99").run()
    assert any("layers" in plain(e.value) and "99" in plain(e.value) for e in at.error)
    at.text_input(key="w_layers").input("1,16").run()
    assert not page_errors(at) and not at.exception


def test_random_walk_through_the_controls_never_raises(at):
    import random
    rng = random.Random(7)
    moves = [
        lambda: at.selectbox(key="w_model").set_value(rng.choice(["qwen3.6-27b", "qwen3-8b", "gpt-oss-20b",
                                                                  "custom", "llama-3.1-70b"])),
        lambda: at.selectbox(key="w_layout").set_value(rng.choice(["seed-article", "speculators", "eagle1",
                                                                   "specforge-dflash"])),
        lambda: at.radio(key="w_tp_mode").set_value(rng.choice(["roofline", "fixed"])),
        lambda: at.radio(key="w_unit").set_value(rng.choice(["conversation", "turn"])),
        lambda: at.selectbox(key="w_cap_mode").set_value(rng.choice(["layout's", "cap", "none"])),
        lambda: at.selectbox(key="w_transfer").set_value(rng.choice(["link", "object_store", "drives", "none"])),
        lambda: at.selectbox(key="w_ex_gpu").set_value(rng.choice(["rtx-4090", "b200", "custom", "mi300x"])),
        lambda: at.selectbox(key="w_tr_gpu").set_value(rng.choice(["b200", "custom", "l40s"])),
        lambda: at.number_input(key="w_ex_gpus").set_value(rng.randint(1, 64)),
        lambda: at.radio(key="w_units").set_value(rng.choice(["TB", "TiB"])),
        lambda: at.number_input(key="w_ex_nodes").set_value(rng.choice([0, 1, 2, 4, 8])),
        lambda: at.radio(key="w_placement").set_value(rng.choice(["local", "shared"])),
        lambda: at.selectbox(key="w_hidden_dtype").set_value(rng.choice(["layout's", "fp8", "bf16"])),
        lambda: at.segmented_control(key="w_chart").set_value(rng.choice(["Timeline", "Sensitivity",
                                                                          "Storage vs rows"])),
    ]
    open_tab(at, "Charts")
    for _ in range(40):
        rng.choice(moves)().run()
        assert not at.exception, at.exception
        assert at.metric or at.error   # either the plan or a message naming the problem


def test_a_cap_of_its_own_overrides_the_layouts(at):
    before = metric(at, "Stored tokens")
    at.selectbox(key="w_cap_mode").set_value("cap").run()
    at.number_input(key="w_cap").set_value(8192).run()      # SpecForge's 2,048 -> 8,192
    assert not at.exception and metric(at, "Stored tokens") > before


def test_quality_metrics_workload_and_every_strategy(at):
    p = plan(default_scenario())
    # the expected acceptance length and speedup among the headline metrics, as plan() gives them
    assert metric(at, "Acceptance length") == pytest.approx(p.quality.acceptance_length, abs=0.006)
    assert metric(at, "Speedup") == pytest.approx(p.quality.speedup, abs=0.006)
    # a code-only serving workload: code's tau (5.66 on the default mix) is higher than the mix-weighted 4.12
    at.radio(key="w_wl_mode").set_value("set").run()
    for f in ("general", "tool", "agentic", "math"):
        at.number_input(key=f"w_wl_{f}").set_value(0.0).run()
    at.number_input(key="w_wl_code").set_value(1.0).run()
    assert not at.exception
    assert metric(at, "Acceptance length") == pytest.approx(p.quality.per_domain["code"], abs=0.006)
    # trimming to 20 TB with the quality strategy: every strategy side by side, none above quality
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(20.0).run()
    at.selectbox(key="w_b_strategy").set_value("quality").run()
    at.button(key="w_b_trim").click().run()
    assert not at.exception
    table = next(df.value for df in at.dataframe if "acceptance length" in df.value.columns)
    scores = dict(zip(table["strategy"], table["acceptance length"], strict=False))
    assert set(scores) >= {"proportional", "quality", "cap", "value"}
    assert scores["quality"] >= scores["proportional"] - 1e-12
    # the frontier chart draws this mix, the full mix and the proposals
    open_tab(at, "Charts")
    at.segmented_control(key="w_chart").set_value("Quality frontier").run()
    assert not at.exception
    spec = " ".join(c.proto.spec for c in at.get("plotly_chart"))
    names = set(re.findall(r'"name":\s*"([^"]*)"', spec))
    assert {"this mix", "full mix", "quality", "proportional"} <= names


def test_a_stale_proposal_cannot_be_applied(at):
    # issue 14, item 1: Trim, then uncheck a component: the old proposal must not bring it back
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(10.0).run()
    at.button(key="w_b_trim").click().run()
    assert at.button(key="w_b_apply")
    open_tab(at, "Mix")
    edit(at, {6: {"include": False}})                         # agentic unchecked
    open_tab(at, "Budget")
    assert any("made for an earlier scenario" in w.value for w in at.warning)
    assert not [b for b in at.button if b.key == "w_b_apply"]
    assert not any(m["id"] == "agentic" and m["include"] for m in at.session_state["mix_rows"])


def test_protect_needs_a_choice_before_trim(at):
    open_tab(at, "Budget")
    at.number_input(key="w_b_storage").set_value(10.0).run()
    at.selectbox(key="w_b_strategy").set_value("protect").run()
    assert at.button(key="w_b_trim").disabled
    at.multiselect(key="w_b_protect").select("tool").run()
    assert not at.button(key="w_b_trim").disabled


def test_trim_without_a_budget_says_so_in_one_sentence(at):
    open_tab(at, "Budget")
    at.button(key="w_b_trim").click().run()
    assert any(e.value.startswith("Give at least one budget") for e in at.error)
    assert not any("{" in e.value for e in at.error)


def test_rows_above_available_are_refused_with_the_reason(at):
    edit(at, {1: {"rows": 240_000}})                          # sharegpt: 120,000 exist
    assert any("stores its hidden states twice" in plain(e.value) for e in at.error)
    assert next(m for m in at.session_state["mix_rows"] if m["id"] == "sharegpt")["rows"] == 120_000


def test_pin_deltas_and_undo_redo(at):
    base_storage = metric(at, "Storage")
    at.button(key="w_pin").click().run()
    assert at.session_state["_pinned"] is not None
    # a sidebar change: per-turn rows; the delta is now against the pinned scenario
    at.radio(key="w_unit").set_value("turn").run()
    m = _metric(at, "Storage")
    assert metric(at, "Storage") > base_storage and m.delta and m.delta.startswith("+")
    assert any("against the pinned scenario" in c.value for c in at.caption)
    # undo brings the conversation unit back, redo the turn unit again
    at.button(key="w_undo").click().run()
    assert metric(at, "Storage") == pytest.approx(base_storage)
    at.button(key="w_redo").click().run()
    assert at.radio(key="w_unit").value == "turn"
    at.button(key="w_unpin").click().run()
    assert "_pinned" not in at.session_state


def test_undo_covers_twenty_changes(at):
    for n in range(1, 22):
        at.number_input(key="w_ex_gpus").set_value(n).run()
    for _ in range(20):
        at.button(key="w_undo").click().run()
    assert at.number_input(key="w_ex_gpus").value == 1


def test_save_and_compare(at):
    at.text_input(key="w_save_name").input("four gpus").run()
    at.number_input(key="w_ex_gpus").set_value(4).run()
    at.button(key="w_save").click().run()
    at.number_input(key="w_ex_gpus").set_value(8).run()
    at.button(key="w_pin").click().run()
    open_tab(at, "Compare")
    table = next(df.value for df in at.dataframe if "figure" in df.value.columns)
    assert at.get("plotly_chart")                       # the cost by phase, stacked
    assert {"current", "pinned", "four gpus", "four gpus - pinned"} <= set(table.columns)
    row = table[table["figure"] == "Extraction (days)"].iloc[0]
    # half the GPUs: about twice the extraction days
    assert row["four gpus"] == pytest.approx(2 * row["pinned"], rel=0.05)
    assert row["four gpus - pinned"] == pytest.approx(row["four gpus"] - row["pinned"])
    # the link carries the pinned and saved scenarios
    assert at.query_params.get("c")


def test_a_link_brings_its_pinned_and_saved_scenarios(tmp_path, monkeypatch):
    from planner.export.share import encode_set
    from planner.scenario import Scenario
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    app = AppTest.from_file(APP, default_timeout=90)
    pinned = Scenario(extraction_gpus=4)
    app.query_params["s"] = encode(Scenario())
    app.query_params["c"] = encode_set(pinned, {"two gpus": Scenario(extraction_gpus=2)})
    app.run()
    assert not app.exception
    assert app.session_state["_pinned"] == pinned and list(app.session_state["_saved"]) == ["two gpus"]
    assert any("against the pinned scenario" in c.value for c in app.caption)
    # a damaged set is one warning, and the page goes on
    bad = AppTest.from_file(APP, default_timeout=90)
    bad.query_params["c"] = "v4.not-base64"
    bad.run()
    assert not bad.exception and any("pinned and saved scenarios could not be used" in w.value for w in bad.warning)


def test_nodes_controls_plan_per_node_and_refuse_a_mismatch_in_one_sentence(at):
    # 4 nodes of 8 with 32 GPUs: the 82.11 TB default mix is 20.53 TB a node, under the 30.72 TB disk,
    # so the blocking banner about the disk goes and a per-node metric appears
    # setting the nodes sets the GPU count (4 x 8 = 32), as --nodes does on the command line
    at.number_input(key="w_ex_nodes").set_value(4).run()
    assert not at.exception and not page_errors(at)
    assert at.number_input(key="w_ex_gpus").value == 32
    per_node = _metric(at, "Per node (TB)")
    storage = float(_metric(at, "Storage (TB)").value.replace(",", ""))
    assert float(per_node.value.replace(",", "")) == pytest.approx(storage / 4, abs=0.01)
    assert not any("exceeds the 30.72 TB disk" in plain(e.value) for e in at.error)
    # 4 nodes x 8 = 32, but 16 GPUs: one sentence naming both, and the page keeps the last plan
    at.number_input(key="w_ex_gpus").set_value(16).run()
    assert not at.exception
    assert any("extraction_nodes 4 x gpus_per_node 8 = 32 GPUs, but extraction_gpus is 16" in plain(e.value)
               for e in at.error), [e.value for e in at.error]
    assert _metric(at, "Per node (TB)").value == per_node.value
    # GPUs per node 6 with 4 nodes: 24 GPUs
    at.number_input(key="w_ex_per_node").set_value(6).run()
    assert at.number_input(key="w_ex_gpus").value == 24 and not page_errors(at)
    at.number_input(key="w_ex_per_node").set_value(8).run()
    # a shared filesystem: nothing on the nodes' disks, so no per-node metric
    at.number_input(key="w_ex_gpus").set_value(32).run()
    at.radio(key="w_placement").set_value("shared").run()
    assert not at.exception and not any(m.label.startswith("Per node") for m in at.metric)
