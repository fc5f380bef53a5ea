"""The control registry on plain dicts (no Streamlit): any valid scenario -> widget values ->
scenario is the identity, custom model and GPU included; widget ranges are the models' bounds."""
from __future__ import annotations

import annotated_types
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from drafter_dashboard import registry
from drafter_dashboard.registry import bounds, from_widgets, hidden_keys, to_widgets, widget_range
from planner.ids import FAMILIES
from planner.presets.specs import (
    GPUSpec,
    ModelSpec,
    disk_presets,
    gpu_presets,
    layout_presets,
    model_presets,
    storage_price_presets,
)
from planner.scenario import Costs, Disaggregated, Quality, Scenario, Throughput, Training, Transfer


class _Toy(BaseModel):
    a: int = Field(gt=0, le=10)
    b: float = Field(ge=0.5, lt=2.0)
    c: float | None = Field(None, gt=0)
    d: int | None = Field(None, ge=1, lt=5)


def test_bounds_read_the_field_constraints():
    # a strict integer bound moves by one (gt=0 -> 1, lt=5 -> 4); a float one stays
    assert bounds(_Toy, "a") == (1, 10)
    assert bounds(_Toy, "b") == (0.5, 2.0)
    assert bounds(_Toy, "c") == (0, None)
    assert bounds(_Toy, "d") == (1, 4)


def _constraint(model, name, kind):
    return next((getattr(m, kind) for m in model.model_fields[name].metadata
                 if isinstance(m, getattr(annotated_types, kind.capitalize()))), None)


@pytest.mark.parametrize("key, model, name", [
    ("w_compression", Scenario, "compression"), ("w_link_eff", Transfer, "efficiency"),
    ("w_resp_mult", Scenario, "response_multiplier"), ("w_cm_state", ModelSpec, "linear_state_bytes_per_layer"),
    ("w_cg_mem", GPUSpec, "memory_gb"), ("w_months", Costs, "storage_months"), ("w_tps", Throughput, "tokens_per_s"),
    ("w_epochs", Training, "epochs")])
def test_widget_ranges_are_the_models(key, model, name):
    r = widget_range(key)
    lo = _constraint(model, name, "ge")
    lo = _constraint(model, name, "gt") if lo is None else lo
    assert r["min_value"] == lo and r["max_value"] == _constraint(model, name, "le")


def test_values_the_old_widgets_refused_fit_now():
    # issue 10: schema-valid link values outside the old sliders (compression 1-2, efficiency 0.05-1,
    # response multiplier 0.25-4) must be inside the widget ranges
    for key, value in (("w_compression", 3.0), ("w_link_eff", 0.02), ("w_resp_mult", 10.0)):
        r = widget_range(key)
        assert r["min_value"] <= value <= r["max_value"], key
    # scaled: params in billions; ModelSpec allows up to 1e13 = 10,000 B
    assert widget_range("w_cm_params_b")["max_value"] == pytest.approx(1e13 / 1e9)


def _f(model, name, allow_none=False):
    lo, hi = bounds(model, name)
    s = st.floats(min_value=lo, max_value=hi if hi is not None else 1e6, allow_nan=False, allow_infinity=False)
    return st.none() | s if allow_none else s


def _i(model, name, allow_none=False):
    lo, hi = bounds(model, name)
    s = st.integers(min_value=lo, max_value=hi)
    return st.none() | s if allow_none else s


@st.composite
def custom_models(draw):
    layers = draw(_i(ModelSpec, "num_layers"))
    full = draw(st.integers(0, layers))
    params = draw(_f(ModelSpec, "params"))
    active = draw(st.floats(min_value=0, max_value=params))    # 0 is refused by validation
    return {"id": "custom", "name": "Custom model", "hf_id": None, "hidden_size": draw(_i(ModelSpec, "hidden_size")),
            "num_layers": layers, "full_attention_layers": full, "linear_attention_layers": layers - full,
            "num_q_heads": draw(_i(ModelSpec, "num_q_heads")), "num_kv_heads": draw(_i(ModelSpec, "num_kv_heads")),
            "head_dim": draw(_i(ModelSpec, "head_dim")), "kv_latent_dim": draw(_i(ModelSpec, "kv_latent_dim", True)),
            "vocab_size": draw(_i(ModelSpec, "vocab_size")), "params": params,
            "active_params": active,
            "linear_state_bytes_per_layer": draw(_i(ModelSpec, "linear_state_bytes_per_layer")),
            "intermediate_size": draw(_i(ModelSpec, "intermediate_size", True)),
            "vision_params": draw(st.floats(min_value=0, max_value=min(active / 4, 1e12))),
            "mtp_params": draw(st.floats(min_value=0, max_value=min(active / 4, 1e12))),
            "tied_embeddings": draw(st.booleans()),
            "linear_key_heads": draw(_i(ModelSpec, "linear_key_heads")),
            "linear_value_heads": draw(_i(ModelSpec, "linear_value_heads")),
            "linear_key_head_dim": draw(_i(ModelSpec, "linear_key_head_dim")),
            "linear_value_head_dim": draw(_i(ModelSpec, "linear_value_head_dim")),
            "linear_conv_kernel": draw(_i(ModelSpec, "linear_conv_kernel")),
            "linear_state_dtype": draw(st.sampled_from(["float32", "bfloat16", "float16"]))}


