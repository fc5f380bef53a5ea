"""planner/runs/rundir.py: each pipeline's file names (cited in the module), the rows and predictions
each file stands for, and the bounded scan of a run directory."""
import os
import time

import pytest

from planner.runs import rundir
from planner.errors import PlannerInputError
from planner.export.manifest import build_manifest
from planner.presets.layouts import layout_presets
from planner.scenario import Scenario

OLD = time.time() - 3600      # an mtime well past the one-minute guard


def hand_plan(rows=(600, 400), bytes_=(1000.0, 3000.0), tokens=(10.0, 30.0), files=(1.0, 1.0), local=(False, False)):
    """Two components a, b: a at positions 0..599, b at 600..999 (hand-made, not the planner's)."""
    starts, pos = [], 0
    for n in rows:
        starts.append(pos)
        pos += n
    return rundir.RowPlan(ids=("a", "b"), starts=tuple(starts), rows=tuple(rows), local=tuple(local),
                          files_per_row=tuple(files), bytes_per_file=tuple(bytes_), tokens_per_file=tuple(tokens),
                          total=pos, planned=True)


def names(pipeline, plan=None, world=1, dp=1, layout=None):
    spec = layout_presets()[layout or next(k for k, v in layout_presets().items() if v.pipeline == pipeline)]
    return rundir.NAMINGS[pipeline](spec, plan or hand_plan(), world, dp)


def touch(path, size=10, mtime=OLD):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    os.utime(path, (mtime, mtime))


# ---------------------------------------------------------------- naming
def test_specforge_names_group_folders_and_positions():
    n = names("specforge")
    # prepare_hidden_states.py:588-594: idx 1999 in rows_0-2000, 2000 would start rows_2000-4000
    assert n.path(0, 5) == "rows_0-2000/data_5.ckpt"
    f = n.lookup("rows_0-2000/data_650.ckpt")
    assert (f.positions, f.component, f.predicted_bytes, f.predicted_tokens) == ((650,), "b", 3000.0, 30.0)
    assert n.lookup("rows_0-2000/data_650.ckpt.gz").positions == (650,)        # --compress
    assert n.lookup("rows_2000-4000/data_5.ckpt") == rundir.UNKNOWN             # wrong group for 5
    assert n.lookup("rows_0-2000/data_1000.ckpt") == rundir.NOT_IN_MANIFEST      # 1,000 rows: 0..999
    assert n.lookup("rows_0-2000/data_05.ckpt") == rundir.UNKNOWN               # not how Python prints an int
    assert [e.path for e in n.expected()][:2] == ["rows_0-2000/data_0.ckpt", "rows_0-2000/data_1.ckpt"]


def test_specforge_dp_ranks_number_contiguously_but_read_strided():
    # 10 rows, D = 4 DP processes: start_idx 0, 3, 6, 8 (:887-901, blocks 3,3,2,2); DP rank d reads
    # rows d, d+4, d+8 (DistributedSampler, wrapping round). File 4 = DP rank 1's 2nd: row 1 + 4 = 5;
    # file 2 = DP rank 0's 3rd: row 8; file 9 = DP rank 3's 2nd: row 3 + 4 = 7.
    n = names("specforge", hand_plan(rows=(6, 4)), dp=4)
    assert [n.position(0, i) for i in (0, 1, 2, 3, 4, 5, 6, 7, 8, 9)] == [0, 4, 8, 1, 5, 9, 2, 6, 3, 7]


def test_specforge_sharded_run_writes_rank_folders_from_zero():
    # the planner's per-rank export: rank-0000R/ on shard R (slurm.py); 1,000 rows (a 0..599, b 600..999)
    # dealt to 3 ranks: shard 2 holds positions 2, 5, 8, ..., its file k position 2 + 3k: file 0 is row 2
    # (component a), file 200 row 602 (b); 334, 333, 333 rows
    n = names("specforge", world=3)
    f = n.lookup("rank-00002/rows_0-2000/data_0.ckpt")
    assert (f.rank, f.positions, f.component) == (2, (2,), "a")
    f = n.lookup("rank-00002/rows_0-2000/data_200.ckpt")
    assert (f.rank, f.positions, f.component) == (2, (602,), "b")
    assert n.lookup("rank-00001/rows_0-2000/data_333.ckpt") == rundir.NOT_IN_MANIFEST   # rank 1 has 333 rows
    assert n.lookup("rows_0-2000/data_0.ckpt") == rundir.NOT_IN_MANIFEST               # no rank folder
    assert n.lookup("rank-00003/rows_0-2000/data_0.ckpt") == rundir.NOT_IN_MANIFEST
    assert sum(1 for _ in n.expected()) == 1000


