"""Hostile inputs under a memory limit (issue 10): each run is a CLI subprocess whose address space
is capped at 1 GiB (RLIMIT_AS), so reading a device, a huge or a sparse file whole, or recursing
without bound would kill it instead of passing; each must exit 2 with one line naming the input."""
import os
import sys

import pytest

from tests.helpers import ROOT

resource = pytest.importorskip("resource")
LIMIT = 2**30


def _limited():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def run(*args, tmp_path):
    import subprocess
    env = dict(os.environ, PLANNER_HOME=str(tmp_path / "home"))
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, preexec_fn=_limited, timeout=120)


@pytest.fixture
def inputs(tmp_path):
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    sparse = tmp_path / "sparse.yaml"          # 8 GiB of zeros on disk as a hole: st_size lies about nothing
    with open(sparse, "wb") as fh:
        fh.truncate(8 * 2**30)
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 900_000)
    return {"fifo": str(fifo), "sparse": str(sparse), "nested": str(nested)}


@pytest.mark.parametrize("args, needle", [
    (["estimate", "--manifest", "/dev/zero"], "character device"),
    (["export", "/dev/urandom", "--format", "json"], "character device"),
    (["profile", "/dev/zero", "--name", "z"], "character device"),
    (["estimate", "--manifest", "{fifo}"], "FIFO"),
    (["materialize", "{fifo}", "--out", "x.jsonl"], "FIFO"),
    (["estimate", "--manifest", "{sparse}"], "limit"),
    (["export", "{nested}", "--format", "yaml"], "nested.json"),
])
def test_refused_within_a_gib(args, needle, inputs, tmp_path):
    args = [a.format(**inputs) for a in args]
    r = run(*args, tmp_path=tmp_path)
    assert r.returncode == 2, r.stderr[-500:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("planner: error: ") and needle in lines[0], r.stderr[-500:]
    assert not (ROOT / "x.jsonl").exists()


def test_a_plan_runs_within_the_same_limit(tmp_path):
    # the limit is not what refuses the inputs above: a full plan of the default mix fits in it
    r = run("estimate", "--json", tmp_path=tmp_path)
    assert r.returncode == 0, r.stderr[-500:]
