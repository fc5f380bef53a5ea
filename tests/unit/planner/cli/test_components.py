"""planner/cli/components.py: `planner components` lists the shipped catalog, as JSON and as a table whose last
line sums the rows of the default mix."""
from __future__ import annotations

import json

from planner.catalog.stats import get_catalog
from planner.cli.main import main


def test_json_lists_every_component_with_its_figures(capsys):
    assert main(["components", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    cat = get_catalog()
    assert [r["id"] for r in rows] == list(cat.components)
    for r in rows:
        c = cat.components[r["id"]]
        assert (r["rows_in_mix"], r["rows_available"], r["mean_tokens"], r["family"], r["in_default_mix"]) == \
            (c.rows_in_mix, c.rows_available, c.mean_tokens, c.family, c.in_default_mix)


def test_the_table_has_a_line_a_component_and_the_default_mix_total(capsys):
    assert main(["components"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cat = get_catalog()
    assert lines[0].split()[:2] == ["id", "family"]
    assert len(lines) == 1 + len(cat.components) + 1                   # header, one per component, the total
    # the total: rows in the mix of the components in the default mix, thousands with commas (in the shipped
    # catalog the components outside the default mix have 0 rows in it, so the filter is not told apart here)
    total = sum(c.rows_in_mix for c in cat.components.values() if c.in_default_mix)
    assert total != sum(c.rows_available for c in cat.components.values() if c.in_default_mix)
    assert lines[-1] == f"default mix: {total:,} rows"
    first = next(iter(cat.components.values()))
    assert lines[1].startswith(first.id) and f"{first.rows_in_mix:,}" in lines[1]
