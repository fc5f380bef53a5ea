"""Trimming to a budget, the manifest (round trip, schema, hostile files) and the adapters."""
import json
import random
import subprocess
import sys

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import default_scenario, plan
from planner.catalog.profile import profile_file
from planner.cli.main import main
from planner.decisions.trim import Budget, TrimInfeasible, trim, utility
from planner.export.commands import speculators_commands
from planner.export.manifest import (
    SCHEMA_PATH,
    SCHEMA_VERSION,
    ManifestError,
    build_manifest,
    dump_manifest,
    json_schema,
    parse_manifest,
)
from planner.export.materialize import hub_script, materialize_local, selected_indices
from planner.export.plan_json import to_json_dict
from planner.scenario import Scenario
from tests.helpers import run_cli


def cli_in_process(capsys, *args: str) -> tuple[int, str, str]:
    """The CLI's main() in this process: (exit code, stdout, stderr); a Python start less than run_cli."""
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err

TB = 1e12


# ---------------------------------------------------------------- trim

def unpadded():
    """The default scenario with a capture batch of 1: the trim arithmetic below is worked on the
    rows' own lengths (SpecForge's batch padding is tested in test_padding and test_layouts)."""
    return default_scenario().with_changes(capture_batch_size=1)


def test_trim_reaches_a_budget_with_batch_padding_too():
    r = trim(default_scenario(), Budget(storage_tb=20), "proportional")
    assert plan(r.scenario).storage_bytes_compressed <= 20e12 and r.changes

def test_proportional_10tb_keeps_the_ratios():
    s = unpadded()
    r = trim(s, Budget(storage_tb=10), "proportional")
    p = plan(r.scenario)
    assert 9.9 * TB <= p.storage_bytes_compressed <= 10 * TB
    # every component is floor(f x rows) for one f: max(after/before) <= min((after+1)/before)
    ratios = [(c.after / c.before, (c.after + 1) / c.before) for c in r.changes]
    assert max(lo for lo, _ in ratios) <= min(hi for _, hi in ratios)
    assert r.budgets[0].share <= 1.0


def test_protect_tool_keeps_114000_tool_rows():
    r = trim(unpadded(), Budget(storage_tb=10), "protect", protect=["tool"])
    after = {c.id: c.after for c in r.changes}
    assert after["glaive_fc"] + after["qwen35_fc"] + after["hermes_fc"] == 114_000
    assert plan(r.scenario).storage_bytes_compressed <= 10 * TB
    assert after["openorca"] < 250_430


def test_infeasible_budget_says_which_and_by_how_much():
    with pytest.raises(TrimInfeasible) as e:
        trim(unpadded(), Budget(storage_tb=1), "protect", protect=["tool"])
    msg = str(e.value)
    assert "storage" in e.value.field and "protected components alone need" in msg and "over the budget" in msg


def test_cap_finds_the_largest_cap_that_fits():
    s = unpadded()
    r = trim(s, Budget(storage_tb=20), "cap")
    cap = r.max_seq_len_after
    assert cap < 2048
    assert plan(r.scenario).storage_bytes_compressed <= 20 * TB
    assert plan(r.scenario.with_changes(max_seq_len=cap + 1)).storage_bytes_compressed > 20 * TB
    # with a floor, the cap stops and the rows scale
    r2 = trim(s, Budget(storage_tb=2), "cap", min_cap=1024)
    assert r2.max_seq_len_after == 1024
    assert plan(r2.scenario).storage_bytes_compressed <= 2 * TB
    assert all(c.after <= c.before for c in r2.changes)


def test_already_within_budget_is_unchanged():
    r = trim(unpadded(), Budget(storage_tb=1000), "proportional")
    assert all(c.after == c.before for c in r.changes) and "already fits" in r.note


def test_trim_is_deterministic():
    a = trim(unpadded(), Budget(storage_tb=7, gpu_days=2), "value")
    b = trim(unpadded(), Budget(storage_tb=7, gpu_days=2), "value")
    assert a.changes == b.changes


def test_several_budgets_are_all_met():
    r = trim(unpadded(), Budget(storage_tb=15, usd=800, transfer_hours=5), "proportional")
    p = plan(r.scenario)
    assert p.storage_bytes_compressed <= 15 * TB and p.cost_usd.total_offline <= 800 and p.transfer_hours <= 5
    assert max(b.share for b in r.budgets) > 0.99   # the binding one is used up


