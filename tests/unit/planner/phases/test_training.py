"""Training worked by hand from the presets: the drafter's FLOPs per drafter kind as the pipelines run
them (planner/presets/drafter_kinds.py), offline on 16 GPUs (two nodes of 8, one disk each) disk-read bound and
compute bound, online (drafter + target forward every epoch), and disaggregated (capture streams
to trainers over the node network).

Qwen3-8B (models.yaml): H 4096, 32 Q heads x 128 = q 4096, 8 KV heads x 128 = kv 1024, MLP I 12,288,
vocab V 151,936. One drafter decoder layer with attention input d (planner/presets/drafter_kinds.py):
    P(d) = 2 d (q + 2 kv) + 2 q H + 6 H I
    P(H)  = 2 x 4096 x 6144 + 2 x 4096 x 4096 + 6 x 4096 x 12,288 =  50,331,648 + 33,554,432 + 301,989,888
          = 385,875,968
    P(2H) = 2 x 8192 x 6144 + 33,554,432 + 301,989,888 = 436,207,616
"""
import pytest

from planner import Scenario, plan
from planner.scenario import Disaggregated, Training, UniformMix
from tests.helpers import assumed


def rows(tokens: float, supervised: float, layout: str, samples: int = 1000, disk: str = "nvme-gen4", **kw):
    """`samples` rows of `tokens` tokens (`supervised` in the loss mask), kept whole (no cap, no capture
    padding, no regeneration), a drafter trained on 16 x H100 SXM for 3 epochs."""
    return Scenario(uniform=UniformMix(samples=samples, tokens=tokens, response_tokens=supervised), regenerate=False,
                    model="qwen3-8b", layout=layout, max_seq_len="none", capture_batch_size=1, compression=1.0,
                    training=Training(gpu="h100-sxm", gpus=16, epochs=3, disk=disk, **kw))


# EAGLE-3 as SpecForge trains it (layouts.yaml specforge-eagle3: 3 aux layers + the last, so the fc reads
# n_aux = 3 x H; a trained 32,000-token draft head, 3 passes; a no-grad teacher pass of the full target
# head once per token; one draft layer run over every position at each of the TTT steps). Per token of
# a 1,000-token row (causal attention: 1,000^2 / 2 pairs per row = 500 keys per token):
FC = 2 * 2 * 3 * 4096 * 4096             # fc 3H -> H, weight gradient only:            201,326,592
TEACHER = 2 * 4096 * 151_936             # full-vocabulary target head, no grad:      1,244,659,712
STEP = 3 * 436_207_616 + 3 * 2 * 4096 * 32_000 + 3 * 4 * 4096 * 500
#      layer fwd+bwd 1,308,622,848 + trained head 786,432,000 + attention 24,576,000 = 2,119,630,848


def test_eagle3_one_and_seven_ttt_steps():
    seven = plan(rows(1000, 500, "specforge-eagle3")).training      # SpecForge's ttt_length 7
    one = plan(rows(1000, 500, "specforge-eagle3", ttt_steps=1)).training
    assert seven.ttt_steps == 7 and "ttt_steps" in seven.recipe_from_layout
    assert one.ttt_steps == 1 and "ttt_steps" not in one.recipe_from_layout
    # 7 steps: 7 x 2,119,630,848 + 201,326,592 + 1,244,659,712 = 16,283,402,240 FLOPs per token
    assert seven.flops_per_token == FC + TEACHER + 7 * STEP == 16_283_402_240
    # 1 step: 2,119,630,848 + 201,326,592 + 1,244,659,712 = 3,565,617,152
    assert one.flops_per_token == FC + TEACHER + STEP == 3_565_617_152
    # speculators' recipe (3 steps, a frozen head, 2 passes) is another layout: fewer FLOPs per token
    assert plan(rows(1000, 500, "speculators")).training.flops_per_token < seven.flops_per_token


