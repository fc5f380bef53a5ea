"""The mix editor: one row per component; include, rows or % of the full count, and the selection.

Two views of one mix, each applying its edits through the same checks (_apply_row):
- the table (default): drafter_dashboard/mix_table.js, a Streamlit v2 component of native inputs. An
  edit is sent the moment it is committed, so a cell answers like a sidebar control (issue 23).
- the spreadsheet: st.data_editor, for pasting many cells, searching and full screen. Streamlit 1.67's
  editor holds an edit 150 ms before sending it (a debounce in its frontend), so a cell answers later.
"""
from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from drafter_dashboard.registry import bounds
from drafter_dashboard.safe_text import md_text
from drafter_dashboard.state import MIX, MIX_VERSION
from planner.planning import Plan
from planner.scenario import MixItem, Scenario
from planner.text import printable, shown

if TYPE_CHECKING:
    import pandas as pd

EDITABLE = ("include", "rows", "pct", "selection")
SELECTIONS = ["uniform", "first", "shortest"]
MAX_ROWS = int(bounds(MixItem, "rows")[1])
EDIT_ERROR = "_mix_edit_error"
APPLIED = "_mix_applied"        # (editor version, its edits already applied to the mix)
TABLE_KEY = "mix_table"
TABLE_ACK = "_mix_table_ack"    # the seq of the table's last edit applied (or refused): sent back to it
SPREADSHEET = "w_mix_spreadsheet"
HELD = (SPREADSHEET, "w_add_components")    # kept while the Mix tab is closed (state.hold, page.py)
# edits in one message: a browser sends those not yet acknowledged, at most one per editable cell of the
# largest mix a scenario may hold (a column pasted down the table is one message)
MAX_TABLE_EDITS = len(EDITABLE) * next(m.max_length for m in Scenario.model_fields["mix"].metadata
                                       if isinstance(getattr(m, "max_length", None), int))
MAX_SEQ = 2**53 - 1             # the script counts in a JavaScript number: exact up to here
MAX_SEQ_STEP = 10_000           # a message's seq is at most this far above the last acknowledged one

# each column's help, once: the table's header tooltips and the spreadsheet's column config
HELP = {
    "include": "drop or keep the component (it stays in the scenario, its manifest and its link, unchecked)",
    "rows": "conversations selected (subsample), at most those available",
    "pct": "rows as a share of the component's full count in the mix",
    "selection": "uniform: a seeded random sample; first: the first n rows; shortest: the n shortest of all "
                 "available rows (cuts storage, biases the data towards short samples)",
}


def _training_rows_help(turn: bool) -> str:
    return ("rows the pipeline writes: one per assistant turn in the turn unit" if turn else
            "rows the pipeline writes (the last partial capture batch may be dropped)")


@functools.cache
def _table_component():
    """The table's v2 component, registered once per process (its JS and CSS are this package's files)."""
    here = Path(__file__).resolve().parent
    return st.components.v2.component("drafter_mix_table", js=(here / "mix_table.js").read_text("utf-8"),
                                      css=(here / "mix_table.css").read_text("utf-8"))


def _reference(c) -> int:
    return c.rows_in_mix or c.rows_available


def columns(p: Plan, catalog, unit: str) -> dict[str, list]:
    """The component table, column by column (a frame is built from lists faster than from row dicts)."""
    div = 2**40 if unit == "TiB" else 1e12
    by_id = {c.id: c for c in p.components}
    names = ("include", "id", "family", "rows", "pct", "selection", "available", "training rows",
             "tokens/training row", "rows %", "bytes %", f"storage {unit}", "provenance", "notes")
    cols: dict[str, list] = {n: [] for n in names}
    for m in st.session_state.get(MIX, []):
        c = catalog.components[m["id"]]
        pc = by_id.get(m["id"])
        ref = _reference(c)
        # the training rows the pipeline writes (per assistant turn in the turn unit), and their length
        for name, value in zip(names, (
                bool(m.get("include", True)), c.id, c.family, int(m["rows"]),
                round(100 * m["rows"] / ref, 2) if ref else 0.0, m.get("selection", "uniform"), c.rows_available,
                round(pc.training_rows) if pc else 0, round(pc.mean_tokens) if pc else 0,
                round(100 * pc.share_of_rows, 1) if pc else 0.0, round(100 * pc.share_of_bytes, 1) if pc else 0.0,
                round(pc.storage_bytes / p.scenario.compression / div, 3) if pc else 0.0,
                f"{c.origin}: tokens {c.value_tag('mean_tokens')}, rows {c.value_tag('rows_in_mix')}",
                "; ".join(pc.notes) if pc else ""), strict=False):
            cols[name].append(value)
    return cols


