"""NeMo Automodel PR #2373's ~80 MB a sample (bench/users_reports.yaml disk_reports, scored), at the settings the PR's
own file states beside that figure (NVIDIA-NeMo/Automodel@b8f2924e1 precompute_eagle3.py:23-33, 40-46: Llama-3.1-8B,
--seq-length 2048, --draft-vocab-size 8192, --dtype bf16), worked by hand from the layout's bytes (layouts.yaml
nemo-automodel, read from NeMo's code)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
import fidelity  # noqa: E402


def test_the_nemo_eagle3_figure_at_the_prs_own_example():
    rows = {r["id"]: r for r in fidelity.disk_user_rows()}
    r = rows["nemo2373-llama8b-eagle3"]
    # per token: input_ids 8 + loss_mask 8 + attention/position masks 9 + aux_hidden_states 3 x 4,096 x 2
    # (24,576) + target_probs 8,192 x 2 (16,384) = 40,985 B; padded to 2,048 tokens: 83,937,280 B a sample;
    # the target's input embeddings once in fp32, 128,256 x 4,096 x 4 = 2,101,346,304 B over 1,000 samples:
    # 2,101,346 B a sample; the shards' headers and block rounding a few bytes more: ~86,038,6xx B
    assert r["bytes_per_token"] == 40_985
    assert r["predicted"] == pytest.approx(83_937_280 + 2_101_346.304, abs=64)
    # "~80 MB": 80e6 to 80 MiB (83,886,080), widened by half its last digit (5 MB): 75e6 to 89,128,960
    assert (r["reported_low"], r["reported_high"]) == (75e6, 89_128_960)
    assert r["inside"] and r["fit_or_scored"] == "SCORED"
    # at the full vocabulary (the code's default) the same PR's ~0.5 GB: 128,256 x 2 B of target_probs
    full = rows["nemo2373-llama8b-full-vocab"]
    assert full["bytes_per_token"] == 25 + 24_576 + 128_256 * 2
