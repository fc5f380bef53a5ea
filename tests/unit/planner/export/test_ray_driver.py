"""planner/export/ray_driver.py: the Ray driver script. Its plan is JSON in a string literal; the driver is
loaded here in-process (no ray needed: the planner never imports it and neither does a dry run)."""
from __future__ import annotations

import ast
import sys

import pytest

from planner.export import sharding
from planner.export.manifest import build_manifest
from planner.export.ray_driver import MAX_RETRIES, RAY_MARK, ray_driver
from planner.scenario import Scenario


@pytest.fixture(scope="module")
def manifest():
    # 100,002 rows of one component on 4 ranks: 25,001, 25,001, 25,000, 25,000 (total // world, the first
    # total % world one more)
    return build_manifest(Scenario.model_validate({"mix": [{"id": "openorca", "rows": 100_002}]}))


def _load(text: str) -> dict:
    ns: dict = {"__name__": "ray_driver_under_test"}
    exec(compile(text, "driver.py", "exec"), ns)   # noqa: S102 - the script the module wrote, not its __main__
    return ns


def test_the_plan_is_json_in_a_literal_with_every_rank(manifest):
    text = ray_driver(manifest, "specforge", 4)
    assert text.startswith(RAY_MARK + " for specforge")
    ast.parse(text)
    plan = _load(text)["PLAN"]
    assert plan["world"] == 4 and plan["order"] == [0, 1, 2, 3] and plan["nodes"] == [[0], [1], [2], [3]]
    assert (plan["margin"], plan["max_retries"], plan["server"]) == (sharding.DISK_MARGIN, MAX_RETRIES, False)
    assert [plan["ranks"][str(r)]["rows"] for r in range(4)] == [25_001, 25_001, 25_000, 25_000]
    for r in range(4):
        rank = plan["ranks"][str(r)]
        # need = predicted x 1.25, rounded down, plus one byte (slurm.Sharded); `predicted` is shown rounded
        # down, so need lies between what its floor and its floor + 1 give
        p = rank["predicted"]
        assert p > 0 and int(p * 1.25) + 1 <= rank["need"] <= int((p + 1) * 1.25) + 1
        assert rank["input"] == plan["data_token"] + "/" + sharding.shard_path("mix.jsonl", r, 4)


def test_resumed_ranks_only_and_speculators_waits_for_a_server(manifest):
    text = ray_driver(manifest, "speculators", 4, ranks=[3, 1])
    assert "# resuming: ranks 1, 3 of 4 (the others are complete)" in text
    plan = _load(text)["PLAN"]
    assert plan["order"] == [1, 3] and sorted(plan["ranks"]) == ["1", "3"] and plan["server"] is True
    assert plan["ranks"]["1"]["input"] == plan["data_token"] + "/prepared"


def test_tokens_resolve_to_the_folders_the_environment_names(manifest, monkeypatch):
    ns = _load(ray_driver(manifest, "specforge", 2))
    plan = ns["PLAN"]
    # the tokens start with a NUL: no argument a manifest can hold is mistaken for one
    assert plan["data_token"].startswith("\0data-") and plan["out_token"].startswith("\0out-")
    monkeypatch.setenv("PLANNER_DATA_DIR", "/d/")
    monkeypatch.delenv("PLANNER_OUT_DIR", raising=False)
    assert ns["resolve"](plan["data_token"] + "/x.jsonl") == "/d/x.jsonl"
    assert ns["resolve"](plan["out_token"]) == "./hidden_states"
    assert ns["resolve"](plan["data_token"] + "x") == plan["data_token"] + "x"   # only the token or token/...
    ns["ENV"]["PLANNER_OUT_DIR"] = "/o"            # a task's variables win over the worker's
    assert ns["resolve"](plan["out_token"] + "/a") == "/o/a"


def test_free_bytes_climbs_to_an_existing_folder(manifest, tmp_path):
    ns = _load(ray_driver(manifest, "specforge", 2))
    free, where = ns["free_bytes"](str(tmp_path / "not" / "yet"))
    assert where == str(tmp_path) and free > 0


def test_a_dry_run_prints_each_ranks_commands_without_ray(manifest, monkeypatch, capsys):
    ns = _load(ray_driver(manifest, "specforge", 2))
    monkeypatch.setenv("PLANNER_DATA_DIR", "/data dir")
    monkeypatch.setattr(sys, "argv", ["driver.py", "--dry-run"])
    assert ns["main"]() == 0
    lines = capsys.readouterr().out.splitlines()
    assert {ln.split(" would run: ")[0] for ln in lines} == {"rank 0", "rank 1"}
    # the data folder with a space is quoted as bash reads it back
    assert any("'/data dir/" + sharding.shard_path("mix.jsonl", 0, 2) + "'" in ln for ln in lines)
    monkeypatch.setattr(sys, "argv", ["driver.py", "--max-retries", "101"])
    with pytest.raises(SystemExit):
        ns["main"]()
    assert "--max-retries: give 0 to 100" in capsys.readouterr().err


def test_a_hostile_manifest_path_stays_data(manifest):
    # a manifest path holding a triple quote and a newline is quoted onto its one comment line ($'...')
    text = ray_driver(manifest, "specforge", 2, manifest_path="m'''x\nimport os.yaml")
    ast.parse(text)
    assert not any(line.startswith("import os.yaml") for line in text.splitlines())
    assert "$'m\\x27\\x27\\x27x\\x0aimport os.yaml'" in text
