"""The exported Slurm array on a real Slurm cluster (issue 25): one slurmctld and one slurmd on this
machine (tests/cluster/clusters.py), `sbatch --wait` on the script `planner export --scheduler slurm` wrote,
in a stand-in checkout of each pipeline (its scripts accept exactly the flags of
pipeline_flags.yaml and write the layout's files, each of its row's predicted size).

The manifest: `mine` (7 rows, first) and `other` (3 rows, first), 10 rows on 4 nodes of 2 GPUs
(the test node declares 4), capture batches of 1 (SpecForge's DataLoader drops a last partial
batch: with batches of 32 a 3-row shard would write nothing). Positions mine 0..6, other 7..9.
The planner's shards (SpecForge, Model-Optimizer) deal them in turn, position p to rank p % 4:
rank 0 = 0, 4, 8 = mine rows 1, 5 + other 2; rank 1 = 1, 5, 9 = mine 2, 6 + other 3;
rank 2 = 2, 6 = mine 3, 7; rank 3 = 3, 7 = mine 4 + other 1.
speculators splits its own prepared rows in contiguous blocks (sharding.block): T//N = 2, T%N = 2,
so rank 0 [0,3), 1 [3,6), 2 [6,8), 3 [8,10): mine 1-3, mine 4-6, mine 7 + other 1, other 2-3.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from planner.catalog.profile import profile_file
from planner.cli.main import main as cli_main
from planner.export import sharding
from planner.export.manifest import build_manifest, dump_manifest, load_manifest
from planner.scenario import Scenario
from tests.cluster.clusters import checkout, standin_log

pytestmark = [pytest.mark.slurm, pytest.mark.xdist_group("slurm")]   # one cluster per run (scripts/test.py: --dist loadgroup)
N = 4
# (materialize names a local row by its line in the file, from 1: mine-1..mine-7, other-1..other-3)
SHARDS = [["mine-1", "mine-5", "other-2"], ["mine-2", "mine-6", "other-3"], ["mine-3", "mine-7"],
          ["mine-4", "other-1"]]
BLOCKS = [["mine-1", "mine-2", "mine-3"], ["mine-4", "mine-5", "mine-6"], ["mine-7", "other-1"],
          ["other-2", "other-3"]]
LAYOUT = {"specforge": "specforge-dflash", "modelopt": "modelopt-eagle3", "speculators": "speculators"}


def make_run(tmp_path: Path, monkeypatch, **scenario) -> dict:
    """The manifest, a stand-in checkout (the submit folder), the materialized inputs, the job's env."""
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path / "home"))
    for name, n in (("mine", 9), ("other", 5)):
        f = tmp_path / f"{name}.jsonl"
        # a line's line number is its row: materialize names row n of a local file "{id}-{line}"
        f.write_text("".join(json.dumps({"instruction": f"{name} q{i} " + "word " * (20 * (i + 1)), "output": "a"})
                             + "\n" for i in range(n)))
        profile_file(f, name)
    s = Scenario(mix=[{"id": "mine", "rows": 7, "selection": "first"}, {"id": "other", "rows": 3, "selection": "first"}],
                 extraction_gpus=8, gpus_per_node=2, extraction_nodes=4, capture_batch_size=1, **scenario)
    manifest = tmp_path / "m.yaml"
    manifest.write_text(dump_manifest(build_manifest(s)))
    m = load_manifest(manifest)
    work = tmp_path / "work"
    data = work / "data"
    data.mkdir(parents=True)
    assert cli_main(["materialize", str(manifest), "--out", str(data / "mix.jsonl")]) == 0
    assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "mix.jsonl")]) == 0
    (data / "prepared").mkdir()          # speculators' prepared rows, as the stand-in reads them
    (data / "prepared" / "rows.jsonl").write_text((data / "mix.jsonl").read_text())
    sizes = {}
    for fmt, layout in LAYOUT.items():
        per = sharding.bytes_per_row(m, layout)
        sizes[fmt] = {c.id: int(b) for c, b in zip(m.components, per)}
    return {"manifest": manifest, "m": m, "work": work, "data": data, "out": work / "out", "sizes": sizes}


