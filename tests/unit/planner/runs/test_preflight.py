"""`planner preflight` (planner/runs/preflight.py, issue 37): a small real shape through real torch and
transformers on the CPU, the files it writes against the layout's bytes per row (worked by hand),
the calibration file through `estimate --calibration`, a disk too small for the test refused in one
line (an injected statvfs, and a real tmpfs when this process may mount one), and SIGTERM on a
running preflight leaving nothing behind. No test asserts a speed."""
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
# one xdist worker runs this file (scripts/test.py: --dist loadgroup): torch and transformers, ~5 s of
# imports alone, are then loaded by one worker instead of by each worker that drew one of these tests
pytestmark = pytest.mark.xdist_group("torch")

from planner.errors import PlannerInputError  # noqa: E402
from planner.export.manifest import build_manifest, dump_manifest  # noqa: E402
from planner.presets.specs import ModelSpec  # noqa: E402
from planner.runs import calibration as rc  # noqa: E402
from planner.runs import preflight as pf  # noqa: E402
from planner.runs.formats import read_file  # noqa: E402
from planner.scenario import Scenario  # noqa: E402

ROOT = Path(__file__).resolve().parents[4]
# a dense shape small enough for two shared cores: H = 64, 8 layers, vocab 512
SMALL = ModelSpec(id="small", hidden_size=64, num_layers=8, full_attention_layers=8, num_q_heads=4, num_kv_heads=2,
                  head_dim=16, vocab_size=512, intermediate_size=128, params=1e6, active_params=1e6)
# Qwen3.6's hybrid pattern (3 Gated DeltaNet layers, then a full-attention one) at a small width; its
# id's prefix picks transformers' qwen3_5_text, whose GDN layers run on the CPU through the torch
# fallback (transformers 5.25.0 models/qwen3_5/modeling_qwen3_5.py torch_chunk_gated_delta_rule)
HYBRID = ModelSpec(id="qwen3.6-tiny", hidden_size=64, num_layers=8, full_attention_layers=2,
                   linear_attention_layers=6, num_q_heads=4, num_kv_heads=2, head_dim=16, vocab_size=512,
                   intermediate_size=128, params=1e6, active_params=1e6, linear_key_heads=2, linear_value_heads=4,
                   linear_key_head_dim=16, linear_value_head_dim=16, linear_conv_kernel=4)
MIX = [{"id": "openorca", "rows": 600}, {"id": "sharegpt", "rows": 400}]


def manifest(layout="specforge-eagle3", model=SMALL):
    return build_manifest(Scenario(model="custom", custom_model=model, layout=layout, mix=MIX))


def clock():
    return pf._Clock(5, None)


# bytes per token of each layout's row file at H = 64, worked by hand (layers from the layout's rule
# at L = 8; the ids and the loss mask int64 unless said):
#   specforge-eagle3: [1, 3, 4] + the last 8 = 4 layers x 64 x 2 (bf16) = 512, + 8 ids + 8 mask = 528
#   speculators:      the same 4 layers = 512, + 8 ids, no mask = 520 (its 16-byte sidecar is another file)
#   specforge-dflash: 5 layers (1 .. 5) x 128 = 640, + 16 = 656
#   modelopt-eagle3:  4 layers = 512, + 16 = 528
#   eagle1:           1 layer x 64 x 2 (fp16) = 128, + 16 = 144
PER_TOKEN = {"specforge-eagle3": (528, {"input_ids", "loss_mask", "aux_hidden_state", "hidden_state"}),
             "speculators": (520, {"token_ids", "hidden_states"}),
             "specforge-dflash": (656, {"input_ids", "loss_mask", "hidden_states"}),
             "modelopt-eagle3": (528, {"input_ids", "loss_mask", "hidden_states", "aux_hidden_states"}),
             "eagle1": (144, {"input_ids", "hidden_state", "loss_mask"})}
LENGTHS = (7, 12, 20)


def _capture(tmp_path, layout, model=SMALL, arch="llama", n_run=2):
    m = manifest(layout, model)
    figs = pf.plan_figures(m, None)
    names = pf.rundir.naming(m, layout)
    rows = [(e, t) for (e, _), t in zip(pf.sample_rows(figs, names, 3, 1), LENGTHS, strict=False)]
    cap = pf.capture(str(tmp_path), figs, rows, arch, n_run, "cpu", clock(), 60)
    return rows, cap


