"""planner materialize's own parts (planner/cli/materialize.py): --local parsed to one file per component id,
what it says it wrote (one file, or the span of --shards and how the rows were dealt), --hub-script never the
--out file. The rows themselves: export/test_materialize.py."""
from __future__ import annotations

import pytest

from planner.cli.main import main
from planner.cli.materialize import _is_hub_script, parse_local
from planner.errors import PlannerInputError
from planner.export import sharding
from planner.export.materialize import HUB_SCRIPT_HEAD
from tests.helpers import mine_manifest


def test_local_pairs_are_split_at_the_first_equals_sign():
    assert parse_local([]) == {}
    # a file name may itself hold '=': only the first one separates the id
    assert parse_local(["mine=a.jsonl", "other=dir/x=y.jsonl"]) == {"mine": "a.jsonl", "other": "dir/x=y.jsonl"}


@pytest.mark.parametrize("items, needle", [
    (["mine"], "give ID=FILE"),                      # no '='
    (["mine="], "give ID=FILE"),                     # no file
    (["=a.jsonl"], "give ID=FILE"),                  # no id
    (["Bad Name=a.jsonl"], "give ID=FILE"),          # not an id
    (["mine=a.jsonl", "mine=b.jsonl"], "'mine' is given twice"),
])
def test_a_bad_local_is_refused_naming_the_flag_and_value(items, needle):
    with pytest.raises(PlannerInputError) as e:
        parse_local(items)
    assert e.value.field == "--local" and e.value.value == items[-1] and needle in str(e.value)


def test_only_a_script_materialize_wrote_is_replaceable():
    assert _is_hub_script(HUB_SCRIPT_HEAD.encode())
    assert _is_hub_script(b'#!/usr/bin/env python3\n"""Materialize the hub components of a drafter-planner '
                          b'manifest into one JSONL file\n({"id" ...')
    assert not _is_hub_script(b"#!/usr/bin/env python3\nprint('mine')\n")
    assert not _is_hub_script(b"")


@pytest.fixture()
def manifest(tmp_path, monkeypatch):
    return mine_manifest(tmp_path, monkeypatch)


def test_one_file_says_its_rows(manifest, tmp_path, capsys):
    out = tmp_path / "mix.jsonl"
    assert main(["materialize", str(manifest), "--out", str(out)]) == 0
    assert capsys.readouterr().out == f"mine: 3 rows -> {out}\n"
    assert len(out.read_text().splitlines()) == 3


def test_shards_say_their_span_and_how_the_rows_were_dealt(manifest, tmp_path, capsys):
    out = tmp_path / "mix.jsonl"
    assert main(["materialize", str(manifest), "--out", str(out), "--shards", "2"]) == 0
    first, last = sharding.shard_path(str(out), 0, 2), sharding.shard_path(str(out), 1, 2)
    # 3 rows over 2 shards: divmod(3, 2) = (1, 1): 1 or 2 rows each, shard 0 the one row more (rows 0 and 2)
    assert capsys.readouterr().out.splitlines() == [
        f"mine: 3 rows -> {first} ... {last}",
        "2 shards: dealt in turn (row p of the materialized order to shard p mod 2), 1 or 2 rows each (shard 0 "
        "one row more), about 1/2 of every component and so of the bytes"]
    assert [len(open(p).read().splitlines()) for p in (first, last)] == [2, 1]


def test_the_hub_script_cannot_be_the_out_file(manifest, tmp_path, capsys):
    out = tmp_path / "mix.jsonl"
    assert main(["materialize", str(manifest), "--out", str(out), "--hub-script", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--hub-script" in err[0] and "is the same file as --out" in err[0]
    assert not out.exists()


def test_a_bad_shard_count_is_refused_before_anything_is_written(manifest, tmp_path, capsys):
    out = tmp_path / "mix.jsonl"
    assert main(["materialize", str(manifest), "--out", str(out), "--shards", "0"]) == 2
    assert "--shards" in capsys.readouterr().err and not list(tmp_path.glob("mix*"))
