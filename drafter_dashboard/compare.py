"""Scenarios side by side: undo/redo, a pinned baseline for every delta, up to four saved scenarios,
and the compare view (every headline figure, the differences, the cost by phase)."""
from __future__ import annotations

from typing import Callable

import pandas as pd
import streamlit as st

from drafter_dashboard.safe_text import md_text
from drafter_dashboard.state import (
    DELTA,
    DELTA_MODES,
    MAX_SAVED,
    PINNED,
    REDO,
    SAVED,
    UNDO,
    forget,
    pin,
    redo,
    save,
    undo,
)
from planner.decisions.headlines import DECIMALS as HEADLINE_DECIMALS
from planner.decisions.headlines import HEADLINES
from planner.planning import Plan, plan
from planner.scenario import Scenario, input_name
from planner.units import bytes_to

# the figures compared: a headline of planner/decisions/headlines.py (its getter, unit and which way is better)
# and the name this table gives it (the report's names, which users' saved tables carry)
FIGURES = [("samples", "Samples"), ("storage", "Storage"), ("gpu_days", "Extraction"),
           ("extraction_days", "Extraction"), ("transfer_hours", "Transfer"),
           ("train_offline_gpu_days", "Training offline"), ("train_online_gpu_days", "Training online"),
           ("usd", "Total offline"), ("usd_online", "Total online"), ("usd_disaggregated", "Total disaggregated"),
           ("days", "Wall-clock offline"), ("days_online", "Wall-clock online"),
           ("acceptance_length", "Acceptance length"), ("speedup", "Speedup")]
SHOWN_UNIT = {"rows": "", "$": "USD"}      # a headline's unit as the table shows it (bytes: TB or TiB)
# as the headline shows them (planner/decisions/headlines.py), by the unit this table shows
DECIMALS = {"": HEADLINE_DECIMALS["rows"], "USD": HEADLINE_DECIMALS["$"], "TB": HEADLINE_DECIMALS["bytes"],
            "TiB": HEADLINE_DECIMALS["bytes"],
            **{u: HEADLINE_DECIMALS[u] for u in ("GPU-days", "days", "h", "tau", "x")}}
# the 95% bands shown under their figure: headline name -> (low, high) in the headline's unit, or None
BANDS = {
    "storage": lambda p: None if p.storage_bytes_low is None else
    (p.storage_bytes_low / p.scenario.compression, p.storage_bytes_high / p.scenario.compression),
    "extraction_days": lambda p: None if p.extraction.sampled_wall_hours_low is None else
    (p.extraction.sampled_wall_hours_low / 24, p.extraction.sampled_wall_hours_high / 24),
    "acceptance_length": lambda p: (p.quality.acceptance_low, p.quality.acceptance_high),
    "speedup": lambda p: (p.quality.speedup_low, p.quality.speedup_high),
}


def compared(unit: str = "TB") -> list[tuple[str, str, Callable, Callable]]:
    """The compared figures in display units, storage in `unit` (TB or TiB): (label, shown unit,
    getter, band getter returning (low, high) or None)."""
    out = []
    for name, label in FIGURES:
        h = HEADLINES[name]
        shown = unit if h.unit == "bytes" else SHOWN_UNIT.get(h.unit, h.unit)
        div = bytes_to(1, unit) if h.unit == "bytes" else 1.0
        band = BANDS.get(name, lambda p: None)
        out.append((f"{label} ({shown})" if shown else label, shown,
                    lambda p, g=h.get, d=div: g(p) * d,
                    lambda p, b=band, d=div: None if (v := b(p)) is None else (v[0] * d, v[1] * d)))
    return out


def fmt_figure(unit: str, v: float) -> str:
    """A figure as text, rounded for its unit (whole dollars and rows, tau to 0.01)."""
    text = f"{v:,.{DECIMALS.get(unit, 2)}f}"
    return f"${text}" if unit == "USD" else f"{text}x" if unit == "x" else text


def _flat(d: object, prefix: str = "") -> dict[str, str]:
    """A scenario's fields as dotted names; a mix as one field per component (`mix.<id>`)."""
    if isinstance(d, dict):
        out = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    if prefix == "mix." and isinstance(d, list):
        return {f"mix.{m['id']}": f"{m['rows']:,} rows" + ("" if m.get("include", True) else ", unchecked")
                + ("" if m.get("selection", "uniform") == "uniform" else f", {m['selection']}") for m in d}
    return {prefix[:-1]: "" if d is None else str(d)}


