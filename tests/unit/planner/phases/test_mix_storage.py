"""The storage phase in its own module and the plan that composes the phases (issue 19): drop_last
written once, tensor parallelism known before the nodes, no phase writing into another's result, and
the figures trim and the lossless fixes read (plan.figures) equal to the full plan's. Figures worked by
hand in the comments."""
from __future__ import annotations

import pytest

from planner import plan
from planner.phases.padding import captured_rows
from planner.planning import figures
from planner.scenario import Scenario, UniformMix, default_scenario
from tests.helpers import assumed

TB = 1e12


def test_drop_last_keeps_whole_capture_batches_by_hand():
    # 1,000 rows in batches of 32: 31 whole batches = 992 rows; 8 rows in the partial batch are dropped
    assert captured_rows(1000, 32, True) == 992
    assert captured_rows(1000, 32, False) == 1000
    assert captured_rows(64, 32, True) == 64
    # SpecForge's DFlash layout (batch 32, drop_last) on 1,000 rows of one length (1,000 tokens, under
    # its 2,048-token cap, so padding to the batch's longest row adds nothing): 992 rows, 992,000 tokens
    p = plan(Scenario(uniform=UniformMix(samples=1000, tokens=1000)))
    assert (p.capture_batch_size, p.drop_last) == (32, True)
    assert p.samples == 992 and p.tokens == pytest.approx(992_000, rel=1e-12)
    assert any("8 of 1,000 rows are never captured" in w for w in p.warnings)


def test_tensor_parallel_decides_the_writing_nodes_before_the_nodes_are_planned():
    # DeepSeek-V3 in bf16 is 671B x 2 bytes = 1,342 GB of weights: 8 RTX PRO 6000 (96 GB, about 86 GB
    # usable each) hold about 690 GB, 16 hold about 1,380 GB: tensor parallelism 16. 40 GPUs on 5 nodes
    # of 8 make 40 // 16 = 2 groups of 2 nodes each: 4 nodes write, the fifth idles and holds nothing,
    # so each writing node holds a quarter of the bytes
    s = default_scenario().with_changes(model="deepseek-v3", extraction_gpu="rtx-pro-6000", extraction_gpus=40,
                                        disk_capacity_tb=None)
    p = plan(s)
    assert p.extraction.tensor_parallel == 16 and p.extraction.replicas == 2
    assert (p.nodes.extraction_nodes, p.nodes.writing_nodes) == (5, 4)
    assert p.storage_per_node_bytes == pytest.approx(p.storage_bytes_compressed / 4, rel=1e-12)


@pytest.mark.parametrize("changes", [{}, {"layout": "specforge-eagle3", "unit": "turn"},
                                     {"throughput": {"mode": "fixed"}, "transfer": {"method": "object_store"}},
                                     {"placement": "shared", "extraction_gpus": 16}])
def test_figures_are_the_plans_figures(changes):
    """trim's steps read figures(); its answer is checked against plan(): both must be one arithmetic."""
    s = default_scenario().with_changes(**changes)
    f, p = figures(s), plan(s, band=False)
    for name in ("storage_bytes_compressed", "samples", "conversations", "transfer_hours", "wall_days_offline"):
        assert getattr(f, name) == getattr(p, name), name
    assert f.extraction.gpu_hours == p.extraction.gpu_hours
    assert f.cost_usd.total_offline == p.cost_usd.total_offline