@pytest.mark.parametrize("layout", sorted(PER_TOKEN))
def test_the_files_hold_exactly_the_layouts_bytes_per_row(tmp_path, layout):
    rows, cap = _capture(tmp_path, layout)
    per_token, names = PER_TOKEN[layout]
    assert cap["rows"] == 3 and cap["tokens"] == 39 and cap["scale"] == 4      # 8 layers / 2 run
    for (e, t) in rows:
        info = read_file(tmp_path / e.path)
        # 7 tokens x 528 = 3,696 bytes of tensors (specforge-eagle3), and so on
        assert info.data_bytes == t * per_token and info.tokens == t, (e.path, info)
        assert {x.name for x in info.tensors} == names


def test_a_file_name_that_would_leave_the_folder_is_refused(tmp_path):
    m = manifest()
    figs = pf.plan_figures(m, None)
    (e, _), = pf.sample_rows(figs, pf.rundir.naming(m, None), 1, 1)
    (tmp_path / "run").mkdir()
    for bad in ("../data_0.ckpt", "rows_0-2000/../../data_0.ckpt"):
        with pytest.raises(PlannerInputError, match="inside the capture's folder"):
            pf.capture(str(tmp_path / "run"), figs, [(pf.rundir.ExpectedFile(bad, 0, (0,), None, 1.0, 1.0), 5)],
                       "llama", 1, "cpu", clock(), 60)
    assert [p.name for p in tmp_path.iterdir()] == ["run"] and not list((tmp_path / "run").iterdir())
    assert e.path.startswith("rows_0-2000/data_")           # a real name passes (the tests above write them)


def test_the_planners_bytes_per_token_agree_with_the_hand_worked_ones():
    from planner.phases.compose import resolve
    from planner.presets.layouts import bytes_per_token, layout_presets
    for layout, (per_token, _) in PER_TOKEN.items():
        spec = layout_presets()[layout]
        r = resolve(manifest(layout).scenario)
        b = bytes_per_token(spec, len(r.layout.layers), 64, 512, r.layout.hidden_dtype)
        assert b.per_token - b.sidecar == per_token, layout


def test_every_buildable_preset_builds_its_published_parameter_count():
    # the whole model on the meta device (no memory): its parameters against the preset's, less what
    # the base model does not hold (vision tower, MTP head, an untied LM head of H x V). Qwen3-8B:
    # 8.2e9 - 4,096 x 151,936 = 7.578e9 (built: 7.568e9); Qwen3.6-27B: 27.78e9 - 460,730,096 -
    # 424,699,392 - 5,120 x 248,320 = 25.623e9 (built: 25.625e9). The presets give 2 to 4 digits: 1%.
    import torch

    from planner.presets.specs import model_presets
    built = 0
    for mid, m in model_presets().items():
        try:
            arch, _ = pf._architecture(m)
        except PlannerInputError:
            assert m.active_params < m.params or m.kv_latent_dim, mid       # MoE or MLA: refused
            continue
        n = sum(p.numel() for p in pf.build_model(m, arch, m.num_layers, torch.bfloat16, "meta").parameters())
        text = m.params - m.vision_params - m.mtp_params - (0 if m.tied_embeddings else m.hidden_size * m.vocab_size)
        assert n == pytest.approx(text, rel=0.01), mid
        built += 1
    assert built >= 4           # qwen3-8b, -14b, -32b, qwen3.6-27b, llama-3.1-8b, -70b


def test_a_hybrid_shape_runs_its_gated_deltanet_layers_on_the_cpu(tmp_path):
    # 4 of 8 layers run: the model's own pattern cut, 3 linear then 1 full; forward x 2 for all
    rows, cap = _capture(tmp_path, "specforge-eagle3", HYBRID, "qwen3_5_text", 4)
    assert cap["layer_types_run"] == ["linear_attention"] * 3 + ["full_attention"] and cap["scale"] == 2
    for e, t in rows:
        assert read_file(tmp_path / e.path).data_bytes == t * 528


