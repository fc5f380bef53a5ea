"""Dollars per phase and the break-even epoch count, worked by hand from the presets.

The case: 1,000 samples of 1,000 tokens (500 regenerated) of Qwen3-8B in SpecForge's EAGLE-3 layout
(8 x 4096 + 16 = 32,784 bytes per token + 3,584 per file: 32,787,584,000 bytes = 0.032787584 TB);
extraction at a fixed 100 tok/s x 5 on 2 x H100 SXM at $3/GPU-h; S3 storage for 2 months with an
object-store transfer over 8 Gb/s x 0.5; the EAGLE-3 drafter (7 TTT steps) trained 3 epochs on
16 x H100 SXM at $2/GPU-h, reading a node RAID-0. Training seconds per epoch as worked out in
test_training.py: the drafter at its per-sample overhead floor 15.9175 s (its FLOPs take 3.215725 s at
MFU 0.32; issue 22), the target's forward (online) 1.952762 s.
"""
import pytest

from planner import Scenario, plan
from planner.presets.specs import GPUSpec
from planner.scenario import Costs, Throughput, Training, Transfer, UniformMix
from tests.helpers import assumed


def priced(**kw):
    base = dict(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=500), max_seq_len="none",
                capture_batch_size=1, regenerate=True, model="qwen3-8b", layout="specforge-eagle3", compression=1.0,
                extraction_gpu="h100-sxm", extraction_gpus=2, throughput=Throughput(mode="fixed", tokens_per_s=100,
                                                                                    batching=5),
                transfer=Transfer(method="object_store", link_gbps=8, efficiency=0.5),
                costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0, storage="s3",
                            storage_months=2),
                training=Training(gpu="h100-sxm", gpus=16, epochs=3, disk="node-raid0"))
    base.update(kw)
    return Scenario(**base)


def test_cost_of_each_phase():
    c = plan(priced()).cost_usd
    # extraction: 500,000 generated tokens / (500 tok/s x 2 GPUs) = 500 s = 0.138889 h of wall-clock,
    # capture rides along in the fixed mode: 2 x 0.138889 = 0.277778 GPU-h x $3 = $0.833333
    assert c.extraction == pytest.approx(0.833333, rel=1e-5)
    # all of it is regeneration (decode hours x 2 GPUs x $3), which online training pays too
    assert c.regeneration == pytest.approx(0.833333, rel=1e-5)
    # S3 (hardware.yaml): $23/TB-month x 0.032787584 TB x 2 months = $1.508229
    assert c.storage == pytest.approx(1.5082288640, rel=1e-9)
    # egress $0.09/GB x 32.787584 GB = $2.950883
    assert c.transfer == pytest.approx(2.95088256, rel=1e-9)
    # training offline, at EAGLE's per-step floor (issue 33: 1,000 rows / 16 GPUs x 7 TTT passes x
    # 0.030234 s = 13.227375 s an epoch; the per-token floor gave 15.9175 s, $0.424467, before):
    # 3 x 13.227375 s x 16 GPUs = 0.176365 GPU-h x $2 = $0.352730
    assert c.training_offline == pytest.approx(0.352730, rel=1e-5)
    # online: 3 x (13.227375 + 1.952762) s x 16 = 0.202402 GPU-h x $2 = $0.404804
    assert c.training_online == pytest.approx(0.404804, rel=1e-5)
    # offline total: 0.833333 + 2.950883 + 1.508229 + 0.352730 = $5.645175
    assert c.total_offline == pytest.approx(5.645175, rel=1e-6)
    # online total: the regeneration and the training with the target forward: 0.833333 + 0.404804
    assert c.total_online == pytest.approx(1.238137, rel=1e-5)


def test_break_even_epochs():
    p = plan(priced())
    # offline alone pays capture ($0 here), egress $2.950883 and storage $1.508229 = $4.459111;
    # online costs more per epoch by its target forward: 1.952762 s x 16 GPUs x $2 / 3600 = $0.0173579
    # -> offline is cheaper from 4.459111 / 0.0173579 = 256.89 epochs on
    assert p.cost_usd.breakeven_epochs == pytest.approx(256.8926, rel=1e-5)
    assert p.training.breakeven_epochs == p.cost_usd.breakeven_epochs


