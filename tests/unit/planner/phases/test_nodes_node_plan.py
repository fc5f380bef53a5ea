"""planner.phases.nodes.node_plan called directly, with disks whose rates make each term easy to tell apart:
an idle extraction node's share, the gather's receiving disks and training that reads its shards in
place (three mutants that survived the plan-level tests of tests/unit/planner/phases/test_nodes.py, issue 19).

Every case: 3 extraction nodes of 8 GPUs of which tensor parallelism leaves 2 writing (`writers=2`,
the third idle), 6 TB stored, node network 800 Gb/s over TCP (hardware.yaml link_efficiency: 0.5,
so 800e9 / 8 x 0.5 = 50 GB/s a node, never the slowest here).
  capture disk:  write 2 GB/s, read 3 GB/s
  training disk: write 1 GB/s, read 5 GB/s"""
from __future__ import annotations

import pytest

from planner.phases.nodes import node_plan
from planner.scenario import Scenario, Training, Transfer, UniformMix

STORED = 6e12
DISK = {"write_gb_s": 2.0, "read_gb_s": 3.0}
TRAINING_DISK = {"write_gb_s": 1.0, "read_gb_s": 5.0}
GB = 1e9


def _scenario(training: Training, **kw) -> Scenario:
    return Scenario(uniform=UniformMix(samples=1000, tokens=1000), extraction_gpu="rtx-pro-6000", extraction_gpus=24,
                    extraction_nodes=3, gpus_per_node=8, node_network_gbps=800, node_network="tcp",
                    transfer=Transfer(method="none"), training=training, **kw)


def _plan(s: Scenario):
    return node_plan(s, stored_bytes=STORED, writers=2, disk=DISK, training_disk=TRAINING_DISK)


def test_the_network_is_what_the_comments_assume():
    assert _plan(_scenario(Training(gpu="b200", gpus=32, nodes=4, gpus_per_node=8))).node_network_bytes_per_s \
        == pytest.approx(50 * GB)


def test_an_idle_node_holds_nothing_so_the_two_writers_share_the_bytes():
    # 6 TB over the 2 nodes that write (not the 3 nodes): 3 TB each, over a 2.5 TB disk; over 3 nodes
    # it would be 2 TB each and pass. Capture writes at 2 x 2 GB/s = 4 GB/s (not 3 x 2 = 6).
    n = _plan(_scenario(Training(gpu="b200", gpus=32, nodes=4, gpus_per_node=8), disk_capacity_tb=2.5))
    assert n.writing_nodes == 2 and n.extraction_nodes == 3
    assert n.storage_per_node_bytes == pytest.approx(3e12)
    assert n.capture_write_bytes_per_s == pytest.approx(4 * GB)
    f = [w for w in n.warnings if w.code == "disk-capacity"]
    assert len(f) == 1 and "3.00 TB of 6.00 TB over 2 nodes" in f[0].text
    # a 3 TB disk holds exactly its 3 TB share: no finding
    n = _plan(_scenario(Training(gpu="b200", gpus=32, nodes=4, gpus_per_node=8), disk_capacity_tb=3.0))
    assert "disk-capacity" not in {w.code for w in n.warnings}


def test_the_gather_is_bound_by_the_receiving_training_disks():
    # 2 writers send to 4 training nodes (B200, so not the capture nodes: a gather):
    #   sending network   2 x 50 GB/s          = 100 GB/s
    #   sending disks     2 x 3 GB/s (read)    =   6 GB/s
    #   receiving network 4 x 50 GB/s          = 200 GB/s
    #   receiving disks   4 x 1 GB/s (write)   =   4 GB/s   <- the slowest
    # 6e12 B / 4e9 B/s = 1,500 s = 0.41667 h; each training node keeps 6 / 4 = 1.5 TB and training
    # reads at 4 x 5 GB/s = 20 GB/s
    n = _plan(_scenario(Training(gpu="b200", gpus=32, nodes=4, gpus_per_node=8)))
    assert n.gather_bound == "receiving disks"
    assert n.gather_bytes == pytest.approx(STORED)
    assert n.gather_bytes_per_s == pytest.approx(4 * GB)
    assert n.gather_hours == pytest.approx(1500 / 3600)
    assert n.training_storage_per_node_bytes == pytest.approx(1.5e12)
    assert n.training_read_bytes_per_s == pytest.approx(20 * GB)


def test_training_in_place_reads_the_writers_own_disks_and_only_theirs():
    # training on the same 3 nodes of 8 RTX PRO 6000: no gather; each writer's shard (3 TB) is read
    # where it was written, by the 2 nodes that hold one: 2 x 3 GB/s (the capture disk's read) = 6 GB/s,
    # not 3 nodes x 3 = 9 GB/s, nor the training disk's 2 x 5 = 10 GB/s
    n = _plan(_scenario(Training(gpu="rtx-pro-6000", gpus=24, nodes=3, gpus_per_node=8)))
    assert n.gather_bytes == 0 and n.gather_hours == 0 and n.gather_bound == ""
    assert n.training_storage_per_node_bytes == pytest.approx(3e12)
    assert n.training_read_bytes_per_s == pytest.approx(6 * GB)
    assert n.training_read_bound == "local disks"
