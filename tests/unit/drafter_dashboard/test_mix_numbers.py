"""A mix cell's number is read as the table's own input reads it (issue 36, item 8): ASCII digits,
grouped by thousands with commas or not, a decimal part; never Python float()'s wider grammar
("1_000", "5e0", Arabic-Indic digits), which the table does not take as a number."""
import json
import shutil
import subprocess

import pytest

from drafter_dashboard import mix_editor
from planner.catalog.stats import get_catalog

MIX = [{"id": "openorca", "rows": 250_430, "include": True, "selection": "uniform", "seed": 0}]


def _edit(column, value):
    msg = {"seq": 1, "edits": [{"id": "openorca", "column": column, "value": value, "seq": 1}]}
    mix, seq, errors = mix_editor.apply_table_message(MIX, msg, get_catalog(), ack=0)
    return mix[0]["rows"], errors


@pytest.mark.parametrize("typed, rows", [
    ("1000", 1000), (" 1000 ", 1000), ("1,000", 1000), ("12,345,678", None), ("2000.0", 2000), ("0", 0),
    (1500, 1500), (1500.0, 1500),                # a JSON number, as a crafted message may send
])
def test_a_number_as_the_table_types_it_is_read(typed, rows):
    got, errors = _edit("rows", typed)
    if rows is None:                             # 12,345,678 is more than openorca has: refused for that
        assert len(errors) == 1 and "12,345,678 is not allowed: extracting a row twice" in errors[0], errors
    else:
        assert (got, errors) == (rows, [])


@pytest.mark.parametrize("typed", [
    "1_000", "1_0_0_0",                          # Python's digit grouping
    "\u0661\u0660\u0660\u0660",                  # Arabic-Indic 1000
    "\u06f1\u06f0\u06f0\u06f0",                  # Extended Arabic-Indic 1000
    "\u0967\u0966\u0966\u0966",                  # Devanagari 1000
    "\uff11\uff10\uff10\uff10",                  # fullwidth 1000
    "5e0", "1e3", "1E3", "0x10", "inf", "NaN", "+5", "-0", "1.", "1,00", "10,00,000", "1 000", "1,000.",
    ",100", "", "   ", "1\u00a0000",
])
def test_anything_else_is_refused_by_name_and_changes_nothing(typed):
    got, errors = _edit("rows", typed)
    assert got == 250_430 and len(errors) == 1 and errors[0].startswith("mix: rows for openorca = "), errors
    got, errors = _edit("pct", typed)
    assert got == 250_430 and len(errors) == 1 and errors[0].startswith("mix: % of full for openorca = "), errors


def test_a_percent_takes_a_decimal_part():
    # 0.5 % and .5 % of openorca's reference count (its rows in the full mix) are the same rows
    a, b = _edit("pct", "0.5"), _edit("pct", ".5")
    assert a == b and a[1] == [] and 0 < a[0] < 250_430


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the script's own check is skipped")
def test_the_table_script_reads_the_same_pattern():
    # mix_table.js plain() builds its RegExp from the data's `number`: JavaScript reads the pattern as
    # Python does, for every string above
    cases = ["1000", "1,000", "12,345,678", "2000.0", ".5", "1_000", "\u0661\u0660", "5e0", "1,00", "10,00,000",
             "1.", "", "\uff11", "1,000."]
    script = ("const p = new RegExp('^(?:' + process.argv[1] + ')$');"
              "console.log(JSON.stringify(JSON.parse(process.argv[2]).map(s => p.test(s))))")
    out = subprocess.run(["node", "-e", script, mix_editor.NUMBER_PATTERN, json.dumps(cases)], capture_output=True,
                         text=True, timeout=30, check=True).stdout
    assert json.loads(out) == [mix_editor._NUMBER.fullmatch(s) is not None for s in cases]
