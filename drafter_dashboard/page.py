"""The page, run by app.py on every script run. What the first numbers (the headline metrics) need
comes first: the scenario from the widgets' state, its plan, the delta's base and the metrics; then
the verdict above them, the sidebar's controls and the tabs. A tab's widgets run in a fragment of
their own (an export format, a budget figure, a chart pick reruns that tab, not the page), and the
modules only other tabs use are imported when those tabs are drawn (plotly's subplots, the trim, the
manifest, the profiler)."""
from __future__ import annotations

import functools
import json
import logging
import sys

import streamlit as st
from pydantic import ValidationError

from drafter_dashboard import metrics, notices, session
from drafter_dashboard.safe_text import md_text
from drafter_dashboard.state import (
    DELTA,
    DELTA_MODES,
    EXTERNAL,
    LAST,
    NOTICE,
    PENDING,
    PINNED,
    REDO,
    SAVED,
    UNDO,
    apply_pending,
    ensure_initialised,
    history_id,
    hold,
    initialised,
    remember,
    restore_hidden_widgets,
    restore_history,
    scenario_from_widgets,
)
from planner import PlannerInputError, Scenario, plan
from planner.errors import describe_validation_error
from planner.export.share import MAX_PARAM_CHARS, ShareError, decode, decode_set, encode, encode_set
from planner.scenario import default_scenario, input_name

log = logging.getLogger("drafter_dashboard")

# The server sends each element the script draws from its event-loop thread, which must take the GIL
# from the script thread for every message; at Python's default 5 ms switch interval the headline's
# messages wait until the script's run is nearly over. 1 ms lets them go out while the rest is drawn
# (bench/run.py's control -> metric figure; process-wide, set once when the server imports the page).
SWITCH_INTERVAL_S = 0.001
if sys.getswitchinterval() > SWITCH_INTERVAL_S:
    sys.setswitchinterval(SWITCH_INTERVAL_S)
# The first screen (issue 35): less room above the title and a smaller title; the tab strip and the
# Charts tab's picker wrap instead of scrolling when the main column is narrow (1024 px, sidebar open). A fixed rule of
# this page, no user text in it.
PAGE_CSS = """<style>
[data-testid="stMainBlockContainer"] { padding-top: 1.6rem; padding-bottom: 3rem; }
[data-testid="stMainBlockContainer"] h1 { font-size: 1.9rem; padding: 0; }
[data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; column-gap: .9rem; }
[data-testid="stButtonGroup"] [role="radiogroup"] { flex-wrap: wrap; overflow: visible; }
</style>"""
UNITS = "w_units"     # the sidebar's TB/TiB radio (drafter_dashboard/sidebar.py); TB until it is drawn


def run() -> None:
    """One run of the page; an unexpected error is one line (see _failed)."""
    st.set_page_config(page_title="Drafter data planner", page_icon="💾", layout="wide")
    try:
        main()
    except Exception as exc:   # st.rerun / st.stop are BaseExceptions and pass through
        _failed(exc)


def _baseline(s: Scenario, catalog):
    """The full 913,786-sample mix with the same settings (plan() keeps it: editing the mix plans the
    same full-mix scenario again, which is found there)."""
    return plan(Scenario.model_validate({**s.model_dump(), "mix": None, "uniform": None}), catalog)


