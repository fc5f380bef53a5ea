"""Capture paths (issue 33 item 1): each layout captures as its pipeline's code runs it
(planner/presets/capture_paths.yaml, planner/presets/capture_paths.py), worked by hand."""
import typing

import pytest

from planner import plan
from planner.errors import PlannerInputError
from planner.export.plan_json import to_json_dict
from planner.presets.capture_paths import capture_paths, capture_time, paths_of, resolve_path
from planner.presets.layouts import layout_presets
from planner.scenario import Scenario, UniformMix


def test_the_scenario_choices_are_the_presets_ids():
    ann = Scenario.model_fields["capture_path"].annotation
    literal = next(a for a in typing.get_args(ann) if typing.get_origin(a) is typing.Literal)
    assert sorted(typing.get_args(literal)) == sorted(capture_paths())


def test_each_layout_defaults_to_its_pipelines_path():
    default = {spec.id: paths_of(spec.pipeline)[0] for spec in layout_presets().values()}
    # speculators runs vllm serve with extract_hidden_states (scripts/launch_vllm.py:136-157); SpecForge an
    # SGLang engine (scripts/prepare_hidden_states.py:1-2); Model-Optimizer's HF dump
    # (compute_hidden_states_hf.py:147-149); the pipelines whose capture was not read keep the old model
    assert default["speculators"] == default["speculators-dflash"] == "vllm-extract"
    assert default["specforge-eagle3"] == default["specforge-dflash"] == "sglang-server"
    assert default["modelopt-eagle3"] == "hf-loop"
    assert {default[i] for i in ("seed-article", "nemo-automodel", "deepspec", "eagle1")} == {"prefill-server"}


def test_the_facts_cite_the_lines_that_hold_them():
    p = capture_paths()
    assert "compute_hidden_states_hf.py:147-149" in p["hf-loop"].split.source          # device_map="auto"
    assert "compute_hidden_states_hf.py:183-189" in p["hf-loop"].held_layers.source    # output_hidden_states
    assert "compute_hidden_states_hf.py:186-189" in p["hf-loop"].host_copy.source      # .cpu() in the loop
    assert "data_generation_offline.py:120-126" in p["vllm-extract"].concurrency.source
    assert p["vllm-extract"].concurrency.value == 32
    assert "launch_vllm.py:23-26" in p["vllm-extract"].write_passes.source             # /tmp/hidden_states
    assert "compute_hidden_states_vllm.py:252" in p["vllm-extract"].efficiency.source  # chunked prefill off
    # the issue says SpecForge has an HF backend for capture; its code has none (config/schema.py:51-54)
    assert "schema.py:51-54" in p["sglang-server"].no_hf_backend
    assert paths_of("specforge") == ["sglang-server"]


def test_a_path_the_pipeline_lacks_is_one_line_naming_its_own():
    with pytest.raises(PlannerInputError) as e:
        resolve_path("vllm-extract", "modelopt-eagle3", "modelopt")
    assert str(e.value) == ("--capture-path: 'vllm-extract' is not allowed; the modelopt pipeline (layout "
                            "modelopt-eagle3) captures with hf-loop")
    with pytest.raises(PlannerInputError, match="captures with sglang-server"):
        plan(Scenario(layout="specforge-eagle3", capture_path="hf-loop"))


def _time(path, **kw):
    args = {"tokens": 3.6e6, "rows": 3600, "stored_bytes": 36e9, "write_bytes": 36e9, "prefill_per_gpu": 900.0,
            "tensor_parallel": 2, "tp_efficiency": 0.9, "replicas": 2, "write_bytes_per_s": 1e9}
    return capture_time(capture_paths()[path], **{**args, **kw})


def test_the_hf_loop_runs_one_gpu_of_a_replica_at_a_time_and_writes_in_the_loop():
    t = _time("hf-loop")
    # device_map splits the layers: a replica of 2 GPUs computes at one GPU's rate, without the TP loss:
    # 900 / 0.9 x efficiency 0.5 = 500 tok/s a replica, 1,000 for 2: 3.6e6 / 1,000 = 3,600 s = 1 h
    assert t.compute_hours == pytest.approx(1.0)
    # .cpu() in the loop: 36e9 B / (10 GB/s x 2 replicas) = 1.8 s; 3,600 rows x 5 ms / 2 = 9 s;
    # torch.save in the loop: 36e9 B / 1e9 B/s = 36 s; all summed: 3,600 + 1.8 + 9 + 36 = 3,646.8 s
    assert (t.host_copy_hours * 3600, t.request_hours * 3600, t.disk_hours * 3600) == pytest.approx((1.8, 9, 36))
    assert t.hours == pytest.approx(3646.8 / 3600)
    assert t.bound == "compute"
    # 3.6e6 tokens / (3,646.8 s x 4 GPUs) = 246.79 tok/s per GPU
    assert t.tokens_per_s_per_gpu == pytest.approx(3.6e6 / 3646.8 / 4)