def test_value_lets_expensive_rows_give_way_first():
    # without a cap the agentic traces cost ~30K tokens a row: value keeps far fewer of them than proportional
    s = unpadded().with_changes(max_seq_len="none")
    v = {c.id: c for c in trim(s, Budget(storage_tb=10), "value").changes}
    p = {c.id: c for c in trim(s, Budget(storage_tb=10), "proportional").changes}
    assert v["agentic"].after / 15_000 < p["agentic"].after / 15_000
    assert v["code_alpaca"].after / 20_022 > p["code_alpaca"].after / 20_022


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tb=st.floats(0.5, 35), days=st.one_of(st.none(), st.floats(0.5, 5)),
       weights=st.dictionaries(st.sampled_from(["openorca", "agentic", "glaive_fc", "ultrachat"]),
                               st.floats(0.1, 10), max_size=3))
def test_value_never_below_proportional_and_meets_budgets(tb, days, weights):
    s = unpadded()
    b = Budget(storage_tb=tb, days=days)
    v = trim(s, b, "value", weights=weights)
    pr = trim(s, b, "proportional")
    rows = lambda r: {c.id: c.after for c in r.changes}  # noqa: E731
    assert utility(rows(v), weights) >= utility(rows(pr), weights) - 1e-9
    p = plan(v.scenario)
    assert p.storage_bytes_compressed <= tb * TB * (1 + 1e-12)
    if days:
        assert p.wall_days_offline <= days * (1 + 1e-12)


@pytest.mark.parametrize("strategy", ["proportional", "value", "cap"])
def test_a_budget_that_leaves_no_row_is_refused(strategy):
    s = unpadded()
    with pytest.raises(TrimInfeasible) as e:
        trim(s, Budget(storage_tb=1e-300), strategy, min_cap=16 if strategy == "cap" else None)
    # the cheapest single row, found independently: one row of each component on its own
    one_row = {c.id: plan(s.with_changes(mix=[{"id": c.id, "rows": 1}])).storage_bytes_compressed
               for c in plan(s).components}
    cheapest = min(one_row, key=one_row.get)
    assert e.value.field == "budget.storage_tb" and e.value.value == "1e-300 TB of storage"
    assert f"one row of {cheapest} alone needs {one_row[cheapest]:,.0f} bytes" in str(e.value)


def test_no_row_left_though_one_would_fit_says_so():
    # proportional scaling gives the first row to the largest component: 1,000 agentic traces of
    # ~30K tokens (uncapped) x ~60 KB/token ~ 1.8 GB a row, while one gsm8k row (~200 tokens) is ~12 MB.
    # A 0.1 GB budget fits the gsm8k row alone, but no fraction gives it a row before agentic gets one.
    s = unpadded().with_changes(mix=[{"id": "agentic", "rows": 1000}, {"id": "gsm8k", "rows": 1}],
                                        max_seq_len=None)
    gsm = plan(s.with_changes(mix=[{"id": "gsm8k", "rows": 1}])).storage_bytes_compressed
    agentic = plan(s.with_changes(mix=[{"id": "agentic", "rows": 1}])).storage_bytes_compressed
    assert gsm < 1e8 < agentic
    with pytest.raises(TrimInfeasible, match="proportional strategy leaves no rows, though one row of gsm8k"):
        trim(s, Budget(storage_tb=1e-4), "proportional")


