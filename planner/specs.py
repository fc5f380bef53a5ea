"""Hardware and model descriptions (pydantic), and the preset catalogs loaded from presets/*.yaml."""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from planner.ids import ID_PATTERN, check_no_control, is_hub_name, is_id, is_local_path

PRESETS = Path(__file__).resolve().parent / "presets"


def _check_id(text: str) -> str:
    if not is_id(text):
        raise ValueError("an id is 1-64 lowercase letters, digits, '_', '.', '-' (first a letter or digit)")
    return text


def _check_hf_id(text: str) -> str:
    if not (is_hub_name(text) or is_local_path(text)):
        raise ValueError("give a hub name (owner/name) or a local path of safe characters without '..'")
    return text


# The string types every received name goes through (fullmatch, never a `$` that accepts "abc\n").
# (the JSON Schema shows the id pattern anchored; validation itself is the fullmatch above)
Id = Annotated[str, Field(max_length=64, json_schema_extra={"pattern": f"^{ID_PATTERN}$"}), AfterValidator(_check_id)]
Name = Annotated[str, Field(max_length=120), AfterValidator(check_no_control)]
Tag = Annotated[str, Field(max_length=32), AfterValidator(check_no_control)]
Source = Annotated[str, Field(max_length=1000), AfterValidator(check_no_control)]
HfId = Annotated[str, Field(max_length=255), AfterValidator(_check_hf_id)]


class ModelSpec(BaseModel):
    """A target model: what sizes the hidden states, the weights and the KV cache."""

    model_config = ConfigDict(extra="forbid")
    id: Id = "custom"
    name: Name = "Custom model"
    hf_id: HfId | None = None
    hidden_size: int = Field(gt=0, le=65536)
    num_layers: int = Field(gt=0, le=1024)
    full_attention_layers: int = Field(ge=0, le=1024)
    linear_attention_layers: int = Field(0, ge=0, le=1024)
    num_q_heads: int = Field(gt=0, le=1024)
    num_kv_heads: int = Field(gt=0, le=1024)
    head_dim: int = Field(gt=0, le=4096)
    kv_latent_dim: int | None = Field(None, gt=0, le=65536)
    vocab_size: int = Field(gt=0, le=10_000_000)
    params: float = Field(gt=0, le=1e13)
    active_params: float = Field(gt=0, le=1e13)
    linear_state_bytes_per_layer: int = Field(0, ge=0, le=10**10)
    tag: Tag = "estimate"
    source: Source = "entered by the user"
    estimates: Source | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "ModelSpec":
        if self.full_attention_layers + self.linear_attention_layers != self.num_layers:
            raise ValueError(
                f"full_attention_layers ({self.full_attention_layers}) + linear_attention_layers "
                f"({self.linear_attention_layers}) must equal num_layers ({self.num_layers})")
        if self.active_params > self.params:
            raise ValueError(f"active_params ({self.active_params:g}) cannot exceed params ({self.params:g})")
        return self

    def weight_bytes(self, weight_dtype: str) -> float:
        return self.params * (1 if weight_dtype == "fp8" else 2)

    def kv_bytes_per_token(self) -> int:
        """KV-cache bytes per token over all full-attention layers (bf16 cache)."""
        per_layer = self.kv_latent_dim if self.kv_latent_dim else 2 * self.num_kv_heads * self.head_dim
        return per_layer * 2 * self.full_attention_layers

    def linear_state_bytes(self) -> int:
        return self.linear_state_bytes_per_layer * self.linear_attention_layers

    def attention_width(self) -> int:
        return self.num_q_heads * self.head_dim


class GPUSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: Id = "custom"
    name: Name = "Custom GPU"
    # Bounds: from a small accelerator to well past any shipping part; every value plans to finite figures.
    memory_gb: float = Field(ge=1, le=10_000)
    bandwidth_tb_s: float = Field(ge=0.01, le=1000)
    bf16_tflops: float = Field(ge=0.1, le=1e6)
    fp8_tflops: float | None = Field(None, ge=0.1, le=1e6)
    interconnect: Name = ""
    price_low: float | None = Field(None, ge=0, le=1000)
    price_high: float | None = Field(None, ge=0, le=1000)
    prefill_mfu: float = Field(0.35, ge=0.01, le=1)
    source: Source = "entered by the user"

    def default_price(self) -> float | None:
        if self.price_low is None or self.price_high is None:
            return None
        return round((self.price_low + self.price_high) / 2, 3)

    def peak_flops(self, dtype: str) -> float:
        if dtype == "fp8" and self.fp8_tflops:
            return self.fp8_tflops * 1e12
        return self.bf16_tflops * 1e12


def _load(name: str) -> object:
    with open(PRESETS / name, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


@functools.cache
def model_presets() -> dict[str, ModelSpec]:
    return {d["id"]: ModelSpec(**d) for d in _load("models.yaml")}


@functools.cache
def gpu_presets() -> dict[str, GPUSpec]:
    return {d["id"]: GPUSpec(**d) for d in _load("gpus.yaml")}


@functools.cache
def hardware() -> dict:
    return _load("hardware.yaml")


def disk_presets() -> dict[str, dict]:
    return {d["id"]: d for d in hardware()["disks"]}


def storage_price_presets() -> dict[str, dict]:
    return {d["id"]: d for d in hardware()["storage_prices"]}


def efficiency(name: str) -> float:
    """The preset value of an efficiency (hardware.yaml `efficiency`): the Scenario's default."""
    return float(hardware()["efficiency"][name]["value"])


def efficiency_range(name: str) -> tuple[float, float]:
    """The plausible range of an efficiency (hardware.yaml), for the sensitivity chart."""
    low, high = hardware()["efficiency"][name]["range"]
    return float(low), float(high)


def efficiency_source(name: str) -> str:
    return hardware()["efficiency"][name]["source"]


LINK_KIND = "parallel"   # the Scenario's link efficiency: parallel object-store / transfer tools


def link_efficiency() -> dict:
    """value, range and source of the default link efficiency (hardware.yaml `link_efficiency`)."""
    return hardware()["link_efficiency"][LINK_KIND]


def num_layers(model: str | None, custom: "ModelSpec | dict | None" = None) -> int | None:
    """The layer count of a preset model, or of the custom model (a spec or its dump); None if unknown."""
    if model == "custom":
        return custom.get("num_layers") if isinstance(custom, dict) else getattr(custom, "num_layers", None)
    spec = model_presets().get(model)
    return spec.num_layers if spec else None


# Capture layouts live in planner/layouts.py (one module per concern); re-exported for callers.
from planner.layouts import LayoutSpec, dflash_layers, layout_presets  # noqa: E402,F401