def test_lossless_fixes_are_the_plans_of_the_changed_scenario():
    # the default mix as SpecForge pads it does not fit one node's 30.72 TB disk: the fix names a capture
    # batch of 1 and length-sorted batches first, each with the storage and dollars of its own full plan;
    # neither fits one node's disk alone (issue 35), so each is offered on the 2 nodes it needs
    s = default_scenario()
    p = plan(s)
    f = next(f for f in p.findings if f.code == "disk-capacity")
    for label, change in (("a capture batch of 1", {"capture_batch_size": 1}),
                          ("length-sorted capture batches", {"sort_by_length": True})):
        q = plan(s.with_changes(**change), band=False)
        assert "disk-capacity" in {x.code for x in q.findings}
        assert f"{label} ({q.storage_bytes_compressed / TB:,.1f} TB: storage (" in f.fix
        both = plan(s.with_changes(**change, extraction_gpus=16), band=False)
        assert "disk-capacity" not in {x.code for x in both.findings}
        assert (f"{label} on 2 extraction nodes (16 GPUs): {both.storage_bytes_compressed / TB:,.1f} TB (from "
                f"{p.storage_bytes_compressed / TB:,.1f}), {both.storage_per_node_bytes / TB:,.2f} TB on each node, "
                f"${both.cost_usd.total_offline:,.0f} offline") in f.fix


def test_composing_writes_into_no_phase_result():
    # break-even is the costs' figure, shown on the plan's training; the training phase's own result
    # (figures().training) is left as the phase made it
    s = default_scenario()
    f, p = figures(s), plan(s)
    assert p.training.breakeven_epochs == p.cost_usd.breakeven_epochs
    assert f.training.breakeven_epochs is None
    assert f.training is not p.training
    # the plan's disk-capacity finding carries the lossless fixes; the nodes phase's own does not
    mine = next(x for x in p.findings if x.code == "disk-capacity")
    theirs = next(x for x in p.nodes.warnings if x.code == "disk-capacity")
    assert mine.fix.startswith("lossless first: ") and not theirs.fix.startswith("lossless first")


def test_a_component_the_cap_empties_is_flagged_as_costing_not_noted():
    # issue 35: modelopt-eagle3's 3,072-token cap skips longer rows (overflow "skip"); agentic's
    # trajectories are nearly all longer, so of its 15,000 rows only the plan's training_rows stay:
    # fewer than 5% (EMPTY_SHARE), and the finding says so at the "costs" level, naming the rows dropped
    from planner import default_scenario, plan
    p = plan(default_scenario().with_changes(layout="modelopt-eagle3"))
    agentic = next(c for c in p.components if c.id == "agentic")
    assert agentic.rows == 15_000 and agentic.training_rows < 0.05 * 15_000
    found = [f for f in p.findings if f.components == ["agentic"] and f.code in ("component-empty", "cap-truncates")]
    assert [(f.code, f.severity) for f in found] == [("component-empty", "costs")]
    assert found[0].text.startswith(f"agentic: the 3,072-token cap drops {15_000 - agentic.training_rows:,.0f} of "
                                    "its 15,000 rows") and "adds almost nothing" in found[0].text
    assert "untick it" in found[0].fix
    # the default layout cuts long rows at 2,048 instead of dropping them: agentic keeps its rows, a note
    d = plan(default_scenario())
    assert [f.code for f in d.findings if f.components == ["agentic"]][0] == "cap-truncates"


def test_the_pipeline_values_are_the_layouts_until_the_scenario_sets_them():
    # SpecForge's EAGLE-3 layout: a capture batch of 32 padded to its longest row, from its code line
    a = assumed(layout="specforge-eagle3")
    assert (a["capture batch"].value, a["capture batch"].tag) == ("32 rows, padded to the batch's longest row",
                                                                  "published")
    assert a["capture batch"].source.startswith("SpecForge EAGLE-3 (3 aux layers + last): SpecForge "
                                                "scripts/prepare_hidden_states.py:138")
    assert (a["sample unit"].value, a["sample unit"].tag) == ("one row per conversation", "published")
    # a batch of 1 set in the scenario: no padding, yours, naming the layout's default
    a = assumed(layout="specforge-eagle3", capture_batch_size=1)
    assert (a["capture batch"].value, a["capture batch"].tag) == ("1 rows, each row stored at its own length", "yours")
    assert a["capture batch"].source == ("set in the scenario; the layout's default: SpecForge "
                                         "scripts/prepare_hidden_states.py:138 (--batch-size default 32)")
