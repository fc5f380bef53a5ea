"""planner preflight's own parts (planner/cli/preflight.py): the text it prints from a result, and --out
written only over a calibration file. The measuring itself: runs/test_preflight.py."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from planner.cli.main import main
from planner.cli.preflight import _is_calibration, text
from planner.runs.calibration import KIND


def result(rate=1234.56, disk_rate=2 * 10**9, names=("H100 80GB",), per_token=20480.0):
    c = SimpleNamespace(measured_by="preflight on n1\x1b[31m", layout="specforge-eagle3", model="qwen3-8b",
                        tokens_per_s_per_gpu=rate, data_bytes_per_token=per_token, overhead_bytes_per_file=1234.4,
                        notes=["one\nnote"])
    disk = {"free_bytes": 2 * 10**12, "bytes_per_node": 500 * 10**9, "fits": True, "write_bytes_per_s": disk_rate,
            "read_bytes_per_s": None, "files": 3, "file_bytes": 10**6}
    gpus = {"count": len(names), "names": list(names), "from": "nvidia-smi", "against_plan": ["plan: 8 per node"]}
    cap = {"rows": 4, "tokens": 12345, "device": "cpu", "tabled_tokens_per_s_per_gpu": 5000.0, "layers_run": 2,
           "layers": 36, "scale": 18.0}
    return SimpleNamespace(calibration=c, disk=disk, gpus=gpus, capture=cap, not_measured=["network", "training"])


def test_the_text_hand_worked():
    # 2e12 B = 2.0 TB free, 5e11 = 500.0 GB a node; 2e9 B/s = 2.0 GB/s; the read rate None prints as 0 B;
    # 36 layers / 2 run = x 18; control characters escaped (printable); 1234.4 bytes a file rounds to 1,234
    assert text(result()).splitlines() == [
        "preflight: preflight on n1\\x1b[31m (layout specforge-eagle3, model qwen3-8b)",
        "  disk         2.0 TB free against 500.0 GB the plan writes per node: fits",
        "  disk rate    2.0 GB/s written (fsync'd), 0 B/s read back, 3 files of 1.0 MB",
        "  GPUs         1: H100 80GB (from nvidia-smi)",
        "               plan: 8 per node",
        "  capture      4 rows, 12,345 tokens on cpu: 1,234.6 tokens/s per GPU (the plan's table: 5,000.0); "
        "2 of 36 layers run, the forward scaled x 18",
        "  files        20,480.0 bytes of tensors per token, 1,234 bytes per file beside them",
        "note: one\\x0anote",
        "not measured: network; training"]


def test_what_was_not_measured_says_so():
    lines = text(result(rate=None, disk_rate=0, names=(), per_token=None)).splitlines()
    assert lines[2] == "  disk rate    not measured"
    assert lines[3] == "  GPUs         0: nvidia-smi"                         # no names: where it looked
    assert "on cpu: not measured (the plan's table" in lines[5]
    assert not any(x.startswith("  files") for x in lines)


@pytest.mark.parametrize("head, ours", [
    (json.dumps({"kind": KIND, "rest": 1}).encode(), True),
    (json.dumps({"kind": "something else"}).encode(), False),
    (b"[1, 2]", False),
    (b"not json", False),
    (b"\xff\xfe", False),
    (b"[" * 100_000, False),            # nested past the recursion limit: not ours, no crash
])
def test_only_a_calibration_file_is_replaceable(head, ours):
    assert _is_calibration(head) is ours


def test_a_foreign_out_file_is_kept_before_anything_runs(tmp_path, capsys):
    foreign = tmp_path / "notes.json"
    foreign.write_text('{"mine": true}\n')
    # checked before the manifest is read: a missing manifest is not reached
    assert main(["preflight", "--manifest", str(tmp_path / "none.yaml"), "--out", str(foreign), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("planner: error: --out") and foreign.read_text() == '{"mine": true}\n'