def job_env(run: dict, fmt: str, **extra) -> dict:
    env = checkout(run["work"], run["sizes"][fmt])
    return {**env, "PLANNER_DATA_DIR": str(run["data"]), "PLANNER_OUT_DIR": str(run["out"]), **extra}


def export(run: dict, fmt: str, *args: str) -> Path:
    job = run["work"] / f"{fmt}.sbatch"
    assert cli_main(["export", str(run["manifest"]), "--format", fmt, "--scheduler", "slurm", "--out", str(job),
                     "--force", *args]) == 0
    return job


def task_output(run: dict) -> dict[int, tuple[str, str]]:
    w = run["work"]
    return {r: ((w / f"slurm-{r}.out").read_text() if (w / f"slurm-{r}.out").exists() else "",
                (w / f"slurm-{r}.err").read_text() if (w / f"slurm-{r}.err").exists() else "") for r in range(N)}


def servers_in(folder: Path) -> list[int]:
    """Processes running scripts/launch_vllm.py in `folder` (the stand-in server)."""
    out = []
    for d in Path("/proc").iterdir():
        try:
            if (d.name.isdigit() and b"scripts/launch_vllm.py" in (d / "cmdline").read_bytes()
                    and os.readlink(d / "cwd") == str(folder)):
                out.append(int(d.name))
        except OSError:
            continue
    return out


def written(out: Path) -> dict[str, int]:
    return {str(p.relative_to(out)): p.stat().st_size for p in sorted(out.rglob("*")) if p.is_file()}


def expected_files(fmt: str, run: dict) -> dict[str, int]:
    """The files of the pipeline's naming for each rank's shard, each of its row's predicted size."""
    size = lambda rid: run["sizes"][fmt][rid.rsplit("-", 1)[0]]  # noqa: E731
    out = {}
    split = BLOCKS if fmt == "speculators" else SHARDS
    for r, rows in enumerate(split):
        for i, rid in enumerate(rows):
            if fmt == "specforge":        # one torchrun per rank into rank-0000R/, numbered from 0
                out[f"rank-{r:05d}/rows_0-2000/data_{i}.ckpt"] = size(rid)
            elif fmt == "modelopt":       # {conversation_id}.pt, one folder
                out[f"{rid}.pt"] = size(rid)
            else:                         # hs_{index of the prepared rows}.safetensors
                out[f"hs_{sum(len(s) for s in split[:r]) + i}.safetensors"] = size(rid)
    return out


@pytest.mark.parametrize("fmt", ["specforge", "modelopt", "speculators"])
def test_every_rank_writes_exactly_its_shard(slurm_cluster, tmp_path, monkeypatch, fmt):
    run = make_run(tmp_path, monkeypatch)
    assert [json.loads(x)["id"] for x in (run["data"] / "mix.jsonl").read_text().splitlines()] == sum(BLOCKS, [])
    for r in range(N):            # the planner's shards, dealt in turn
        assert [json.loads(x)["id"] for x in (run["data"] / f"mix-{r:05d}-of-00004.jsonl").read_text().splitlines()] \
            == SHARDS[r]
    env = job_env(run, fmt)
    r = slurm_cluster.sbatch_wait(export(run, fmt), cwd=run["work"], env=env)
    assert r.returncode == 0, (r.stdout, r.stderr, task_output(run))
    assert written(run["out"]) == expected_files(fmt, run)         # every file, each of its predicted size
    log = [x for x in standin_log(env) if x["script"] != "scripts/launch_vllm.py"]
    assert sorted(int(x["task"]) for x in log) == list(range(N))    # Slurm ran each task once...
    assert all(x["rank"] == int(x["task"]) and x["wrote"] == len(SHARDS[x["rank"]]) for x in log)   # ...as its rank
    outs = task_output(run)
    for rank in range(N):
        assert f"rank {rank}: " in outs[rank][0] and " bytes needed (predicted " in outs[rank][0], outs[rank]
    if fmt == "speculators":      # each rank's background vLLM server was stopped with its task
        assert servers_in(run["work"]) == []


