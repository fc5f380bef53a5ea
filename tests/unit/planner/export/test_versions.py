"""Versioned manifests and links: files and links made by planner 0.1.0 (tests/fixtures/v1, written
by that version's code at commit b7813ed) load with the values they meant then."""
import json
from pathlib import Path

import pytest

from planner.export.manifest import SCHEMA_VERSION, ManifestError, dump_manifest, load_manifest, parse_manifest
from planner.export.share import ShareError, decode, encode
from planner.export.versions import CURRENT, LINK_STEPS, MANIFEST_STEPS, OLDEST, fill_scenario_defaults, frozen_defaults

V1 = Path(__file__).resolve().parents[3] / "fixtures" / "v1"
# the plans those fixtures gave under 0.1.0's code (samples, tokens, bytes), computed then
FIGURES = json.loads((V1 / "expected_figures.json").read_text())


def _meant(expected: dict) -> dict:
    """A v1 scenario in today's words: version 3 spells 'no cap' as "none" (None now means the
    layout's cap) and names the capture batch (1: no padding, as every plan before version 3);
    version 4 names decode's compute efficiency (the prefill MFU every earlier version decoded at:
    the scenario's, else the extraction GPU preset's) and the token cap on the decode batch (none
    before: 10^7, the bound). Fields added in version 4 that the older scenario had no say in take
    their defaults (the recipe None = the layout's, the custom model's new fields, the node network)."""
    from planner.presets.specs import ModelSpec, gpu_presets
    from planner.scenario import Scenario, Training
    out = dict(expected, max_seq_len=expected["max_seq_len"] if expected["max_seq_len"] is not None else "none")
    out = dict(out, capture_batch_size=1, sort_by_length=False)
    t = dict(out["throughput"])
    gpu = out["extraction_gpu"]
    t["decode_mfu"] = t["prefill_mfu"] or (out["custom_gpu"]["prefill_mfu"] if gpu == "custom"
                                           else gpu_presets()[gpu].prefill_mfu)
    t["max_batched_tokens"] = 10**7
    out["throughput"] = t
    out["training"] = dict(Training().model_dump(mode="json"), **out["training"])
    if out.get("custom_model"):
        spec = ModelSpec(**out["custom_model"]).model_dump(mode="json")
        out["custom_model"] = dict(spec, **out["custom_model"])
    # every other field version 1 did not have (absent from its frozen defaults, at any depth) takes
    # today's default: a field added later, whose default keeps what older scenarios meant, needs no
    # line here (docs/architecture.md "How to add an input")
    out = _with_new_fields(out, Scenario().model_dump(mode="json"), fill_scenario_defaults({}, 1))
    if out.get("mix"):
        out["mix"] = [dict(m, include=True) for m in out["mix"]]   # version 4: unchecked components stay
    # version 6: the rent as written (preset and months) plus keep_days (unused while months are given);
    # tau scored on the mix's own shares ("mix"), what every earlier version meant by no workload
    out["costs"] = dict(out["costs"], keep_days=0.0)
    if out["quality"].get("workload") is None:
        out["quality"] = dict(out["quality"], workload="mix")
    # version 6 (issue 22): tau on the paper's harness and the payback at the batch-1 speedup
    out["quality"] = dict(out["quality"], eval_engine="paper", fleet_batch=1.0)
    return out


def _with_new_fields(out: dict, today: dict, v1: dict) -> dict:
    out = dict(out)
    for key, value in today.items():
        if key not in v1:
            out.setdefault(key, value)
        elif isinstance(value, dict) and isinstance(v1[key], dict) and isinstance(out.get(key), dict):
            out[key] = _with_new_fields(out[key], value, v1[key])
    return out


def _same_plan(s, figures):
    from planner import plan
    p = plan(s)
    assert p.layers == figures["layers"] and p.bytes_per_token == figures["bytes_per_token"]
    for key in ("samples", "tokens", "storage_bytes", "output_tokens"):
        assert getattr(p, key) == pytest.approx(figures[key], rel=1e-12), key


