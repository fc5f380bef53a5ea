"""The report: one self-contained HTML file (no script, no external asset: inline CSS only) with the
verdict, the road from the article's storage, the headline figures with their bands, Compare and the
assumptions with their sources, laid out to print. Every text that reaches it is escaped."""
from __future__ import annotations

from planner import __version__
from planner.plan import Plan
from planner.report import article_comparison
from planner.text import html_escape

from drafter_dashboard.compare import compared, fmt_figure, input_differences

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111; margin: 2em auto;
       max-width: 60em; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #999; }
table { border-collapse: collapse; width: 100%; margin: .5em 0; }
th, td { border: 1px solid #bbb; padding: .25em .5em; text-align: left; vertical-align: top; }
td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.verdict { font-size: 1.1em; padding: .6em .8em; border: 2px solid #333; }
.bar { background: #4a7ab0; height: .9em; display: inline-block; vertical-align: middle;
       -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.muted { color: #555; font-size: .9em; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } tr { break-inside: avoid; } }
"""


def _e(x: object) -> str:
    return html_escape(x)


def _table(header: list[str], rows: list[list[object]], numeric: set[int] = frozenset()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f'<td class="n">{_e(c)}</td>' if i in numeric else f"<td>{_e(c)}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _verdict(v) -> str:
    """The verdict (planner.verdict.Verdict) and its break-evens."""
    if v is None:
        return ""
    out = f'<h2>Verdict</h2><p class="verdict">{_e(v.sentence)}</p>'
    rows = [[k.replace("_", " "), "no value inside its bounds" if val is None else
             f"${val:,.2f}" if "usd" in k else f"{val:,.3g}",
             v.flips_to.get(k) or ""] for k, val in v.breakeven.items()]
    return out + _table(["break-even: the input", "the value at which the cheapest way changes", "then cheapest"],
                        rows, {1})


def _waterfall(title: str, steps: list[tuple[str, float, str]], unit: str) -> str:
    """A printable waterfall: each step's figure, a bar of its size and why (planner.report's steps)."""
    if not steps:
        return ""
    top = max(max(v for _, v, _ in steps), 1e-9)
    rows = "".join(
        f'<tr><td>{_e(name)}</td><td class="n">{v:,.2f} {_e(unit)}</td>'
        f'<td><span class="bar" style="width:{12 * v / top:.2f}em"></span></td><td>{_e(why)}</td></tr>'
        for name, v, why in steps)
    return (f"<h2>{_e(title)}</h2><table><thead><tr><th>step</th><th>after it</th><th></th><th>why</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>")


def build(current: Plan, others: dict[str, Plan], verdict=None, steps=(), hours_steps=(), unit: str = "TB") -> str:
    """The report of plan `current` with its verdict, compared with `others` (the pinned and saved
    scenarios); storage in `unit` (TB or TiB)."""
    plans = {"current": current, **others}
    shown = compared(unit)
    head_rows = []
    for label, unit, get, band_of in shown:
        band = band_of(current)
        head_rows.append([label, fmt_figure(unit, get(current)),
                          "" if band is None else f"{fmt_figure(unit, band[0])} - {fmt_figure(unit, band[1])}"])
    compare = ""
    if others:
        rows = [[label] + [fmt_figure(unit, get(p)) for p in plans.values()] for label, unit, get, _ in shown]
        diffs = input_differences({k: p.scenario for k, p in plans.items()})
        compare = ("<h2>Compare</h2>" + _table(["figure", *plans], rows, set(range(1, len(plans) + 1)))
                   + ("<p>Inputs that differ:</p>" + _table(["input", *plans], [[k, *v] for k, v in diffs.items()])
                      if diffs else "<p>No input differs.</p>"))
    article = article_comparison(current)
    s = current.scenario
    return "".join([
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<title>Drafter data plan</title>", f"<style>{CSS}</style></head><body>",
        "<h1>Drafter data plan</h1>",
        f'<p class="muted">drafter data planner {_e(__version__)}; layout {_e(s.layout)}, target {_e(s.model)}, '
        f"{current.samples:,.0f} training rows. Every number is an estimate with its source (Assumptions).</p>",
        _verdict(verdict),
        _waterfall("From the article's storage to this plan's", [(x.step, x.storage_bytes / 1e12, x.why)
                                                                  for x in steps], "TB"),
        _waterfall("From the article's extraction hours to this plan's", [(x.step, x.hours, x.why)
                                                                          for x in hours_steps], "h"),
        "<h2>Headline figures</h2>", _table(["figure", "this plan", "95% band"], head_rows, {1, 2}),
        compare,
        "<h2>Against the article</h2>",
        _table(list(article[0]), [list(r.values()) for r in article]) if article else "",
        "<h2>Assumptions</h2>",
        _table(["name", "value", "tag", "source"], [[a.name, a.value, a.tag, a.source] for a in current.assumptions]),
        "</body></html>\n"])