def table(p: Plan, catalog, unit: str) -> pd.DataFrame:
    """The component table as the CSV export writes it (the editor shows it without the notes)."""
    import pandas as pd  # loaded with the editor, after the first metrics (apply_edits needs none)
    return pd.DataFrame(columns(p, catalog, unit))


def render(p: Plan, catalog, unit: str) -> None:
    """Draw the mix (the table, or the spreadsheet when asked), the components' notes and the catalog's
    other components to add."""
    error = st.session_state.pop(EDIT_ERROR, None)
    if error:
        st.error(md_text(error))
    cols = columns(p, catalog, unit)
    notes = [(cid, text) for cid, text in zip(cols["id"], cols.pop("notes"), strict=True) if text]
    turn = p.unit == "turn"
    if st.toggle("Spreadsheet view", key=SPREADSHEET,
                 help="Streamlit's data editor: paste many cells at once, search, full screen. Its cells answer "
                      "about 0.15 s later than the table's (it holds each edit 150 ms before sending it)."):
        _spreadsheet(cols, turn, unit)
    else:
        _table(cols, turn, unit, catalog)
    if notes:
        # drawn only while on (a toggle keeps its state when the count in its label changes)
        if st.toggle(f"Notes on {len(notes)} components (overlaps, licences, the cap)", key="w_open_notes"):
            with st.container(border=True):
                for cid, text in notes:
                    st.markdown(f"- **{md_text(cid)}**: {md_text(text)}")
    _add_components(catalog)


# Every column of the mix, once, in columns()' order (the notes go below the table): its header, whether
# it is a number, and the format of its text in the table (None: an editable column, an input there). The
# table and the spreadsheet both take their headers from here, and their help from HELP.
def _columns_shown(turn: bool, unit: str) -> dict[str, tuple[str, bool, str | None]]:
    return {"include": ("include", False, None), "id": ("id", False, "{}"), "family": ("family", False, "{}"),
            "rows": ("conversations" if turn else "rows", True, None), "pct": ("% of full", True, None),
            "selection": ("selection", False, None), "available": ("available", True, "{:,}"),
            "training rows": ("training rows", True, "{:,}"),
            "tokens/training row": ("tokens/training row", True, "{:,}"),
            "rows %": ("rows %", True, "{:.1f}"), "bytes %": ("bytes %", True, "{:.1f}"),
            f"storage {unit}": (f"storage {unit}", True, "{:.2f}"), "provenance": ("provenance", False, "{}")}


def _help(turn: bool) -> dict[str, str]:
    return {**HELP, "training rows": _training_rows_help(turn)}


