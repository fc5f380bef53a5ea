"""Plotly figure builders: pure functions of a Plan (tests read their data without a browser)."""
from __future__ import annotations

import plotly.graph_objects as go

from planner.decisions.sensitivity import METRICS, Swing
from planner.planning import Plan

FAMILY_COLOURS = {"general": "#4C78A8", "code": "#F58518", "agentic": "#E45756", "tool": "#54A24B",
                  "math": "#B279A2", "custom": "#9D755D", "uniform": "#888888"}
LAYOUT = dict(margin=dict(l=10, r=10, t=40, b=10), height=340, legend=dict(orientation="h", y=-0.2))


def _unit(binary: bool) -> tuple[str, float]:
    return ("TiB", 2**40) if binary else ("TB", 1e12)


def storage_by_component(p: Plan, binary: bool = False) -> go.Figure:
    unit, div = _unit(binary)
    comps = sorted(p.components, key=lambda c: c.storage_bytes, reverse=True)
    fig = go.Figure()
    for fam in dict.fromkeys(c.family for c in comps):
        sub = [c for c in comps if c.family == fam]
        fig.add_bar(x=[c.id for c in sub], y=[c.storage_bytes / p.scenario.compression / div for c in sub],
                    name=fam, marker_color=FAMILY_COLOURS.get(fam, "#999"),
                    hovertemplate="%{x}: %{y:,.2f} " + unit + "<extra>" + fam + "</extra>")
    fig.update_layout(title=f"Hidden-state storage by component ({unit})", barmode="stack",
                      xaxis=dict(type="category", categoryorder="array", categoryarray=[c.id for c in comps],
                                 tickangle=-35, automargin=True), **LAYOUT)
    return fig


def rows_vs_bytes(p: Plan) -> go.Figure:
    comps = p.components
    fig = go.Figure()
    fig.add_bar(x=[c.id for c in comps], y=[100 * c.share_of_rows for c in comps], name="share of rows",
                marker_color="#9ecae1")
    fig.add_bar(x=[c.id for c in comps], y=[100 * c.share_of_bytes for c in comps], name="share of bytes",
                marker_color="#e6550d")
    fig.update_layout(title="Share of rows against share of bytes (%)", barmode="group",
                      xaxis=dict(type="category", tickangle=-35, automargin=True), **LAYOUT)
    return fig


def phase_timeline(p: Plan) -> go.Figure:
    """Offline, online and disaggregated, phase by phase, in wall-clock hours from the start."""
    e, t = p.extraction, p.training
    rows = [
        ("offline", "regenerate (decode)", e.decode_hours, "#6baed6"),
        ("offline", "capture (prefill + write)", e.capture_hours, "#3182bd"),
        ("offline", "gather (node network)", p.gather_hours, "#fdae6b"),
        ("offline", "transfer", p.transfer_hours, "#fd8d3c"),
        ("offline", "training", t.offline_wall_hours, "#31a354"),
        ("online", "regenerate (decode)", e.decode_hours, "#6baed6"),
        ("online", "training + target forward", t.online_wall_hours, "#74c476"),
        ("disaggregated", "regenerate (decode)", t.disaggregated_regeneration_hours, "#6baed6"),
        ("disaggregated", f"capture streams to trainers ({t.disaggregated_bound}-bound)",
         t.disaggregated_wall_hours - t.disaggregated_regeneration_hours, "#9e9ac8"),
    ]
    fig = go.Figure()
    start = {"offline": 0.0, "online": 0.0, "disaggregated": 0.0}
    for mode, phase, hours, colour in rows:
        fig.add_bar(y=[mode], x=[hours], base=[start[mode]], orientation="h", name=phase, marker_color=colour,
                    hovertemplate=f"{phase}: %{{x:,.1f}} h<extra>{mode}</extra>", showlegend=mode == "offline" or
                    phase.startswith(("training +", "capture streams")))
        start[mode] += hours
    fig.update_layout(title="Timeline of the phases (wall-clock hours)", barmode="overlay",
                      xaxis_title="hours", **LAYOUT)
    return fig


