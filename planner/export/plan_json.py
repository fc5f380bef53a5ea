"""The CLI's JSON (`estimate --json`, `trim --json`): exactly what to_json_dict(plan) returns, as
pydantic models that are projections of the phases' models (which fields, in which order; the types
are the phases'). Its JSON Schema is committed as planner/schema/plan.schema.json (regenerate it with
the command in tests/unit/planner/export/test_plan_json.py).

Counts (samples, tokens, bytes) are rounded to whole numbers here, not on the phases' models (the
plan keeps them unrounded); hours, dollars and shares are not rounded.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import GenericAlias, UnionType
from typing import Any, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, create_model

from planner.catalog.stats import StatsCatalog
from planner.decisions.verdict import INPUTS as VERDICT_INPUTS
from planner.decisions.verdict import Verdict, verdict
from planner.export.report import HoursStep, Step, article_hours_steps, article_steps
from planner.findings import Finding
from planner.phases.assumptions import Assumption
from planner.phases.costs import CostPlan
from planner.phases.extraction import ExtractionPlan
from planner.phases.mix_storage import ComponentPlan
from planner.phases.nodes import NodePlan
from planner.phases.quality import QualityPlan
from planner.phases.throughput_calibration import Calibration
from planner.phases.training import TrainingPlan
from planner.planning import Plan

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "schema" / "plan.schema.json"


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


_O = TypeVar("_O", bound=_Out)
# The output models are classes made at run time (pydantic's create_model): mypy knows each only as a
# `type[_Out]`, not a class to read fields from or to name in an annotation (so AgainstArticleOutput and
# PlanOutput are made so too, and `list[StepOutput]` is built as a value). A field's type here is a type form
# built at run time (a class, `X | None`, `list[X]`), which mypy types as Any.
# _Spec: each field's name -> (its type, its default or ... when required). Values typed Any, not a tuple:
# mypy checks a `**spec` given to create_model against each of its named parameters too (__config__, ...).
_Spec = dict[str, Any]


def _projection(name: str, phase: type[BaseModel], fields: str, doc: str = "",
                outputs: dict[type[BaseModel], type[_Out]] | None = None, types: dict[str, object] | None = None
                ) -> type[_Out]:
    """The output model of a phase's result: the named fields, in this order (the JSON's), each with the
    phase model's own type (a computed field: its return type), so a field's type is written once (on
    the phase's model). Each field is always present and required in the schema, except:
    `name?` keeps the phase's default (the schema does not require it); `name#` is a count, the phase's
    float rounded to a whole number (`int`, or `int | None`; `_part` rounds it). `outputs` names the
    output model of a phase model nested in a field's type (Calibration -> CalibrationOutput, in `X | None`
    and `list[X]` too); `types` a field's output type where the phase's is looser (a dict the output names
    the keys of) or the phase has no such field (`_part` is then given its value)."""
    spec: _Spec = {}
    types = types or {}
    for token in fields.split():
        f, mark = token.rstrip("?#"), token[len(token.rstrip("?#")):]
        info = phase.model_fields.get(f)
        kind: Any
        if f in types:
            kind = types[f]
        elif info is not None:
            kind = _outputs_in(info.annotation, outputs or {})
        elif f in phase.model_computed_fields:
            kind = phase.model_computed_fields[f].return_type
        else:
            raise TypeError(f"{name}: {phase.__name__} has no field {f!r}")
        if "#" in mark:
            kind = int | None if type(None) in get_args(kind) else int
        if "?" in mark and info is None:
            raise TypeError(f"{name}: {f!r}? keeps the phase's default, but {phase.__name__}.{f} is not a field")
        spec[f] = (kind, info.get_default(call_default_factory=True) if info is not None and "?" in mark else ...)
    model = create_model(name, __base__=_Out, __doc__=doc or None, __module__=__name__, **spec)
    PROJECTIONS[model] = phase
    return model


PROJECTIONS: dict[type[_Out], type[BaseModel]] = {}     # each output model made by _projection: its phase model


def _outputs_in(kind: Any, outputs: dict[type[BaseModel], type[_Out]]) -> Any:
    """`kind` (a type form) with each phase model of `outputs` in it replaced by its output model."""
    if kind in outputs:
        return outputs[kind]
    args = get_args(kind)
    if get_origin(kind) in (Union, UnionType) and any(a in outputs for a in args):
        return Union[tuple(outputs.get(a, a) for a in args)]
    if get_origin(kind) is list and args[0] in outputs:
        return GenericAlias(list, (outputs[args[0]],))     # list[X] of the X looked up
    return kind


CalibrationOutput = _projection("CalibrationOutput", Calibration, """
    row source date metric measured roofline factor distance note phase? extrapolated? band?""")

# each field's meaning: its comment on the phase's model (planner/phases/extraction.py ExtractionPlan)
ExtractionOutput = _projection("ExtractionOutput", ExtractionPlan, """
    gpu gpus gpus_used nodes gpus_per_node mode gpu_hours wall_hours wall_hours_low? wall_hours_high?
    decode_hours capture_hours prefill_tokens_per_s_per_gpu decode_tokens_per_s_per_gpu
    serving_output_tokens_per_s_per_gpu serving_total_tokens_per_s_per_gpu decode_batch max_num_seqs
    max_batched_tokens kv_dtype tensor_parallel capture_path capture_split replicas tp_per_replica
    capture_tokens_per_s_per_gpu bound calibration prefill_calibration? decode_calibration?
    calibrated_wall_hours_low? calibrated_wall_hours_high? sampled_wall_hours_low? sampled_wall_hours_high?""",
    outputs={Calibration: CalibrationOutput})

# each field's meaning: its comment on the phase's model (planner/phases/training.py TrainingPlan)
TrainingOutput = _projection("TrainingOutput", TrainingPlan, """
    gpu gpus nodes gpus_per_node epochs drafter drafter_params drafter_layers ttt_steps num_anchors block_size
    flops_per_token flops_per_sample tokens_per_s samples_per_s offline_gpu_hours offline_wall_hours offline_bound
    online_gpu_hours online_wall_hours breakeven_epochs disaggregated_gpu_hours disaggregated_wall_hours
    disaggregated_bound breakeven_epochs_disaggregated bounds stage_rates rate_low rate_high samples_per_s_low
    samples_per_s_high offline_wall_hours_low offline_wall_hours_high online_wall_hours_low online_wall_hours_high
    disaggregated_wall_hours_low disaggregated_wall_hours_high bound bound_reason overhead_term
    optimizer_steps_per_epoch memory_gib_per_gpu memory_gib_per_gpu_low memory_gib_per_gpu_high memory_parts_gib
    memory_row_tokens
    memory_capacity_gib online_memory_gib_per_gpu fits""")

NodesOutput = _projection("NodesOutput", NodePlan, """
    placement extraction_nodes writing_nodes training_nodes storage_per_node_bytes#
    training_storage_per_node_bytes# capture_write_bytes_per_s capture_write_bound training_read_bytes_per_s
    training_read_bound gather_bytes# gather_bytes_per_s gather_hours gather_bound gather_note""",
    "Where the states live across nodes (planner/phases/nodes.py); bytes and bytes per second.")


