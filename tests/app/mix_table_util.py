"""AppTest's hands on the mix table (drafter_dashboard/mix_table.js, a Streamlit v2 component that
AppTest does not know): what the table is given, and an edit sent as its script sends it: a trigger
value [{"event": "edit", "value": {seq, edits}}] on the component's event widget, through Streamlit's
own deserialiser and callback dispatch. The browser tests (tests/browser/test_mix_table.py) send the
same edits from the real inputs."""
from __future__ import annotations

import json

from streamlit.components.v2.bidi_component.main import _make_trigger_id


def table(at):
    """The table's element (AppTest's UnknownElement for the v2 component), or None when not drawn."""
    found = [e for e in at._tree if getattr(e, "type", None) == "bidi_component"
             and e.proto.component_name == "drafter_mix_table"]
    assert len(found) <= 1
    return found[0] if found else None


def table_data(at) -> dict:
    el = table(at)
    assert el is not None, "the mix table is not drawn"
    return json.loads(el.proto.json)


def table_rows(at) -> dict[str, dict]:
    """{component id: its row as the table is given it (include, rows, pct, selection, cells)}."""
    return {r["id"]: r for r in table_data(at)["rows"]}


def send(at, message, timeout: float = 60):
    """Run `at` once with `message` as the table's edit value (any JSON: a crafted one too)."""
    el = table(at)
    assert el is not None, "the mix table is not drawn"
    ws = at._tree.get_widget_states()
    w = ws.widgets.add()
    w.id = _make_trigger_id(el.proto.id, "events")
    w.json_trigger_value = json.dumps([{"event": "edit", "value": message}])
    return at._run(ws, timeout=timeout)


def edit(at, cid: str, column: str, value, timeout: float = 60):
    """One edit of the table, as the browser sends it (a seq above every earlier one)."""
    seq = table_data(at)["ack"] + 1
    return send(at, {"seq": seq, "edits": [{"id": cid, "column": column, "value": value, "seq": seq}]}, timeout)


def mix_frame(at):
    """The table as a frame indexed like the spreadsheet's (a column per key: include, id, rows, pct,
    selection and each shown column's text), in the table's order."""
    import pandas as pd
    data = table_data(at)
    keys = [c["key"] for c in data["columns"]]
    out = []
    for r in data["rows"]:
        row = {k: cell for k, cell in zip(keys, r["cells"], strict=False) if cell is not None}
        row.update({k: r[k] for k in ("id", "include", "rows", "pct", "selection")})
        out.append(row)
    return pd.DataFrame(out)


def edit_rows(at, rows: dict, timeout: float = 60):
    """Edits by row number of the table's order ({0: {"rows": 5}}), sent as one message."""
    data = table_data(at)
    ids, seq = [r["id"] for r in data["rows"]], data["ack"] + 1
    edits = [{"id": ids[i], "column": col, "value": v, "seq": seq} for i, cells in rows.items()
             for col, v in cells.items()]
    return send(at, {"seq": seq, "edits": edits}, timeout)
