"""One table of the sidebar's controls: widget key, where its value lives in the scenario, its
default, how it converts, when it is hidden. The controls of the Scenario's own fields are built from
the Input each field declares (planner/scenario/inputs.py); only a custom model's and a custom GPU's fields and
the workload shares are listed here. Both directions (scenario -> widget values, widget
values -> scenario), the hidden-key set and every widget's range come from this table; the ranges
are read from the pydantic models' field constraints, so a value a link or manifest may carry is a
value its widget accepts. Plain dicts in, plain dicts out: no streamlit here."""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable

import annotated_types as at
from pydantic import BaseModel

from planner.errors import PlannerInputError
from planner.ids import FAMILIES
from planner.presets.specs import GPUSpec, ModelSpec
from planner.scenario import Scenario, WorkloadShares
from planner.scenario.inputs import BY_PLACEMENT, EXTRACTION_GPU, FILE_ORDER, LAYOUT, SORTED, Declared, declared

__all__ = ["BY_PLACEMENT", "EXTRACTION_GPU", "FILE_ORDER", "LAYOUT", "SORTED"]   # read from here by the page

CUSTOM = "custom"
# The fields of a custom model / GPU a user cannot set: fixed, so the page never shows link text there.
CUSTOM_MODEL_FIXED = {"id": CUSTOM, "name": "Custom model"}
CUSTOM_GPU_FIXED = {"id": CUSTOM, "name": "Custom GPU"}
# the serving workload's states: the full mix's family shares (None), the training mix's own ("mix", what
# a version-5 scenario meant), or the shares set in the w_wl_* widgets
FULL, OWN, SET = "the full mix's", "the mix's own", "set"


def is_int(model: type[BaseModel], name: str) -> bool:
    """An integer field, alone or in a union (max_seq_len: int | "none" | None)."""
    ann = model.model_fields[name].annotation
    args = typing.get_args(ann) if typing.get_origin(ann) in (typing.Union, types.UnionType) else (ann,)
    ints = [a for a in args if a is int or (typing.get_origin(a) is typing.Annotated and typing.get_args(a)[0] is int)]
    return bool(ints) and float not in args


def bounds(model: type[BaseModel], name: str) -> tuple[float | None, float | None]:
    """(min, max) a widget may offer for `model.name`, from its Ge/Gt/Le/Lt constraints. A strict
    bound on an integer moves by one; on a float it stays (pydantic names the field if it is hit)."""
    lo = hi = None
    field = model.model_fields[name]
    integer = is_int(model, name)
    # constraints on the field, or on the numeric member of a union (max_seq_len: int | "none" | None)
    meta = list(field.metadata) + [m for a in typing.get_args(field.annotation) for m in getattr(a, "__metadata__", ())]
    for m in meta:
        if isinstance(m, at.Ge):
            lo = m.ge
        elif isinstance(m, at.Gt):
            lo = m.gt + 1 if integer else m.gt
        elif isinstance(m, at.Le):
            hi = m.le
        elif isinstance(m, at.Lt):
            hi = m.lt - 1 if integer else m.lt
    return lo, hi


def _is_custom_model(s: dict) -> bool:
    return s.get("model") == CUSTOM


def _is_custom_gpu(s: dict) -> bool:
    return CUSTOM in (s.get("extraction_gpu"), (s.get("training") or {}).get("gpu"))


def _own_workload(s: dict) -> bool:
    """The shares are not set in the widgets (None or "mix"): the w_wl_* widgets are hidden."""
    return not isinstance((s.get("quality") or {}).get("workload"), dict)


def _workload_mode(s: dict) -> str:
    w = (s.get("quality") or {}).get("workload")
    return FULL if w is None else OWN if w == "mix" else SET


