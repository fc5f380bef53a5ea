"""planner/safe_io.py called directly: reads capped at the limit, outputs checked, writes whole or not at all."""
from __future__ import annotations

import os

import pytest

from planner.errors import PlannerInputError
from planner.safe_io import atomic_write, atomic_writer, check_output, read_capped


def test_read_capped_reads_the_limit_and_refuses_one_byte_more(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_bytes(b"x" * 10)
    assert read_capped(f, "--manifest", "manifest", limit=10) == b"x" * 10     # exactly the cap: read
    with pytest.raises(PlannerInputError, match=r"^--manifest: .* it is over the 9-byte limit for a manifest$"):
        read_capped(f, "--manifest", "manifest", limit=9)                     # 10 > 9
    with pytest.raises(PlannerInputError, match="directory"):
        read_capped(tmp_path, "--manifest", "manifest")


def test_check_output_refusals(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    for path, needle in (("", "give an output file path"), ("  ", "give an output file path"),
                         (f"{tmp_path}/", "it is a directory"), (str(link), "symbolic link"),
                         (str(tmp_path / "no" / "m.yaml"), "does not exist")):
        with pytest.raises(PlannerInputError, match=needle):
            check_output(path, "--out")
    mine = tmp_path / "in.yaml"
    mine.write_text("a: 1\n")
    with pytest.raises(PlannerInputError, match="also an input of this command"):
        check_output(mine, "--out", inputs=[tmp_path / "missing.yaml", mine])   # a missing input is skipped
    assert check_output(tmp_path / "new.yaml", "--out") == tmp_path / "new.yaml"


def test_atomic_write_replaces_whole_with_the_umask_mode(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("old")
    old = os.umask(0o027)
    try:
        atomic_write(f, "new é", field="--out")
    finally:
        os.umask(old)
    assert f.read_bytes() == "new é".encode()
    assert os.stat(f).st_mode & 0o777 == 0o640                 # 0o666 & ~0o027 (mkstemp alone: 0o600)
    assert os.listdir(tmp_path) == ["m.yaml"]                  # no temp file left


def test_a_failing_block_leaves_the_old_file_and_no_temp(tmp_path):
    f = tmp_path / "m.yaml"
    f.write_text("old")
    with pytest.raises(RuntimeError), atomic_writer(f, field="--out") as fh:
        fh.write("half")
        raise RuntimeError("stop")
    assert f.read_text() == "old" and os.listdir(tmp_path) == ["m.yaml"]
