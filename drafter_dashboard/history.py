"""Undo/redo history that survives a reload of the page.

A reload starts a new Streamlit session, whose session state is empty. The scenario itself comes
back from the link (`s=`), but 50 earlier scenarios do not fit the link's 8,000 characters, so the
history is kept on the server, in this process's memory, under a random id that the link carries
(`h=`). A session that opens a link with `h=` gets a *copy* of that history under a new id of its
own: two tabs (or a link sent to someone else) never write into one history. The store is lost when
the server restarts, which loses nothing else: the scenario, the pinned and the saved ones are in the link.

The store is bounded in bytes (issue 36: bounded in scenarios, 500 steps with 1,000 uploaded runs rows
held 537 MB). A step is kept as JSON, as pydantic writes it, zlib-compressed and cut into parts: the large
sub-objects of PARTS (the mix's rows, your runs) each on its own, and the rest of the scenario. Each
part is kept once, under its JSON's SHA-256, however many steps and histories use it: 50 steps that
differ in one control share one copy of your 1,000 runs, and a reload's scenarios share their objects;
the session's own undo stack shares them too (shared(), state.py's _push).
The store's byte count (total_bytes) is the compressed parts' lengths plus a fixed overhead per part
and per step (BLOB_OVERHEAD, STEP_OVERHEAD: the CPython objects around them; tracemalloc checks the
count in tests/unit/drafter_dashboard/test_history_store.py). A history over MAX_HISTORY_BYTES loses
its oldest undo steps first, then its furthest redo steps; a store over MAX_BYTES drops the least
recently used histories first.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
import weakref
import zlib
from collections import OrderedDict

from pydantic import TypeAdapter

from planner.scenario import MixItem, QualityPoint, Scenario

MAX_BYTES = 20 * 2**20            # every history together (a server's whole store)
MAX_HISTORY_BYTES = 2 * 2**20     # one history (a session's undo and redo stacks)
# kept apart from the rest of a step, each once by its content: the mix's rows and your runs
PARTS = ((("mix",), TypeAdapter(list[MixItem])), (("quality", "points"), TypeAdapter(list[QualityPoint])))
_EXCLUDE = {"mix": True, "quality": {"points": True}}
BLOB_OVERHEAD = 200               # a part: its bytes object (33 B), [bytes, count] (72 B), its entry in _blobs
STEP_OVERHEAD = 270               # a step: its tuple of three keys (64 B), each key (65 B), its list slot (8 B)
_ID = re.compile(r"^[0-9a-f]{32}$")

Step = tuple[bytes, ...]          # the keys of a step's rest and of each of its PARTS (b"" for a part that is None)
_store: OrderedDict[str, tuple[list[Step], list[Step]]] = OrderedDict()
_blobs: dict[bytes, list] = {}    # key -> [compressed JSON, how many steps use it]
_total = 0                        # the store's byte count (total_bytes)
_lock = threading.Lock()
_encoded: dict[int, tuple[weakref.ref, Step]] = {}   # id(scenario) -> its step, worked out once


def new_id() -> str:
    return uuid.uuid4().hex


def split(s: Scenario) -> list[bytes | None]:
    """The step's JSON, as pydantic writes it (one value, one text): the scenario without its PARTS,
    then each part (None where the scenario has none)."""
    rest = s.model_dump_json(exclude=_EXCLUDE).encode()
    return [rest, *(None if (v := _get(s, path)) is None else adapter.dump_json(v) for path, adapter in PARTS)]


def _get(s: Scenario, path: tuple[str, ...]):
    for name in path:
        s = getattr(s, name)
    return s


def _encode(s: Scenario) -> Step:
    """The step's keys (worked out once per scenario object: the page saves its stacks on every run)."""
    hit = _encoded.get(id(s))
    if hit is not None and hit[0]() is s:
        return hit[1]
    step = tuple(b"" if raw is None else hashlib.sha256(raw).digest() for raw in split(s))
    _remember(s, step)
    return step


def _remember(s: Scenario, step: Step) -> None:
    sid = id(s)
    _encoded[sid] = (weakref.ref(s, lambda _r, sid=sid: _encoded.pop(sid, None)), step)


