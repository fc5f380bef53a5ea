"""The budget panel: budgets, a strategy and its guardrails, Trim; the proposal as a diff with its
totals, every strategy compared; Apply replaces the mix. A proposal belongs to the scenario it was
made from: after any change it is shown as stale and cannot be applied."""
from __future__ import annotations

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from drafter_dashboard import notices
from drafter_dashboard.safe_text import md_text
from drafter_dashboard.state import request_scenario
from planner.decisions.trim import STRATEGIES, Budget, TrimInfeasible, every_strategy, not_distinguishable, trim
from planner.errors import PlannerInputError, describe_validation_error
from planner.ids import FAMILIES
from planner.planning import plan
from planner.scenario import Scenario

RESULT = "_trim_result"        # (the scenario's JSON it was made from, TrimResult)
COMPARE = "_trim_compare"      # (the same JSON, every strategy's result): the frontier chart reads it
# the panel's value widgets, kept while the Budget tab is closed (state.hold; the buttons are not)
HELD = ("w_b_storage", "w_b_gpu_days", "w_b_transfer", "w_b_usd", "w_b_days", "w_b_strategy", "w_b_protect",
        "w_b_min_cap", "w_b_min_share")
HELP = ("proportional: one fraction for all; protect: keep some whole; quality: the most expected acceptance "
        "length (an estimate); cap: the largest sequence length; value: 0.1's sum log(1+rows) heuristic, kept "
        "for scripts (prefer quality)")


def current_compare(s: Scenario) -> dict | None:
    """Every strategy's result for the current scenario, or None (none made, or made for another)."""
    made = st.session_state.get(COMPARE)
    return made[1] if made and made[0] == s.model_dump_json() else None


def storage_budget_bytes(unit: str) -> float | None:
    """The storage budget in bytes (for the storage-vs-rows chart), if one is set: read from the
    panel's field, so the Charts tab has it without drawing the Budget tab's widgets."""
    storage = st.session_state.get("w_b_storage")
    return storage * (2**40 if unit == "TiB" else 1e12) if storage else None


def render(s: Scenario, catalog, unit: str) -> float | None:
    """Returns the storage budget in bytes (for the storage-vs-rows chart), if one is set."""
    c = st.columns(5)
    storage = c[0].number_input(LABELS["storage_tib" if unit == "TiB" else "storage_tb"], min_value=0.0, value=None,
                                key="w_b_storage", placeholder="no limit")
    gpu_days = c[1].number_input(LABELS["gpu_days"], min_value=0.0, value=None, key="w_b_gpu_days",
                                 placeholder="no limit")
    transfer = c[2].number_input(LABELS["transfer_hours"], min_value=0.0, value=None, key="w_b_transfer",
                                 placeholder="no limit")
    usd = c[3].number_input(LABELS["usd"], min_value=0.0, value=None, key="w_b_usd", placeholder="no limit")
    days = c[4].number_input(LABELS["days"], min_value=0.0, value=None, key="w_b_days", placeholder="no limit")
    a, b = st.columns([2, 3])
    strategy = a.selectbox("Strategy", list(STRATEGIES), key="w_b_strategy", help=HELP)
    families = sorted({catalog.components[m["id"]].family for m in st.session_state.get("mix_rows", [])
                       if m["id"] in catalog.components})
    ids = [m["id"] for m in st.session_state.get("mix_rows", [])]
    protect = b.multiselect("Protect (kept whole)", families + ids, key="w_b_protect")
    a, b, d = st.columns([2, 2, 1])
    min_cap = a.number_input("Minimum cap (tokens)", min_value=16, max_value=10**7, value=None, step=256,
                             key="w_b_min_cap", placeholder="none",
                             help="the cap and quality strategies never cap sequences below this")
    floor = b.number_input("Keep at least (share of each family's rows)", min_value=0.0, max_value=1.0, value=None,
                           step=0.05, key="w_b_min_share", placeholder="no floor",
                           help="every component keeps at least this share of its rows, whatever the strategy")
    missing = strategy == "protect" and not protect
    if missing:
        st.caption("Protect: choose the components or families to keep whole first.")
    budget_kwargs = {("storage_tib" if unit == "TiB" else "storage_tb"): storage or None,
                     "gpu_days": gpu_days or None, "transfer_hours": transfer or None, "usd": usd or None,
                     "days": days or None}
    if d.button("Trim", key="w_b_trim", type="primary", width="stretch", disabled=missing):
        st.session_state.pop(RESULT, None)
        st.session_state.pop(COMPARE, None)
        shares = {f: floor for f in FAMILIES} if floor else None
        made_for = s.model_dump_json()
        try:
            budget = Budget(**budget_kwargs)
            result = trim(s, budget, strategy, protect=protect, min_cap=min_cap, min_family_share=shares,
                          catalog=catalog)
            st.session_state[RESULT] = (made_for, result)
            st.session_state[COMPARE] = (made_for, every_strategy(s, budget, protect=protect, min_cap=min_cap,
                                                                  min_family_share=shares, catalog=catalog))
        except ValidationError as exc:
            notices.error(_budget_message(exc))
        except TrimInfeasible as exc:       # its value is the budget in words ("10 TB of storage")
            notices.error(f"Cannot trim to {exc.value}: {exc.allowed}")
        except PlannerInputError as exc:
            notices.error(f"Cannot trim: {exc}")
    made = st.session_state.get(RESULT)
    if made is not None:
        _proposal(s, made[0], made[1], catalog, unit)
    return storage_budget_bytes(unit)


