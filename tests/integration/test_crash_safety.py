"""Nothing lost: a profile killed mid-write leaves the previous user catalog readable; the shipped
catalog is never written; the catalog database is swapped in whole."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import duckdb
import pytest

from planner import default_scenario, plan
from planner.catalog.paths import SHIPPED_CATALOG
from planner.catalog.stats import get_catalog
from planner.cli.main import main
from tests.helpers import ROOT


def _profile_proc(path, name, home, fault=None):
    env = dict(os.environ, PLANNER_HOME=str(home))
    if fault:
        env["PLANNER_FAULT"] = fault
    return subprocess.Popen([sys.executable, "-m", "planner", "profile", str(path), "--name", name, "--quiet"],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _write(path, n, text="hello"):
    with open(path, "w") as fh:
        for i in range(n):
            fh.write(json.dumps({"instruction": f"{text} {i}", "output": "x" * (i % 50)}) + "\n")


def test_sigkill_before_the_swap_leaves_the_previous_catalog(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("PLANNER_HOME", str(home))
    first = tmp_path / "first.jsonl"
    _write(first, 20)
    assert _profile_proc(first, "first", home).wait(60) == 0
    catalog_file = home / "user_catalog.json"
    before = catalog_file.read_bytes()
    second = tmp_path / "second.jsonl"
    _write(second, 50)
    proc = _profile_proc(second, "second", home, fault="before_replace")
    deadline = time.time() + 60
    line = ""
    while "FAULT-POINT" not in line and time.time() < deadline:
        line = proc.stderr.readline()
    assert "FAULT-POINT before_replace" in line
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    # the temp file is left behind, the catalog is the previous one, whole and readable
    assert catalog_file.read_bytes() == before
    data = json.loads(catalog_file.read_text())
    assert [c["id"] for c in data["components"]] == ["first"]
    cat = get_catalog()
    assert "first" in cat.components and "second" not in cat.components
    assert plan(default_scenario().with_changes(mix=[{"id": "first", "rows": 20}])).conversations == 20


def test_sigkill_at_random_moments_never_corrupts(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("PLANNER_HOME", str(home))
    big = tmp_path / "big.jsonl"
    _write(big, 60_000)
    # the base profile through main() in this process (the same CLI path; the kills below need processes)
    assert main(["profile", str(big), "--name", "base", "--quiet"]) == 0
    for delay in (0.3, 0.6, 0.9, 1.2, 1.5):
        proc = _profile_proc(big, "again", home)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        data = json.loads((home / "user_catalog.json").read_text())   # always valid JSON
        assert "base" in [c["id"] for c in data["components"]]
    assert "base" in get_catalog().components


def test_the_shipped_catalog_is_never_written(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    digest = hashlib.sha256(SHIPPED_CATALOG.read_bytes()).hexdigest()
    mtime = SHIPPED_CATALOG.stat().st_mtime_ns
    data = tmp_path / "d.jsonl"
    _write(data, 10)
    from planner.catalog.profile import profile_file
    profile_file(data, "mine")
    get_catalog()
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.run()
    at.session_state["w_tab"] = "Export / import / profile"       # the profile panel is drawn while open
    at.run()
    at.file_uploader(key="w_profile_file").set_value(("u.jsonl", data.read_bytes(), "application/jsonl")).run()
    at.text_input(key="w_profile_name").input("uploaded").run()
    at.button(key="w_profile_go").click().run()
    assert not at.exception
    assert hashlib.sha256(SHIPPED_CATALOG.read_bytes()).hexdigest() == digest
    assert SHIPPED_CATALOG.stat().st_mtime_ns == mtime
    with pytest.raises(duckdb.Error):
        get_catalog().cursor().execute("INSERT INTO component_overlaps VALUES ('a','b',1,'x','y')")


def test_a_corrupt_user_catalog_does_not_take_the_shipped_one_down(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PLANNER_HOME", str(home))
    (home / "user_catalog.json").write_text("{not json")
    cat = get_catalog()
    assert len([c for c in cat.components.values() if c.in_default_mix]) == 10
    # kept aside, byte for byte, and named in the warning, so the next profile cannot overwrite it
    aside = list(home.glob("user_catalog.corrupt-*.json"))
    assert len(aside) == 1 and aside[0].read_text() == "{not json"
    assert not (home / "user_catalog.json").exists()
    assert cat.user_catalog_error and aside[0].name in cat.user_catalog_error
    assert "not valid JSON" in cat.user_catalog_error
