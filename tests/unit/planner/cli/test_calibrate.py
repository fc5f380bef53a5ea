"""`planner calibrate`, `planner watch` and `estimate --calibration` on the command line."""
import json
import os
import shutil
from pathlib import Path

import pytest

from planner.cli.main import main

RUNS = Path(__file__).resolve().parents[3] / "fixtures" / "runs"
MANIFEST = str(RUNS / "manifest.yaml")      # tiny model (H = 16), openorca 600 + sharegpt 400, specforge-dflash
OLD = 1_780_000_000


@pytest.fixture()
def run(tmp_path):
    r = tmp_path / "run"
    shutil.copytree(RUNS / "specforge", r)
    for i, p in enumerate(sorted(r.rglob("*.ckpt"))):
        os.utime(p, (OLD + 60 * i, OLD + 60 * i))
    return r


def cli(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrate_json_and_out(capsys, run, tmp_path):
    out = tmp_path / "cal.json"
    code, text, err = cli(capsys, "calibrate", str(run), "--manifest", MANIFEST, "--elapsed-hours", "0.01",
                          "--gpus", "1", "--json", "--out", str(out))
    assert code == 0, err
    d = json.loads(text)
    assert json.loads(out.read_text()) == d
    # 3 files of 7 + 12 + 20 tokens in 0.01 h: 3,900 tokens/h, 300 rows/h
    assert (d["layout"], d["rows_measured"], d["tokens_measured"], d["rows_per_hour"]) == ("specforge-dflash", 3, 39,
                                                                                           300)
    assert d["bytes_measured"] == 3224 + 4120 + 5528 and d["forecast"]["disk_full_hours"] is None
    # estimate --calibration marks the figures it replaced
    code, text, err = cli(capsys, "estimate", "--manifest", MANIFEST, "--calibration", str(out))
    assert code == 0, err
    marked = [line for line in text.splitlines() if "[measured on your run: 3 rows," in line]
    assert [line.split()[0] for line in marked] == ["bytes", "storage", "extraction"]
    code, text, err = cli(capsys, "estimate", "--manifest", MANIFEST, "--calibration", str(out), "--json")
    d = json.loads(text)
    assert d["bytes_per_token"] == 176 and d["measured"]["rows"] == 3
    # 3,900 tokens/h on 1 GPU = 1.0833 tokens/s
    assert d["extraction"]["prefill_tokens_per_s_per_gpu"] == pytest.approx(3900 / 3600)


def test_calibrate_text_names_the_forecast(capsys, run):
    code, text, err = cli(capsys, "calibrate", str(run), "--manifest", MANIFEST, "--elapsed-hours", "1",
                          "--disk-capacity-tb", "0.000001")
    assert code == 0, err
    assert "calibrate: 3 of 992 rows measured" in text and "disk         the disk fills in" in text


def test_out_is_never_inside_the_run_nor_another_file(capsys, run, tmp_path):
    code, _, err = cli(capsys, "calibrate", str(run), "--manifest", MANIFEST, "--out", str(run / "cal.json"))
    assert code == 2 and "inside RUN_DIR" in err and not (run / "cal.json").exists()
    other = tmp_path / "notes.json"
    other.write_text('{"mine": 1}')
    code, _, err = cli(capsys, "calibrate", str(run), "--manifest", MANIFEST, "--out", str(other))
    assert code == 2 and "is not a calibration file" in err and other.read_text() == '{"mine": 1}'


@pytest.mark.parametrize("args, flag", [
    (("--elapsed-hours", "0"), "--elapsed-hours"), (("--elapsed-hours", "nan"), "--elapsed-hours"),
    (("--gpus", "0"), "--gpus"), (("--world", "-1"), "--world"), (("--layout", "seed-article"), "--layout"),
    (("--layout", "nope"), "--layout"), (("--disk-capacity-tb", "x"), "--disk-capacity-tb"),
])
def test_bad_flags_one_line(capsys, run, args, flag):
    code, _, err = cli(capsys, "calibrate", str(run), "--manifest", MANIFEST, *args)
    assert code == 2 and err.startswith(f"planner: error: {flag}") and err.count("\n") == 1


def test_bad_run_dir_and_calibration_file(capsys, run, tmp_path):
    code, _, err = cli(capsys, "calibrate", str(tmp_path / "missing"), "--manifest", MANIFEST)
    assert code == 2 and "RUN_DIR" in err and err.count("\n") == 1
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "drafter-planner-calibration", "version": 1, "layout": "x"}')
    code, _, err = cli(capsys, "estimate", "--manifest", MANIFEST, "--calibration", str(bad))
    assert code == 2 and err.startswith("planner: error: --calibration") and err.count("\n") == 1


def test_watch_once_json(capsys, run):
    code, text, err = cli(capsys, "watch", str(run), "--manifest", MANIFEST, "--once", "--json", "--elapsed-hours", "1")
    assert code == 0, err
    s = json.loads(text)
    assert (s["rows_done"], s["rows_planned"], s["complete"]) == (3, 992, False)
    assert s["bytes_done"] == 12872 and s["eta"]
    code, text, err = cli(capsys, "watch", str(run), "--manifest", MANIFEST, "--once", "--elapsed-hours", "1")
    assert code == 0 and text.startswith("[") and "3/992 rows (0%)" in text
    code, _, err = cli(capsys, "watch", str(run), "--manifest", MANIFEST, "--json")
    assert code == 2 and "--once" in err