@pytest.mark.parametrize("name", ["manifest.yaml", "manifest.json"])
def test_v1_manifest_loads_with_the_values_it_meant(name):
    m = load_manifest(V1 / name)
    assert m.schema_version == CURRENT
    expected = _meant(json.loads((V1 / "manifest.expected_scenario.json").read_text()))
    got = m.scenario.model_dump(mode="json")
    for key, value in expected.items():      # every field the v1 file had, with the meaning it had
        assert got[key] == value, key
    _same_plan(m.scenario, FIGURES["manifest"])
    # spot checks, read from the fixture by eye: half of each default row count, agentic dropped,
    # sharegpt the shortest rows, seed 7, per-turn rows at 4,096 tokens on 4 x H100
    rows = {c.id: c.rows_selected for c in m.components}
    assert rows["sharegpt"] == 60_000 and "agentic" not in rows
    assert m.scenario.unit == "turn" and m.scenario.max_seq_len == 4096 and m.scenario.extraction_gpus == 4
    assert all(c.sha256 is None for c in m.components)       # v1 had no content hashes


def test_v1_link_loads_with_the_values_it_meant():
    s = decode((V1 / "link.txt").read_text().strip())
    assert s.model_dump(mode="json") == _meant(json.loads((V1 / "link.expected_scenario.json").read_text()))
    _same_plan(s, FIGURES["link"])
    # the values issue #9 saw lost: a $5/h custom GPU with 96 GB, 100,000 B of linear-attention state
    assert s.custom_gpu.price_low == 5.0 and s.custom_gpu.memory_gb == 96
    assert s.custom_model.linear_state_bytes_per_layer == 100_000 and s.custom_model.hidden_size == 2048


def test_v1_omitted_fields_take_v1_defaults_not_todays():
    # a v1 link omitted every value equal to v1's default: 8 extraction GPUs, a 2,048-token cap,
    # the conversation unit, 3 epochs. The migration writes those in, whatever today's defaults are.
    filled = fill_scenario_defaults({"model": "qwen3-8b"}, 1)
    assert filled["extraction_gpus"] == 8 and filled["max_seq_len"] == 2048
    assert filled["unit"] == "conversation" and filled["training"]["epochs"] == 3.0
    assert filled["model"] == "qwen3-8b"
    # nested: a v1 link that set only the link speed keeps v1's 0.5 efficiency
    assert fill_scenario_defaults({"transfer": {"link_gbps": 100}}, 1)["transfer"] == {
        "method": "link", "link_gbps": 100, "efficiency": 0.5, "drive_days": 3.0, "egress_usd_per_gb": None}


def test_a_hand_written_v1_manifest_missing_scenario_fields():
    text = (V1 / "manifest.yaml").read_text()
    data = __import__("yaml").safe_load(text)
    del data["scenario"]["unit"], data["scenario"]["training"]["epochs"]
    m = parse_manifest(json.dumps(data))
    assert m.scenario.unit == "conversation" and m.scenario.training.epochs == 3.0   # v1's defaults


def test_v2_speculators_dflash_keeps_its_five_dflash_layers():
    # version 2's speculators-dflash layout captured 5 DFlash-rule layers and no last layer; the
    # layout now follows speculators' own default (4 layers incl. the last), so the migration writes
    # the 5 layers out: Qwen3-8B (36 layers): 1, 9, 17, 25, 33
    from planner.export.versions import migrate_link
    s = migrate_link({"layout": "speculators-dflash", "model": "qwen3-8b", "layers": None, "layer_count": None,
                      "max_seq_len": None, "unit": "turn"}, 2)
    assert s["layers"] == [1, 9, 17, 25, 33] and s["max_seq_len"] == "none" and s["capture_batch_size"] == 1


def test_current_round_trip_and_every_step_exists():
    m = load_manifest(V1 / "manifest.yaml")
    again = parse_manifest(dump_manifest(m, "yaml"))
    assert again.scenario == m.scenario and again.components == m.components
    assert SCHEMA_VERSION == CURRENT
    for v in range(OLDEST, CURRENT):
        assert v in MANIFEST_STEPS and v in LINK_STEPS
    assert frozen_defaults(1)["scenario"]      # versions 2 and 3 write every field; 1 omitted defaults
    s = decode((V1 / "link.txt").read_text().strip())
    assert decode(encode(s)) == s and encode(s).startswith(f"v{CURRENT}.")