def _table(cols: dict[str, list], turn: bool, unit: str, catalog) -> None:
    """The table (mix_table.js): the mix's editable values and every other column as display text."""
    shown, help_ = _columns_shown(turn, unit), _help(turn)
    assert list(shown) == list(cols), "the table's columns are columns()'"
    rows = []
    for i, cid in enumerate(cols["id"]):
        # display text (a user catalog's provenance is third-party): bidi and controls written out
        cells = [None if fmt is None else printable(fmt.format(cols[k][i])) for k, (_, _, fmt) in shown.items()]
        values = [cols[k][i] if numeric else None for k, (_, numeric, _) in shown.items()]
        rows.append({"id": cid, "include": cols["include"][i], "rows": cols["rows"][i], "pct": cols["pct"][i],
                     "selection": cols["selection"][i], "cells": cells, "values": values})
    data = {"columns": [{"key": k, "label": label, "numeric": numeric, "help": help_.get(k, "")}
                        for k, (label, numeric, _) in shown.items()],
            "rows": rows, "selections": SELECTIONS, "ack": st.session_state.get(TABLE_ACK, 0),
            "number": NUMBER_PATTERN}
    _table_component()(key=TABLE_KEY, data=data, on_edit_change=functools.partial(_on_table_edit, catalog))


def _on_table_edit(catalog) -> None:
    """The table's edit, applied before the run that follows it (a callback), so an edit costs one run.
    A callback runs outside the page's error guard: whatever goes wrong is one line, and changes nothing."""
    ss = st.session_state
    try:
        result = ss.get(TABLE_KEY)
        message = getattr(result, "edit", None) if result is not None else None
        if message is None:
            return
        ack = ss.get(TABLE_ACK, 0)
        out = apply_table_message(ss.get(MIX, []), message, catalog, ack)
        if out is None:
            ss[EDIT_ERROR] = "mix: the table's edit could not be read (not edits of the mix); nothing was changed"
            return
        mix, seq, errors = out
        if seq <= ack:                    # applied already (a message sent again): nothing new in it
            return
        ss[MIX] = mix
        ss[TABLE_ACK] = seq
        ss[MIX_VERSION] = ss.get(MIX_VERSION, 0) + 1      # the spreadsheet, when shown, shows the mix as it is
        if errors:
            ss[EDIT_ERROR] = errors[0] if len(errors) == 1 else f"{errors[0]} (and {len(errors) - 1} more refused)"
    except Exception as exc:              # noqa: BLE001 - a bug must not take the page down
        ss[EDIT_ERROR] = f"mix: the table's edit failed ({type(exc).__name__}); nothing was changed"


def apply_table_message(mix: list[dict], message, catalog, ack: int = 0
                        ) -> tuple[list[dict], int, list[str]] | None:
    """The mix after the table's message {seq, edits: [{id, column, value, seq}]}, its seq and the
    refusals; None when the message is not that shape (it changes nothing). The table sends every edit
    it has not seen acknowledged; an edit whose own seq is `ack` or less was applied already and is
    skipped, so it never lands again over a later change (an undo, say). Each edit is checked as the
    spreadsheet's are (_apply_row); a refused one changes nothing and the others still apply."""
    parsed = _table_edits(message, ack)
    if parsed is None:
        return None
    seq, edits = parsed
    mix = [dict(m) for m in mix]
    where = {m["id"]: i for i, m in enumerate(mix)}
    errors = []
    for cid, column, value in edits:
        if cid not in where:
            errors.append(f"mix: {shown(cid)} is not a component of this mix; nothing was changed for it")
            continue
        row = dict(mix[where[cid]])
        try:
            _apply_row(row, {column: value}, catalog)
        except _Refused as exc:
            errors.append(str(exc))
        else:
            mix[where[cid]] = row
    return mix, seq, errors


def _table_edits(message, ack: int = 0) -> tuple[int, list[tuple[str, str, object]]] | None:
    """The table's message as (seq, [(id, column, value)] of the edits newer than `ack`); None when it
    is not one. A browser sends a whole-number seq a little above the last acknowledged one, and a short
    list of edits of the editable columns, each with its own seq: anything else is crafted."""
    if not isinstance(message, dict):
        return None
    seq, edits = message.get("seq"), message.get("edits")
    if not _whole(seq) or seq > min(ack + MAX_SEQ_STEP, MAX_SEQ) or not isinstance(edits, list) \
            or not 0 < len(edits) <= MAX_TABLE_EDITS:
        return None
    out = []
    for e in edits:
        if not isinstance(e, dict) or set(e) != {"id", "column", "value", "seq"}:
            return None
        if not isinstance(e["id"], str) or e["column"] not in EDITABLE or not _whole(e["seq"]) or e["seq"] > seq:
            return None
        if e["seq"] > ack:
            out.append((e["id"], e["column"], e["value"]))
    return seq, out


