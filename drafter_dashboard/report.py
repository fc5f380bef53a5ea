"""The report: one self-contained HTML file (no script, no external asset: inline CSS only) with the
verdict, what blocks the plan and its fixes, the headline figures with their bands, the mix component by
component, the road from the article's storage, Compare and, last and folded (open in print), the
assumptions with their sources. A jinja2 template (report.html.j2) with autoescape on: every text that
reaches it is escaped; only the page's own CSS is passed as markup."""
from __future__ import annotations

import functools
from pathlib import Path

from markupsafe import Markup

from drafter_dashboard.compare import compared, fmt_figure, input_differences
from planner import __version__
from planner.export.report import article_comparison
from planner.planning import Plan
from planner.scenario import input_name
from planner.text import printable

CSS = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #111; margin: 2em auto;
       max-width: 60em; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; }
h2 { font-size: 1.15em; margin-top: 1.6em; border-bottom: 1px solid #999; }
table { border-collapse: collapse; width: 100%; margin: .5em 0; }
th, td { border: 1px solid #bbb; padding: .25em .5em; text-align: left; vertical-align: top; }
td.n { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.verdict { font-size: 1.1em; padding: .6em .8em; border: 2px solid #333; }
.bar { background: #4a7ab0; height: .9em; display: inline-block; vertical-align: middle;
       -webkit-print-color-adjust: exact; print-color-adjust: exact; }
.muted { color: #555; font-size: .9em; }
ul.blocks li { color: #8b0000; margin-bottom: .4em; }
details.assumptions > summary { cursor: pointer; } details.assumptions > summary h2 { display: inline; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } tr { break-inside: avoid; }
  /* a closed <details> prints its content all the same */
  details::details-content { content-visibility: visible; display: contents; }
  details:not([open]) > :not(summary) { display: block; } details > summary { list-style: none; } }
"""


# the verdict's break-even inputs (planner/decisions/verdict.py INPUTS' keys) as a reader names them
BREAKEVEN_NAMES = {"storage_usd_per_tb_month": "storage price ($ per TB-month)",
                   "days_held": "days the states are held", "epochs": "training epochs",
                   "link_gbps": "transfer link speed (Gb/s)",
                   "extraction_gpu_usd_per_hour": "extraction GPU price ($ per GPU-hour)"}


@functools.cache
def _template():
    import jinja2  # loaded when the first report is made, not with the page
    # finalize: every value printed is printable() first (no newline, bidi or other control character
    # reaches the reader), then autoescaped; the page's own CSS, passed as Markup, goes through as it is
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=False,
                             finalize=lambda x: x if x is None or isinstance(x, Markup) else printable(x))
    return env.get_template("report.html.j2")


def _verdict(v) -> dict | None:
    """The verdict (planner.decisions.verdict.Verdict) and its break-evens, each input by its readable name."""
    if v is None:
        return None
    rows = [[BREAKEVEN_NAMES.get(k, k.replace("_", " ")), "no value inside its bounds" if val is None else
             f"${val:,.2f}" if "usd" in k else f"{val:,.3g}", v.flips_to.get(k) or ""]
            for k, val in v.breakeven.items()]
    return {"sentence": v.sentence, "rows": rows}


def _steps(steps: list[tuple[str, float, str]]) -> list[dict]:
    """A printable waterfall's rows: each step's figure, a bar of its size and why."""
    top = max([v for _, v, _ in steps] + [1e-9])
    return [{"name": name, "value": f"{v:,.2f}", "width": f"{12 * v / top:.2f}", "why": why} for name, v, why in steps]


def _mix(p: Plan, unit: str) -> tuple[list[str], list[list[str]]]:
    """The mix, component by component: rows selected, training rows (after the cap and drop_last), storage."""
    div = 2**40 if unit == "TiB" else 1e12
    comp = p.scenario.compression
    header = ["component", "family", "rows selected", "training rows", f"storage ({unit})", "share of bytes"]
    rows = [[c.id, c.family, f"{c.rows:,}", f"{c.training_rows:,.0f}", f"{c.storage_bytes / comp / div:,.2f}",
             f"{c.share_of_bytes:.1%}"] for c in p.components]
    rows.append(["total", "", f"{sum(c.rows for c in p.components):,}", f"{p.samples:,.0f}",
                 f"{p.storage_bytes_compressed / div:,.2f}", "100.0%"])
    return header, rows


def _compare(plans: dict[str, Plan], shown) -> dict | None:
    if len(plans) < 2:
        return None
    rows = [[label] + [fmt_figure(unit, get(p)) for p in plans.values()] for label, unit, get, _ in shown]
    diffs = input_differences({k: p.scenario for k, p in plans.items()})
    return {"names": list(plans), "rows": rows, "numeric": tuple(range(1, len(plans) + 1)),
            "diffs": [[input_name(k), *v] for k, v in diffs.items()]}


def build(current: Plan, others: dict[str, Plan], verdict=None, steps=(), hours_steps=(), unit: str = "TB") -> str:
    """The report of plan `current` with its verdict, compared with `others` (the pinned and saved
    scenarios); storage in `unit` (TB or TiB)."""
    shown = compared(unit)
    head_rows = []
    for label, unit_, get, band_of in shown:
        band = band_of(current)
        head_rows.append([label, fmt_figure(unit_, get(current)),
                          "" if band is None else f"{fmt_figure(unit_, band[0])} - {fmt_figure(unit_, band[1])}"])
    article = article_comparison(current)
    s = current.scenario
    mix_header, mix = _mix(current, unit) if s.uniform is None else ([], [])
    u = s.uniform
    return _template().render(
        css=Markup(CSS), version=__version__, layout=s.layout, model=s.model, rows=f"{current.samples:,.0f}",
        verdict=_verdict(verdict),
        blocks=[f for f in current.findings if f.severity == "blocks"],
        costs=[f for f in current.findings if f.severity == "costs"],
        headline=head_rows, mix_header=mix_header, mix=mix,
        uniform="" if u is None else f"{u.samples:,} uniform samples of {u.tokens:g} tokens ({u.response_tokens:g} "
                                     "generated), as in the seed article.",
        storage_steps=_steps([(x.step, x.storage_bytes / 1e12, x.why) for x in steps]),
        hours_steps=_steps([(x.step, x.hours, x.why) for x in hours_steps]),
        compare=_compare({"current": current, **others}, shown),
        article_header=list(article[0]) if article else [], article=[list(r.values()) for r in article],
        assumptions=[[a.name, a.value, a.tag, a.source] for a in current.assumptions]) + "\n"