def test_the_disk_check_stops_a_rank_before_anything_runs(slurm_cluster, tmp_path, monkeypatch):
    run = make_run(tmp_path, monkeypatch)
    small = run["work"] / "small disk"                    # a real filesystem of 64 KiB (a space in its name)
    small.mkdir()
    mount = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tank fs", str(small)], capture_output=True)
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mount.stderr.decode(errors='replace').strip()}")
    try:
        env = job_env(run, "modelopt", PLANNER_OUT_DIR=str(small / "hs"))
        r = slurm_cluster.sbatch_wait(export(run, "modelopt"), cwd=run["work"], env=env)
        assert r.returncode != 0                           # sbatch --wait: the array's highest exit code
        outs = task_output(run)
        need = [int(x * sharding.DISK_MARGIN) + 1 for x in sharding.rank_bytes(run["m"], N, "modelopt-eagle3")]
        for rank in range(N):
            assert (f"rank {rank}: not enough disk in {small}: needs {need[rank]} bytes" in outs[rank][1]
                    and "nothing was started" in outs[rank][1]), outs[rank]
        assert standin_log(env) == [] and list(small.iterdir()) == []
    finally:
        subprocess.run(["umount", str(small)], capture_output=True)


# (a newline would make a line sbatch reads as a directive, were it not quoted as $'...\x0a...')
HOSTILE_MODELS = ["$(touch PWNED)'; touch PWNED; echo '", "m\n#SBATCH --output=/tmp/PWNED-%a\n`touch PWNED`"]


def test_hostile_manifest_values_never_execute(slurm_cluster, tmp_path, monkeypatch):
    # a manifest that plans (Qwen3.6-27B's figures) with hostile text where a manifest carries text:
    # the custom model's name and path, the sources' repositories and licences, the notes
    from planner.presets.specs import model_presets
    run = make_run(tmp_path, monkeypatch)
    m = run["m"]
    spec = next(iter(model_presets().values()))
    env = job_env(run, "specforge")
    assert cli_main(["materialize", str(run["manifest"]), "--shards", "2", "--out", str(run["data"] / "mix.jsonl")]) == 0
    for k, value in enumerate(HOSTILE_MODELS):
        hostile = m.model_copy(update={
            "scenario": m.scenario.model_copy(update={"model": "custom", "custom_model": spec.model_copy(
                update={"hf_id": value, "name": value})}),
            "components": [c.model_copy(update={"hf_repo": value, "licence": value, "local_path": value})
                           for c in m.components],
            "notes": [value]})
        from planner.export import slurm
        job = run["work"] / f"hostile-{k}.sbatch"
        job.write_text(slurm.slurm_script(hostile, "specforge", 2, f"{value}.yaml"))     # 2 ranks: 5 rows each
        out = run["work"] / f"out-{k}"
        r = slurm_cluster.sbatch_wait(job, cwd=run["work"], env={**env, "PLANNER_OUT_DIR": str(out)})
        assert r.returncode == 0, (r.stderr, task_output(run))
        models = {x["argv"][x["argv"].index("--target-model-path") + 1] for x in standin_log(env)}
        assert models == {value}                                    # one intact argument, every rank
        assert len(written(out)) == 10 and "\n#SBATCH --output" not in job.read_text()
        Path(env["STANDIN_LOG"]).write_text("")
    assert not list(tmp_path.rglob("PWNED*")) and not list(Path("/tmp").glob("PWNED*"))


