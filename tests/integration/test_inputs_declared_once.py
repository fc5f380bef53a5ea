"""Issue 19, inputs declared once: each Scenario field carries its Input (planner/scenario/inputs.py), and the
CLI's flag, the dashboard's control and widget and the Assumptions row come from it alone.

The first tests add a field the way docs/architecture.md "How to add an input" says (a Scenario subclass here, so the
real tables stay as they are) and find its flag, control, widget and row without writing any of them.
The others check the real tables against the declarations: every user input is declared, the flags,
controls and enum choices agree, and no default is written twice (the registry's training MFU once
said 0.35 while the Scenario said 0.3)."""
from __future__ import annotations

import typing
from typing import Annotated

import pytest
from pydantic import Field, ValidationError

from drafter_dashboard import registry
from planner.cli import _common
from planner.cli._common import CliError, Parser, add_flags, declared_flags, validation_message
from planner.presets.specs import efficiency
from planner.scenario import Scenario
from planner.scenario.inputs import SECTIONS, TRAINING, Declared, Preset, declared, in_section
from planner.scenario.inputs import Input as In


class Extended(Scenario):
    """A new numeric input, declared once: the checkpoint written every epoch (GB)."""

    checkpoint_gb: Annotated[float, In(
        key="w_ckpt_gb", label="Checkpoint GB", help="the drafter checkpoint written each epoch",
        section=TRAINING, order=135, row="checkpoint size", unit="GB",
        source="a guess for this test")] = Field(40.0, ge=0.5, le=10_000)
    """the drafter checkpoint written each epoch, in GB"""


def _new(model=Extended) -> Declared:
    return next(d for d in declared(model) if d.path == "checkpoint_gb")


def test_a_new_input_gets_its_flag_from_the_declaration_alone():
    flags = declared_flags(declared(Extended))
    f = next(f for f in flags if f.flag == "--checkpoint-gb")
    # its flag from its path; a float field: the CLI's finite-number converter, the help text its docstring
    assert (f.path, f.convert, f.help, f.choices) == ("checkpoint_gb", _common.number,
                                                      "the drafter checkpoint written each epoch, in GB", None)
    p = Parser(prog="t")
    add_flags(p, flags)
    assert p.parse_args(["--checkpoint-gb", "12.5"]).checkpoint_gb == 12.5
    with pytest.raises(CliError, match=r"^--checkpoint-gb: 'twelve' is not a number$"):
        p.parse_args(["--checkpoint-gb", "twelve"])
    # the field's bound (le=10,000) is the flag's: pydantic's error names the flag
    data = Scenario().model_dump() | {"checkpoint_gb": 20_000.0}
    with pytest.raises(ValidationError) as exc:
        Extended.model_validate(data)
    assert validation_message(exc.value, flags).startswith("--checkpoint-gb: ")
    # the real table is the same function over the real Scenario
    assert _common.SCENARIO_FLAGS[5:-1] == declared_flags(declared(Scenario))
    assert _common.SCENARIO_FLAGS[-1] is _common.STORAGE_PRICE


def test_a_new_input_gets_its_control_and_widget_from_the_declaration_alone():
    d = _new()
    assert d in in_section(TRAINING, Extended)
    c = registry.control_of(d)
    # its default is the field's (40 GB), its range the field's bounds, its kind from the float type
    assert (c.key, c.path, c.kind, c.default, c.range()) == ("w_ckpt_gb", ("checkpoint_gb",), "float", 40.0,
                                                             (0.5, 10_000))
    assert c.from_widget(64.0) == 64.0 and c.hidden is None


