"""The tornado's ranges come from hardware.yaml (read here straight from the file) and stay inside
the Scenario's bounds."""
from pathlib import Path

import pytest
import yaml

from planner import Scenario
from planner.decisions.sensitivity import _variants, sensitivity
from planner.scenario import Throughput, Transfer, UniformMix

HW = yaml.safe_load((Path(__file__).resolve().parents[4] / "planner" / "presets" / "hardware.yaml").read_text())
EFF = HW["efficiency"]


def small(**kw):
    return Scenario(uniform=UniformMix(samples=100, tokens=1000, response_tokens=500), max_seq_len=None,
                    model="qwen3-8b", extraction_gpu="h100-sxm", **kw)


def test_roofline_ranges_are_the_presets():
    v = {x.assumption: x for x in _variants(small(compression=1.5))}
    assert (v["compression"].low.compression, v["compression"].high.compression) == tuple(EFF["compression"]["range"])
    assert v["prefill MFU"].low.throughput.prefill_mfu == EFF["prefill_mfu"]["range"][0] == 0.30
    assert v["prefill MFU"].high.throughput.prefill_mfu == EFF["prefill_mfu"]["range"][1] == 0.55
    lo, hi = EFF["decode_bandwidth"]["range"]
    assert (v["decode bandwidth efficiency"].low.throughput.decode_bandwidth_efficiency,
            v["decode bandwidth efficiency"].high.throughput.decode_bandwidth_efficiency) == (lo, hi)
    # the link's range is the parallel-tools entry, 0.3-0.8 (the code once swept 0.1-0.8)
    assert (v["link efficiency"].low.transfer.efficiency, v["link efficiency"].high.transfer.efficiency) == \
        tuple(HW["link_efficiency"]["parallel"]["range"]) == (0.3, 0.8)
    assert (v["link efficiency"].low_label, v["link efficiency"].high_label) == ("0.3", "0.8")
    assert (v["training MFU"].low.training.mfu, v["training MFU"].high.training.mfu) == \
        tuple(EFF["training_mfu"]["range"])
    # tokens per sample: the relative range 0.8-1.2 around the scenario's own scale
    assert (v["tokens per sample"].low.length_scale, v["tokens per sample"].high.length_scale) == \
        pytest.approx((0.8, 1.2))
    assert (v["tokens per sample"].low_label, v["tokens per sample"].high_label) == ("-20%", "+20%")


def test_fixed_mode_and_no_link():
    v = {x.assumption: x for x in _variants(small(throughput=Throughput(mode="fixed"),
                                                  transfer=Transfer(method="drives")))}
    assert (v["tokens/s"].low.throughput.tokens_per_s, v["tokens/s"].high.throughput.tokens_per_s) == \
        tuple(EFF["fixed_tokens_per_s"]["range"]) == (80, 120)
    assert "link efficiency" not in v and "prefill MFU" not in v


def test_ranges_are_clamped_to_the_bounds():
    # length_scale 100 is the upper bound: +20% would be 120, kept at 100; -20% gives 80
    v = {x.assumption: x for x in _variants(small(length_scale=100))}
    assert (v["tokens per sample"].low.length_scale, v["tokens per sample"].high.length_scale) == (80, 100)


def test_swings_move_the_metrics_the_right_way():
    s = small(compression=1.5, transfer=Transfer(method="link", link_gbps=1))
    w = {x.assumption: x for x in sensitivity(s)}
    # storage on disk is raw / compression: 1.0x is 1.5 times the 1.5x base, 2.0x is 0.75 of it
    assert w["compression"].low["storage_tb"] == pytest.approx(1.5 * w["compression"].base["storage_tb"])
    assert w["compression"].high["storage_tb"] == pytest.approx(0.75 * w["compression"].base["storage_tb"])
    link = w["link efficiency"]
    assert link.low["wall_days"] > link.base["wall_days"] > link.high["wall_days"]


def test_the_node_figures_are_swept_where_they_matter():
    from planner.decisions.sensitivity import sensitivity
    from planner.scenario import Scenario, Training, Transfer
    gathered = Scenario(extraction_gpus=32, extraction_nodes=4, transfer=Transfer(method="none"),
                        training=Training(gpus=16, nodes=2))
    swings = {w.assumption: w for w in sensitivity(gathered)}
    assert gathered.gather_applies and "node network Gb/s" in swings
    # 100 Gb/s is half the default 200: the gather, bound by 4 senders' 11.6 GB/s of disk, is not
    # slowed while 2 receivers x 100 Gb/s / 8 x 0.5 = 12.5 GB/s stays above it: the offline wall stays
    w = swings["node network Gb/s"]
    assert w.low_label == "100" and w.high_label == "400"
    assert w.low["wall_days"] == pytest.approx(w.base["wall_days"]) == pytest.approx(w.high["wall_days"])
    # (64 capture GPUs: with per-phase calibration (issue 22) 32 of them no longer write 5 GB/s)
    shared = gathered.with_changes(placement="shared", extraction_gpus=64, extraction_nodes=8)
    swings = {w.assumption: w for w in sensitivity(shared)}
    assert "shared filesystem GB/s" in swings and "node network Gb/s" not in swings
    # 5 GB/s against 100 GB/s of filesystem: capture and the reads slow down at the low end
    w = swings["shared filesystem GB/s"]
    assert w.low["wall_days"] > w.base["wall_days"] >= w.high["wall_days"]
    assert "node network Gb/s" not in {w.assumption for w in sensitivity(Scenario())}