def _load_link(catalog) -> None:
    """First run of a session: the scenario from the link (?s=...), or the defaults with one warning."""
    initial, problem = None, None
    link = st.query_params.get("s")
    if link:
        try:
            initial = decode(link)
            plan(initial, catalog if initial.uniform is None else None)
        except (ShareError, PlannerInputError) as exc:
            initial, problem = None, str(exc)
    ensure_initialised(catalog, initial)
    st.session_state[EXTERNAL] = initial is not None
    restore_history(st.query_params.get("h"))   # a reload: the undo history kept under the link's h=
    if problem:
        st.session_state[NOTICE] = ("warning", f"The shared link could not be used ({problem}); "
                                               "showing the defaults instead.")
    kept = st.query_params.get("c")
    if kept and not problem:
        try:
            pinned, saved = decode_set(kept)
        except ShareError as exc:
            st.session_state[NOTICE] = ("warning", f"The link's pinned and saved scenarios could not be used ({exc}).")
        else:
            # each is planned now: one that cannot be (a visitor's own upload, say) is named once and
            # left out, instead of breaking every later run of the page
            dropped = []
            if pinned is not None and (why := _unplannable(pinned, catalog)):
                dropped.append(f"the pinned scenario ({why})")
                pinned = None
            for name, s in list(saved.items()):
                if why := _unplannable(s, catalog):
                    dropped.append(f"saved {name!r} ({why})")
                    del saved[name]
            if pinned is not None:
                st.session_state[PINNED] = pinned
            st.session_state[SAVED] = saved
            if dropped:
                st.session_state[NOTICE] = ("warning", "The link's scenarios that cannot be planned here were left "
                                                       "out (not pinned or saved): " + "; ".join(dropped))


def _unplannable(s: Scenario, catalog) -> str | None:
    """Why scenario `s` cannot be planned with this session's catalog, or None."""
    try:
        plan(s, catalog if s.uniform is None else None)
    except (PlannerInputError, ValueError) as exc:
        return str(exc)
    return None


def main() -> None:
    from drafter_dashboard import mix_editor
    catalog = session.catalog()
    if not initialised():
        _load_link(catalog)
    apply_pending(catalog)
    mix_editor.apply_edits(catalog)
    restore_hidden_widgets()

    history = st.sidebar.container()      # undo, redo, pin, save: above the controls, drawn below
    st.html(PAGE_CSS)
    st.title("Drafter data planner")
    st.caption("What a speculative-decoding drafter's training data (DFlash, EAGLE-3) costs before you spend a "
               "GPU-hour: hidden-state storage, extraction GPU time, transfer, training and dollars, component by "
               "component. Every number is an estimate with its source; see Assumptions.")

    notice = st.session_state.pop(NOTICE, None)
    if notice:
        kind, text = notice if isinstance(notice, tuple) else ("success", notice)
        notices.show(kind, text)

    # the first numbers: the scenario is read from the widgets' state (a changed control's new value is
    # there before its widget is drawn again), so the metrics go out before the sidebar is built
    scenario, p = _current(catalog)
    verdict_box = st.container()          # the verdict sits above the metrics, computed after them
    unit = st.session_state.get(UNITS) or "TB"
    base, against = _delta_base(scenario, catalog)
    for f in p.findings:
        if f.severity == "blocks":      # what blocks, one line; its fixes are under Findings (issue 35)
            st.error(md_text(f"{f.text}. To fix it: see Findings, under the figures."))
    metrics.headline(p, base, unit, against)

    # everything below waits for the metrics
    from drafter_dashboard import compare, glossary, sidebar
    v = verdict_of(p, catalog)
    verdict_box.info(md_text(v.sentence), icon=":material/balance:")
    sidebar.render(catalog)
    remember(scenario)                    # after the sidebar: it records which controls this run drew
    compare.controls(scenario, history)   # after remember: Undo is enabled by the change just made
    # one row under the metrics (issue 35: the tabs within the first screen at 1440 x 900): the findings,
    # the terms; then the basis and the nodes, each closed behind a label that says it in plain words
    left, right = st.columns([3, 1], vertical_alignment="center")
    with left:
        findings_list(p)
    with right:
        glossary.popover()
    left, right = st.columns(2)
    with left:
        metrics.basis(p, base, against)
    with right:
        metrics.nodes_panel(p, unit)

    # Only the open tab is drawn: a closed tab's elements would still go to the browser on every run, and
    # the browser's work grows with every element it is sent (bench/run.py, issue 23). The first screen
    # needs no plotly.js. A closed tab's value widgets keep their values (state.hold).
    link = _link_params(scenario)
    tab_mix, tab_charts, tab_budget, tab_compare, tab_article, tab_io, tab_assume = st.tabs(
        ["Mix", "Charts", "Budget", "Compare", "Against the article", "Export / import / profile", "Assumptions"],
        key="w_tab", on_change="rerun")
    if tab_mix.open:
        with tab_mix:
            _mix_tab(scenario, p, catalog, unit)
    else:
        hold(mix_editor.HELD)
    if tab_budget.open:
        with tab_budget:
            _budget_tab(scenario, catalog, unit)
    else:
        from drafter_dashboard.budget import HELD
        hold(HELD)
    if tab_charts.open:
        with tab_charts:
            _charts_tab(scenario, p, catalog, unit)
    if tab_compare.open:
        with tab_compare:
            _compare_tab(scenario, p, catalog, unit)
    if tab_article.open:              # the waterfalls are plotly charts
        with tab_article:
            from drafter_dashboard import charts
            charts.article_road(p, *_road(p, catalog), unit)
            metrics.article_panel(p)
    if tab_io.open:
        with tab_io:
            _io_tab(p, catalog, v, link, unit)
    else:
        from drafter_dashboard.io_panel import HELD
        hold(HELD)
    if tab_assume.open:               # a table of every assumption: sent when shown, not on every run
        with tab_assume:
            st.dataframe([a.model_dump() for a in p.assumptions], hide_index=True, width="stretch")

    _write_link(link)
    st.session_state[EXTERNAL] = False


