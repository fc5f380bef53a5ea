"""planner export's own parts (planner/cli/export.py): the flags refused in a combination where they would
do nothing, the rank count checked against the rows, and a scheduler script written only over its own kind.
What the scripts say: export/test_commands*.py, export/test_slurm*.py, tests/cluster/."""
from __future__ import annotations

import argparse

import pytest

from planner.cli._common import CliError
from planner.cli.export import _check_flags, _is_slurm_script
from planner.cli.main import main
from planner.errors import PlannerInputError
from tests.helpers import mine_manifest


def flags(**kw) -> argparse.Namespace:
    base = {"format": "specforge", "nodes": None, "scheduler": None, "resume": None, "verify": False, "mix": None,
            "out": None}
    return argparse.Namespace(**{**base, **kw})


def test_an_unsharded_export_is_not_sharded():
    assert _check_flags(flags()) is False
    assert _check_flags(flags(format="yaml")) is False


@pytest.mark.parametrize("kw", [{"nodes": 2}, {"scheduler": "slurm"}, {"scheduler": "ray", "nodes": 10_000}])
def test_nodes_or_a_scheduler_make_it_sharded(kw):
    assert _check_flags(flags(**kw)) is True


@pytest.mark.parametrize("kw, message", [
    ({"format": "deepspec", "nodes": 2}, "--nodes: a multi-node export is made for speculators, specforge, "
                                         "modelopt, not deepspec"),
    ({"format": "yaml", "scheduler": "slurm"}, "--scheduler: a multi-node export is made for speculators, "
                                               "specforge, modelopt, not yaml"),
    ({"resume": "out"}, "--resume: writes a --scheduler slurm|ray script for the unfinished ranks; give --scheduler"),
    ({"verify": True}, "--verify: reads the files of a run for --resume; give --resume RUN_DIR"),
    ({"mix": "mix.jsonl"}, "--mix: places the rows of a run for --resume; give --resume RUN_DIR"),
    ({"out": "run.sh"}, "--out: writes the --scheduler script; without --scheduler the commands go to stdout"),
])
def test_a_flag_that_would_do_nothing_is_refused_by_name(kw, message):
    with pytest.raises(CliError) as e:
        _check_flags(flags(**kw))
    assert str(e.value) == message


@pytest.mark.parametrize("nodes", [0, -3, 10_001])      # 1 to MAX_SHARDS (10,000)
def test_the_node_count_is_bounded(nodes):
    with pytest.raises(PlannerInputError, match="--nodes"):
        _check_flags(flags(nodes=nodes))


def test_only_the_planners_own_scripts_are_replaceable():
    assert _is_slurm_script(b"#!/bin/bash\n# drafter planner: a Slurm array job ...")
    assert _is_slurm_script(b"#!/usr/bin/env python3\n# drafter planner: a Ray driver ...")
    assert not _is_slurm_script(b"#!/bin/bash\n# my own job\n")
    assert not _is_slurm_script(b"")


@pytest.fixture()
def manifest(tmp_path, monkeypatch):
    return mine_manifest(tmp_path, monkeypatch, layout="specforge-eagle3", extraction_gpus=4, gpus_per_node=2,
                         extraction_nodes=2)


def test_more_ranks_than_rows_is_refused(manifest, capsys):
    # 3 rows selected: 3 ranks is the most with a row each, 4 leaves one empty
    assert main(["export", str(manifest), "--format", "specforge", "--nodes", "4"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["planner: error: --nodes: 4 ranks but the manifest selects 3 rows; give at most 3 nodes so "
                   "that every rank has a row"]
    assert main(["export", str(manifest), "--format", "specforge", "--nodes", "3"]) == 0


def test_the_script_goes_to_out_and_a_foreign_file_is_kept(manifest, tmp_path, capsys):
    out = tmp_path / "run.sh"
    assert main(["export", str(manifest), "--format", "specforge", "--scheduler", "slurm", "--out", str(out)]) == 0
    # the manifest's 2 extraction nodes are the default rank count
    assert capsys.readouterr().out == f"2 ranks -> {out}: sbatch it (add --dry-run to see each rank's commands)\n"
    assert _is_slurm_script(out.read_bytes())
    assert main(["export", str(manifest), "--format", "specforge", "--scheduler", "slurm", "--out", str(out)]) == 0
    mine = tmp_path / "notes.sh"
    mine.write_text("#!/bin/bash\necho mine\n")
    assert main(["export", str(manifest), "--format", "specforge", "--scheduler", "ray", "--out", str(mine)]) == 2
    assert "--out" in capsys.readouterr().err and mine.read_text() == "#!/bin/bash\necho mine\n"