@dataclass(frozen=True)
class Control:
    key: str
    path: tuple[str, ...]               # where the value lives in Scenario.model_dump()
    model: type[BaseModel]              # whose field constraints bound the widget
    default: Any                        # widget value when the scenario has no value there (from START)
    kind: str = "value"                 # value | int | float | none_as (+ none) | scaled (x scale) | layers | map
    none: Any = None                    # kind none_as: the widget value that stands for None
    scale: float = 1.0                  # kind scaled: scenario value = widget value x scale
    hidden: Callable[[dict], bool] | None = None   # not drawn for this scenario (dict) -> keep its value
    choices: tuple = ()                 # kind map: (scenario value, widget value) pairs

    @property
    def field(self) -> str:
        return self.path[-1]

    def range(self) -> tuple[float | None, float | None]:
        lo, hi = bounds(self.model, self.field)
        if self.kind == "scaled":
            lo = None if lo is None else lo / self.scale
            hi = None if hi is None else hi / self.scale
        if self.kind == "none_as" and self.none is not None and lo is not None:
            lo = min(lo, self.none)     # e.g. 0 = "the layout's" below a field that starts at 1
        return lo, hi

    def to_widget(self, v):
        if self.kind == "map":
            return dict(self.choices)[v]
        if self.kind == "none_as":
            return self.none if v is None else v
        if self.kind == "scaled":
            return None if v is None else v / self.scale
        if self.kind == "layers":
            return ",".join(str(x) for x in v) if v else ""
        if self.kind == "float":
            return None if v is None else float(v)
        return v

    def from_widget(self, w, previous=None):
        if self.kind == "map":
            return {b: a for a, b in self.choices}[w]
        if self.kind == "none_as":
            return None if w is None or w == self.none else w
        if self.kind == "scaled":
            if w is None:
                return None
            if previous is not None and self.to_widget(previous) == w:
                return previous     # unchanged: keep the exact value (w x scale can be off by one ulp)
            return w * self.scale
        if self.kind == "int":
            return None if w is None else int(w)
        if self.kind == "layers":
            text = (w or "").strip()
            if not text:
                return None
            try:
                return [int(x) for x in text.replace(" ", "").split(",") if x]
            except ValueError:
                raise PlannerInputError("layers", text, "give comma-separated whole numbers, e.g. 1,16,31") from None
        return w


def _get(d: dict | None, path: tuple[str, ...]):
    for part in path:
        if not isinstance(d, dict):
            return None
        d = d.get(part)
    return d


def _start() -> dict:
    """What the controls show where a scenario has no value: Scenario()'s own values (its field
    defaults and default factories, never a copy here), and for what Scenario() leaves unset a value
    to start editing from: a custom model and a custom GPU (the fields their models give no default),
    a cap of 2,048 tokens for the cap mode and equal serving shares for the shares mode."""
    s = Scenario().model_dump()
    s["custom_model"] = ModelSpec(hidden_size=5120, num_layers=64, full_attention_layers=64, num_q_heads=40,
                                  num_kv_heads=8, head_dim=128, vocab_size=151936, params=30e9,
                                  active_params=30e9).model_dump()
    s["custom_gpu"] = GPUSpec(memory_gb=80, bandwidth_tb_s=3.35, bf16_tflops=989, fp8_tflops=1979,
                              price_low=2.0, price_high=2.0).model_dump()
    s["max_seq_len"] = 2048
    s["quality"]["workload"] = WorkloadShares(**{f: 1 / len(FAMILIES) for f in FAMILIES}).model_dump()
    return s


START = _start()


def _c(key, path, model, **kw) -> Control:
    """A control; its default is its value in START, in the widget's terms."""
    c = Control(key, tuple(path.split(".")), model, None, **kw)
    return dataclasses.replace(c, default=c.to_widget(_get(START, c.path)))


_CM = {"hidden": lambda s: not _is_custom_model(s)}
_CG = {"hidden": lambda s: not _is_custom_gpu(s)}


def _value(s: dict, path: tuple[str, ...]):
    """The value at `path`, or START's where the scenario (dict) has none."""
    node: Any = s
    for part in path:
        if not isinstance(node, dict) or part not in node:
            return _get(START, path)
        node = node[part]
    return node


def _kind(d: Declared) -> str:
    """A declared input's conversion: its own `kind`, else from what it declares (a mapping, a scale,
    a widget value for None) or the field's type (int, float, else the value as it is)."""
    i = d.input
    if i.kind:
        return i.kind
    if i.mapping:
        return "map"
    if i.scale != 1:
        return "scaled"
    if i.none is not None:
        return "none_as"
    ann = d.field.annotation
    args = typing.get_args(ann) if typing.get_origin(ann) in (typing.Union, types.UnionType) else (ann,)
    return "int" if is_int(d.model, d.name) else "float" if float in args else "value"


def _hidden(rule: tuple[str, tuple] | None) -> Callable[[dict], bool] | None:
    if rule is None:
        return None
    path, values = tuple(rule[0].split(".")), rule[1]
    return lambda s: _value(s, path) not in values


