"""planner/finite.py: the last line against a figure that is not finite, on a real plan of the default
scenario with one figure replaced (the Scenario's bounds keep plan() itself finite)."""
from __future__ import annotations

import math

import pytest
from pydantic import BaseModel

from planner import default_scenario, plan
from planner.errors import PlannerInputError
from planner.finite import all_finite, is_finite_plan, refuse_non_finite


class Floats(BaseModel):
    a: float
    b: float
    n: int = 0


def test_all_finite_sees_inf_and_nan_and_not_an_overflowing_sum():
    assert all_finite(Floats(a=1.0, b=2.0))
    assert not all_finite(Floats(a=math.inf, b=1.0))
    assert not all_finite(Floats(a=1.0, b=1.0), Floats(a=math.nan, b=1.0))   # in the second model
    # 1e308 + 1e308 overflows to inf although both are finite: checked one by one, finite
    assert all_finite(Floats(a=1e308, b=1e308))


@pytest.fixture(scope="module")
def p():
    return plan(default_scenario())


def test_a_finite_plan_passes(p):
    refuse_non_finite(p)
    assert is_finite_plan(p)


def test_an_infinite_transfer_names_the_smaller_transfer_input(p):
    bad = p.model_copy(update={"transfer_hours": math.inf})
    t = p.scenario.transfer
    # the suspects of transfer_hours: link_gbps and efficiency; the one nearest zero is named
    want = min([("transfer.link_gbps", t.link_gbps), ("transfer.efficiency", t.efficiency)], key=lambda fv: fv[1])
    with pytest.raises(PlannerInputError) as e:
        refuse_non_finite(bad)
    assert (e.value.field, e.value.value) == want
    assert "transfer_hours inf" in str(e.value)


def test_a_nan_inside_a_phase_is_named_by_its_path(p):
    training = p.training.model_copy(update={"offline_gpu_hours": math.nan})
    with pytest.raises(PlannerInputError) as e:
        refuse_non_finite(p.model_copy(update={"training": training}))
    assert e.value.field in ("training.mfu", "training.epochs")
    assert "training.offline_gpu_hours nan" in str(e.value)


def test_is_finite_plan_refuses_a_negative_or_infinite_figure(p):
    assert not is_finite_plan(p.model_copy(update={"storage_bytes": -1.0}))
    assert not is_finite_plan(p.model_copy(update={"tokens": math.inf}))