def shared(s: Scenario, other: Scenario | None) -> Scenario:
    """`s`, or an equal scenario holding `other`'s objects for each part of PARTS the two have equal: a
    session's undo stack then holds one copy of your runs, not one a step (the page builds each scenario
    with objects of its own). The parts are compared by their keys, which the next save works out anyway."""
    if other is None:
        return s
    mine, theirs = _encode(s), _encode(other)
    out = s
    for (path, _), a, b in zip(PARTS, mine[1:], theirs[1:], strict=False):
        if a and a == b and _get(s, path) is not _get(other, path):
            out = _with(out, path, _get(other, path))
    if out is not s:
        _remember(out, mine)
    return out


def _with(model, path: tuple[str, ...], value):
    """A shallow copy of `model` with the field at `path` set to `value` (no other object copied)."""
    inner = value if len(path) == 1 else _with(getattr(model, path[0]), path[1:], value)
    return model.model_copy(update={path[0]: inner})


def _keep(s: Scenario, step: Step) -> None:
    """One more use of each part of `step` (compressed from `s` where it is not kept yet). Under the lock."""
    global _total
    values = None
    for i, key in enumerate(step):
        if not key:
            continue
        if key not in _blobs:
            values = values or split(s)
            _blobs[key] = [zlib.compress(values[i]), 0]
            _total += len(_blobs[key][0]) + BLOB_OVERHEAD
        _blobs[key][1] += 1
    _total += STEP_OVERHEAD


def _drop(step: Step) -> None:
    """One use fewer of each part of `step`; a part no step uses is let go. Under the lock."""
    global _total
    for key in step:
        if key:
            kept = _blobs[key]
            kept[1] -= 1
            if not kept[1]:
                del _blobs[key]
                _total -= len(kept[0]) + BLOB_OVERHEAD
    _total -= STEP_OVERHEAD


def _size(steps) -> int:
    """Bytes of these steps and of the parts they use, each part once."""
    used = {k for step in steps for k in step if k}
    return len(steps) * STEP_OVERHEAD + sum(len(_blobs[k][0]) + BLOB_OVERHEAD for k in used)


def total_bytes() -> int:
    """The store's own count of its bytes (see the module's docstring)."""
    return _total


def history_bytes(hid: str) -> int | None:
    with _lock:
        kept = _store.get(hid)
        return None if kept is None else _size(kept[0] + kept[1])


def save(hid: str, undo: list, redo: list) -> None:
    """Keep the session's stacks (the scenarios themselves are never mutated: each is encoded once)."""
    steps = [(s, _encode(s)) for s in undo], [(s, _encode(s)) for s in redo]
    with _lock:
        for s, step in steps[0] + steps[1]:
            _keep(s, step)
        old = _store.pop(hid, None)
        if old is not None:
            for step in old[0] + old[1]:
                _drop(step)
        _store[hid] = kept = ([step for _, step in steps[0]], [step for _, step in steps[1]])
        while (kept[0] or kept[1]) and _size(kept[0] + kept[1]) > MAX_HISTORY_BYTES:
            _drop((kept[0] or kept[1]).pop(0))    # the oldest undo step, then the furthest redo step
        while _total > MAX_BYTES and len(_store) > 1:
            _, (u, r) = _store.popitem(last=False)
            for step in u + r:
                _drop(step)


def load(hid: object) -> tuple[list, list] | None:
    """The stacks kept under `hid` (new lists of scenarios that share their unchanged parts), or None
    for an id that is malformed, unknown or dropped."""
    if not isinstance(hid, str) or not _ID.match(hid):
        return None
    with _lock:
        kept = _store.get(hid)
        if kept is None:
            return None
        _store.move_to_end(hid)
        undo, redo = list(kept[0]), list(kept[1])
        blobs = {k: _blobs[k][0] for step in undo + redo for k in step if k}
    parts: dict[bytes, object] = {}
    try:
        return [_decode(step, blobs, parts) for step in undo], [_decode(step, blobs, parts) for step in redo]
    except ValueError:            # pydantic's ValidationError: not expected of the store's own JSON
        return None


def _decode(step: Step, blobs: dict[bytes, bytes], parts: dict[bytes, list]) -> Scenario:
    """A step as a Scenario; each part is decoded once per load and its objects shared by the steps that
    use it (pydantic keeps a model instance it is given as it is)."""
    data = json.loads(zlib.decompress(blobs[step[0]]))
    for (path, adapter), key in zip(PARTS, step[1:], strict=False):
        if not key:
            continue
        if key not in parts:
            parts[key] = adapter.validate_json(zlib.decompress(blobs[key]))
        holder = data
        for name in path[:-1]:
            holder = holder[name]
        holder[path[-1]] = list(parts[key])
    s = Scenario.model_validate(data)
    _remember(s, step)
    return s