def _mix_tab(scenario: Scenario, p, catalog, unit: str) -> None:
    """The mix editor, or what a uniform scenario is."""
    from drafter_dashboard import mix_editor
    if scenario.uniform is not None:
        u = scenario.uniform
        st.info(f"This scenario is {u.samples:,} uniform samples of {u.tokens:g} tokens ({u.response_tokens:g} "
                f"generated), as in the seed article. Load the default preset to edit components.")
        return
    mix_editor.render(p, catalog, unit)


def _fragment(fn):
    """st.fragment: the tab's own widgets rerun it alone. A change that moves the scenario (Apply a trim,
    import a manifest, a profiled component, remove a saved scenario) calls st.rerun(), which reruns the
    whole page. A fragment's rerun gets the arguments of the last full run: the scenario and its plan,
    which only a full run changes. An unexpected error in its own rerun is one line, as in run()."""
    @functools.wraps(fn)
    def guarded(*args, **kw) -> None:
        try:
            fn(*args, **kw)
        except Exception as exc:   # st.rerun / st.stop are BaseExceptions and pass through
            _failed(exc)
    return st.fragment(guarded)


@_fragment
def _budget_tab(scenario: Scenario, catalog, unit: str) -> None:
    from drafter_dashboard import budget
    budget.render(scenario, catalog, unit)


@_fragment
def _charts_tab(scenario: Scenario, p, catalog, unit: str) -> None:
    from drafter_dashboard import budget, charts
    full = _baseline(scenario, catalog) if scenario.uniform is None else None
    charts.render(p, unit, catalog, budget.storage_budget_bytes(unit), full, budget.current_compare(scenario))


@_fragment
def _compare_tab(scenario: Scenario, p, catalog, unit: str) -> None:
    from drafter_dashboard import calibration_panel, compare
    compare.view(p, catalog, unit)
    calibration_panel.render(scenario, p, catalog, unit)


@_fragment
def _io_tab(p, catalog, v, link: dict, unit: str) -> None:
    from drafter_dashboard import io_panel, mix_editor
    st.subheader("Export")
    io_panel.export_panel(p, mix_editor.table(p, catalog, unit), catalog,
                              _report_html(p, catalog, v), link)
    st.subheader("Import")
    io_panel.import_panel(catalog)
    st.subheader("Your own runs")
    io_panel.runs_panel(p.scenario)
    st.subheader("Profile your own dataset")
    io_panel.profile_panel(catalog, p.scenario.model)