def control_of(d: Declared) -> Control:
    """The control of a declared input (planner.scenario.inputs.Input with a widget key)."""
    i = d.input
    c = _c(i.key, d.path, d.model, kind=_kind(d), none=i.none, scale=i.scale, choices=i.mapping,
           hidden=_hidden(i.shown_when))
    if _value(START, c.path) is None and d.default is not None:   # a field START does not hold (a subclass's)
        c = dataclasses.replace(c, default=c.to_widget(d.default))
    return c

_CUSTOM_MODEL: list[Control] = [
    _c("w_cm_hidden", "custom_model.hidden_size", ModelSpec, kind="int", **_CM),
    _c("w_cm_layers", "custom_model.num_layers", ModelSpec, kind="int", **_CM),
    _c("w_cm_full", "custom_model.full_attention_layers", ModelSpec, kind="int", **_CM),
    _c("w_cm_q", "custom_model.num_q_heads", ModelSpec, kind="int", **_CM),
    _c("w_cm_kv", "custom_model.num_kv_heads", ModelSpec, kind="int", **_CM),
    _c("w_cm_hd", "custom_model.head_dim", ModelSpec, kind="int", **_CM),
    _c("w_cm_latent", "custom_model.kv_latent_dim", ModelSpec, kind="none_as", none=0, **_CM),
    _c("w_cm_vocab", "custom_model.vocab_size", ModelSpec, kind="int", **_CM),
    _c("w_cm_params_b", "custom_model.params", ModelSpec, kind="scaled", scale=1e9, **_CM),
    _c("w_cm_active_b", "custom_model.active_params", ModelSpec, kind="scaled", scale=1e9, **_CM),
    _c("w_cm_ffn", "custom_model.intermediate_size", ModelSpec, kind="none_as", none=0, **_CM),
    _c("w_cm_vision_b", "custom_model.vision_params", ModelSpec, kind="scaled", scale=1e9, **_CM),
    _c("w_cm_mtp_b", "custom_model.mtp_params", ModelSpec, kind="scaled", scale=1e9, **_CM),
    _c("w_cm_tied", "custom_model.tied_embeddings", ModelSpec, **_CM),
    _c("w_cm_lin_k", "custom_model.linear_key_heads", ModelSpec, kind="int", **_CM),
    _c("w_cm_lin_v", "custom_model.linear_value_heads", ModelSpec, kind="int", **_CM),
    _c("w_cm_lin_kd", "custom_model.linear_key_head_dim", ModelSpec, kind="int", **_CM),
    _c("w_cm_lin_vd", "custom_model.linear_value_head_dim", ModelSpec, kind="int", **_CM),
    _c("w_cm_lin_kernel", "custom_model.linear_conv_kernel", ModelSpec, kind="int", **_CM),
    _c("w_cm_lin_dtype", "custom_model.linear_state_dtype", ModelSpec, **_CM),
    _c("w_cm_state", "custom_model.linear_state_bytes_per_layer", ModelSpec, kind="int", **_CM),
    _c("w_cm_experts", "custom_model.num_experts", ModelSpec, kind="int", **_CM),
    _c("w_cm_topk", "custom_model.experts_per_token", ModelSpec, kind="int", **_CM),
    _c("w_cm_expert_b", "custom_model.expert_params", ModelSpec, kind="scaled", scale=1e9, **_CM),
]
_CUSTOM_GPU: list[Control] = [
    _c("w_cg_mem", "custom_gpu.memory_gb", GPUSpec, kind="float", **_CG),
    _c("w_cg_bw", "custom_gpu.bandwidth_tb_s", GPUSpec, kind="float", **_CG),
    _c("w_cg_bf16", "custom_gpu.bf16_tflops", GPUSpec, kind="float", **_CG),
    _c("w_cg_fp8", "custom_gpu.fp8_tflops", GPUSpec, kind="none_as", none=0.0, **_CG),
    _c("w_cg_mfu", "custom_gpu.prefill_mfu", GPUSpec, kind="float", **_CG),
    _c("w_cg_price_low", "custom_gpu.price_low", GPUSpec, kind="float", **_CG),
    _c("w_cg_price_high", "custom_gpu.price_high", GPUSpec, kind="float", **_CG),
]
# the Scenario's own fields, from their declarations; then a custom model's and GPU's, and the shares
CONTROLS: list[Control] = [
    *(control_of(d) for d in declared(Scenario) if d.input.key),
    *_CUSTOM_MODEL, *_CUSTOM_GPU,
    *[_c(f"w_wl_{f}", f"quality.workload.{f}", WorkloadShares, kind="float", hidden=_own_workload)
      for f in FAMILIES],
]
BY_KEY = {c.key: c for c in CONTROLS}
# max_seq_len: the layout's cap (None), no cap ("none") or w_cap tokens; w_cap keeps its number meanwhile
CAP_MODE = "w_cap_mode"
CAP_MODES = (LAYOUT, "cap", "none")
# quality.workload: the full mix's shares (None), the mix's own ("mix") or the shares in the w_wl_* widgets
WL_MODE = "w_wl_mode"
WL_MODES = (FULL, OWN, SET)
KEYS = [c.key for c in CONTROLS] + [CAP_MODE, WL_MODE]