def test_a_tensor_split_computes_on_every_gpu_and_overlaps_the_writes():
    t = _time("sglang-server")
    # 900 tok/s per GPU (TP loss included) x 2 GPUs x 2 replicas = 3,600 tok/s: 1,000 s; the 36 s of
    # writes overlap it
    assert t.hours == pytest.approx(1000 / 3600)
    assert t.bound == "compute"


def test_speculators_writes_each_file_twice_and_can_be_disk_bound():
    # the server's file under /tmp/hidden_states, then the client's move to --output: 2 passes;
    # 36e9 B x 2 / 1e7 B/s = 7,200 s = 2 h against 1,000 s of compute
    # plus vllm serve's fixed start, once (60 s: capture_paths.yaml startup_s)
    t = _time("vllm-extract", write_bytes_per_s=1e7)
    assert t.disk_hours == pytest.approx(2.0) and t.hours == pytest.approx(2.0 + 60 / 3600)
    assert t.bound == "disk write"


def test_vllm_extract_starts_its_server_once_before_any_row():
    # the server's start (weights, torch.compile, CUDA graphs) from vLLM's own threads, no scored report:
    # 60 s, band 30-180 s; once a run, however many replicas (they start together)
    s = capture_paths()["vllm-extract"].startup_s
    assert (s.value, s.low, s.high) == (60, 30, 180) and "PR #11005" in s.source and "#20264" in s.source
    # the tensor-split example above: 1,000 s of compute + 60 s = 1,060 s; with 4 replicas 500 + 60 s
    assert _time("vllm-extract").hours == pytest.approx(1060 / 3600)
    assert _time("vllm-extract", replicas=4).hours == pytest.approx(560 / 3600)
    assert _time("vllm-extract").startup_hours == pytest.approx(60 / 3600)
    assert _time("vllm-extract", startup_s=180).hours == pytest.approx(1180 / 3600)
    # nothing to capture: no start either
    assert _time("vllm-extract", tokens=0, rows=0, write_bytes=0).hours == 0
    # the paths whose start was not read keep none
    assert _time("sglang-server").startup_hours == _time("hf-loop").startup_hours == 0
    # in a plan: 5,000 rows of 2,000 tokens on one H100 (speculators, no regeneration): the band's ends take
    # 30 s and 180 s, the centre 60 s on top of the compute at the calibrated rate (or of the overlapped writes:
    # 2 passes of the stored bytes at the node's disk rate, which the fast end of the band meets)
    p = plan(Scenario(layout="speculators", model="qwen3-8b", extraction_gpu="h100-sxm", extraction_gpus=1,
                      regenerate=False, uniform=UniformMix(samples=5000, tokens=2000, response_tokens=0)))
    e = p.extraction
    compute = 1e7 / e.prefill_tokens_per_s_per_gpu / 3600
    assert e.capture_hours == pytest.approx(compute + 60 / 3600, rel=1e-9)
    lo, hi = e.prefill_calibration.band
    import math
    disk = 2 * p.storage_bytes_compressed / p.nodes.capture_write_bytes_per_s / 3600
    assert e.wall_hours_low == pytest.approx(max(compute * math.exp(lo), disk) + 30 / 3600, rel=1e-9)
    assert e.wall_hours_high == pytest.approx(max(compute * math.exp(hi), disk) + 180 / 3600, rel=1e-9)


def _modelopt_70b(**kw) -> Scenario:
    # Model-Optimizer issue 593's setup (bench/users_reports.yaml): Llama-3.3-70B (priced as 3.1-70B) on 8 x
    # A100 80GB, 120,000 conversations; 1,500 tokens each assumed (the report states no length)
    return Scenario(layout="modelopt-eagle3", model="llama-3.1-70b", extraction_gpu="a100-80gb", extraction_gpus=8,
                    uniform=UniformMix(samples=120_000, tokens=1500, response_tokens=0), regenerate=False, **kw)


def test_a_70b_on_the_hf_loop_splits_its_layers_over_four_gpus_per_replica():
    p = plan(_modelopt_70b())
    e = p.extraction
    # 141 GB of bf16 weights need more than 2 x (80 x 0.9 - 2) = 140 GB: 4 GPUs a replica, 2 replicas on 8
    assert (e.capture_path, e.capture_split, e.tp_per_replica, e.replicas) == ("hf-loop", "layers", 4, 2)
    rate = e.prefill_tokens_per_s_per_gpu / 0.9 * 0.5 * 2       # one GPU of each replica computing, x 0.5
    tokens = 120_000 * 1500                                      # 1.8e8, all under the 3,072 cap
    compute = tokens / rate / 3600
    assert compute < e.capture_hours < compute * 1.05           # + the copies, the rows and the writes
    d = to_json_dict(p)["extraction"]
    assert (d["capture_path"], d["replicas"], d["tp_per_replica"]) == ("hf-loop", 2, 4)
    split = [f for f in p.findings if f.code == "capture-layer-split"]
    assert len(split) == 1 and "over 4 a100-80gb per replica" in split[0].text and "2 replica(s)" in split[0].text
    assert d["capture_tokens_per_s_per_gpu"] == pytest.approx(tokens / (e.capture_hours * 3600 * 8))


