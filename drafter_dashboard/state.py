"""The scenario in the session: widgets are its source of truth; a scenario from a preset, an
import, a shared link or an applied trim is written into the widgets before they render."""
from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from streamlit.runtime.state.session_state_proxy import get_session_state

from drafter_dashboard import history, registry
from planner.export.share import MAX_SAVED, saved_name_problem  # one rule for the session and the link
from planner.planning import resolved_mix
from planner.scenario import Scenario, default_scenario

PENDING = "_pending_scenario"
MIX = "mix_rows"
MIX_VERSION = "mix_version"
NOTICE = "_notice"
LAST = "_last_scenario"
EXTERNAL = "_external_scenario"   # from a link, import, preset or trim, and not drawn yet
KEPT = "_kept_widgets"             # every control's value at the end of the last run (drawn or not)
DRAWN = "_drawn_widgets"           # the keys of the widgets the last run drew (None: not known)
MIX_DEFAULT = "_mix_default"       # the default mix as loaded, when the scenario had none (mix: None)
UNDO = "_undo"                     # earlier scenarios, the latest last (at most HISTORY)
REDO = "_redo"
REPLAYING = "_replaying"           # the next remember() comes from undo/redo: no new history entry
PINNED = "_pinned"                 # the baseline the deltas are taken against (a Scenario), or absent
SAVED = "_saved"                   # name -> Scenario, at most MAX_SAVED
DELTA = "w_delta_mode"             # what the metrics' deltas are against (DELTA_MODES)
DELTA_MODES = {"since": "since my last change", "pin": "against the pin", "full": "against the full mix"}
HISTORY_ID = "_history_id"         # this session's key in drafter_dashboard.history (the link's h=)
HISTORY = 50


def mix_from_scenario(s: Scenario, catalog) -> list[dict]:
    if s.uniform is not None:
        return []
    return [m.model_dump() for m in resolved_mix(s, catalog)]


def _mix_items(rows: list[dict]) -> list[dict]:
    """The editor's rows as the scenario's mix: unchecked components stay, with include False."""
    return [{"id": m["id"], "rows": int(m["rows"]), "include": bool(m.get("include", True)),
             "selection": m.get("selection", "uniform"), "seed": int(m.get("seed", 0))} for m in rows]


def load_into_widgets(s: Scenario, catalog) -> None:
    """Every control's value for scenario `s`, kept (KEPT); a widget's old state is let go, so that each
    widget drawn shows the new value (restore). Call before the widgets are created."""
    ss = st.session_state
    values = widget_values(s)
    present = ss.to_dict()
    for key in registry.KEYS:     # each widget takes its new value from KEPT when it is drawn (restore)
        if key in present:
            del ss[key]
    ss[KEPT] = dict(values)
    ss["w_preset"] = s.preset
    ss["uniform"] = s.uniform.model_dump() if s.uniform is not None else None
    ss[MIX] = mix_from_scenario(s, catalog)
    ss[MIX_DEFAULT] = _mix_items(ss[MIX]) if s.mix is None and s.uniform is None else None
    ss[MIX_VERSION] = ss.get(MIX_VERSION, 0) + 1
    ss[LAST] = s


def hold(keys) -> None:
    """Keep the values of the widgets this run does not draw (a closed tab's, page.py): Streamlit forgets
    a widget's value after a full run that did not draw it. Set again as a plain session value, it
    survives until its widget is drawn again, which takes it up. (Buttons, uploads and the data editor
    cannot be set, and are not kept.)"""
    ss = st.session_state
    for key in keys:
        if key in ss:
            ss[key] = ss[key]


def hidden_keys(s: Scenario) -> set[str]:
    """The widgets the sidebar does not draw for scenario `s`."""
    return registry.hidden_keys(s.model_dump())


def restore_hidden_widgets() -> None:
    """Streamlit forgets (or resets) the state of a widget that a run did not draw: a closed section's,
    the fixed-mode inputs in roofline mode, a custom GPU's figures after picking a preset GPU ... Each
    control the last run did not draw leaves the session state; its value stays in KEPT, which the
    scenario reads (value_of), and its section puts it back just before drawing it (restore). So the
    session holds only the drawn controls' keys: Streamlit 1.67 copies the whole session state for
    every select, radio, number and text input a run draws (issue 23). Drawn widgets are left alone:
    their state carries the user's latest change."""
    ss = st.session_state
    kept, last = ss.get(KEPT), ss.get(LAST)
    if kept is None or last is None:
        return
    if DRAWN not in ss:           # the first run: no widget drawn yet, each takes its value when drawn
        return
    drawn = ss[DRAWN]
    if drawn is None:             # which were drawn is not known: every value back, as it was kept
        for key in registry.KEYS:
            if key not in ss or key in hidden_keys(last):
                ss[key] = kept[key]
        return
    present = ss.to_dict()        # one copy: a membership test on the proxy costs a lookup that may raise
    for key in registry.KEYS:
        if key not in drawn and key in present:
            del ss[key]


def restore(keys) -> None:
    """Before a section draws its controls: each control's kept value back in the session state (a
    control the last run drew is there already, with the user's latest change)."""
    ss = st.session_state
    kept = ss.get(KEPT, {})
    for key in keys:
        if key not in ss and key in kept:
            ss[key] = kept[key]


def value_of(key: str, default=None):
    """A control's value now: its widget's while it is drawn, else the value kept for it."""
    ss = st.session_state
    return ss[key] if key in ss else ss.get(KEPT, {}).get(key, default)


def keep(key: str, value) -> None:
    """A control's value set by a callback (before the run): kept too, as its widget may not be drawn."""
    ss = st.session_state
    ss[key] = value
    ss[KEPT] = {**ss.get(KEPT, {}), key: value}