@pytest.mark.parametrize("text, needle", [
    ('{"schema_version": 99}', "newer than this planner"),
    ('{"schema_version": 0}', "schema_version: 0"),
    ('{"schema_version": true}', "schema_version: True"),
    ('{"schema_version": "2"}', "schema_version: '2'"),
])
def test_unknown_manifest_versions(text, needle):
    with pytest.raises(ManifestError) as e:
        parse_manifest(text)
    assert needle in str(e.value)


@pytest.mark.parametrize("link, needle", [
    ("v9.eNqrrgUAAXUA-Q", "newer planner"),
    ("v0.eNqrrgUAAXUA-Q", "not in a format"),
    ("x2.abc", "not in a format"),
])
def test_unknown_link_versions(link, needle):
    with pytest.raises(ShareError) as e:
        decode(link)
    assert needle in str(e.value)


V3 = Path(__file__).resolve().parents[3] / "fixtures" / "v3"   # written by version 3's code (commit 3ecc7bd)


def test_v3_link_and_manifest_load_with_what_they_meant():
    figures = json.loads((V3 / "expected_figures.json").read_text())
    for s in (decode((V3 / "link.txt").read_text().strip()), load_manifest(V3 / "manifest.yaml").scenario):
        # version 3 decoded at the prefill MFU (RTX PRO 6000 preset 0.35), had no token cap on the
        # decode batch and a max_num_seqs of 256, in the roofline mode it names
        t = s.throughput
        assert (t.mode, t.decode_mfu, t.max_batch, t.max_batched_tokens) == ("roofline", 0.35, 256, 10**7)
        assert s.kv_dtype == "bf16"
        # no recipe inputs then: the layout's pipeline defaults
        assert (s.training.ttt_steps, s.training.num_anchors, s.training.block_size) == (None, None, None)
        _same_plan_v3(s, figures)


def _same_plan_v3(s, figures):
    from planner import plan
    p = plan(s)
    for key in ("samples", "tokens", "storage_bytes", "output_tokens"):
        assert getattr(p, key) == pytest.approx(figures[key], rel=1e-12), key


V4 = Path(__file__).resolve().parents[3] / "fixtures" / "v4"   # a version-4 link (the v4 defaults, 16 GPUs, 30.72 TB)


def test_v4_link_keeps_its_disk_check_now_that_the_disk_is_per_node():
    # version 4 checked all the storage against disk_capacity_tb; version 5 checks each node's shard.
    # 16 GPUs are 2 nodes of 8, so the 30.72 TB a v4 link meant for everything is 15.36 TB a node.
    s = decode((V4 / "link.txt").read_text().strip())
    assert s.extraction_gpus == 16 and s.extraction_nodes is None and s.extraction_node_count == 2
    assert s.disk_capacity_tb == pytest.approx(15.36) and s.placement == "local"
    from planner import plan
    from planner.scenario import UniformMix
    # 1,000 rows x 1,000 tokens x 51,216 bytes (specforge-dflash on Qwen3.6-27B) + 3,584 bytes of file
    # overhead a row = 51.2196 GB: far under either check; at 400,000 rows, 20.49 TB: under the 30.72 TB
    # version 4 checked and under 2 x 15.36 TB now; at 700,000 rows, 35.85 TB: over both
    for rows, blocked in ((400_000, False), (700_000, True)):
        p = plan(s.model_copy(update={"uniform": UniformMix(samples=rows, tokens=1000), "mix": None,
                                      "max_seq_len": "none"}))
        assert ("disk-capacity" in {f.code for f in p.findings}) is blocked, rows
        assert p.storage_per_node_bytes == pytest.approx(p.storage_bytes_compressed / 2)


@pytest.mark.parametrize("gpus, cap, want", [
    (16, 30.72, 15.36),        # 2 nodes of 8
    (16.0, "30.72", 15.36),    # values pydantic reads as numbers are divided too
    ("24", 30, 10.0),          # 3 nodes
    (16, 0.01, 0.01),          # at least the field's bound: it refuses all it refused before
    (8, 30.72, 30.72),         # one node: unchanged
    (True, 30.72, 30.72),      # not a count: left to validation
])
def test_v4_to_v5_disk_capacity_edge_cases(gpus, cap, want):
    from planner.export.versions import _scenario_4_to_5
    s = _scenario_4_to_5({"extraction_gpus": gpus, "disk_capacity_tb": cap})
    assert float(s["disk_capacity_tb"]) == pytest.approx(want)
