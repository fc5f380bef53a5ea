"""The CLI JSON is described once (planner/export/plan_json.py) and committed as a JSON Schema.

Regenerate the committed schema after changing planner/export/plan_json.py:
    python -c "from planner.export.plan_json import schema_text; print(schema_text(), end='')" >
    planner/schema/plan.schema.json
"""
import json

import jsonschema
import pytest

from planner import Scenario, plan, seed_article_scenario
from planner.export.plan_json import SCHEMA_PATH, plan_output, schema_text, to_json_dict
from planner.scenario import UniformMix


def test_committed_schema_is_the_generated_one():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()


@pytest.fixture(scope="module")
def seed():
    return plan(seed_article_scenario())


def _in_order(keys: list[str], old: list[str], added: list[str]) -> None:
    """Every earlier key is kept, in its order; the keys added since are exactly `added`."""
    assert [k for k in keys if k in old] == old
    assert sorted(set(keys) - set(old)) == sorted(added)


def test_seed_article_json_validates_and_keeps_its_shape(seed):
    d = to_json_dict(seed)
    jsonschema.validate(json.loads(json.dumps(d)), json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    # the contract's keys, in order (scripts read them); later versions add keys, never rename one
    _in_order(list(d), ["planner_version", "preset", "model", "layout", "layers", "hidden_dtype", "conversations",
                        "samples", "tokens", "uncapped_tokens", "bytes_per_token", "hidden_state_bytes_per_token",
                        "storage_bytes", "storage_bytes_compressed", "compression", "output_tokens",
                        # added with the pipelines' own values (issue 11)
                        "drafter", "unit", "max_seq_len", "capture_batch_size", "padding", "from_layout",
                        "unpadded_tokens", "files", "extraction",
                        "transfer_method", "transfer_hours", "training", "cost_usd", "wall_days_offline",
                        "wall_days_online", "components", "warnings", "assumptions"],
              ["wall_days_disaggregated", "quality", "findings",              # issues 12, 13 and 14
               "placement", "storage_per_node_bytes", "gather_hours", "nodes", # issue 15
               "storage_bytes_low", "storage_bytes_high", "sampled_components",
               "verdict", "against_article"])                                    # issue 20
    _in_order(list(d["extraction"]), ["gpu", "gpus", "gpus_used", "mode", "gpu_hours", "wall_hours", "decode_hours",
                                      "capture_hours", "prefill_tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu",
                                      "decode_batch", "tensor_parallel", "bound"],
              ["serving_output_tokens_per_s_per_gpu", "serving_total_tokens_per_s_per_gpu", "max_num_seqs",
               "max_batched_tokens", "kv_dtype", "calibration", "nodes", "gpus_per_node", "wall_hours_low",
               "wall_hours_high", "prefill_calibration", "decode_calibration", "calibrated_wall_hours_low",
               "calibrated_wall_hours_high", "sampled_wall_hours_low", "sampled_wall_hours_high",  # issue 22
               # issue 33 item 1: the capture path in force, its split and replicas
               "capture_path", "capture_split", "replicas", "tp_per_replica", "capture_tokens_per_s_per_gpu"])
    _in_order(list(d["training"]), ["gpu", "gpus", "epochs", "drafter_params", "offline_gpu_hours",
                                    "offline_wall_hours", "offline_bound", "online_gpu_hours", "online_wall_hours",
                                    "breakeven_epochs"],
              ["drafter", "drafter_layers", "ttt_steps", "num_anchors", "block_size", "flops_per_token",
               "flops_per_sample", "tokens_per_s", "samples_per_s", "disaggregated_gpu_hours",
               "disaggregated_wall_hours", "disaggregated_bound", "breakeven_epochs_disaggregated", "nodes",
               "gpus_per_node",
               # issue 22: which bound binds, each bound's rate, the band and the hours at its ends
               "bounds", "stage_rates", "rate_low", "rate_high", "samples_per_s_low", "samples_per_s_high",
               "offline_wall_hours_low", "offline_wall_hours_high", "online_wall_hours_low",
               "online_wall_hours_high", "disaggregated_wall_hours_low", "disaggregated_wall_hours_high",
               # issue 33: which term binds and why, the overhead's form, the memory per GPU and whether it fits
               "bound", "bound_reason", "overhead_term", "optimizer_steps_per_epoch", "memory_gib_per_gpu",
               "memory_gib_per_gpu_low", "memory_gib_per_gpu_high", "memory_parts_gib", "memory_row_tokens",
               "memory_capacity_gib", "online_memory_gib_per_gpu", "fits"])
    _in_order(list(d["cost_usd"]), ["extraction", "regeneration", "transfer", "storage", "training_offline",
                                    "training_online", "total_offline", "total_online"],
              ["training_disaggregated", "total_disaggregated",
               "storage_preset", "storage_usd_per_tb_month", "storage_days_held", "storage_months_held"])  # issue 20
    _in_order(list(d["components"][0]), ["id", "rows", "training_rows", "tokens", "storage_bytes", "share_of_rows",
                                         "share_of_bytes", "truncated_share"], ["training_tokens"])
    _in_order(list(d["quality"]), ["drafter", "acceptance_length", "acceptance_low", "acceptance_high", "speedup",
                                   "speedup_low", "speedup_high", "per_domain", "workload", "payback_days", "sources"],
              ["payback_speedup", "eval_engine", "temperature", "num_speculative_tokens", "serving_batch",
               "fleet_batch", "target_factor", "target_factor_low", "target_factor_high",  # issue 22
               "acceptance_rate", "acceptance_rate_low", "acceptance_rate_high", "acceptance_rate_basis", "topk",
               "num_draft_tokens", "serving_tp", "served_cost", "served_cost_basis",
               "payback_speedup_low"])  # issue 34
    assert list(d["assumptions"][0]) == ["name", "value", "tag", "source"]
    # the seed article's fixed rate: no calibration row is looked up
    assert d["extraction"]["mode"] == "fixed" and d["extraction"]["calibration"] is None


def test_default_json_names_the_mode_and_the_row_it_used():
    d = to_json_dict(plan(Scenario()))
    # issue 22: the default's decode has no row near (the roofline alone); the one named is the phase
    # that takes the longer, here the capture's prefill
    cal = d["extraction"]["calibration"]
    assert d["extraction"]["mode"] == "calibrated" and cal["row"] and cal["source"] and cal["phase"] == "prefill"
    assert cal["factor"] == pytest.approx(cal["measured"] / cal["roofline"])
    assert d["extraction"]["prefill_calibration"] == cal and d["extraction"]["decode_calibration"]["row"] == ""


def test_counts_are_rounded_hours_are_not(seed):
    d = to_json_dict(seed)
    # 913,786 x 800 x 51,204 bytes / 1.5 = 24,954,399,116,800 exactly: a whole number of bytes
    assert d["storage_bytes_compressed"] == 24_954_399_116_800 and isinstance(d["storage_bytes_compressed"], int)
    assert isinstance(d["samples"], int) and isinstance(d["components"][0]["tokens"], int)
    # 456,893,000 / 480 / 3600 = 264.4057... h, kept unrounded
    assert d["extraction"]["wall_hours"] == pytest.approx(456_893_000 / 480 / 3600, rel=1e-12)
    assert d["extraction"]["wall_hours"] != round(d["extraction"]["wall_hours"], 1)


def test_fractional_counts_round_to_the_nearest_whole():
    # 3 samples x 2.5 tokens = 7.5 tokens -> 8 (round half to even gives 8); 3 x 2.5 x 51,204 = 384,030 bytes
    p = plan(Scenario(uniform=UniformMix(samples=3, tokens=2.5), layout="seed-article", max_seq_len=None,
                      regenerate=False))
    d = plan_output(p).model_dump()
    assert d["tokens"] == 8 and d["storage_bytes"] == 384_030


def test_findings_carry_severity_code_and_the_fix():
    # the default plan's 82 TB do not fit its 30.72 TB disk: a blocking finding naming the fix
    d = to_json_dict(plan(Scenario()))
    blocks = [f for f in d["findings"] if f["severity"] == "blocks"]
    assert [f["code"] for f in blocks] == ["disk-capacity"] and "Budget" in blocks[0]["fix"]
    # warnings stay the findings' texts, in order
    assert d["warnings"] == [f["text"] for f in d["findings"]]
    licence = [f for f in d["findings"] if f["code"] == "licence"]
    assert licence and all(f["severity"] == "note" and f["components"] for f in licence)


def test_every_output_model_is_its_phase_models_projection_but_the_few_with_no_phase_model():
    # a field's type is written once, on the phase's model: an output model written by hand again is a
    # second copy. The ones left: FindingOutput (the phase's severity is a Literal, the committed schema
    # a plain string), AgainstArticleOutput (two lists of steps, no phase model) and BreakevenOutput
    # (its fields are planner/decisions/verdict.py INPUTS' keys, the phase's a dict)
    from pydantic import BaseModel

    from planner.decisions.verdict import INPUTS
    from planner.export import plan_json as output
    models = {v for v in vars(output).values() if isinstance(v, type) and issubclass(v, output._Out)
              and v is not output._Out}
    projected = {m for m in models if any(b in output.PROJECTIONS for b in m.__mro__)}
    assert {m.__name__ for m in models - projected} == {"FindingOutput", "AgainstArticleOutput", "BreakevenOutput"}
    assert list(output.BreakevenOutput.model_fields) == [i.key for i in INPUTS]
    # each projected field has the phase model's type, but counts (ints) and nested output models
    for out, phase in output.PROJECTIONS.items():
        for f, info in out.model_fields.items():
            if f in phase.model_fields and info.annotation not in (int, int | None):
                a = phase.model_fields[f].annotation
                assert info.annotation == a or "Output" in str(info.annotation), (out.__name__, f)
    assert issubclass(output.PlanOutput, output._Out) and issubclass(output.PlanOutput, BaseModel)


def test_a_projection_follows_its_phase_model():
    # a toy phase: a count, a defaulted field, a computed one and a nested phase model
    from pydantic import BaseModel, computed_field

    from planner.export.plan_json import _part, _projection

    class Inner(BaseModel):
        x: float

    class Phase(BaseModel):
        n: float
        band: float | None = None
        inner: Inner | None = None
        hidden: str = "not in the output"

        @computed_field
        @property
        def twice(self) -> float:
            return 2 * self.n

    InnerOut = _projection("InnerOut", Inner, "x")
    Out = _projection("Out", Phase, "twice n# band? inner", outputs={Inner: InnerOut})
    assert list(Out.model_fields) == ["twice", "n", "band", "inner"]
    assert Out.model_fields["n"].annotation is int and Out.model_fields["twice"].annotation is float
    assert not Out.model_fields["band"].is_required() and Out.model_fields["inner"].is_required()
    # 7.5 rows round half to even: 8; twice 15.0 stays a float
    assert _part(Out, Phase(n=7.5, inner=Inner(x=0.25))).model_dump() == {
        "twice": 15.0, "n": 8, "band": None, "inner": {"x": 0.25}}
    with pytest.raises(TypeError, match="has no field 'gone'"):
        _projection("Bad", Phase, "n gone")
    # `?` keeps a field's default: a computed field has none to keep
    with pytest.raises(TypeError, match="'twice'\\? keeps the phase's default, but Phase.twice is not a field"):
        _projection("Bad", Phase, "twice?")
