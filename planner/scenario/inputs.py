"""Every user input declared once: an `Input` carried by its Scenario field (`Annotated[..., Input(...)]`).

The CLI's flag table (planner/cli/_common.py), the dashboard's controls (drafter_dashboard/registry.py),
the sidebar (drafter_dashboard/sidebar.py: a loop over SECTIONS) and the plain rows of the Assumptions
table (planner/phases/assumptions.py) are generated from these. The field itself keeps its type, bounds and
default (pydantic's); enum choices are its Literal's. The migrations (planner/export/versions.py) stay
the one deliberate second place: each version's frozen defaults.

The idea follows SpecForge's config schema (sgl-project/SpecForge@a6b6b023:specforge/config/schema.py:937,
`apply_overrides`): the pydantic model is the schema and command-line values are set at its dotted paths
and validated again by it, with no table of fields kept beside it. Here the model also carries what a
person sees: flag, label, help, section. No streamlit and no argparse here.
"""
from __future__ import annotations

import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Iterator, Literal

from pydantic import BaseModel

# widget values that stand for a None in the scenario (shown in selects and radios)
LAYOUT = "layout's"
SORTED, FILE_ORDER = "sorted", "file order"
EXTRACTION_GPU = "extraction GPU"
BY_PLACEMENT = "where the placement puts them"   # costs.storage None (planner/phases/costs.py storage_preset_id)

# The sidebar's sections in page order; True: open on load; False: collapsed and built only while open.
MODEL, SAMPLES, HARDWARE, TRANSFER = "Target model and capture", "Samples", "Extraction hardware", "Transfer"
THROUGHPUT, DISKS = "Throughput details", "Disks and compression"
TRAINING, NODES, SERVING, PRICES = "Training", "Nodes and placement", "Serving (quality estimate)", "Prices"
# Open on load: the model and the GPUs, what every plan starts from. The rest are built only when opened:
# the browser's work on every run grows with each control drawn (bench/run.py, issue 23).
SECTIONS: dict[str, bool] = {MODEL: True, HARDWARE: True, SAMPLES: False, THROUGHPUT: False, DISKS: False,
                             TRANSFER: False, TRAINING: False, NODES: False, SERVING: False, PRICES: False}


@dataclass(frozen=True)
class Input:
    """What a person sees of one Scenario field; everything else (type, bounds, default) is the field's.

    CLI: the flag is derived from the field's path and its help is the field's docstring
    (planner/cli/_common.py declared_flags; older spellings in its ALIASES); `parse` names a converter
    the field's type does not give ("layers", "seq_cap", "shares", "points"), `also` fields the flag sets
    beside it; `special` flags are assembled by the CLI itself (uniform samples). Dashboard: widget
    `key`, `label`, `widget` ("number", "select", "radio", "toggle", "checkbox", "text", "special":
    drawn by a sidebar function of the path), its `section`, `order` in it and `col` ("full", "half":
    two columns, "wide"/"narrow": 2/3 + 1/3);
    `none` is the widget value that stands for None, `scale` the scenario value per widget unit,
    `mapping` (scenario value, widget value) pairs, `labels` the options' display text; shown only
    when the value at `shown_when[0]` is one of `shown_when[1]` (hidden otherwise: its value kept),
    enabled only when `enabled_when` holds. Assumptions: `row` names a plain row (the value with
    `unit`, shown when `shown_when` holds): the value in use and its source, "yours" when it differs
    from the preset's: the hardware.yaml efficiency entry `preset` or the field's Preset default,
    else the field's own default with `source`.
    """

    key: str | None = None
    label: str | None = None
    help: str | None = None
    parse: str | None = None
    also: dict = field(default_factory=dict)
    special: bool = False
    widget: str | None = None
    section: str | None = None
    order: float = 0
    col: Literal["full", "half", "wide", "narrow"] = "full"
    kind: str | None = None
    none: Any = None
    scale: float = 1.0
    mapping: tuple = ()
    labels: dict | None = None
    step: float | None = None
    horizontal: bool = False
    shown_when: tuple[str, tuple] | None = None
    enabled_when: tuple[str, tuple] | None = None
    caption: str | None = None
    row: str | None = None
    unit: str = ""
    source: str | None = None
    preset: str | None = None