@st.composite
def custom_gpus(draw):
    return {"id": "custom", "name": "Custom GPU", "memory_gb": draw(_f(GPUSpec, "memory_gb")),
            "bandwidth_tb_s": draw(_f(GPUSpec, "bandwidth_tb_s")), "bf16_tflops": draw(_f(GPUSpec, "bf16_tflops")),
            "fp8_tflops": draw(_f(GPUSpec, "fp8_tflops", True)), "prefill_mfu": draw(_f(GPUSpec, "prefill_mfu")),
            "price_low": draw(_f(GPUSpec, "price_low", True)), "price_high": draw(_f(GPUSpec, "price_high", True))}


@st.composite
def scenarios(draw):
    model = draw(st.sampled_from(sorted(model_presets()) + ["custom"]))
    gpus = sorted(gpu_presets()) + ["custom"]
    ex_gpu, tr_gpu = draw(st.sampled_from(gpus)), draw(st.sampled_from(gpus))
    d = {
        "preset": draw(st.sampled_from(["default", "seed-article", "mine"])),
        "mix": draw(st.none() | st.just([{"id": "openorca", "rows": 5, "selection": "first", "seed": 3}])),
        "model": model, "layout": draw(st.sampled_from(sorted(layout_presets()))),
        "layers": draw(st.none() | st.lists(st.integers(0, 1024), min_size=1, max_size=6, unique=True)),
        "layer_count": draw(_i(Scenario, "layer_count", True)),
        "hidden_dtype": draw(st.sampled_from([None, "bf16", "fp16", "fp8"])),
        "unit": draw(st.sampled_from(["conversation", "turn"])),
        "max_seq_len": draw(_i(Scenario, "max_seq_len", True)), "regenerate": draw(st.booleans()),
        "response_multiplier": draw(_f(Scenario, "response_multiplier")),
        "length_scale": draw(_f(Scenario, "length_scale")),
        "throughput": {"mode": draw(st.sampled_from(["calibrated", "roofline", "fixed"])),
                       "tokens_per_s": draw(_f(Throughput, "tokens_per_s")),
                       "batching": draw(_f(Throughput, "batching")),
                       "prefill_mfu": draw(_f(Throughput, "prefill_mfu", True)),
                       "decode_bandwidth_efficiency": draw(_f(Throughput, "decode_bandwidth_efficiency")),
                       "max_batch": draw(_i(Throughput, "max_batch", True)),
                       "max_batched_tokens": draw(_i(Throughput, "max_batched_tokens", True)),
                       "decode_mfu": draw(_f(Throughput, "decode_mfu", True)),
                       "tensor_parallel_efficiency": draw(_f(Throughput, "tensor_parallel_efficiency"))},
        "weight_dtype": draw(st.sampled_from(["bf16", "fp8"])), "extraction_gpu": ex_gpu,
        "kv_dtype": draw(st.sampled_from(["bf16", "fp8"])),
        "node_network_gbps": draw(_f(Scenario, "node_network_gbps")),
        "node_network": draw(st.sampled_from(["tcp", "rdma"])),
        "disaggregated": {"capture_gpus": draw(_i(Disaggregated, "capture_gpus", True)),
                          "train_gpus": draw(_i(Disaggregated, "train_gpus", True)),
                          "stream_buffer_gb": draw(_f(Disaggregated, "stream_buffer_gb"))},
        "extraction_gpus": draw(_i(Scenario, "extraction_gpus")),
        "disk": draw(st.sampled_from(sorted(disk_presets()))),
        "disk_capacity_tb": draw(_f(Scenario, "disk_capacity_tb", True)),
        "staging_double_write": draw(st.booleans()), "compression": draw(_f(Scenario, "compression")),
        "transfer": {"method": draw(st.sampled_from(["none", "link", "object_store", "drives"])),
                     "link_gbps": draw(_f(Transfer, "link_gbps")), "efficiency": draw(_f(Transfer, "efficiency")),
                     "drive_days": draw(_f(Transfer, "drive_days")),
                     "egress_usd_per_gb": draw(_f(Transfer, "egress_usd_per_gb", True))},
        "training": {"gpu": tr_gpu, "gpus": draw(_i(Training, "gpus")), "epochs": draw(_f(Training, "epochs")),
                     "drafter_params": draw(_f(Training, "drafter_params", True)),
                     "drafter_layers": draw(_i(Training, "drafter_layers", True)),
                     "mfu": draw(_f(Training, "mfu")), "disk": draw(st.sampled_from(sorted(disk_presets()))),
                     "ttt_steps": draw(_i(Training, "ttt_steps", True)),
                     "num_anchors": draw(_i(Training, "num_anchors", True)),
                     "block_size": draw(_i(Training, "block_size", True))},
        "costs": {"extraction_usd_per_gpu_hour": draw(_f(Costs, "extraction_usd_per_gpu_hour", True)),
                  "training_usd_per_gpu_hour": draw(_f(Costs, "training_usd_per_gpu_hour", True)),
                  "storage": draw(st.sampled_from(sorted(storage_price_presets()))),
                  "storage_usd_per_tb_month": draw(_f(Costs, "storage_usd_per_tb_month", True)),
                  "storage_months": draw(_f(Costs, "storage_months"))},
        "quality": {"workload": draw(st.none() | st.dictionaries(st.sampled_from(list(FAMILIES)),
                                                                 st.floats(min_value=0.01, max_value=1e6), min_size=1)),
                    "domain_transfer": draw(_f(Quality, "domain_transfer", True)),
                    "serving_tokens_per_day": draw(_f(Quality, "serving_tokens_per_day", True)),
                    "serving_gpu": draw(st.none() | st.sampled_from(sorted(gpu_presets())))},
        "custom_model": draw(custom_models()) if model == "custom" else None,
        "custom_gpu": draw(custom_gpus()) if "custom" in (ex_gpu, tr_gpu) else None,
    }
    try:
        return Scenario.model_validate(d)
    except ValidationError:
        assume(False)


