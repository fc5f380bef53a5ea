"""Dollars per phase and the break-even epoch count, worked by hand from the presets.

The case: 1,000 samples of 1,000 tokens (500 regenerated) of Qwen3-8B in the seed-article layout
(40,964 bytes per token: 40.964e9 bytes = 0.040964 TB); extraction at a fixed 100 tok/s x 5 on
2 x H100 SXM at $3/GPU-h; S3 storage for 2 months with an object-store transfer over 8 Gb/s x 0.5;
a 1e9-parameter drafter trained 3 epochs on 16 x H100 SXM at $2/GPU-h, reading a node RAID-0.
"""
import pytest

from planner import Scenario, plan
from planner.scenario import Costs, Throughput, Training, Transfer, UniformMix
from planner.specs import GPUSpec


def priced(**kw):
    base = dict(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=500), max_seq_len=None,
                regenerate=True, model="qwen3-8b", layout="seed-article", compression=1.0,
                extraction_gpu="h100-sxm", extraction_gpus=2, throughput=Throughput(mode="fixed", tokens_per_s=100, batching=5),
                transfer=Transfer(method="object_store", link_gbps=8, efficiency=0.5),
                costs=Costs(extraction_usd_per_gpu_hour=3.0, training_usd_per_gpu_hour=2.0, storage="s3",
                            storage_months=2),
                training=Training(gpu="h100-sxm", gpus=16, epochs=3, drafter_params=1e9, disk="node-raid0"))
    base.update(kw)
    return Scenario(**base)


def test_cost_of_each_phase():
    c = plan(priced()).cost_usd
    # extraction: 500,000 generated tokens / (500 tok/s x 2 GPUs) = 500 s = 0.138889 h of wall-clock,
    # capture rides along in the fixed mode: 2 x 0.138889 = 0.277778 GPU-h x $3 = $0.833333
    assert c.extraction == pytest.approx(0.833333, rel=1e-5)
    # all of it is regeneration (decode hours x 2 GPUs x $3), which online training pays too
    assert c.regeneration == pytest.approx(0.833333, rel=1e-5)
    # S3 (hardware.yaml): $23/TB-month x 0.040964 TB x 2 months = $1.884344
    assert c.storage == pytest.approx(1.884344, rel=1e-9)
    # egress $0.09/GB x 40.964 GB = $3.68676
    assert c.transfer == pytest.approx(3.68676, rel=1e-9)
    # training offline, compute-bound (see test_training.py): 3 x 1.53281 s x 16 GPUs = 0.0204375 GPU-h x $2
    assert c.training_offline == pytest.approx(0.0408750, rel=1e-5)
    # online: 3 x (1.53281 + 2.11007) s x 16 = 0.0485718 GPU-h x $2 = $0.0971436
    assert c.training_online == pytest.approx(0.0971436, rel=1e-5)
    # offline total: 0.833333 + 3.68676 + 1.884344 + 0.040875 = $6.445312
    assert c.total_offline == pytest.approx(6.445312, rel=1e-6)
    # online total: the regeneration and the training with the target forward: 0.833333 + 0.0971436
    assert c.total_online == pytest.approx(0.930477, rel=1e-5)


def test_break_even_epochs():
    p = plan(priced())
    # offline alone pays capture ($0 here), egress $3.68676 and storage $1.884344 = $5.571104;
    # online costs more per epoch by its target forward: 2.11007 s x 16 GPUs x $2 / 3600 = $0.0187562
    # -> offline is cheaper from 5.571104 / 0.0187562 = 297.03 epochs on
    assert p.cost_usd.breakeven_epochs == pytest.approx(297.027, rel=1e-5)
    assert p.training.breakeven_epochs == p.cost_usd.breakeven_epochs


def test_no_break_even_when_offline_costs_more_per_epoch():
    # reading from one nvme-gen4 per node (2.9 GB/s): 40.964e9 / 5.8e9 = 7.06 s per epoch offline
    # against 1.53 + 2.11 = 3.64 s online: offline never catches up
    p = plan(priced(training=Training(gpu="h100-sxm", gpus=16, epochs=3, drafter_params=1e9, disk="nvme-gen4")))
    assert p.training.offline_bound == "disk read"
    assert p.cost_usd.breakeven_epochs is None


def test_preset_prices_and_a_gpu_without_one():
    p = plan(priced(costs=Costs()))
    # h100-sxm (gpus.yaml): $1.99-3.95 -> midpoint $2.97; network-volume storage $60/TB-month
    assert p.cost_usd.extraction_usd_per_gpu_hour == 2.97
    assert p.cost_usd.storage_usd_per_tb_month == 60.0
    card = GPUSpec(id="unpriced", memory_gb=80, bandwidth_tb_s=3, bf16_tflops=900)
    q = plan(priced(costs=Costs(), extraction_gpu="custom", custom_gpu=card))
    assert q.cost_usd.extraction == 0
    assert any(w.startswith("unpriced has no public price") for w in q.warnings)