def sensitivity_chart(swings: list[Swing], metric: str = "wall_days") -> go.Figure:
    """One figure (`metric`: storage_tb, wall_days or usd) across each assumption's range: a panel
    readable at half width, the value labels outside the bars, "no effect" where the range moves
    nothing (e.g. training MFU when offline training waits on the disk)."""
    title = METRICS[metric][0]
    names = [s.assumption for s in swings]
    base = swings[0].base[metric] if swings else 0

    def pct(v):
        return 100 * (v - base) / base if base else 0.0
    lo = [pct(s.low[metric]) for s in swings]
    hi = [pct(s.high[metric]) for s in swings]
    none = [abs(a) < 0.05 and abs(b) < 0.05 for a, b in zip(lo, hi, strict=True)]
    fig = go.Figure()
    fig.add_bar(y=names, x=lo, orientation="h", name="low end", marker_color="#6baed6",
                text=[("no effect" if n else f"{s.low_label}: {v:+.1f}%") for s, v, n in zip(swings, lo, none,
                                                                                             strict=True)],
                textposition="outside", cliponaxis=False, hovertemplate="%{y}: %{text}<extra></extra>")
    fig.add_bar(y=names, x=hi, orientation="h", name="high end", marker_color="#fd8d3c",
                text=[("" if n else f"{s.high_label}: {v:+.1f}%") for s, v, n in zip(swings, hi, none, strict=True)],
                textposition="outside", cliponaxis=False, hovertemplate="%{y}: %{text}<extra></extra>")
    span = max([abs(x) for x in lo + hi] + [1.0])
    fig.update_layout(title=f"Sensitivity of {title.lower()}: change from this plan (%)", barmode="overlay",
                      xaxis=dict(range=[-1.6 * span, 1.6 * span], ticksuffix="%"),
                      yaxis=dict(automargin=True), **{**LAYOUT, "height": 60 + 36 * max(len(names), 4)})
    return fig


def storage_vs_rows(p: Plan, binary: bool = False, budget_bytes: float | None = None) -> go.Figure:
    """Storage is linear in rows kept under proportional scaling of this mix."""
    unit, div = _unit(binary)
    total_rows = sum(c.rows for c in p.components)
    xs = [total_rows * f / 20 for f in range(21)]
    ys = [p.storage_bytes_compressed * f / 20 / div for f in range(21)]
    fig = go.Figure()
    fig.add_scatter(x=xs, y=ys, mode="lines", name="scaling this mix")
    fig.add_scatter(x=[total_rows], y=[p.storage_bytes_compressed / div], mode="markers", name="this plan",
                    marker=dict(size=12, color="#e6550d"))
    sc, n = p.scenario, p.nodes
    cap_tb, what = ((sc.shared_capacity_tb, "shared filesystem") if n.placement == "shared" else
                    (sc.disk_capacity_tb and sc.disk_capacity_tb * n.writing_nodes,
                     f"disks of {n.writing_nodes} node{'s' * (n.writing_nodes > 1)}"))
    if cap_tb:
        cap = cap_tb * 1e12 / div
        fig.add_hline(y=cap, line_dash="dot", annotation_text=f"{what} {cap:,.1f} {unit}")
    if budget_bytes:
        fig.add_hline(y=budget_bytes / div, line_dash="dash", line_color="#31a354",
                      annotation_text=f"budget {budget_bytes / div:,.1f} {unit}")
    fig.update_layout(title=f"Storage against rows kept ({unit})", xaxis_title="rows", yaxis_title=unit, **LAYOUT)
    return fig


def quality_frontier(points: list[tuple[str, float, float, float, float]], binary: bool = False) -> go.Figure:
    """Storage against expected acceptance length: (label, storage bytes, tau, low, high) per mix
    (this mix, the full mix, each strategy's proposal for the budget), the band as error bars."""
    unit, div = _unit(binary)
    fig = go.Figure()
    for label, nbytes, tau, low, high in points:
        fig.add_scatter(x=[nbytes / div], y=[tau], mode="markers+text", name=label, text=[label],
                        textposition="top center", marker=dict(size=11),
                        error_y=dict(type="data", symmetric=False, array=[high - tau], arrayminus=[tau - low]),
                        hovertemplate=f"{label}: %{{x:,.2f}} {unit}, tau %{{y:.2f}} "
                                      f"({low:.2f}-{high:.2f})<extra></extra>")
    fig.update_layout(title=f"Storage ({unit}) against expected acceptance length (an estimate)",
                      xaxis_title=unit, yaxis_title="acceptance length", showlegend=False, **LAYOUT)
    return fig


