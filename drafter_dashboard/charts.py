"""Charts: two always shown, the others one at a time (each figure costs milliseconds to build)."""
from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from drafter_dashboard import figures
from planner.decisions.sensitivity import METRICS, sensitivity
from planner.planning import Plan

MORE = ["Rows vs bytes", "Timeline", "Sensitivity", "Storage vs rows", "Quality frontier"]


def frontier_points(p: Plan, base: Plan | None, proposals: dict | None) -> list[tuple]:
    """This mix, the full mix and each strategy's proposal, all for the same serving workload (the
    full mix's, or the one the scenario sets)."""
    from planner.decisions.trim import quality_of
    workload = (base or p).quality.workload
    q = quality_of(p, workload)
    points = [("this mix", p.storage_bytes_compressed, q.acceptance_length, q.acceptance_low, q.acceptance_high)]
    if base is not None:
        b = base.quality
        points.append(("full mix", base.storage_bytes_compressed, b.acceptance_length, b.acceptance_low,
                       b.acceptance_high))
    for name, (r, _) in (proposals or {}).items():
        if r is not None:
            points.append((name, r.storage_bytes_after, r.quality_after, r.quality_low_after, r.quality_high_after))
    return points


SYMBOLS = ["circle", "diamond", "square", "triangle-up", "x", "star", "cross", "pentagon"]


def readable_frontier(fig: go.Figure) -> go.Figure:
    """Points of the frontier often sit on one spot (every strategy meets the same storage budget; the
    untrimmed mix is the full mix): a legend names them instead of labels written over each other, each
    with its own symbol. Each point stays at its own value (issue 35: a sideways spread in data units put
    the full mix's 82.11 TB at 83.10 TB): the points of one spot are drawn largest first, open, so that
    the smaller ones on top stay visible."""
    spots: dict[float, int] = {}
    for i, tr in enumerate(fig.data):
        spot = round(float(tr.x[0]), 1)
        k = spots[spot] = spots.get(spot, -1) + 1
        tr.update(mode="markers", showlegend=True, marker=dict(
            size=max(17 - 5 * k, 7), symbol=SYMBOLS[i % len(SYMBOLS)] + ("-open" if k == 0 else ""),
            line=dict(width=2)))
    fig.update_layout(showlegend=True, title=dict(text="Storage against expected acceptance length (estimate)",
                                                  font=dict(size=13)),
                      legend=dict(orientation="h", y=-0.25), height=400)
    return fig


def readable_sensitivity(fig: go.Figure) -> go.Figure:
    """The swing labels inside a bar long enough to hold them, else beside it, with room either side so
    that no label runs into the assumption names."""
    span = max([abs(x) for tr in fig.data for x in tr.x] + [1.0])
    for tr in fig.data:     # "no effect" and short bars keep their label outside; an end that moves nothing
        # while the other end does says nothing (its "+0.0%" would sit on the other end's bar)
        tr.update(textposition=["auto" if abs(x) > 0.4 * span else "outside" for x in tr.x], insidetextanchor="middle",
                  text=["" if abs(x) < 0.05 and t != "no effect" else t for x, t in zip(tr.x, tr.text, strict=True)])
    fig.update_xaxes(range=[-2.2 * span, 2.2 * span])
    fig.update_layout(title=dict(font=dict(size=13)))
    return fig


TITLE_CHARS = 44      # a title line at 13-17 px fits a half-width chart at 1024 px (tests/browser: no title cut)


def wrapped_title(fig: go.Figure) -> go.Figure:
    """The title in lines of at most TITLE_CHARS, the top margin grown to hold them: plotly never wraps a
    title, and half a 1024 px page cut "Extraction: the article's 264 h to this plan's 31.9 h" (issue 35)."""
    import textwrap
    text = fig.layout.title.text or ""
    lines = textwrap.wrap(text.replace("<br>", " "), TITLE_CHARS) or [""]
    fig.update_layout(title=dict(text="<br>".join(lines), font=dict(size=13)),
                      margin=dict(t=24 + 18 * len(lines)))
    return fig


