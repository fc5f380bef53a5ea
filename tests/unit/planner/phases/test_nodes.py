"""Nodes (issue 15): per-node disk, placement local or shared, the gather phase, TP groups on nodes,
the CLI's --nodes / --gpus-per-node and the JSON fields. Figures worked by hand in the comments."""
from __future__ import annotations

import json

import pytest

from planner import plan
from planner.cli.main import main
from planner.phases.extraction import replicas_on_nodes
from planner.scenario import Scenario, Training, Transfer, UniformMix
from tests.helpers import assumed, run_cli

# 100,000 rows of 2,000 tokens on Qwen3.6-27B in the specforge-dflash layout: 51,216 bytes a token
# (5 layers x 5,120 x 2 bytes bf16 = 51,200, plus the int32 input id and the loss-mask byte pair...
# as planner/presets/layouts.py counts them: 51,216) and 3,584 bytes of file overhead a row (both printed
# by `planner estimate`), under SpecForge's 2,048-token cap and with one length, so no padding:
#   100,000 x 2,000 x 51,216 = 10,243,200,000,000 B, + 100,000 x 3,584 = 358,400,000 B
#   storage = 10,243,558,400,000 B = 10.24 TB
ROWS, TOKENS = 100_000, 2_000
STORAGE = ROWS * TOKENS * 51_216 + ROWS * 3_584
GB = 1e9


def four_nodes(**kw) -> Scenario:
    base = dict(uniform=UniformMix(samples=ROWS, tokens=TOKENS, response_tokens=500), extraction_gpus=32,
                extraction_nodes=4, gpus_per_node=8, disk="nvme-gen4", disk_capacity_tb=3.0,
                transfer=Transfer(method="none"),
                training=Training(gpu="b200", gpus=16, nodes=2, gpus_per_node=8, disk="node-raid0"))
    base.update(kw)
    return Scenario(**base)


def test_four_node_local_plan_per_node_bytes_and_gather_hand_worked():
    p = plan(four_nodes())
    assert p.storage_bytes_compressed == pytest.approx(STORAGE, rel=1e-12)
    # each of the 4 nodes holds a quarter: 2,560,889,600,000 B = 2.56 TB, under its 3 TB disk
    assert p.storage_per_node_bytes == pytest.approx(STORAGE / 4, rel=1e-12)
    assert p.nodes.training_storage_per_node_bytes == pytest.approx(STORAGE / 2, rel=1e-12)
    assert "disk-capacity" not in {f.code for f in p.findings}
    # the gather: the slowest of
    #   sending network   4 nodes x 200 Gb/s / 8 x 0.5 (TCP: parallel tools' efficiency) = 50 GB/s
    #   sending disks     4 x nvme-gen4's 2.90 GB/s read                               = 11.6 GB/s
    #   receiving network 2 x 12.5 GB/s                                                 = 25 GB/s
    #   receiving disks   2 x node-raid0's 14 GB/s write                                = 28 GB/s
    # 10,243,558,400,000 B / 11.6e9 B/s = 883.07 s = 0.24530 h
    assert p.nodes.gather_bound == "sending disks"
    assert p.nodes.gather_bytes_per_s == pytest.approx(11.6 * GB)
    assert p.gather_hours == pytest.approx(10_243_558_400_000 / 11.6e9 / 3600, rel=1e-12)
    assert p.gather_hours == pytest.approx(0.24530, abs=1e-5)
    # the gather is in the offline wall-clock: extraction + gather + transfer (none) + training
    assert p.wall_days_offline * 24 == pytest.approx(p.extraction.wall_hours + p.gather_hours
                                                      + p.training.offline_wall_hours, rel=1e-12)
    # capture writes 4 x 2.04 GB/s; training reads 2 x 14 GB/s: 10.2436e12 / 28e9 = 365.84 s a epoch
    assert p.nodes.capture_write_bytes_per_s == pytest.approx(4 * 2.04 * GB)
    assert p.training.read_hours_per_epoch == pytest.approx(STORAGE / 28e9 / 3600, rel=1e-12)
    assert p.extraction.nodes == 4 and p.training.nodes == 2


