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

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.paths import load_shipped_yaml
from planner.memo import ByIdentity
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
    return ThroughputTable(**load_shipped_yaml(PRESETS / "throughput.yaml"))


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


@functools.cache
def preset_rows() -> tuple[tuple[Measurement, ...], np.ndarray, np.ndarray, tuple[str, ...]]:
    """The rows whose model is a preset, in the table's order, with what the length term reads of
    them as arrays (max(isl, 1), max(osl, 1)) and their models' architecture classes: built once."""
    from planner.specs import model_presets
    models = model_presets()
    rows = tuple(r for r in measurements().rows if r.model in models)
    return (rows, kept([max(r.isl, 1) for r in rows], float), kept([max(r.osl, 1) for r in rows], float),
            tuple(architecture(models[r.model]) for r in rows))


def kept(values, dtype) -> np.ndarray:
    """An array kept and shared between calls: read-only, so no caller can change it for the next."""
    out = np.array(values, dtype=dtype)
    out.flags.writeable = False
    return out


_FIXED: dict[tuple[str, str, str], np.ndarray] = {}
_FIXED_MAX = 256


def _fixed_of(model: ModelSpec, gpu_id: str, weight_dtype: str) -> np.ndarray:
    """Each preset-model row's length-free distance to (model, GPU, dtype) (in preset_rows() order),
    worked out once per triple (keyed by the model's JSON; the model itself is used, never validated
    again: a manifest's model was checked where it was read, and a second validation would refuse it
    here, not there)."""
    return _FIXED_BY_OBJECT.get((model,), (gpu_id, weight_dtype), lambda: _fixed_by_json(model, gpu_id, weight_dtype))


_FIXED_BY_OBJECT = ByIdentity(256)     # the same model object asks again: its JSON is not dumped again


def _fixed_by_json(model: ModelSpec, gpu_id: str, weight_dtype: str) -> np.ndarray:
    from planner.specs import model_presets
    key = (model.model_dump_json(), gpu_id, weight_dtype)
    fixed = _FIXED.get(key)
    if fixed is None:
        models = model_presets()
        if len(_FIXED) >= _FIXED_MAX:
            _FIXED.clear()
        fixed = _FIXED[key] = kept([_fixed_distance(r, models[r.model], model, gpu_id, weight_dtype)
                                    for r in preset_rows()[0]], float)
    return fixed


# numpy's vectorised log may differ from math.log in the last bit or two (~1e-16 on a distance of
# order 1): the rows whose vectorised distance lies within TIE of the least one, or of MAX_DISTANCE,
# are settled by distance() itself, so the row and its distance are the scalar scan's to the bit.
TIE = 1e-9


def nearest_preset(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float,
                   allowed: np.ndarray | None = None, prefer_class: bool = False) -> tuple[Measurement, float] | None:
    """Of the preset-model rows `allowed` (a mask in preset_rows() order; None: all) within
    MAX_DISTANCE, and of those of the model's architecture class when `prefer_class` and one is
    within it: the first in the table's order at the least distance(), with that distance; or None.
    The scan over every row, vectorised: the length term over arrays of the rows' lengths, the rest
    looked up once per (model, GPU, dtype); near ties settled by distance() (TIE)."""
    rows, r_isl, r_osl, _ = preset_rows()
    fixed = _fixed_of(model, gpu_id, weight_dtype)
    approx = fixed + (0.25 * np.abs(np.log(r_isl / max(isl, 1))) + 0.25 * np.abs(np.log(r_osl / max(osl, 1))))

    def exact(i: int) -> float:
        return float(fixed[i]) + _length_distance(rows[i], isl, osl)
    within = approx <= MAX_DISTANCE
    edge = np.abs(approx - MAX_DISTANCE) <= TIE
    if edge.any():
        for i in np.flatnonzero(edge):      # on the threshold: the scalar decides
            within[i] = exact(i) <= MAX_DISTANCE
    if allowed is not None:
        within &= allowed
    if prefer_class:
        same = within & _of_class(architecture(model))
        if same.any():
            within = same
    if not within.any():
        return None
    least = approx[within].min()
    near = np.flatnonzero(within & (approx <= least + TIE))
    d, i = min((exact(i), i) for i in near)          # the least, the first in the table's order on a tie
    return rows[i], d


@functools.cache
def _of_class(architecture_class: str) -> np.ndarray:
    """The preset-model rows (a mask in preset_rows() order) of that architecture class."""
    return kept([c == architecture_class for c in preset_rows()[3]], bool)


def nearest(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float,
            models: dict[str, ModelSpec]) -> tuple[Measurement, float] | None:
    """The nearest row within MAX_DISTANCE, or None. Rows never calibrate themselves away: a
    custom GPU still matches rows of other GPUs, at the GPU term's cost."""
    from planner.specs import model_presets
    if models is model_presets():
        return nearest_preset(model, gpu_id, weight_dtype, isl, osl)
    best = None
    for row in measurements().rows:
        rm = models.get(row.model)
        if rm is None:
            continue
        d = distance(row, rm, model, gpu_id, weight_dtype, isl, osl)
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
