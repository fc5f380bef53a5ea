"""The figures the docs quote in prose are the tool's (issue 35 item 12: docs/guide.md quoted $705/$823
and $5,750 where the tool printed $917/$1,956 and $6,883). tests/test_readme.py runs the docs' commands
and compares their shown output; this file checks what the prose says: every double-quoted text with a
figure in the tool's docs is a piece of the default plan's output, and the storage paragraph's figures
are recomputed."""
from __future__ import annotations

import json
import re

import pytest

from planner.cli.main import main as cli_main
from tests.test_readme import ROOT

# the docs that describe the tool (docs/research/ quotes other projects' pages, docs/history.md past releases)
TOOL_DOCS = ["README.md", "docs/guide.md", "docs/model.md", "docs/architecture.md", "docs/threat-model.md"]


def _run(capsys, *argv: str) -> str:
    capsys.readouterr()
    assert cli_main(list(argv)) == 0
    return capsys.readouterr().out


def _flat(text: str) -> str:
    return " ".join(text.split())


def quotes(doc: str) -> list[str]:
    """The double-quoted texts with a digit, outside fenced blocks and inline code, one line each."""
    text = re.sub(r"```.*?```", "", (ROOT / doc).read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [_flat(q) for q in re.findall(r'"([^"]{1,600})"', text) if re.search(r"\d", q)]


@pytest.fixture(scope="module")
def default_output():
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli_main(["estimate"]) == 0
        assert cli_main(["estimate", "--json"]) == 0
    text = out.getvalue()
    data = json.loads(text[text.index("\n{") + 1:])
    findings = " ".join(f"{f['text']} {f['fix']}" for f in data["findings"])
    return _flat(text + " " + findings)


def test_the_scan_finds_the_guides_quotes():
    assert any(q.startswith("lossless first: a capture batch of 1 on 2 extraction nodes")
               for q in quotes("docs/guide.md"))


@pytest.mark.parametrize("doc", TOOL_DOCS)
def test_every_quoted_figure_is_the_tools(doc, default_output):
    # a quote may leave parts out with '...': each part, in order, is in the output
    stale = []
    for q in quotes(doc):
        at = 0
        for part in (p.strip(" ;,") for p in q.split("...")):
            at = default_output.find(part, at) if part else at
            if at < 0:
                stale.append(f"{doc}: {q!r}: {part!r} is not in the default plan's output")
                break
    assert stale == []


def test_the_storage_paragraphs_figures_are_the_tools(capsys):
    # docs/guide.md "Storage as it is paid": a month of network volume, then the time the plan holds it
    text = _flat((ROOT / "docs" / "guide.md").read_text(encoding="utf-8"))
    m = re.search(r"costs \$([\d,]+) offline, and offline would be the cheapest only from ([\d.]+) epochs; prorated "
                  r"to the ([\d.]+) days held \(`--placement shared`\), \$([\d,]+) offline, and offline "
                  r"would be the cheapest only from ([\d.]+) epochs", text)
    assert m, "the storage paragraph changed shape: update this test with it"
    # the states on a network volume (--placement shared), where offline runs (a price alone leaves them on
    # the nodes' disks, which 82 TB do not fit: offline blocked, no break-even)
    month = json.loads(_run(capsys, "estimate", "--placement", "shared", "--storage-months", "1", "--json"))
    held = json.loads(_run(capsys, "estimate", "--placement", "shared", "--json"))
    assert held["cost_usd"]["storage_preset"] == "network-volume" and held["verdict"]["feasible"]["offline"]
    assert m[1] == f"{month['verdict']['totals_usd']['offline']:,.0f}"
    assert m[2] == f"{month['verdict']['breakeven']['epochs']:.3g}"
    assert m[3] == f"{held['cost_usd']['storage_days_held']:.3g}"
    assert m[4] == f"{held['verdict']['totals_usd']['offline']:,.0f}"
    assert m[5] == f"{held['verdict']['breakeven']['epochs']:.3g}"


def test_the_layout_tables_storage_is_each_layouts_plan():
    # docs/model.md's layout table: its last column is the default mix's storage in each layout
    # (`planner estimate --layout ID`), TB of 10^12 bytes to 0.1 as written there
    from planner import default_scenario, plan
    text = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z0-9.-]+)` \|.*\| ([\d,.]+) TB \|$", text, re.M)
    assert len(rows) >= 8 and {"specforge-dflash", "nemo-automodel"} <= {r[0] for r in rows}
    s = default_scenario()
    wrong = [(layout, shown, f"{plan(s.with_changes(layout=layout)).storage_bytes_compressed / 1e12:,.1f}")
             for layout, shown in rows]
    assert [w for w in wrong if w[1] != w[2]] == []


def test_beyond_one_nodes_arithmetic_is_the_plans(capsys):
    # docs/guide.md "Beyond one node": the default plan's bytes over 4 nodes, each share against its disk
    from planner import default_scenario, plan
    text = _flat((ROOT / "docs" / "guide.md").read_text(encoding="utf-8"))
    m = re.search(r"([\d.]+) TB / 4 = ([\d.]+) TB a node fits the ([\d.]+) TB disk", text)
    assert m, "the sentence changed shape: update this test with it"
    p = plan(default_scenario())
    assert m[1] == f"{p.storage_bytes_compressed / 1e12:.2f}" and m[2] == f"{p.storage_bytes_compressed / 4e12:.2f}"
    assert f"{p.storage_bytes_compressed / 1e12:.2f} TB" in _flat(" ".join(quotes("docs/guide.md")))