def test_no_break_even_when_offline_costs_more_per_epoch():
    # 64 trainers in one node reading its one nvme-gen4 (2.9 GB/s): 32.787584e9 / 2.9e9 = 11.306 s per
    # epoch offline against the floor 1,000 / 64 x 7 x 0.030234 = 3.307 s + the target's 1.952762 x 16 / 64
    # = 0.488 s online: offline never catches up
    p = plan(priced(training=Training(gpu="h100-sxm", gpus=64, gpus_per_node=64, epochs=3, disk="nvme-gen4")))
    assert p.training.offline_bound == "disk read"
    assert p.cost_usd.breakeven_epochs is None


def test_disaggregated_pays_capture_and_trainers_every_epoch():
    # a 0.25 Gb/s TCP node network (x 0.5): 15.625e6 B/s / 32,768 streamed bytes per token (4 layers x
    # 4096 x 2) = 476.84 tok/s, below the 2 x 500 tok/s the fixed rate captures: network-bound, 1e6
    # tokens take 2,097.152 s per epoch on the 2 capture GPUs at $3 and the 16 trainers at $2:
    # 2,097.152 / 3600 x (6 + 32) = $22.136604 per epoch
    p = plan(priced(node_network_gbps=0.25))
    assert p.training.disaggregated_bound == "network"
    assert p.cost_usd.training_disaggregated == pytest.approx(3 * 22.136604, rel=1e-6)
    # + the regeneration, once, on the capture GPUs: 0.138889 h x 2 x $3 = $0.833333
    assert p.cost_usd.total_disaggregated == pytest.approx(0.833333 + 3 * 22.136604, rel=1e-6)
    # offline's fixed $4.459111 over the $22.136604 - $0.117577 (13.227375 s x 16 x $2) it saves per epoch:
    # from 4.459111 / 22.019027 = 0.202512 epochs on
    assert p.cost_usd.breakeven_epochs_disaggregated == pytest.approx(0.202512, rel=1e-5)


def test_preset_prices_and_a_gpu_without_one():
    p = plan(priced(costs=Costs()))
    # h100-sxm (gpus.yaml): $1.99-3.95 -> midpoint $2.97; no storage preset given: the states travel
    # through an object store (transfer object_store), so they are paid at S3's $23/TB-month
    assert p.cost_usd.extraction_usd_per_gpu_hour == 2.97
    assert p.cost_usd.storage_usd_per_tb_month == 23.0 and p.cost_usd.storage_preset == "s3"
    card = GPUSpec(id="unpriced", memory_gb=80, bandwidth_tb_s=3, bf16_tflops=900)
    q = plan(priced(costs=Costs(), extraction_gpu="custom", custom_gpu=card))
    assert q.cost_usd.extraction == 0
    assert any(w.startswith("unpriced has no public price") for w in q.warnings)


def test_the_storage_rows_name_the_store_in_use_and_the_time_held():
    # unset: where the local placement puts the states, the nodes' own disks (hardware.yaml storage_prices
    # local: $0/TB-month, in the node price), an estimate; held the plan's timeline + keep_days (default 0)
    a = assumed()
    assert (a["storage price"].value, a["storage price"].tag) == ("the nodes' own disks (local): $0/TB-month",
                                                                  "estimate")
    assert a["storage price"].source.endswith("unset: where the placement puts the states (local disks, a shared "
                                              "filesystem's network volume, the transfer's object store)")
    assert a["storage time held"].value == "the plan's timeline + 0 days kept"
    # a shared filesystem: its network volume ($60/TB-month); a price given is yours, on the store in use
    assert assumed(placement="shared")["storage price"].value == \
        "GPU-cloud network volume (network-volume): $60/TB-month"
    a = assumed(costs=Costs(storage_usd_per_tb_month=10.5, keep_days=7))
    assert (a["storage price"].value, a["storage price"].tag) == ("the nodes' own disks (local): $10.5/TB-month",
                                                                  "yours")
    assert a["storage time held"].value == "the plan's timeline + 7 days kept"
    # S3 chosen ($23/TB-month), held 2 months as given: its own source, no "unset" clause
    a = assumed(costs=Costs(storage="s3", storage_months=2))
    assert (a["storage price"].value, a["storage price"].tag) == ("AWS S3 Standard (s3): $23/TB-month", "yours")
    assert "unset" not in a["storage price"].source
    assert (a["storage time held"].value, a["storage time held"].source) == ("2 months", "as given")
