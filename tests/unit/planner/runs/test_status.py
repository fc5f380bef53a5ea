"""`planner status` and `export --resume` on run folders made by hand, and the Ray driver's dry run
with hostile values (no cluster needed; the real runs are in tests/cluster/test_slurm.py and test_ray.py).

The manifest of tests/cluster/test_slurm.py: 10 rows over 4 ranks, shards of 3, 3, 2, 2 rows; SpecForge
writes rank-0000R/rows_0-2000/data_{i}.ckpt, i from 0 in each rank.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli.main import main as cli_main
from planner.export.ray_driver import ray_driver
from tests.unit.planner.export.test_commands import HOSTILE
from tests.cluster.test_slurm import age, make_run


# a real SpecForge file (torch.save of a 7-token row, tests/fixtures/runs: 3,224 bytes); a 10-byte
# stand-in would now be suspect (under the 118 bytes of the smallest torch.save archive)
CKPT = (Path(__file__).resolve().parents[3] / "fixtures" / "runs" / "specforge" / "rows_0-2000" / "data_0.ckpt")
CKPT_BYTES = 3224


def _files(out, names, data=None):
    for name in names:
        p = out / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(CKPT.read_bytes() if data is None else data)
    age(out)


def _status(run, capsys, *extra):
    capsys.readouterr()
    rc = cli_main(["status", str(run["out"]), "--manifest", str(run["manifest"]), "--format", "specforge", *extra])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_status_counts_each_rank_and_skips_what_is_not_the_runs(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    out = run["out"]
    # rank 0 complete (3 of 3), rank 1 partial (1 of 3), rank 2 missing, rank 3 complete (2 of 2)
    _files(out, [f"rank-00000/rows_0-2000/data_{i}.ckpt" for i in range(3)] + ["rank-00001/rows_0-2000/data_0.ckpt"]
           + [f"rank-00003/rows_0-2000/data_{i}.ckpt" for i in range(2)]
           + ["notes.txt", "rank-00001/rows_0-2000/data_1.ckpt.tmp"])
    (out / "rank-00002").mkdir()
    (out / "rank-00002" / "rows_0-2000").mkdir()
    os.symlink("/etc/passwd", out / "rank-00002" / "rows_0-2000" / "data_0.ckpt")   # leaves the run: not counted
    os.mkfifo(out / "rank-00002" / "rows_0-2000" / "data_1.ckpt")                   # not a file: not counted
    rc, text, err = _status(run, capsys, "--json")
    assert rc == 0, err
    st = json.loads(text)
    assert (st["complete"], st["partial"], st["missing"]) == ([0, 3], [1], [2])
    assert [(r["files"], r["files_done"], r["bytes_done"]) for r in st["ranks"]] == [
        (3, 3, 3 * CKPT_BYTES), (3, 1, CKPT_BYTES), (2, 0, 0), (2, 2, 2 * CKPT_BYTES)]
    assert st["suspect"] == 0 and st["suspect_examples"] == [] and st["verify"] is None
    assert sum(st["skipped"].values()) == 4 and st["scan_complete"]
    rc, text, _ = _status(run, capsys)
    assert text.splitlines()[0].endswith("specforge (specforge-dflash), 4 ranks: 2 complete, 1 partial, 1 missing")
    assert "  rank 1: partial  1 of 3 files (3 rows)" in text
    assert text.splitlines()[-1].endswith("(ranks 1,2)")
    # --resume: the array of ranks 1 and 2 only
    job = run["work"] / "resume.sbatch"
    assert cli_main(["export", str(run["manifest"]), "--format", "specforge", "--scheduler", "slurm", "--resume",
                     str(out), "--out", str(job)]) == 0
    assert "#SBATCH --array=1,2\n" in job.read_text() and "# resuming: ranks 1,2 of 4" in job.read_text()
    assert os.path.islink(out / "rank-00002" / "rows_0-2000" / "data_0.ckpt")             # nothing touched


def test_a_run_of_another_manifest_is_named_in_one_sentence(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    _files(run["out"], ["rank-00000/rows_0-2000/data_7.ckpt", "rank-00009/rows_0-2000/data_0.ckpt"])
    rc, _, err = _status(run, capsys)
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("planner: error: RUN_DIR: ") and "files name rows the manifest does not have over 4 ranks" in err


@pytest.mark.parametrize("make", ["missing", "file"])
def test_a_run_dir_that_is_not_a_folder_is_refused(tmp_path, monkeypatch, capsys, make):
    run = make_run(tmp_path, monkeypatch)
    if make == "file":
        run["out"].write_text("x")
    rc, _, err = _status(run, capsys)
    assert rc == 2 and err.startswith("planner: error: RUN_DIR: ") and err.count("\n") == 1


def test_modelopt_status_needs_the_mix_and_resume_needs_a_scheduler(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    run["out"].mkdir()
    assert cli_main(["status", str(run["out"]), "--manifest", str(run["manifest"]), "--format", "modelopt"]) == 2
    assert capsys.readouterr().err.startswith("planner: error: --mix: None is not allowed; the mix.jsonl the ranks read")
    assert cli_main(["export", str(run["manifest"]), "--format", "modelopt", "--nodes", "4", "--resume",
                     str(run["out"])]) == 2
    assert "--resume: writes a --scheduler slurm|ray script" in capsys.readouterr().err


def test_the_ray_driver_never_runs_a_hostile_value(tmp_path, monkeypatch):
    # the plannable manifest with hostile text in the custom model's path and name, and in the sources;
    # the driver's dry run prints each rank's commands, every value one quoted argument
    from planner.presets.specs import model_presets
    run = make_run(tmp_path, monkeypatch)
    m = run["m"]
    spec = next(iter(model_presets().values()))
    for value in HOSTILE:
        hostile = m.model_copy(update={
            "scenario": m.scenario.model_copy(update={"model": "custom", "custom_model": spec.model_copy(
                update={"hf_id": value, "name": value})}),
            "components": [c.model_copy(update={"hf_repo": value, "licence": value}) for c in m.components]})
        path = tmp_path / "driver.py"
        path.write_text(ray_driver(hostile, "specforge", 4, f"{value}.yaml"))
        compile(path.read_text(), str(path), "exec")            # the value never became code
        r = subprocess.run([sys.executable, str(path), "--dry-run"], cwd=tmp_path, capture_output=True, text=True,
                           env={**os.environ, "PLANNER_DATA_DIR": "data dir", "PLANNER_OUT_DIR": "$(touch PWNED)"},
                           timeout=60)
        assert r.returncode == 0, r.stderr
        lines = [x for x in r.stdout.splitlines() if x.startswith("rank ")]
        assert len(lines) == 4
        for k, line in enumerate(lines):   # bash reads each printed command back (printf, never run)
            words = subprocess.run(["bash", "-c", "printf '%s\\0' " + line.split(" would run: ", 1)[1]],
                                   cwd=tmp_path, capture_output=True, check=True).stdout
            argv = [w.decode("utf-8", "surrogateescape") for w in words.split(b"\0")[:-1]]
            # a value that reads as a flag is written as a path (./--flag), never bare (issue 21)
            assert argv[argv.index("--target-model-path") + 1] == ("./" + value if value.startswith("-") else value)
            assert argv[argv.index("--output-path") + 1] == f"$(touch PWNED)/rank-{k:05d}"
            assert argv[argv.index("--data-path") + 1] == f"data dir/mix-{k:05d}-of-00004.jsonl"
        assert not list(tmp_path.rglob("PWNED"))


def test_a_huge_run_dir_is_read_within_its_bound(tmp_path, monkeypatch):
    # 1,200 entries that are not the run's, and the scan bounded at 400: it stops, says so, and
    # counts nothing it did not look at (rundir.scan's bounds; status passes them on)
    from planner.runs.status import status
    run = make_run(tmp_path, monkeypatch)
    junk = run["out"] / "junk"
    junk.mkdir(parents=True)
    for i in range(1200):
        (junk / f"f{i}").touch()
    _files(run["out"], ["rank-00000/rows_0-2000/data_0.ckpt"])
    st = status(run["m"], str(run["out"]), "specforge", 4, max_entries=400)
    assert not st.scan_complete and sum(r.done for r in st.ranks) <= 1
    st = status(run["m"], str(run["out"]), "specforge", 4)
    assert st.scan_complete and [r.done for r in st.ranks] == [1, 0, 0, 0] and st.skipped["unknown name for this layout"] == 1200


def test_modelopt_status_places_local_rows_by_the_dealt_shards(tmp_path, monkeypatch, capsys):
    # make_run's 10 rows dealt to 4 ranks (position p to rank p % 4): rank 0 = mine-1, mine-5, other-2;
    # rank 1 = mine-2, mine-6, other-3; rank 2 = mine-3, mine-7; rank 3 = mine-4, other-1. A local row's
    # file names only its line, so status reads the shards beside --mix: rank 0 complete (3 of 3),
    # rank 2 partial (mine-3, 1 of 2), ranks 1 and 3 missing. (Contiguous blocks would have put
    # mine-1, mine-5, other-2 on ranks 0, 1 and 3.)
    run = make_run(tmp_path, monkeypatch)
    _files(run["out"], ["mine-1.pt", "mine-5.pt", "other-2.pt", "mine-3.pt"])
    (run["data"] / "mix.jsonl").unlink()          # the export's materialize --shards writes only the shards
    capsys.readouterr()
    assert cli_main(["status", str(run["out"]), "--manifest", str(run["manifest"]), "--format", "modelopt",
                     "--mix", str(run["data"] / "mix.jsonl"), "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert (st["complete"], st["partial"], st["missing"]) == ([0], [2], [1, 3])
    assert [(r["files"], r["files_done"]) for r in st["ranks"]] == [(3, 3), (3, 0), (2, 1), (2, 0)]