def test_speculators_files_are_draws_of_the_prepared_turn_rows():
    # 1.5 turns per conversation of a, 2 of b: 900 + 800 = 1,700 prepared rows, hs_0 .. hs_1699;
    # mean bytes = (900 x 1000 + 800 x 3000) / 1700 = 3,300,000 / 1700
    n = names("speculators", hand_plan(files=(1.5, 2.0)), world=2)
    f = n.lookup("hs_1699.safetensors")
    assert f.draw and f.component is None and f.rank == 1
    assert f.predicted_bytes == pytest.approx(3_300_000 / 1700)
    assert n.lookup("hs_1700.safetensors") == rundir.NOT_IN_MANIFEST
    assert n.lookup("sub/hs_1.safetensors") == rundir.UNKNOWN


def test_modelopt_names_say_the_component_and_a_hub_row():
    n = names("modelopt", hand_plan(local=(True, False)))
    f = n.lookup("b-7.pt")          # hub component b, row 7: position 600 + 7
    assert (f.positions, f.component, f.predicted_bytes) == ((607,), "b", 3000.0)
    f = n.lookup("a-12345.pt")      # local a: line 12345 of its file, only the component is known
    assert (f.positions, f.component) == (None, "a")
    assert n.lookup("zz-1.pt") == rundir.NOT_IN_MANIFEST
    assert n.lookup("b-400.pt") == rundir.NOT_IN_MANIFEST


def test_nemo_shards_hold_256_rows_each():
    n = names("nemo-automodel")
    # shard 2: rows 512..767 = a 512..599 (88 x 1000) + b 600..767 (168 x 3000) = 88,000 + 504,000
    f = n.lookup("shard-000002.safetensors")
    assert f.positions == range(512, 768) and f.predicted_bytes == 592_000 and f.kind == "shard"
    assert n.lookup("shard-000003.safetensors").positions == range(768, 1000)
    assert n.lookup("shard-000004.safetensors") == rundir.NOT_IN_MANIFEST
    assert n.lookup("shard-000001.safetensors.tmp") == rundir.TEMPORARY
    assert n.lookup("manifest.json").kind == "meta"
    assert sum(1 for _ in n.expected()) == 4


def test_deepspec_rank_index_holds_the_rank_block():
    n = names("deepspec", world=2)
    f = n.lookup("_tmp/rank_1/samples.local.idx")
    assert f.kind == "index" and f.positions == range(500, 1000)
    assert n.lookup("_tmp/rank_0/shard-local-00000.bin").kind == "shard"
    assert n.lookup("_tmp/rank_2/samples.local.idx") == rundir.NOT_IN_MANIFEST
    assert n.lookup("samples.idx.tmp") == rundir.TEMPORARY


def test_naming_refuses_a_layout_without_files():
    m = build_manifest(Scenario(mix=[{"id": "openorca", "rows": 10}], layout="seed-article"))
    with pytest.raises(PlannerInputError, match="--layout"):
        rundir.naming(m)


def test_row_plan_sums_to_the_plan():
    from planner.planning import plan
    s = Scenario(mix=[{"id": "openorca", "rows": 600}, {"id": "sharegpt", "rows": 400}], layout="specforge-dflash")
    m = build_manifest(s)
    p = rundir.row_plan(m, "specforge-dflash")
    full = plan(s)
    assert p.planned and p.total == 1000 and p.starts == (0, 600)
    assert p.bytes == pytest.approx(full.storage_bytes, rel=1e-9)
    assert p.tokens == pytest.approx(full.tokens, rel=1e-9)


