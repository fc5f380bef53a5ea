"""planner/cli/trim.py: `planner trim --out` writes the trimmed manifest (moved unchanged from
tests/unit/planner/cli/test_main.py: the tests of trim's --out file and what it refuses)."""
import os
import stat
from pathlib import Path

import yaml

from tests.unit.planner.cli.test_main import cli, one_line_error

# ---------------------------------------------------------------- trim --out
TRIM = ["trim", "--budget-storage-tb", "10"]


def is_manifest(path: Path) -> bool:
    from planner.export.manifest import SCHEMA_VERSION
    return yaml.safe_load(path.read_text())["schema_version"] == SCHEMA_VERSION


def test_trim_to_a_budget_with_no_row_left_writes_nothing(tmp_path, capsys):
    out = tmp_path / "m.yaml"
    line = one_line_error(*cli(capsys, *TRIM[:1], "--budget-storage-tb", "1e-300", "--out", str(out)),
                          "--budget-storage-tb", "1e-300", "not one row fits")
    assert "bytes" in line and not out.exists()
    # an earlier manifest stays as it was
    assert cli(capsys, *TRIM, "--out", str(out))[0] == 0
    before = out.read_bytes()
    assert cli(capsys, "trim", "--budget-storage-tb", "1e-300", "--out", str(out))[0] == 2
    assert out.read_bytes() == before


def test_out_refuses_a_device(capsys):
    one_line_error(*cli(capsys, *TRIM, "--out", "/dev/null"), "--out", "'/dev/null'", "character device")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_out_refuses_a_symlink_directory_and_empty_path(tmp_path, capsys):
    target = tmp_path / "elsewhere.yaml"
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    one_line_error(*cli(capsys, *TRIM, "--out", str(link)), "--out", "symbolic link")
    assert link.is_symlink() and not target.exists()
    one_line_error(*cli(capsys, *TRIM, "--out", str(tmp_path)), "--out", "directory")
    one_line_error(*cli(capsys, *TRIM, "--out", ""), "--out", "''")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.yaml"]


def test_out_refuses_its_own_manifest_input(tmp_path, capsys):
    m = tmp_path / "m.yaml"
    assert cli(capsys, *TRIM, "--out", str(m))[0] == 0
    before = m.read_bytes()
    one_line_error(*cli(capsys, "trim", "--manifest", str(m), "--budget-storage-tb", "5", "--out", str(m)),
                   "--out", "input")
    assert m.read_bytes() == before


def test_out_never_replaces_a_file_the_planner_did_not_write(tmp_path, capsys):
    notes = tmp_path / "notes.yaml"
    notes.write_bytes(b"my: notes\n")
    one_line_error(*cli(capsys, *TRIM, "--out", str(notes)), "--out", "not a planner manifest", "--force")
    assert notes.read_bytes() == b"my: notes\n"
    binary = tmp_path / "data.bin"
    binary.write_bytes(b"\xff\xfe\x00")
    one_line_error(*cli(capsys, *TRIM, "--out", str(binary)), "--out", "not a planner manifest")
    assert binary.read_bytes() == b"\xff\xfe\x00"
    assert cli(capsys, *TRIM, "--out", str(notes), "--force")[0] == 0
    assert is_manifest(notes)


def test_out_replaces_an_earlier_manifest(tmp_path, capsys):
    m = tmp_path / "m.yaml"
    assert cli(capsys, *TRIM, "--out", str(m))[0] == 0
    first = yaml.safe_load(m.read_text())
    assert cli(capsys, "trim", "--budget-storage-tb", "5", "--out", str(m))[0] == 0
    second = yaml.safe_load(m.read_text())
    # half the budget: fewer rows in the second manifest, and no temp file left beside it
    assert sum(c["rows_selected"] for c in second["components"]) < sum(c["rows_selected"] for c in first["components"])
    assert [p.name for p in tmp_path.iterdir()] == ["m.yaml"]


def test_out_file_mode_follows_the_umask(tmp_path, capsys):
    old = os.umask(0o027)
    try:
        assert cli(capsys, *TRIM, "--out", str(tmp_path / "m.yaml"))[0] == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "m.yaml").st_mode) == 0o640   # 0o666 & ~0o027