def test_a_new_input_is_drawn_by_the_sidebar_loop():
    """The sidebar's generic drawing (sidebar._draw) makes the number box: label, help and bounds from
    the declaration; nothing about the field is written in the sidebar."""
    from streamlit.testing.v1 import AppTest

    def page():
        import streamlit as st

        from drafter_dashboard import registry, sidebar
        from tests.integration.test_inputs_declared_once import _new
        d = _new()
        registry.BY_KEY[d.input.key] = registry.control_of(d)
        st.session_state.setdefault(d.input.key, registry.BY_KEY[d.input.key].default)
        sidebar._draw(st, d)

    at = AppTest.from_function(page, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    box = at.number_input(key="w_ckpt_gb")
    assert (box.label, box.help, box.value, box.min, box.max) == ("Checkpoint GB",
                                                                  "the drafter checkpoint written each epoch",
                                                                  40.0, 0.5, 10_000.0)


def test_a_new_input_gets_its_assumptions_row_from_the_declaration_alone():
    from planner.phases.assumptions import declared_rows
    row = declared_rows(Extended())["checkpoint_gb"]
    # the default: tagged as an estimate with the declared source
    assert (row.name, row.value, row.tag, row.source) == ("checkpoint size", "40 GB", "estimate",
                                                          "a guess for this test")
    row = declared_rows(Extended(checkpoint_gb=64))["checkpoint_gb"]
    assert (row.value, row.tag, row.source) == ("64 GB", "yours",
                                                "set in the scenario; the preset's 40: a guess for this test")


# ---------------------------------------------------------------- the real tables
NOT_INPUTS = {
    "preset": "the preset's name: --preset and the sidebar's preset picker start from it",
    "mix": "the mix editor and --components / --add / --drop edit it",
}


def _leaves(model=Scenario, prefix=""):
    from planner.scenario.inputs import _submodel, input_of
    for name, f in model.model_fields.items():
        path = prefix + name
        if input_of(model, name) is None and (sub := _submodel(f.annotation)) is not None:
            yield from _leaves(sub, path + ".")
        else:
            yield path, input_of(model, name)


def test_every_user_input_is_declared():
    undeclared = {p for p, i in _leaves() if i is None}
    assert undeclared == set(NOT_INPUTS)
    for d in declared(Scenario):
        i = d.input
        # every input has a flag (derived: tests/unit/planner/cli/test_common_flag_parity.py) and its help, the
        # field's docstring; a widget has a label and a section
        assert d.field.description, d.path
        if i.key or i.widget:
            assert i.section in SECTIONS and (i.label or i.widget == "special"), d.path


def _literal(ann) -> list:
    """The values of the Literal in a field's type, read here without planner.scenario.inputs."""
    if typing.get_origin(ann) is typing.Literal:
        return list(typing.get_args(ann))
    return next(list(typing.get_args(a)) for a in typing.get_args(ann) if typing.get_origin(a) is typing.Literal)


def test_flags_controls_and_choices_agree():
    flags = {f.flag: f for f in _common.SCENARIO_FLAGS}
    for d in declared(Scenario):
        i = d.input
        f = flags[_common.derived_flag(d.path)]
        assert f.path == d.path and f.help.startswith(d.field.description), d.path
        # enum choices are the Literal's, written once in the Scenario
        assert (f.choices or ()) == (d.choices if i.parse is None else ()), d.path
        for old, to in _common.ALIASES.items():   # a switch's older spelling sets a value the field takes
            if isinstance(to, tuple) and to[0] == d.path:
                assert flags[old].const == to[1] in d.choices, old
        if i.key:
            c = registry.BY_KEY[i.key]
            assert ".".join(c.path) == d.path and c.model is d.model, d.path
            if i.widget in ("select", "radio"):
                from drafter_dashboard.sidebar import _options
                assert _options(d) == ([i.none] if i.none is not None else []) + _literal(d.field.annotation), d.path
        for rule in (i.shown_when, i.enabled_when):
            if rule:   # a rule names a field that has a control, and values that field takes
                c = next(c for c in registry.CONTROLS if ".".join(c.path) == rule[0])
                by = {x.path: x for x in declared(Scenario)}[rule[0]]
                assert set(rule[1]) <= set(by.choices or (True, False)), (d.path, rule)
                assert c.key
    # the flags the CLI keeps by hand set no single field, or set two (--storage-price)
    by_hand = [f.flag for f in _common.SCENARIO_FLAGS if f not in declared_flags(declared(Scenario))]
    assert by_hand == ["--preset", "--manifest", "--components", "--add", "--drop", "--storage-price"]
    # every control of a Scenario field is declared, save a custom model's, a custom GPU's and the shares
    keys = {d.input.key for d in declared(Scenario) if d.input.key}
    assert {c.key for c in registry.CONTROLS} - keys == {
        c.key for c in registry.CONTROLS if c.path[0] in ("custom_model", "custom_gpu") or c.key.startswith("w_wl_")}


def test_no_default_is_written_twice():
    """Every control starts from the Scenario's own default (START is Scenario().model_dump()), a
    default read from the presets is read in one place, and a row's preset is its field's default."""
    start = Scenario().model_dump()
    for d in declared(Scenario):
        if not d.input.key or d.path in ("max_seq_len", "quality.workload"):   # START's editing values
            continue
        c = registry.BY_KEY[d.input.key]
        assert c.default == c.to_widget(registry._get(start, c.path)), d.path
    # the drift issue 19 found: the training MFU's control said 0.35, the Scenario 0.3
    assert registry.BY_KEY["w_tr_mfu"].default == Scenario().training.mfu == efficiency("training_mfu")
    for d in declared(Scenario):
        if isinstance(d.field.default_factory, Preset):
            assert d.default == efficiency(d.field.default_factory.key), d.path
        if d.input.preset:   # a literal default compared with a preset: they must agree
            assert d.default == efficiency(d.input.preset), d.path


def test_sections_list_every_sidebar_input_once_in_a_known_order():
    drawn = [d.path for s in SECTIONS for d in in_section(s, Scenario)]
    assert len(drawn) == len(set(drawn)) == sum(1 for d in declared(Scenario) if d.input.section)
    for s in SECTIONS:
        orders = [d.input.order for d in in_section(s, Scenario)]
        assert len(orders) == len(set(orders)), s     # no two inputs at one place