# ---------------------------------------------------------------- the scan
def test_scan_matches_and_skips_each_with_its_reason(tmp_path):
    run = tmp_path / "run"
    outside = tmp_path / "secret"
    touch(outside)
    for i in (0, 1, 650):
        touch(run / "rows_0-2000" / f"data_{i}.ckpt", size=100 + i)
    touch(run / "rows_0-2000" / "data_2.ckpt", mtime=time.time())             # being written
    touch(run / "hs_3.safetensors")                                            # speculators' name
    touch(run / "notes.txt")
    touch(run / "rows_4000-6000" / "data_5000.ckpt")                            # past the manifest
    (run / "link").symlink_to(outside)
    (run / "inner").symlink_to(run / "notes.txt")
    os.mkfifo(run / "fifo")
    n = names("specforge")
    s = rundir.scan(run, n, others=rundir.other_namings(n))
    assert sorted(s.found) == ["rows_0-2000/data_0.ckpt", "rows_0-2000/data_1.ckpt", "rows_0-2000/data_650.ckpt"]
    assert s.found["rows_0-2000/data_650.ckpt"].size == 750
    reasons = dict((p, r) for p, r in s.skipped)
    assert reasons == {"rows_0-2000/data_2.ckpt": rundir.YOUNG, "hs_3.safetensors": rundir.OTHER_LAYOUT,
                       "notes.txt": rundir.UNKNOWN, "rows_4000-6000/data_5000.ckpt": rundir.NOT_IN_MANIFEST,
                       "link": rundir.SYMLINK_OUT, "inner": rundir.SYMLINK_IN, "fifo": rundir.SPECIAL}
    assert s.complete and s.files_skipped == 7
    assert os.listdir(run) and not (outside.parent / "secret").is_symlink()


def test_scan_is_bounded_and_reports_progress(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for i in range(25_000):
        (run / f"hs_{i}.safetensors").touch()
    seen = []
    n = names("speculators", hand_plan(rows=(20_000, 10_000)))
    s = rundir.scan(run, n, max_entries=12_000, progress=seen.append, now=time.time() + 3600)
    assert not s.complete and s.entries == 12_000 and seen == [10_000]
    assert len(s.found) == 12_000 and s.skipped_counts[rundir.OVER_BOUND] == 1


def test_scan_recheck_drops_a_file_that_changed(tmp_path, monkeypatch):
    run = tmp_path / "run"
    touch(run / "hs_0.safetensors")
    touch(run / "hs_1.safetensors")
    real = rundir._recheck

    def grow(root, out):      # the pipeline appends to hs_1 between the listing and the recheck
        with open(run / "hs_1.safetensors", "ab") as fh:
            fh.write(b"more")
        os.utime(run / "hs_1.safetensors", (OLD, OLD))
        real(root, out)
    monkeypatch.setattr(rundir, "_recheck", grow)
    s = rundir.scan(run, names("speculators"))
    assert list(s.found) == ["hs_0.safetensors"] and s.skipped == [("hs_1.safetensors", rundir.CHANGING)]


def test_scan_refuses_a_run_dir_that_is_not_a_folder(tmp_path):
    (tmp_path / "f").write_text("x")
    for bad in (tmp_path / "f", tmp_path / "missing", ""):
        with pytest.raises(PlannerInputError, match="RUN_DIR"):
            rundir.scan(bad, names("speculators"))


def test_scan_does_not_descend_too_deep(tmp_path):
    run = tmp_path / "run"
    deep = run.joinpath(*["d"] * (rundir.MAX_DEPTH + 2))
    touch(deep / "x")
    s = rundir.scan(run, names("speculators"))
    assert s.skipped_counts[rundir.TOO_DEEP] == 1 and not s.found


def test_specforge_expects_only_the_files_its_dataloader_writes():
    # 1,000 rows, 2 ranks of 500, D = 3 DP processes each: blocks 167, 167, 166 (start 0, 167, 334);
    # each process gets ceil(500 / 3) = 167 rows and, in batches of 32 with the last partial one
    # dropped (specforge/data/utils.py:231-240), writes 5 x 32 = 160 files from its start
    n = rundir.SpecForgeNaming(layout_presets()["specforge-dflash"], hand_plan(), world=2, dp=3, batch=32)
    assert n.written(1) == [range(0, 160), range(167, 327), range(334, 494)]
    assert sum(1 for _ in n.expected()) == 2 * 3 * 160
    # batch 1: every row of the block (the last process's 166, not the 167 it is handed)
    n1 = rundir.SpecForgeNaming(layout_presets()["specforge-dflash"], hand_plan(), world=2, dp=3, batch=1)
    assert [len(r) for r in n1.written(0)] == [167, 167, 166]


def test_naming_takes_the_manifests_batch():
    m = build_manifest(Scenario(mix=[{"id": "openorca", "rows": 100}], layout="specforge-dflash"))
    assert rundir.naming(m).batch == 32            # SpecForge --batch-size default (prepare_hidden_states.py:138)
    assert sum(1 for _ in rundir.naming(m).expected()) == 96
    with pytest.raises(PlannerInputError, match="--batch-size"):
        rundir.naming(m, batch=0)
