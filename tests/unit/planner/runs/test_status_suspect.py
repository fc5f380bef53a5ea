"""`planner status` on truncated capture files (a rank killed mid-write): suspect, not done, listed for
removal before `export --resume` reruns their ranks; nothing in RUN_DIR is written or deleted.

The run of tests/cluster/test_slurm.py's make_run: 10 rows over 4 ranks, shards [0,3), [3,6), [6,8),
[8,10); SpecForge writes rank-0000R/rows_0-2000/data_{i}.ckpt with i from 0 in each rank, speculators
hs_{idx}.safetensors flat (one assistant turn per conversation: 10 files, idx = the row, ranks by the
same blocks). The files are real: tests/fixtures/runs (torch.save and safetensors' own writers).
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import zipfile
from pathlib import Path

import pytest

from planner.cli.main import main as cli_main
from planner.runs import formats as rf
from planner.runs import status as runstatus
from tests.cluster.test_slurm import age, make_run

RUNS = Path(__file__).resolve().parents[3] / "fixtures" / "runs"
CKPT = [(RUNS / "specforge" / "rows_0-2000" / f"data_{i}.ckpt").read_bytes() for i in range(3)]
HS = [(RUNS / "speculators" / f"hs_{i}.safetensors").read_bytes() for i in range(3)]
RANK_ROWS = (3, 3, 2, 2)


def _minimal_archive() -> bytes:
    """The smallest archive read_torch_zip reads: one stored entry "/data.pkl" holding "}." (an
    empty mapping). 30 + 9 (local header + name) + 2 (data) + 46 + 9 (central header + name) + 22
    (end of central directory) = 118 bytes."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("/data.pkl", b"}.")
    return b.getvalue()


