"""Issue 21, third-party files third round: each class refused in one line (or its documented
fallback), nothing written or replaced, memory and time bounded (subprocesses under RLIMIT_AS and a
timeout where a bound is the point)."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from planner.catalog.profile import profile_file
from planner.cli.main import main
from planner.export.manifest import build_manifest, dump_manifest
from planner.scenario import Scenario
from tests.app.mix_table_util import mix_frame
from tests.helpers import ROOT

resource = pytest.importorskip("resource")
LIMIT = 2**30


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def limited_cli(*args, home, timeout=60, env=None, **kw):
    """The CLI in a subprocess under a 1 GiB address-space limit and a timeout."""
    full = dict(os.environ, PLANNER_HOME=str(home), **(env or {}))
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True, cwd=ROOT,
                          env=full, preexec_fn=_limited, timeout=timeout, **kw)


def one_line(err: str, *needles: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("planner: error: "), err[-800:]
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def refused_in_process(capsys, *args, needles=()):
    code = main(list(args))
    err = capsys.readouterr().err
    assert code == 2, err
    return one_line(err, *needles)


def snapshot(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file() and "home" not in p.parts}


# ---------------------------------------------------------------- materialize never overwrites user data
@pytest.fixture()
def mixdir(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"instruction": f"q {i}", "output": f"a {i}"}) + "\n" for i in range(6)))
    profile_file(data, "mine")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(dump_manifest(build_manifest(Scenario(mix=[{"id": "mine", "rows": 4, "selection": "first"}]))))
    return tmp_path, manifest


def test_a_users_sharegpt_file_is_not_replaced(mixdir, capsys):
    # the standard ShareGPT row {"id", "conversations"} was taken for one materialize wrote
    folder, manifest = mixdir
    user = folder / "sharegpt.jsonl"
    user.write_text("".join(json.dumps({"id": f"r{i}", "conversations": [{"from": "human", "value": "hi"},
                                                                         {"from": "gpt", "value": "yo"}]}) + "\n"
                            for i in range(3)))
    before = snapshot(folder)
    refused_in_process(capsys, "materialize", str(manifest), "--out", str(user), needles=("--out", "materialized_by"))
    assert snapshot(folder) == before
    # its own output carries the mark on every row and is replaced without --force
    out = folder / "mix.jsonl"
    assert main(["materialize", str(manifest), "--out", str(out)]) == 0
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 4 and all(r["materialized_by"] == "drafter-planner" for r in rows)
    assert main(["materialize", str(manifest), "--out", str(out)]) == 0


@pytest.mark.parametrize("spelling", ["directory", "glob"])
def test_shards_never_overwrite_the_shards_they_read(mixdir, capsys, spelling):
    # shards materialize wrote (so marked), profiled as a directory or a glob: the next --shards run
    # whose outputs are those very files is refused, every file of the input counting as an input
    folder, manifest = mixdir
    shards = folder / "shards"
    shards.mkdir()
    assert main(["materialize", str(manifest), "--out", str(shards / "mix.jsonl"), "--shards", "2"]) == 0
    source = str(shards) if spelling == "directory" else str(shards / "mix-*.jsonl")
    profile_file(source, "again")
    m2 = folder / "m2.yaml"
    m2.write_text(dump_manifest(build_manifest(Scenario(mix=[{"id": "again", "rows": 4, "selection": "first"}]))))
    capsys.readouterr()
    before = snapshot(folder)
    refused_in_process(capsys, "materialize", str(m2), "--out", str(shards / "mix.jsonl"), "--shards", "2",
                       needles=("--out", "also an input"))
    assert snapshot(folder) == before


def test_sigterm_leaves_no_temp_file(mixdir):
    # scancel / timeout / systemd send SIGTERM: the temp file beside --out is removed on the way out.
    # PLANNER_FAULT parks materialize while its temp file is open (user_catalog._fault_point)
    folder, manifest = mixdir
    out = folder / "out" / "mix.jsonl"
    out.parent.mkdir()
    p = subprocess.Popen([sys.executable, "-m", "planner", "materialize", str(manifest), "--out", str(out)],
                         env=dict(os.environ, PLANNER_FAULT="materialize-writing"), cwd=ROOT, stderr=subprocess.PIPE,
                         text=True)
    try:
        assert p.stderr.readline().startswith("FAULT-POINT materialize-writing")
        assert [f.name.endswith(".tmp") for f in out.parent.iterdir()] == [True]
        p.send_signal(signal.SIGTERM)
        err = p.communicate(timeout=30)[1]
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 143, err[-500:]
    assert err.strip().splitlines() == ["planner: terminated; nothing was written"]
    assert list(out.parent.iterdir()) == []


# ---------------------------------------------------------------- old links and manifests
def _link(version: str, obj) -> str:
    import base64
    import zlib
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return f"{version}." + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


OLD_LINKS = {
    # a v2 link of ~75 characters whose custom model has 10^8 layers: dflash_layers would build them all
    "layers": _link("v2", {"model": "custom", "custom_model": {"num_layers": 10**8}, "layout": "speculators-dflash"}),
    "layer_count_text": _link("v2", {"layout": "speculators-dflash", "layer_count": "abc"}),
    "layer_count_float": _link("v2", {"layout": "speculators-dflash", "layer_count": 2.5}),
    "model_list": _link("v2", {"model": [], "layout": "speculators-dflash"}),
    "gpu_list": _link("v3", {"extraction_gpu": [], "throughput": {"mode": "calibrated"}}),
    "gpus_4000_digits": _link("v4", {"extraction_gpus": int("9" * 4000)}),
    "superscript_version": "v\u00b2." + _link("v2", {}).partition(".")[2],
}


def test_old_links_are_refused_in_one_message_within_memory_and_time(tmp_path):
    # every hostile old link decodes to one ShareError in a subprocess held to 1 GiB and 60 s
    # (today: TypeError / ValueError / OverflowError escape, and the 10^8-layer link eats memory)
    code = ("import json, sys\nfrom planner.export.share import ShareError, decode\nout = {}\n"
            "for k, v in json.loads(sys.stdin.read()).items():\n"
            "    try:\n        decode(v); out[k] = 'accepted'\n"
            "    except ShareError as e:\n        out[k] = 'refused: ' + str(e)\n"
            "    except BaseException as e:\n        out[k] = 'crash: ' + type(e).__name__\n"
            "print(json.dumps(out))\n")
    r = subprocess.run([sys.executable, "-c", code], input=json.dumps(OLD_LINKS), capture_output=True, text=True,
                       cwd=ROOT, env=dict(os.environ, PLANNER_HOME=str(tmp_path)), preexec_fn=_limited, timeout=60)
    assert r.returncode == 0, r.stderr[-800:]
    got = json.loads(r.stdout)
    for k, v in got.items():
        assert v.startswith("refused: ") and "\n" not in v, (k, v)
    assert "num_layers" in got["layers"] and "1024" in got["layers"]
    assert "layer_count" in got["layer_count_text"] and "layer_count" in got["layer_count_float"]
    assert "scenario.model" in got["model_list"] and "extraction_gpu" in got["gpu_list"]


def test_an_old_link_is_one_warning_on_the_page(tmp_path, monkeypatch):
    # was: "Something went wrong" on every rerun
    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    app.query_params["s"] = OLD_LINKS["layer_count_text"]
    app.run()
    assert not app.exception, app.exception
    warnings = [w.value for w in app.warning if "could not be used" in w.value]
    assert len(warnings) == 1 and "layer\\_count" in warnings[0], [w.value for w in app.warning]
    assert not [e for e in app.error if "went wrong" in e.value]


def test_an_old_manifest_with_a_bad_field_is_one_line(mixdir, capsys):
    import yaml
    folder, manifest = mixdir
    obj = yaml.safe_load(manifest.read_text())
    obj["schema_version"] = 2
    obj["scenario"].update(layout="speculators-dflash", layers=None, layer_count="abc")
    bad = folder / "old.yaml"
    bad.write_text(yaml.safe_dump(obj))
    refused_in_process(capsys, "estimate", "--manifest", str(bad), needles=("layer_count", "'abc'"))


# ---------------------------------------------------------------- argument injection into exported commands
def _custom_manifest(folder, hf_id):
    import yaml

    from planner.presets.specs import model_presets
    spec = next(iter(model_presets().values()))
    custom = spec.model_dump(mode="json") | {"id": "custom", "name": "mine", "hf_id": "org/model"}
    m = build_manifest(Scenario(model="custom", custom_model=custom, mix=[{"id": "openorca", "rows": 100}]))
    obj = yaml.safe_load(dump_manifest(m))
    obj["scenario"]["custom_model"]["hf_id"] = hf_id
    path = folder / "custom.yaml"
    path.write_text(yaml.safe_dump(obj, sort_keys=False))
    return path


@pytest.mark.parametrize("fmt", ["speculators", "specforge", "modelopt", "nemo-automodel", "slurm"])
def test_a_flag_as_the_model_path_is_refused(tmp_path, capsys, monkeypatch, fmt):
    # quoting stops shell injection, not argument injection: "--trust-remote-code" passed the local
    # path rule and landed bare where --model's value belongs
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    path = _custom_manifest(tmp_path, "--trust-remote-code")
    before = snapshot(tmp_path)
    how = ["--format", "speculators", "--scheduler", "slurm", "--out", str(tmp_path / "job.sh")] if fmt == "slurm" \
        else ["--format", fmt]
    refused_in_process(capsys, "export", str(path), *how, needles=("hf_id", "--trust-remote-code"))
    assert snapshot(tmp_path) == before
    # a local path is still a path: written with ./ it is accepted and lands as a value
    ok = _custom_manifest(tmp_path, "./-models/mine")
    assert main(["export", str(ok), *how]) == 0
    text = (tmp_path / "job.sh").read_text() if fmt == "slurm" else capsys.readouterr().out
    assert "./-models/mine" in text


# ---------------------------------------------------------------- chat templates and huge lines
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")
TEMPLATES = {
    # two nested range(100000): 10^10 iterations with no output
    "time": "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}" + CHATML,
    # 10^8 characters: HF tokenizers aborted the process (SIGABRT) on it
    "output": "{{ 'x' * 10**8 }}" + CHATML,
    # a list doubled 40 times
    "memory": "{% set ns = namespace(l=[1]) %}{% for i in range(40) %}{% set ns.l = ns.l + ns.l %}{% endfor %}"
              + CHATML,
    # renders, but drops the contents: the cause is named, not "refused their roles"
    "drops": "{% for m in messages %}<|im_start|>{{ m['role'] }}<|im_end|>\n{% endfor %}",
    "fails": "{{ messages[0]['content'] | int(1, 2, 3, 4) }}" + CHATML,
    # 5,000 words of its own a message: within the output budget, but not the data's tokens
    "inflates": "{% for m in messages %}{{ 'alpha ' * 5000 }}{% endfor %}" + CHATML,
    # a gigabyte string: over the renderer's memory limit
    "gigabyte": "{{ 'x' * 10**9 }}" + CHATML,
}
WHY = {"time": "over 1.5 s", "output": "character budget", "memory": "memory limit", "drops": "leaves out",
       "fails": "failed to render (TypeError", "gigabyte": "memory limit",
       "inflates": "adds 5,003 tokens of its own to one message"}


def _template_case(tmp_path, kind):
    from tests.unit.planner.catalog.test_sampling import _word_tokenizer
    tok = _word_tokenizer(tmp_path / "tk", {"chat_template": TEMPLATES[kind]})
    data = tmp_path / "c.jsonl"
    data.write_text(json.dumps({"conversations": [{"from": "human", "value": "alpha beta"},
                                                  {"from": "gpt", "value": "gamma"}]}) + "\n")
    return tok, data


@pytest.mark.parametrize("kind", ["time", "output"])
def test_a_hostile_chat_template_is_bounded_and_named(tmp_path, kind):
    # through the CLI under 1 GiB: a hang, or 10^8 characters handed to the tokenizer (SIGABRT today)
    tok, data = _template_case(tmp_path, kind)
    start = time.monotonic()
    r = limited_cli("profile", str(data), "--name", "t", "--tokenizer", tok, home=tmp_path / "home", timeout=60,
                    env={"PLANNER_TEMPLATE_SECONDS": "1.5" if kind == "time" else "20",
                         "PLANNER_TEMPLATE_MEMORY_MB": "512"})
    assert time.monotonic() - start < 30
    assert r.returncode == 0, r.stderr[-800:]          # the documented fallback: the flat estimate, named
    line = next(x for x in r.stdout.splitlines() if "counted with the 4-token estimate" in x)
    assert line.startswith("1 conversation(s)") and WHY[kind] in line, r.stdout
    # contents 2 + 1 words, and the flat 4 tokens a message
    assert "mean 11 tokens" in r.stdout, r.stdout


@pytest.mark.parametrize("kind", ["memory", "gigabyte", "drops", "fails", "inflates"])
def test_a_template_fallback_names_its_cause(tmp_path, monkeypatch, kind):
    # the bounds live in the renderer's own process, so these run in this one
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PLANNER_TEMPLATE_MEMORY_MB", "256")
    tok, data = _template_case(tmp_path, kind)
    r = profile_file(data, "t", tokenizer=tok)
    assert r.template_fallbacks == 1 and len(r.fallback_reasons) == 1, r.fallback_reasons
    assert WHY[kind] in next(iter(r.fallback_reasons)), r.fallback_reasons
    assert r.component["mean_tokens"] == pytest.approx(2 + 1 + 2 * 4)


def test_huge_lines_with_a_real_tokenizer_are_counted_in_bounded_batches(tmp_path):
    # four lines of 2 MiB: one encode_batch of them needed over 640 MiB and aborted (Rust alloc
    # error); a call now takes at most PLANNER_TOKENIZE_CHARS characters
    from tests.unit.planner.catalog.test_sampling import _word_tokenizer
    tok = _word_tokenizer(tmp_path / "tk", None)
    words = 2**21 // 11
    data = tmp_path / "huge.jsonl"
    data.write_text((json.dumps({"instruction": "alpha beta " * words, "output": "gamma"}) + "\n") * 4)
    env = dict(os.environ, PLANNER_HOME=str(tmp_path / "home"), PLANNER_TOKENIZE_CHARS=str(2**20))

    def confined():
        resource.setrlimit(resource.RLIMIT_AS, (640 * 2**20, 640 * 2**20))
    r = subprocess.run([sys.executable, "-m", "planner", "profile", str(data), "--name", "huge", "--tokenizer", tok],
                       capture_output=True, text=True, cwd=ROOT, env=env, preexec_fn=confined, timeout=60)
    assert r.returncode == 0, r.stderr[-500:]
    # one token a word, cut only at spaces: 2 x 190,650 words + "gamma" + 4 template tokens x 2 messages
    assert f"mean {2 * words + 1 + 8:,} tokens" in r.stdout, r.stdout


# ---------------------------------------------------------------- Parquet decompression bombs
def _bomb(path, nested: bool, rows: int = 3000):
    """~1 KB of Parquet holding `rows` x 1 MB of text (one dictionary entry, referenced by every row)."""
    import numpy as np
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq
    k = 2 * rows if nested else rows
    big = pa.DictionaryArray.from_arrays(pa.array(np.zeros(k, dtype="int32")), pa.array(["x" * 10**6]))
    if nested:
        turns = pa.StructArray.from_arrays([pa.array(["human", "gpt"] * rows), big], names=["from", "value"])
        table = pa.table({"conversations": pa.ListArray.from_arrays(
            pa.array(np.arange(0, k + 1, 2, dtype="int32")), turns)})
    else:
        table = pa.table({"instruction": big, "output": pa.array(["a"] * rows)})
    pq.write_table(table, path, compression="zstd")
    assert path.stat().st_size < 2000
    return path


@pytest.mark.parametrize("nested, sample", [(False, False), (True, True)], ids=["flat-scan", "sharegpt-sample"])
def test_a_parquet_bomb_is_refused_in_one_line(tmp_path, nested, sample):
    # 1 KB that expands to 3 GB of text: refused in one line within 1 GiB, nothing registered
    bomb = _bomb(tmp_path / "bomb.parquet", nested)
    r = limited_cli("profile", str(bomb), "--name", "bomb", *(["--sample", "100"] if sample else []),
                    home=tmp_path / "home", timeout=60)
    assert r.returncode == 2, r.stderr[-800:]
    one_line(r.stderr.split("\r")[-1].split("\n", 1)[-1] if "\r" in r.stderr else r.stderr,
             "bomb.parquet", "compression bomb")
    assert not (tmp_path / "home" / "user_catalog.json").exists()


def test_a_parquet_file_within_the_cap_still_profiles(tmp_path, monkeypatch, capsys):
    # the cap is on expansion, not on Parquet: 3 rows x 1 MB in ~1 KB (3,000,000+ bytes of text, far over
    # 100x the file's size) pass once the floor allows them: floor 4,000,000 bytes, the file at 75% of it
    # (as 30 rows under a 40 MB floor were; 3 MB of text profiles in a tenth of the time 30 MB took).
    # In this process (no Python start, no second catalog build): the floor is the module's
    # MIN_EXPANDED_BYTES, which _check_expansion reads at each call (PLANNER_MIN_EXPANDED_BYTES sets it at import)
    from planner.catalog import formats
    bomb = _bomb(tmp_path / "ok.parquet", False, rows=3)
    assert 100 * bomb.stat().st_size < 3 * 10**6 < 4 * 10**6     # over the ratio's cap, under the floor
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(formats, "MIN_EXPANDED_BYTES", 4 * 10**6)
    code = main(["profile", str(bomb), "--name", "ok"])
    out, err = capsys.readouterr()
    assert code == 0, err[-800:]
    assert "ok: 3 conversations" in out


# ---------------------------------------------------------------- a c= link whose pinned scenario cannot be planned
def test_a_link_pinning_an_unplannable_scenario_warns_once_and_does_not_pin(tmp_path, monkeypatch):
    # someone pinned a scenario with their own upload and shared the link: here that id is unknown
    from streamlit.testing.v1 import AppTest

    from planner.export.share import encode, encode_set
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    theirs = Scenario(mix=[{"id": "their-upload", "rows": 10}])
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    app.query_params["s"] = encode(Scenario())
    app.query_params["c"] = encode_set(theirs, {"theirs": theirs, "two gpus": Scenario(extraction_gpus=2)})
    app.run()
    assert not app.exception, app.exception
    warnings = [w.value for w in app.warning if "cannot be planned here" in w.value]
    assert len(warnings) == 1 and "the pinned scenario" in warnings[0] and "their\\-upload" in warnings[0]
    assert "_pinned" not in app.session_state or app.session_state["_pinned"] is None
    assert list(app.session_state["_saved"]) == ["two gpus"]
    app.run()                                 # the next run is a normal page, without the warning
    assert not app.exception and not [w for w in app.warning if "cannot be planned here" in w.value]


# ---------------------------------------------------------------- dataset directories and records
def test_links_and_loops_count_each_file_once_and_subdirectories_are_skipped(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    d = tmp_path / "d"
    d.mkdir()
    (d / "a.jsonl").write_text("".join(json.dumps({"instruction": f"q{i}", "output": "a"}) + "\n" for i in range(3)))
    os.symlink(d / "a.jsonl", d / "link.jsonl")          # the same file again, by symlink
    os.link(d / "a.jsonl", d / "hard.jsonl")             # and by hard link
    (d / "sub.jsonl").mkdir()                            # a directory named like a data file
    os.symlink(d, d / "loop")                            # a loop a recursive glob would walk 40 levels deep
    # 3 rows, once: the directory, and a recursive glob through the loop
    assert main(["profile", str(d), "--name", "dir"]) == 0
    assert "dir: 3 conversations" in capsys.readouterr().out
    assert main(["profile", str(d / "**" / "*.jsonl"), "--name", "deep"]) == 0
    assert "deep: 3 conversations" in capsys.readouterr().out


def test_integer_and_nan_contents_are_bad_lines(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    f = tmp_path / "n.jsonl"
    f.write_text('{"instruction": "q", "output": "fine"}\n{"instruction": "q", "output": 42}\n'
                 '{"instruction": "q", "output": NaN}\n'
                 '{"conversations": [{"from": "human", "value": 7}, {"from": "gpt", "value": "x"}]}\n')
    assert main(["profile", str(f), "--name", "nums"]) == 0
    out = capsys.readouterr().out
    assert "nums: 1 conversations" in out and "skipped 3 bad line(s)" in out and "int (42), not text" in out


# ---------------------------------------------------------------- Compare names and axes
@pytest.mark.parametrize("name, needle", [
    ("pinned\u200b", "invisible"), ("\ufeffa", "invisible"), ("a\u202eb", "invisible"), ("x\u2066y", "invisible"),
    ("a - pinned", "difference columns"), ("B - Current", "difference columns"),
])
def test_saved_names_refuse_format_characters_and_column_collisions(name, needle):
    from planner.export.share import ShareError, decode_set, encode_set, saved_name_problem
    assert needle in saved_name_problem(name)
    with pytest.raises(ShareError, match=needle):          # a link cannot bring one either
        decode_set(encode_set(None, {name: Scenario()}))
    assert saved_name_problem("a-pinned") is None and saved_name_problem("café ☕") is None


def test_ids_and_names_are_plotted_as_categories():
    # "2024-01-01" or "1e3" turned plotly's axis temporal or numeric and dropped "current" and "pinned"
    from drafter_dashboard import figures
    from planner.planning import plan
    p = plan(Scenario())
    for fig in (figures.storage_by_component(p), figures.rows_vs_bytes(p),
                figures.cost_breakdown({"current": p, "2024-01-01": p, "1e3": p})):
        assert fig.layout.xaxis.type == "category"


# ---------------------------------------------------------------- received manifests and the catalog
def test_a_shipped_component_keeps_the_catalogs_hub_source(mixdir, capsys):
    import yaml
    folder, _ = mixdir
    m = build_manifest(Scenario(mix=[{"id": "openorca", "rows": 100}]))
    obj = yaml.safe_load(dump_manifest(m))
    obj["components"][0]["hf_repo"] = "evil-org/not-openorca"
    path = folder / "evil.yaml"
    path.write_text(yaml.safe_dump(obj, sort_keys=False))
    assert main(["export", str(path), "--format", "speculators"]) == 0
    out, err = capsys.readouterr()
    assert "evil-org" not in out and "hf:Open-Orca/OpenOrca" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("planner: warning: ") and "evil-org/not-openorca" in lines[0]


def test_a_manifest_is_checked_against_the_sessions_catalog(tmp_path, monkeypatch):
    # the dashboard re-imports what it exported with the session's own upload, and an unknown id's
    # message lists the session's ids, never the server's shared user catalog
    from planner.catalog.stats import get_catalog
    from planner.export.manifest import ManifestError, parse_manifest
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"instruction": f"q{i}", "output": "a"}) + "\n" for i in range(4)))
    profile_file(data, "other_visitor_secret")                    # the server's shared user catalog
    session_file = tmp_path / "session" / "user_catalog.json"
    session_file.parent.mkdir()
    profile_file(data, "my_upload", user_catalog=session_file)
    session = get_catalog(user_catalog=session_file)
    text = dump_manifest(build_manifest(Scenario(mix=[{"id": "my_upload", "rows": 4}]), catalog=session,
                                        local_paths=False))
    assert parse_manifest(text, "m.yaml", catalog=session).scenario.mix[0].id == "my_upload"
    with pytest.raises(ManifestError) as e:
        parse_manifest(text.replace("my_upload", "nope"), "m.yaml", catalog=session)
    assert "nope" in str(e.value) and "other_visitor_secret" not in str(e.value)


# ---------------------------------------------------------------- a shared custom model keeps its hub id and name
def test_a_shared_custom_model_keeps_its_hf_id_and_name(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from planner.export.share import decode, encode
    from tests.app.test_hostile_input import CUSTOM
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    sent = CUSTOM.model_copy(update={"custom_model": CUSTOM.custom_model.model_copy(
        update={"hf_id": "my-org/my-model", "name": "My model"})})
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    app.query_params["s"] = encode(sent)
    app.run()
    assert not app.exception, app.exception
    got = decode(app.query_params["s"]).custom_model
    assert (got.hf_id, got.name) == ("my-org/my-model", "My model")
    app.number_input(key="w_cm_hidden").set_value(4096).run()      # an edit of another field keeps them too
    got = decode(app.query_params["s"]).custom_model
    assert (got.hidden_size, got.hf_id, got.name) == (4096, "my-org/my-model", "My model")


# ---------------------------------------------------------------- the finding names the KV cache, not the weights
def test_a_kv_cache_that_does_not_fit_is_named_as_such():
    from planner.errors import PlannerInputError
    from planner.planning import plan
    from tests.app.test_hostile_input import CUSTOM
    d = CUSTOM.model_dump()
    d["custom_model"].update(num_layers=1024, full_attention_layers=1024, linear_attention_layers=0,
                             num_kv_heads=128, head_dim=512, linear_state_bytes_per_layer=0)
    d["custom_gpu"].update(memory_gb=4)
    d["mix"] = [{"id": "openorca", "rows": 100}]
    with pytest.raises(PlannerInputError) as e:
        plan(Scenario.model_validate(d))
    text = str(e.value)
    # K and V x 1024 layers x 128 heads x 512 dims x 2 bytes (bf16) = 268,435,456 bytes a token;
    # 9e9 parameters x 2 bytes = 18 GB of weights, which 64 x 4 GB would hold
    assert "KV cache" in text and "268,435,456 bytes a token in bf16" in text and "18 GB of weights" in text
    assert "weights (" not in text and "do not fit" not in text


# ---------------------------------------------------------------- dashboard uploads
GOOD = b'{"conversations": [{"from": "human", "value": "abcd"}, {"from": "gpt", "value": "efgh"}]}\n' * 3


def test_a_replace_tick_confirms_one_id_only(tmp_path, monkeypatch):
    from tests.app.test_hostile_input import _app, _profile
    from tests.app.test_wiring import open_tab
    app = _app(tmp_path, monkeypatch)
    _profile(app, "one", GOOD)
    _profile(app, "two", GOOD)
    _profile(app, "one", GOOD * 2, "again.jsonl")
    app.checkbox(key="w_profile_replace").check().run()
    app.text_input(key="w_profile_name").input("two").run()          # the tick was for 'one'
    assert not app.checkbox(key="w_profile_replace").value
    app.button(key="w_profile_go").click().run()
    assert any("already profiled" in e.value for e in app.error)
    open_tab(app, "Mix")
    assert mix_frame(app).set_index("id").loc["two", "rows"] == 3      # not replaced


def test_a_sessions_uploads_go_when_its_state_goes(tmp_path, monkeypatch):
    import gc

    from tests.app.test_hostile_input import _app, _profile
    app = _app(tmp_path, monkeypatch)
    _profile(app, "mine", GOOD)
    sessions = tmp_path / "home" / "sessions"
    assert len(list(sessions.glob("*/uploads/mine.jsonl"))) == 1
    del app
    gc.collect()
    assert list(sessions.glob("*")) == []


# ---------------------------------------------------------------- low: exports, I/O errors, catalog messages
def test_bidi_controls_are_escaped_in_a_yaml_export(mixdir, capsys):
    import yaml
    folder, manifest = mixdir
    obj = yaml.safe_load(manifest.read_text())
    obj["components"][0]["name"] = "safe\u202etxt.exe"                  # shows as "safeexe.txt"
    obj["notes"] = ["zero\u200bwidth \ufeff"]
    path = folder / "bidi.yaml"
    path.write_text(yaml.safe_dump(obj, allow_unicode=True, sort_keys=False))
    assert main(["export", str(path), "--format", "yaml"]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\u202e\u200b\ufeff") and "\\u202E" in out
    assert yaml.safe_load(out)["components"][0]["name"] == "safe\u202etxt.exe"     # the same value, escaped


def test_an_io_error_names_the_file(mixdir, capsys, monkeypatch):
    import errno
    folder, manifest = mixdir
    out = folder / "mix.jsonl"

    def failing_fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "fsync", failing_fsync)
    line = refused_in_process(capsys, "materialize", str(manifest), "--out", str(out),
                              needles=("--out", "mix.jsonl", "No space left"))
    assert not out.exists() and not [p for p in folder.iterdir() if p.name.endswith(".tmp")], line


def test_a_catalog_error_names_the_field_at_fault(tmp_path, monkeypatch):
    from planner.catalog import user_catalog as uc
    from planner.errors import PlannerInputError
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"instruction": "q", "output": "a"}) + "\n")
    good = profile_file(data, "mine").component
    with pytest.raises(PlannerInputError) as e:
        uc.write_component(tmp_path / "u.json", dict(good, name="n" * 5000), replace=True)
    assert e.value.field == "profiled component 'mine': name" and "--name" not in str(e.value)


def test_a_parquet_bomb_upload_is_refused_on_the_page(tmp_path, monkeypatch):
    # the same bound behind the dashboard's uploader (its 200 MB cap passes a 1 KB file)
    from tests.app.test_hostile_input import _app
    from tests.app.test_wiring import open_tab
    bomb = _bomb(tmp_path / "bomb.parquet", False)
    app = _app(tmp_path, monkeypatch)
    open_tab(app, "Export / import / profile")                    # the profile panel is drawn while open
    app.file_uploader(key="w_profile_file").set_value(("bomb.parquet", bomb.read_bytes(),
                                                       "application/octet-stream")).run()
    app.text_input(key="w_profile_name").input("bomb").run()
    app.button(key="w_profile_go").click().run()
    assert not app.exception, app.exception
    errors = [e.value for e in app.error if "Not profiled" in e.value]
    assert len(errors) == 1 and "compression bomb" in errors[0] and "/sessions/" not in errors[0]
    # no part of a server path, however long pytest's temporary folder (a long path is shortened in the middle
    # by the error, which once let "/tmp/pytest-.../home/sessions/..." through under -n 0): the upload's name
    shown = errors[0].replace("\\", "")          # the notice escapes markdown
    assert "bomb.parquet" in shown and "pytest" not in shown and "/tmp" not in shown, shown
    assert list((tmp_path / "home" / "sessions").glob("*/uploads/*")) == []


def test_the_hub_script_marks_its_rows_too(mixdir, tmp_path):
    # rows the hub script appends carry the same mark: the whole file stays replaceable by materialize
    # (and one JSON schema for the datasets loader of speculators/SpecForge/Model-Optimizer)
    from tests.unit.planner.export.test_sharding import FAKE_DATASETS
    folder, _ = mixdir
    manifest = folder / "h.yaml"
    manifest.write_text(dump_manifest(build_manifest(Scenario(mix=[{"id": "openorca", "rows": 3},
                                                                   {"id": "mine", "rows": 2}]))))
    out, script = folder / "mix.jsonl", folder / "hub.py"
    assert main(["materialize", str(manifest), "--out", str(out), "--hub-script", str(script)]) == 0
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "datasets.py").write_text(FAKE_DATASETS)
    subprocess.run([sys.executable, str(script), "--out", str(out), "--append"], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(tmp_path / "fake")}, timeout=60)
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(rows) == 5 and {r["materialized_by"] for r in rows} == {"drafter-planner"}
    assert {tuple(sorted(r)) for r in rows} == {("conversation_id", "conversations", "id", "materialized_by")}
    assert main(["materialize", str(manifest), "--out", str(out)]) == 0      # its own file: replaced
