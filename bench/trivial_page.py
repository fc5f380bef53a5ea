"""The yardstick of bench/run.py's page figures: a trivial Streamlit page (6 number inputs, 15 metrics,
a small table), measured in the same run as the dashboard so the machine's noise cancels out of the
ratio. Not part of the product; `streamlit run bench/trivial_page.py` shows it.

Its metric "Metric 0" follows every input (the bench changes "input 0" and waits for it)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

st.set_page_config(page_title="trivial page", layout="wide")
values = [st.sidebar.number_input(f"input {i}", key=f"n{i}", value=float(i + 1), step=1.0) for i in range(6)]
st.title("Trivial page")
grid = st.container(horizontal=True, wrap=True, gap="small")
for j in range(15):
    grid.metric(f"Metric {j}", f"{sum(v * (j + k + 1) for k, v in enumerate(values)):,.2f}",
                delta=f"{values[j % 6]:,.1f}", width=172)
st.dataframe(pd.DataFrame({"input": [f"input {i}" for i in range(6)], "value": values,
                           "square": [v * v for v in values]}), hide_index=True)