def _write(out: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        p = out / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    age(out)


def _specforge_run(out: Path, **override: bytes) -> None:
    """Every file of the run, real (data_{i % 3} of the fixtures), but those in `override`."""
    files = {f"rank-{r:05d}/rows_0-2000/data_{i}.ckpt": CKPT[i % 3] for r, n in enumerate(RANK_ROWS)
             for i in range(n)}
    files.update(override)
    _write(out, {k: v for k, v in files.items() if v is not None})


def _cli(capsys, *argv):
    capsys.readouterr()
    rc = cli_main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _status(run, capsys, *extra, fmt="specforge", out=None):
    return _cli(capsys, "status", str(out or run["out"]), "--manifest", str(run["manifest"]), "--format", fmt, *extra)


def _snapshot(out: Path) -> dict:
    return {p: (p.stat().st_size, p.stat().st_mtime_ns) for p in out.rglob("*")}


def test_the_smallest_files_the_formats_allow_are_the_minimums():
    # the cheap check's minimums are tight: a file of exactly that size is a readable file of its
    # format (so never a false suspect), one byte less cannot be
    assert len(_minimal_archive()) == 118 == rf.min_size("data_0.ckpt")[0] == rf.min_size("x-1.pt")[0]
    info = rf.read_torch_zip(io.BytesIO(_minimal_archive()), 118)
    assert (info.format, info.tensors) == ("torch-zip", ())
    tiny = (2).to_bytes(8, "little") + b"{}"                  # 8-byte length + "{}" = 10 bytes
    assert len(tiny) == 10 == rf.min_size("hs_0.safetensors")[0]
    assert rf.read_safetensors(io.BytesIO(tiny), 10).tensors == ()
    assert rf.min_size("data_0.ckpt.gz")[0] == 18 and rf.min_size("notes.bin")[0] == 1
    # the real fixtures are far above them
    assert min(map(len, CKPT)) == 3224 and min(map(len, HS)) == 1096


def test_an_empty_or_too_small_file_is_suspect_without_verify(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    out = run["out"]
    # rank 0: data_2 empty (killed before writing); rank 1: data_0 one byte under the smallest
    # archive (117), data_1 the smallest archive itself (118: passes the size check); rank 2: its
    # only file empty, killed on its first row
    _specforge_run(out, **{"rank-00000/rows_0-2000/data_2.ckpt": b"",
                           "rank-00001/rows_0-2000/data_0.ckpt": _minimal_archive()[:117],
                           "rank-00001/rows_0-2000/data_1.ckpt": _minimal_archive(),
                           "rank-00002/rows_0-2000/data_0.ckpt": b"", "rank-00002/rows_0-2000/data_1.ckpt": None})
    before = _snapshot(out)
    rc, text, err = _status(run, capsys, "--json")
    assert rc == 0, err
    st = json.loads(text)
    # by hand: rank 0 = 2 good + 1 empty -> done 2, suspect 1, partial; rank 1 = 117 (suspect) +
    # 118 + data_2 -> done 2, suspect 1, partial; rank 2 done 0, suspect 1: partial (something was
    # written), not missing; rank 3 complete
    assert (st["complete"], st["partial"], st["missing"]) == ([3], [0, 1, 2], [])
    assert [(r["files_done"], r["suspect"]) for r in st["ranks"]] == [(2, 1), (2, 1), (0, 1), (2, 0)]
    # bytes_done counts the good files only: rank 0 = data_0 + data_1 = 3,224 + 4,120;
    # rank 1 = 118 + data_2 (5,528)
    assert [r["bytes_done"] for r in st["ranks"]] == [3224 + 4120, 118 + 5528, 0, 3224 + 4120]
    assert st["suspect"] == 3 and st["verify"] is None
    empty = "empty (0 bytes): cut off before anything was written"
    assert st["suspect_examples"] == [
        {"path": "rank-00000/rows_0-2000/data_2.ckpt", "reason": empty},
        {"path": "rank-00001/rows_0-2000/data_0.ckpt",
         "reason": "117 bytes, under the 118 bytes of the smallest torch.save archive: truncated"},
        {"path": "rank-00002/rows_0-2000/data_0.ckpt", "reason": empty}]
    rc, text, _ = _status(run, capsys)
    assert "  rank 0: partial  2 of 3 files (3 rows), " in text and text.count(", 1 suspect\n") == 3
    assert "  rank 2: partial  0 of 2 files (2 rows), " in text
    assert "  suspect: 3 finished files look truncated" in text and "the pipeline skips a row whose file exists" in text
    assert "files checked by name and size only (--verify reads" in text
    assert text.splitlines()[-1].endswith("(ranks 0,1,2)")
    # with --verify the 118-byte archive (no tensors at all) is suspect too: rank 1 done 1, suspect 2;
    # read: the 9 files counted minus the 3 the size check caught = 6, all within the bound
    rc, text, _ = _status(run, capsys, "--json", "--verify")
    st = json.loads(text)
    assert [(r["files_done"], r["suspect"]) for r in st["ranks"]] == [(2, 1), (1, 2), (0, 1), (2, 0)]
    assert st["verify"] == {"verified": 6, "not_verified": 0, "complete": True, "seconds": runstatus.VERIFY_SECONDS,
                            "too_slow": 0}
    assert {"path": "rank-00001/rows_0-2000/data_1.ckpt",
            "reason": "holds no input_ids or token_ids tensor, which the pipeline stores for every row"} \
        in st["suspect_examples"]
    # export --resume reruns ranks 0, 1 and 2 (suspect files), and says what to remove first
    job = run["work"] / "resume.sbatch"
    rc, text, err = _cli(capsys, "export", str(run["manifest"]), "--format", "specforge", "--scheduler", "slurm",
                         "--resume", str(out), "--out", str(job))
    assert rc == 0 and "#SBATCH --array=0,1,2\n" in job.read_text()
    assert "remove the suspect files before resuming" in err
    assert f"rm -- {out}/rank-00000/rows_0-2000/data_2.ckpt " in err
    assert _snapshot(out) == before                     # nothing written or deleted in RUN_DIR


@pytest.mark.parametrize("fmt, files, bad, reason, ranks", [
    # SpecForge: rank 0's data_1 (4,120 bytes) cut to half, 2,060: over 118 so only --verify sees
    # it (its zip directory, at the end, is gone)
    ("specforge", None, ("rank-00000/rows_0-2000/data_1.ckpt", CKPT[1][:2060]),
     "not a torch.save zip archive, or truncated", ([1, 2, 3], [0])),
    # speculators: hs_4 (row 4, rank 1's block [3,6)) is hs_1 short by 4 bytes: 1,780 bytes whose
    # header says its tensors end at 1,784
    ("speculators", {f"hs_{i}.safetensors": HS[i % 3] for i in range(10)}, ("hs_4.safetensors", HS[1][:-4]),
     "truncated: its tensors end at byte 1,784, the file has 1,780", ([0, 2, 3], [1])),
])
def test_a_truncated_file_is_suspect_with_verify(tmp_path, monkeypatch, capsys, fmt, files, bad, reason, ranks):
    run = make_run(tmp_path, monkeypatch)
    out = run["out"]
    if files is None:
        _specforge_run(out, **{bad[0]: bad[1]})
    else:
        _write(out, {**files, bad[0]: bad[1]})
    rc, text, err = _status(run, capsys, "--json", fmt=fmt)
    assert rc == 0, err
    st = json.loads(text)
    assert st["complete"] == [0, 1, 2, 3] and st["suspect"] == 0        # by name and size: looks done
    rc, text, _ = _status(run, capsys, "--json", "--verify", fmt=fmt)
    st = json.loads(text)
    assert (st["complete"], st["partial"]) == ranks
    assert st["suspect"] == 1 and st["suspect_examples"][0]["path"] == bad[0]
    assert reason in st["suspect_examples"][0]["reason"]
    assert st["verify"]["verified"] == 10 and st["verify"]["complete"]
    rc, text, _ = _status(run, capsys, "--verify", fmt=fmt)
    assert text.splitlines()[-1].endswith(f"(ranks {ranks[1][0]})") and "--verify read all 10 finished" in text
    rc, text, err = _cli(capsys, "export", str(run["manifest"]), "--format", fmt, "--scheduler", "slurm",
                         "--resume", str(out), "--verify", "--out", str(run["work"] / "r.sbatch"))
    assert rc == 0 and f"#SBATCH --array={ranks[1][0]}\n" in (run["work"] / "r.sbatch").read_text()
    assert bad[0] in err


def test_a_good_run_stays_complete_under_verify(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    _specforge_run(run["out"])
    rc, text, err = _status(run, capsys, "--json", "--verify")
    st = json.loads(text)
    assert rc == 0 and st["complete"] == [0, 1, 2, 3] and st["suspect"] == 0
    assert st["verify"]["verified"] == 10 and [r["suspect"] for r in st["ranks"]] == [0, 0, 0, 0]
    rc, text, _ = _cli(capsys, "export", str(run["manifest"]), "--format", "specforge", "--scheduler", "slurm",
                       "--resume", str(run["out"]), "--verify")
    assert rc == 0 and "nothing to resume" in text
    rc, _, err = _cli(capsys, "export", str(run["manifest"]), "--format", "specforge", "--scheduler", "slurm",
                      "--verify")
    assert rc == 2 and err == "planner: error: --verify: reads the files of a run for --resume; give --resume RUN_DIR\n"


def test_the_verify_deadline_says_how_many_were_not_read(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    # all 10 files truncated to 2,000 bytes: each over 118, so only a read finds them
    _specforge_run(run["out"], **{f"rank-{r:05d}/rows_0-2000/data_{i}.ckpt": CKPT[i % 3][:2000]
                                  for r, n in enumerate(RANK_ROWS) for i in range(n)})
    ticks = iter(range(0, 10_000))
    monkeypatch.setattr(runstatus, "_clock", lambda: float(next(ticks)))
    # a clock that moves 1 s per look, bound 2.5 s: start 0; looks at 1 and 2 read a file each, the
    # look at 3 is past the bound. Read 2 (the first two by path, rank 0's data_0 and data_1),
    # 10 - 2 = 8 not read, counted as done by name and size
    st = runstatus.status(run["m"], str(run["out"]), "specforge", 4, verify=True, verify_seconds=2.5)
    assert st.verify == {"verified": 2, "not_verified": 8, "complete": False, "seconds": 2.5, "too_slow": 0}
    assert st.suspect == 2 and [(r.done, r.suspect) for r in st.ranks] == [(1, 2), (3, 0), (2, 0), (2, 0)]
    # the CLI's bound (120 s) with a clock of 100 s a look: start 0, the look at 100 reads one, 200 stops
    ticks = iter(range(0, 10_000_000, 100))
    monkeypatch.setattr(runstatus, "_clock", lambda: float(next(ticks)))
    rc, text, _ = _status(run, capsys, "--verify")
    assert "  --verify read 1 files before its 120 s bound: the other 9 were NOT verified" in text


@pytest.mark.parametrize("change", ["grows", "symlink"])
def test_a_file_that_changes_between_the_scan_and_the_read_is_not_counted(tmp_path, monkeypatch, capsys, change):
    run = make_run(tmp_path, monkeypatch)
    _specforge_run(run["out"])
    target = run["out"] / "rank-00003" / "rows_0-2000" / "data_1.ckpt"
    outside = tmp_path / "outside.ckpt"
    outside.write_bytes(target.read_bytes())               # the same size: only the type tells
    real_scan, real_read, read = runstatus.rundir.scan, rf.read_file, []

    def scan_then_change(*a, **k):
        s = real_scan(*a, **k)
        if change == "grows":                  # the rank still writing it
            with open(target, "ab") as fh:
                fh.write(b"more")
        else:                                  # swapped for a symlink out of the run
            target.unlink()
            os.symlink(outside, target)
        return s

    monkeypatch.setattr(runstatus.rundir, "scan", scan_then_change)
    monkeypatch.setattr(runstatus.run_formats, "read_file", lambda path, **k: read.append(path) or real_read(path, **k))
    rc, text, err = _status(run, capsys, "--verify")
    assert rc == 0, err
    # rank 3: 1 of 2 done, the changed file neither done nor suspect, named as being written, not read
    assert "  rank 3: partial  1 of 2 files" in text and "suspect" not in text.split("not counted:")[0]
    assert "not counted: 1 still being written (its size changed during the scan)" in text
    assert len(read) == 9 and str(target) not in read


def test_suspect_paths_are_shell_quoted(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    out = tmp_path / "run dir 'q'\n$(touch PWNED)"
    _specforge_run(out, **{"rank-00002/rows_0-2000/data_1.ckpt": b""})
    rc, text, err = _status(run, capsys, out=out)
    assert rc == 0, err
    rm = [x for x in text.splitlines() if x.startswith("    rm -- ")]
    assert len(rm) == 1                                  # the newline did not break the line
    words = subprocess.run(["bash", "-c", "printf '%s\\0' " + rm[0].split("rm -- ", 1)[1]], cwd=tmp_path,
                           capture_output=True, check=True).stdout
    assert words.split(b"\0")[:-1] == [os.fsencode(out / "rank-00002" / "rows_0-2000" / "data_1.ckpt")]
    # and the resume line's RUN_DIR is one word too
    resume = text.splitlines()[-1]
    assert resume.startswith("resume: planner export ") and resume.endswith("   (ranks 2)")
    words = subprocess.run(["bash", "-c", "printf '%s\\0' " + resume.split(" --resume ", 1)[1][:-len("   (ranks 2)")]],
                           cwd=tmp_path, capture_output=True, check=True).stdout
    assert words.split(b"\0")[:-1] == [os.fsencode(out)]
    assert not list(tmp_path.rglob("PWNED")) and (out / "rank-00002" / "rows_0-2000" / "data_1.ckpt").exists()


def _safetensors(shape: list[int]) -> bytes:
    """A whole safetensors file of one int64 `token_ids` tensor of `shape` (zeros)."""
    n = 8
    for d in shape:
        n *= d
    header = json.dumps({"token_ids": {"dtype": "I64", "shape": shape, "data_offsets": [0, n]}}).encode()
    return len(header).to_bytes(8, "little") + header + b"\0" * n


@pytest.mark.parametrize("shape, reason", [
    ([0], "holds 0 tokens"),                                  # a row of no tokens: 8 + header bytes, whole
    ([2, 3], "holds 2 rows, where the pipeline writes one row per file"),   # [n, S] with n = 2: two rows
])
def test_a_whole_file_that_contradicts_the_plan_is_suspect(tmp_path, monkeypatch, shape, reason):
    # speculators' hs_7 (row 7, rank 2's block [6,8)) reads as safetensors but is not one row of tokens
    run = make_run(tmp_path, monkeypatch)
    _write(run["out"], {**{f"hs_{i}.safetensors": HS[i % 3] for i in range(10)},
                        "hs_7.safetensors": _safetensors(shape)})
    assert rf.read_file(run["out"] / "hs_7.safetensors").tokens == (0 if shape == [0] else 6)
    st = runstatus.status(run["m"], str(run["out"]), "speculators", 4, verify=True)
    assert (st.suspect, st.suspect_examples) == (1, [("hs_7.safetensors", reason)])
    assert st.by_state("partial") == [2] and [(r.done, r.suspect) for r in st.ranks] == [(3, 0), (3, 0), (1, 1), (2, 0)]


def test_the_list_of_suspect_files_is_bounded_and_says_so(tmp_path, monkeypatch, capsys):
    # 3 empty files, examples bounded at 2: all 3 counted, the first 2 by path listed (and in the
    # rm line), "1 more" said
    run = make_run(tmp_path, monkeypatch)
    _specforge_run(run["out"], **{f"rank-00001/rows_0-2000/data_{i}.ckpt": b"" for i in range(3)})
    monkeypatch.setattr(runstatus, "MAX_SUSPECT_EXAMPLES", 2)
    rc, text, _ = _status(run, capsys)
    assert "  suspect: 3 finished files look truncated" in text and "    ... and 1 more (not listed;" in text
    rm = next(x for x in text.splitlines() if x.startswith("    rm -- "))
    assert rm.count(".ckpt") == 2 and rm.endswith("data_1.ckpt")
    st = json.loads(_status(run, capsys, "--json")[1])
    assert st["suspect"] == 3 and len(st["suspect_examples"]) == 2 and st["ranks"][1]["suspect"] == 3
