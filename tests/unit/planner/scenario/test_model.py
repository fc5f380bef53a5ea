"""The Scenario and the specs refuse hostile strings and out-of-range numbers; its defaults come
from the presets (hardware.yaml), read here straight from the YAML file."""
import math
import typing
from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from planner import Scenario, plan
from planner.export.plan_json import to_json_dict
from planner.ids import is_id
from planner.presets.specs import GPUSpec, ModelSpec
from planner.scenario import Costs, MixItem, Throughput, Training, Transfer, UniformMix

ROOT = Path(__file__).resolve().parents[4]
HARDWARE = yaml.safe_load((ROOT / "planner" / "presets" / "hardware.yaml").read_text())

BAD_IDS = ["abc\n", "ABC", "a b", "", "-lead", "x" * 65, "a/b", "a\x1b[31m", "a\x00", "qwen3-8b\r"]


@pytest.mark.parametrize("bad", BAD_IDS)
@pytest.mark.parametrize("build", [
    lambda v: Scenario(model=v), lambda v: Scenario(layout=v), lambda v: Scenario(extraction_gpu=v),
    lambda v: Scenario(disk=v), lambda v: Scenario(preset=v), lambda v: Training(gpu=v), lambda v: Training(disk=v),
    lambda v: Costs(storage=v), lambda v: MixItem(id=v, rows=1),
], ids=["model", "layout", "extraction_gpu", "disk", "preset", "training.gpu", "training.disk", "costs.storage",
        "mix.id"])
def test_every_id_field_is_a_strict_id(build, bad):
    with pytest.raises(ValidationError):
        build(bad)


def test_good_ids_pass():
    s = Scenario(model="qwen3-8b", mix=[{"id": "glaive_fc", "rows": 3}], training={"gpu": "h100-sxm"})
    assert s.model == "qwen3-8b" and s.mix[0].id == "glaive_fc"


def test_every_preset_and_catalog_id_fits_the_pattern():
    ids = []
    for name in ("models.yaml", "gpus.yaml", "layouts.yaml"):
        ids += [d["id"] for d in yaml.safe_load((ROOT / "planner" / "presets" / name).read_text())]
    ids += [d["id"] for d in HARDWARE["disks"] + HARDWARE["storage_prices"]]
    comps = yaml.safe_load((ROOT / "datasets_meta" / "components.yaml").read_text())
    comps = comps["components"] if isinstance(comps, dict) else comps
    ids += [c["id"] for c in comps]
    assert len(ids) > 20
    assert [i for i in ids if not is_id(i)] == []


MODEL = dict(hidden_size=64, num_layers=2, full_attention_layers=2, num_q_heads=2, num_kv_heads=1, head_dim=32,
             vocab_size=1000, params=1e6, active_params=1e6)
GPU = dict(memory_gb=24, bandwidth_tb_s=1, bf16_tflops=100)
CONTROL = ["line\nbreak", "carriage\rreturn", "escape \x1b[2J", "nul\x00", "c1 \x9b"]


@pytest.mark.parametrize("text", CONTROL)
@pytest.mark.parametrize("spec, field", [(ModelSpec, "name"), (ModelSpec, "source"), (ModelSpec, "tag"),
                                         (ModelSpec, "estimates"), (ModelSpec, "hf_id"), (GPUSpec, "name"),
                                         (GPUSpec, "source"), (GPUSpec, "interconnect")])
def test_spec_strings_refuse_control_characters(spec, field, text):
    base = MODEL if spec is ModelSpec else GPU
    with pytest.raises(ValidationError):
        spec(**base, **{field: text})


@pytest.mark.parametrize("spec, field, limit", [(ModelSpec, "name", 120), (ModelSpec, "source", 1000),
                                                (ModelSpec, "tag", 32), (GPUSpec, "name", 120),
                                                (GPUSpec, "interconnect", 120), (GPUSpec, "source", 1000),
                                                (ModelSpec, "id", 64), (GPUSpec, "id", 64)])
def test_spec_strings_have_a_max_length(spec, field, limit):
    base = MODEL if spec is ModelSpec else GPU
    assert getattr(spec(**base, **{field: "a" * limit}), field) == "a" * limit
    with pytest.raises(ValidationError):
        spec(**base, **{field: "a" * (limit + 1)})


@pytest.mark.parametrize("hf_id", ["Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B", "/models/qwen3-8b",
                                   "checkpoints/run_1/step-100"])
def test_hf_id_hub_name_or_safe_local_path(hf_id):
    assert ModelSpec(**MODEL, hf_id=hf_id).hf_id == hf_id


@pytest.mark.parametrize("hf_id", ["Qwen/Qwen3-8B\n", "../secrets", "models/../../etc", "https://x.y/z", "a b/c",
                                   "$(rm -rf ~)", "owner/name;ls", ""])
def test_hf_id_refuses_anything_else(hf_id):
    with pytest.raises(ValidationError):
        ModelSpec(**MODEL, hf_id=hf_id)