def quality_curves(marks: list[tuple[str, float]] | None = None) -> go.Figure:
    """The quality estimate's curves (planner/presets/quality.yaml): for each drafter kind, tau
    against training tokens fitted through its published points (error bars: their reading error),
    the curves re-fitted through the points moved by that error either way (dotted); `marks` adds
    (label, tokens) vertical lines such as the default mix's effective tokens."""
    from planner.phases.quality import fit_curve, quality_presets, tokens_of
    colours = {"eagle3": "#4C78A8", "dflash": "#E45756", "eagle1": "#54A24B"}
    fig = go.Figure()
    for kind, d in quality_presets().drafters.items():
        pts = sorted((tokens_of(p.samples, p.component, p.tokens_per_sample), p.tau, p.error, p.label)
                     for p in d.scaling.points)
        lo, hi = pts[0][0] / 30, pts[-1][0] * 30
        xs = [lo * (hi / lo) ** (i / 80) for i in range(81)]
        colour = colours.get(kind, "#888")
        for label, (x1, t1, _e1), (x2, t2, _e2), dash in (
                ("fit", pts[0][:3], pts[-1][:3], "solid"),
                ("steep", (pts[0][0], pts[0][1] - pts[0][2], 0), (pts[-1][0], pts[-1][1] + pts[-1][2], 0), "dot"),
                ("flat", (pts[0][0], pts[0][1] + pts[0][2], 0), (pts[-1][0], pts[-1][1] - pts[-1][2], 0), "dot")):
            A, h = fit_curve([(x1, t1), (x2, t2)])
            fig.add_scatter(x=xs, y=[1 + A * x / (x + h) for x in xs], mode="lines", line=dict(color=colour, dash=dash),
                            name=f"{d.name}" if label == "fit" else f"{d.name} ({label})",
                            showlegend=label == "fit", hoverinfo="skip")
        fig.add_scatter(x=[p[0] for p in pts], y=[p[1] for p in pts], mode="markers", marker=dict(color=colour, size=9),
                        error_y=dict(type="data", array=[p[2] for p in pts]), name=f"{d.name}: published",
                        text=[p[3] for p in pts], hovertemplate="%{text}: %{x:.3s} tokens, tau %{y:.2f}<extra></extra>",
                        showlegend=False)
    for label, tokens in marks or []:
        fig.add_vline(x=tokens, line_dash="dash", line_color="#555", annotation_text=label,
                      annotation_position="top left")
    fig.update_layout(title="Acceptance length against training tokens: the published points and the fitted curves",
                      xaxis=dict(type="log", title="training tokens (samples x tokens per sample)"),
                      yaxis_title="acceptance length (tau)", **{**LAYOUT, "height": 420})
    return fig


COST_PARTS = (("offline", "extraction", "#3182bd"), ("offline", "storage rent", "#9ecae1"),
              ("offline", "transfer", "#fd8d3c"), ("offline", "training", "#31a354"),
              ("online", "regeneration", "#6baed6"), ("online", "training + target forward", "#74c476"))


def cost_breakdown(plans: dict[str, Plan]) -> go.Figure:
    """Each scenario's dollars, offline and online side by side, stacked by phase. Scenario names are
    the user's (a link's): escaped, since plotly draws tick and hover text as HTML (<a href>, <b>)."""
    from planner.text import html_escape
    names = list(plans)
    shown = [html_escape(n) for n in names]
    value = {
        "extraction": lambda c: c.extraction, "storage rent": lambda c: c.storage, "transfer": lambda c: c.transfer,
        "training": lambda c: c.training_offline, "regeneration": lambda c: c.regeneration,
        "training + target forward": lambda c: c.training_online,
    }
    fig = go.Figure()
    for mode, part, colour in COST_PARTS:
        fig.add_bar(x=shown, y=[value[part](plans[n].cost_usd) for n in names], name=f"{mode}: {part}",
                    offsetgroup=mode, marker_color=colour,
                    hovertemplate=f"%{{x}} {mode}, {part}: $%{{y:,.0f}}<extra></extra>")
    # ids and names as categories: "2024-01-01" or "1e3" must not turn the axis into dates or numbers
    # (which drops the bars of "current" and "pinned")
    fig.update_layout(title="Dollars by phase: offline (left) and online (right) per scenario", barmode="relative",
                      yaxis_title="USD", xaxis=dict(type="category"), **LAYOUT)
    return fig