def to_widgets(scenario: dict) -> dict:
    """Every control's value for a scenario (a Scenario.model_dump()); controls the scenario has no
    value for (a custom model's when the model is a preset) get their defaults."""
    out = {}
    for c in CONTROLS:
        parent = _get(scenario, c.path[:-1]) if len(c.path) > 1 else scenario
        out[c.key] = c.to_widget(parent[c.field]) if isinstance(parent, dict) and c.field in parent else c.default
    cap = scenario.get("max_seq_len")
    out[CAP_MODE] = LAYOUT if cap is None else "none" if cap == "none" else "cap"
    out[WL_MODE] = _workload_mode(scenario)
    out["w_cap"] = cap if isinstance(cap, int) else BY_KEY["w_cap"].default
    return out


def from_widgets(values: dict, previous: dict | None = None) -> dict:
    """The scenario fields the controls set, as a dict (validated by the caller). `previous` (the
    last scenario's dump) keeps scaled values exact when their widget was not changed. A custom
    model / GPU is included only when selected."""
    data: dict = {}
    custom_model = _is_custom_model({"model": values.get("w_model")})
    custom_gpu = CUSTOM in (values.get("w_ex_gpu"), values.get("w_tr_gpu"))
    for c in CONTROLS:
        if c.path[0] == "custom_model" and not custom_model or c.path[0] == "custom_gpu" and not custom_gpu:
            continue
        w = values.get(c.key, c.default)
        node = data
        for part in c.path[:-1]:
            node = node.setdefault(part, {})
        node[c.field] = c.from_widget(w, _get(previous, c.path))
    mode = values.get(CAP_MODE, LAYOUT)
    if mode != "cap":
        data["max_seq_len"] = None if mode == LAYOUT else "none"
    mode = values.get(WL_MODE, FULL)
    if mode != SET:
        data["quality"]["workload"] = None if mode == FULL else "mix"
    # your own runs (--quality-points) have no control: a manifest or link that carries them keeps them
    points = ((previous or {}).get("quality") or {}).get("points")
    if points:
        data["quality"]["points"] = points
    if custom_model:
        cm = data["custom_model"]
        cm["full_attention_layers"] = min(cm["full_attention_layers"], cm["num_layers"])
        cm["linear_attention_layers"] = cm["num_layers"] - cm["full_attention_layers"]
        cm["active_params"] = min(cm["active_params"], cm["params"])
        cm.update(CUSTOM_MODEL_FIXED)
        # no widget edits the model's name and hub id: they stay what the scenario (a link, an import) said
        before = _get(previous, ("custom_model",))
        if isinstance(before, dict):
            cm.update({k: before[k] for k in ("name", "hf_id") if before.get(k) is not None})
    if custom_gpu:
        data["custom_gpu"].update(CUSTOM_GPU_FIXED)
    return data


def hidden_keys(scenario: dict) -> set[str]:
    """The controls the sidebar does not draw for this scenario (their values must be kept)."""
    return {c.key for c in CONTROLS if c.hidden is not None and c.hidden(scenario)}


def widget_range(key: str) -> dict:
    """min_value / max_value keyword arguments for the control's widget (None = unbounded)."""
    c = BY_KEY[key]
    lo, hi = c.range()
    cast = int if is_int(c.model, c.field) and c.kind != "scaled" else float
    return {"min_value": None if lo is None else cast(lo), "max_value": None if hi is None else cast(hi)}
