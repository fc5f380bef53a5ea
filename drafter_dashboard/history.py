"""Undo/redo history that survives a reload of the page.

A reload starts a new Streamlit session, whose session state is empty. The scenario itself comes
back from the link (`s=`), but 50 earlier scenarios do not fit the link's 8,000 characters, so the
history is kept on the server, in this process's memory, under a random id that the link carries
(`h=`). A session that opens a link with `h=` gets a *copy* of that history under a new id of its
own: two tabs (or a link sent to someone else) never write into one history. The store is bounded
(MAX_SCENARIOS scenarios in all, about 10 KB each: the least recently used histories are dropped
first) and is lost when the server restarts, which loses nothing else: the scenario, the pinned and
the saved ones are in the link.
"""
from __future__ import annotations

import re
import threading
import uuid
from collections import OrderedDict

MAX_SCENARIOS = 2_000               # scenarios kept over every history (~10 KB each: ~20 MB at most)
_ID = re.compile(r"^[0-9a-f]{32}$")
_store: OrderedDict[str, tuple[list, list]] = OrderedDict()
_lock = threading.Lock()


def new_id() -> str:
    return uuid.uuid4().hex


def save(hid: str, undo: list, redo: list) -> None:
    """Keep the session's stacks (copies of the lists; the scenarios themselves are never mutated)."""
    with _lock:
        _store[hid] = (list(undo), list(redo))
        _store.move_to_end(hid)
        total = sum(len(u) + len(r) for u, r in _store.values())
        while total > MAX_SCENARIOS and len(_store) > 1:
            _, (u, r) = _store.popitem(last=False)
            total -= len(u) + len(r)


def load(hid: object) -> tuple[list, list] | None:
    """The stacks kept under `hid` (copies), or None for an id that is malformed, unknown or dropped."""
    if not isinstance(hid, str) or not _ID.match(hid):
        return None
    with _lock:
        kept = _store.get(hid)
        if kept is None:
            return None
        _store.move_to_end(hid)
        return list(kept[0]), list(kept[1])
