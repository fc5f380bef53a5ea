"""Hardware and model descriptions (pydantic), and the preset catalogs loaded from presets/*.yaml."""
from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from planner.ids import ID_PATTERN, check_no_control, is_hub_name, is_id, is_local_path

PRESETS = Path(__file__).resolve().parent


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
    intermediate_size: int | None = Field(None, gt=0, le=1_000_000)   # dense MLP width (sizes a drafter layer)
    params: float = Field(gt=0, le=1e13)
    active_params: float = Field(gt=0, le=1e13)
    # parameters a text-only forward pass does not run: the vision tower and the multi-token-prediction head
    vision_params: float = Field(0, ge=0, le=1e12)
    mtp_params: float = Field(0, ge=0, le=1e12)
    tied_embeddings: bool = False          # untied: the input embedding (H x V) is a lookup, not a matmul
    # MoE: routed experts per MoE layer (0: a dense model), the experts a token is routed to (top-k) and
    # every routed expert's parameters over all layers (shared experts count with the dense part);
    # planner/phases/serving.py prices the verify step's weight traffic with them
    num_experts: int = Field(0, ge=0, le=100_000)
    experts_per_token: int = Field(0, ge=0, le=1024)
    expert_params: float = Field(0, ge=0, le=1e13)
    # linear-attention (Gated DeltaNet) layers: the per-sequence state vLLM caches, from the config
    # (vllm model_executor/layers/mamba/mamba_utils.py gated_delta_net_state_shape): a conv state of
    # (kernel - 1) x (2 key heads x key dim + value heads x value dim) in the model dtype and a
    # temporal state of value heads x value dim x key dim in `linear_state_dtype` (mamba_ssm_dtype)
    linear_key_heads: int = Field(0, ge=0, le=4096)
    linear_value_heads: int = Field(0, ge=0, le=4096)
    linear_key_head_dim: int = Field(128, ge=1, le=4096)
    linear_value_head_dim: int = Field(128, ge=1, le=4096)
    linear_conv_kernel: int = Field(4, ge=1, le=64)
    linear_state_dtype: Literal["float32", "bfloat16", "float16"] = "bfloat16"
    # an explicit state size per linear-attention layer (conv + temporal); 0 = from the shape above
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
        if self.num_experts and not (1 <= self.experts_per_token <= self.num_experts and 0 < self.expert_params
                                     and self.expert_params * self.experts_per_token / self.num_experts
                                     < self.active_params and self.expert_params < self.params):
            raise ValueError(f"num_experts ({self.num_experts}) needs experts_per_token between 1 and it (got "
                             f"{self.experts_per_token}) and expert_params ({self.expert_params:g}) above 0, below "
                             f"params, whose routed share (x top-k / experts) is below active_params")
        if self.vision_params + self.mtp_params >= self.active_params:
            raise ValueError(f"vision_params + mtp_params ({self.vision_params + self.mtp_params:g}) leave no "
                             f"parameter of active_params ({self.active_params:g}) for the text forward pass")
        return self

    def weight_bytes(self, weight_dtype: str) -> float:
        """What the extraction GPUs hold: every checkpoint weight (vLLM loads the vision tower too)."""
        return self.params * (1 if weight_dtype == "fp8" else 2)

    def embedding_params(self) -> float:
        """The input embedding table when it is not tied to the LM head: a lookup, no matmul FLOPs."""
        return 0.0 if self.tied_embeddings else float(self.hidden_size * self.vocab_size)

    def forward_params(self) -> float:
        """Parameters whose matmuls a text-only forward pass runs per token: the active parameters
        without the vision tower, the MTP head and an untied input embedding. A count that the
        embedding table would more than halve is taken as one that already leaves it out."""
        text = self.active_params - self.vision_params - self.mtp_params
        embedding = self.embedding_params()
        return text - embedding if embedding < text / 2 else text

    def kv_bytes_per_token(self, kv_dtype: str = "bf16") -> int:
        """KV-cache bytes per token over all full-attention layers (bf16 or fp8 cache)."""
        per_layer = self.kv_latent_dim if self.kv_latent_dim else 2 * self.num_kv_heads * self.head_dim
        return per_layer * (1 if kv_dtype == "fp8" else 2) * self.full_attention_layers

    def linear_conv_state_bytes_per_layer(self) -> int:
        """(kernel - 1) rows of the conv channels (2 x key dim + value dim) in the model dtype (bf16)."""
        conv_dim = (2 * self.linear_key_heads * self.linear_key_head_dim
                    + self.linear_value_heads * self.linear_value_head_dim)
        return (self.linear_conv_kernel - 1) * conv_dim * 2

    def linear_ssm_state_bytes_per_layer(self) -> int:
        """value heads x value dim x key dim in the state dtype (the config's mamba_ssm_dtype)."""
        width = 4 if self.linear_state_dtype == "float32" else 2
        return self.linear_value_heads * self.linear_value_head_dim * self.linear_key_head_dim * width

    def linear_state_bytes_each(self) -> int:
        """One linear-attention layer's state per sequence: the explicit figure, or conv + temporal."""
        if self.linear_state_bytes_per_layer:
            return self.linear_state_bytes_per_layer
        return self.linear_conv_state_bytes_per_layer() + self.linear_ssm_state_bytes_per_layer()

    def linear_state_bytes(self) -> int:
        return self.linear_state_bytes_each() * self.linear_attention_layers

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