def test_dflash_cost_stops_growing_with_length_past_the_anchor_budget():
    # DFlash as SpecForge trains it: 5 captured layers into the fc (n_aux 5), 5 draft layers, anchors
    # min(512, supervised), blocks of 16, the frozen full-vocabulary head at every draft position in
    # checkpointed chunks (3 passes), no teacher. Per row of T tokens, A anchors, Q = 16 A positions:
    #   fc 2 x 2 T x 5 H^2 + context K/V 3 x 5 x T x 4 H kv + layers 3 x 5 x Q x P(H)
    #   + attention 3 x 5 x 4 q x (A x T/2 x 16 + Q x 16) + head 3 x 2 Q H V
    short = plan(rows(1000, 500, "specforge-dflash")).training
    # T 1,000, S 500 -> A 500, Q 8,000:
    #   fc 335,544,320,000 + K/V 251,658,240,000 + layers 15 x 8,000 x 385,875,968 = 46,305,116,160,000
    #   + attention 245,760 x (500 x 500 x 16 + 128,000) = 1,014,497,280,000
    #   + head 6 x 8,000 x 4096 x 151,936 = 29,871,833,088,000          -> 77,778,649,088,000
    assert short.flops_per_sample == pytest.approx(77_778_649_088_000, rel=1e-12)
    assert (short.num_anchors, short.block_size) == (512, 16)
    long = plan(rows(4000, 2000, "specforge-dflash")).training
    # T 4,000, S 2,000 -> A capped at 512, Q 8,192:
    #   fc 1,342,177,280,000 + K/V 1,006,632,960,000 + layers 15 x 8,192 x 385,875,968 = 47,416,438,947,840
    #   + attention 245,760 x (512 x 2,000 x 16 + 131,072) = 4,058,744,094,720
    #   + head 6 x 8,192 x 622,329,856 = 30,588,757,082,112               -> 84,412,750,364,672
    assert long.flops_per_sample == pytest.approx(84_412_750_364_672, rel=1e-12)
    # four times the tokens, 1.085 times the FLOPs: only the context terms grow with the length
    assert long.flops_per_sample / short.flops_per_sample == pytest.approx(1.0853, rel=1e-4)
    # fewer anchors: the draft positions (layers and head) shrink with them
    few = plan(rows(1000, 500, "specforge-dflash", num_anchors=100)).training
    assert few.flops_parts["head at the draft positions"] == pytest.approx(6 * 1600 * 4096 * 151_936 * 1000)


# EAGLE-3, 7 steps, 1,000 rows of 1,000 tokens on 16 x H100 (989e12 BF16) at the preset training MFU 0.32:
#   1e6 tokens x 16,283,402,240 / (16 x 989e12 x 0.32) = 3.215725 s per epoch
COMPUTE_S = 1e6 * 16_283_402_240 / (16 * 989e12 * 0.32)
# issue 33: EAGLE's overhead floor is per optimizer step x TTT step, 0.030234 trainer-GPU s
# (training_throughput.yaml `step_overhead`), SpecForge's batch 1 per GPU: 1,000 rows / 16 GPUs = 62.5
# steps x 7 passes x 0.030234 = 13.227375 s per epoch, the pace here (it was the per-token floor,
# 1e6 x 0.00025468 / 16 = 15.9175 s, before issue 33: DFlash keeps that one)
OVERHEAD_S = 1000 / 16 * 7 * 0.030234
# the stored bytes: 1e6 tokens x (8 x 4096 + 16) = 32.784e9, plus 1,000 files x (1,536 header + 2,048
# half block) = 3.584e6 -> 32,787,584,000
STORED = 32_787_584_000
# online adds the target's forward: 2 x 7,577,670,144 (8.2e9 without the untied 4096 x 151,936
# embedding) + 2 x 36 x 4096 x 1,000 = 15,450,252,288 FLOPs per token / (16 x 989e12 x 0.5 prefill MFU)
TARGET_S = 1e6 * 15_450_252_288 / (16 * 989e12 * 0.5)


def test_offline_disk_read_bound_in_one_node():
    # 64 GPUs in one node of 64: the node's one nvme-gen4 reads 2.90 GB/s: 32,787,584,000 / 2.9e9 =
    # 11.30606 s, above the floor 1,000 / 64 x 7 x 0.030234 = 3.306844 s and the FLOPs (3.2157 x 16 / 64)
    t = plan(rows(1000, 500, "specforge-eagle3").with_changes(
        training={"gpu": "h100-sxm", "gpus": 64, "gpus_per_node": 64, "epochs": 3, "disk": "nvme-gen4"})).training
    assert t.compute_hours_per_epoch == pytest.approx(1000 / 64 * 7 * 0.030234 / 3600, rel=1e-9)
    assert t.read_hours_per_epoch == pytest.approx(STORED / 2.9e9 / 3600, rel=1e-9)
    assert t.offline_bound == "disk read"
    assert t.offline_wall_hours == pytest.approx(3 * 11.306063 / 3600, rel=1e-6)
    assert t.offline_gpu_hours == pytest.approx(64 * 3 * 11.306063 / 3600, rel=1e-6)
    assert t.samples_per_s == pytest.approx(1000 / 11.306063, rel=1e-6)
    assert t.tokens_per_s == pytest.approx(1e6 / 11.306063, rel=1e-6)


