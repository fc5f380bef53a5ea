"""Whether online training fits (issue 33 item 3): per training GPU, the drafter's training state at the
run's longest row (planner/phases/training.py memory_parts, tests/unit/planner/phases/test_training_memory.py) plus
the target's bf16 weights shared over the trainers, within one GPU's usable memory. Before issue 33 the
rule summed 16 bytes a drafter parameter and the target over all GPUs (it passed at 3 x L40S); per GPU
with the frozen embedding and head and the activations counted it needs 4.

Qwen3.6-27B: 27.78e9 parameters (presets/models.yaml) -> 55.56 GB of bf16 weights; H 5120, V 248,320.
L40S: 48 GB (presets/gpus.yaml) x 0.9 usable - 2 GB runtime (hardware.yaml) = 41.2 GB a GPU.
The default DFlash drafter: P = 1,835,008,000 parameters (read from the plan); rows of 1,000 tokens,
the default layout's 5 draft layers, 512 anchors x block 16, head in chunks of 128 blocks:
  weights 2 P = 3,670,016,000; gradients and optimizer 14 P / g = 25,690,112,000 / g;
  frozen embedding and head 4 V H = 5,085,593,600;
  activations min(512, 1,000) x 16 = 8,192 positions x 5 layers x 34 x 5120 = 7,130,316,800
    + head 2,048 x 248,320 x 8 = 4,068,474,880 + context K/V 1,000 x 5 x 2 x 1,024 x 2 = 20,480,000
    = 11,219,271,680;
  captured states 1,000 x 5 x 5120 x 2 = 51,200,000 (5 captured layers)
  fixed part: 3,670,016,000 + 5,085,593,600 + 11,219,271,680 + 51,200,000 = 20,026,081,280
  3 GPUs: 20,026,081,280 + 8,563,370,667 + 55.56e9 / 3 = 18.52e9 -> 47,109,451,947 > 41.2e9: does not fit
  4 GPUs: 20,026,081,280 + 6,422,528,000 + 13.89e9 -> 40,338,609,280 <= 41.2e9: fits"""
from __future__ import annotations

import pytest

from planner import plan
from planner.scenario import Scenario, Training, Transfer, UniformMix

WEIGHTS = 27.78e9 * 2
USABLE = 48e9 * 0.9 - 2e9
FIXED = 3_670_016_000 + 5_085_593_600 + 11_219_271_680 + 51_200_000


def _plan(gpus: int):
    return plan(Scenario(uniform=UniformMix(samples=1000, tokens=1000), model="qwen3.6-27b",
                         transfer=Transfer(method="none"), training=Training(gpu="l40s", gpus=gpus, gpus_per_node=8)))


def test_the_figures_the_comments_use():
    from planner.phases.extraction import usable_memory_bytes
    from planner.presets.specs import gpu_presets, model_presets
    assert model_presets()["qwen3.6-27b"].weight_bytes("bf16") == pytest.approx(WEIGHTS)
    assert usable_memory_bytes(gpu_presets()["l40s"]) == pytest.approx(USABLE)


@pytest.mark.parametrize("gpus, fits, total", [(3, False, 47_109_451_947), (4, True, 40_338_609_280)])
def test_online_fits_counts_the_drafters_training_state_and_the_targets_share_per_gpu(gpus, fits, total):
    t = _plan(gpus).training
    assert t.drafter_params == 1_835_008_000 and t.memory_row_tokens == 1000
    assert t.memory_gib_per_gpu * 2 ** 30 == pytest.approx(FIXED + 14 * 1_835_008_000 / gpus, rel=1e-9)
    assert t.online_memory_gib_per_gpu * 2 ** 30 == pytest.approx(total, rel=1e-6)
    assert t.online_fits is fits and (total <= USABLE) is fits
    assert t.fits                                        # offline (no target) fits either way
