"""The last line against a figure that is not finite: plan() refuses such a plan, naming the input
it most likely comes from."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pydantic import BaseModel

from planner.errors import PlannerInputError
from planner.scenario import Scenario

if TYPE_CHECKING:
    from planner.planning import Plan


# The inputs a figure that overflowed can come from, per phase: rates multiply, so the one nearest
# zero is named. Bounds on the Scenario keep every value inside them finite; this is the last line.
def _suspects(s: Scenario, path: str) -> list[tuple[str, float]]:
    phase = path.split(".")[0]
    if phase in ("extraction", "wall_days_offline", "wall_days_online") or path in ("cost_usd.extraction",
                                                                                   "cost_usd.regeneration"):
        t = s.throughput
        if t.mode == "fixed":
            return [("throughput.tokens_per_s", t.tokens_per_s), ("throughput.batching", t.batching)]
        return [("throughput.prefill_mfu", t.prefill_mfu or 1.0),
                ("throughput.decode_bandwidth_efficiency", t.decode_bandwidth_efficiency),
                ("throughput.tensor_parallel_efficiency", t.tensor_parallel_efficiency)]
    if phase == "transfer_hours" or path == "cost_usd.transfer":
        return [("transfer.link_gbps", s.transfer.link_gbps), ("transfer.efficiency", s.transfer.efficiency)]
    if phase in ("training", "cost_usd"):
        return [("training.mfu", s.training.mfu), ("training.epochs", s.training.epochs)]
    return [("uniform.tokens", s.uniform.tokens)] if s.uniform is not None else [("mix", len(s.mix or ()))]


def refuse_non_finite(plan: Plan) -> None:
    """Every float of the plan, its phases and its components (not the scenario) must be finite."""
    parts: list[tuple[str, BaseModel]] = [("", plan)]
    parts += [(f"{name}.", v) for name, v in plan.__dict__.items() if isinstance(v, BaseModel) and name != "scenario"]
    parts += [(f"components[{i}].", c) for i, c in enumerate(plan.components)]
    if all_finite(*(obj for _, obj in parts)):
        return
    for prefix, obj in parts:
        floats = [(name, v) for name, v in obj.__dict__.items() if v.__class__ is float]
        if all(map(math.isfinite, (v for _, v in floats))):
            continue
        path, value = next((prefix + name, v) for name, v in floats if not math.isfinite(v))
        field_, given = min(_suspects(plan.scenario, path), key=lambda fv: fv[1])
        raise PlannerInputError(field_, given, f"it makes {path} {value}; every figure must be finite "
                                f"(give a value inside the input's bounds)")


def all_finite(*models: BaseModel) -> bool:
    """Every float field of `models` is finite. Their sum is finite when they are (an inf or a nan
    carries through a sum); a sum that overflows (finite values near 1e308) is checked one by one."""
    values = [v for m in models for v in m.__dict__.values() if v.__class__ is float]
    return math.isfinite(sum(values)) or all(map(math.isfinite, values))


def is_finite_plan(plan: Plan) -> bool:
    nums = [plan.storage_bytes, plan.tokens, plan.output_tokens, plan.extraction.gpu_hours, plan.transfer_hours,
            plan.training.offline_gpu_hours, plan.training.online_gpu_hours, plan.cost_usd.total_offline,
            plan.cost_usd.total_online]
    return all(math.isfinite(x) and x >= 0 for x in nums)
