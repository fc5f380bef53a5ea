"""Compare: the plan with a run's measured figures (a `planner calibrate --out` file, uploaded)
beside the tabled plan, and that run's forecast of the rest (issue 24).

The measured figures replace the tables' bytes per token, overhead per file and capture rate
(planner/runs/calibration.py Measured); each figure they move says so."""
from __future__ import annotations

import streamlit as st

from drafter_dashboard.safe_text import md_text
from planner.errors import PlannerInputError
from planner.planning import Plan, plan
from planner.runs.calibration import MAX_CALIBRATION_BYTES, Measured, RunCalibration, parse
from planner.units import bytes_to, fmt_bytes

# label, getter, moved by the measured figures
FIGURES = [
    ("Bytes per token", lambda p, u: float(p.bytes_per_token), True),
    ("Overhead per file (bytes)", lambda p, u: p.file_overhead_bytes, True),
    ("Capture rate (tokens/s per GPU)", lambda p, u: p.extraction.prefill_tokens_per_s_per_gpu, True),
    ("Storage ({u})", lambda p, u: bytes_to(p.storage_bytes_compressed, u), True),
    ("Extraction (hours)", lambda p, u: p.extraction.wall_hours, True),
    ("Extraction (GPU-days)", lambda p, u: p.extraction.gpu_hours / 24, True),
    ("Total offline (USD)", lambda p, u: p.cost_usd.total_offline, True),
    ("Stored tokens", lambda p, u: p.tokens, False),
    ("Training rows (files)", lambda p, u: p.samples, False),
]


def rows(tabled: Plan, calibrated: Plan, label: str, unit: str) -> list[dict]:
    """The figures of both plans; those the calibration replaces or moves say where they come from."""
    out = []
    for name, get, moved in FIGURES:
        a, b = get(tabled, unit), get(calibrated, unit)
        out.append({"figure": name.format(u=unit), "tabled plan": a, "calibrated plan": b,
                    "source": label if moved and a != b else ("unchanged" if a == b else "follows")})
    return out


def forecast_lines(c: RunCalibration) -> list[str]:
    """What was measured, then the forecast's time, storage and disk: the CLI text's own lines
    (RunCalibration.forecast_claims), each led by its label."""
    done = (f"{c.rows_measured:,} of {c.rows_planned:,.0f} rows measured ({fmt_bytes(c.bytes_measured)}, "
            f"x{c.bytes_ratio:.3f} the plan's bytes for them)" if c.bytes_ratio is not None
            else f"{c.rows_measured:,} rows measured")
    lines = [done] + [f"{label}: {words}" for label, words in c.forecast_claims()]
    if c.files_skipped.count:
        lines.append(f"{c.files_skipped.count:,} files skipped")
    return lines


def render(scenario, current: Plan, catalog, unit: str) -> None:
    st.subheader("Planned against your run")
    up = st.file_uploader("Calibration file (planner calibrate RUN_DIR --manifest M --out FILE)", type=["json"],
                          max_upload_size=max(1, MAX_CALIBRATION_BYTES // 2**20), key="w_calibration")
    if up is None:
        st.caption("Run the pipeline for an hour on your machine, then `planner calibrate` its output folder: "
                   "upload the file it writes to see this plan with your run's bytes and rate.")
        return
    try:
        c = parse(up.getvalue(), up.name, "calibration file")
        m = Measured.of(c)
        calibrated = plan(scenario, catalog if scenario.uniform is None else None, measured=m)
    except PlannerInputError as exc:
        st.error(md_text(f"Calibration not used: {exc}"))
        return
    st.caption(md_text(f"Figures marked with the {'measurement' if c.measured_by else 'run'} were {m.label} "
                       f"(layout {c.layout}); the others follow from them or do not move."))
    st.dataframe(rows(current, calibrated, m.label, unit), hide_index=True, width="stretch")
    first, *rest = forecast_lines(c)
    # a preflight's file (planner/runs/preflight.py) measured a few rows on one machine, not a run
    whose = "Preflight's forecast" if c.measured_by else "That run's forecast"
    st.markdown(md_text(f"{whose}: {first}.") + "\n" + "".join(f"\n- {md_text(x)}" for x in rest))
