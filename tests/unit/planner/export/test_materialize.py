"""materialize: a received manifest never chooses which local file is read, and every output goes
through safe_io (nothing written or replaced on any refusal)."""
import contextlib
import io
import json
import os
import stat

import pytest
import yaml

from planner.catalog.profile import profile_file
from planner.cli.main import main
from planner.errors import PlannerInputError
from planner.export.manifest import build_manifest, dump_manifest, parse_manifest
from planner.export.materialize import materialize_local
from planner.scenario import Scenario
from tests.helpers import run_cli


@pytest.fixture()
def setup(tmp_path, monkeypatch):
    """A profiled file `mine` (questions 0..4), a secret file nobody profiled, a manifest for 3 rows."""
    home = tmp_path / "home"
    monkeypatch.setenv("PLANNER_HOME", str(home))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"instruction": f"question {i}", "output": f"answer {i}"}) + "\n"
                            for i in range(5)))
    secret = tmp_path / "secret.jsonl"
    secret.write_text(json.dumps({"instruction": "SECRET", "output": "s"}) + "\n")
    profile_file(data, "mine")
    manifest = tmp_path / "m.yaml"
    manifest.write_text(dump_manifest(build_manifest(Scenario(mix=[{"id": "mine", "rows": 3, "selection": "first"}]))))
    return tmp_path, data, secret, manifest


def edited(manifest, path, change):
    obj = yaml.safe_load(manifest.read_text())
    change(obj)
    path.write_text(yaml.safe_dump(obj, sort_keys=False))
    return path


def snapshot(folder):
    return {p.name: (p.read_bytes() if p.is_file() and not p.is_symlink() else os.readlink(p) if p.is_symlink()
                     else "dir") for p in folder.iterdir() if p.name != "home"}


def refused(args, field, folder, value=None, may_hang=False):
    """Run the CLI, expect exit 2 with one line naming `field` (and `value`), nothing changed. In this
    process (main(), a Python start less a call) unless the input `may_hang` (a FIFO): then a subprocess
    under a timeout, so a read that hangs fails the test instead of stopping the suite."""
    before = snapshot(folder)
    if may_hang:
        r = run_cli(*args, timeout=30)
        code, err = r.returncode, r.stderr
    else:
        with contextlib.redirect_stderr(io.StringIO()) as buf, contextlib.redirect_stdout(io.StringIO()):
            code = main(list(args))
        err = buf.getvalue()
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"planner: error: {field}: "), r.stderr
    if value is not None:
        assert repr(value) in lines[0]
    assert snapshot(folder) == before
    return lines[0]


def contents(path):
    return [json.loads(x)["conversations"][0]["content"] for x in path.read_text().splitlines()]


