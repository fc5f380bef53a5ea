"""Training GPU memory and the overhead floor per pipeline (issue 33 items 2 and 3), worked by hand.

Qwen3-8B (models.yaml): H 4096, kv 8 x 128 = 1,024, V 151,936. EAGLE-3 as SpecForge trains it
(layouts.yaml specforge-eagle3): one draft layer, n_aux 3, 7 TTT steps, a trained 32,000-token head, a
full-vocabulary teacher, batch 1 per GPU (specforge/config/schema.py:512). Its parameters:
  layer P(2H) / 2 = 218,103,808 + fc 3H x H = 50,331,648 + head 4096 x 32,000 = 131,072,000 -> 399,507,456
Memory per GPU on 16 trainers (planner/phases/training.py memory_parts), at a row of T tokens:
  weights 2 P = 799,014,912; gradients + optimizer 14 P / 16 = 349,569,024;
  frozen embedding and head 4 V H = 2,489,319,424        (fixed: 3,637,903,360)
  activations 7 T x (34 x 4096 + 32,000 x 8) = 7 T x 395,264, + the teacher's labels T x 32,000 x 4
  captured states T x 3 x 4096 x 2 = 24,576 T
H100 SXM usable: 80e9 x 0.9 - 2e9 = 70e9 bytes (65.19 GiB)."""
import pytest

from planner import plan
from planner.phases.training import memory_gib
from tests.unit.planner.phases.test_training import rows

GIB = 2 ** 30
P = 399_507_456
FIXED = 799_014_912 + 349_569_024 + 2_489_319_424


def test_eagle3_memory_by_part_at_a_1000_token_row():
    t = plan(rows(1000, 500, "specforge-eagle3")).training
    assert t.drafter_params == P and t.memory_row_tokens == 1000
    parts = {k: v * GIB for k, v in t.memory_parts_gib.items()}
    assert parts["drafter weights"] == pytest.approx(799_014_912)
    assert parts["gradients and optimizer"] == pytest.approx(349_569_024)
    assert parts["frozen embedding and head"] == pytest.approx(2_489_319_424)
    # 7,000 x 395,264 = 2,766,848,000 + labels 128,000,000 = 2,894,848,000
    assert parts["activations"] == pytest.approx(2_894_848_000)
    assert parts["captured states"] == pytest.approx(24_576_000)
    # 6,557,327,360 bytes = 6.107 GiB; the band scales the activations x0.5-1.5: 4.759-7.455 GiB
    assert t.memory_gib_per_gpu * GIB == pytest.approx(6_557_327_360)
    assert t.memory_gib_per_gpu_low * GIB == pytest.approx(6_557_327_360 - 1_447_424_000)
    assert t.memory_gib_per_gpu_high * GIB == pytest.approx(6_557_327_360 + 1_447_424_000)
    assert t.fits and t.memory_capacity_gib * GIB == pytest.approx(70e9)
    # online adds the target's bf16 weights over the 16 trainers (models.yaml weight_bytes)
    from planner.presets.specs import model_presets
    share = model_presets()["qwen3-8b"].weight_bytes("bf16") / 16
    assert t.online_memory_gib_per_gpu * GIB == pytest.approx(6_557_327_360 + share)


def test_a_long_row_does_not_fit_and_the_named_fixes_fit_when_replanned():
    # T 24,000: activations 168,000 x 395,264 = 66,404,352,000 + labels 3,072,000,000; captured
    # 589,824,000; + fixed 3,637,903,360 = 73,704,079,360 bytes = 68.64 GiB > 65.19: does not fit
    p = plan(rows(24_000, 2000, "specforge-eagle3"))
    t = p.training
    assert t.memory_gib_per_gpu * GIB == pytest.approx(73_704_079_360)
    assert not t.fits
    f = next(f for f in p.findings if f.code == "training-memory")
    assert f.severity == "blocks"
    # the fixes, each re-counted: a cap of 12,000 (half the row): 84,000 x 395,264 = 33,202,176,000 + 1,536,000,000 +
    # 294,912,000 + 3,637,903,360 = 38,670,991,360 = 36.02 GiB; 6 TTT steps: 6 x 24,000 x 395,264 +
    # 3,072,000,000 + 589,824,000 + 3,637,903,360 = 64,217,743,360 = 59.81 GiB; 8x the GPUs only shards the
    # optimizer (349,569,024 -> 43,696,128): 73.4e9 > 70e9, not named
    assert "a sequence cap of 12,000 tokens (36.0 GiB per GPU)" in f.text
    assert "6 TTT steps (59.8 GiB per GPU)" in f.text
    assert "training GPUs (" not in f.text
    # ... and re-planned with each, the plan fits and the blocking finding is gone
    capped = plan(rows(24_000, 2000, "specforge-eagle3").with_changes(max_seq_len=12_000))
    assert capped.training.fits and capped.training.memory_gib_per_gpu * GIB == pytest.approx(38_670_991_360)
    fewer = plan(rows(24_000, 2000, "specforge-eagle3", ttt_steps=6))
    assert fewer.training.fits and fewer.training.memory_gib_per_gpu * GIB == pytest.approx(64_217_743_360)
    for q in (capped, fewer):
        assert not any(x.code == "training-memory" for x in q.findings)
    more = plan(rows(24_000, 2000, "specforge-eagle3").with_changes(
        training={"gpu": "h100-sxm", "gpus": 128, "epochs": 3, "disk": "nvme-gen4"}))
    assert not more.training.fits