def _plan_of(s: Scenario, catalog):
    """The plan of `s`: plan() keeps it by the scenario's canonical JSON and the catalog's version (its
    one cache, planner/planning.py), so a display-only change, a control outside the scenario or the
    delta's other scenario never plans again; the Plan it returns is frozen and shared."""
    return plan(s, catalog if s.uniform is None else None)


def _delta_base(scenario: Scenario, catalog):
    """The plan every delta is taken against, by the mode picked above the metrics: the scenario before
    the last change (the default, issue 35: a model, GPU or layout change shows its delta), the pinned
    one, or the full mix with the same settings (a sidebar change moves the full mix too, so it shows
    no delta there). Before any change "since" falls back to the full mix and says so."""
    ss = st.session_state
    ss.setdefault(DELTA, "pin" if ss.get(PINNED) is not None else "since")
    # its radio is drawn in the sidebar's header, beside Pin (compare.controls), after the metrics: its value
    # is in the state before this run (issue 35: the tabs within the first screen at 1440 x 900)
    mode = ss[DELTA] if ss.get(DELTA) in DELTA_MODES else "since"
    pinned, undo = ss.get(PINNED), ss.get(UNDO)
    why = {"since": " (nothing changed yet)", "pin": " (nothing is pinned)"}.get(mode, "")
    # the run right after a change has not put the previous scenario on the undo stack yet (remember()
    # runs after the metrics): that one is the last run's scenario
    last = ss.get(LAST)
    before = last if last is not None and last != scenario else (undo[-1] if undo else None)
    other = {"since": (before, "the scenario before the last change"),
             "pin": (pinned, "the pinned scenario")}.get(mode)
    if other and other[0] is not None:
        try:
            return _plan_of(other[0], catalog), other[1]
        except PlannerInputError:       # e.g. it named an upload this catalog no longer has
            why = f" ({other[1]} cannot be planned any more)"
    if scenario.uniform is None:
        return _baseline(scenario, catalog), \
            "the full mix (913,786 conversations selected) with the same settings" + why
    return None, ""


@st.cache_data(max_entries=16, show_spinner=False)
def _report_cached(key: str, _p, _scenarios: dict, _catalog, _verdict, _steps, _hours, unit: str = "TB") -> str:
    """The report of this plan with the pinned and saved ones (planned here, once per set of scenarios)."""
    others = {}
    for name, s in _scenarios.items():
        try:
            others[name] = _plan_of(s, _catalog)
        except PlannerInputError:    # a saved scenario the catalog no longer knows: Compare says so
            pass
    from drafter_dashboard import report
    return report.build(_p, others, _verdict, _steps, _hours, unit=unit)


def _road(p, catalog):
    """The article's storage and extraction hours, step by step to this plan's (planner.export.report), worked
    out once for the plan object (Plan.worked_out: plan() keeps the plan by the scenario and the catalog's
    version, so the page needs no cache of its own keyed by the scenario's JSON)."""
    def road():
        from planner.export.report import article_hours_steps, article_steps
        return article_steps(p, catalog if p.scenario.uniform is None else None), article_hours_steps(p)
    return p.worked_out(("road", catalog), road)


def verdict_of(p, catalog):
    """planner.decisions.verdict for this plan, once per plan object (Plan.worked_out, as _road)."""
    def answer():
        from planner.decisions.verdict import verdict
        return verdict(p, catalog if p.scenario.uniform is None else None)
    return p.worked_out(("verdict", catalog), answer)


def _report_html(p, catalog, v) -> str:
    """The report of this plan with the pinned and saved ones, built once per set of scenarios."""
    ss = st.session_state
    pinned, saved = ss.get(PINNED), ss.get(SAVED, {})
    scenarios = ({"pinned": pinned} if pinned is not None else {}) | dict(saved)
    unit = ss.get("w_units", "TB")
    key = json.dumps([p.scenario.model_dump_json(), str(catalog.path), unit]
                     + [[k, s.model_dump_json()] for k, s in scenarios.items()])
    return _report_cached(key, p, scenarios, catalog, v, *_road(p, catalog), unit=unit)