def _note(r) -> str:
    """A row's note: the strategy's note and what it gives up, the empty parts left out."""
    return "; ".join(x for x in (r.note, *r.warnings) if x)


def every_strategy_rows(compare: dict, unit: str) -> tuple[list[dict], list[str]]:
    """The comparison's rows, one per strategy that made a proposal (numbers stay numbers; no cell is
    empty, so none shows a raw None), with what it changes beyond rows and the rows its acceptance band
    cannot tell it apart from; and a line per strategy that could not run, with its reason."""
    div = 2**40 if unit == "TiB" else 1e12
    apart = not_distinguishable({k: r for k, (r, _) in compare.items()})
    rows = [{"strategy": k, f"storage {unit}": r.storage_bytes_after / div, "acceptance length": r.quality_after,
             "low": r.quality_low_after, "high": r.quality_high_after, "speedup": _speed(r.speedup_after),
             "beyond rows": "; ".join(r.beyond_rows) or "rows only",
             "not distinguishable from": ", ".join(apart.get(k, [])) or "none", "note": _note(r) or "–"}
            for k, (r, _) in compare.items() if r is not None]
    skipped = [f"{k}: {why or 'no proposal'}" for k, (r, why) in compare.items() if r is None]
    return rows, skipped


def _every_strategy(compare: dict, unit: str) -> None:
    """The table of every strategy, and an Apply button for each one that made a proposal."""
    st.markdown("**Every strategy for this budget**")
    rows, skipped = every_strategy_rows(compare, unit)
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch",
                 column_config={f"storage {unit}": st.column_config.NumberColumn(format="%.2f"),
                                "acceptance length": st.column_config.NumberColumn(format="%.2f"),
                                "low": st.column_config.NumberColumn(format="%.2f"),
                                "high": st.column_config.NumberColumn(format="%.2f")})
    if skipped:
        st.caption(md_text("Not run: " + "; ".join(skipped) + "."))
    done = [row["strategy"] for row in rows]
    if len(done) > 1 and all(set(row["not distinguishable from"].split(", ")) >= set(done) - {row["strategy"]}
                             for row in rows):
        st.caption("Each row's expected acceptance length lies inside every other row's band (low-high): the "
                   "estimate does not tell them apart. Choose by storage, cost and what each changes beyond rows "
                   "or gives up.")
    for col, k in zip(st.columns(max(1, len(done))), done, strict=False):
        if col.button(f"Apply {k}", key=f"w_b_apply_{k}", width="stretch", help=f"replace the mix with the {k} "
                      "strategy's proposal (one undo step)"):
            st.session_state.pop(RESULT, None)
            request_scenario(compare[k][0].scenario, notice=f"Applied the {k} strategy's mix")


