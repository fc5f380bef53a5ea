"""plan()'s one cache (issue 32 item 1): every Scenario field, walked from the model's own field
declarations (no hand list of fields), is changed in turn to another valid value (from its type, its
bounds, its Literal's choices, the presets' and the catalog's names); the plan asked right after the
default's (whose plan is then kept) is the plan worked out cold (the cache emptied), to the byte; and
the change moves the plan wherever the field is one plan() reads."""
from __future__ import annotations

import math
import types
import typing
from typing import Literal, Union

import annotated_types
import pytest
from pydantic import BaseModel, TypeAdapter

from planner.catalog.stats import get_catalog
from planner.errors import PlannerInputError
from planner.planning import Plan, plan, plan_cache_clear, plan_key
from planner.presets.drafter_kinds import DRAFTER_KINDS
from planner.presets.layouts import LAYER_RULES, layout_presets
from planner.presets.specs import disk_presets, gpu_presets, model_presets, storage_price_presets
from planner.scenario import Scenario, default_scenario
from planner.variants import registries_version

# Fields plan() does not read, each with why: the test fails when one of them moves the plan (then
# it is read, and belongs out of this set) or when another field does not (a change the test made
# that plan() ignores would otherwise pass unseen).
NOT_PLANNED = {
    "preset": "the name of the preset the scenario was started from (the page's and the manifest's label)",
    "custom_model": "read only with model 'custom'",
    "custom_gpu": "read only with a GPU 'custom'",
    "capture_path": "each pipeline has one path in presets/capture_paths.yaml today: the one valid value is "
                    "the layout's own, which None means already (another is refused in one line)",
}
# Fields whose other values are valid, or read, only beside another's (planner/phases/quality.py check_tree, a
# layout's own fields): changed from a base with those set
NEEDS = {
    # a tree needs an EAGLE drafter and SGLang; the tree's tokens need a tree
    "quality.topk": {"layout": "specforge-eagle3", "quality.eval_engine": "sglang"},
    "quality.num_draft_tokens": {"layout": "specforge-eagle3", "quality.eval_engine": "sglang", "quality.topk": 2},
    # read only where they apply: NeMo Automodel's stored fields, the fixed rate, shipped drives, TTT steps
    "draft_vocab_size": {"layout": "nemo-automodel"},
    "target_probs_topk": {"layout": "nemo-automodel"},
    "throughput.tokens_per_s": {"throughput.mode": "fixed"},
    "throughput.batching": {"throughput.mode": "fixed"},
    "transfer.drive_days": {"transfer.method": "drives"},
    "training.ttt_steps": {"layout": "specforge-eagle3"},
}


def _leaves(model: type[BaseModel], value: BaseModel, path: str = ""):
    """(path, field info, annotation, current value) of every leaf: a field that is not a sub-model
    with a value (a sub-model's own fields are walked; a sub-model that is None is a leaf)."""
    for name, info in type(value).model_fields.items():
        current = getattr(value, name)
        if isinstance(current, BaseModel):
            yield from _leaves(type(current), current, f"{path}{name}.")
        else:
            yield f"{path}{name}", info, info.annotation, current


def _bounds(metadata) -> tuple[float, float, bool, bool]:
    lo, hi, lo_open, hi_open = -math.inf, math.inf, False, False
    for m in metadata:
        if isinstance(m, annotated_types.Ge):
            lo = m.ge
        elif isinstance(m, annotated_types.Gt):
            lo, lo_open = m.gt, True
        elif isinstance(m, annotated_types.Le):
            hi = m.le
        elif isinstance(m, annotated_types.Lt):
            hi, hi_open = m.lt, True
    return lo, hi, lo_open, hi_open


def _names() -> list[str]:
    """Every name the presets, registries and catalog give (an id field takes one of them)."""
    cat = get_catalog()
    out: list[str] = []
    for table in (model_presets(), gpu_presets(), layout_presets(), disk_presets(), storage_price_presets(),
                  DRAFTER_KINDS, LAYER_RULES, cat.components):
        out += [n for n in table if n not in out]
    return out