def _round_trip(s: Scenario, previous: dict | None) -> Scenario:
    d = s.model_dump()
    data = from_widgets(to_widgets(d), previous)
    data.update(preset=d["preset"], mix=d["mix"], uniform=d["uniform"])   # kept by the page, not by widgets
    return Scenario.model_validate(data)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(scenarios())
def test_scenario_to_widgets_and_back_is_the_identity(s):
    # as on the page: the last scenario keeps the exact value of a control shown in other units
    # (params in billions) as long as the user does not change it
    assert _round_trip(s, s.model_dump()).model_dump() == s.model_dump()
    # without it, every value but the scaled ones is still exact, and those are within a rounding
    # (unless a count is so small, e.g. 5e-324 params, that it underflows to 0 in billions)
    w = to_widgets(s.model_dump())
    assume(not any(w[c.key] == 0.0 and registry._get(s.model_dump(), c.path) for c in registry.CONTROLS
                   if c.kind == "scaled"))
    fresh = _round_trip(s, None).model_dump()
    want = s.model_dump()
    scaled = [c.path for c in registry.CONTROLS if c.kind == "scaled"]
    for path in scaled:
        a, b = fresh, want
        for part in path[:-1]:
            a, b = a.get(part) or {}, b.get(part) or {}
        got, expected = a.get(path[-1]), b.get(path[-1])
        assert got == expected if expected is None else got == pytest.approx(expected, rel=1e-15)
        a.pop(path[-1], None)
        b.pop(path[-1], None)
    assert fresh == want


def test_the_shared_link_example_survives():
    # a $5/h custom GPU and 100,000 B of linear-attention state came back as $2/h and 1,572,864 B
    s = Scenario(model="custom", extraction_gpu="custom",
                 custom_model=ModelSpec(hidden_size=2048, num_layers=48, full_attention_layers=12,
                                        linear_attention_layers=36, num_q_heads=16, num_kv_heads=4, head_dim=128,
                                        vocab_size=151936, params=9e9, active_params=9e9,
                                        linear_state_bytes_per_layer=100_000),
                 custom_gpu=GPUSpec(memory_gb=96, bandwidth_tb_s=4.0, bf16_tflops=500, price_low=5.0,
                                    price_high=5.0))
    w = to_widgets(s.model_dump())
    assert (w["w_cm_state"], w["w_cg_price_low"], w["w_cg_price_high"], w["w_cg_mem"]) == (100_000, 5.0, 5.0, 96.0)
    back = from_widgets(w)
    assert back["custom_model"]["linear_state_bytes_per_layer"] == 100_000
    assert back["custom_gpu"]["price_low"] == back["custom_gpu"]["price_high"] == 5.0


