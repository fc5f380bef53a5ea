"""Each browser session's own upload folder and user catalog: one visitor's profiled data is never
shown to another. Every catalog read and every profile names this session's user catalog: there is
no path to the shared one."""
from __future__ import annotations

import shutil
import uuid
import weakref
from pathlib import Path

import streamlit as st

from planner.catalog.paths import planner_home
from planner.catalog.stats import get_catalog

SESSION_ID = "_session_id"
REAPER = "_session_reaper"


class _Reaper:
    """Kept in a session's state: when the state is collected (the session ended and Streamlit let it
    go) or the server exits, the session's folder (its uploads and user catalog) is removed. Best
    effort: a server killed with SIGKILL leaves the folders behind."""

    def __init__(self, path: Path):
        self.path = path
        weakref.finalize(self, shutil.rmtree, str(path), True)


def folder(create: bool = True) -> Path:
    """<planner home>/sessions/<random id>/: this session's uploads and user catalog (created on the
    first upload, not for every visitor)."""
    sid = st.session_state.get(SESSION_ID)
    if sid is None:
        sid = st.session_state[SESSION_ID] = uuid.uuid4().hex
    path = planner_home() / "sessions" / sid
    if create:
        (path / "uploads").mkdir(parents=True, exist_ok=True)
        if REAPER not in st.session_state:
            st.session_state[REAPER] = _Reaper(path)
    return path


def user_catalog(create: bool = False) -> Path:
    return folder(create) / "user_catalog.json"


def catalog():
    """The shipped catalog plus this session's profiled components."""
    return get_catalog(user_catalog=user_catalog())


def profile(path: Path, name: str, replace: bool, **kw):
    """profile_file into this session's user catalog; `replace` confirms overwriting an existing id."""
    from planner.catalog.profile import profile_file  # the profiler's readers: loaded by a profile only
    return profile_file(path, name, user_catalog=user_catalog(create=True), replace=replace, **kw)