def _current(catalog) -> tuple[Scenario, object]:
    """The scenario the widgets describe and its plan. A widget value that makes it invalid is named
    in one sentence, and the page goes on with the last scenario that planned."""
    try:
        scenario = Scenario.model_validate(scenario_from_widgets())
        return scenario, _plan_of(scenario, catalog)
    except ValidationError as exc:
        problem = f"This setting is not valid, so the page shows the last scenario that was: " \
                  f"{describe_validation_error(exc, prefix='scenario', name=input_name)}"
    except PlannerInputError as exc:
        problem = f"This scenario cannot be planned, so the page shows the last one that could: {exc}"
    st.error(md_text(problem))
    last = st.session_state.get(LAST) or default_scenario()
    return last, _plan_of(last, catalog)


def findings_list(p) -> None:
    """Every finding, by severity (blocking ones are also the banner above the metrics)."""
    if not p.findings:
        return
    count = {sev: sum(f.severity == sev for f in p.findings) for sev in ("blocks", "costs", "note")}
    label = ", ".join(f"{n} {name}" for name, n in (("blocking", count["blocks"]), ("costing time or money",
                      count["costs"]), ("notes", count["note"])) if n)
    # a toggle, not an expander: its items are drawn only while it is on, and a keyed toggle stays the
    # same widget when its label's counts change (a keyed expander whose label changed would close)
    if not st.toggle(f"Findings: {label}", key="w_open_findings"):
        return
    with st.container(border=True):
        for sev, title in (("blocks", "Blocks the plan"), ("costs", "Costs time or money"), ("note", "Notes")):
            items = [f for f in p.findings if f.severity == sev]
            if items:
                st.markdown(f"**{title}**")
                for f in items:
                    st.markdown(f"- {md_text(f.text)}" + (f" (fix: {md_text(f.fix)})" if f.fix else ""))


def _link_params(scenario: Scenario) -> dict:
    """s: the scenario; c: the pinned and saved ones, "" when there are none or they do not fit the
    link's size limit (then `c_left_out` is their length)."""
    link = encode(scenario)
    pinned, saved = st.session_state.get(PINNED), st.session_state.get(SAVED, {})
    kept = encode_set(pinned, saved) if pinned is not None or saved else ""
    if len(kept) + len(link) > MAX_PARAM_CHARS:
        return {"s": link, "c": "", "c_left_out": len(kept)}
    return {"s": link, "c": kept}


def _write_link(params: dict) -> None:
    """The URL carries the scenario (s), the key of this session's undo history on the server (h, see
    drafter_dashboard/history.py) and, if they fit, the pinned and saved ones (c)."""
    hid = history_id() if st.session_state.get(UNDO) or st.session_state.get(REDO) else None
    for key, value in (("s", params["s"]), ("h", hid), ("c", params["c"] or None)):
        if st.query_params.get(key) != value:
            if value is None:
                del st.query_params[key]
            else:
                st.query_params[key] = value
    if params.get("c_left_out"):
        st.caption(f"The link carries the current scenario; the pinned and saved ones ({params['c_left_out']:,} "
                   "characters) do not fit its size limit and were left out.")


def _failed(exc: Exception) -> None:
    """Any unexpected error: logged on the server with its traceback; the page shows one line without
    a traceback or a server path. A scenario that came from a link, an import, a preset or a trim
    and broke the page is replaced by the defaults (once)."""
    log.exception("the page failed")
    if st.session_state.get(EXTERNAL):
        st.session_state[EXTERNAL] = False
        st.session_state[PENDING] = default_scenario()
        st.session_state[NOTICE] = ("warning", f"That scenario could not be shown ({type(exc).__name__}); "
                                               "showing the defaults instead.")
        st.rerun()
    st.error(md_text(f"Something went wrong while drawing the page ({type(exc).__name__}). Your settings are "
                       "kept; change the last setting back or load a preset."))

