"""drafter_dashboard/session.py: every catalog read and every profile names this session's own user
catalog; there is no fallback to the shared one (which would show one visitor's uploads to another)."""
from __future__ import annotations

from pathlib import Path

import pytest


def test_catalog_and_profile_always_name_the_sessions_own_user_catalog(monkeypatch, tmp_path):
    monkeypatch.setenv("PLANNER_HOME", str(tmp_path))
    from drafter_dashboard import session
    calls = []
    # a catalog reader without the user_catalog keyword: the removed fallback read the shared catalog
    # (get_catalog()) then; now the call fails instead of sharing
    monkeypatch.setattr(session, "get_catalog", lambda: calls.append("shared"))
    with pytest.raises(TypeError):
        session.catalog()
    assert calls == []
    monkeypatch.setattr(session, "get_catalog", lambda user_catalog: calls.append(user_catalog))
    # a profiler whose signature names no user_catalog (the fallback's test): it still gets this session's
    import planner.catalog.profile  # session.profile imports it when it profiles (not with the page)
    monkeypatch.setattr(planner.catalog.profile, "profile_file",
                        lambda path, name, **kw: calls.append((kw.get("user_catalog"), kw.get("replace"),
                                                               kw.get("fmt"))))
    session.catalog()
    session.profile(Path("x.jsonl"), "x", True, fmt="sharegpt")
    own = tmp_path / "sessions" / session.folder(create=False).name / "user_catalog.json"
    assert calls == [own, (own, True, "sharegpt")]
    assert (own.parent / "uploads").is_dir()          # profiling made the session's folder
    assert not hasattr(session, "_accepts")