def _whole(n) -> bool:
    return isinstance(n, int) and not isinstance(n, bool) and n >= 0


def _spreadsheet(cols: dict[str, list], turn: bool, unit: str) -> None:
    """The spreadsheet (st.data_editor): keyed by the mix's version, which a change made elsewhere bumps."""
    import pandas as pd
    df = pd.DataFrame(cols)
    key = f"mix_editor_{st.session_state.get(MIX_VERSION, 0)}"
    if not _shows_the_mix(df, key):       # a fresh editor (the next key), showing the mix as it is
        st.session_state[MIX_VERSION] = st.session_state.get(MIX_VERSION, 0) + 1
        key = f"mix_editor_{st.session_state[MIX_VERSION]}"
    if key not in st.session_state:       # a new editor (or one its closed tab let go): no edit of it applied
        st.session_state.pop(APPLIED, None)
    label = {k: v[0] for k, v in _columns_shown(turn, unit).items()}
    help_ = _help(turn)
    number = st.column_config.NumberColumn
    st.data_editor(
        df, key=key, hide_index=True,
        num_rows="fixed", width="stretch", disabled=[c for c in df.columns if c not in EDITABLE],
        column_config={
            "include": st.column_config.CheckboxColumn(label["include"], help=help_["include"]),
            "rows": number(label["rows"], min_value=0, max_value=MAX_ROWS, step=1, format="localized",
                           help=help_["rows"]),
            "training rows": number(label["training rows"], format="localized", help=help_["training rows"]),
            "tokens/training row": number(label["tokens/training row"], format="localized"),
            f"storage {unit}": number(label[f"storage {unit}"], format="%.2f"),
            "pct": number(label["pct"], min_value=0.0, max_value=100000.0, format="%.1f", help=help_["pct"]),
            "selection": st.column_config.SelectboxColumn(label["selection"], options=SELECTIONS, required=True,
                                                          help=help_["selection"]),
            "available": number(label["available"], format="localized"),
        })


class _Refused(ValueError):
    pass


def _edits(state) -> dict[int, dict] | None:
    """An editor state's edited rows as {row: {column: value}}; None when they are not that (a browser
    sends row numbers and dicts of cells: anything else is a crafted message)."""
    out = {}
    for i, changes in ((state or {}).get("edited_rows") or {}).items():
        if isinstance(i, bool) or not isinstance(changes, dict):
            return None
        try:
            row = int(i)
        except (TypeError, ValueError):
            return None
        if row < 0 or str(row) != str(i).strip():
            return None
        out[row] = changes
    return out


def apply_edits(catalog) -> None:
    """Apply the editor's new edits to the mix before anything is planned or drawn, so that an edit costs
    one run. The editor keeps its key while the mix is edited in it (Streamlit then updates the grid in
    place rather than building a new one): its state holds every edit made in it, so only the cells
    that changed since the last run are applied (APPLIED). A bad value changes nothing and is reported
    above the editor; render() then replaces the editor with a fresh one showing the mix as it is."""
    ss = st.session_state
    version = ss.get(MIX_VERSION, 0)
    state = ss.get(f"mix_editor_{version}")
    if not isinstance(state, dict) or not state.get("edited_rows"):
        return
    edits = _edits(state)
    if edits is None:
        ss[EDIT_ERROR] = "mix: the editor's edits could not be read (not rows of the table); nothing was changed"
        return
    done_version, done = ss.get(APPLIED) or (None, {})
    done = done if done_version == version else {}
    new = {}
    for i, changes in edits.items():
        before = done.get(i, {})
        fresh = {k: v for k, v in changes.items() if k not in before or before[k] != v}
        if fresh:
            new[i] = fresh
    if not new:
        return
    mix = [dict(m) for m in ss.get(MIX, [])]
    try:
        for i, changes in new.items():
            if i < len(mix):
                _apply_row(mix[i], changes, catalog)
    except _Refused as exc:
        ss[EDIT_ERROR] = str(exc)
    else:
        ss[MIX] = mix
        ss[APPLIED] = (version, {i: dict(c) for i, c in edits.items()})