# storage_preset: where the states are paid for (presets/hardware.yaml storage_prices); storage_days_held:
# first write to the last training epoch (+ keep_days), or as given
CostOutput = _projection("CostOutput", CostPlan, """
    extraction regeneration transfer storage training_offline training_online total_offline total_online
    training_disaggregated total_disaggregated storage_preset storage_usd_per_tb_month storage_days_held
    storage_months_held""")

# payback_speedup: the speedup at the fleet's batch, which the payback uses; eval_engine: where tau is
# measured (paper | vllm | sglang); serving_batch: the batch `speedup` is given at, fleet_batch the one
# `payback_speedup` is; target_factor: tau x this for the target's size against the reference run's (1:
# the same size), target_factor_low/high its band (1, 1: no size term); acceptance_rate(_low/_high): the
# rate the engine prints beside tau (acceptance_rate_basis says how it counts); topk, num_draft_tokens:
# SGLang's tree (1, K + 1: a chain); serving_tp: the replica's tensor parallelism; served_cost: the cycle's
# cost against the dense TP-1 pairs' (planner/phases/serving.py; 1: today's figure), served_cost_basis why;
# payback_speedup_low: the speedup's low end at the fleet's batch
QualityOutput = _projection("QualityOutput", QualityPlan, """
    drafter acceptance_length acceptance_low acceptance_high speedup speedup_low speedup_high per_domain
    workload payback_days sources payback_speedup eval_engine temperature num_speculative_tokens
    serving_batch fleet_batch target_factor target_factor_low target_factor_high acceptance_rate
    acceptance_rate_low acceptance_rate_high acceptance_rate_basis topk num_draft_tokens? serving_tp served_cost
    served_cost_basis payback_speedup_low?""",
    "The drafter-quality estimate (planner/phases/quality.py); every figure an estimate, see `sources`.")


ComponentOutput = _projection("ComponentOutput", ComponentPlan, """
    id rows training_rows# tokens# storage_bytes# share_of_rows share_of_bytes truncated_share training_tokens#""")


class FindingOutput(_Out):
    severity: str           # blocks | costs | note (planner/findings.py)
    code: str
    text: str
    components: list[str]
    fix: str


AssumptionOutput = _projection("AssumptionOutput", Assumption, "name value tag source")