def test_defaults_are_the_presets():
    eff = HARDWARE["efficiency"]
    s = Scenario()
    assert s.throughput.decode_bandwidth_efficiency == eff["decode_bandwidth"]["value"] == 0.8
    # the scheduler caps default to the engine's for the GPU (hardware.yaml engine), decode's own
    # efficiency to the preset's (hardware.yaml decode_mfu): None in the scenario
    assert s.throughput.max_batch is None and s.throughput.max_batched_tokens is None
    assert s.throughput.decode_mfu is None and s.throughput.mode == "calibrated"
    assert s.throughput.tensor_parallel_efficiency == eff["tensor_parallel_efficiency"]["value"] == 0.9
    assert s.training.mfu == eff["training_mfu"]["value"] == 0.32   # issue 22: refitted end to end
    assert s.node_network_gbps == eff["node_network_gbps"]["value"] == 200
    assert s.disaggregated.stream_buffer_gb == eff["stream_buffer_gb"]["value"] == 8
    assert s.transfer.efficiency == HARDWARE["link_efficiency"]["parallel"]["value"] == 0.5
    assert (s.throughput.tokens_per_s, s.throughput.batching) == (120, 4)


@pytest.mark.parametrize("build", [
    lambda: Throughput(tokens_per_s=1e-200), lambda: Throughput(batching=1e-200), lambda: Throughput(tokens_per_s=0.5),
    lambda: Transfer(link_gbps=1e-200), lambda: Transfer(efficiency=0.001), lambda: Throughput(prefill_mfu=1e-9),
    lambda: Throughput(decode_bandwidth_efficiency=0.005), lambda: Throughput(tensor_parallel_efficiency=0),
    lambda: Training(mfu=0.001), lambda: Training(epochs=1e-300), lambda: UniformMix(samples=1, tokens=1e-300),
    lambda: Scenario(response_multiplier=1e-300), lambda: Scenario(length_scale=1e-300),
    lambda: GPUSpec(memory_gb=24, bandwidth_tb_s=1e-300, bf16_tflops=100),
    lambda: GPUSpec(memory_gb=24, bandwidth_tb_s=1, bf16_tflops=1e-300),
    lambda: GPUSpec(memory_gb=24, bandwidth_tb_s=1, bf16_tflops=100, prefill_mfu=0.001),
    lambda: Throughput(tokens_per_s=math.inf), lambda: Transfer(link_gbps=math.nan),
])
def test_near_zero_rates_are_refused_by_the_bounds(build):
    with pytest.raises(ValidationError):
        build()


def test_every_numeric_field_has_bounds():
    """The dashboard reads its widget bounds from model_fields: every number has a lower and an upper one."""
    from planner.scenario import Scenario as S
    missing = []
    for model in (S, Throughput, Transfer, Training, Costs, UniformMix, MixItem, GPUSpec):
        for name, f in model.model_fields.items():
            ann = str(f.annotation)
            if ("float" in ann or "int" in ann) and "list" not in ann:
                # constraints on the field, or on the numeric member of a union (max_seq_len: int | "none")
                meta = list(f.metadata) + [m for a in typing.get_args(f.annotation)
                                           for m in getattr(a, "__metadata__", ())]
                lo = [m for m in meta if getattr(m, "ge", None) is not None or getattr(m, "gt", None) is not None]
                hi = [m for m in meta if getattr(m, "le", None) is not None or getattr(m, "lt", None) is not None]
                if not lo or not hi:
                    missing.append(f"{model.__name__}.{name}")
    assert missing == []


def test_the_corners_of_the_bounds_plan_to_finite_figures():
    # the slowest of everything: 1 tok/s x 0.1 batching, a 10 Mb/s link at 0.01, 0.01 MFUs, on the
    # most rows the bounds allow, 100x regenerated responses (sequences of 100,000 + 99 x 50,000 tokens,
    # whose KV cache still fits 64 GPUs: longer ones are refused by name, see test_plan.py)
    slow = Scenario(uniform=UniformMix(samples=10**10, tokens=10**5, response_tokens=10**5 / 2),
                    layout="seed-article", max_seq_len=None, regenerate=True, response_multiplier=100,
                    throughput=Throughput(mode="fixed", tokens_per_s=1, batching=0.1),
                    transfer=Transfer(method="object_store", link_gbps=0.01, efficiency=0.01),
                    training=Training(mfu=0.01, epochs=1000, gpus=1),
                    costs=Costs(extraction_usd_per_gpu_hour=1000, training_usd_per_gpu_hour=1000,
                                storage_usd_per_tb_month=100_000, storage_months=120))
    d = to_json_dict(plan(slow))
    assert math.isfinite(d["extraction"]["wall_hours"]) and math.isfinite(d["transfer_hours"])
    assert math.isfinite(d["cost_usd"]["total_offline"]) and math.isfinite(d["cost_usd"]["total_online"])
    roof = slow.with_changes(throughput=Throughput(prefill_mfu=0.01, decode_bandwidth_efficiency=0.01,
                                                   tensor_parallel_efficiency=0.01))
    assert math.isfinite(plan(roof).extraction.wall_hours)
