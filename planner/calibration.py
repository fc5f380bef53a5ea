"""Published throughput measurements (presets/throughput.yaml) and the lookup of the `calibrated`
throughput mode: the row nearest to the user's model, GPU, dtype and request shape, whose
measured / roofline ratio then scales the user's roofline.

Nearness is a distance, each term an estimate of how much less a row tells about the user's case:
|log(forward params ratio)|, + 0.5 for another architecture class (dense / MoE / hybrid), + 1 for
another GPU (+ 0.5 more for another GPU generation), + 0.5 for another weight dtype, + 0.3 for another
engine than vLLM, + 0.25 x |log(shape ratio)| for input and for output length, + 0.25 x |log(concurrency
ratio)| where both are known. Rows farther than MAX_DISTANCE do not match, and the plan falls back to
the roofline and says so.

Per phase (issue 22): prefill and decode are calibrated separately, each by the nearest row whose
time the roofline puts mostly in that phase (planner/extraction.py), of the same architecture class
when one is near. How far that row reaches (another decode regime, engine family, GPU generation or
class) decides, from the held-out transfers of the same reach between publications, whether it scales
the roofline at all and how wide the band is (extraction.rules); a row of another class, GPU or engine
is an extrapolation.
"""
from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from planner.specs import ModelSpec

PRESETS = Path(__file__).resolve().parent / "presets"
MAX_DISTANCE = 2.5


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EngineCaps(_Strict):
    max_num_seqs: int
    max_batched_tokens: int
    source: str


class Measurement(_Strict):
    id: str
    model: str
    gpu: str
    tp: int = Field(ge=1)
    engine: Literal["trtllm", "vllm-serve", "sglang"]
    weight_dtype: Literal["bf16", "fp8"]
    isl: float = Field(ge=1)
    osl: float = Field(ge=0)
    concurrency: int | None = None
    metric: Literal["output", "total", "prefill"]
    value: float = Field(gt=0)          # tokens/s per GPU, as `metric` counts them
    source: str
    date: str


class ThroughputTable(_Strict):
    engines: dict[str, EngineCaps]
    generations: dict[str, str] = {}     # GPU id -> architecture generation (the distance's generation term)
    rows: list[Measurement]


@functools.cache
def measurements() -> ThroughputTable:
    with open(PRESETS / "throughput.yaml", encoding="utf-8") as fh:
        return ThroughputTable(**yaml.safe_load(fh))


def architecture(model: ModelSpec) -> str:
    if model.linear_attention_layers:
        return "hybrid"
    return "moe" if model.active_params < model.params else "dense"


def generation(gpu_id: str) -> str:
    return measurements().generations.get(gpu_id, gpu_id)


def distance(row: Measurement, row_model: ModelSpec, model: ModelSpec, gpu_id: str, weight_dtype: str,
             isl: float, osl: float, concurrency: float | None = None) -> float:
    d = _fixed_distance(row, row_model, model, gpu_id, weight_dtype) + _length_distance(row, isl, osl)
    if concurrency and row.concurrency:
        d += 0.25 * abs(math.log(row.concurrency / concurrency))
    return d


def _fixed_distance(row: Measurement, row_model: ModelSpec, model: ModelSpec, gpu_id: str,
                    weight_dtype: str) -> float:
    """The terms of the distance that do not depend on the lengths: size, architecture, GPU, dtype, engine."""
    d = abs(math.log(row_model.forward_params() / model.forward_params()))
    d += 0.5 * (architecture(row_model) != architecture(model))
    d += 1.0 * (row.gpu != gpu_id) + 0.5 * (generation(row.gpu) != generation(gpu_id))
    d += 0.5 * (row.weight_dtype != weight_dtype)
    d += 0.3 * (row.engine != "vllm-serve")
    return d


def _length_distance(row: Measurement, isl: float, osl: float) -> float:
    return 0.25 * abs(math.log(max(row.isl, 1) / max(isl, 1))) + 0.25 * abs(math.log(max(row.osl, 1) / max(osl, 1)))


_FIXED: dict[tuple[str, str, str], dict[str, float]] = {}
_FIXED_MAX = 256


def _fixed_of(model: ModelSpec, gpu_id: str, weight_dtype: str) -> dict[str, float]:
    """Each preset-model row's length-free distance to (model, GPU, dtype), worked out once per triple
    (keyed by the model's JSON; the model itself is used, never validated again: a manifest's model
    was checked where it was read, and a second validation would refuse it here, not there)."""
    from planner.specs import model_presets
    key = (model.model_dump_json(), gpu_id, weight_dtype)
    fixed = _FIXED.get(key)
    if fixed is None:
        models = model_presets()
        if len(_FIXED) >= _FIXED_MAX:
            _FIXED.clear()
        fixed = _FIXED[key] = {r.id: _fixed_distance(r, models[r.model], model, gpu_id, weight_dtype)
                               for r in measurements().rows if r.model in models}
    return fixed


def preset_distances(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float) -> dict[str, float]:
    """distance() of every row whose model is a preset, to (model, GPU, dtype) at these lengths: the
    length-free part looked up once per (model, GPU, dtype), the lengths' part added."""
    fixed = _fixed_of(model, gpu_id, weight_dtype)
    return {r.id: fixed[r.id] + _length_distance(r, isl, osl) for r in measurements().rows if r.id in fixed}


def nearest(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float,
            models: dict[str, ModelSpec]) -> tuple[Measurement, float] | None:
    """The nearest row within MAX_DISTANCE, or None. Rows never calibrate themselves away: a
    custom GPU still matches rows of other GPUs, at the GPU term's cost."""
    from planner.specs import model_presets
    fast = preset_distances(model, gpu_id, weight_dtype, isl, osl) if models is model_presets() else None
    best = None
    for row in measurements().rows:
        rm = models.get(row.model)
        if rm is None:
            continue
        d = fast[row.id] if fast is not None else distance(row, rm, model, gpu_id, weight_dtype, isl, osl)
        if best is None or d < best[1]:
            best = (row, d)
    if best is None or best[1] > MAX_DISTANCE:
        return None
    return best


class Calibration(BaseModel):
    """What the calibrated mode used: the row, its measured and roofline figures and their ratio."""

    row: str = ""
    source: str = ""
    date: str = ""
    metric: str = ""
    measured: float = 0.0
    roofline: float = 0.0
    factor: float = 1.0              # measured / roofline, applied to the user's rates (of `phase`)
    distance: float = 0.0
    note: str = ""
    phase: str = ""                  # prefill | decode (per-phase calibration), "" for both
    extrapolated: bool = False       # the row is of another architecture class or GPU
    band: tuple[float, float] = (0.0, 0.0)   # log(roofline x factor / measured) held-out spread of such matches