def _split(annotation, metadata=()):
    """(the non-None alternatives, their metadata) of an annotation."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *meta = typing.get_args(annotation)
        return _split(inner, (*metadata, *meta))
    if origin in (Union, types.UnionType):
        out = []
        for a in typing.get_args(annotation):
            if a is not type(None):
                out += _split(a, metadata)
        return out
    return [(annotation, tuple(metadata))]


def _numbers(kind, current, metadata) -> list:
    lo, hi, lo_open, hi_open = _bounds(metadata)
    base = current if isinstance(current, (int, float)) and not isinstance(current, bool) else None
    raw = [] if base is None else [base * 1.25, base * 0.8, base + 1, base - 1, base * 2, base / 2]
    finite = [x for x in (lo, hi) if math.isfinite(x)]
    raw += [lo + 1 if math.isfinite(lo) else None, (lo + hi) / 2 if len(finite) == 2 else None, 1, 2, 8, 0.5, *finite]
    out = []
    for x in raw:
        if x is None:
            continue
        x = int(round(x)) if kind is int else float(x)
        if (x > lo or (x == lo and not lo_open)) and (x < hi or (x == hi and not hi_open)) and x != current \
                and x not in out:
            out.append(x)
    return out


def _examples(annotation, current, metadata=(), depth: int = 0) -> list:
    """Valid values of this type other than `current`, most likely to move a plan first."""
    out: list = []
    for kind, meta in _split(annotation, metadata):
        origin = typing.get_origin(kind)
        if origin is Literal:
            out += [c for c in typing.get_args(kind) if c != current]
        elif kind is bool:
            out.append(not current)
        elif kind in (int, float):
            out += _numbers(kind, current, meta)
        elif kind is str:
            out += [n for n in _names() if n != current]
        elif origin is list:
            (item,) = typing.get_args(kind)
            if current:     # the same list with its first item changed, then shortened
                out += [[x, *current[1:]] for x in _examples(item, current[0], (), depth + 1)[:3]]
                out.append(current[:1])
            out += [[x] for x in _examples(item, None, (), depth + 1)]
        elif origin is dict:
            key, val = typing.get_args(kind)
            keys = [k for k in _examples(key, None)][:2]
            out += [{k: 1.0 / len(keys) for k in keys}] if keys else []
        elif isinstance(kind, type) and issubclass(kind, BaseModel) and depth < 2:
            out += _models(kind, current, depth)
    return out


def _valid(info, values: list) -> list:
    """The values the field's own type (with its validators) takes."""
    adapter = TypeAdapter(typing.Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation)
    out = []
    for v in values:
        try:
            adapter.validate_python(v)
        except ValueError:
            continue
        out.append(v)
    return out


def _models(kind: type[BaseModel], current, depth: int) -> list:
    """Instances of a sub-model: the presets' own of that type, then ones built field by field (each
    required field its first valid example; the first of them run through all of its examples)."""
    out = [v for table in (model_presets(), gpu_presets()) for v in table.values() if isinstance(v, kind)][:2]
    required = {name: _valid(info, _examples(info.annotation, None, info.metadata, depth + 1))
                for name, info in kind.model_fields.items() if info.is_required()}
    if not required or not all(required.values()):
        return [v for v in out if v != current]
    first, *_ = required
    for value in required[first]:
        try:
            out.append(kind.model_validate({**{k: v[0] for k, v in required.items()}, first: value}))
        except ValueError:
            continue
    return [v for v in out if v != current]


def _with(s: Scenario, path: str, value) -> Scenario:
    data = s.model_dump()
    part = data
    *head, last = path.split(".")
    for p in head:
        part = part[p]
    part[last] = value.model_dump() if isinstance(value, BaseModel) else value
    return Scenario.model_validate(data)


def _figures(p: Plan) -> str:
    """The plan without the scenario it echoes: what a change of input has to move."""
    return p.model_copy(update={"scenario": Scenario()}).model_dump_json()