def input_differences(scenarios: dict[str, Scenario]) -> dict[str, list[str]]:
    """The inputs (dotted scenario fields, a mix component each) whose values differ between the
    scenarios: name -> the value in each, in order ('' when a scenario does not have it)."""
    flat = {name: _flat(s.model_dump(mode="json")) for name, s in scenarios.items()}
    keys = sorted(set().union(*flat.values()))
    out = {}
    for k in keys:
        values = [f.get(k, "") for f in flat.values()]
        if len(set(values)) > 1:
            out[k] = values
    return out


def controls(s: Scenario, sb) -> None:
    """Undo, redo, pin and save, in `sb` (a container at the top of the sidebar)."""
    a, b, c = sb.columns(3)
    if a.button("Undo", key="w_undo", disabled=not st.session_state.get(UNDO), width="stretch",
                help="back to the scenario before the last change"):
        undo()
    if b.button("Redo", key="w_redo", disabled=not st.session_state.get(REDO), width="stretch"):
        redo()
    # pin and unpin are callbacks: they set the delta mode before the run that draws its radio (the
    # metrics, and that radio above them, are drawn before these buttons)
    if st.session_state.get(PINNED) is None:
        c.button("Pin", key="w_pin", width="stretch", help="pin this scenario: every delta is then against it",
                 on_click=pin, args=(s,))
    else:
        c.button("Unpin", key="w_unpin", width="stretch", help="deltas since my last change again",
                 on_click=pin, args=(None,))
    a, b = sb.columns([3, 2])
    name = a.text_input("Save as", key="w_save_name", placeholder="a name", label_visibility="collapsed")
    if b.button("Save", key="w_save", width="stretch", help=f"keep this scenario for Compare (at most {MAX_SAVED})"):
        problem = save(name, s)
        if problem:
            sb.error(md_text(problem))
        else:
            st.session_state["_notice"] = f"Saved {name.strip()!r} for Compare"
            st.rerun()
    # the metrics read it above (page._delta_base) from the state, before this is drawn
    sb.radio("Deltas", list(DELTA_MODES), key=DELTA, format_func=DELTA_MODES.get,
             help="what each metric's small figure is the difference from")


def view(current: Plan, catalog, unit: str) -> None:
    """The Compare tab."""
    pinned: Scenario | None = st.session_state.get(PINNED)
    saved: dict[str, Scenario] = st.session_state.get(SAVED, {})
    plans: dict[str, Plan] = {"current": current}
    problems = []
    for name, s in ([("pinned", pinned)] if pinned is not None else []) + list(saved.items()):
        try:
            plans[name] = plan(s, catalog if s.uniform is None else None)
        except Exception as exc:   # a saved scenario the catalog no longer knows (an upload removed)
            problems.append(f"{name}: {exc}")
    for text in problems:
        st.warning(md_text(f"Not compared: {text}"))
    if len(plans) == 1:
        st.info("Pin a scenario or save one (sidebar, top) to compare it with the current one.")
    ref = "pinned" if "pinned" in plans else "current"
    rows = []
    shown = compared(unit)
    for label, unit_, get, _ in shown:
        d = DECIMALS.get(unit_, 2)
        row = {"figure": label}
        for name, p in plans.items():
            row[name] = round(get(p), d)
        for name in plans:
            if name != ref:
                row[f"{name} - {ref}"] = round(row[name] - row[ref], d)   # the shown figures' difference
        rows.append(row)
    for label, unit_, _, get in shown:    # each band as two rows under the figures: its low and high ends
        bands = {name: get(p) for name, p in plans.items()}
        if any(b is not None for b in bands.values()):
            for end, i in (("low", 0), ("high", 1)):
                rows.append({"figure": f"{label}, 95% band {end}",
                             **{name: None if b is None else round(b[i], DECIMALS.get(unit_, 2))
                                for name, b in bands.items()}})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="localized")
                                for c in pd.DataFrame(rows).columns if c != "figure"})
    diffs = input_differences({name: p.scenario for name, p in plans.items()}) if len(plans) > 1 else {}
    if len(plans) > 1:
        st.markdown("**Inputs that differ**" if diffs else "No input differs between these scenarios.")
    if diffs:
        st.dataframe(pd.DataFrame([{"input": input_name(k), **dict(zip(plans, v, strict=True))} for k,
                                   v in diffs.items()]),
                     hide_index=True, width="stretch")
    if saved:
        pick = st.selectbox("Remove a saved scenario", ["(keep all)"] + list(saved), key="w_forget")
        if pick != "(keep all)" and st.button("Remove", key="w_forget_go"):
            forget(pick)
            st.rerun()
    from drafter_dashboard import figures  # plotly's subplots: loaded when the Compare tab is drawn
    st.plotly_chart(figures.cost_breakdown(plans), width="stretch", key="fig_compare")
