"""Issue 22, outside the harness model: Model-Optimizer's draft head is the full vocabulary
(NVIDIA/Model-Optimizer@a2fbac7bad8ab446d3f8783dadb0c3366eb0ad73
modelopt/torch/speculative/plugins/hf_eagle.py:373-375: draft_vocab_size defaults to vocab_size) and
the NeMo Automodel citations point at the lines that hold the defaults."""
import pytest

from planner.export.plan_json import to_json_dict
from planner.presets.drafter_kinds import knobs
from planner.presets.layouts import layout_presets
from planner.presets.specs import model_presets


def test_modelopt_trains_a_full_vocabulary_head():
    model = model_presets()["qwen3.6-27b"]
    k = knobs(layout_presets()["modelopt-eagle3"], model, captured_layers=4, draft_layers=1, ttt_steps=None,
              num_anchors=None, block_size=None)
    # Qwen3.6-27B's vocabulary is 248,320 (models.yaml): 7.76x SpecForge's 32,000-token head
    assert k.head_vocab == model.vocab_size == 248_320
    assert knobs(layout_presets()["specforge-eagle3"], model, captured_layers=4, draft_layers=1, ttt_steps=None,
                 num_anchors=None, block_size=None).head_vocab == 32_000


def test_nemo_citations_name_the_default_lines():
    t = layout_presets()["nemo-automodel"].defaults
    assert "precompute_eagle3.py:309" in t.max_seq_len.source
    assert "precompute_eagle3.py:326" in t.capture_batch_size.source
    assert "eagle3.py:189-199" in t.padding.source
    # eagle3.py:154-161 is build_eagle3_dataloader's docstring; the truncation is the call's :193-195
    assert "eagle3.py:189-199" in t.unit.source and "eagle3.py:193-195" in t.overflow.source


def test_the_default_hybrid_extraction_is_calibrated_per_phase_with_a_band():
    from planner import default_scenario, plan
    p = plan(default_scenario())
    e = p.extraction
    # Qwen3.6-27B (hybrid GDN) on the RTX PRO 6000: the capture's prefill takes the nearest hybrid row
    # (SGLang's Qwen3.6-27B cells, measured on other GPUs: an extrapolation); no decode-phase row is
    # within reach, so decode is the roofline alone, and both carry a band
    assert e.prefill_calibration.row.startswith("sglang-q36-27b-") and e.prefill_calibration.extrapolated
    assert e.decode_calibration.row == "" and e.decode_calibration.extrapolated
    assert e.calibrated_wall_hours_low < e.wall_hours < e.calibrated_wall_hours_high
    assert any("an extrapolation" in f.text for f in p.findings)
    d = to_json_dict(p)["extraction"]
    assert d["prefill_calibration"]["phase"] == "prefill" and d["decode_calibration"]["phase"] == "decode"
    # wall_hours_low/high are the band to bet on: with nothing sampled (the default), the calibration band;
    # the sampled profiles' band alone is sampled_wall_hours_low/high (None here)
    assert d["calibrated_wall_hours_low"] == e.calibrated_wall_hours_low
    assert (d["wall_hours_low"], d["wall_hours_high"]) == (e.calibrated_wall_hours_low, e.calibrated_wall_hours_high)
    assert d["sampled_wall_hours_low"] is None and d["sampled_wall_hours_high"] is None


def test_the_overhead_floor_is_the_fit_of_its_runs():
    from planner.phases.training import overhead_s_per_token
    from planner.presets.specs import load_preset
    data = load_preset("training_throughput.yaml")
    rows = {r["id"]: r for r in data["rows"]}
    # TorchSpec C2: 6 trainers / 23.5 samples/s / 1,000 tokens = 2.55319e-4 s; SpecForge Domino:
    # 7 / 50.1 / 550 = 2.54038e-4 s; their mean 2.54679e-4 trainer-GPU seconds per token
    fit = sum(rows[i]["gpus"] / rows[i]["samples_per_s"] / rows[i]["tokens"] for i in data["overhead"]["rows"]) / 2
    assert fit == pytest.approx(2.54679e-4, rel=1e-5)
    assert overhead_s_per_token() == pytest.approx(fit, rel=1e-4)


def test_the_eagle_step_overhead_is_the_fit_of_its_runs():
    from planner.phases.training import fit_step_overhead, step_overhead_s_per_pass
    from planner.presets.specs import load_preset
    data = load_preset("training_throughput.yaml")
    rows = {r["id"]: r for r in data["rows"]}
    runs = [rows[i] for i in data["step_overhead"]["rows"]]
    # SpecForge PR 37: 8 trainers x batch 1 / 37.8 samples/s / 7 TTT passes = 0.0302343 s per optimizer
    # step x TTT step (the lost attempt's 0.030234 checks out: 68,000 / 1,800 s rounded to 37.8)
    assert [(r["gpus"], r["batch"], r["samples_per_s"], r["ttt_steps"]) for r in runs] == [(8, 1, 37.8, 7)]
    assert fit_step_overhead(runs) == pytest.approx(8 / 37.8 / 7, rel=1e-12) == pytest.approx(0.0302343, rel=1e-6)
    assert step_overhead_s_per_pass() == pytest.approx(fit_step_overhead(runs), rel=1e-4)


def test_glaive_end_of_turn_markers_and_system_prefix_are_not_text():
    from planner.catalog.formats import to_turns
    # glaive-function-calling-v2 as published: "SYSTEM: " before the system text, "<|endoftext|>"
    # after each assistant turn
    obj = {"system": "SYSTEM: You are helpful.",
           "chat": "USER: hi ASSISTANT: hello <|endoftext|> FUNCTION RESPONSE: {} ASSISTANT: done <|endoftext|>"}
    assert to_turns(obj, "glaive") == [("system", "You are helpful."), ("user", "hi"), ("assistant", "hello"),
                                       ("tool", "{}"), ("assistant", "done")]


def test_modelopt_runs_the_frozen_base_head_at_full_vocabulary():
    # Model-Optimizer@a2fbac7b: no draft lm_head of its own by default (modeling_eagle.py:43-56), the
    # base model's full-vocabulary head, frozen (config.py:282-284): 2 passes (forward, input gradient)
    model = model_presets()["qwen3.6-27b"]
    k = knobs(layout_presets()["modelopt-eagle3"], model, captured_layers=4, draft_layers=1, ttt_steps=None,
              num_anchors=None, block_size=None)
    assert (k.head_passes, k.head_vocab, k.teacher_vocab, k.ttt_steps) == (2, 248_320, 248_320, 3)
    # its training FLOPs in the head: 3 TTT steps x 2 passes x 2 x H 5,120 x V 248,320 = 15,256,780,800 per
    # token (SpecForge's trained 32,000-token head: 3 x 3 x 2 x 5,120 x 32,000 = 2,949,120,000, 5.17x less)
    from planner import Scenario, plan
    from planner.scenario import Training, UniformMix
    s = Scenario(uniform=UniformMix(samples=1000, tokens=1000, response_tokens=500), regenerate=False,
                 model="qwen3.6-27b", layout="modelopt-eagle3", max_seq_len="none", capture_batch_size=1,
                 training=Training(gpu="h100-sxm", gpus=16, epochs=1, disk="node-raid0"))
    t = plan(s).training
    assert t.flops_parts["head x steps"] == pytest.approx(1e6 * 15_256_780_800, rel=1e-12)