def test_trim_cli_writes_a_manifest_and_prints_estimate_json(tmp_path, capsys):
    out = tmp_path / "m.yaml"
    r = run_cli("trim", "--capture-batch-size", "1", "--budget-storage-tb", "10", "--strategy", "protect", "--protect",
                "tool", "--out", str(out),
                "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["storage_bytes_compressed"] <= 10 * TB
    assert sum(c["rows"] for c in d["components"] if c["id"] in ("glaive_fc", "qwen35_fc", "hermes_fc")) == 114_000
    m = parse_manifest(out.read_bytes())
    assert sum(c.rows_selected for c in m.components) == d["conversations"]
    # the two refusals through main() in this process (the run above keeps the `python -m planner` path)
    code, _, err = cli_in_process(capsys, "trim", "--capture-batch-size", "1", "--budget-storage-tb", "-3",
                                  "--out", str(out))
    assert code == 2 and "--budget-storage-tb" in err
    code, _, err = cli_in_process(capsys, "trim", "--capture-batch-size", "1", "--out", str(out))
    assert code == 2 and "at least one budget" in err


# ---------------------------------------------------------------- manifest
def test_round_trip_export_import_estimate_identical(tmp_path, capsys):
    s = unpadded().with_changes(mix=[{"id": "openorca", "rows": 1000, "seed": 3},
                                             {"id": "agentic", "rows": 20, "selection": "first"}],
                                        unit="turn", max_seq_len=8192, compression=1.2)
    for fmt in ("yaml", "json"):
        f = tmp_path / f"m.{fmt}"
        f.write_text(dump_manifest(build_manifest(s), fmt))
        code, out, err = cli_in_process(capsys, "estimate", "--manifest", str(f), "--json")   # main() here
        assert code == 0, err
        assert json.loads(out) == json.loads(json.dumps(to_json_dict(plan(s))))
    # and through the CLI end to end (two `python -m planner` runs): trim -> manifest -> estimate --manifest
    out = tmp_path / "t.yaml"
    t = run_cli("trim", "--capture-batch-size", "1", "--budget-storage-tb", "5", "--out", str(out), "--json")
    e = run_cli("estimate", "--manifest", str(out), "--json")
    trimmed = json.loads(t.stdout)
    trimmed.pop("trim")
    assert json.loads(e.stdout) == trimmed


def test_committed_json_schema_matches_the_model_and_validates_a_manifest():
    assert json.loads(SCHEMA_PATH.read_text()) == json.loads(json.dumps(json_schema()))
    data = json.loads(dump_manifest(build_manifest(default_scenario()), "json"))
    jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))
    data["components"][0]["rows_selected"] = "many"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, json.loads(SCHEMA_PATH.read_text()))


def good_yaml() -> str:
    s = default_scenario().with_changes(mix=[{"id": "openorca", "rows": 1000}])
    return dump_manifest(build_manifest(s), "yaml")


def mutate(path_value):
    data = yaml.safe_load(good_yaml())
    *parents, leaf = path_value[0]
    node = data
    for p in parents:
        node = node[p]
    node[leaf] = path_value[1]
    return yaml.safe_dump(data)