def test_slurm_refuses_more_gpus_than_a_node_has(slurm_cluster, tmp_path, monkeypatch):
    # what only a real Slurm says: the script asks --gpus-per-node=8 (the manifest's nodes of 8) and the
    # test node has 4, so sbatch refuses the job at submission, before any task runs
    run = make_run(tmp_path, monkeypatch)
    s = run["m"].scenario.with_changes(extraction_gpus=16, gpus_per_node=8, extraction_nodes=2)
    big = build_manifest(s)
    run["manifest"].write_text(dump_manifest(big))
    job = export(run, "modelopt")
    assert "#SBATCH --gpus-per-node=8\n" in job.read_text()
    r = slurm_cluster.sbatch_wait(job, cwd=run["work"], env=job_env(run, "modelopt"), timeout=30)
    assert r.returncode != 0 and "Requested node configuration is not available" in r.stderr, r.stderr
    assert not run["out"].exists()


def age(out: Path, seconds: float = 120) -> None:
    """Date the run's files back (status counts a file modified under a minute ago as being written)."""
    t = os.path.getmtime(out) - seconds
    for p in out.rglob("*"):
        os.utime(p, (t, t), follow_symlinks=False)


def status_json(run: dict, fmt: str, capsys, *extra: str) -> dict:
    capsys.readouterr()
    assert cli_main(["status", str(run["out"]), "--manifest", str(run["manifest"]), "--format", fmt, "--json",
                     *extra]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("fmt", ["specforge", "modelopt"])
def test_a_failed_rank_is_resumed_and_the_run_completes(slurm_cluster, tmp_path, monkeypatch, capsys, fmt):
    run = make_run(tmp_path, monkeypatch)
    mix = ["--mix", str(run["data"] / "mix.jsonl")] if fmt == "modelopt" else []
    env = job_env(run, fmt, STANDIN_FAIL="2:1")                 # rank 2 writes 1 of its 2 rows, then exits 1
    r = slurm_cluster.sbatch_wait(export(run, fmt), cwd=run["work"], env=env)
    assert r.returncode == 1                                     # sbatch --wait: the array's highest exit code
    want = expected_files(fmt, run)
    missing = {"specforge": "rank-00002/rows_0-2000/data_1.ckpt", "modelopt": "mine-7.pt"}[fmt]
    assert written(run["out"]) == {k: v for k, v in want.items() if k != missing}   # the others intact
    assert [x["failed"] for x in sorted(standin_log(env), key=lambda x: x["rank"])] == [False, False, True, False]
    age(run["out"])
    st = status_json(run, fmt, capsys, *mix)
    # by hand: files of 3, 3, 2, 2 rows; rank 2 wrote its first (mine's 3rd row), so 1 of 2
    assert (st["complete"], st["partial"], st["missing"]) == ([0, 1, 3], [2], [])
    assert [(x["files"], x["files_done"]) for x in st["ranks"]] == [(3, 3), (3, 3), (2, 1), (2, 2)]
    mine = run["sizes"][fmt]["mine"]
    assert st["ranks"][2]["bytes_done"] == mine                    # the one file, of its predicted size
    before = {p: p.stat().st_mtime_ns for p in run["out"].rglob("*") if p.is_file()}
    job = export(run, fmt, "--resume", str(run["out"]), *mix)
    assert "#SBATCH --array=2\n" in job.read_text()
    env.pop("STANDIN_FAIL")
    r = slurm_cluster.sbatch_wait(job, cwd=run["work"], env=env)
    assert r.returncode == 0, (r.stderr, task_output(run))
    last = standin_log(env)[-1]
    assert (last["task"], last["wrote"], last["skipped"]) == ("2", 1, 1)   # only rank 2, its finished row skipped
    assert written(run["out"]) == expected_files(fmt, run)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())     # nothing finished was rewritten
    age(run["out"])
    st = status_json(run, fmt, capsys, *mix)
    assert st["complete"] == [0, 1, 2, 3] and st["partial"] == st["missing"] == []
    capsys.readouterr()
    assert cli_main(["export", str(run["manifest"]), "--format", fmt, "--scheduler", "slurm", "--resume",
                     str(run["out"]), *mix]) == 0
    assert "nothing to resume" in capsys.readouterr().out
