"""Issue 23: a first start builds the catalog database before its first metric; the build inserts
its rows column by column (DuckDB unnests the lists), so it no longer imports pandas, most of its time.
The rows are the ones the old pandas path wrote: tests/unit/planner/catalog checks the catalog's figures."""
import json
import subprocess
import sys

from tests.helpers import ROOT


def test_building_the_catalog_imports_no_pandas(tmp_path):
    code = ("import sys; from planner.catalog.stats import get_catalog; c = get_catalog(); "
            "import json; print(json.dumps([len(c.components), 'pandas' in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PLANNER_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    count, pandas = json.loads(out.stdout.strip().splitlines()[-1])
    assert count >= 16 and pandas is False
    assert list((tmp_path / "home").glob("catalog-*.duckdb"))        # it was built, not found


def test_a_profiled_components_empty_fields_are_nulls(tmp_path, monkeypatch):
    """A measured component carries None where it has no figure (median, hub repo, local path): the
    column-by-column insert writes NULL there, as the frame did."""
    import duckdb

    from planner.catalog.stats import _insert
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    con.execute("CREATE TABLE t (id VARCHAR, n BIGINT, x DOUBLE, j JSON, b BOOLEAN)")
    _insert(con, "t", [("a", 1, None, None, True), ("b", None, 2.5, '{"k": 1}', False)])
    _insert(con, "t", [])
    assert con.execute("SELECT * FROM t ORDER BY id").fetchall() == [("a", 1, None, None, True),
                                                                    ("b", None, 2.5, '{"k": 1}', False)]