def test_hidden_keys_follow_the_choices():
    d = Scenario().model_dump()   # roofline, link, preset model and GPUs
    h = hidden_keys(d)
    assert {"w_tps", "w_batching", "w_drive_days", "w_egress", "w_cm_hidden", "w_cg_mem"} <= h
    assert not {"w_mfu", "w_link", "w_link_eff", "w_model"} & h
    d["throughput"]["mode"], d["transfer"]["method"], d["model"] = "fixed", "drives", "custom"
    h = hidden_keys(d)
    assert {"w_mfu", "w_max_batch", "w_link", "w_link_eff"} <= h
    assert not {"w_tps", "w_drive_days", "w_cm_hidden"} & h


def test_custom_gpu_only_when_chosen_and_a_cap_switched_off():
    w = to_widgets(Scenario(max_seq_len="none").model_dump())
    assert w["w_cap_mode"] == "none" and w["w_cap"] == 2048     # the number stays for when the cap comes back
    data = from_widgets(w)
    assert data["max_seq_len"] == "none" and "custom_gpu" not in data and "custom_model" not in data
    # the layout's cap (None), and a cap of its own
    assert from_widgets(to_widgets(Scenario().model_dump()))["max_seq_len"] is None
    assert from_widgets(to_widgets(Scenario(max_seq_len=4096).model_dump()))["max_seq_len"] == 4096
    w["w_tr_gpu"] = "custom"
    assert from_widgets(w)["custom_gpu"]["memory_gb"] == 80.0   # the control's default


def test_every_control_default_is_the_field_default():
    # No control keeps its own copy of a default: each one's value where a scenario has none is
    # Scenario()'s value at its path (field defaults and default factories alike), in widget terms.
    fresh = Scenario().model_dump()
    starters = {c.key for c in registry.CONTROLS
                if c.path[0] in ("custom_model", "custom_gpu") or c.path[:2] == ("quality", "workload")}
    for c in registry.CONTROLS:
        if c.key in starters or c.key == "w_cap":
            continue
        assert c.default == c.to_widget(registry._get(fresh, c.path)), c.key
    # the drift this replaced: the training MFU control said 0.35; the field's factory reads
    # efficiency.yaml's training_mfu (0.32), and the custom GPU's MFU said 0.4 for GPUSpec's 0.35
    assert registry.BY_KEY["w_tr_mfu"].default == Scenario().training.mfu == 0.32
    assert registry.BY_KEY["w_cg_mfu"].default == GPUSpec.model_fields["prefill_mfu"].default == 0.35
    # what Scenario() leaves unset starts from a value to edit: a custom model and GPU (validated by
    # their models), the cap mode's 2,048 tokens, the five serving shares at 1/5 each (they sum to 1)
    assert ModelSpec.model_validate(registry.START["custom_model"]).params == 30e9
    assert GPUSpec.model_validate(registry.START["custom_gpu"]).bf16_tflops == 989
    assert fresh["max_seq_len"] is None and registry.BY_KEY["w_cap"].default == 2048
    assert [registry.BY_KEY[f"w_wl_{f}"].default for f in FAMILIES] == [0.2] * 5
    assert to_widgets(fresh) == {**{c.key: c.default for c in registry.CONTROLS},
                                 registry.CAP_MODE: registry.LAYOUT, registry.WL_MODE: registry.FULL}


def test_a_custom_moe_model_survives_the_widgets():
    # issue 34: the experts a custom MoE target routes to reach the widgets and come back (billions scaled)
    m = model_presets()["qwen3-30b-a3b"].model_copy(update={"id": "custom", "name": "Custom model"})
    w = to_widgets(Scenario(model="custom", custom_model=m).model_dump())
    assert (w["w_cm_experts"], w["w_cm_topk"], w["w_cm_expert_b"]) == (128, 8, pytest.approx(28.99))
    back = ModelSpec.model_validate(from_widgets(w)["custom_model"])
    assert (back.num_experts, back.experts_per_token, back.expert_params) == (128, 8, pytest.approx(28.99e9))
