"""The Assumptions table: every number the plan used, with its tag and the source of that very value
(the preset's source when the preset value is in use, "yours" when the scenario changed it).

Each phase builds its own rows in its module (the row type and what they read: planner/phases/assumption_rows.py);
this module holds what they share: the declared rows, one per input that names a `row` (planner/scenario/inputs.py),
the context plan() fills (AssumptionContext: the presets in use and the phases' plans), and `assumptions()`, which
gathers the phases' rows in the table's order."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from planner.phases.assumption_rows import Assumption, RowContext, paired
from planner.phases.costs import storage_assumptions
from planner.phases.extraction import ExtractionPlan, model_assumptions, throughput_assumptions
from planner.phases.mix_storage import layout_assumptions
from planner.phases.nodes import hardware_assumptions
from planner.phases.quality import QualityPlan, quality_assumptions
from planner.phases.training import TrainingPlan, epochs_assumption, training_assumptions
from planner.phases.transfer import transfer_assumptions
from planner.scenario import Scenario
from planner.scenario.inputs import declared, preset_of, shown_value, value_at

__all__ = ["Assumption", "AssumptionContext", "assumptions", "declared_rows"]


@dataclass(frozen=True)
class AssumptionContext(RowContext):
    """What the plan resolved from the scenario (RowContext) and the phases' plans, each passed to its own rows."""

    extraction: ExtractionPlan | None = None   # the ExtractionPlan (scheduler caps and calibration in force)
    quality: QualityPlan | None = None
    training: TrainingPlan | None = None     # its bounds and band


def declared_rows(s: Scenario) -> dict[str, Assumption]:
    """The plain rows, one for each input that names a `row` (planner/scenario/inputs.py) and is in force for
    this scenario (its shown rule holds), by path: the value in use against the preset's."""
    out = {}
    for d, preset, source in _row_inputs(type(s)):
        i = d.input
        if i.shown_when and value_at(s, i.shown_when[0]) not in i.shown_when[1]:
            continue
        value = value_at(s, d.path)
        out[d.path] = paired(i.row, value, preset, source, shown=shown_value(i, value))
    return out


@functools.cache
def _row_inputs(model: type) -> tuple:
    """The inputs that name a `row`, each with the preset value and source it is compared with (the
    declarations and the presets ship with the package: walked once per process, not per plan)."""
    return tuple((d, *preset_of(d)) for d in declared(model) if d.input.row is not None)


def assumptions(c: AssumptionContext) -> list[Assumption]:
    """Every row of the Assumptions table, phase by phase; the declared rows (planner/scenario/inputs.py) not
    placed beside their phase's come last, then the catalog's."""
    plain = declared_rows(c.scenario)      # placed below where they were; any other declared row goes last
    out = [*layout_assumptions(c), *hardware_assumptions(c, plain), *storage_assumptions(c),
           *training_assumptions(c, c.training, plain), *quality_assumptions(c.scenario, c.quality),
           epochs_assumption(c.scenario),   # the drafter's recipe and quality, then its epochs
           *throughput_assumptions(c, c.extraction, plain), *model_assumptions(c),
           *transfer_assumptions(c.scenario.transfer), *plain.values()]
    if c.catalog_mix:
        out.append(Assumption(name="mix statistics", value="per-component length distributions (DuckDB catalog)",
                              tag="estimate", source="datasets_meta/components.yaml: row counts are a reconstruction "
                              "of the 913,786 mix; token counts in ~cl100k (Qwen differs ~+-10%)"))
    return out