def remember(s: Scenario) -> None:
    """After a successful run: the scenario, and every control's value (drawn or kept); a changed
    scenario puts the previous one on the undo stack (an undo or redo does not) and clears redo."""
    ss = st.session_state
    if not ss.pop(REPLAYING, False):
        _push(ss.get(LAST), s)
    ss[LAST] = s
    history.save(history_id(), ss.get(UNDO, []), ss.get(REDO, []))
    kept = dict(ss.get(KEPT, {}))
    now = ss.to_dict()
    kept.update({key: now[key] for key in registry.KEYS if key in now})
    ss[KEPT] = kept
    ss[DRAWN] = _drawn_so_far()


def _drawn_so_far() -> frozenset[str] | None:
    """The controls this run has drawn so far, from Streamlit 1.67's run context and key-to-id map
    (tests/app/test_lazy_sections.py pins it); None, which restores nothing more, where it cannot say."""
    try:
        ids = get_script_run_ctx().shared.widget_ids_this_run
        mapper = get_session_state()._state._key_id_mapper
        return frozenset(k for k in registry.KEYS if (wid := mapper.get_id_from_key(k, None)) is not None
                         and wid in ids)
    except AttributeError:
        return None


def _push(previous: Scenario | None, s: Scenario) -> None:
    """`previous` becomes the latest undo step when `s` differs from it; a new change clears redo."""
    ss = st.session_state
    if previous is not None and previous != s:
        stack = ss.get(UNDO, [])   # the step shares its unchanged mix and runs with the one before it
        ss[UNDO] = (stack + [history.shared(previous, stack[-1] if stack else None)])[-HISTORY:]
        ss[REDO] = []


def history_id() -> str:
    ss = st.session_state
    if HISTORY_ID not in ss:
        ss[HISTORY_ID] = history.new_id()
    return ss[HISTORY_ID]


def restore_history(hid: object) -> bool:
    """A reload: the undo and redo stacks kept under the link's `h=`, copied under this session's own id."""
    kept = history.load(hid)
    if kept is None:
        return False
    st.session_state[UNDO], st.session_state[REDO] = kept
    history.save(history_id(), *kept)
    return True


def widget_values(s: Scenario) -> dict:
    return registry.to_widgets(s.model_dump())


def scenario_from_widgets() -> dict:
    """The scenario as a plain dict from the widgets (validated by the caller)."""
    ss = st.session_state
    now = ss.to_dict()
    kept = now.get(KEPT, {})
    values = {key: now[key] if key in now else kept.get(key) for key in registry.KEYS}
    last = ss.get(LAST)
    data = registry.from_widgets(values, last.model_dump() if last is not None else None)
    mix = _mix_items(ss.get(MIX, []))
    if mix == ss.get(MIX_DEFAULT):
        mix = None      # still the catalog's default mix, as loaded: the scenario (and its link) says so
    data["preset"] = ss.get("w_preset", "default")
    data["uniform"] = ss.get("uniform")
    data["mix"] = None if ss.get("uniform") else mix
    return data


def initialised() -> bool:
    """Whether this session's controls hold a scenario (its first run loads one)."""
    return KEPT in st.session_state


def ensure_initialised(catalog, initial: Scenario | None = None) -> None:
    if not initialised():
        load_into_widgets(initial or default_scenario(), catalog)


def request_scenario(s: Scenario, notice: str | None = None) -> None:
    """Replace the whole scenario on the next run (import, preset, shared link, trim)."""
    st.session_state[PENDING] = s
    st.session_state[EXTERNAL] = True
    if notice:
        st.session_state[NOTICE] = notice
    st.rerun()


def apply_pending(catalog) -> None:
    """A requested scenario replaces the widgets' values. The scenario it replaces is one undo step
    (an apply, an import or a preset is one change), unless this is an undo or a redo itself."""
    ss = st.session_state
    s = ss.pop(PENDING, None)
    if s is not None:
        if not ss.get(REPLAYING):
            _push(ss.get(LAST), s)
        load_into_widgets(s, catalog)


def undo() -> None:
    """Back to the scenario before the last change (apply, import, preset, trim, edits)."""
    ss = st.session_state
    stack = ss.get(UNDO, [])
    if stack:
        ss[REDO] = ss.get(REDO, []) + [ss[LAST]]
        ss[UNDO] = stack[:-1]
        ss[REPLAYING] = True
        request_scenario(stack[-1], notice="Undone")


def redo() -> None:
    ss = st.session_state
    stack = ss.get(REDO, [])
    if stack:
        ss[UNDO] = (ss.get(UNDO, []) + [ss[LAST]])[-HISTORY:]
        ss[REDO] = stack[:-1]
        ss[REPLAYING] = True
        request_scenario(stack[-1], notice="Redone")


def pin(s: Scenario | None) -> None:
    """Pin `s` as the baseline of every delta (None: unpin, back to the default: since my last change)."""
    if s is None:
        st.session_state.pop(PINNED, None)
    else:
        st.session_state[PINNED] = s
    st.session_state[DELTA] = "since" if s is None else "pin"


def save(name: str, s: Scenario) -> str | None:
    """Keep `s` under `name` for the compare view; an error message, or None."""
    name = (name or "").strip()
    saved = dict(st.session_state.get(SAVED, {}))
    problem = saved_name_problem(name)
    if problem:
        return problem[0].upper() + problem[1:]
    if name not in saved and len(saved) >= MAX_SAVED:
        return f"At most {MAX_SAVED} saved scenarios: remove one first"
    saved[name] = s
    st.session_state[SAVED] = saved
    return None


def forget(name: str) -> None:
    saved = dict(st.session_state.get(SAVED, {}))
    saved.pop(name, None)
    st.session_state[SAVED] = saved