def test_the_hf_loop_keeps_every_layers_output_beside_the_row():
    from planner.presets.capture_paths import held_bytes_per_token
    # output_hidden_states=True: (80 + 1) layers x 8,192 x 2 bytes = 1,327,104 bytes a token
    assert held_bytes_per_token(capture_paths()["hf-loop"], num_layers=80, hidden_size=8192,
                                captured_bytes=65_536) == 1_327_104
    assert held_bytes_per_token(capture_paths()["vllm-extract"], num_layers=80, hidden_size=8192,
                                captured_bytes=65_536) == 65_536


def _fidelity():
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[4] / "bench"))
    import fidelity
    return fidelity


def test_the_capture_reports_are_scored_on_the_plan_and_fit_nothing():
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[4]
    f = _fidelity()
    rows = {r["id"]: r for r in f.capture_reports()}
    mo = rows["mo593-llama70b-a100"]
    # the 70B scenario above: 96 h reported ("around 4 days") inside the plan's band around 47 h
    e = plan(_modelopt_70b()).extraction
    assert (mo["predicted"], mo["low"], mo["high"]) == (e.capture_hours, e.wall_hours_low, e.wall_hours_high)
    assert mo["inside"] and mo["path"] == "hf-loop"
    assert rows["speculators1036-qwen3-8b"]["path"] == "vllm-extract"
    # none of the scored threads is a source of the paths' preset (nothing fitted on them); a thread a fitted
    # preset cites (SpecForge PR #37 is the training floor's SF37) is FIT, shown and never scored, and the tally
    # counts the scored alone
    text = (root / "planner" / "presets" / "capture_paths.yaml").read_text(encoding="utf-8")
    fitted = text + "".join((root / p).read_text(encoding="utf-8") for p in (
        "planner/presets/training_throughput.yaml", "datasets_meta/components.yaml"))
    for r in rows.values():
        thread = re.match(r"https://github.com/[^/]+/[^/]+/(?:issues|pull)/(\d+)$", r["url"])
        if thread is None:          # a file of a pipeline's repository at a commit (the maintainers' timed examples)
            path = re.match(r"https://github.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/(\S+)$", r["url"]).group(1)
            assert path not in fitted and r["scored"], r["url"]
            continue
        number = thread.group(1)
        assert f"#{number}" not in text and f"issues/{number}" not in text and f"pull/{number}" not in text
        assert (f"#{number}" in fitted) == (not r["scored"]), r["url"]
    assert {k for k, r in rows.items() if not r["scored"]} == {"specforge37-llama8b-sharegpt"}
    # the maintainers' two timed 5K examples (server start + generation), on 2 H100s as 2 replicas of one GPU
    eg = rows["speculators-eagle3-ultrachat-5k"]
    assert eg["measured"] == 0.0564 and abs(eg["measured"] * 3600 - (60 + 143)) < 0.5
    assert eg["path"] == "vllm-extract" and "2 x 1 (tensor)" in eg["setup"]
    assert rows["speculators-peagle-sharegpt-5k"]["measured"] == 0.0894     # (82 + 240) s / 3600
    scored = [r for r in rows.values() if r["scored"]]
    assert f"capture reports: {sum(r['inside'] for r in scored)}/{len(scored)} scored inside" in \
        f.capture_markdown(list(rows.values()))
    # README shows the table as printed
    assert f.capture_markdown(list(rows.values())) in (root / "README.md").read_text(encoding="utf-8")


def test_specforges_path_is_the_model_it_was_calibrated_on():
    # sglang-server at efficiency 1, overlapped single writes: the capture is the longer of the tokens at the
    # calibrated prefill on every GPU and the writes at the disk's rate, as before issue 33
    p = plan(Scenario(layout="specforge-eagle3"))
    e = p.extraction
    assert (e.capture_path, e.capture_split, e.tp_per_replica) == ("sglang-server", "tensor", e.tensor_parallel)
    gpu = p.tokens / (e.prefill_tokens_per_s_per_gpu * e.gpus_used) / 3600
    disk = p.storage_bytes_compressed / p.nodes.capture_write_bytes_per_s / 3600
    assert e.capture_hours == pytest.approx(max(gpu, disk), rel=1e-12)