# each break-even input of the verdict (planner/decisions/verdict.py INPUTS) by its JSON name
_BREAKEVEN: _Spec = {i.key: (float | None, ...) for i in VERDICT_INPUTS}
BreakevenOutput = create_model(
    "BreakevenOutput", __base__=_Out, __module__=__name__,
    __doc__="Each input's value at which the cheapest mode changes (None: no value inside its bounds does).",
    **_BREAKEVEN)

VerdictOutput = _projection("VerdictOutput", Verdict,
                            "cheapest sentence breakeven flips_to totals_usd states_ready_days "
                            "feasible blocked_by tie tied_with decided_by wall_days lever",
                            "The answer for this scenario (planner/decisions/verdict.py).",
                            types={"breakeven": BreakevenOutput})

# steps: the bytes once each cause is applied (planner/export/report.py article_steps); extraction_hours_steps:
# the extraction wall-clock once each is applied (article_hours_steps)
StepOutput = _projection("StepOutput", Step, "step storage_bytes why")
HoursStepOutput = _projection("HoursStepOutput", HoursStep, "step hours why")


# list[StepOutput], list[HoursStepOutput]: lists of output models made at run time
_STEPS: _Spec = {"steps": (GenericAlias(list, (StepOutput,)), ...),
                 "extraction_hours_steps": (GenericAlias(list, (HoursStepOutput,)), ...)}
AgainstArticleOutput = create_model(
    "AgainstArticleOutput", __base__=_Out, __module__=__name__,
    __doc__="""From the seed article's figures to this plan's, one cause at a time: the last storage step is
    `storage_bytes`, the last hours step `extraction.wall_hours`.""",
    **_STEPS)


PlanOutput = _projection("PlanOutput", Plan, """
    planner_version verdict against_article preset model layout layers hidden_dtype conversations samples# tokens#
    uncapped_tokens# bytes_per_token hidden_state_bytes_per_token storage_bytes# storage_bytes_compressed#
    storage_bytes_low#? storage_bytes_high#? sampled_components? compression output_tokens# drafter unit
    max_seq_len capture_batch_size padding from_layout unpadded_tokens# files# extraction placement
    storage_per_node_bytes# gather_hours nodes transfer_method transfer_hours training cost_usd wall_days_offline
    wall_days_online wall_days_disaggregated quality components warnings findings assumptions""",
    "`planner estimate --json`: one plan, bytes and hours.",
    outputs={ExtractionPlan: ExtractionOutput, NodePlan: NodesOutput, TrainingPlan: TrainingOutput,
             CostPlan: CostOutput, ComponentPlan: ComponentOutput, Finding: FindingOutput,
             Assumption: AssumptionOutput},
    # a plan always has its quality; the rest is not the plan's own: the scenario's, or worked out from it
    types={"quality": QualityOutput, "verdict": VerdictOutput, "against_article": AgainstArticleOutput,
           "preset": str, "compression": float})


def plan_output(plan: Plan, catalog: StatsCatalog | None = None) -> _Out:
    """`plan` as its PlanOutput (`planner estimate --json`)."""
    return _part(PlanOutput, plan, verdict=_part(VerdictOutput, verdict(plan, catalog)),
                 against_article=AgainstArticleOutput.model_validate({
                     "steps": [_part(StepOutput, x) for x in article_steps(plan, catalog)],
                     "extraction_hours_steps": [_part(HoursStepOutput, x) for x in article_hours_steps(plan)]}),
                 preset=plan.scenario.preset, compression=plan.scenario.compression)


def _part(out: type[_O], model: object, **given: object) -> _O:
    """The output's fields of a phase model, taken by name (the output model is the contract: which
    fields, in which order), those it does not have `given`: a nested phase model as its output model,
    a float the output counts in whole numbers (an `int` field) rounded."""
    values: dict[str, object] = {}
    for f, info in out.model_fields.items():
        v = given[f] if f in given else getattr(model, f)
        kind = info.annotation
        sub = next((a for a in (kind, *get_args(kind)) if isinstance(a, type) and issubclass(a, _Out)), None)
        if sub is not None and isinstance(v, BaseModel) and not isinstance(v, _Out):
            v = _part(sub, v)
        elif sub is not None and isinstance(v, list):
            v = [x if isinstance(x, _Out) else _part(sub, x) for x in v]
        elif isinstance(v, float) and kind in _COUNTS:
            v = round(v)
        values[f] = v
    return out.model_validate(values)


_COUNTS = (int, int | None)


def schema_text() -> str:
    """The committed planner/schema/plan.schema.json, byte for byte."""
    return json.dumps(PlanOutput.model_json_schema(), indent=2, sort_keys=True) + "\n"


def to_json_dict(plan: Plan) -> dict:
    """The CLI's JSON contract (planner/schema/plan.schema.json): bytes and hours, rounded only where
    they are counts. Here, not a method of Plan, so the plan does not import its own output."""
    return plan_output(plan).model_dump()
