"""User-supplied text for Streamlit's markdown (st.warning/error/info/markdown/caption/write, labels,
help): planner.text.md_escape, which escapes markdown syntax and stops autolinks."""
from __future__ import annotations

from planner.text import md_escape

md_text = md_escape
