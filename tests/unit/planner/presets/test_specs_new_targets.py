"""The targets and GPUs users ask about (issue 33 item 6): each plans without error, and one figure each is
worked by hand from the config.json / datasheet fields in planner/presets/models.yaml and gpus.yaml."""
from __future__ import annotations

import pytest

from planner import plan
from planner.presets.specs import gpu_presets, model_presets
from planner.scenario import Scenario, Throughput, UniformMix

NEW_MODELS = ("qwen3-4b", "qwen3.6-35b-a3b", "llama-4-scout", "llama-4-maverick", "qwen3.5-9b")
NEW_GPUS = ("h20", "a800-80gb", "rtx-3090", "l20")


def _uniform(**kw) -> Scenario:
    return Scenario(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=500), regenerate=False, **kw)


@pytest.mark.parametrize("model", NEW_MODELS)
def test_each_new_model_plans_with_the_default_mix(model):
    p = plan(Scenario(model=model))
    assert p.model == model and p.storage_bytes > 0 and p.extraction.wall_hours > 0
    assert p.storage_bytes_low <= p.storage_bytes <= p.storage_bytes_high


@pytest.mark.parametrize("gpu", NEW_GPUS)
def test_each_new_gpu_plans_capture_and_training(gpu):
    from planner.scenario import Training
    p = plan(Scenario(extraction_gpu=gpu, training=Training(gpu=gpu)))
    assert p.extraction.wall_hours > 0 and p.training.offline_wall_hours > 0


@pytest.mark.parametrize("model,layout,bpt", [
    # SpecForge's EAGLE-3 record: 3 aux layers + the last in bf16, input_ids and loss_mask int64 (8 + 8 B):
    ("qwen3.6-35b-a3b", "specforge-eagle3", 4 * 2048 * 2 + 16),      # 16,400 B a token
    ("llama-4-scout", "specforge-eagle3", 4 * 5120 * 2 + 16),        # 40,976
    ("qwen3.5-9b", "specforge-eagle3", 4 * 4096 * 2 + 16),           # 32,784
    # SpecForge DFlash: 5 target layers (the DFlash rule) in bf16 + 16 B of ids and mask
    ("qwen3-4b", "specforge-dflash", 5 * 2560 * 2 + 16),             # 25,616
    # EAGLE-1 ge_data: the last layer in fp16 + input_ids and loss_mask int64
    ("llama-4-maverick", "eagle1", 5120 * 2 + 16),                   # 10,256
])
def test_bytes_per_token_by_hand(model, layout, bpt):
    p = plan(_uniform(model=model, layout=layout))
    assert p.bytes_per_token == bpt
    # the stored bytes: every stored token at bpt plus each file's overhead
    assert p.storage_bytes == pytest.approx(p.tokens * bpt + p.files * p.file_overhead_bytes, rel=1e-6)


def test_the_moe_fields_are_the_configs_counted_by_hand():
    m = model_presets()
    # routed experts: layers with experts x experts x 3 matrices x hidden x expert width
    assert m["llama-4-scout"].expert_params == pytest.approx(48 * 16 * 3 * 5120 * 8192, rel=1e-3)      # 96.64e9
    assert m["llama-4-maverick"].expert_params == pytest.approx(24 * 128 * 3 * 5120 * 8192, rel=1e-3)  # 386.55e9
    assert m["qwen3.6-35b-a3b"].expert_params == pytest.approx(40 * 256 * 3 * 2048 * 512, rel=1e-3)    # 32.21e9
    # Qwen3.6-35B-A3B: [3 Gated DeltaNet + 1 full attention] x 10
    q = m["qwen3.6-35b-a3b"]
    assert (q.full_attention_layers, q.linear_attention_layers) == (10, 30)
    # Qwen3-4B (tied): 36 x (2560 x 4096 x 2 + 2560 x 1024 x 2 + 3 x 2560 x 9728) + 151,936 x 2560 = 4.022e9
    assert m["qwen3-4b"].params == pytest.approx(36 * (2560 * 4096 * 2 + 2560 * 1024 * 2 + 3 * 2560 * 9728)
                                                 + 151_936 * 2560, rel=1e-3)


def test_qwen3_4b_prefill_roofline_by_hand():
    p = plan(_uniform(model="qwen3-4b", layout="specforge-dflash", extraction_gpu="h100-sxm", extraction_gpus=1,
                      throughput=Throughput(mode="roofline")))
    # tied embeddings: forward params = all 4.02e9 (the table is the lm head's matmul)
    # FLOPs a token = 2 x 4.02e9 + 2 x 36 layers x (32 x 128) x 1,000 ctx = 8.04e9 + 0.2949e9 = 8.3349e9
    flops = 2 * 4.02e9 + 2 * 36 * 4096 * 1000
    assert p.extraction.prefill_tokens_per_s_per_gpu == pytest.approx(989e12 * 0.5 / flops, rel=1e-9)  # ~59,329


