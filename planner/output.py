"""The CLI's JSON (`estimate --json`, `trim --json`): exactly what to_json_dict(plan) returns,
described once as pydantic models. Its JSON Schema is committed as planner/schema/plan.schema.json
(regenerate it with the command in tests/unit/planner/test_output.py).

Counts (samples, tokens, bytes) are rounded to whole numbers; hours, dollars and shares are not.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, create_model

from planner.costs import CostPlan
from planner.quality import QualityPlan

if TYPE_CHECKING:
    from planner.plan import Plan


SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "plan.schema.json"


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CalibrationOutput(_Out):
    row: str                # "" when no published row matched (the roofline alone)
    source: str
    date: str
    metric: str
    measured: float
    roofline: float
    factor: float
    distance: float
    note: str
    phase: str = ""                 # prefill | decode (per-phase calibration), "" for the one that covers both
    extrapolated: bool = False      # the row is of another architecture class or GPU (or none is near)
    band: tuple[float, float] = (0.0, 0.0)   # log(calibrated / measured), held-out spread of such matches


class ExtractionOutput(_Out):
    gpu: str
    gpus: int
    gpus_used: int
    nodes: int
    gpus_per_node: int
    mode: str               # calibrated | roofline | fixed
    gpu_hours: float
    wall_hours: float
    # the band to bet on: the calibration band (held-out publications, issue 22) widened to the sampled
    # profiles' 95% band where components are sampled; the sampled band alone outside calibrated mode
    wall_hours_low: float | None = None
    wall_hours_high: float | None = None
    decode_hours: float
    capture_hours: float
    prefill_tokens_per_s_per_gpu: float
    decode_tokens_per_s_per_gpu: float
    serving_output_tokens_per_s_per_gpu: float
    serving_total_tokens_per_s_per_gpu: float
    decode_batch: int
    max_num_seqs: int
    max_batched_tokens: int
    kv_dtype: str
    tensor_parallel: int
    bound: str
    calibration: CalibrationOutput | None
    # issue 22: prefill and decode calibrated apart, and the band of that calibration alone
    prefill_calibration: CalibrationOutput | None = None
    decode_calibration: CalibrationOutput | None = None
    calibrated_wall_hours_low: float | None = None
    calibrated_wall_hours_high: float | None = None
    sampled_wall_hours_low: float | None = None     # the sampled profiles' 95% band alone (None: nothing sampled)
    sampled_wall_hours_high: float | None = None


class TrainingOutput(_Out):
    gpu: str
    gpus: int
    nodes: int
    gpus_per_node: int
    epochs: float
    drafter: str
    drafter_params: float
    drafter_layers: int
    ttt_steps: int | None
    num_anchors: int | None
    block_size: int | None
    flops_per_token: float
    flops_per_sample: float
    tokens_per_s: float
    samples_per_s: float
    offline_gpu_hours: float
    offline_wall_hours: float
    offline_bound: str
    online_gpu_hours: float
    online_wall_hours: float
    breakeven_epochs: float | None
    disaggregated_gpu_hours: float
    disaggregated_wall_hours: float
    disaggregated_bound: str
    breakeven_epochs_disaggregated: float | None
    # issue 22: training as runs are really bound, with its band. Which bound binds each mode
    # (offline | online | disaggregated -> compute | supply | io | overhead, planner/training.py BOUNDS),
    # each bound's tokens/s, and the band: the 90% prediction interval of published runs' residuals as
    # multipliers on every rate (planner/presets/training_throughput.yaml band), hours = tokens / rate
    bounds: dict[str, str]
    stage_rates: dict[str, dict[str, float]]
    rate_low: float
    rate_high: float
    samples_per_s_low: float
    samples_per_s_high: float
    offline_wall_hours_low: float
    offline_wall_hours_high: float
    online_wall_hours_low: float
    online_wall_hours_high: float
    disaggregated_wall_hours_low: float     # the regeneration's hours at both ends, the epochs' banded
    disaggregated_wall_hours_high: float


class NodesOutput(_Out):
    """Where the states live across nodes (planner/nodes.py); bytes and bytes per second."""

    placement: str
    extraction_nodes: int
    writing_nodes: int                      # extraction nodes that hold a tensor-parallel group
    training_nodes: int
    storage_per_node_bytes: int
    training_storage_per_node_bytes: int
    capture_write_bytes_per_s: float
    capture_write_bound: str
    training_read_bytes_per_s: float
    training_read_bound: str
    gather_bytes: int
    gather_bytes_per_s: float
    gather_hours: float
    gather_bound: str
    gather_note: str


def _projection(name: str, phase: type[BaseModel], fields: str, doc: str = "") -> type[_Out]:
    """The output model of a phase's result: the named fields (in this order, always present), each
    with the phase model's own type, so a field's type is written once (on the phase's model)."""
    names = fields.split()
    missing = [f for f in names if f not in phase.model_fields]
    if missing:
        raise TypeError(f"{name}: {phase.__name__} has no field {missing}")
    return create_model(name, __base__=_Out, __doc__=doc or None, __module__=__name__,
                        **{f: (phase.model_fields[f].annotation, ...) for f in names})


# storage_preset: where the states are paid for (presets/hardware.yaml storage_prices); storage_days_held:
# first write to the last training epoch (+ keep_days), or as given
CostOutput = _projection("CostOutput", CostPlan, """
    extraction regeneration transfer storage training_offline training_online total_offline total_online
    training_disaggregated total_disaggregated storage_preset storage_usd_per_tb_month storage_days_held
    storage_months_held""")

# payback_speedup: the speedup at the fleet's batch, which the payback uses; eval_engine: where tau is
# measured (paper | vllm | sglang); serving_batch: the batch `speedup` is given at, fleet_batch the one
# `payback_speedup` is; target_factor: tau x this for the target's size against the reference run's (1:
# the same size), target_factor_low/high its band (1, 1: no size term)
QualityOutput = _projection("QualityOutput", QualityPlan, """
    drafter acceptance_length acceptance_low acceptance_high speedup speedup_low speedup_high per_domain
    workload payback_days sources payback_speedup eval_engine temperature num_speculative_tokens
    serving_batch fleet_batch target_factor target_factor_low target_factor_high""",
    "The drafter-quality estimate (planner/quality.py); every figure an estimate, see `sources`.")


class ComponentOutput(_Out):
    id: str
    rows: int
    training_rows: int
    tokens: int
    storage_bytes: int
    share_of_rows: float
    share_of_bytes: float
    truncated_share: float
    training_tokens: int


class FindingOutput(_Out):
    severity: str           # blocks | costs | note (planner/findings.py)
    code: str
    text: str
    components: list[str]
    fix: str


class AssumptionOutput(_Out):
    name: str
    value: str
    tag: str
    source: str


class BreakevenOutput(_Out):
    """Each input's value at which the cheapest mode changes (None: no value inside its bounds does)."""

    storage_usd_per_tb_month: float | None
    days_held: float | None
    epochs: float | None
    link_gbps: float | None
    extraction_gpu_usd_per_hour: float | None


class VerdictOutput(_Out):
    """The answer for this scenario (planner/verdict.py)."""

    cheapest: str                   # offline | online | disaggregated
    sentence: str
    breakeven: BreakevenOutput
    flips_to: dict[str, str | None]
    totals_usd: dict[str, float]
    states_ready_days: float


class StepOutput(_Out):
    step: str
    storage_bytes: int              # the bytes once this cause is applied (planner/report.py article_steps)
    why: str


class HoursStepOutput(_Out):
    step: str
    hours: float                    # extraction wall-clock once this cause is applied
    why: str


class AgainstArticleOutput(_Out):
    """From the seed article's figures to this plan's, one cause at a time: the last storage step is
    `storage_bytes`, the last hours step `extraction.wall_hours`."""

    steps: list[StepOutput]
    extraction_hours_steps: list[HoursStepOutput]


class PlanOutput(_Out):
    """`planner estimate --json`: one plan, bytes and hours."""

    planner_version: str
    verdict: VerdictOutput
    against_article: AgainstArticleOutput
    preset: str
    model: str
    layout: str
    layers: list[int]
    hidden_dtype: str
    conversations: int
    samples: int
    tokens: int
    uncapped_tokens: int
    bytes_per_token: int
    hidden_state_bytes_per_token: int
    storage_bytes: int
    storage_bytes_compressed: int
    storage_bytes_low: int | None = None     # the 95% band from sampled profiles (None: no component is sampled)
    storage_bytes_high: int | None = None
    sampled_components: list[str] = []       # the components whose lengths come from a sample
    compression: float
    output_tokens: int
    drafter: str
    unit: str
    max_seq_len: int | None
    capture_batch_size: int
    padding: str
    from_layout: list[str]
    unpadded_tokens: int
    files: int
    extraction: ExtractionOutput
    placement: str
    storage_per_node_bytes: int
    gather_hours: float
    nodes: NodesOutput
    transfer_method: str
    transfer_hours: float
    training: TrainingOutput
    cost_usd: CostOutput
    wall_days_offline: float
    wall_days_online: float
    wall_days_disaggregated: float
    quality: QualityOutput
    components: list[ComponentOutput]
    warnings: list[str]
    findings: list[FindingOutput]
    assumptions: list[AssumptionOutput]

    @classmethod
    def from_plan(cls, p: Plan, catalog=None) -> PlanOutput:
        from planner.report import article_hours_steps, article_steps
        from planner.verdict import verdict
        e, t, c = p.extraction, p.training, p.cost_usd
        return cls(
            planner_version=p.planner_version, verdict=_part(VerdictOutput, verdict(p, catalog)),
            against_article=AgainstArticleOutput(
                steps=[_part(StepOutput, x) for x in article_steps(p, catalog)],
                extraction_hours_steps=[_part(HoursStepOutput, x) for x in article_hours_steps(p)]),
            preset=p.scenario.preset, model=p.model, layout=p.layout,
            layers=p.layers, hidden_dtype=p.hidden_dtype, conversations=p.conversations, samples=round(p.samples),
            tokens=round(p.tokens), uncapped_tokens=round(p.uncapped_tokens), bytes_per_token=p.bytes_per_token,
            hidden_state_bytes_per_token=p.hidden_state_bytes_per_token, storage_bytes=round(p.storage_bytes),
            storage_bytes_compressed=round(p.storage_bytes_compressed), compression=p.scenario.compression,
            storage_bytes_low=None if p.storage_bytes_low is None else round(p.storage_bytes_low),
            storage_bytes_high=None if p.storage_bytes_high is None else round(p.storage_bytes_high),
            sampled_components=p.sampled_components,
            output_tokens=round(p.output_tokens), drafter=p.drafter, unit=p.unit, max_seq_len=p.max_seq_len,
            capture_batch_size=p.capture_batch_size, padding=p.padding, from_layout=p.from_layout,
            unpadded_tokens=round(p.unpadded_tokens), files=round(p.files),
            extraction=_part(ExtractionOutput, e), placement=p.placement,
            storage_per_node_bytes=round(p.storage_per_node_bytes), gather_hours=p.gather_hours,
            nodes=NodesOutput.model_validate({**p.nodes.model_dump(include=set(NodesOutput.model_fields)), **{
                k: round(getattr(p.nodes, k)) for k in ("storage_per_node_bytes", "training_storage_per_node_bytes",
                                                        "gather_bytes")}}),
            transfer_method=p.transfer_method,
            transfer_hours=p.transfer_hours, training=_part(TrainingOutput, t), cost_usd=_part(CostOutput, c),
            wall_days_offline=p.wall_days_offline, wall_days_online=p.wall_days_online,
            wall_days_disaggregated=p.wall_days_disaggregated, quality=_part(QualityOutput, p.quality),
            components=[ComponentOutput(
                id=x.id, rows=x.rows, training_rows=round(x.training_rows), tokens=round(x.tokens),
                storage_bytes=round(x.storage_bytes), share_of_rows=x.share_of_rows,
                share_of_bytes=x.share_of_bytes, truncated_share=x.truncated_share,
                training_tokens=round(x.training_tokens)) for x in p.components],
            warnings=p.warnings, findings=[_part(FindingOutput, f) for f in p.findings],
            assumptions=[_part(AssumptionOutput, a) for a in p.assumptions],
        )


def _part(out: type[_Out], model: BaseModel) -> _Out:
    """The output's fields of a phase model, taken by name (the output model is the contract:
    which fields, in which order)."""
    return out.model_validate(model.model_dump(include=set(out.model_fields)))


def schema_text() -> str:
    """The committed planner/schema/plan.schema.json, byte for byte."""
    return json.dumps(PlanOutput.model_json_schema(), indent=2, sort_keys=True) + "\n"


def to_json_dict(p: Plan) -> dict:
    """The CLI's JSON contract (planner/schema/plan.schema.json): bytes and hours, rounded only where
    they are counts. Here, not a method of Plan, so the plan does not import its own output."""
    return PlanOutput.from_plan(p).model_dump()