def test_a_faster_disk_makes_the_gather_network_bound():
    # nvme-gen5 reads 6.9 GB/s: 4 x 6.9 = 27.6 GB/s, so the 2 receiving nodes' 25 GB/s is the slowest
    # 10,243,558,400,000 / 25e9 = 409.74 s = 0.113818 h
    p = plan(four_nodes(disk="nvme-gen5"))
    assert p.nodes.gather_bound == "receiving nodes' network"
    assert p.gather_hours == pytest.approx(STORAGE / 25e9 / 3600, rel=1e-12)
    # RDMA reaches 0.85 of the line: 2 x 25 GB/s x 0.85 = 42.5 GB/s, now the sending disks' 27.6 GB/s
    p = plan(four_nodes(disk="nvme-gen5", node_network="rdma"))
    assert p.nodes.gather_bound == "sending disks" and p.nodes.gather_bytes_per_s == pytest.approx(27.6 * GB)


def test_per_node_disk_is_checked_per_node():
    # 2.56 TB a node: a 2.5 TB disk blocks, on every node; on 5 nodes (40 GPUs) each holds 2.05 TB and fits
    p = plan(four_nodes(disk_capacity_tb=2.5))
    f = next(f for f in p.findings if f.code == "disk-capacity")
    assert f.severity == "blocks" and "storage per node (2.56 TB of 10.24 TB over 4 nodes)" in f.text
    p = plan(four_nodes(disk_capacity_tb=2.5, extraction_gpus=40, extraction_nodes=5))
    assert "disk-capacity" not in {f.code for f in p.findings}
    assert p.storage_per_node_bytes == pytest.approx(STORAGE / 5, rel=1e-12)


def test_shared_filesystem_plan_is_bandwidth_bound():
    # a 2 GB/s shared filesystem: capture writes at min(2 GB/s, 4 nodes x 12.5 GB/s) = 2 GB/s, while
    # 32 RTX PRO 6000 could produce far more (the plan's own capture rate x 51,216 B, > 4 GB/s), so
    # capture is I/O-bound: 10,243,558,400,000 / 2e9 = 5,121.78 s = 1.42272 h of capture
    p = plan(four_nodes(placement="shared", shared_fs_gb_s=2.0, shared_capacity_tb=100))
    assert p.placement == "shared" and p.storage_per_node_bytes == 0 and p.gather_hours == 0
    assert p.nodes.capture_write_bound == "shared filesystem"
    assert p.extraction.capture_bound == "disk write"
    assert p.extraction.capture_hours == pytest.approx(STORAGE / 2e9 / 3600, rel=1e-12)
    assert p.extraction.capture_hours == pytest.approx(1.42272, abs=1e-5)
    codes = {f.code for f in p.findings}
    assert {"capture-io-bound", "shared-fs-bound"} <= codes and "disk-capacity" not in codes
    # training reads at min(2 GB/s, 2 nodes x 12.5 GB/s) = 2 GB/s: the same 1.42272 h every epoch
    assert p.training.read_hours_per_epoch == pytest.approx(STORAGE / 2e9 / 3600, rel=1e-12)
    # the shared filesystem's capacity is checked against all of it: 10.24 TB > 10 TB
    p = plan(four_nodes(placement="shared", shared_fs_gb_s=2.0, shared_capacity_tb=10))
    assert next(f for f in p.findings if f.code == "shared-capacity").severity == "blocks"


def test_a_fast_shared_filesystem_is_capped_by_the_nodes_network():
    # 1,000 GB/s of filesystem, but 4 writers x 12.5 GB/s = 50 GB/s of node network
    p = plan(four_nodes(placement="shared", shared_fs_gb_s=1000.0))
    assert p.nodes.capture_write_bound == "node network"
    assert p.nodes.capture_write_bytes_per_s == pytest.approx(50 * GB)
    assert p.nodes.training_read_bytes_per_s == pytest.approx(25 * GB)


