"""Extraction worked by hand from the presets (planner/presets/*.yaml) and a custom GPU with round
numbers: tensor-parallel degree and its efficiency, prefill rate, memory-limited decode batch,
step time, decode rate, hours. No catalog: uniform mixes."""

import pytest

from planner import Scenario, plan
from planner.presets.specs import GPUSpec
from planner.scenario import Throughput, UniformMix
from tests.helpers import assumed, efficiency_presets

# A small card with round numbers: 20 GB, 1 TB/s, 200 BF16 TFLOPS, prefill MFU 0.5.
CARD = GPUSpec(id="test-card", name="test card", memory_gb=20, bandwidth_tb_s=1.0, bf16_tflops=200, prefill_mfu=0.5)


def roofline(**kw):
    """1,000 samples of 1,000 tokens, 500 of them regenerated, Qwen3-8B, the seed-article layout, the
    roofline alone (the calibrated mode is tested in test_calibration.py)."""
    base = dict(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=500), max_seq_len="none",
                regenerate=True, model="qwen3-8b", layout="seed-article", extraction_gpu="custom",
                custom_gpu=CARD, extraction_gpus=4, disk="nvme-gen4", compression=1.0,
                throughput=Throughput(mode="roofline"))
    base.update(kw)
    return Scenario(**base)


def test_roofline_on_a_small_card_with_tensor_parallelism():
    e = plan(roofline()).extraction
    # Qwen3-8B (models.yaml): 8.2e9 params -> 16.4e9 bytes of bf16 weights.
    # usable memory per GPU (hardware.yaml 0.9 x memory - 2 GB) = 0.9 x 20e9 - 2e9 = 16e9
    # KV per token: 2 (K,V) x 8 kv heads x 128 head_dim x 2 bytes x 36 layers = 147,456 bytes;
    # one sequence of 1,000 tokens: 147.456e6 bytes.
    # TP 1: 16.4e9 + 0.147e9 > 16e9; TP 2: 32e9 holds it -> TP 2, 4 GPUs = 2 replicas.
    assert e.tensor_parallel == 2
    assert e.replicas == 2 and e.gpus_used == 4
    # TP efficiency (hardware.yaml tensor_parallel_efficiency) 0.9 applies from TP 2 on
    assert e.tensor_parallel_efficiency == 0.9
    # forward params: 8.2e9 - the untied input embedding 4096 x 151,936 = 622,329,856 -> 7,577,670,144
    # prefill FLOPs/token = 2 x 7,577,670,144 + 2 x 36 layers x (32 x 128) x 1,000 ctx = 15.450252288e9
    # prefill tok/s/GPU = 200e12 x 0.5 / 15.450252288e9 x 0.9 = 5,825.148
    assert e.prefill_tokens_per_s_per_gpu == pytest.approx(5825.148, rel=1e-6)
    # free memory of a TP-2 group: 2 x 16e9 - 16.4e9 = 15.6e9 -> 15.6e9 // 147.456e6 = 105 sequences;
    # vLLM's caps for a 20 GB card (< 70 GiB): max_num_seqs 256, max_num_batched_tokens 8,192
    assert (e.max_num_seqs, e.max_batched_tokens) == (256, 8192)
    assert e.decode_batch == 105
    # decode context per generated token: 1,000 - 500 / 2 = 750
    # bytes per step: 16.4e9 + 105 x 147,456 x 750 = 28.01216e9 over 2 x 1e12 x 0.8 (decode efficiency)
    #   = 17.5076 ms; FLOPs: 105 x (2 x 7,577,670,144 + 4 x 36 x 4096 x 750) / (2 x 200e12 x 0.25 decode
    #   MFU) = 16.378 ms: still memory-bound
    assert e.decode_bound == "memory bandwidth"
    # decode tok/s/GPU = 105 / 0.0175076 s / 2 GPUs x 0.9 = 2,698.83
    assert e.decode_tokens_per_s_per_gpu == pytest.approx(2698.828, rel=1e-6)
    # decode: 500,000 tokens / (2,698.83 x 4) / 3600 = 0.0128657 h
    assert e.decode_hours == pytest.approx(0.0128657, rel=1e-5)
    # capture: 1,000,000 tokens / (5,825.148 x 4) / 3600 = 0.0119215 h; the disk (nvme-gen4 writes
    # 2.04 GB/s) needs 1e6 x 40,964 bytes / 2.04e9 = 20.08 s = 0.00558 h -> compute-bound
    assert e.capture_bound == "compute"
    assert e.capture_hours == pytest.approx(0.0119215, rel=1e-5)
    # wall 0.0128657 + 0.0119215 = 0.0247872 h, x 4 GPUs = 0.0991486 GPU-hours
    assert e.wall_hours == pytest.approx(0.0247872, rel=1e-5)
    assert e.gpu_hours == pytest.approx(0.0991486, rel=1e-5)
    # serving (benchmark_serving's count) at 500 prompt + 500 generated tokens per request:
    # 500 / (500 / 5,825.148 + 500 / 2,698.83) = 1,844.4 output tok/s per GPU; total twice that
    assert e.serving_output_tokens_per_s_per_gpu == pytest.approx(500 / (500 / 5825.148 + 500 / 2698.828), rel=1e-6)
    assert e.serving_total_tokens_per_s_per_gpu == pytest.approx(2 * e.serving_output_tokens_per_s_per_gpu)


