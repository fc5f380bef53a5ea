"""The mix editor: one st.data_editor row per component; include, rows or % of the full count."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from planner.plan import Plan

from drafter_dashboard.state import MIX, MIX_VERSION

EDITABLE = ("include", "rows", "pct", "selection")
SELECTIONS = ["uniform", "first", "shortest"]


def _reference(c) -> int:
    return c.rows_in_mix or c.rows_available


def table(p: Plan, catalog, unit: str) -> pd.DataFrame:
    div = 2**40 if unit == "TiB" else 1e12
    by_id = {c.id: c for c in p.components}
    rows = []
    for m in st.session_state.get(MIX, []):
        c = catalog.components[m["id"]]
        pc = by_id.get(m["id"])
        rows.append({
            "include": bool(m.get("include", True)), "id": c.id, "family": c.family, "rows": int(m["rows"]),
            "pct": round(100 * m["rows"] / _reference(c), 2) if _reference(c) else 0.0,
            "selection": m.get("selection", "uniform"),
            "available": c.rows_available,
            "tokens/row": round(pc.mean_tokens) if pc else None,
            "rows %": round(100 * pc.share_of_rows, 1) if pc else 0.0,
            "bytes %": round(100 * pc.share_of_bytes, 1) if pc else 0.0,
            f"storage {unit}": round(pc.storage_bytes / p.scenario.compression / div, 3) if pc else 0.0,
            "provenance": f"{c.origin}: tokens {c.value_tag('mean_tokens')}, rows {c.value_tag('rows_in_mix')}",
            "notes": "; ".join(pc.notes) if pc else "",
        })
    return pd.DataFrame(rows)


def render(p: Plan, catalog, unit: str) -> pd.DataFrame:
    """Draw the editor; returns the component table it showed (for the CSV export)."""
    df = table(p, catalog, unit)
    version = st.session_state.get(MIX_VERSION, 0)
    edited = st.data_editor(
        df, key=f"mix_editor_{version}", hide_index=True, num_rows="fixed", width="stretch",
        disabled=[c for c in df.columns if c not in EDITABLE],
        column_config={
            "include": st.column_config.CheckboxColumn("include", help="drop or keep the component"),
            "rows": st.column_config.NumberColumn("rows", min_value=0, max_value=10**10, step=1, format="%d",
                                                  help="rows selected (subsample)"),
            "pct": st.column_config.NumberColumn("% of full", min_value=0.0, max_value=100000.0, format="%.1f",
                                                 help="rows as a share of the component's full count in the mix"),
            "selection": st.column_config.SelectboxColumn(
                "selection", options=SELECTIONS, required=True,
                help="uniform: a seeded random sample; first: the first n rows; shortest: the n shortest of all "
                     "available rows (cuts storage, biases the data towards short samples)"),
            "available": st.column_config.NumberColumn("available", format="%d"),
            "notes": st.column_config.TextColumn("notes", width="large"),
        })
    changed = _apply_edits(df, edited, catalog)
    if changed:
        st.session_state[MIX_VERSION] = version + 1
        st.rerun()
    _add_components(catalog)
    return df


def _apply_edits(before: pd.DataFrame, after: pd.DataFrame, catalog) -> bool:
    mix = st.session_state.get(MIX, [])
    changed = False
    for i in range(min(len(before), len(after), len(mix))):
        b, a = before.iloc[i], after.iloc[i]
        cid = mix[i]["id"]
        if bool(a["include"]) != bool(b["include"]):
            mix[i]["include"] = bool(a["include"])
            changed = True
        if str(a["selection"]) != str(b["selection"]):
            if a["selection"] not in SELECTIONS:
                st.error(f"mix: selection for {cid} = {a['selection']!r} is not allowed; one of {', '.join(SELECTIONS)}")
                return False
            mix[i]["selection"] = str(a["selection"])
            changed = True
        rows_new = a["rows"]
        if _differs(rows_new, b["rows"]):
            value = _valid_rows(cid, rows_new)
            if value is None:
                return False
            mix[i]["rows"] = value
            changed = True
        elif _differs(a["pct"], b["pct"]):
            pct = a["pct"]
            if pct is None or pd.isna(pct) or float(pct) < 0:
                st.error(f"mix: % of full for {cid} = {pct!r} is not allowed; give a share of 0 or more")
                return False
            value = _valid_rows(cid, round(float(pct) / 100 * _reference(catalog.components[cid])))
            if value is None:
                return False
            mix[i]["rows"] = value
            changed = True
    return changed


def _differs(a, b) -> bool:
    if (a is None or pd.isna(a)) and (b is None or pd.isna(b)):
        return False
    try:
        return float(a) != float(b)
    except (TypeError, ValueError):
        return True


def _valid_rows(cid: str, value) -> int | None:
    try:
        f = float(value)
    except (TypeError, ValueError):
        f = float("nan")
    if pd.isna(f) or f < 0 or f > 10**10 or f != int(f):
        st.error(f"mix: rows for {cid} = {value!r} is not allowed; give a whole number from 0 to 10,000,000,000")
        return None
    return int(f)


def _add_components(catalog) -> None:
    present = {m["id"] for m in st.session_state.get(MIX, [])}
    options = [c for c in catalog.components.values() if c.id not in present]
    if not options:
        return
    a, b = st.columns([4, 1])
    pick = a.multiselect("Add components from the catalog or your profiled data", [c.id for c in options],
                         key="w_add_components",
                         format_func=lambda i: f"{i} ({catalog.components[i].family}, "
                                               f"{catalog.components[i].rows_available:,} rows, "
                                               f"{catalog.components[i].origin})")
    b.button("Add", key="w_add_button", disabled=not pick, width="stretch", on_click=_add,
             args=(catalog,))


def _add(catalog) -> None:
    for cid in st.session_state.get("w_add_components", []):
        c = catalog.components[cid]
        st.session_state[MIX].append({"id": cid, "rows": _reference(c), "include": True,
                                      "selection": "uniform", "seed": 0})
    st.session_state[MIX_VERSION] = st.session_state.get(MIX_VERSION, 0) + 1
    st.session_state["w_add_components"] = []