@pytest.mark.parametrize("text, expect", [
    (good_yaml()[: len(good_yaml()) // 2] + "\n  - [unclosed", "invalid YAML"),
    (mutate((["scenario", "mix", 0, "rows"], -5)), "scenario.mix.0.rows"),
    (mutate((["scenario", "mix", 0, "rows"], "many")), "scenario.mix.0.rows"),
    (mutate((["scenario", "mix", 0, "rows"], 1e308)), "scenario.mix.0.rows"),
    (mutate((["scenario", "extraction_gpus"], 2.5)), "scenario.extraction_gpus"),
    (mutate((["scenario", "mix", 0, "id"], "nosuch")), "scenario.mix.0.id"),
    (mutate((["schema_version"], 7)), "schema_version"),
    (mutate((["scenario", "compression"], float("nan"))), "scenario.compression"),
    (mutate((["scenario", "compression"], float("inf"))), "scenario.compression"),
    (mutate((["scenario", "bogus"], 1)), "scenario.bogus"),
    (good_yaml().replace(f"schema_version: {SCHEMA_VERSION}", f"schema_version: {SCHEMA_VERSION}\n"
                         f"schema_version: {SCHEMA_VERSION}"), "duplicate key"),
    ("a: &a [1,2]\nb: &b [*a,*a]\nc: [*b,*b]\n", "aliases"),
    ("!!python/object/apply:os.system ['echo hi']\n", "tags"),
    ("- just\n- a list\n", "a manifest is a mapping"),
    ('{"schema_version": 1, "schema_version": 1}', "duplicate key"),
    ('{"schema_version": NaN}', "NaN"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_bad_manifests_name_the_field(text, expect):
    with pytest.raises(ManifestError) as e:
        parse_manifest(text if isinstance(text, str) else text, "m.yaml")
    assert expect in str(e.value)


def test_rows_mismatch_between_scenario_and_components():
    data = yaml.safe_load(good_yaml())
    data["components"][0]["rows_selected"] = 999
    with pytest.raises(ManifestError, match="rows_selected"):
        parse_manifest(yaml.safe_dump(data))


def test_large_manifest_refused_before_parsing(tmp_path, capsys):
    # through main() in this process (an uncaught exception would propagate and fail the test)
    big = tmp_path / "big.yaml"
    big.write_text("x: " + "a" * (10 * 2**20))
    code, _, err = cli_in_process(capsys, "estimate", "--manifest", str(big))
    assert code == 2 and "limit" in err and "Traceback" not in err
    code, _, err = cli_in_process(capsys, "estimate", "--manifest", str(tmp_path / "nope.yaml"))
    assert code == 2 and "Traceback" not in err


# ---------------------------------------------------------------- adapters
def test_speculators_export_names_layers_cap_and_the_limit():
    s = default_scenario().with_changes(max_seq_len=2048)
    text = speculators_commands(build_manifest(s))
    # the planned DFlash layers (no last layer in this layout, so launch_vllm.py must not append it)
    assert "--target-layer-ids 1 16 31 46 61 --no-include-last-layer" in text
    assert "--seq-length 2048" in text
    assert "--data hf:Open-Orca/OpenOrca:default:train" in text
    assert "per-source counts" in text and "materialize" in text


def test_export_cli(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text(good_yaml())
    r = run_cli("export", str(f), "--format", "speculators")
    assert r.returncode == 0 and "prepare_data.py" in r.stdout
    r = run_cli("export", str(f), "--format", "json")
    assert json.loads(r.stdout)["schema_version"] == SCHEMA_VERSION


@pytest.fixture()
def local_component(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    data = tmp_path / "local.jsonl"
    with open(data, "w") as fh:
        for i in range(10):
            if i == 4:
                fh.write("{broken\n")   # line 5 is not a row
            fh.write(json.dumps({"instruction": f"question {i}", "output": f"answer {i}"}) + "\n")
    profile_file(data, "local_set")
    return data


def test_materialize_local_rows_are_exact_and_seeded(tmp_path, local_component):
    s = Scenario(mix=[{"id": "local_set", "rows": 4, "seed": 7}])
    m = build_manifest(s)
    out = tmp_path / "mix.jsonl"
    res = materialize_local(m, out)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert res["written"] == {"local_set": 4}
    # valid rows are questions 0..9; a seeded uniform sample of 4 of the 10 positions
    picked = sorted(random.Random(7).sample(range(10), 4))
    assert [r["conversations"][0]["content"] for r in rows] == [f"question {i}" for i in picked]
    assert rows[0]["conversations"][1] == {"role": "assistant", "content": f"answer {picked[0]}"}
    again = tmp_path / "again.jsonl"
    materialize_local(m, again)
    assert again.read_text() == out.read_text()
    first = build_manifest(Scenario(mix=[{"id": "local_set", "rows": 3, "selection": "first"}]))
    materialize_local(first, out)
    assert [json.loads(x)["conversations"][0]["content"] for x in out.read_text().splitlines()] == \
        ["question 0", "question 1", "question 2"]


def test_selected_indices():
    assert selected_indices(10, 3, "first", 0) == [0, 1, 2]
    assert selected_indices(5, 9, "uniform", 1) == [0, 1, 2, 3, 4]
    assert selected_indices(100, 5, "uniform", 42) == selected_indices(100, 5, "uniform", 42)


def test_hub_script_runs_offline_on_local_files(tmp_path):
    pytest.importorskip("datasets")
    src = tmp_path / "code_alpaca.jsonl"
    with open(src, "w") as fh:
        for i in range(8):
            fh.write(json.dumps({"instruction": f"task {i}", "input": "", "output": f"code {i}"}) + "\n")
    s = Scenario(mix=[{"id": "code_alpaca", "rows": 3, "selection": "first"},
                      {"id": "openorca", "rows": 2, "seed": 5},
                      {"id": "gsm8k", "rows": 2, "selection": "shortest"}])
    gsm = tmp_path / "gsm.jsonl"
    with open(gsm, "w") as fh:
        for q in ("a long question here", "q1", "mid question", "q2"):
            fh.write(json.dumps({"question": q, "answer": "x"}) + "\n")
    script = tmp_path / "materialize_hub.py"
    script.write_text(hub_script(build_manifest(s)))
    orca = tmp_path / "orca.jsonl"
    with open(orca, "w") as fh:
        for i in range(6):
            fh.write(json.dumps({"system_prompt": "", "question": f"q{i}", "response": f"r{i}"}) + "\n")
    out = tmp_path / "mix.jsonl"
    env = {"HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    import os
    r = subprocess.run([sys.executable, str(script), "--out", str(out), "--local", f"code_alpaca={src}",
                        "--local", f"openorca={orca}", "--local", f"gsm8k={gsm}"], capture_output=True, text=True,
                        cwd=tmp_path,
                       env={**os.environ, **env}, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [x["conversations"][0]["content"] for x in rows[:3]] == ["task 0", "task 1", "task 2"]
    assert len(rows) == 7 and all(x["conversations"][-1]["role"] == "assistant" for x in rows)
    assert [x["conversations"][0]["content"] for x in rows[5:]] == ["q1", "q2"]   # the two shortest
    from datasets import load_dataset
    expect = load_dataset("json", data_files=str(orca), split="train").shuffle(seed=5).select(range(2))
    assert [x["conversations"][0]["content"] for x in rows[3:5]] == [e["question"] for e in expect]


def test_shortest_selection_plans_and_materializes_the_shortest_rows(tmp_path, local_component):
    from planner.catalog.stats import get_catalog
    s = Scenario(mix=[{"id": "ultrachat", "rows": 100_000, "selection": "shortest"}], max_seq_len="none",
                 capture_batch_size=1, regenerate=False)
    p = plan(s)
    # independently: the shortest 100,000 of 207,865 rows, from the catalog's atoms sorted by length
    atoms = get_catalog().components["ultrachat"].conversation
    order = atoms.tokens.argsort()
    rows, tokens = atoms.rows[order] * 207_865, atoms.tokens[order]
    need, total = 100_000.0, 0.0
    for r, t in zip(rows, tokens, strict=False):
        take = min(r, need)
        total += take * t
        need -= take
        if need <= 0:
            break
    assert p.tokens == pytest.approx(total, rel=1e-9)
    assert p.tokens < plan(s.with_changes(mix=[{"id": "ultrachat", "rows": 100_000}])).tokens / 2
    # materialize: the 3 shortest of the local rows (question i / answer i, all the same length
    # but "question 0..9" -> ties broken by file order)
    m = build_manifest(Scenario(mix=[{"id": "local_set", "rows": 3, "selection": "shortest"}]))
    out = tmp_path / "short.jsonl"
    materialize_local(m, out)
    assert [json.loads(x)["conversations"][0]["content"] for x in out.read_text().splitlines()] == \
        ["question 0", "question 1", "question 2"]
    assert selected_indices(4, 2, "shortest", 0, lengths=[9, 3, 7, 3]) == [1, 3]


@pytest.mark.parametrize("strategy", ["proportional", "quality", "value", "cap"])
def test_min_family_share_keeps_every_component_of_the_family(strategy):
    from planner.decisions.trim import Budget, trim
    s = default_scenario()
    r = trim(s, Budget(storage_tb=20), strategy, min_family_share={"code": 0.5}, min_cap=1024)
    full = {c.id: c.before for c in r.changes}
    after = {c.id: c.after for c in r.changes}
    # evol_codealpaca 111,272 -> at least ceil(0.5 x 111,272) = 55,636; magicoder_oss 37,599; code_alpaca 10,011
    for cid, least in (("evol_codealpaca", 55_636), ("magicoder_oss", 37_599), ("code_alpaca", 10_011)):
        assert after[cid] >= least and least == -(-full[cid] // 2)
    assert r.budgets[0].used <= 20e12 * (1 + 1e-12)
    if strategy == "cap":
        assert r.max_seq_len_after >= 1024


def test_unchecked_components_stay_in_the_trimmed_scenario_and_the_manifest():
    from planner.decisions.trim import Budget, trim
    s = default_scenario().with_changes(mix=[{"id": "openorca", "rows": 250_430}, {"id": "sharegpt", "rows": 120_000,
                                                                                   "include": False}])
    r = trim(s, Budget(storage_tb=5), "proportional")
    mix = {m.id: m for m in r.scenario.mix}
    assert mix["sharegpt"].include is False and mix["sharegpt"].rows == 120_000    # unchanged, unchecked
    assert [c.id for c in r.changes] == ["openorca"]
    m = build_manifest(r.scenario)
    assert [c.id for c in m.components] == ["openorca"]                           # nothing to materialize
    assert any(x.id == "sharegpt" and not x.include for x in m.scenario.mix)       # but the scenario keeps it
