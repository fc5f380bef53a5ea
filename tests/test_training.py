"""Training worked by hand from the presets: offline on 16 GPUs (two nodes of 8, one disk each),
disk-read bound and compute bound, and online (drafter + target forward every epoch)."""
import pytest

from planner import Scenario, plan
from planner.scenario import Training, UniformMix


def trained(disk: str, **kw):
    """1,000 x 1,000 tokens of Qwen3-8B in the seed-article layout (5 x 4096 x 2 + 4 = 40,964 bytes
    per token: 40.964e9 bytes), a 1e9-parameter drafter on 16 x H100 SXM for 3 epochs."""
    return Scenario(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=0), max_seq_len=None,
                    regenerate=False, model="qwen3-8b", layout="seed-article", compression=1.0,
                    training=Training(gpu="h100-sxm", gpus=16, epochs=3, drafter_params=1e9, disk=disk, **kw))


# FLOPs per trained token: 6 x 1e9 (drafter) + 4 x 4096 x 151,936 (frozen LM head, Qwen3-8B vocab)
#   = 6e9 + 2,489,319,424 = 8,489,319,424
# compute per epoch: 1e6 tokens x 8.489319424e9 / (16 x 989e12 x 0.35 training MFU) = 1.53281 s
COMPUTE_S = 1.53281
# online adds the target's forward pass: 2 x 8.2e9 + 2 x 36 x 4096 x 1,000 = 16.694912e9 FLOPs per token
#   / (16 x 989e12 x 0.5 H100 prefill MFU): 1e6 x 16.694912e9 / 7.912e15 = 2.11007 s per epoch
TARGET_S = 2.11007


def test_offline_disk_read_bound_over_two_nodes():
    t = plan(trained("nvme-gen4")).training
    assert t.flops_per_token == 8_489_319_424
    assert t.compute_hours_per_epoch == pytest.approx(COMPUTE_S / 3600, rel=1e-5)
    # 16 GPUs = 2 nodes, each reading its own nvme-gen4 at 2.90 GB/s:
    # 40.964e9 / (2 x 2.9e9) = 7.06276 s per epoch (one node alone would need 14.13 s)
    assert t.read_hours_per_epoch == pytest.approx(7.06276 / 3600, rel=1e-5)
    assert t.offline_bound == "disk read"
    # 3 epochs x 7.06276 s = 21.1883 s = 0.00588563 h; x 16 GPUs = 0.0941701 GPU-h
    assert t.offline_wall_hours == pytest.approx(0.00588563, rel=1e-5)
    assert t.offline_gpu_hours == pytest.approx(0.0941701, rel=1e-5)


def test_offline_compute_bound_on_a_fast_raid():
    t = plan(trained("node-raid0")).training
    # node-raid0 reads 14 GB/s: 40.964e9 / (2 x 14e9) = 1.463 s < 1.53281 s of compute
    assert t.read_hours_per_epoch == pytest.approx(1.463 / 3600, rel=1e-9)
    assert t.offline_bound == "compute"
    # 3 x 1.53281 s = 4.59843 s = 0.00127734 h
    assert t.offline_wall_hours == pytest.approx(0.00127734, rel=1e-5)


def test_online_runs_the_target_every_epoch():
    t = plan(trained("nvme-gen4")).training
    assert t.target_forward_hours_per_epoch == pytest.approx(TARGET_S / 3600, rel=1e-5)
    # 3 x (1.53281 + 2.11007) s = 10.92865 s = 0.00303574 h; x 16 = 0.0485718 GPU-h
    assert t.online_wall_hours == pytest.approx(0.00303574, rel=1e-5)
    assert t.online_gpu_hours == pytest.approx(0.0485718, rel=1e-5)
    # the target (16.4 GB) and 16 bytes per drafter parameter (16 GB) fit 16 x 70 GB usable
    assert t.online_fits


def test_eight_gpus_are_one_node():
    t = plan(trained("nvme-gen4").with_changes(training=Training(gpu="h100-sxm", gpus=8, drafter_params=1e9,
                                                                 disk="nvme-gen4"))).training
    # one node: 40.964e9 / 2.9e9 = 14.1255 s per epoch
    assert t.read_hours_per_epoch == pytest.approx(14.1255 / 3600, rel=1e-5)