def load_preset(name: str) -> Any:   # parsed YAML: a mapping or a list, as each file is; its reader shapes it
    """One preset file of planner/presets/, parsed: the one reader of the presets. Parsed once per
    process (the presets ship with the package; a YAML parse is ~5-15 ms and a plan reads some
    several times); each call gets its own copy, so a caller may change what it gets."""
    return copy.deepcopy(_parsed(name))


@functools.cache
def _parsed(name: str) -> Any:
    from planner.catalog.paths import load_shipped_yaml
    return load_shipped_yaml(PRESETS / name)


@functools.cache
def model_presets() -> dict[str, ModelSpec]:
    return {d["id"]: ModelSpec(**d) for d in load_preset("models.yaml")}


@functools.cache
def gpu_presets() -> dict[str, GPUSpec]:
    return {d["id"]: GPUSpec(**d) for d in load_preset("gpus.yaml")}


@functools.cache
def hardware() -> dict:
    return load_preset("hardware.yaml")


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


def engine_defaults(gpu: GPUSpec, usage: str = "llm_class") -> tuple[int, int, str]:
    """(max_num_seqs, max_num_batched_tokens, source): the engine's scheduler defaults for this GPU's
    memory (hardware.yaml `engine`, read from vLLM's arg_utils.py); `usage` llm_class (offline batch
    jobs, the planner's extraction) or serve (`vllm serve`)."""
    gib = gpu.memory_gb * 1e9 / 2**30
    for tier in hardware()["engine"][usage]:
        if gib >= tier["min_gib"] and tier.get("exclude", "\0") not in gpu.id:
            return int(tier["max_num_seqs"]), int(tier["max_batched_tokens"]), str(tier["source"])
    raise AssertionError("the last engine tier has min_gib 0")


NETWORK_KINDS = {"tcp": "parallel", "rdma": "rdma"}   # node network -> hardware.yaml link_efficiency entry


def network_efficiency(kind: str) -> float:
    """Share of the node network's line rate a stream reaches: TCP as parallel transfer tools,
    RDMA as in-datacenter RDMA (hardware.yaml link_efficiency)."""
    return float(hardware()["link_efficiency"][NETWORK_KINDS[kind]]["value"])


def num_layers(model: str | None, custom: "ModelSpec | dict | None" = None) -> int | None:
    """The layer count of a preset model, or of the custom model (a spec or its dump); None if unknown."""
    if model == "custom":
        return custom.get("num_layers") if isinstance(custom, dict) else getattr(custom, "num_layers", None)
    spec = model_presets().get(model) if model is not None else None
    return spec.num_layers if spec else None


# Capture layouts live in planner/presets/layouts.py (one module per concern); re-exported for callers.
from planner.presets.layouts import LayoutSpec, dflash_layers, layout_presets  # noqa: E402,F401