def _shows_the_mix(df: pd.DataFrame, key: str) -> bool:
    """Whether editor `key`'s edits (drawn over the table it is given) show the table's own values: a
    refused value, a % rounded in the table, a rows count beside an earlier % edit or edits that are
    not rows of the table do not."""
    state = st.session_state.get(key)
    if not isinstance(state, dict):
        return True
    edits = _edits(state)
    if edits is None:
        return False
    for i, changes in edits.items():
        if i >= len(df):
            return False
        for col, value in changes.items():
            if col not in df.columns or df.iloc[i][col] != value:
                return False
    return True


def _apply_row(m: dict, changes: dict, catalog) -> None:
    cid = m["id"]
    if "include" in changes:
        if not isinstance(changes["include"], bool):
            raise _Refused(f"mix: include for {cid} = {shown(changes['include'])} is not allowed; give true or "
                           "false")
        m["include"] = changes["include"]
    if "selection" in changes:
        if changes["selection"] not in SELECTIONS:
            raise _Refused(f"mix: selection for {cid} = {shown(changes['selection'])} is not allowed; "
                           f"one of {', '.join(SELECTIONS)}")
        m["selection"] = str(changes["selection"])
    if "rows" in changes:
        m["rows"] = _valid_rows(cid, changes["rows"], catalog)
    elif "pct" in changes:
        pct = changes["pct"]
        share = _number(pct)
        if not math.isfinite(share) or share < 0:
            raise _Refused(f"mix: % of full for {cid} = {shown(pct)} is not allowed; give a share of 0 or more")
        rows = share / 100 * _reference(catalog.components[cid])
        m["rows"] = _valid_rows(cid, round(rows) if rows <= MAX_ROWS else rows, catalog, typed=pct)


# A number as the table's cell takes it (mix_table.js plain(), which reads this pattern from the table's
# data): ASCII digits, grouped by thousands with commas or not, and a decimal part. Python's float()
# would also take "1_000", "5e0", "inf" and other scripts' digits ("١٠٠٠"), none of which the table
# reads as a number (issue 36): a cell's text is this or it is refused.
NUMBER_PATTERN = r"(?:[0-9]+|[0-9]{1,3}(?:,[0-9]{3})+)(?:\.[0-9]+)?|\.[0-9]+"
_NUMBER = re.compile(NUMBER_PATTERN)


def _number(value) -> float:
    """A cell's number: an int or a float (a browser's), or the text of one (NUMBER_PATTERN, blanks
    around it allowed); NaN for anything else (a boolean, a list, a number too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return float("nan")
    if isinstance(value, str):
        text = value.strip()
        if len(text) > 400 or not _NUMBER.fullmatch(text):
            return float("nan")
        value = text.replace(",", "")
    try:
        return float(value)
    except (ValueError, OverflowError):
        return float("nan")


def _valid_rows(cid: str, value, catalog, typed=None) -> int:
    f = _number(value)
    if not math.isfinite(f) or f < 0 or f > MAX_ROWS or f != int(f):
        what = f"% of full for {cid} = {shown(typed)}" if typed is not None else f"rows for {cid} = {shown(value)}"
        raise _Refused(f"mix: {what} is not allowed; give a whole number of rows from 0 to {MAX_ROWS:,}")
    available = catalog.components[cid].rows_available
    if f > available:
        raise _Refused(f"mix: {cid} has {available:,} rows, so {int(f):,} is not allowed: extracting a row twice "
                       "stores its hidden states twice; weight the component in training instead")
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
