"""The CLI JSON is described once (planner/output.py) and committed as a JSON Schema.

Regenerate the committed schema after changing planner/output.py:
    python -c "from planner.output import schema_text; print(schema_text(), end='')" > planner/schema/plan.schema.json
"""
import json

import jsonschema
import pytest

from planner import Scenario, plan, seed_article_scenario
from planner.output import SCHEMA_PATH, PlanOutput, schema_text
from planner.scenario import UniformMix


def test_committed_schema_is_the_generated_one():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text()


@pytest.fixture(scope="module")
def seed():
    return plan(seed_article_scenario())


def test_seed_article_json_validates_and_keeps_its_shape(seed):
    d = seed.to_json_dict()
    jsonschema.validate(json.loads(json.dumps(d)), json.loads(SCHEMA_PATH.read_text(encoding="utf-8")))
    # the contract's keys, in order (scripts read them)
    assert list(d) == ["planner_version", "preset", "model", "layout", "layers", "hidden_dtype", "conversations",
                       "samples", "tokens", "uncapped_tokens", "bytes_per_token", "hidden_state_bytes_per_token",
                       "storage_bytes", "storage_bytes_compressed", "compression", "output_tokens",
                       # added with the pipelines' own values (issue 11); no key renamed
                       "drafter", "unit", "max_seq_len", "capture_batch_size", "padding", "from_layout",
                       "unpadded_tokens", "files", "extraction",
                       "transfer_method", "transfer_hours", "training", "cost_usd", "wall_days_offline",
                       "wall_days_online", "components", "warnings", "assumptions"]
    assert list(d["extraction"]) == ["gpu", "gpus", "gpus_used", "mode", "gpu_hours", "wall_hours", "decode_hours",
                                     "capture_hours", "prefill_tokens_per_s_per_gpu", "decode_tokens_per_s_per_gpu",
                                     "decode_batch", "tensor_parallel", "bound"]
    assert list(d["training"]) == ["gpu", "gpus", "epochs", "drafter_params", "offline_gpu_hours",
                                   "offline_wall_hours", "offline_bound", "online_gpu_hours", "online_wall_hours",
                                   "breakeven_epochs"]
    assert list(d["cost_usd"]) == ["extraction", "regeneration", "transfer", "storage", "training_offline",
                                   "training_online", "total_offline", "total_online"]
    assert list(d["components"][0]) == ["id", "rows", "training_rows", "tokens", "storage_bytes", "share_of_rows",
                                        "share_of_bytes", "truncated_share"]
    assert list(d["assumptions"][0]) == ["name", "value", "tag", "source"]


def test_counts_are_rounded_hours_are_not(seed):
    d = seed.to_json_dict()
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
    d = PlanOutput.from_plan(p).model_dump()
    assert d["tokens"] == 8 and d["storage_bytes"] == 384_030
