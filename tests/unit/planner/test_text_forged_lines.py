"""Third-party text never prints a line of its own nor reorders a line (issue 36, item 6): a newline in a
run directory's file name or in a pickle's module name printed whole lines ("rank 0: complete ...
nothing to resume"), and bidi controls (U+202E and the rest) passed to the terminal as they were.
Everything shown goes through planner.text.printable (ids.UNSHOWN_PATTERN); shell words through
export.commands.quote, which escapes the same characters."""
from __future__ import annotations

import io
import json
import re
import zipfile

from tests.unit.planner.runs.test_status_suspect import _cli, _specforge_run, _status, make_run  # noqa: F401

FORGED = "  rank 0: complete 3 of 3 files (3 rows)"
# a bidi override, an isolate, a line separator, a zero-width joiner: each would move or hide text
BIDI = "\u202e\u2066\u2028\u200d"


def _pickle_importing(module: str, attr: str) -> bytes:
    """A torch.save-shaped archive whose data.pkl imports module.attr by STACK_GLOBAL (protocol 4): two
    SHORT_BINUNICODE strings (0x8c, a length byte, UTF-8), which may hold a newline (GLOBAL's cannot)."""
    def s(x: str) -> bytes:
        b = x.encode()
        return b"\x8c" + bytes([len(b)]) + b
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("archive/data.pkl", b"\x80\x04" + s(module) + s(attr) + b"\x93.")
    return b.getvalue()


def _no_forged_line(text: str) -> None:
    lines = text.split("\n")
    assert not any(line.startswith(FORGED) for line in lines), text
    assert not re.search(r"[\u202a-\u202e\u2066-\u2069\u2028\u2029\u200d]", text), ascii(text)


def test_status_prints_a_hostile_module_name_and_file_name_on_their_own_line(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    evil = _pickle_importing(f"os\n{FORGED}{BIDI}", "system")
    # rank 0's data_1 imports a module named with a newline; beside it a file named with one
    _specforge_run(run["out"], **{"rank-00000/rows_0-2000/data_1.ckpt": evil,
                                  f"rank-00000/rows_0-2000/x\n{FORGED}{BIDI}.ckpt": b"x"})
    rc, text, err = _status(run, capsys, "--verify")
    assert rc == 0, err
    _no_forged_line(text + err)
    # four ranks, four rank lines; the reason on its suspect line, its newline and bidi shown escaped
    assert sum(line.startswith("  rank ") for line in text.split("\n")) == 4
    said = next(line for line in text.split("\n") if "imports os" in line)
    assert "imports os\\x0a  rank 0: complete 3 of 3 files (3 rows)\\u202e\\u2066\\u2028\\u200d.system" in said
    # export --resume: the suspect lines (stderr) and the script's rm line
    rc, out, err = _cli(capsys, "export", str(run["manifest"]), "--format", "specforge", "--scheduler", "slurm",
                        "--resume", str(run["out"]), "--verify")
    assert rc == 0, err
    _no_forged_line(out + err)


def test_calibrate_prints_a_hostile_file_name_and_reason_on_one_line(tmp_path, monkeypatch, capsys):
    run = make_run(tmp_path, monkeypatch)
    _specforge_run(run["out"], **{"rank-00000/rows_0-2000/data_1.ckpt": _pickle_importing(f"os\n{FORGED}", "system"),
                                  f"rank-00000/rows_0-2000/x\n{FORGED}{BIDI}.ckpt": b"x"})
    rc, text, err = _cli(capsys, "calibrate", str(run["out"]), "--manifest", str(run["manifest"]), "--world", "4",
                         "--elapsed-hours", "1")
    assert rc == 0, err
    _no_forged_line(text + err)
    assert "x\\x0a  rank 0: complete 3 of 3 files (3 rows)\\u202e\\u2066\\u2028\\u200d.ckpt" in text, text
    # --json: the names in JSON's ASCII escapes (\n, \u202e), never a raw bidi control on the terminal
    rc, text, err = _cli(capsys, "calibrate", str(run["out"]), "--manifest", str(run["manifest"]), "--world", "4",
                         "--elapsed-hours", "1", "--json")
    assert rc == 0 and text.isascii(), ascii(text)
    assert f"rank-00000/rows_0-2000/x\n{FORGED}{BIDI}.ckpt" in json.loads(text)["files_skipped"]["examples"][0]
