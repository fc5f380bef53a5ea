"""The exported Ray driver on a real local Ray cluster (issue 25): `ray start --head --num-cpus 2
--num-gpus 4` (tests/cluster/clusters.py, GPUs declared as resources), the driver `planner export
--scheduler ray` wrote run with python in the same stand-in checkout as the Slurm tests.

The manifest of test_slurm.py: 10 rows on 4 ranks of 2 GPUs, shards of 3, 3, 2, 2 rows dealt in
turn (rank 3: mine-4, other-1). With
4 GPUs and 2 CPUs, two ranks run at a time (a placement group per rank's node, freed as it ends).
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from planner.cli.main import main as cli_main
from tests.cluster.clusters import standin_log
from tests.cluster.test_slurm import age, expected_files, job_env, make_run, written

pytestmark = [pytest.mark.ray, pytest.mark.xdist_group("ray")]   # one cluster per run (scripts/test.py: --dist loadgroup)
FORWARD = "PATH,STANDIN_ROOT,STANDIN_SIZES,STANDIN_LOG,STANDIN_FAIL"      # the stand-ins' variables, for the tasks


def driver(run: dict, fmt: str, *args: str):
    path = run["work"] / f"{fmt}_ray.py"
    assert cli_main(["export", str(run["manifest"]), "--format", fmt, "--scheduler", "ray", "--out", str(path),
                     "--force", *args]) == 0
    return path


def run_driver(ray_cluster, run, path, env, *args):
    return subprocess.run([sys.executable, str(path), *args], cwd=run["work"], capture_output=True, text=True,
                          env={**ray_cluster.env, **env, "PLANNER_RAY_ENV": FORWARD}, timeout=180)


def test_the_ray_driver_runs_every_rank_on_its_shard(ray_cluster, tmp_path, monkeypatch):
    run = make_run(tmp_path, monkeypatch)
    env = job_env(run, "specforge")
    r = run_driver(ray_cluster, run, driver(run, "specforge"), env)
    assert r.returncode == 0, (r.stdout, r.stderr[-3000:])
    assert written(run["out"]) == expected_files("specforge", run)
    assert sorted((x["rank"], x["wrote"]) for x in standin_log(env)) == [(0, 3), (1, 3), (2, 2), (3, 2)]
    assert "summary: 4 of 4 ranks ok (of 4 in this capture)" in r.stdout
    assert "  rank 2: ok; 1 attempt(s); 2 rows; predicted " in r.stdout


def test_a_failing_rank_is_retried_and_a_failed_one_reported(ray_cluster, tmp_path, monkeypatch):
    run = make_run(tmp_path, monkeypatch)
    # rank 2 fails its first attempt after one row; rank 3 fails every attempt before writing any
    env = job_env(run, "modelopt", STANDIN_FAIL="2:1:once,3:0")
    r = run_driver(ray_cluster, run, driver(run, "modelopt"), env, "--max-retries", "1")
    assert r.returncode == 1, (r.stdout, r.stderr[-3000:])
    assert "summary: 3 of 4 ranks ok (of 4 in this capture)" in r.stdout
    assert "  rank 2: ok; 2 attempt(s); 2 rows" in r.stdout
    assert "  rank 3: failed: rank 3: python exited with 1; 2 attempt(s); 2 rows" in r.stdout
    log = standin_log(env)
    # rank 2's retry skipped the row its first attempt wrote, and wrote the other
    assert [(x["wrote"], x["skipped"], x["failed"]) for x in log if x["rank"] == 2] == [(1, 0, True), (1, 1, False)]
    want = expected_files("modelopt", run)
    assert written(run["out"]) == {k: v for k, v in want.items() if k not in ("mine-4.pt", "other-1.pt")}
    # resume: a driver of rank 3 alone
    age(run["out"])
    path = driver(run, "modelopt", "--resume", str(run["out"]), "--mix", str(run["data"] / "mix.jsonl"))
    assert '"order": [3]' in path.read_text()