def test_offline_overhead_bound_on_a_fast_raid():
    t = plan(rows(1000, 500, "specforge-eagle3", disk="node-raid0")).training
    # node-raid0 reads 14 GB/s: 32,787,584,000 / 28e9 = 1.17099 s; FLOPs 3.2157 s; the floor 13.227375 s
    assert t.read_hours_per_epoch == pytest.approx(STORED / 28e9 / 3600, rel=1e-9)
    assert t.overhead_hours_per_epoch == pytest.approx(OVERHEAD_S / 3600, rel=1e-9)
    assert t.offline_bound == "per-sample overhead"
    assert t.offline_wall_hours == pytest.approx(3 * OVERHEAD_S / 3600, rel=1e-9)


def test_offline_compute_bound_on_a_slow_gpu():
    # on 16 x RTX 4090 (165e12 BF16): 1e6 x 16,283,402,240 / (16 x 165e12 x 0.32) = 19.2748 s of FLOPs,
    # above the floor 13.227375 s and the read (2 nodes x 14 GB/s: 1.17099 s)
    t = plan(rows(1000, 500, "specforge-eagle3").with_changes(
        training={"gpu": "rtx-4090", "gpus": 16, "epochs": 3, "disk": "node-raid0"})).training
    assert t.offline_bound == "compute"
    assert t.offline_wall_hours == pytest.approx(3 * 1e6 * 16_283_402_240 / (16 * 165e12 * 0.32) / 3600, rel=1e-9)


def test_online_runs_the_target_every_epoch():
    t = plan(rows(1000, 500, "specforge-eagle3")).training
    # 1e6 x 15,450,252,288 / 7.912e15 = 1.952762 s per epoch
    assert t.target_forward_hours_per_epoch == pytest.approx(TARGET_S / 3600, rel=1e-9)
    # the drafter at its floor (15.9175 s), then the target's forward
    assert t.online_wall_hours == pytest.approx(3 * (OVERHEAD_S + TARGET_S) / 3600, rel=1e-9)
    assert t.online_gpu_hours == pytest.approx(16 * 3 * (OVERHEAD_S + TARGET_S) / 3600, rel=1e-9)
    # the drafter: one layer at 2H (436,207,616 / 2) + fc 3H x H (50,331,648) + the trained head
    # H x 32,000 (131,072,000) = 399,507,456 parameters; 16.4e9 + 16 x 0.4e9 fits 16 x 70 GB
    assert t.drafter_params == 218_103_808 + 50_331_648 + 131_072_000
    assert t.online_fits


def test_eight_gpus_are_one_node():
    s = rows(1000, 500, "specforge-eagle3")
    t = plan(s.with_changes(training=Training(gpu="h100-sxm", gpus=8, disk="nvme-gen4"))).training
    # one node: 32,787,584,000 / 2.9e9 = 11.3061 s per epoch
    assert t.read_hours_per_epoch == pytest.approx(STORED / 2.9e9 / 3600, rel=1e-9)


def test_a_disaggregated_plan_bound_by_the_network():
    # DFlash (5 layers of 4096 in bf16 streamed: 40,960 bytes per token) over a 1 Gb/s TCP node network
    # at the parallel-transfer efficiency 0.5 (hardware.yaml): 1e9 / 8 x 0.5 / 40,960 = 1,525.88 tokens/s,
    # far below what 8 H100s capture or 16 H100s train
    s = rows(1000, 500, "specforge-dflash").with_changes(node_network_gbps=1.0, extraction_gpu="h100-sxm",
                                                          disaggregated=Disaggregated(train_gpus=16))
    t = plan(s).training
    assert t.disaggregated_bound == "network"
    rate = 1e9 / 8 * 0.5 / 40_960
    assert t.disaggregated_rates_tokens_per_s["network"] == pytest.approx(rate, rel=1e-12)
    # 1e6 tokens / 1,525.88 = 655.36 s per epoch; 3 epochs; nothing regenerated
    assert t.disaggregated_hours_per_epoch == pytest.approx(1e6 / rate / 3600, rel=1e-12)
    assert t.disaggregated_wall_hours == pytest.approx(3 * 655.36 / 3600, rel=1e-9)
    # every epoch keeps the 8 capture and the 16 trainer GPUs busy
    assert (t.disaggregated_capture_gpus, t.disaggregated_train_gpus) == (8, 16)
    assert t.disaggregated_gpu_hours == pytest.approx(24 * 3 * 655.36 / 3600, rel=1e-9)
    # RDMA reaches 0.85 of the line: 1.7 times the rate
    r = plan(s.with_changes(node_network="rdma")).training
    assert r.disaggregated_rates_tokens_per_s["network"] == pytest.approx(rate * 0.85 / 0.5, rel=1e-12)
    # a fast network: the slower of capture and training binds instead
    fast = plan(s.with_changes(node_network_gbps=400.0)).training
    assert fast.disaggregated_bound in ("capture", "training")


