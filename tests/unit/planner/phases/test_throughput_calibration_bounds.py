"""A calibration file is input (issue 36, item 4): every number in it has a sign and a bound, declared
on planner/runs/calibration.py's models, and a file outside them is refused in one line naming the
field and the value, before a plan takes anything from it."""
import json
import os
import shutil
import typing
from pathlib import Path

import annotated_types
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from planner.cli.main import main
from planner.errors import PlannerInputError
from planner.export.manifest import load_manifest
from planner.planning import plan
from planner.runs import calibration as rc
from planner.scenario import Scenario

RUNS = Path(__file__).resolve().parents[3] / "fixtures" / "runs"
MANIFEST = RUNS / "manifest.yaml"        # tiny model (H = 16), specforge-dflash


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict:
    """The fixtures' SpecForge run (3 files, 39 tokens) calibrated over 0.01 h on 1 GPU, as JSON."""
    run = tmp_path_factory.mktemp("b") / "run"
    shutil.copytree(RUNS / "specforge", run)
    for p in run.rglob("*.ckpt"):
        os.utime(p, (1_780_000_000, 1_780_000_000))
    c = rc.calibrate(load_manifest(MANIFEST), str(run), elapsed_hours=0.01, gpus=1, disk_capacity_tb=1.0)
    return json.loads(rc.dump(c))


def _numbers(model: type[BaseModel], prefix: str = ""):
    """(path, lower bound, upper bound) of every int and float in `model` and the models it holds."""
    for name, f in model.model_fields.items():
        yield from _numbers_in(f.annotation, f.metadata, prefix + name)


def _numbers_in(tp, metadata, path):
    args = typing.get_args(tp)
    if typing.get_origin(tp) is typing.Annotated:       # Field(...) inside Annotated: its own metadata
        inner = [m for x in tp.__metadata__ for m in (x.metadata if isinstance(x, FieldInfo) else [x])]
        yield from _numbers_in(args[0], inner + list(metadata), path)
    elif isinstance(tp, type) and issubclass(tp, BaseModel):
        yield from _numbers(tp, path + ".")
    elif tp in (int, float):
        lo = [m for m in metadata if isinstance(m, (annotated_types.Ge, annotated_types.Gt))]
        hi = [m for m in metadata if isinstance(m, (annotated_types.Le, annotated_types.Lt))]
        yield path, lo, hi
    else:           # a union (X | None), a list, a dict's values, a tuple
        for a in args:
            if a is not type(None) and a is not str:
                yield from _numbers_in(a, [], path + ("[]" if typing.get_origin(tp) in (list, dict, tuple) else ""))


def test_every_number_of_the_file_has_a_sign_and_a_bound():
    found = list(_numbers(rc.RunCalibration))
    # today's figures: the run's counts and figures, the forecast's, the per-row spread, the skips
    assert len(found) >= 40
    assert [p for p, lo, hi in found if not lo or not hi] == []
    # no lower bound below 0: a size, a count, a rate or a time is never negative
    assert [p for p, lo, _ in found if getattr(lo[0], "ge", getattr(lo[0], "gt", None)) < 0] == []


def _refusal(good, path: str, value) -> str:
    d = json.loads(json.dumps(good))
    *keys, last = path.split(".")
    at = d
    for k in keys:
        at = at[int(k)] if isinstance(at, list) else at[k]
    at[int(last) if isinstance(at, list) else last] = value
    with pytest.raises(PlannerInputError) as e:
        rc.parse(json.dumps(d).encode(), "cal.json")
    return str(e.value)


@pytest.mark.parametrize("path,value,says", [
    # the three: 1e308 bytes a token overflowed round(); 1e308 tokens/s made the capture 0 h
    # and a division by it; -1 bytes a token lowered the storage
    ("data_bytes_per_token", 1e308, "too large; give at most 1,000,000,000"),
    ("tokens_per_s_per_gpu", 1e308, "too large; give at most 1,000,000,000"),
    ("data_bytes_per_token", -1, "too small; give 1 or more"),
    # variants: below a byte a token rounds to 0 bytes; a rate under 1e-3 tok/s made the plan's
    # days infinite (refused then as another input's fault); a negative or overflowing overhead
    ("data_bytes_per_token", 0.4, "too small; give 1 or more"),
    ("tokens_per_s_per_gpu", 1e-308, "too small; give 0.001 or more"),
    ("tokens_per_s_per_gpu", 0, "too small; give 0.001 or more"),
    ("overhead_bytes_per_file", -1e308, "too small; give 0 or more"),
    ("overhead_bytes_per_file", 1e308, "too large; give at most 1,000,000,000"),
    # the rest of the file, nested too
    ("bytes_measured", -1, "too small; give 0 or more"),
    ("forecast.storage_bytes", 1e308, "too large; give at most 1e+30"),
    ("forecast.hours_remaining", -3, "too small; give 0 or more"),
    ("per_row.worst.0.ratio", -0.5, "too small; give 0 or more"),
    ("files_skipped.reasons.odd", -2, "too small; give 0 or more"),
    ("rows_measured", 10**30, "too large; give at most 1,000,000,000,000,000"),
    ("layers.0", -1, "too small; give 0 or more"),
    ("world", 0, "too small; give 1 or more"),
    ("gpus", 10**9, "too large; give at most 100,000"),
])
def test_a_number_out_of_bounds_is_one_line_naming_the_field_and_value(good, path, value, says):
    msg = _refusal(good, path, value)
    assert "\n" not in msg and msg.startswith("--calibration: 'cal.json' is not allowed; ")
    # the bound as the page and the CLI word every bound (issue 35, item 10): "is too small; give 1 or more"
    assert f"{path}: {value!r} is {says}" in msg, msg


