"""What every phase's Assumptions rows are made of: the row (Assumption), what the plan resolved that the rows
read (RowContext), and the helpers two or more phases share (paired, take, changed_tag).

Each phase module builds its own rows (planner/phases/training.py `training_assumptions`, quality.py, harness.py,
serving.py, extraction.py, throughput_calibration.py, mix_storage.py, nodes.py, costs.py, transfer.py), so an
input of a phase is shown by editing that phase's module; planner/phases/assumptions.py gathers them in the
table's order. This module sits below them all (it imports no phase but stored_bytes), so a phase importing it
makes no cycle."""
from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from planner.phases.stored_bytes import CaptureLayout
from planner.presets.drafter_kinds import DrafterKnobs
from planner.presets.layouts import Effective
from planner.presets.specs import GPUSpec, ModelSpec
from planner.scenario import Scenario


class Assumption(BaseModel):
    name: str
    value: str
    tag: str            # published | third-party | estimate | measured | yours
    source: str


@dataclass(frozen=True)
class RowContext:
    """What the plan resolved from the scenario: the presets in use and the derived values (the phases' own
    plans are added by planner/phases/assumptions.py AssumptionContext and passed to their phase's rows)."""

    scenario: Scenario
    model: ModelSpec
    layout: CaptureLayout
    extraction_gpu: GPUSpec
    training_gpu: GPUSpec
    disk: dict                  # hardware.yaml disks entry
    store: dict                 # hardware.yaml storage_prices entry
    prefill_mfu: float          # in use: the scenario's or the extraction GPU's preset
    drafter_params: float
    catalog_mix: bool           # per-component statistics from the catalog (not a uniform mix)
    effective: Effective | None = None   # the pipeline values in force (scenario's or layout's)
    recipe: DrafterKnobs | None = None    # the trainer's recipe in force


def paired(name: str, value: float, preset: float, source: str, tag: str = "estimate",
           shown: str | None = None) -> Assumption:
    """The value in use (`shown` as text) with its own source: the preset's, or the user's when it differs."""
    shown = f"{value:g}" if shown is None else shown
    if value == preset:
        return Assumption(name=name, value=shown, tag=tag, source=source)
    return Assumption(name=name, value=shown, tag="yours",
                      source=f"set in the scenario; the preset's {preset:g}: {source}")


def take(plain: dict[str, Assumption], path: str) -> list[Assumption]:
    """The declared row of `path` (planner/scenario/inputs.py), placed here and taken from those placed last."""
    return [plain.pop(path)] if path in plain else []


def changed_tag(value, default) -> str:
    """"yours" when the scenario's value differs from its field's default, else "estimate"."""
    return "yours" if value != default else "estimate"