def _checked(start: Scenario, path: str, info, annotation, current, start_figures: str) -> tuple[bool, bool]:
    """Each valid other value of the field, in turn, until one moves the plan: planned right after
    `start`'s plan is kept, asked again (the cache's), and planned cold (the cache emptied), the three
    the same to the byte. (whether a value planned, whether one moved the plan)"""
    planned_any = False
    for value in _examples(annotation, current, tuple(info.metadata)):
        try:
            s = _with(start, path, value)
        except ValueError:
            continue
        plan(start)                                  # the plan it is changed from is kept
        try:
            warm = plan(s)                           # planned right after it
        except PlannerInputError:
            continue
        planned_any = True
        assert plan(s) is warm, path                 # found in the cache
        plan_cache_clear()
        cold = plan(s)
        assert cold is not warm
        assert warm.model_dump_json() == cold.model_dump_json(), (path, value)
        if _figures(cold) != start_figures:
            return True, True
    return planned_any, False


def test_every_field_changed_in_turn_plans_as_cold():
    base = default_scenario()
    plan_cache_clear()
    base_figures = _figures(plan(base))
    unchanged, unplanned = [], []
    leaves = list(_leaves(Scenario, base))
    assert len(leaves) > 80        # walked from the declarations: every nested field (103 on this tree)
    for path, info, annotation, current in leaves:
        start, figures = base, base_figures
        if path in NEEDS:
            for other, value in NEEDS[path].items():
                start = _with(start, other, value)
            figures = _figures(plan(start))
        planned_any, moved = _checked(start, path, info, annotation, current, figures)
        if not planned_any:
            unplanned.append(path)
        elif not moved:
            unchanged.append(path)
    assert not unplanned, f"no other valid value found for {unplanned}"
    assert sorted(unchanged) == sorted(NOT_PLANNED), f"fields whose change does not move the plan: {unchanged}"


def test_a_scenario_changed_in_place_is_planned_afresh_and_the_kept_plan_keeps_its_scenario():
    cat = get_catalog()
    s = default_scenario()
    first = plan(s, cat)
    s.costs.extraction_usd_per_gpu_hour = 10.0        # the caller's own scenario, changed in place
    changed = plan(s, cat)
    assert changed is not first and changed.cost_usd != first.cost_usd
    assert first.scenario.costs.extraction_usd_per_gpu_hour != 10.0   # the plan holds its own copy
    plan_cache_clear()
    assert plan(s, cat).model_dump_json() == changed.model_dump_json()


def test_the_plan_returned_is_frozen_and_shared():
    p = plan(default_scenario())
    with pytest.raises(ValueError):
        p.storage_bytes = 0.0
    assert plan(default_scenario()) is p


def test_every_argument_of_plan_is_in_the_key():
    cat = get_catalog()
    s = default_scenario()
    keys = {plan_key(s, cat), plan_key(s, cat, band=False), plan_key(s, None),
            plan_key(s, cat, measured=object())}
    assert len(keys) == 4
    # the scenario's JSON has sorted keys: the same workload given in another order is the same key
    a = s.with_changes(quality={**s.quality.model_dump(), "workload": {"general": 0.5, "code": 0.5}})
    b = s.with_changes(quality={**s.quality.model_dump(), "workload": {"code": 0.5, "general": 0.5}})
    assert plan_key(a, cat) == plan_key(b, cat)
    # and the bands and fixes a band=False plan leaves out are not served to a band=True caller
    assert plan(s, cat, band=False).storage_bytes_low is None
    assert plan(s, cat).storage_bytes_low is not None


def test_a_registry_change_is_a_new_key():
    # issue 32's earlier attempt: a kind registered at run time (test_variants.py) got a stale plan
    cat = get_catalog()
    s = default_scenario()
    before, version = plan_key(s, cat), registries_version()
    with LAYER_RULES.temporarily("every-9th", lambda n, count: list(range(9, n, 9))):
        inside = plan_key(s, cat)
    assert registries_version() == version + 2        # registered, then removed
    assert len({before, inside, plan_key(s, cat)}) == 3


def test_another_catalog_version_is_a_new_key(tmp_path):
    from planner.catalog.stats import StatsCatalog
    cat = get_catalog()
    copy = tmp_path / "catalog.duckdb"
    copy.write_bytes(cat.path.read_bytes())
    other = StatsCatalog(copy)
    try:
        assert other.version != cat.version
        assert plan_key(default_scenario(), other) != plan_key(default_scenario(), cat)
        assert plan(default_scenario(), other).model_dump_json() == plan(default_scenario(), cat).model_dump_json()
    finally:
        other.close()
