"""Charts: two always shown, the others one at a time (each figure costs milliseconds to build)."""
from __future__ import annotations

import streamlit as st

from planner import figures
from planner.plan import Plan
from planner.sensitivity import sensitivity

MORE = ["Rows vs bytes", "Timeline", "Sensitivity", "Storage vs rows"]


def render(p: Plan, unit: str, catalog, budget_bytes: float | None = None) -> None:
    binary = unit == "TiB"
    left, right = st.columns(2)
    left.plotly_chart(figures.storage_by_component(p, binary), width="stretch", key="fig_storage")
    with right:
        pick = st.segmented_control("Chart", MORE, key="w_chart", default=MORE[0],
                                    label_visibility="collapsed") or MORE[0]
        if pick == "Rows vs bytes":
            fig = figures.rows_vs_bytes(p)
        elif pick == "Timeline":
            fig = figures.phase_timeline(p)
        elif pick == "Sensitivity":
            fig = figures.sensitivity_chart(sensitivity(p.scenario, p, catalog))
        else:
            fig = figures.storage_vs_rows(p, binary, budget_bytes)
        st.plotly_chart(fig, width="stretch", key="fig_more")