def test_memory_gib_band_scales_only_the_activations():
    parts = {"drafter weights": 2 * GIB, "activations": 4 * GIB}
    assert (memory_gib(parts), memory_gib(parts, 0), memory_gib(parts, 1)) == (6.0, 4.0, 8.0)


def test_eagle_floor_is_per_step_and_ttt_pass_and_dflash_keeps_its_per_token_floor():
    # SpecForge EAGLE-3, batch 1: 1,000 rows / 16 GPUs = 62.5 steps an epoch x 7 passes x 0.030234 s
    # = 13.227375 s; at 3 TTT steps 62.5 x 3 x 0.030234 = 5.668875 s: the floor follows the unroll
    seven = plan(rows(1000, 500, "specforge-eagle3", disk="node-raid0")).training
    three = plan(rows(1000, 500, "specforge-eagle3", disk="node-raid0", ttt_steps=3)).training
    assert seven.optimizer_steps_per_epoch == 62.5 and seven.overhead_term == "per optimizer step x TTT step"
    assert seven.overhead_hours_per_epoch * 3600 == pytest.approx(62.5 * 7 * 0.030234, rel=1e-9)
    assert three.overhead_hours_per_epoch * 3600 == pytest.approx(62.5 * 3 * 0.030234, rel=1e-9)
    assert seven.bound == "overhead" and "0.03023 s per optimizer step x TTT step" in seven.bound_reason
    # speculators packs rows into 8,192-token packs, one per GPU per step (dataloader.py:52-80): 1e6
    # stored tokens / 8,192 / 16 = 7.6294 steps x 3 passes x 0.030234 = 0.691997 s
    spec = plan(rows(1000, 500, "speculators", disk="node-raid0")).training
    assert spec.optimizer_steps_per_epoch == pytest.approx(1e6 / 8192 / 16, rel=1e-12)
    assert spec.overhead_hours_per_epoch * 3600 == pytest.approx(1e6 / 8192 / 16 * 3 * 0.030234, rel=1e-9)
    # its memory row is the pack, whatever the rows' length
    assert spec.memory_row_tokens == 8192
    # DFlash: the per-token floor, 1e6 x 0.00025468 / 16 = 15.9175 s
    dfl = plan(rows(1000, 500, "specforge-dflash", disk="node-raid0")).training
    assert dfl.overhead_term == "per token"
    assert dfl.overhead_hours_per_epoch * 3600 == pytest.approx(1e6 * 0.00025468 / 16, rel=1e-4)


def test_a_packed_dflash_trainer_pays_its_floor_once_a_pack():
    # speculators' DFlash packs rows into 8,192-token packs, anchors per pack (models/dflash/core.py:359-367):
    # one pass per optimizer step at 0.030234 s, 1e6 / 8,192 / 16 = 7.6294 steps -> 0.230668 s an epoch,
    # where SpecForge's DFlash (rows one by one) keeps the per-token floor (15.9175 s)
    t = plan(rows(1000, 500, "speculators-dflash", disk="node-raid0")).training
    assert t.overhead_term == "per optimizer step"
    assert t.overhead_hours_per_epoch * 3600 == pytest.approx(1e6 / 8192 / 16 * 0.030234, rel=1e-9)


def test_the_assumption_row_names_the_eagle_floor_per_step():
    # 1,000 rows / 16 GPUs = 62.5 steps x 7 passes x 0.030234 s = 13.227375 s an epoch: 1e6 / 13.227375
    # = 75,601 tokens/s at most
    p = plan(rows(1000, 500, "specforge-eagle3", disk="node-raid0"))
    a = next(x for x in p.assumptions if x.name == "training per-sample floor and band")
    assert a.value.startswith("0.03023 s per optimizer step x TTT step per trainer GPU (62 steps x 7 TTT passes "
                              "an epoch on 16 x h100-sxm: at most 75,601 tok/s)")
    assert "specforge-eagle3-68k-8xh100" in a.source and "an extrapolation" not in a.value