def _speed(x: float) -> str:
    """An expected speedup below 1 is a slowdown, and is called one."""
    return f"speedup {x:.2f}x" if x >= 1 else f"slowdown: {x:.2f}x the speed without a drafter"


def _budget_message(exc: ValidationError) -> str:
    if any("at least one budget" in str(e.get("msg", "")) for e in exc.errors()):
        return "Give at least one budget (storage, extraction GPU-days, transfer hours, dollars or days), then Trim."
    return f"The budget is not valid: {describe_validation_error(exc, name=_label_of)}"


# the budget's fields (planner.decisions.trim.Budget) as the panel labels them: its widgets and its messages
LABELS = {"storage_tb": "Storage (TB)", "storage_tib": "Storage (TiB)", "gpu_days": "Extraction (GPU-days)",
          "transfer_hours": "Transfer (h)", "usd": "Total offline (USD)", "days": "Wall-clock (days)"}


def _label_of(path: str) -> str:
    return LABELS.get(path, path or "the budget")


def _proposal(s: Scenario, made_for: str, result, catalog, unit: str) -> None:
    """The proposal: stale (and not appliable) once the scenario changed; else the diff per component,
    the totals it gives, every strategy side by side and Apply."""
    if made_for != s.model_dump_json():
        st.warning("This proposal was made for an earlier scenario: the mix or a setting changed since. Trim "
                   "again to see one for the current scenario; a stale proposal cannot be applied.")
        return
    div = 2**40 if unit == "TiB" else 1e12
    proposed = plan(result.scenario, catalog if result.scenario.uniform is None else None)
    by_id = {c.id: c for c in proposed.components}
    st.markdown(f"**Proposed mix ({md_text(result.strategy)})** {md_text(result.note)}")
    # what the proposal gives up: components left empty, protected rows cut, a slowdown
    for w in result.warnings:
        st.warning(md_text(w))
    rows = []
    for ch in result.changes:
        pc = by_id.get(ch.id)
        rows.append({"id": ch.id, "family": pc.family if pc else "", "rows now": ch.before, "proposed": ch.after,
                     "change %": 100 * (ch.after - ch.before) / ch.before if ch.before else 0.0,
                     f"storage {unit}": pc.storage_bytes / proposed.scenario.compression / div if pc else 0.0,
                     "share of rows %": 100 * pc.share_of_rows if pc else 0.0})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", column_config={
        "rows now": st.column_config.NumberColumn(format="localized"),
        "proposed": st.column_config.NumberColumn(format="localized"),
        "change %": st.column_config.NumberColumn(format="%.1f"),
        f"storage {unit}": st.column_config.NumberColumn(format="%.2f"),
        "share of rows %": st.column_config.NumberColumn(format="%.1f")})
    families = {}
    for c in proposed.components:
        families[c.family] = families.get(c.family, 0.0) + c.share_of_rows
    if result.max_seq_len_after != result.max_seq_len_before:
        st.write(md_text(f"Maximum sequence length: {result.max_seq_len_before} -> {result.max_seq_len_after}"))
    st.write(md_text(
        f"Totals: {proposed.storage_bytes_compressed / div:,.2f} {unit}, {proposed.extraction.gpu_hours / 24:,.2f} "
        f"extraction GPU-days, ${proposed.cost_usd.total_offline:,.0f} offline, "
        f"{proposed.wall_days_offline:,.2f} days; "
        f"expected acceptance length {result.quality_after:.2f} ({result.quality_low_after:.2f}-"
        f"{result.quality_high_after:.2f}, an estimate; {result.quality_before:.2f} before), "
        f"{_speed(result.speedup_after)}. "
        "Families (share of rows): " + ", ".join(f"{f} {v:.0%}" for f, v in sorted(families.items()))))
    st.write(md_text(" · ".join(f"{u.label}: {u.share:.1%} used" for u in result.budgets)))
    for line in result.beyond_rows:     # what it changes beyond rows: a sequence cap and what it cuts
        st.warning(md_text(f"Beyond rows: {line}"))
    compare = current_compare(s)
    if compare:
        _every_strategy(compare, unit)
    if st.button("Apply the proposed mix", key="w_b_apply"):
        st.session_state.pop(RESULT, None)
        request_scenario(result.scenario, notice="Applied the trimmed mix")
