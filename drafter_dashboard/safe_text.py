"""User-supplied text for Streamlit's markdown (st.warning/error/info/markdown/caption/write, labels,
help). planner.text.md_escape escapes markdown syntax, but GitHub-flavoured markdown also turns a
bare `https://...`, `www.` or `a@b.c` into a link even when its characters are backslash-escaped
(seen in chromium with Streamlit 1.67). A zero-width space after `:`, `@` and `www` stops that."""
from __future__ import annotations

import re

from planner.text import md_escape

_ZWSP = "\u200b"
_AUTOLINK = re.compile(r"(\\:|@|(?i:www)(?=\\\.))")


def md_text(text: object) -> str:
    """Escaped for markdown and never an autolink: shows as typed."""
    return _AUTOLINK.sub(lambda m: m.group() + _ZWSP, md_escape(text))