def test_the_calibration_round_trips_through_estimate(tmp_path, capsys):
    from planner.cli.main import main
    m = manifest()
    mp, cal, work = tmp_path / "m.yaml", tmp_path / "cal.json", tmp_path / "work"
    mp.write_text(dump_manifest(m))
    work.mkdir()
    assert main(["preflight", "--manifest", str(mp), "--dir", str(work), "--test-mb", "2", "--rows", "4",
                 "--quiet", "--out", str(cal)]) == 0
    said = capsys.readouterr().out
    assert os.listdir(work) == []                                        # nothing left behind
    c = rc.load(cal)
    label = f"measured by preflight on {pf.host_name()}, {c.created_at[:10]}"
    assert said.startswith(f"preflight: {label} (layout specforge-eagle3, model custom:small)")
    assert "2 of 8 layers run, the forward scaled x 4" in said and "not measured: " in said
    assert c.measured_by == label and c.elapsed_from.startswith(label) and c.data_bytes_per_token == 528
    assert c.rows_measured == 4 and c.layers == [1, 3, 4, 8] and c.tokens_per_s_per_gpu > 0
    outs = []
    for extra in ([], ["--calibration", str(cal)]):
        assert main(["estimate", "--manifest", str(mp), "--json", *extra]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    a, b = outs
    # what it claims: the rate, the overhead per file, the bytes per token (528 measured = 528 tabled)
    assert b["measured"]["label"] == label and b["measured"]["replaces"] == [
        "bytes_per_token", "file_overhead_bytes", "extraction.prefill_tokens_per_s_per_gpu"]
    assert b["extraction"]["prefill_tokens_per_s_per_gpu"] == pytest.approx(c.tokens_per_s_per_gpu)
    assert a["bytes_per_token"] == b["bytes_per_token"] == 528
    # storage moves by the overhead alone: 992 files x (round(measured overhead) - the table's 1,536)
    assert b["storage_bytes"] - a["storage_bytes"] == 992 * (round(c.overhead_bytes_per_file) - 1536)
    for same in ("conversations", "samples", "tokens", "files", "unpadded_tokens", "hidden_state_bytes_per_token"):
        assert a[same] == b[same], same
    measured = [x for x in b["assumptions"] if x["tag"] == "measured"]
    assert [x["name"] for x in measured] == ["bytes per token in the files", "overhead per file", "capture rate"]
    assert {x["source"] for x in measured} == {label}


def test_max_minutes_bounds_the_steps(tmp_path, monkeypatch):
    # the bound spent from the start (the clock's time left is 0, not 6 ms of a real clock, which a fast
    # machine did not spend before the disk test began): the disk test writes no file (no rate), and the
    # capture stops after the one row it always runs once its model is built
    monkeypatch.setattr(pf._Clock, "left", lambda self: 0.0)
    r = pf.run(manifest(), pf.Options(dir=str(tmp_path), test_mb=2, rows=4, max_minutes=0.0001))
    assert r.disk["files"] == 0 and r.disk["write_bytes_per_s"] is None and r.capture["rows"] == 1
    assert r.calibration.rows_measured == 1 and os.listdir(tmp_path) == []


def test_ctrl_c_while_capturing_leaves_no_file_behind(tmp_path):
    def interrupt(line):
        if line.startswith("capture: 1 of"):        # the first row's file is written
            assert list(tmp_path.glob(f"{pf.PREFIX}*/run/*/*"))
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        pf.run(manifest(), pf.Options(dir=str(tmp_path), test_mb=2, rows=4, progress=interrupt))
    assert os.listdir(tmp_path) == []


def test_a_disk_too_small_for_the_test_is_refused_in_one_line(tmp_path):
    # an injected statvfs: 70 MB free; the test needs 2 MB (--test-mb) + 4 rows' files (1 MB each for
    # the header's allowance, + their tokens x 528 bytes) + the 64 MiB (67.1 MB) it leaves free: over 73 MB
    small = lambda path: SimpleNamespace(f_bavail=70_000, f_frsize=1000)    # noqa: E731
    with pytest.raises(PlannerInputError) as exc:
        pf.run(manifest(), pf.Options(dir=str(tmp_path), test_mb=2, rows=4, statvfs=small))
    assert exc.value.field == "--dir" and "70.0 MB free" in exc.value.allowed and "\n" not in str(exc.value)
    assert os.listdir(tmp_path) == []


@contextlib.contextmanager
def _tmpfs(path: Path, size: str):
    path.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                                           capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here (not root, or no permission): the injected statvfs test covers it")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], capture_output=True)


def _cli(*args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "planner", "preflight", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def test_a_real_tmpfs_too_small_is_refused_by_the_cli_in_one_line(tmp_path):
    mp = tmp_path / "m.yaml"
    mp.write_text(dump_manifest(manifest()))
    with _tmpfs(tmp_path / "small", "8m") as disk:
        p = _cli("--manifest", str(mp), "--dir", str(disk), "--test-mb", "2", "--rows", "4")
        out, err = p.communicate(timeout=120)
        assert p.returncode == 2 and out == "", err
        assert err.count("\n") == 1 and err.startswith("planner: error: --dir: ") and "8.4 MB free" in err
        assert os.listdir(disk) == []


def test_sigterm_while_writing_leaves_no_file_behind(tmp_path):
    mp = tmp_path / "m.yaml"
    mp.write_text(dump_manifest(manifest()))
    work = tmp_path / "work"
    work.mkdir()
    # signalled once its first file is there (the disk test's, then the capture's 400 rows: it is still running)
    p = _cli("--manifest", str(mp), "--dir", str(work), "--test-mb", "50", "--rows", "400", "--quiet")
    deadline = time.monotonic() + 120
    try:
        while not list(work.glob(f"{pf.PREFIX}*/*/*")) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert p.poll() is None, p.communicate()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143 and "terminated" in err, err
    assert list(work.iterdir()) == []


def test_the_stored_length_follows_the_layouts_padding_and_cap():
    eff = lambda padding, cap=200, sort=False: SimpleNamespace(padding=padding, max_seq_len=cap,   # noqa: E731
                                                               sort_by_length=sort)
    # a row of 100 tokens in a batch whose others have 300 and 50
    assert pf.stored_length([100, 300, 50], eff("none")) == 100                # its own length
    assert pf.stored_length([100, 170, 50], eff("batch")) == 170               # its batch's longest
    assert pf.stored_length([100, 300, 50], eff("batch")) == 200               # that, capped at 200
    assert pf.stored_length([100, 300, 50], eff("batch", sort=True)) == 100    # sorted batches: its own
    assert pf.stored_length([100], eff("max_length")) == 200                   # every row at the cap
    assert pf.stored_length([100, 300], eff("batch", cap=None)) == 300         # no cap


def test_what_preflight_cannot_build_is_refused_in_one_line():
    moe = ModelSpec(id="moe", hidden_size=64, num_layers=2, full_attention_layers=2, num_q_heads=4, num_kv_heads=2,
                    head_dim=16, vocab_size=512, intermediate_size=128, params=2e6, active_params=1e6)
    with pytest.raises(PlannerInputError, match="expert counts"):
        pf._architecture(moe)
    assert pf._architecture(SMALL)[0] == "llama" and pf._architecture(HYBRID)[0] == "qwen3_5_text"
    with pytest.raises(PlannerInputError, match="one file per row"):
        pf._layout_spec(manifest("deepspec").scenario)
    with pytest.raises(PlannerInputError, match="fp8"):
        pf._layout_spec(manifest().scenario.with_changes(hidden_dtype="fp8"))
    for bad in (dict(layers_run=0), dict(rows=True), dict(max_minutes=float("nan")), dict(device="tpu"),
                dict(dir="/nonexistent/x")):
        with pytest.raises(PlannerInputError):
            pf.check_options(pf.Options(**bad))


def test_a_hostile_label_in_a_calibration_file_is_refused(tmp_path):
    raw = json.loads(rc.dump(_small_calibration()))
    raw["measured_by"] = "measured by preflight on \x1b[31mevil\n, 2026-12-06"
    with pytest.raises(PlannerInputError, match="measured_by"):
        rc.parse(json.dumps(raw).encode(), "cal.json")


def _small_calibration():
    return rc.RunCalibration(
        created_at="2026-12-06T00:00:00+00:00", planner_version="0", layout="speculators", model="small",
        hidden_dtype="bf16", layers=[1], manifest_rows=1, rows_planned=1, rows_measured=0, files_measured=0,
        files_read=0, files_skipped=rc.Skipped(count=0, reasons={}, examples=[]), bytes_measured=0, bytes_planned=0,
        tokens_measured=None, tokens_planned=0, bytes_ratio=None, tokens_ratio=None, data_bytes_per_token=None,
        overhead_bytes_per_file=None, sizes_only=False, per_row=None, elapsed_hours=None, elapsed_from="x",
        rows_per_hour=None, tokens_per_hour=None, gpus=1, tokens_per_s_per_gpu=None,
        forecast=rc.Forecast(rows_remaining=1, tokens_remaining=None, hours_remaining=None, storage_bytes=0,
                             storage_bytes_low=0, storage_bytes_high=0, disk_free_bytes=None, disk_free_from="x",
                             disk_full_hours=None))