@dataclass(frozen=True)
class Declared:
    """One declared input: its dotted path in Scenario.model_dump(), the model that owns the field and
    the field's name there."""

    path: str
    model: type[BaseModel]
    name: str
    input: Input

    @property
    def field(self):
        return self.model.model_fields[self.name]

    @property
    def default(self) -> Any:
        return self.field.get_default(call_default_factory=True)

    @property
    def optional(self) -> bool:
        """The field takes None."""
        ann = self.field.annotation
        return _is_union(ann) and type(None) in typing.get_args(ann)

    @property
    def choices(self) -> tuple:
        return literal_choices(self.field.annotation)


def input_of(model: type[BaseModel], name: str) -> Input | None:
    return next((m for m in model.model_fields[name].metadata if isinstance(m, Input)), None)


def _submodel(annotation) -> type[BaseModel] | None:
    """The pydantic model a field holds (alone or `| None`), if any."""
    for a in (typing.get_args(annotation) if _is_union(annotation) else (annotation,)):
        if isinstance(a, type) and issubclass(a, BaseModel):
            return a
    return None


def _is_union(annotation) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def literal_choices(annotation) -> tuple:
    """The values of the Literal a field is (alone or in a union with None), in their written order."""
    args = typing.get_args(annotation) if _is_union(annotation) else (annotation,)
    out: list = []
    for a in args:
        if typing.get_origin(a) is Literal:
            out += [v for v in typing.get_args(a) if v not in out]
    return tuple(out)


def declared(model: type[BaseModel], prefix: str = "") -> Iterator[Declared]:
    """Every field of `model` (the Scenario) and of the models inside it that carries an Input, in
    declaration order. A field whose Input is `widget="special"` and holds a model (custom_model)
    is listed itself, not walked into. (The model is passed in: planner.scenario imports this module.)"""
    for name, f in model.model_fields.items():
        inp = next((m for m in f.metadata if isinstance(m, Input)), None)
        path = f"{prefix}{name}"
        if inp is not None:
            yield Declared(path, model, name, inp)
        elif (sub := _submodel(f.annotation)) is not None:
            yield from declared(sub, path + ".")


@functools.cache
def in_section(section: str, model: type[BaseModel]) -> tuple[Declared, ...]:
    """A sidebar section's inputs in page order (worked out once: the sidebar asks on every run)."""
    return tuple(sorted((d for d in declared(model) if d.input.section == section), key=lambda d: d.input.order))


def shown_value(inp: Input, value: float) -> str:
    """An assumption row's value: `1.5x`, `0.3`, `40 GB/s`."""
    text = f"{value:g}"
    return text + inp.unit if inp.unit in ("x", "%") or not inp.unit else f"{text} {inp.unit}"


def value_at(obj: Any, path: str) -> Any:
    """The value at a dotted path of a Scenario (attributes) or of its dump (keys)."""
    for part in path.split("."):
        obj = obj.get(part) if isinstance(obj, dict) else getattr(obj, part, None)
    return obj


def preset_of(declared: Declared) -> tuple[float, str]:
    """(the value a plain row compares with, its source): the hardware.yaml efficiency entry the input
    names or its default reads, else the field's default and the input's own source."""
    key = declared.input.preset or (declared.field.default_factory.key if isinstance(declared.field.default_factory,
                                                                                     Preset) else None)
    if key is not None:
        from planner.presets.specs import efficiency, efficiency_source
        return efficiency(key), efficiency_source(key)
    return declared.default, declared.input.source or "the planner's default"


class Preset:
    """A field's default read from planner/presets/hardware.yaml's `efficiency` table (a default_factory):
    the Assumptions row of the field then cites that entry's source. The key is written once, here."""

    def __init__(self, key: str):
        self.key = key

    def __call__(self) -> float:
        from planner.presets.specs import efficiency
        return efficiency(self.key)

    def __repr__(self) -> str:
        return f"Preset({self.key!r})"
