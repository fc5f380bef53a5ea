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
time the roofline puts mostly in that phase (planner/phases/extraction.py), of the same architecture class
when one is near. How far that row reaches (another decode regime, engine family, GPU generation or
class) decides, from the held-out transfers of the same reach between publications, whether it scales
the roofline at all and how wide the band is (extraction.rules); a row of another class, GPU or engine
is an extrapolation.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.paths import load_shipped_yaml
from planner.phases.assumption_rows import Assumption
from planner.phases.reuse import Reuse, reused
from planner.presets.specs import ModelSpec

PRESETS = Path(__file__).resolve().parents[1] / "presets"
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
    return _fixed_terms(_RowFacts.of(row, row_model), model.forward_params(), architecture(model), gpu_id,
                        generation(gpu_id), weight_dtype)


@dataclass(frozen=True)
class _RowFacts:
    """What the length-free distance reads of a table row and its model."""

    forward_params: float
    architecture: str
    gpu: str
    generation: str
    weight_dtype: str
    engine: str

    @classmethod
    def of(cls, row: Measurement, row_model: ModelSpec) -> "_RowFacts":
        return cls(row_model.forward_params(), architecture(row_model), row.gpu, generation(row.gpu),
                   row.weight_dtype, row.engine)


def _fixed_terms(f: _RowFacts, forward_params: float, arch: str, gpu_id: str, gen: str, weight_dtype: str) -> float:
    d = abs(math.log(f.forward_params / forward_params))
    d += 0.5 * (f.architecture != arch)
    d += 1.0 * (f.gpu != gpu_id) + 0.5 * (f.generation != gen)
    d += 0.5 * (f.weight_dtype != weight_dtype)
    d += 0.3 * (f.engine != "vllm-serve")
    return d


def _length_distance(row: Measurement, isl: float, osl: float) -> float:
    return 0.25 * abs(math.log(max(row.isl, 1) / max(isl, 1))) + 0.25 * abs(math.log(max(row.osl, 1) / max(osl, 1)))


@functools.cache
def preset_rows() -> tuple[tuple[Measurement, ...], tuple[str, ...], tuple[_RowFacts, ...]]:
    """The rows whose model is a preset, in the table's order, their models' architecture classes and
    what the length-free distance reads of each: read from the presets once (keyed by nothing)."""
    from planner.presets.specs import model_presets
    models = model_presets()
    rows = tuple(r for r in measurements().rows if r.model in models)
    return rows, tuple(architecture(models[r.model]) for r in rows), tuple(_RowFacts.of(r,
                                                                                        models[r.model]) for r in rows)


def kept(values, dtype) -> np.ndarray:
    """An array kept and shared between calls: read-only, so no caller can change it for the next."""
    out = np.array(values, dtype=dtype)
    out.flags.writeable = False
    return out


def _fixed_of(model: ModelSpec, gpu_id: str, weight_dtype: str) -> np.ndarray:
    """Each preset-model row's length-free distance to (model, GPU, dtype), in preset_rows() order."""
    params, arch, gen = model.forward_params(), architecture(model), generation(gpu_id)
    return np.array([_fixed_terms(f, params, arch, gpu_id, gen, weight_dtype) for f in preset_rows()[2]], float)


def nearest_preset(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float,
                   allowed: np.ndarray | None = None, prefer_class: bool = False,
                   reuse: Reuse | None = None) -> tuple[Measurement, float] | None:
    """Of the preset-model rows `allowed` (a mask in preset_rows() order; None: all) within
    MAX_DISTANCE, and of those of the model's architecture class when `prefer_class` and one is
    within it: the first in the table's order at the least distance(), with that distance; or None.
    The scalar scan over the few rows that can be within MAX_DISTANCE at any length (their
    length-free distance is; the length term is never negative): a row's distance is its length-free
    part plus the length term, as distance() adds them. `reuse` (planner/phases/reuse.py): the candidates
    found once per model, GPU, dtype and mask (they do not depend on the lengths)."""
    rows = preset_rows()[0]
    best = best_same = None
    for i, fixed, same in reused(reuse, "calibration_candidates", (model, allowed), (gpu_id, weight_dtype),
                                 lambda: _candidates(model, gpu_id, weight_dtype, allowed)):
        d = fixed + _length_distance(rows[i], isl, osl)
        if d <= MAX_DISTANCE:
            if best is None or d < best[0]:           # strictly less: the first in the table's order on a tie
                best = (d, i)
            if same and (best_same is None or d < best_same[0]):
                best_same = (d, i)
    pick = best_same if prefer_class and best_same is not None else best
    return None if pick is None else (rows[pick[1]], pick[0])


def _candidates(model: ModelSpec, gpu_id: str, weight_dtype: str,
                allowed: np.ndarray | None) -> tuple[tuple[int, float, bool], ...]:
    """(row index, length-free distance, of the model's class) of each allowed preset-model row whose
    length-free distance is within MAX_DISTANCE, in the table's order."""
    fixed = _fixed_of(model, gpu_id, weight_dtype)
    same = architecture(model)
    classes = preset_rows()[1]
    return tuple((i, float(fixed[i]), classes[i] == same) for i in range(len(fixed))
                 if fixed[i] <= MAX_DISTANCE and (allowed is None or allowed[i]))


def nearest(model: ModelSpec, gpu_id: str, weight_dtype: str, isl: float, osl: float,
            models: dict[str, ModelSpec]) -> tuple[Measurement, float] | None:
    """The nearest row within MAX_DISTANCE, or None. Rows never calibrate themselves away: a
    custom GPU still matches rows of other GPUs, at the GPU term's cost."""
    from planner.presets.specs import model_presets
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


def calibration_assumptions(prefill: Calibration | None, decode: Calibration | None,
                            whole: Calibration | None) -> list[Assumption]:
    """The calibrations' Assumptions rows (issue 22): one row per phase when the phases are calibrated apart
    (`prefill`, `decode`), else the one calibration (`whole`) when there is one."""
    cals = [x for x in (prefill, decode) if x is not None] or [x for x in (whole,) if x is not None]
    out = []
    for cal in cals:
        name = f"{cal.phase} calibration" if cal.phase else "calibration"
        value = (f"{cal.row}: measured {cal.measured:,.0f} / roofline {cal.roofline:,.0f} {cal.metric} tok/s "
                 f"per GPU = x{cal.factor:.2f}") if cal.row else cal.note
        if cal.extrapolated and cal.band[1]:   # a transfer, or the roofline alone: its band too
            value += (f"{'; ' + cal.note if cal.row else ''}, "
                      f"the hours x{math.exp(cal.band[0]):.2f}-{math.exp(cal.band[1]):.2f}")
        out.append(Assumption(name=name, value=value, tag="third-party" if cal.row and not cal.extrapolated
                              else "estimate", source=f"{cal.source} ({cal.date}); planner/presets/throughput.yaml"
                              if cal.row else "planner/presets/throughput.yaml"))
    return out