@pytest.mark.parametrize("gpu,tflops,mfu", [("h20", 148, 0.5), ("a800-80gb", 312, 0.5), ("rtx-3090", 71, 0.35),
                                            ("l20", 119.5, 0.35)])
def test_prefill_roofline_on_each_new_gpu_by_hand(gpu, tflops, mfu):
    # Qwen3-8B (16.4 GB of weights fits each, TP 1): FLOPs a token at ctx 1,000 = 2 x 7,577,670,144
    # + 2 x 36 x 4096 x 1000 = 15,450,252,288; rate = dense BF16 x prefill MFU / FLOPs:
    # H20 148e12 x 0.5 = 4,790 tok/s; A800 312e12 x 0.5 = 10,097; RTX 3090 71e12 x 0.35 = 1,608;
    # L20 119.5e12 x 0.35 = 2,707
    p = plan(_uniform(model="qwen3-8b", layout="specforge-dflash", extraction_gpu=gpu, extraction_gpus=1,
                      throughput=Throughput(mode="roofline")))
    flops = 2 * 7_577_670_144 + 2 * 36 * 4096 * 1000
    assert gpu_presets()[gpu].bf16_tflops == tflops
    assert p.extraction.prefill_tokens_per_s_per_gpu == pytest.approx(tflops * 1e12 * mfu / flops, rel=1e-9)


def test_maverick_needs_tensor_parallelism_on_an_h20():
    # 400.71e9 x 2 B = 801.4 GB of weights; usable per H20 96e9 x 0.9 - 2e9 = 84.4 GB -> 801.4 / 84.4 = 9.5:
    # 16 GPUs (a power of two, as the 70B on 24 GB takes 8)
    p = plan(_uniform(model="llama-4-maverick", extraction_gpu="h20", extraction_gpus=1))
    assert p.extraction.tensor_parallel == 16


def test_qwen3_5_9b_hybrid_shape_and_parameters_by_hand():
    q = model_presets()["qwen3.5-9b"]
    # [3 Gated DeltaNet + 1 full attention] x 8 (full attention on layers 3, 7, ..., 31)
    assert (q.num_layers, q.full_attention_layers, q.linear_attention_layers) == (32, 8, 24)
    # KV cache only on the 8 full-attention layers: 2 (K, V) x 4 KV heads x 256 x 2 B x 8 = 32,768 B a token
    assert q.kv_bytes_per_token() == 2 * 4 * 256 * 2 * 8 == 32_768
    # GDN state per sequence and layer: conv (4 - 1) x (2 x 16 x 128 + 32 x 128) x 2 B (bf16) = 49,152
    # + temporal 32 x 128 x 128 x 4 B (float32) = 2,097,152 -> 2,146,304; x 24 layers = 51,511,296
    assert q.linear_state_bytes_each() == 3 * (2 * 16 * 128 + 32 * 128) * 2 + 32 * 128 * 128 * 4 == 2_146_304
    assert q.linear_state_bytes() == 24 * 2_146_304 == 51_511_296
    # the MTP head as Qwen3.6-27B's: one gated full-attention layer (q+gate 4096 x 8192, k and v 4096 x 1024,
    # o 4096 x 4096, q/k norms 2 x 256, MLP 3 x 4096 x 12288, 2 norms of 4096) + fc 2 x 4096 x 4096 + 3 norms
    layer = 4096 * 8192 + 2 * 4096 * 1024 + 4096 * 4096 + 2 * 256 + 3 * 4096 * 12288 + 2 * 4096
    assert layer == 209_723_904
    assert q.mtp_params == layer + 2 * 4096 * 4096 + 3 * 4096 == 243_290_624
    # text forward: 9.653e9 - vision 456,010,480 - MTP 243,290,624 - untied input embedding 248,320 x 4096
    # (1,017,118,720) = 7,936,580,176
    assert q.forward_params() == pytest.approx(9.653e9 - 456_010_480 - 243_290_624 - 248_320 * 4096, rel=1e-12)
    assert q.forward_params() == pytest.approx(7_936_580_176, rel=1e-12)


def test_qwen3_5_9b_prefill_roofline_by_hand():
    p = plan(_uniform(model="qwen3.5-9b", layout="specforge-dflash", extraction_gpu="h100-sxm", extraction_gpus=1,
                      throughput=Throughput(mode="roofline")))
    # FLOPs a token = 2 x 7,936,580,176 + 2 x 8 full-attention layers x (16 x 256) x 1,000 ctx
    # = 15,873,160,352 + 65,536,000 = 15,938,696,352; the GDN layers add no term growing with the context
    flops = 2 * 7_936_580_176 + 2 * 8 * 4096 * 1000
    assert flops == 15_938_696_352
    assert p.extraction.prefill_tokens_per_s_per_gpu == pytest.approx(989e12 * 0.5 / flops, rel=1e-9)  # ~31,025
