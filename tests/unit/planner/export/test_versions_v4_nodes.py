"""The version 4 -> 5 migration of disk_capacity_tb for GPU counts that are not multiples of 8 (a
mutant that survived tests/unit/planner/export/test_versions.py, whose counts were all multiples of 8; issue 19).

Version 4 checked all the storage against disk_capacity_tb; version 5 checks each node's shard, the
nodes being as many nodes of 8 as the GPUs need: ceil(gpus / 8), never floor (planner/export/versions.py)."""
from __future__ import annotations

import pytest

from planner.export.versions import migrate_link
from planner.scenario import Scenario


@pytest.mark.parametrize("gpus, cap, want", [
    (9, 30.72, 15.36),      # ceil(9 / 8) = 2 nodes (floor: 1, left at 30.72)
    (12, 30.72, 15.36),     # ceil(12 / 8) = 2
    (17, 30.72, 10.24),     # ceil(17 / 8) = 3 (floor: 2, 15.36)
    (20, 30.0, 10.0),       # ceil(2.5) = 3 (floor: 2, 15.0; round: 2)
    (23, 30.0, 10.0),       # ceil(2.875) = 3 (floor: 2)
    (25, 40.0, 10.0),       # ceil(3.125) = 4 (round: 3, 13.33)
])
def test_v4_disk_capacity_is_divided_by_the_ceiling_of_gpus_over_8(gpus, cap, want):
    s = migrate_link({"extraction_gpus": gpus, "disk_capacity_tb": cap}, 4)
    assert float(s["disk_capacity_tb"]) == pytest.approx(want)


def test_a_migrated_12_gpu_link_checks_each_of_its_2_nodes_against_half():
    # the migrated scenario validates: 12 GPUs on ceil(12 / 8) = 2 nodes, each disk 30.72 / 2 = 15.36 TB
    s = Scenario(**migrate_link({"extraction_gpus": 12, "disk_capacity_tb": 30.72}, 4))
    assert s.extraction_node_count == 2
    assert s.disk_capacity_tb == pytest.approx(15.36)
