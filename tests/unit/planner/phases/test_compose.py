"""planner/phases/compose.py: a scenario's presets resolved (one-line errors naming the field) and its phases
composed into Figures, the same figures plan() reports. The seed article's scenario (uniform samples) needs no
catalog, so these run in well under a second."""
from __future__ import annotations

import pytest

from planner.errors import PlannerInputError
from planner.phases.compose import figures, resolve, resolve_gpu, resolve_model
from planner.planning import plan
from planner.presets.specs import gpu_presets, model_presets
from planner.scenario import Scenario, seed_article_scenario


@pytest.fixture(scope="module")
def seed():
    return seed_article_scenario()


@pytest.mark.parametrize("update, field, fragment", [
    ({"model": "nosuch"}, "model", "known models:"),
    ({"model": "custom", "custom_model": None}, "model", "a custom model needs custom_model"),
    ({"layout": "nosuch"}, "layout", "known layouts:"),
    ({"extraction_gpu": "nosuch"}, "extraction_gpu", "known GPUs:"),
    ({"extraction_gpu": "custom", "custom_gpu": None}, "extraction_gpu", "a custom GPU needs custom_gpu"),
    ({"disk": "nosuch"}, "disk", "known: nvme-gen4"),
])
def test_an_unknown_preset_names_its_field(seed, update, field, fragment):
    # model_copy does not validate: the scenario's own checks are bypassed, compose's are what is tested
    with pytest.raises(PlannerInputError) as e:
        resolve(seed.model_copy(update=update))
    msg = str(e.value)
    assert field in msg and fragment in msg and "\n" not in msg


def test_presets_resolve_to_the_shared_specs_and_customs_to_snapshots(seed):
    r = resolve(seed)
    assert r.model is model_presets()["qwen3.6-27b"] and r.spec.id == "seed-article"
    assert r.ex_gpu is gpu_presets()[seed.extraction_gpu]
    custom = gpu_presets()["rtx-pro-6000"]
    got = resolve_gpu("training.gpu", "custom", custom)
    assert got == custom and got is not custom        # a copy: a later edit of the scenario's cannot reach it
    m = model_presets()["qwen3.6-27b"]
    snap = resolve_model(seed.model_copy(update={"model": "custom", "custom_model": m}))
    assert snap == m and snap is not m


def test_figures_are_the_plans_figures(seed):
    f, p = figures(seed), plan(seed)
    assert f.conversations == p.conversations == 913_786          # the article's 913,786 samples
    assert f.samples == 913_786
    assert f.storage_bytes_compressed == p.storage_bytes_compressed
    assert f.transfer_hours == p.transfer_hours
    assert f.extraction.wall_hours == p.extraction.wall_hours
    assert f.cost_usd.total_offline == p.cost_usd.total_offline
    assert f.wall_days_offline == p.wall_days_offline
    # offline wall time: extraction, gathering, transfer and offline training, in days
    assert f.wall_days_offline == pytest.approx((f.extraction.wall_hours + f.nodes.gather_hours + f.transfer.hours
                                                 + f.training.offline_wall_hours) / 24)


def test_the_drafter_estimate_and_a_given_size(seed):
    f = figures(seed)
    # DFlash on Qwen3.6-27B (H 5120, q 24x256 = 6144, kv 4x256 = 1024, I 17408), 5 captured layers, 5 draft layers:
    # P(H) = 2*5120*(6144 + 2048) + 2*6144*5120 + 6*5120*17408 = 83,886,080 + 62,914,560 + 534,773,760
    #      = 681,574,400; a layer's parameters are half: 340,787,200; x 5 = 1,703,936,000
    # fc 5 x 5120 -> 5120: 131,072,000; the head is the target's (frozen): 1,835,008,000 in all
    assert f.recipe.kind == "dflash" and f.recipe.layers == 5
    assert f.drafter_params == 1_835_008_000
    given = figures(seed.model_copy(update={"training": seed.training.model_copy(
        update={"drafter_params": 2 * 1_835_008_000})}))
    assert given.drafter_params == 2 * 1_835_008_000
    # twice the drafter doubles only the draft layers' part of the epoch
    part = "draft layers at the draft positions"
    assert given.training.flops_parts[part] == pytest.approx(2 * f.training.flops_parts[part])
    assert given.training.flops_parts["head at the draft positions"] == f.training.flops_parts[
        "head at the draft positions"]


def test_offline_wall_time_counts_a_gather(seed):
    # 16 extraction GPUs on 2 nodes, local disks, no transfer, training on 1 other node: the shards are gathered
    d = seed.model_dump()
    d.update(extraction_gpus=16, placement="local")
    d["transfer"]["method"] = "none"
    f = figures(Scenario.model_validate(d))
    assert f.nodes.gather_hours > 0 and f.transfer.hours == 0
    assert f.wall_days_offline == pytest.approx((f.extraction.wall_hours + f.nodes.gather_hours
                                                 + f.training.offline_wall_hours) / 24)
