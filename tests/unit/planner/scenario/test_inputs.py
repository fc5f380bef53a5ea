"""planner/scenario/inputs.py: inputs declared once on their Scenario fields, walked by path and section.

The walker is generic over pydantic models; the small models here are test inputs to it (not stand-ins
for a planner part), and the real Scenario is checked beside them."""
from __future__ import annotations

from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from planner.presets.specs import efficiency, efficiency_source
from planner.scenario import Scenario, default_scenario
from planner.scenario.inputs import (
    Input,
    Preset,
    declared,
    in_section,
    input_of,
    literal_choices,
    preset_of,
    shown_value,
    value_at,
)


class Inner(BaseModel):
    rate: Annotated[float, Input(section="B", order=2, row="Rate", unit="GB/s", source="a note")] = 40.0
    eff: Annotated[float, Input(section="B", order=1, row="Eff")] = Field(default_factory=Preset("decode_bandwidth"))
    plain: int = 3                              # no Input: not declared


class Outer(BaseModel):
    mode: Annotated[Literal["a", "b"] | Literal["b", "c"] | None, Input(section="A")] = None
    inner: Inner = Inner()
    maybe: Inner | None = None                   # a model behind `| None` is walked too
    special: Annotated[Inner, Input(widget="special", section="A", order=-1)] = Inner()


def test_declared_walks_models_in_declaration_order_and_stops_at_a_special_input():
    paths = [d.path for d in declared(Outer)]
    # inner.plain has no Input; special is listed itself, not walked into (no special.rate)
    assert paths == ["mode", "inner.rate", "inner.eff", "maybe.rate", "maybe.eff", "special"]
    d = next(d for d in declared(Outer) if d.path == "maybe.rate")
    assert (d.model, d.name, d.default, d.optional) == (Inner, "rate", 40.0, False)


def test_optional_and_choices_read_the_annotation():
    mode = next(iter(declared(Outer)))
    assert mode.optional
    # two Literals joined: duplicates dropped, written order kept
    assert mode.choices == ("a", "b", "c")
    assert literal_choices(int) == ()
    assert literal_choices(Literal["x"]) == ("x",)


def test_in_section_sorts_by_order():
    assert [d.path for d in in_section("B", Outer)] == ["inner.eff", "maybe.eff", "inner.rate", "maybe.rate"]
    assert [d.path for d in in_section("A", Outer)] == ["special", "mode"]   # order -1 before 0
    assert in_section("nowhere", Outer) == ()


def test_input_of_and_value_at():
    assert input_of(Inner, "plain") is None
    assert input_of(Inner, "rate").unit == "GB/s"
    s = Outer()
    assert value_at(s, "inner.rate") == 40.0
    assert value_at(s.model_dump(), "inner.plain") == 3
    assert value_at(s, "maybe.rate") is None     # a None on the way gives None, not an error


@pytest.mark.parametrize("unit, value, text", [
    ("", 0.3, "0.3"),
    ("x", 1.5, "1.5x"),          # x and % stick to the number
    ("%", 40, "40%"),
    ("GB/s", 40.0, "40 GB/s"),   # other units after a space; :g drops the .0
    ("s", 1e-7, "1e-07 s"),
])
def test_shown_value(unit, value, text):
    assert shown_value(Input(unit=unit), value) == text


def test_preset_of_reads_the_efficiency_entry_or_the_field_default():
    eff, rate = (next(d for d in declared(Inner) if d.name == n) for n in ("eff", "rate"))
    assert preset_of(eff) == (efficiency("decode_bandwidth"), efficiency_source("decode_bandwidth"))
    assert eff.default == efficiency("decode_bandwidth")
    assert repr(Preset("decode_bandwidth")) == "Preset('decode_bandwidth')"
    assert preset_of(rate) == (40.0, "a note")
    bare = next(d for d in declared(Outer) if d.path == "mode")
    assert preset_of(bare) == (None, "the planner's default")


def test_the_real_scenario_declares_unique_paths_that_exist():
    ds = list(declared(Scenario))
    paths = [d.path for d in ds]
    assert len(paths) == len(set(paths)) and len(paths) > 10
    dump = default_scenario().model_dump()
    for d in ds:
        head, _, last = d.path.rpartition(".")
        parent = value_at(dump, head) if head else dump
        assert parent is None or last in parent, d.path   # None: an optional model unset by default