def test_no_gather_when_training_runs_on_the_extraction_nodes_or_across_sites():
    same = four_nodes(training=Training(gpu="rtx-pro-6000", gpus=32, nodes=4, gpus_per_node=8, disk="nvme-gen4"))
    p = plan(same)
    assert p.gather_hours == 0 and "where it was written" in p.nodes.gather_note
    p = plan(four_nodes(transfer=Transfer(method="link", link_gbps=100)))
    assert p.gather_hours == 0 and p.transfer_hours > 0 and "transfer (link)" in p.nodes.gather_note


def test_tensor_parallel_groups_stay_within_nodes():
    assert replicas_on_nodes(32, 8, 2) == 16
    assert replicas_on_nodes(12, 8, 4) == 3           # one full node (2 groups) + 4 GPUs (1 group)
    assert replicas_on_nodes(12, 6, 4) == 2           # 2 nodes of 6: one group each, 2 GPUs idle a node
    assert replicas_on_nodes(32, 8, 16) == 2          # groups of 16 span two nodes of 8
    # Qwen3.6-27B in bf16 (~54 GB) on 24 GB RTX 4090s (19.6 GB usable each) needs TP 4: 2 nodes of 6
    # hold one group each and leave 2 x 2 = 4 GPUs idle (12 GPUs in nodes of 8 would hold 3 groups)
    p = plan(Scenario(uniform=UniformMix(samples=1000, tokens=1000), extraction_gpu="rtx-4090", extraction_gpus=12,
                      extraction_nodes=2, gpus_per_node=6))
    assert p.extraction.tensor_parallel == 4 and p.extraction.gpus_used == 8
    assert any(f.code == "idle-gpus" and f.text.startswith("4 of 12") for f in p.findings)


def test_scenario_refuses_nodes_that_do_not_match_the_gpus():
    with pytest.raises(ValueError, match="extraction_nodes 2 x gpus_per_node 8 = 16 GPUs, but extraction_gpus is 8"):
        Scenario(extraction_nodes=2)
    with pytest.raises(ValueError, match="training.nodes 3 x training.gpus_per_node 4 = 12"):
        Scenario(training=Training(gpus=8, nodes=3, gpus_per_node=4))
    # unset nodes follow the GPUs: 12 GPUs are 2 nodes of 8 (the last one half full)
    assert Scenario(extraction_gpus=12).extraction_node_count == 2


