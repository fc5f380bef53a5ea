"""Many processes profiling and reading one PLANNER_HOME at once: no DuckDB error, no lost
component, and old catalog builds removed only when nobody can be using them."""
import json
import os
import subprocess
import sys
import time

from planner.catalog import stats
from planner.cli.main import main
from tests.helpers import ROOT


def _spawn(args, home, module=True):
    cmd = [sys.executable, "-m", "planner", *args] if module else [sys.executable, "-c", *args]
    return subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PLANNER_HOME=str(home)))


# A reader that reopens the catalog whenever the user catalog changes, until told to stop: many
# more opens than one command makes, each racing the builds of the profiles.
LOOP_READER = """
import os, sys, time
from planner.catalog.stats import get_catalog
stop, deadline, opened = sys.argv[1], time.time() + 40, set()
while not os.path.exists(stop) and time.time() < deadline:
    opened.add(id(get_catalog()))
    time.sleep(0.005)
print(len(opened))
"""


def test_parallel_profiles_and_readers_lose_nothing(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home"
    stop = tmp_path / "stop"
    files = []
    for i in range(6):
        f = tmp_path / f"d{i}.jsonl"
        f.write_text("".join(json.dumps({"instruction": "q" * (i + 1), "output": "a"}) + "\n" for _ in range(5)))
        files.append(f)
    t0 = time.monotonic()
    readers = [_spawn([LOOP_READER, str(stop)], home, module=False) for _ in range(2)]
    readers += [_spawn(["components", "--json"], home) for _ in range(2)]
    profiles = [_spawn(["profile", str(f), "--name", f"set{i}", "--quiet"], home) for i, f in enumerate(files)]
    results = [(p.args[-4:], *p.communicate(timeout=60), p.returncode) for p in profiles]
    stop.touch()
    results += [(p.args[-2:], *p.communicate(timeout=60), p.returncode) for p in readers]
    for args, _out, err, rc in results:
        assert rc == 0 and "Traceback" not in err and "Error" not in err, (args, err[-2000:])
    for _args, out, _err, _rc in results[-2:]:
        ids = [c["id"] for c in json.loads(out)]   # a reader sees a whole catalog (some profiles or none)
        assert "openorca" in ids
    # the final listing after every process has ended: the same `components --json` through main() in
    # this process (no race left to run, so no Python start needed for it)
    monkeypatch.setenv("PLANNER_HOME", str(home))
    assert main(["components", "--json"]) == 0
    out, err = capsys.readouterr()
    assert {f"set{i}" for i in range(6)} <= {c["id"] for c in json.loads(out)}, err
    assert time.monotonic() - t0 < 45   # about 14 s on 2 loaded cores; a lock that never frees fails here
    # every build of this run is younger than the margin, so none was removed under a reader;
    # no temp file of a build is left behind
    assert list(home.glob(".catalog-*.tmp*")) == []


def test_only_builds_unused_for_the_margin_are_removed(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("PLANNER_HOME", str(home))
    old = home / "catalog-0000000000000000.duckdb"
    recent = home / "catalog-1111111111111111.duckdb"
    stale_tmp = home / ".catalog-2222222222222222.duckdb.abc.tmp"
    for f in (old, recent, stale_tmp):
        f.write_bytes(b"x")
    hour_and_a_bit = stats.CLEANUP_MARGIN_S + 60
    os.utime(old, (time.time() - hour_and_a_bit,) * 2)
    os.utime(stale_tmp, (time.time() - hour_and_a_bit,) * 2)
    os.utime(recent, (time.time() - stats.CLEANUP_MARGIN_S + 60,) * 2)   # a minute inside the margin
    cat = stats.open_catalog(home / "user_catalog.json")
    assert cat.path.exists() and cat.path.parent == home
    assert not old.exists() and not stale_tmp.exists()
    assert recent.exists()


def test_a_build_removed_behind_the_cache_is_built_again(tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("PLANNER_HOME", str(home))
    first = stats.open_catalog(home / "user_catalog.json")
    first.path.unlink()
    stats._OPEN_BY_PATH.clear()
    again = stats.open_catalog(home / "user_catalog.json")
    assert again.path == first.path and again.path.exists()
    assert again.components.keys() == first.components.keys()
