"""The CLI's JSON (`estimate --json`, `trim --json`): exactly what Plan.to_json_dict() returns,
described once as pydantic models. Its JSON Schema is committed as planner/schema/plan.schema.json
(regenerate it with the command in tests/test_output.py).

Counts (samples, tokens, bytes) are rounded to whole numbers; hours, dollars and shares are not.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from planner.plan import Plan


SCHEMA_PATH = Path(__file__).resolve().parent / "schema" / "plan.schema.json"


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExtractionOutput(_Out):
    gpu: str
    gpus: int
    gpus_used: int
    mode: str
    gpu_hours: float
    wall_hours: float
    decode_hours: float
    capture_hours: float
    prefill_tokens_per_s_per_gpu: float
    decode_tokens_per_s_per_gpu: float
    decode_batch: int
    tensor_parallel: int
    bound: str


class TrainingOutput(_Out):
    gpu: str
    gpus: int
    epochs: float
    drafter_params: float
    offline_gpu_hours: float
    offline_wall_hours: float
    offline_bound: str
    online_gpu_hours: float
    online_wall_hours: float
    breakeven_epochs: float | None


class CostOutput(_Out):
    extraction: float
    regeneration: float
    transfer: float
    storage: float
    training_offline: float
    training_online: float
    total_offline: float
    total_online: float


class ComponentOutput(_Out):
    id: str
    rows: int
    training_rows: int
    tokens: int
    storage_bytes: int
    share_of_rows: float
    share_of_bytes: float
    truncated_share: float


class AssumptionOutput(_Out):
    name: str
    value: str
    tag: str
    source: str


class PlanOutput(_Out):
    """`planner estimate --json`: one plan, bytes and hours."""

    planner_version: str
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
    transfer_method: str
    transfer_hours: float
    training: TrainingOutput
    cost_usd: CostOutput
    wall_days_offline: float
    wall_days_online: float
    components: list[ComponentOutput]
    warnings: list[str]
    assumptions: list[AssumptionOutput]

    @classmethod
    def from_plan(cls, p: Plan) -> PlanOutput:
        e, t, c = p.extraction, p.training, p.cost_usd
        return cls(
            planner_version=p.planner_version, preset=p.scenario.preset, model=p.model, layout=p.layout,
            layers=p.layers, hidden_dtype=p.hidden_dtype, conversations=p.conversations, samples=round(p.samples),
            tokens=round(p.tokens), uncapped_tokens=round(p.uncapped_tokens), bytes_per_token=p.bytes_per_token,
            hidden_state_bytes_per_token=p.hidden_state_bytes_per_token, storage_bytes=round(p.storage_bytes),
            storage_bytes_compressed=round(p.storage_bytes_compressed), compression=p.scenario.compression,
            output_tokens=round(p.output_tokens), drafter=p.drafter, unit=p.unit, max_seq_len=p.max_seq_len,
            capture_batch_size=p.capture_batch_size, padding=p.padding, from_layout=p.from_layout,
            unpadded_tokens=round(p.unpadded_tokens), files=round(p.files),
            extraction=ExtractionOutput(
                gpu=e.gpu, gpus=e.gpus, gpus_used=e.gpus_used, mode=e.mode, gpu_hours=e.gpu_hours,
                wall_hours=e.wall_hours, decode_hours=e.decode_hours, capture_hours=e.capture_hours,
                prefill_tokens_per_s_per_gpu=e.prefill_tokens_per_s_per_gpu,
                decode_tokens_per_s_per_gpu=e.decode_tokens_per_s_per_gpu, decode_batch=e.decode_batch,
                tensor_parallel=e.tensor_parallel, bound=e.bound),
            transfer_method=p.transfer_method, transfer_hours=p.transfer_hours,
            training=TrainingOutput(
                gpu=t.gpu, gpus=t.gpus, epochs=t.epochs, drafter_params=t.drafter_params,
                offline_gpu_hours=t.offline_gpu_hours, offline_wall_hours=t.offline_wall_hours,
                offline_bound=t.offline_bound, online_gpu_hours=t.online_gpu_hours,
                online_wall_hours=t.online_wall_hours, breakeven_epochs=t.breakeven_epochs),
            cost_usd=CostOutput(
                extraction=c.extraction, regeneration=c.regeneration, transfer=c.transfer, storage=c.storage,
                training_offline=c.training_offline, training_online=c.training_online,
                total_offline=c.total_offline, total_online=c.total_online),
            wall_days_offline=p.wall_days_offline, wall_days_online=p.wall_days_online,
            components=[ComponentOutput(
                id=x.id, rows=x.rows, training_rows=round(x.training_rows), tokens=round(x.tokens),
                storage_bytes=round(x.storage_bytes), share_of_rows=x.share_of_rows,
                share_of_bytes=x.share_of_bytes, truncated_share=x.truncated_share) for x in p.components],
            warnings=p.warnings,
            assumptions=[AssumptionOutput(name=a.name, value=a.value, tag=a.tag, source=a.source)
                         for a in p.assumptions],
        )


def schema_text() -> str:
    """The committed planner/schema/plan.schema.json, byte for byte."""
    return json.dumps(PlanOutput.model_json_schema(), indent=2, sort_keys=True) + "\n"

