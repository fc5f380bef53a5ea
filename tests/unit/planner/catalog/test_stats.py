"""The DuckDB component catalog: what it ships, how well its fits match what is published, and
how it is read."""
import json
import threading

import duckdb
import pytest

from planner import default_scenario, plan
from planner.catalog.stats import get_catalog
from tests.helpers import run_cli

TAGS = {"published", "third-party", "estimate", "measured", "yours"}


def test_components_json_lists_the_default_mix_with_provenance():
    r = run_cli("components", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    default = [c for c in rows if c["in_default_mix"]]
    assert len(default) == 10
    assert sum(c["rows_in_mix"] for c in default) == 913_786
    assert sum(c["rows_in_mix"] for c in default if c["family"] == "tool") == 114_000
    for c in rows:
        for key in ("id", "name", "family", "hf_repo", "rows_in_mix", "rows_available", "mean_tokens", "provenance"):
            assert key in c
        for number in ("rows_in_mix", "rows_available", "mean_tokens", "turns", "assistant_share",
                       "length_distribution"):
            prov = c["provenance"][number]
            assert prov["tag"] in TAGS and len(prov["source"]) > 5, (c["id"], number)
    # the reconstruction is said to be one
    assert "reconstruction" in next(c for c in rows if c["id"] == "openorca")["provenance"]["rows_in_mix"]["source"]


def test_components_table_is_readable():
    r = run_cli("components")
    assert r.returncode == 0
    assert "default mix: 913,786 rows" in r.stdout
    assert "Open-Orca/OpenOrca" in r.stdout


@pytest.mark.parametrize("cid", ["openorca", "sharegpt", "ultrachat", "evol_codealpaca", "magicoder_oss",
                                 "code_alpaca", "agentic", "glaive_fc", "qwen35_fc", "hermes_fc"])
def test_fits_reproduce_published_mean_and_median(cid):
    c = get_catalog().components[cid]
    atoms = c.conversation
    assert atoms.mean_tokens() == pytest.approx(c.mean_tokens, rel=0.01)
    if c.median_tokens:
        assert atoms.median_tokens() == pytest.approx(c.median_tokens, rel=0.05)
    # O(bins), never O(samples)
    assert len(atoms) < 1000 and len(c.turn) < 1000
    assert atoms.rows.sum() == pytest.approx(1.0)


def test_agentic_bins_as_published():
    atoms = get_catalog().components["agentic"].conversation
    # bins by deepest prompt: 8-16K 28%, 32-64K 32%; the fit is rescaled by <1% to the mean, so
    # compare shares with a tolerance of two points
    share = lambda lo, hi: atoms.rows[(atoms.tokens >= lo) & (atoms.tokens < hi)].sum()  # noqa: E731
    assert share(8192, 16384) == pytest.approx(0.28, abs=0.02)
    assert share(32768, 65536) == pytest.approx(0.32, abs=0.02)
    # p95 published 69,274 (deepest prompt); ours within 10%
    assert atoms.quantile(0.95) == pytest.approx(69_274, rel=0.10)


def test_per_turn_rows_fan_out():
    c = get_catalog().components["sharegpt"]
    # ~5.6 assistant turns: one training row per turn; a single-turn set keeps one row
    assert c.turn.rows.sum() == pytest.approx(5.6, rel=0.05)
    assert get_catalog().components["openorca"].turn.rows.sum() == pytest.approx(1.0)


def test_catalog_is_read_only():
    cat = get_catalog()
    with pytest.raises(duckdb.Error):
        cat.cursor().execute("DELETE FROM components")
    assert cat.cursor().execute("SELECT count(*) FROM components").fetchone()[0] >= 10


def test_one_cursor_per_thread_and_concurrent_plans_agree():
    cat = get_catalog()
    cursors, results = {}, []

    def work(i):
        cursors[i] = cat.cursor()
        cursors[i].execute("SELECT sum(rows_in_mix) FROM components WHERE in_default_mix").fetchone()
        results.append(plan(default_scenario()).storage_bytes)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(c) for c in cursors.values()}) == 6
    assert len(set(results)) == 1


def test_overlap_warning_uses_the_expected_duplicates_formula():
    s = default_scenario().with_changes(mix=[{"id": "glaive_fc", "rows": 60_000}, {"id": "qwen35_fc", "rows": 42_422}])
    w = [x for x in plan(s).warnings if "overlap" in x]
    # 60,000 x 42,422 x 112,960 / (112,960 x 202,000) = 12,600.6
    assert len(w) == 1 and "~12,601 duplicate rows" in w[0]
    alone = default_scenario().with_changes(mix=[{"id": "glaive_fc", "rows": 60_000}])
    assert not [x for x in plan(alone).warnings if "overlap" in x]


def test_licence_conflict_is_a_warning():
    assert any("CC BY-NC" in w for w in plan(default_scenario()).warnings)


def test_warnings_are_attached_to_their_components():
    p = plan(default_scenario())
    notes = {c.id: c.notes for c in p.components}
    assert any("overlap" in n for n in notes["glaive_fc"]) and any("overlap" in n for n in notes["qwen35_fc"])
    assert any("CC BY-NC" in n for n in notes["ultrachat"])
    assert any("cap cuts" in n for n in notes["agentic"])
    assert notes["code_alpaca"] == []


def test_a_failed_build_leaves_no_temp_file(tmp_path):
    from planner.catalog import stats
    target = tmp_path / "catalog-0123456789abcdef.duckdb"
    # a shipped catalog without its default spread fails after DuckDB has created the temp file
    with pytest.raises(KeyError):
        stats.build(target, {"components": [], "overlaps": [], "default_mix_total": 0}, {"components": []})
    assert list(tmp_path.iterdir()) == []
