"""The page's notices: a success or warning drawn above the figures by a full run, and a tab's error.

A tab runs in a fragment (drafter_dashboard/page.py): its rerun draws its own elements only, so the
notice of the full run before ("Imported plan.yaml", "Applied the trimmed mix") stayed on the page beside
the tab's new error (issue 35). A fragment cannot remove an element it did not draw; a style it draws
applies to the whole page, so a tab's error hides the notice by its key."""
from __future__ import annotations

import streamlit as st

from drafter_dashboard.safe_text import md_text

KEY = "page_notice"
HIDE_NOTICE = f"<style>.st-key-{KEY} {{ display: none; }}</style>"    # a fixed rule, no user text


def show(kind: str, text: str) -> None:
    """The full run's notice (`kind`: success or warning), in a container a tab's error can hide."""
    box = st.container(key=KEY)
    (box.warning if kind == "warning" else box.success)(md_text(text))


def error(text: str) -> None:
    """A tab's error (markdown-escaped here): any notice above the figures is from before it, and goes."""
    st.html(HIDE_NOTICE)
    st.error(md_text(text))
