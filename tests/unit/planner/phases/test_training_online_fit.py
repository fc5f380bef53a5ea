"""Whether online training fits: the target's bf16 weights plus the drafter's training state (16
bytes a parameter: bf16 weights and gradients, fp32 Adam moments and master weights) on all the
training GPUs' usable memory (planner/phases/training.py; a mutant that survived, issue 19).

Qwen3.6-27B: 27.78e9 parameters (presets/models.yaml) -> 55.56 GB of bf16 weights.
L40S: 48 GB (presets/gpus.yaml) x 0.9 usable - 2 GB runtime (hardware.yaml) = 41.2 GB a GPU.
The default DFlash drafter on it has D parameters, read from the plan, between 1.7e9 and 4.2e9:
  2 GPUs: 82.4 GB. The weights alone fit (55.56), the weights + 16 D do not: 55.56 + 16 x 1.7 = 82.76 > 82.4
  3 GPUs: 123.6 GB. 55.56 + 16 x 4.2 = 122.76 <= 123.6 fits
so the drafter's state decides at 2 GPUs, and the GPU count (not one GPU: 41.2 < 55.56) at 3."""
from __future__ import annotations

import pytest

from planner import plan
from planner.scenario import Scenario, Training, Transfer, UniformMix

WEIGHTS = 27.78e9 * 2
USABLE = 48e9 * 0.9 - 2e9


def _plan(gpus: int):
    return plan(Scenario(uniform=UniformMix(samples=1000, tokens=1000), model="qwen3.6-27b",
                         transfer=Transfer(method="none"), training=Training(gpu="l40s", gpus=gpus, gpus_per_node=8)))


def test_the_figures_the_comments_use():
    from planner.phases.extraction import usable_memory_bytes
    from planner.presets.specs import gpu_presets, model_presets
    assert model_presets()["qwen3.6-27b"].weight_bytes("bf16") == pytest.approx(WEIGHTS)
    assert usable_memory_bytes(gpu_presets()["l40s"]) == pytest.approx(USABLE)


@pytest.mark.parametrize("gpus, fits", [(2, False), (3, True)])
def test_online_fits_counts_the_drafters_training_state_on_every_gpu(gpus, fits):
    p = _plan(gpus)
    d = p.training.drafter_params
    assert 1.7e9 <= d <= 4.2e9
    assert (WEIGHTS + 16 * d <= gpus * USABLE) is fits          # the rule, by hand
    assert WEIGHTS <= gpus * USABLE and WEIGHTS > USABLE         # the weights alone fit; one GPU would not
    assert p.training.online_fits is fits
    assert ("online-does-not-fit" in {f.code for f in p.findings}) is not fits