# ---------------------------------------------------------------- issue 22: training bound by its supply
def test_pace_is_the_slowest_stage():
    from planner.phases.training import pace
    # a disaggregated run of 1,000-token samples: 2 inference GPUs x 17 samples/s = 34 samples/s of
    # supply (34,000 tokens/s) against trainers that compute 50 samples/s (50,000 tokens/s): the supply binds
    assert pace(compute=50_000, supply=2 * 17 * 1000) == (34_000, "supply")
    # six trainers at the floor 2.5468e-4 s per token: 6 / 2.5468e-4 = 23,558.97 tokens/s, below both
    assert pace(compute=50_000, supply=34_000, overhead=6 / 2.5468e-4) == (pytest.approx(23_558.97, rel=1e-6),
                                                                           "overhead")
    # offline: the reader at 20,000 tokens/s is the slowest; nothing given is no bound
    assert pace(compute=50_000, io=20_000) == (20_000, "io")
    assert pace(compute=50_000) == (50_000, "compute")


def test_online_adds_the_targets_forward_to_the_drafter():
    from planner.phases.training import online_pace
    # the target's forward at 100,000 tokens/s, then the drafter at 50,000: 1 / (1/50,000 + 1/100,000)
    # = 33,333.3 tokens/s, the drafter's compute the larger part
    assert online_pace(compute=50_000, supply=100_000) == (pytest.approx(33_333.333, rel=1e-6), "compute")
    # a slower forward (40,000): 1 / (1/50,000 + 1/40,000) = 22,222.2, the supply the larger part
    assert online_pace(compute=50_000, supply=40_000) == (pytest.approx(22_222.222, rel=1e-6), "supply")
    # the floor (30,000) under the compute: 1 / (1/30,000 + 1/100,000) = 23,076.9, the overhead binds the drafter
    assert online_pace(compute=50_000, supply=100_000, overhead=30_000) == (pytest.approx(23_076.923, rel=1e-6),
                                                                            "overhead")


def test_band_is_the_prediction_interval_of_the_residuals():
    from planner.distributions import band_from_residuals
    # residuals 0.1, -0.1, 0.3: mean 0.1, sd sqrt((0 + 0.04 + 0.04) / 2) = 0.2; t(0.95, 2 df) = 2.920;
    # half width 2.920 x 0.2 x sqrt(1 + 1/3) = 0.674345 -> exp(0.1 -+ 0.674345) = 0.563073 .. 2.169171
    lo, hi = band_from_residuals([0.1, -0.1, 0.3])
    assert (lo, hi) == (pytest.approx(0.563073, rel=1e-5), pytest.approx(2.169171, rel=1e-5))
    # one residual gives no spread: no band to claim
    assert band_from_residuals([0.2]) == (0.0, float("inf"))


def test_a_disaggregated_plan_bound_by_its_supply_carries_the_band():
    from planner.phases.training import rate_band
    # DFlash on 16 H100 trainers fed by two H100 capture GPUs over a 400 Gb/s network: the capture
    # supply is 2 x one GPU's prefill rate (the extraction model's, about 26,800 tokens/s), under 16
    # trainers' floor (16 / 2.5468e-4 = 62,824 tokens/s) and their FLOPs (16 x 989e12 x 0.32 /
    # 77,778,649,088 per token = 65,101 tokens/s; test_dflash_cost_stops_growing_with_length_past_the_anchor_budget)
    s = rows(1000, 500, "specforge-dflash").with_changes(node_network_gbps=400.0, extraction_gpu="h100-sxm",
                                                          extraction_gpus=2, disaggregated=Disaggregated(train_gpus=16))
    p = plan(s)
    t = p.training
    supply = t.stage_rates["disaggregated"]["supply"]
    assert supply == pytest.approx(2 * p.extraction.prefill_tokens_per_s_per_gpu, rel=1e-12)
    assert 50_000 < supply < 60_000
    assert t.stage_rates["disaggregated"]["overhead"] == pytest.approx(16 / 0.00025468, rel=1e-9)
    assert t.stage_rates["disaggregated"]["compute"] == pytest.approx(16 * 989e12 * 0.32 / 77_778_649_088, rel=1e-9)
    assert t.bounds["disaggregated"] == "supply" and t.disaggregated_bound == "capture"
    # 1e6 tokens per epoch at the supply's rate
    assert t.disaggregated_hours_per_epoch == pytest.approx(1e6 / supply / 3600, rel=1e-12)
    # offline on a fast RAID: the floor binds (test_offline_overhead_bound_on_a_fast_raid); online too
    # (the target's forward, 1.95 s, is under the drafter's floor, 15.92 s)
    assert t.bounds["offline"] == "overhead" and t.bounds["online"] == "overhead"
    # the band: the preset's multipliers on the rate, 0.618 .. 1.449 (refitted below)
    assert (t.rate_low, t.rate_high) == rate_band() == (0.618, 1.449)
    assert t.samples_per_s_low == pytest.approx(0.618 * t.samples_per_s, rel=1e-12)
    assert t.samples_per_s_high == pytest.approx(1.449 * t.samples_per_s, rel=1e-12)


