"""The budget panel: budgets, a strategy, Trim; the proposal as a diff; Apply replaces the mix."""
from __future__ import annotations

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from planner.errors import PlannerInputError, describe_validation_error
from planner.scenario import Scenario
from drafter_dashboard.safe_text import md_text
from planner.trim import STRATEGIES, Budget, trim

from drafter_dashboard.state import request_scenario

RESULT = "_trim_result"
COMPARE = "_trim_compare"      # every strategy's result for the same budget (the frontier chart reads it)
HELP = ("proportional: one fraction for all; protect: keep some whole; quality: the most expected acceptance "
        "length (an estimate); cap: the largest sequence length; value: 0.1's sum log(1+rows) heuristic, kept "
        "for scripts (prefer quality)")


def render(s: Scenario, catalog, unit: str) -> float | None:
    """Returns the storage budget in bytes (for the storage-vs-rows chart), if one is set."""
    c = st.columns(5)
    storage = c[0].number_input(f"Storage ({unit})", min_value=0.0, value=None, key="w_b_storage",
                                placeholder="no limit")
    gpu_days = c[1].number_input("Extraction GPU-days", min_value=0.0, value=None, key="w_b_gpu_days",
                                 placeholder="no limit")
    transfer = c[2].number_input("Transfer hours", min_value=0.0, value=None, key="w_b_transfer",
                                 placeholder="no limit")
    usd = c[3].number_input("Total USD (offline)", min_value=0.0, value=None, key="w_b_usd", placeholder="no limit")
    days = c[4].number_input("Wall-clock days", min_value=0.0, value=None, key="w_b_days", placeholder="no limit")
    a, b, d = st.columns([2, 3, 1])
    strategy = a.selectbox("Strategy", list(STRATEGIES), key="w_b_strategy", help=HELP)
    families = sorted({catalog.components[m["id"]].family for m in st.session_state.get("mix_rows", [])
                       if m["id"] in catalog.components})
    ids = [m["id"] for m in st.session_state.get("mix_rows", [])]
    protect = b.multiselect("Protect (kept whole)", families + ids, key="w_b_protect")
    budget_kwargs = {("storage_tib" if unit == "TiB" else "storage_tb"): storage or None,
                     "gpu_days": gpu_days or None, "transfer_hours": transfer or None, "usd": usd or None,
                     "days": days or None}
    if d.button("Trim", key="w_b_trim", type="primary", width="stretch"):
        st.session_state.pop(RESULT, None)
        st.session_state.pop(COMPARE, None)
        try:
            budget = Budget(**budget_kwargs)
            st.session_state[RESULT] = trim(s, budget, strategy, protect=protect, catalog=catalog)
            st.session_state[COMPARE] = _compare(s, budget, protect, catalog)
        except ValidationError as exc:
            st.error(md_text(f"budget: {describe_validation_error(exc)}"))
        except PlannerInputError as exc:
            st.error(md_text(f"Cannot trim: {exc}"))
    result = st.session_state.get(RESULT)
    if result is not None:
        st.markdown(f"**Proposed mix ({md_text(result.strategy)})** {md_text(result.note)}")
        diff = pd.DataFrame([{"id": ch.id, "rows now": ch.before, "proposed": ch.after,
                              "change": ch.after - ch.before} for ch in result.changes])
        st.dataframe(diff, hide_index=True, width="stretch")
        if result.max_seq_len_after != result.max_seq_len_before:
            st.write(md_text(f"Maximum sequence length: {result.max_seq_len_before} -> {result.max_seq_len_after}"))
        st.write(md_text(" · ".join(f"{u.label}: {u.share:.1%} used" for u in result.budgets)))
        st.write(md_text(f"Storage {result.storage_bytes_before / 1e12:,.2f} -> {result.storage_bytes_after / 1e12:,.2f} "
                         f"TB; expected acceptance length {result.quality_before:.2f} -> {result.quality_after:.2f} "
                         f"({result.quality_low_after:.2f}-{result.quality_high_after:.2f}, an estimate)"))
        compare = st.session_state.get(COMPARE)
        if compare:
            st.markdown("**Every strategy for this budget**")
            st.dataframe(pd.DataFrame([{"strategy": k, "storage TB": r.storage_bytes_after / 1e12,
                                        "acceptance length": r.quality_after,
                                        "low": r.quality_low_after, "high": r.quality_high_after,
                                        "note": r.note} if r is not None else
                                       {"strategy": k, "note": why} for k, (r, why) in compare.items()]),
                         hide_index=True, width="stretch",
                         column_config={"storage TB": st.column_config.NumberColumn(format="%.2f"),
                                        "acceptance length": st.column_config.NumberColumn(format="%.2f"),
                                        "low": st.column_config.NumberColumn(format="%.2f"),
                                        "high": st.column_config.NumberColumn(format="%.2f")})
        if st.button("Apply the proposed mix", key="w_b_apply"):
            st.session_state.pop(RESULT, None)
            request_scenario(result.scenario, notice="Applied the trimmed mix")
    if storage:
        return storage * (2**40 if unit == "TiB" else 1e12)
    return None


def _compare(s: Scenario, budget: Budget, protect: list[str], catalog) -> dict:
    """Every strategy on the same budget: strategy -> (result, None) or (None, why it could not)."""
    out = {}
    for k in STRATEGIES:
        if k == "protect" and not protect:
            out[k] = (None, "nothing to protect selected")
            continue
        try:
            out[k] = (trim(s, budget, k, protect=protect if k == "protect" else None, catalog=catalog), None)
        except PlannerInputError as exc:
            out[k] = (None, str(exc))
    return out
