"""The Slurm array script's guards (issue 21): values that reach its shell tests are bounded, a test
that errors stops the rank, and the environment it reads is parsed strictly.

Each test here failed on the script before these guards (checked by running it against
planner/export/slurm.py and sharding.py of commit 644e52b):
- a manifest the planner cannot plan fell back to its own predicted.storage_bytes, unbounded
  (-1e30 passed the df check; 1e30 is not an integer bash can compare);
- `df -Pk` splits its line on blanks, so a filesystem named "tank fs" moved "Used" into the
  "Available" column;
- PLANNER_DRY_RUN=true ran the pipeline for real (only "1" meant a dry run);
- SLURM_ARRAY_TASK_ID=18446744073709551617 wrapped to rank 1 in bash's 64-bit arithmetic.

The small manifest of test_sharding: 10 rows dealt to N = 4 ranks, ranks 0 and 1 predicted 6,000,000
bytes (need 7,500,001), rank 2 2,000,000 (needs 2,500,001), rank 3 5,000,000 (needs 6,250,001).
"""
import json
import subprocess

import pytest
import yaml

from planner.cli.main import main as cli_main
from planner.export import sharding, slurm
from planner.export.manifest import ManifestError, load_manifest
from tests.unit.planner.export.test_commands import hostile_manifest
from tests.unit.planner.export.test_sharding import BASH, N, calls, sbatch, small, stand_ins  # noqa: F401  (small: fixture)

PLANNED_BYTES = sharding.bytes_per_row        # the real one (the fixture `small` patches it)
pytestmark = pytest.mark.skipif(BASH is None, reason="bash runs the generated scripts")

# GNU df, answering both forms the way coreutils does for a tmpfs mounted as "tank fs" (8 MiB, 6 MiB
# used: the real `df -Pk` line on this machine was "tank fs  8192  6144  2048  75% /mnt"); only
# 2,048 KiB = 2,097,152 bytes are free, less than every rank needs.
DF_WITH_A_SPACE = """#!/bin/sh
case "$*" in
  "-Pk -- "*) echo 'Filesystem     1024-blocks  Used Available Capacity Mounted on'
              echo "tank fs               8192  6144      2048      75% /mnt" ;;
  "-k --output=avail -- "*) echo ' Avail'; echo ' 2048' ;;
  *) echo "df stand-in: unexpected $*" >&2; exit 1 ;;
esac
"""


def _script(small_, fmt="modelopt"):
    tmp_path, manifest, data = small_
    # the shards every rank of Model-Optimizer and SpecForge reads (its check_input wants its own)
    assert cli_main(["materialize", str(manifest), "--shards", str(N), "--out", str(data / "mix.jsonl")]) == 0
    return slurm.slurm_script(load_manifest(manifest), fmt, N, str(manifest))


def test_a_filesystem_name_with_a_space_is_read_right(small):
    tmp_path = small[0]
    env = stand_ins(tmp_path)
    (tmp_path / "bin" / "df").write_text(DF_WITH_A_SPACE)
    out = sbatch(_script(small), tmp_path, env)
    # 2,097,152 bytes free: every rank stops before it starts; -P's "Used" (6,144 KiB = 6,291,456 bytes)
    # would have let ranks 2 (2,500,001 bytes) and 3 (6,250,001) through
    assert [out[r][2] for r in range(N)] == [1] * N, out
    assert "needs 7500001 bytes (predicted 6000000 x 1.25), 2097152 free" in out[0][1]
    assert "needs 2500001 bytes (predicted 2000000 x 1.25), 2097152 free" in out[2][1]
    assert calls(env) == []


@pytest.mark.parametrize("value", ["true", "yes", "TRUE", "1"])
def test_planner_dry_run_true_or_yes_is_a_dry_run(small, value):
    tmp_path = small[0]
    env = {**stand_ins(tmp_path), "PLANNER_DRY_RUN": value}
    out = sbatch(_script(small), tmp_path, env)
    assert calls(env) == []                                  # nothing ran
    assert all(rc == 0 and f"rank {r} would run: python" in o for r, (o, _, rc) in out.items())


@pytest.mark.parametrize("value", ["2", "y", "on; touch PWNED", " "])
def test_an_unknown_planner_dry_run_is_refused(small, value):
    tmp_path = small[0]
    env = {**stand_ins(tmp_path), "PLANNER_DRY_RUN": value}
    out = sbatch(_script(small), tmp_path, env)
    assert calls(env) == [] and not (tmp_path / "PWNED").exists()
    assert all(rc == 2 and "PLANNER_DRY_RUN=" in err and "give 1/true/yes" in err for _, err, rc in out.values())


@pytest.mark.parametrize("task", ["18446744073709551617", "0000000001" + "0" * 30, "9" * 10, "4", "-1", "1 ", "0x1"])
def test_a_task_id_that_is_not_a_rank_is_refused(small, task):
    tmp_path = small[0]
    env = {**stand_ins(tmp_path), "SLURM_ARRAY_TASK_ID": task}
    job = tmp_path / "job.sh"
    job.write_text(_script(small))
    r = subprocess.run([BASH, str(job)], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "SLURM_ARRAY_TASK_ID=" in r.stderr, r.stderr
    assert calls(env) == []
    ok = subprocess.run([BASH, str(job)], env={**env, "SLURM_ARRAY_TASK_ID": "000000001"}, capture_output=True,
                        text=True, timeout=30)
    assert ok.returncode == 0 and [c["task"] for c in calls(env)] == ["000000001"]   # rank 1, leading zeros


@pytest.mark.parametrize("total", [-1e30, 1e30, 0.0])
def test_a_manifest_whose_rows_the_plan_does_not_cover_is_refused(small, total, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sharding, "bytes_per_row", PLANNED_BYTES)
    # an edited manifest: its second component renamed to a catalog id its scenario does not plan, and
    # its own predicted total set to `total` (the figure the old fallback trusted)
    _, manifest, _ = small
    data = yaml.safe_load(manifest.read_text())
    data["predicted"]["storage_bytes"] = total
    assert data["components"][1]["id"] == "other"
    data["components"][1]["id"] = "openorca"
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(data))
    job = tmp_path / "job.sbatch"
    assert cli_main(["export", str(edited), "--format", "modelopt", "--scheduler", "slurm", "--nodes", "4",
                     "--out", str(job)]) == 2
    err = capsys.readouterr().err
    # the renamed row also names no hub source, while the catalog's openorca has one: that is said first
    # (issue 21: a received manifest never silently points a shipped id elsewhere), then the refusal
    assert err.endswith("planner: error: components: openorca has rows but no place in the plan of the manifest's "
                        "scenario; a sharded export needs the scenario that made these components\n")
    assert err.count("\n") == 2 and err.startswith("planner: warning: hub source replaced: components.openorca")
    assert not job.exists()


def test_a_manifest_the_planner_cannot_plan_is_refused():
    # built without validation (a custom model without its layer count): the plan raises
    m = hostile_manifest("x; touch PWNED")
    with pytest.raises(ManifestError, match="^scenario: the planner cannot plan this manifest"):
        slurm.slurm_script(m, "modelopt", 2, "m.yaml")


def test_every_byte_figure_in_the_script_is_a_bounded_integer(small):
    text = _script(small)
    arrays = [line for line in text.splitlines() if line.startswith(("PREDICTED_BYTES=(", "NEED_BYTES=("))]
    assert len(arrays) == 2
    for line in arrays:
        values = line.split("(", 1)[1].rstrip(")").split()
        assert len(values) == N and all(v.isdigit() and int(v) < 2**53 for v in values)
    assert json.dumps(arrays)        # (plain ASCII)