def test_at_its_bounds_a_calibration_plans_finite_figures_worked_by_hand():
    from planner.presets.layouts import layout_presets
    s = Scenario()
    p = plan(s)
    spec = layout_presets()[s.layout]
    m = dict(layout=s.layout, model=s.model, hidden_dtype=p.hidden_dtype, layers=tuple(p.layers), rows=3,
             date="2026-12-06")
    # the lowest bounds: 1 byte a token, no overhead, 1e-3 tokens/s per GPU
    q = plan(s, measured=rc.Measured(**m, data_bytes_per_token=1.0, overhead_bytes_per_file=0.0,
                                     tokens_per_s_per_gpu=rc.TPS_MIN))
    # storage = tokens x (1 + the layout's sidecar bytes) + files x (0 + half a 4,096-byte block)
    assert q.storage_bytes == pytest.approx(p.tokens * (1 + spec.sidecar_bytes_per_token) + p.files * 2048, rel=1e-9)
    # capture: tokens / (1e-3 tok/s x the GPUs in use) / 3,600 s an hour
    assert q.extraction.capture_hours == pytest.approx(p.tokens / (1e-3 * q.extraction.gpus_used) / 3600, rel=1e-9)
    # the highest: 1e9 bytes a token and a file, 1e9 tokens/s (the capture is then the disk's, not the GPUs')
    q = plan(s, measured=rc.Measured(**m, data_bytes_per_token=1e9, overhead_bytes_per_file=1e9,
                                     tokens_per_s_per_gpu=rc.TPS_MAX))
    assert q.storage_bytes == pytest.approx(p.tokens * (1e9 + spec.sidecar_bytes_per_token) + p.files * (1e9 + 2048),
                                            rel=1e-9)
    assert q.extraction.prefill_tokens_per_s_per_gpu == 1e9


def test_a_run_giving_a_figure_outside_the_bounds_writes_it_as_not_measured(tmp_path):
    # 39 tokens over --elapsed-hours 100,000 on 1 GPU: 39 / 100,000 / 3,600 = 1.08e-7 tokens/s, under
    # the 1e-3 bound: not kept, with a note, and the file it writes reads back
    run = tmp_path / "run"
    shutil.copytree(RUNS / "specforge", run)
    for p in run.rglob("*.ckpt"):
        os.utime(p, (1_780_000_000, 1_780_000_000))
    c = rc.calibrate(load_manifest(MANIFEST), str(run), elapsed_hours=100_000, gpus=1, disk_capacity_tb=1.0)
    assert c.tokens_per_hour == pytest.approx(39 / 100_000)
    assert c.tokens_per_s_per_gpu is None
    assert any(n.startswith("tokens_per_s_per_gpu 1.08333e-07 not kept: ") for n in c.notes), c.notes
    assert c.data_bytes_per_token == 176             # the other two kept
    assert rc.parse(rc.dump(c).encode(), "cal.json") == c


def test_estimate_refuses_a_bad_file_in_one_line(good, tmp_path, capsys):
    for field, value in (("data_bytes_per_token", 1e308), ("tokens_per_s_per_gpu", 1e308),
                         ("data_bytes_per_token", -1)):
        p = tmp_path / "cal.json"
        p.write_text(json.dumps(dict(good, **{field: value})))
        code = main(["estimate", "--manifest", str(MANIFEST), "--calibration", str(p)])
        out, err = capsys.readouterr()
        assert code == 2 and out == "" and err.count("\n") == 1, (code, out, err)
        assert f"{field}: {value!r} is too " in err, err          # "is too large; give at most ..."