def test_profiled_rows_are_written_from_the_catalog_path(setup):
    folder, data, secret, manifest = setup
    out = folder / "mix.jsonl"
    r = run_cli("materialize", str(manifest), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert contents(out) == ["question 0", "question 1", "question 2"]
    assert stat.S_IMODE(out.stat().st_mode) == 0o666 & ~_umask()
    # a manifest that points `mine` at another file still reads the file profiled as `mine`
    evil = edited(manifest, folder / "evil.yaml", lambda o: o["components"][0].update(local_path=str(secret)))
    out2 = folder / "mix2.jsonl"
    assert run_cli("materialize", str(evil), "--out", str(out2)).returncode == 0
    assert contents(out2) == contents(out)


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_manifest_naming_an_unregistered_file_is_refused(setup):
    folder, data, secret, manifest = setup

    def add(o):
        extra = dict(o["components"][0], id="evil", name="evil", local_path=str(secret), rows_selected=1)
        o["components"].append(extra)
    evil = edited(manifest, folder / "evil.yaml", add)
    refused(["materialize", str(evil), "--out", str(folder / "mix.jsonl")], "components.evil.local_path", folder,
            str(secret))
    m = parse_manifest(evil.read_bytes())
    with pytest.raises(PlannerInputError, match="profiled"):
        materialize_local(m, folder / "mix.jsonl")
    assert not (folder / "mix.jsonl").exists()


def test_local_names_a_file_for_a_component(setup):
    folder, data, secret, manifest = setup
    out = folder / "mix.jsonl"
    r = run_cli("materialize", str(manifest), "--out", str(out), "--local", f"mine={secret}")
    assert r.returncode == 0, r.stderr
    assert contents(out) == ["SECRET"]      # 3 rows asked, the named file holds 1
    refused(["materialize", str(manifest), "--out", str(out), "--local", f"other={secret}"], "--local", folder)
    refused(["materialize", str(manifest), "--out", str(out), "--local", "mine"], "--local", folder, "mine")


def test_a_changed_profiled_file_is_refused(setup):
    folder, data, secret, manifest = setup
    out = folder / "mix.jsonl"
    # an earlier materialize
    previous = '{"id": "mine-1", "conversations": [], "materialized_by": "drafter-planner"}\n'
    out.write_text(previous)
    with open(data, "a") as fh:
        fh.write(json.dumps({"instruction": "added later", "output": "x"}) + "\n")
    line = refused(["materialize", str(manifest), "--out", str(out)], "components.mine.local_path", folder)
    assert "sha256" in line and out.read_text() == previous


def test_unknown_format_is_an_error_not_zero_rows(setup):
    folder, data, secret, manifest = setup
    weird = edited(manifest, folder / "weird.yaml", lambda o: o["components"][0].update(format="weird"))
    refused(["materialize", str(weird), "--out", str(folder / "mix.jsonl")], "components.0.format", folder,
            "weird")


@pytest.mark.parametrize("target", ["devnull", "symlink", "directory", "manifest", "input"])
def test_outputs_are_refused(setup, target):
    folder, data, secret, manifest = setup
    (folder / "dir").mkdir(exist_ok=True)
    os.symlink(folder / "elsewhere.jsonl", folder / "link.jsonl")
    out = {"devnull": "/dev/null", "symlink": str(folder / "link.jsonl"), "directory": str(folder / "dir"),
           "manifest": str(manifest), "input": str(data)}[target]
    refused(["materialize", str(manifest), "--out", out], "--out", folder, out)
    assert not (folder / "elsewhere.jsonl").exists()
    refused(["materialize", str(manifest), "--out", str(folder / "ok.jsonl"), "--hub-script", out],
            "--hub-script", folder, out)


def test_a_fifo_or_device_as_local_input_is_refused_without_hanging(setup):
    folder, data, secret, manifest = setup
    fifo = folder / "pipe.jsonl"
    os.mkfifo(fifo)
    line = refused(["materialize", str(manifest), "--out", str(folder / "mix.jsonl"), "--local", f"mine={fifo}"],
                   "--local", folder, str(fifo), may_hang=True)
    assert "FIFO" in line
    line = refused(["materialize", str(manifest), "--out", str(folder / "mix.jsonl"), "--local", "mine=/dev/zero"],
                   "--local", folder, "/dev/zero", may_hang=True)
    assert "character device" in line


def test_outputs_the_planner_did_not_write_are_not_replaced(setup):
    # "never overwrite what you did not create": an existing --out or --hub-script that materialize
    # did not write is refused (bytes unchanged) unless --force; its own earlier outputs are replaced
    folder, data, secret, manifest = setup
    notes = folder / "notes.jsonl"
    notes.write_bytes(b"my notes\n")
    refused(["materialize", str(manifest), "--out", str(notes)], "--out", folder, str(notes))
    script = folder / "tool.py"
    script.write_bytes(b"print('mine')\n")
    refused(["materialize", str(manifest), "--out", str(folder / "new.jsonl"), "--hub-script", str(script)],
            "--hub-script", folder, str(script))
    out = folder / "mix.jsonl"
    assert run_cli("materialize", str(manifest), "--out", str(out)).returncode == 0
    again = run_cli("materialize", str(manifest), "--out", str(out))          # its own file: replaced
    assert again.returncode == 0, again.stderr
    forced = run_cli("materialize", str(manifest), "--out", str(notes), "--force")
    assert forced.returncode == 0 and notes.read_bytes() != b"my notes\n"


# One record of each format the hub script meets, and records it must refuse as the profiler does.
HUB_RECORDS = [
    ({"conversations": [{"from": "human", "value": "q"}, {"from": "gpt", "value": "a"}], "system": "s",
      "tools": '[{"name": "get_time", "description": "the time of day now"}]'}, "auto"),
    ({"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                   {"role": "assistant", "content": "a", "tool_calls": [{"id": 1}]}],
      "tools": [{"function": {"name": "f", "description": "a description"}}]}, "openai"),
    ({"messages_json": json.dumps([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}])}, "auto"),
    ({"instruction": "do", "input": "this", "output": "done"}, "auto"),
    # glaive: the system's "SYSTEM: " prefix and the end-of-text marker are dropped (GLAIVE_SYSTEM,
    # GLAIVE_EOT): the hub script once lacked both and stopped with a NameError on glaive_fc
    ({"system": "SYSTEM: you call functions", "chat": "USER: time? ASSISTANT: <functioncall> {} <|endoftext|> "
      "FUNCTION RESPONSE: {\"t\": 1} ASSISTANT: one o'clock <|endoftext|>"}, "auto"),
    ({"chat": "USER: only a question"}, "glaive"),
    ({"messages": "not json"}, "openai"),
    ({"conversations": [{"from": "human", "value": "\ud800"}, {"from": "gpt", "value": "a"}]}, "sharegpt"),
    ({"instruction": "q", "output": 42}, "alpaca"),
    ({"x": 1}, "auto"),
    ({"chat": "USER: q ASSISTANT: a"}, "yaml"),
]


def test_the_hub_scripts_copy_of_to_turns_reads_every_format_as_the_profiler_does():
    from planner import default_scenario
    from planner.catalog import formats
    from planner.export.materialize import hub_script
    ns = {"__name__": "hub"}
    exec(hub_script(build_manifest(default_scenario())), ns)     # its definitions; main() is not run
    for record, fmt in HUB_RECORDS:
        try:
            want = formats.to_turns(record, fmt)
        except formats.RecordError as e:
            want = ("refused", str(e))
        try:
            got = ns["to_turns"](record, fmt)
        except ns["RecordError"] as e:
            got = ("refused", str(e))
        assert got == want, record
    # the glaive record as counted by hand: 4 turns, the system without its prefix, no end marker
    assert formats.to_turns(*HUB_RECORDS[4]) == [
        ("system", "you call functions"), ("user", "time?"), ("assistant", "<functioncall> {}"),
        ("tool", '{"t": 1}'), ("assistant", "one o'clock")]
