"""The calibration's nearest-row search (issue 23: the rows that can be near at any length kept per
model, GPU, dtype and mask, then scanned): the same row and the same distance, to the bit, as the
scan over every row, kept here as the reference (calibration.distance() over every row, in the
table's order, the first least one within MAX_DISTANCE). The cases ask one model on several GPUs,
dtypes and masks: a kept candidate list keyed without the GPU, the dtype or the mask fails them."""
import math

import pytest

from planner.phases.extraction import _pick, row_phase, source_key
from planner.phases.throughput_calibration import (
    MAX_DISTANCE,
    _length_distance,
    architecture,
    distance,
    measurements,
    nearest,
)
from planner.presets.specs import ModelSpec, gpu_presets, model_presets


def scalar_nearest(model, gpu_id, dtype, isl, osl, keep=lambda r: True, prefer_class=False):
    """The scan as it was: distance() of every preset-model row `keep` takes, within MAX_DISTANCE,
    of the model's class first when `prefer_class`; the first least one."""
    models = model_presets()
    cands = [(distance(r, models[r.model], model, gpu_id, dtype, isl, osl), r) for r in measurements().rows
             if r.model in models and keep(r)]
    cands = [(d, r) for d, r in cands if d <= MAX_DISTANCE]
    if prefer_class:
        same = [(d, r) for d, r in cands if architecture(models[r.model]) == architecture(model)]
        cands = same or cands
    best = min(cands, key=lambda x: x[0], default=None)
    return None if best is None else (best[1].id, best[0])


def _as_pair(hit):
    return None if hit is None else (hit[0].id, hit[1])


def _custom() -> ModelSpec:
    m = model_presets()["qwen3.6-27b"]
    return m.model_copy(update={"id": "mine", "hidden_size": m.hidden_size + 512, "params": m.params * 1.3})


def _cases():
    """Every row's own case, then the same at other lengths, another GPU, the other dtype and a
    custom model; and, for each row, lengths that put it on MAX_DISTANCE (the threshold's rounding)."""
    models, gpus = model_presets(), list(gpu_presets())
    out = []
    for k, r in enumerate(measurements().rows):
        m = models[r.model]
        out.append((m, r.gpu, r.weight_dtype, r.isl, r.osl))
        out.append((m, r.gpu, r.weight_dtype, r.isl * 0.37, r.osl * 3.1 + 1))
        out.append((m, gpus[k % len(gpus)], "fp8" if r.weight_dtype == "bf16" else "bf16", 1.0, 0.0))
        out.append((_custom(), r.gpu, r.weight_dtype, r.isl * 1.7, r.osl * 0.2))
        # the input length at which this row's distance to the case (custom model, dtype flipped) is
        # MAX_DISTANCE: 0.25 |log(r.isl / isl)| = MAX - (the rest), isl below the row's
        model, dtype = _custom(), "fp8" if r.weight_dtype == "bf16" else "bf16"
        rest = distance(r, m, model, r.gpu, dtype, r.isl, r.osl)        # the length terms 0 at the row's own
        if rest < MAX_DISTANCE:
            out.append((model, r.gpu, dtype, r.isl / math.exp(4 * (MAX_DISTANCE - rest)), r.osl))
    return out


CASES = _cases()


def test_the_cases_reach_the_threshold_and_both_sides_of_it():
    # the threshold cases put a row within a few ulps of MAX_DISTANCE; some cases match, some match none
    models = model_presets()
    on = [abs(distance(r, models[r.model], *c[:3], c[3], c[4]) - MAX_DISTANCE) for c in CASES
          for r in measurements().rows]
    assert min(on) < 1e-12
    hits = [scalar_nearest(*c) for c in CASES]
    assert any(h is None for h in hits) and sum(h is not None for h in hits) > len(CASES) / 2


def test_nearest_is_the_scalar_scan_to_the_bit():
    for c in CASES:
        assert _as_pair(nearest(*c, model_presets())) == scalar_nearest(*c), c


@pytest.mark.parametrize("phase", ["prefill", "decode"])
def test_the_per_phase_pick_is_the_scalar_scan_to_the_bit(phase):
    for c in CASES:
        assert _as_pair(_pick(*c, phase)) == scalar_nearest(
            *c, keep=lambda r: row_phase(r.id) == phase, prefer_class=True), c
    # a held-out publication and row (bench/fidelity.py's leave one source out)
    for r in measurements().rows[::3]:
        own = frozenset({source_key(r)})
        c = (model_presets()[r.model], r.gpu, r.weight_dtype, r.isl, r.osl)
        assert _as_pair(_pick(*c, phase, own, exclude_row=r.id)) == scalar_nearest(
            *c, keep=lambda x, own=own, r=r: row_phase(x.id) == phase and source_key(x) not in own and x.id != r.id,
            prefer_class=True)


def test_the_length_term_by_hand():
    # 0.25 |log(1000 / 250)| + 0.25 |log(max(0, 1) / 100)| = 0.25 ln 4 + 0.25 ln 100
    r = measurements().rows[0].model_copy(update={"isl": 1000.0, "osl": 0.0})
    assert _length_distance(r, 250.0, 100.0) == pytest.approx(0.25 * math.log(4) + 0.25 * math.log(100), rel=1e-12)


class _OffNumpy:
    """numpy, its log off by a relative `off` (as another CPU's vectorised log may be in the last bits)."""

    def __init__(self, off: float):
        import numpy
        self._np, self._off = numpy, off

    def log(self, x):
        return self._np.log(x) * (1 + self._off)

    def __getattr__(self, name):
        return getattr(self._np, name)


@pytest.mark.parametrize("off", [4e-15, -4e-15])
def test_a_log_off_in_the_last_bits_changes_neither_the_row_nor_its_distance(monkeypatch, off):
    import planner.phases.throughput_calibration as cal
    monkeypatch.setattr(cal, "np", _OffNumpy(off))
    for c in CASES:
        assert _as_pair(nearest(*c, model_presets())) == scalar_nearest(*c), c
