"""The Compare tab's calibration upload (drafter_dashboard/calibration_panel.py): the calibrated
plan beside the tabled one, each moved figure marked with the run it was measured on."""
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from planner import default_scenario, plan
from planner.cli.calibrate import text
from planner.export.manifest import load_manifest
from planner.runs import calibration as rc
from tests.helpers import ROOT

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "runs"


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    """The fixtures' SpecForge run calibrated (176 B a token, 3,900 tokens/h on 1 GPU), relabelled
    for the dashboard's default scenario (its model and layers), as if measured on it."""
    run = tmp_path_factory.mktemp("c") / "run"
    shutil.copytree(RUNS / "specforge", run)
    for p in run.rglob("*.ckpt"):
        os.utime(p, (1_780_000_000, 1_780_000_000))
    c = rc.calibrate(load_manifest(RUNS / "manifest.yaml"), str(run), elapsed_hours=0.01, gpus=1,
                     disk_capacity_tb=1.0)
    p = plan(default_scenario())
    return c.model_copy(update={"model": p.model, "layers": p.layers, "hidden_dtype": p.hidden_dtype})


def page(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    app.run()
    app.session_state["w_tab"] = "Compare"
    app.run()
    assert not app.exception, app.exception
    return app


def upload(app, name, data: bytes):
    app.file_uploader(key="w_calibration").set_value((name, data, "application/json")).run()
    assert not app.exception, app.exception


def test_calibrated_plan_beside_the_tabled_one(tmp_path, monkeypatch, calibration):
    app = page(tmp_path, monkeypatch)
    upload(app, "cal.json", rc.dump(calibration).encode())
    table = next(d.value for d in app.dataframe if "calibrated plan" in d.value.columns)
    by = {r["figure"]: r for r in table.to_dict("records")}
    label = f"measured on your run: 3 rows, {calibration.created_at[:10]}"
    # 176 B of tensors a token (SpecForge DFlash keeps nothing in another file); 3,900 tok/h / 3,600 s
    assert by["Bytes per token"]["calibrated plan"] == 176 and by["Bytes per token"]["source"] == label
    assert by["Capture rate (tokens/s per GPU)"]["calibrated plan"] == pytest.approx(3900 / 3600)
    assert by["Stored tokens"]["source"] == "unchanged"
    assert by["Stored tokens"]["tabled plan"] == by["Stored tokens"]["calibrated plan"]
    p = plan(default_scenario())
    assert by["Bytes per token"]["tabled plan"] == p.bytes_per_token
    shown = [re.sub(r"\\(.)", r"\1", m.value).replace("\u200b", "") for m in app.markdown]   # as read
    assert any("That run's forecast: 3 of 992 rows measured" in m for m in shown), [m for m in shown if "forecast" in m]
    # the forecast's lines are the CLI text's, word for word, the time band among them (3 rows,
    # 0.01 h: a rate, so a time with its band; 1 TB: the disk does not fill)
    said = forecast_shown(app)
    assert said == cli_lines(calibration) and said["time"].endswith(")") and " to " in said["time"]
    assert said["disk"].startswith("the disk does not fill: ")


def test_a_preflight_file_is_labelled_as_preflight_measured_it(tmp_path, monkeypatch, calibration):
    # planner preflight's file: the same format, with measured_by (planner/runs/preflight.py)
    label = "measured by preflight on testhost, 2026-12-06"
    app = page(tmp_path, monkeypatch)
    upload(app, "cal.json", rc.dump(calibration.model_copy(update={"measured_by": label})).encode())
    table = next(d.value for d in app.dataframe if "calibrated plan" in d.value.columns)
    by = {r["figure"]: r for r in table.to_dict("records")}
    assert by["Bytes per token"]["source"] == by["Capture rate (tokens/s per GPU)"]["source"] == label
    shown = [re.sub(r"\\(.)", r"\1", m.value).replace("\u200b", "") for m in app.markdown]
    assert any(m.startswith("Preflight's forecast: 3 of 992 rows measured") for m in shown)


def forecast_shown(app) -> dict[str, str]:
    """The panel's forecast lines, by label, as read (markdown escapes and zero-width spaces removed)."""
    shown = [re.sub(r"\\(.)", r"\1", m.value).replace("\u200b", "") for m in app.markdown]
    text = next(m for m in shown if "That run's forecast: " in m)
    return dict(re.match(r"^- (time|storage|disk): (.*)$", x).groups() for x in text.splitlines() if x.startswith("- ")
                and not x.endswith("files skipped"))


def cli_lines(c) -> dict[str, str]:
    """The CLI text's time, storage and disk lines, by label."""
    return {m.group(1): m.group(2) for m in re.finditer(r"^  (time|storage|disk) +(.*)$", text(c), re.M)}


def test_one_row_without_a_rate_on_a_small_disk_reads_as_the_cli_says(tmp_path, monkeypatch):
    # one file (data_0, 7 tokens): no band from one row, no rate from one file (the time says why,
    # once), and on 1 MB the plan's 4.7 MB (the guide's example: 4.7 MB in all) fills it
    run = tmp_path / "run" / "rows_0-2000"
    run.mkdir(parents=True)
    shutil.copyfile(RUNS / "specforge" / "rows_0-2000" / "data_0.ckpt", run / "data_0.ckpt")
    os.utime(run / "data_0.ckpt", (1_780_000_000, 1_780_000_000))
    p = plan(default_scenario())
    c = rc.calibrate(load_manifest(RUNS / "manifest.yaml"), str(run.parent), gpus=1, disk_capacity_tb=1e-6,
                     now=1_780_086_400).model_copy(update={"model": p.model, "layers": p.layers,
                                                           "hidden_dtype": p.hidden_dtype})
    assert c.rows_measured == 1 and c.forecast.hours_remaining is None and c.forecast.disk_fills
    app = page(tmp_path, monkeypatch)
    upload(app, "one.json", rc.dump(c).encode())
    said = forecast_shown(app)
    assert said == cli_lines(c)
    # the reported cases: not "final storage X (X to X)", the time not dropped, not "the disk full already"
    assert said["storage"].endswith(" in all (no band: one row measured)")
    assert said["time"] == "unknown: fewer than two files with different times; give --elapsed-hours"
    assert said["disk"].startswith("the disk fills before the run ends, at a time unknown: ")


def test_bad_uploads_are_one_line_and_another_plan_is_refused(tmp_path, monkeypatch, calibration):
    app = page(tmp_path, monkeypatch)
    other = rc.dump(calibration.model_copy(update={"layout": "speculators"})).encode()
    for data, says in ((b"{", "not a calibration file"),
                       (b'{"kind": "drafter-planner-calibration", "version": 2}', "version"),
                       (other, "measured with layout speculators")):
        upload(app, "bad.json", data)
        assert any(says in e.value and "\n" not in e.value for e in app.error), [e.value for e in app.error]


def test_a_number_out_of_bounds_is_one_line_naming_the_field_on_the_page(tmp_path, monkeypatch, calibration):
    # issue 36: 1e308 bytes a token overflowed, 1e308 tokens/s divided by zero (tracebacks on the
    # page), -1 bytes a token lowered the storage; each is refused in one line naming field and value
    app = page(tmp_path, monkeypatch)
    good = json.loads(rc.dump(calibration))
    for field, value in (("data_bytes_per_token", 1e308), ("tokens_per_s_per_gpu", 1e308),
                         ("data_bytes_per_token", -1)):
        upload(app, "bad.json", json.dumps(dict(good, **{field: value})).encode())
        shown = [re.sub(r"\\(.)", r"\1", e.value).replace("\u200b", "") for e in app.error]
        assert any(f"Calibration not used: calibration file: 'bad.json' is not allowed; {field}: {value!r} is too "
                   in e and "\n" not in e for e in shown), shown
        assert not any("calibrated plan" in d.value.columns for d in app.dataframe)
