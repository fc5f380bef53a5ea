"""The yardstick of bench/run.py's mix-cell figure: a trivial Streamlit page with one small data editor
(6 rows) and a metric that follows it, measured in the same run as the dashboard's mix cell. Streamlit's
data editor sends a cell's edit 150 ms after the edit is committed (a fixed debounce in its frontend),
so no page built on st.data_editor answers a cell in less; this page shows what Streamlit alone takes.
Not part of the product; `streamlit run bench/trivial_editor_page.py` shows it."""
from __future__ import annotations

import pandas as pd
import streamlit as st

st.set_page_config(page_title="trivial editor page", layout="wide")
base = pd.DataFrame({"id": [f"component {i}" for i in range(6)], "rows": [1000 * (i + 1) for i in range(6)]})
edited = st.data_editor(base, key="editor", hide_index=True, num_rows="fixed", disabled=["id"])
st.metric("Rows", f"{int(edited['rows'].sum()):,}")