def render(p: Plan, unit: str, catalog, budget_bytes: float | None = None, base: Plan | None = None,
           proposals: dict | None = None) -> None:
    binary = unit == "TiB"
    left, right = st.columns(2)
    if p.scenario.uniform is not None:
        left.info("A uniform mix has one component: the charts by component have nothing to split. The timeline, "
                  "the sensitivity and storage against rows still apply.")
    else:
        left.plotly_chart(wrapped_title(figures.storage_by_component(p, binary)), width="stretch", key="fig_storage")
    with right:
        pick = st.segmented_control("Chart", MORE, key="w_chart", default=MORE[0],
                                    label_visibility="collapsed") or MORE[0]
        if pick == "Rows vs bytes":
            fig = figures.rows_vs_bytes(p)
        elif pick == "Timeline":
            fig = figures.phase_timeline(p)
        elif pick == "Sensitivity":
            which = st.radio("Figure", list(METRICS), key="w_sens_metric", horizontal=True,
                             format_func=lambda k: METRICS[k][0])
            fig = readable_sensitivity(figures.sensitivity_chart(sensitivity(p.scenario, p, catalog), which))
        elif pick == "Quality frontier":
            fig = readable_frontier(figures.quality_frontier(frontier_points(p, base, proposals), binary))
            if not proposals:
                st.caption("Trim in the Budget tab to see each strategy's proposal here.")
        else:
            fig = figures.storage_vs_rows(p, binary, budget_bytes)
        st.plotly_chart(wrapped_title(fig), width="stretch", key="fig_more")


def waterfall(steps: list[tuple[str, float, str]], unit: str, title: str) -> go.Figure:
    """(step, value after it, why) from the article's figure to this plan's: the first bar whole, each
    step the change its cause makes (a step that changes nothing stays flat), then "this plan" whole.
    Plotly draws a `total` bar at the running sum of the bars before it, not at its `y` (issue 35: the
    capture pass was drawn at 10 h, labelled 31.9 h), so every step, the last included, is a
    `relative` change and the closing total is that sum: each bar's top is the value its label says."""
    names = [name for name, _, _ in steps] + ["this plan"]
    values = [v for _, v, _ in steps]
    measure = ["absolute"] + ["relative"] * (len(steps) - 1) + ["total"]
    y = [values[0]] + [b - a for a, b in zip(values, values[1:], strict=False)] + [values[-1]]
    labels = [f"{v:,.1f}" for v in values] + [f"{values[-1]:,.1f}"]
    # a flat step's label would sit on its neighbour's: it says nothing (its hover still does)
    shown = [t if i in (0, len(values)) or abs(y[i]) >= 0.005 * max(values) else "" for i, t in enumerate(labels)]
    why = [w for _, _, w in steps] + [f"this plan's figure: {labels[-1]} {unit}"]
    fig = go.Figure(go.Waterfall(x=names, y=y, measure=measure, text=shown, textposition="outside",
                                 cliponaxis=False, customdata=list(zip(labels, why, strict=True)),
                                 hovertemplate="%{x}: %{customdata[0]} " + unit + "<br>%{customdata[1]}<extra></extra>",
                                 increasing=dict(marker_color="#e6550d"), decreasing=dict(marker_color="#31a354"),
                                 totals=dict(marker_color="#3182bd")))
    fig.update_layout(title=dict(text=title, font=dict(size=13)), yaxis_title=unit, showlegend=False,
                      **{**figures.LAYOUT, "height": 380})
    fig.update_xaxes(tickangle=-30)
    return fig


def article_road(p: Plan, storage_steps, hours_steps, unit: str) -> None:
    """The Against-the-article tab: the storage and extraction-hours waterfalls and the steps' reasons."""
    div = 2**40 if unit == "TiB" else 1e12
    left, right = st.columns(2)
    left.plotly_chart(wrapped_title(waterfall([(x.step, x.storage_bytes / div, x.why) for x in storage_steps], unit,
                                f"Storage: the article's {storage_steps[0].storage_bytes / div:,.1f} {unit} to this "
                                f"plan's {storage_steps[-1].storage_bytes / div:,.1f}")),
                      width="stretch", key="fig_road")
    right.plotly_chart(wrapped_title(waterfall([(x.step, x.hours, x.why) for x in hours_steps], "h",
                                 f"Extraction: the article's {hours_steps[0].hours:,.0f} h to this plan's "
                                 f"{hours_steps[-1].hours:,.1f} h")), width="stretch", key="fig_road_hours")