def test_cli_nodes_flags_and_json(capsys):
    r = run_cli("estimate", "--nodes", "4", "--train-nodes", "2", "--transfer", "none", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["extraction"]["gpus"] == 32 and d["extraction"]["nodes"] == 4
    assert d["training"]["gpus"] == 16 and d["training"]["nodes"] == 2
    assert d["placement"] == "local" and d["gather_hours"] > 0
    assert abs(d["storage_per_node_bytes"] - d["storage_bytes_compressed"] / 4) <= 1
    # the two refusals through main() in this process (the run above keeps the `python -m planner` path)
    assert main(["estimate", "--nodes", "4", "--gpus", "30"]) == 2
    assert "--gpus: 30 does not match --nodes 4 x --gpus-per-node 8 = 32 GPUs" in capsys.readouterr().err
    assert main(["estimate", "--placement", "nfs"]) == 2
    err = capsys.readouterr().err
    assert "nfs" in err and "Traceback" not in err


def test_idle_nodes_hold_nothing_and_groups_sit_on_their_own_nodes():
    from planner.phases.nodes import writing_nodes
    # TP 16 on 3 nodes of 8 (24 GPUs): one group over 2 nodes, the third idle and empty
    assert writing_nodes(3, 8, 16, 1) == 2
    # TP 4 on 3 nodes of 6: one group a node, all 3 write (not ceil(12 / 6) = 2)
    assert writing_nodes(3, 6, 4, 3) == 3
    # Llama-3.1-70B on 18 L40S in nodes of 6 at TP 4: 3 groups on 3 nodes, 3 x nvme-gen4's 2.04 GB/s
    p = plan(Scenario(uniform=UniformMix(samples=1000, tokens=1000), model="llama-3.1-70b", extraction_gpu="l40s",
                      extraction_gpus=18, gpus_per_node=6, transfer=Transfer(method="none")))
    assert p.extraction.tensor_parallel == 4 and p.extraction.replicas == 3
    assert p.nodes.writing_nodes == 3 and p.nodes.capture_write_bytes_per_s == pytest.approx(3 * 2.04 * GB)


def test_training_on_the_capture_nodes_reads_their_disks():
    # 32 RTX PRO 6000 on 4 nodes capture and train: reads come from 4 x nvme-gen4's 2.90 GB/s, not
    # 4 x node-raid0's 14 GB/s: 10,243,558,400,000 B / 11.6e9 B/s = 883.07 s an epoch
    p = plan(four_nodes(training=Training(gpu="rtx-pro-6000", gpus=32, nodes=4, gpus_per_node=8, disk="node-raid0")))
    assert p.gather_hours == 0
    assert p.training.read_hours_per_epoch == pytest.approx(STORAGE / 11.6e9 / 3600, rel=1e-12)


def test_the_training_nodes_disk_is_checked_after_the_gather():
    # each of the 2 training nodes keeps 10.24 / 2 = 5.12 TB: a 5 TB disk blocks, a 6 TB one does not
    p = plan(four_nodes(training=Training(gpu="b200", gpus=16, nodes=2, disk_capacity_tb=5.0)))
    f = next(f for f in p.findings if f.code == "training-disk-capacity")
    assert f.severity == "blocks" and "holds 5.12 TB, over its 5 TB disk" in f.text
    p = plan(four_nodes(training=Training(gpu="b200", gpus=16, nodes=2, disk_capacity_tb=6.0)))
    assert "training-disk-capacity" not in {f.code for f in p.findings}


def test_node_counts_over_the_gpu_bound_and_a_manifest_mismatch_read_in_one_line(tmp_path, capsys):
    from planner.cli.main import main as cli_main
    from planner.export.manifest import build_manifest, dump_manifest
    # 5,000 nodes x 64 = 320,000 GPUs: over the 100,000 the scenario takes, named by the flag typed
    assert cli_main(["estimate", "--nodes", "5000", "--gpus-per-node", "64"]) == 2
    assert capsys.readouterr().err.strip() == ("planner: error: --nodes: 5,000 nodes x 64 GPUs per node = 320,000 "
                                               "GPUs, over the 100,000 a plan takes")
    # a manifest whose nodes do not match its GPUs: the check's own sentence, not the scenario's dump
    text = dump_manifest(build_manifest(Scenario(extraction_gpus=24, extraction_nodes=3)))
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("extraction_gpus: 24", "extraction_gpus: 8"))
    assert cli_main(["estimate", "--manifest", str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("extraction: extraction_nodes 3 x gpus_per_node 8 = 24 GPUs, but extraction_gpus is 8; "
                        "give matching values (or leave extraction_nodes unset)"), err
    assert "{" not in err and len(err.splitlines()) == 1


def test_gpus_on_nodes_is_the_one_rule_of_nodes_and_gpus():
    import ast
    from pathlib import Path

    from planner.scenario import gpus_on_nodes
    assert gpus_on_nodes("extraction", 3, 4) == 12 and gpus_on_nodes("training", 2, 8) == 16
    # 1,563 x 64 = 100,032 GPUs: over the 100,000 either count takes (Scenario / Training `le`)
    for phase in ("extraction", "training"):
        with pytest.raises(ValueError, match="1,563 nodes x 64 GPUs per node = 100,032 GPUs, over the 100,000"):
            gpus_on_nodes(phase, 1563, 64)
    assert gpus_on_nodes("training", 1562, 64) == 99_968
    # the product of a node count and GPUs per node is written in that function only: the Scenario's
    # check, the CLI's --nodes and the sidebar's node controls all call it
    root = Path(__file__).resolve().parents[4]
    found = []
    for f in sorted([*root.glob("planner/**/*.py"), *root.glob("drafter_dashboard/**/*.py")]):
        for n in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
                sides = {ast.unparse(n.left).lower(), ast.unparse(n.right).lower()}
                if any("nodes" in s or "n_key" in s for s in sides) and any("per" in s for s in sides):
                    found.append(f"{f.relative_to(root)}: {ast.unparse(n)}")
    assert found == ["planner/scenario/model.py: nodes * per_node"], found
    for module in ("drafter_dashboard/sidebar.py", "planner/cli/_common.py"):
        assert "gpus_on_nodes(" in (root / module).read_text(encoding="utf-8"), module


def test_cli_training_nodes_over_the_bound_name_the_flag(capsys):
    from planner.cli.main import main as cli_main
    # --train-gpus-per-node alone on a base with training nodes: 2,000 x 64 = 128,000 > 100,000
    assert cli_main(["estimate", "--train-nodes", "2000", "--train-gpus-per-node", "64"]) == 2
    assert capsys.readouterr().err.strip() == ("planner: error: --train-nodes: 2,000 nodes x 64 GPUs per node = "
                                               "128,000 GPUs, over the 100,000 a plan takes")
    assert cli_main(["estimate", "--train-nodes", "3", "--train-gpus-per-node", "4", "--train-gpus", "8"]) == 2
    assert capsys.readouterr().err.strip() == ("planner: error: --train-gpus: 8 does not match --train-nodes 3 x "
                                               "--train-gpus-per-node 4 = 12 GPUs; give matching values or one of them")


def test_the_node_line_says_the_gpus_that_do_not_fill_a_node_and_a_raised_tp_groups_nodes():
    """Issue 35: `--gpus 4` on nodes of 8 said "extraction 1 x 8 GPUs"; a tensor-parallel group larger than
    the GPUs given (DeepSeek-V3's 1,342 GB of bf16 weights need TP 32 on 80 GB H100s, extraction.py's
    'tp-raised': "so the plan uses 32") said 1 node where its 32 GPUs take 32 / 8 = 4."""
    from planner.export.report import text_report
    from planner.phases.nodes import nodes_text
    assert nodes_text(1, 8, 8) == "1 x 8 GPUs"
    assert nodes_text(1, 8, 4) == "1 node (4 of its 8 GPUs)"
    assert nodes_text(2, 8, 12) == "2 nodes of 8 (12 GPUs)"      # ceil(12 / 8) = 2 nodes, the second half full
    four = plan(Scenario(extraction_gpus=4))
    assert "extraction 1 node (4 of its 8 GPUs), training 1 x 8 GPUs" in text_report(four)
    raised = plan(Scenario(model="deepseek-v3", extraction_gpu="h100-sxm"))
    assert raised.extraction.gpus_used == 32 and raised.nodes.extraction_nodes == 4
    assert "extraction 4 x 8 GPUs" in text_report(raised)
    # the 4 nodes' disks each hold a quarter: the per-node bytes are the storage / 4
    assert raised.nodes.storage_per_node_bytes == pytest.approx(raised.storage_bytes_compressed / 4, rel=1e-9)


def test_the_hardware_rows_say_what_the_node_counts_mean():
    a = assumed(extraction_gpus=4, training=Training(gpus=12))
    # 4 GPUs fill half of one 8-GPU node; 12 need two nodes of 8; neither count given: an estimate
    assert (a["nodes"].value, a["nodes"].tag) == \
        ("extraction 1 node (4 of its 8 GPUs), training 2 nodes of 8 (12 GPUs)", "estimate")
    # the H100 SXM preset (gpus.yaml): 80 GB, 3.35 TB/s, 989 BF16 TFLOPS
    assert a["extraction GPU"].value == "4 x h100-sxm (80 GB, 3.35 TB/s, 989 BF16 TFLOPS)"
    assert a["training GPU"].value == "12 x b200"
    assert a["placement"].value.startswith("each node's local disk")
    assert assumed(placement="shared")["placement"].value == "a shared filesystem"