def test_the_training_band_is_the_fit_of_the_published_runs():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
    import fidelity

    from planner.phases.training import rate_band
    lo, hi = fidelity.training_band()
    # the residuals move with the extraction model (the capture supply) and the drafter FLOPs: after
    # such a change, write the band `bench/fidelity.py --fit` prints into training_throughput.yaml
    assert rate_band() == (pytest.approx(lo, abs=6e-4), pytest.approx(hi, abs=6e-4)), \
        f"training_throughput.yaml band is {rate_band()}, the published runs give ({lo:.3f}, {hi:.3f})"


def test_a_held_out_publication_does_not_calibrate_its_own_runs_capture_supply():
    # SpecForge's Domino page (SFDOM) publishes both the 1 + 7 H200 run (50.1 samples/s) and the capture
    # server's rate it rests on (throughput.yaml specforge-q8b-h200-capture, 27,000 tokens/s). Held out, the
    # run must not be predicted from that rate (27,000 / 550 = 49.09 samples/s, "supply"): the capture
    # falls back to the roofline (about 32,300 tokens/s = 58.7 samples/s), and the floor refitted on
    # TorchSpec's run alone, 6 / 23.5 / 1,000 = 2.55319e-4 s per token, binds: 7 / 2.55319e-4 / 550
    # = 7 x 23.5 x 1,000 / 6 / 550 = 49.848 samples/s
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
    import fidelity
    row = next(r for r in fidelity.training_area() if r["id"] == "specforge-domino-h200")
    assert row["source"] == "SFDOM"
    assert row["predicted"] == pytest.approx(7 * 23.5 * 1000 / 6 / 550, rel=1e-9)
    assert row["bound"] == "overhead"


def test_the_published_runs_bound_the_training_mfu_only_from_below():
    # hardware.yaml says the training MFU is the lowest value the runs allow, not a fit: at the preset's
    # MFU no run is compute-bound, so a higher MFU (0.6) predicts every run the same; just below (0.25)
    # some run is compute-bound and its prediction drops
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
    import fidelity

    from planner.presets.specs import efficiency, efficiency_source
    mfu = efficiency("training_mfu")
    at, high, low = (fidelity.training_rows(mfu=m) for m in (mfu, 0.6, mfu - 0.07))
    assert all(r["bound"] != "compute" for r in at)
    assert [r["predicted"] for r in at] == [r["predicted"] for r in high]
    assert any(r["bound"] == "compute" for r in low)
    assert "not a fit" in efficiency_source("training_mfu")


def test_the_recipe_rows_are_the_layouts_until_the_scenario_sets_them():
    a = assumed(layout="specforge-eagle3")
    # SpecForge's EAGLE-3 recipe: 7 TTT steps, from its config line
    assert (a["training-time-test steps"].value, a["training-time-test steps"].tag) == ("7", "published")
    assert a["training-time-test steps"].source.endswith("specforge/config/schema.py:522 (ttt_length 7)")
    assert (a["epochs"].value, a["drafter parameters"].tag) == ("3", "estimate")
    a = assumed(layout="specforge-eagle3", training=Training(ttt_steps=5, drafter_params=1e9, epochs=4))
    assert (a["training-time-test steps"].value, a["training-time-test steps"].tag) == ("5", "yours")
    assert a["training-time-test steps"].source.startswith("set in the scenario; the layout's default: ")
    # 1e9 / 1e9 = 1.00B, given: yours
    assert (a["drafter parameters"].value, a["drafter parameters"].tag) == ("1.00B", "yours")
    assert a["epochs"].value == "4"