def test_tensor_parallel_efficiency_is_applied():
    # the same plan at TP efficiency 0.5: prefill 200e12 x 0.5 / 15.450252288e9 x 0.5 = 3,236.193 tok/s
    e = plan(roofline(throughput=Throughput(mode="roofline", tensor_parallel_efficiency=0.5))).extraction
    assert e.prefill_tokens_per_s_per_gpu == pytest.approx(3236.193, rel=1e-6)
    # decode 105 / 0.0175076 / 2 x 0.5 = 1,499.35 tok/s
    assert e.decode_tokens_per_s_per_gpu == pytest.approx(1499.349, rel=1e-6)


def test_no_tensor_parallelism_no_efficiency_loss():
    # a 40 GB card: usable 0.9 x 40e9 - 2e9 = 34e9 holds the 16.4e9 of weights: TP 1, efficiency 1
    big = CARD.model_copy(update={"memory_gb": 40})
    e = plan(roofline(custom_gpu=big)).extraction
    assert e.tensor_parallel == 1 and e.tensor_parallel_efficiency == 1.0
    # prefill 200e12 x 0.5 / 15.450252288e9 = 6,472.386 tok/s
    assert e.prefill_tokens_per_s_per_gpu == pytest.approx(6472.386, rel=1e-6)
    # batch: (34e9 - 16.4e9) // 147.456e6 = 119
    assert e.decode_batch == 119


def test_fixed_mode_without_regeneration_runs_the_stored_tokens():
    # 120 tok/s x 4 = 480 tok/s per GPU, 2 GPUs; nothing generated: 1e6 tokens / 960 / 3600 = 0.28935 h
    e = plan(roofline(regenerate=False, extraction_gpus=2, extraction_gpu="h100-sxm",
                      throughput=Throughput(mode="fixed", tokens_per_s=120, batching=4))).extraction
    assert e.decode_hours == 0
    assert e.capture_hours == pytest.approx(1e6 / 960 / 3600, rel=1e-12)
    assert e.gpu_hours == pytest.approx(2 * 0.289352, rel=1e-5)


# ---------------------------------------------------------------- the extraction's Assumptions rows
EFF = efficiency_presets()


rows = assumed     # the Assumptions rows of a small uniform plan, by name (tests/helpers.py)


def test_the_throughput_rows_carry_the_presets_sources():
    a = rows()
    # vLLM's scheduler defaults for an 80 GB H100 (>= 70 GiB), with the line they were read from
    assert (a["scheduler caps"].value, a["scheduler caps"].tag) == \
        ("max_num_seqs 1,024, max_num_batched_tokens 16,384", "published")
    assert "vllm/engine/arg_utils.py" in a["scheduler caps"].source
    assert (a["decode compute efficiency"].value, a["decode compute efficiency"].source) == \
        (f"{EFF['decode_mfu']['value']:g}", EFF["decode_mfu"]["source"])
    # prefill MFU: the H100 SXM preset's 0.5 (gpus.yaml), with the range's source
    assert a["prefill MFU"].value == "0.5" and a["prefill MFU"].source.startswith("h100-sxm preset; ")


def test_changed_throughput_values_are_yours_and_name_the_preset():
    a = rows(throughput=Throughput(prefill_mfu=0.42, max_batch=64))
    # the batch cap given, the token cap still the engine's 16,384
    assert (a["scheduler caps"].value, a["scheduler caps"].tag) == \
        ("max_num_seqs 64, max_num_batched_tokens 16,384", "yours")
    assert "the engine's default for h100-sxm: 1,024 / 16,384" in a["scheduler caps"].source
    assert (a["prefill MFU"].value, a["prefill MFU"].tag) == ("0.42", "yours")
    assert "the preset's 0.5" in a["prefill MFU"].source


def test_fixed_mode_lists_the_rate_not_the_roofline():
    a = rows(throughput=Throughput(mode="fixed", tokens_per_s=90, batching=2))
    assert a["throughput"].value == "fixed 90 tok/s x 2 batching"
    assert "the preset's 120 tok/s x 4" in a["throughput"].source
    assert "prefill MFU" not in a and "decode bandwidth efficiency" not in a and "prefill calibration" not in a


def test_the_models_rows_say_what_its_architecture_adds():
    # Qwen3-8B (models.yaml): dense, untied: the forward runs 8.20B - its 0.62B input embedding = 7.58B
    a = assumed()
    assert a["forward parameters"].value == ("7.58B of 8.20B (without vision 0.00B, MTP 0.00B, input embedding "
                                             "0.62B)")
    assert "MoE decode" not in a and "staging" not in a and "linear-attention state" not in a
    # Qwen3-30B-A3B: 3.3e9 active of its parameters, an MoE: decode reads every expert; vLLM's staging write
    a = assumed(model="qwen3-30b-a3b", staging_double_write=True)
    assert (a["MoE decode"].value, a["staging"].value) == ("every step reads all expert weights",
                                                           "every byte written twice")
