"""Headline metrics, each with its difference from the full 913,786-sample mix."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from planner.plan import Plan
from planner.report import article_comparison
from drafter_dashboard.safe_text import md_text
from planner.units import fmt_hours


def _num(x: float) -> str:
    if abs(x) >= 1e9:
        return f"{x / 1e9:,.2f}B"
    if abs(x) >= 1e6:
        return f"{x / 1e6:,.1f}M"
    return f"{x:,.0f}"


def _signed(text_fn, d: float) -> str | None:
    if abs(d) < 1e-9:
        return None
    return ("+" if d > 0 else "-") + text_fn(abs(d))


def _mode(e) -> str:
    cal = e.calibration
    if e.mode != "calibrated" or cal is None:
        return f"{e.mode} throughput"
    if not cal.row:
        return "calibrated: no published row near, the roofline alone"
    return (f"calibrated on {cal.row} (measured {cal.measured:,.0f} / roofline {cal.roofline:,.0f} {cal.metric} "
            f"tok/s per GPU = x{cal.factor:.2f})")


def _recipe(t) -> str:
    if t.drafter == "dflash":
        return f"DFlash {t.drafter_layers} layers, {t.num_anchors} anchors x block {t.block_size}"
    return f"{'EAGLE-3' if t.drafter == 'eagle3' else 'EAGLE'} {t.ttt_steps} TTT step(s)"


def headline(p: Plan, base: Plan | None, unit: str) -> None:
    div = 2**40 if unit == "TiB" else 1e12
    e, t, c = p.extraction, p.training, p.cost_usd
    items = [
        ("Samples", p.samples, _num, "training rows (files); after per-turn fan-out in the turn unit",
         lambda q: q.samples, "normal"),
        ("Stored tokens", p.tokens, _num, "tokens whose hidden states are stored, after the cap",
         lambda q: q.tokens, "inverse"),
        ("Storage", p.storage_bytes_compressed / div, lambda v: f"{v:,.2f} {unit}",
         f"on disk after {p.scenario.compression:g}x compression; raw {p.storage_bytes / div:,.2f} {unit}",
         lambda q: q.storage_bytes_compressed / div, "inverse"),
        ("Extraction GPU-days", e.gpu_hours / 24, lambda v: f"{v:,.2f}",
         f"{e.gpus_used} x {e.gpu}, limited by {e.bound}; {_mode(e)}", lambda q: q.extraction.gpu_hours / 24,
         "inverse"),
        ("Extraction wall-clock", e.wall_hours / 24, lambda v: f"{v:,.2f} days",
         f"regenerate {fmt_hours(e.decode_hours)} + capture {fmt_hours(e.capture_hours)}",
         lambda q: q.extraction.wall_hours / 24, "inverse"),
        ("Transfer", p.transfer_hours, lambda v: f"{v:,.1f} h", f"method: {p.transfer_method}",
         lambda q: q.transfer_hours, "inverse"),
        ("Training offline", t.offline_gpu_hours / 24, lambda v: f"{v:,.2f} GPU-days",
         f"{t.gpus} x {t.gpu}, {t.epochs:g} epochs, limited by {t.offline_bound}; {_recipe(t)}: "
         f"{t.flops_per_sample / 1e12:,.1f} TFLOP per sample, {t.samples_per_s:,.1f} samples/s, "
         f"{t.tokens_per_s:,.0f} tok/s", lambda q: q.training.offline_gpu_hours / 24, "inverse"),
        ("Training online", t.online_gpu_hours / 24, lambda v: f"{v:,.2f} GPU-days",
         "target forward pass rerun every epoch; no hidden-state storage",
         lambda q: q.training.online_gpu_hours / 24, "inverse"),
        ("Total USD offline", c.total_offline, lambda v: f"${v:,.0f}",
         f"extraction ${c.extraction:,.0f} + storage ${c.storage:,.0f} + transfer ${c.transfer:,.0f} + "
         f"training ${c.training_offline:,.0f}", lambda q: q.cost_usd.total_offline, "inverse"),
        ("Total USD online", c.total_online, lambda v: f"${v:,.0f}",
         f"regeneration ${c.regeneration:,.0f} + training ${c.training_online:,.0f}; offline cheaper after "
         + ("never" if t.breakeven_epochs is None else f"{t.breakeven_epochs:,.1f} epochs"),
         lambda q: q.cost_usd.total_online, "inverse"),
        ("Wall-clock offline", p.wall_days_offline, lambda v: f"{v:,.2f} days",
         "extraction + transfer + offline training, one after the other", lambda q: q.wall_days_offline, "inverse"),
        ("Wall-clock online", p.wall_days_online, lambda v: f"{v:,.2f} days",
         "regeneration + online training", lambda q: q.wall_days_online, "inverse"),
        ("Acceptance length", p.quality.acceptance_length, lambda v: f"{v:,.2f}",
         f"expected tau of the {p.quality.drafter} drafter for the serving workload: {p.quality.acceptance_low:.2f}-"
         f"{p.quality.acceptance_high:.2f} (an estimate from published points, see Assumptions)"
         + (" - outside the published points: wide band" if p.quality.extrapolated else ""),
         lambda q: q.quality.acceptance_length, "normal"),
        ("Speedup", p.quality.speedup, lambda v: f"{v:,.2f}x",
         f"expected decoding speedup {p.quality.speedup_low:.2f}x-{p.quality.speedup_high:.2f}x at batch 1"
         + (f"; pays back in {p.quality.payback_days:,.1f} days of serving on {p.quality.serving_gpu}"
            if p.quality.payback_days is not None else ""),
         lambda q: q.quality.speedup, "normal"),
        ("Disaggregated", c.total_disaggregated, lambda v: f"${v:,.0f}",
         f"{t.disaggregated_capture_gpus} capture + {t.disaggregated_train_gpus} trainer GPUs streaming every epoch, "
         f"{p.wall_days_disaggregated:,.2f} days, limited by {t.disaggregated_bound}; offline cheaper after "
         + ("never" if t.breakeven_epochs_disaggregated is None else f"{t.breakeven_epochs_disaggregated:,.1f} epochs"),
         lambda q: q.cost_usd.total_disaggregated, "inverse"),
    ]
    cols = st.columns(6)
    for i, (label, value, fmt, help_text, getter, colour) in enumerate(items):
        delta = _signed(fmt, value - getter(base)) if base is not None else None
        cols[i % 6].metric(label, fmt(value), delta=delta, delta_color=colour, help=md_text(help_text))
    caption = f"Throughput: {_mode(e)}."
    if base is not None:
        caption += " Deltas: against the full 913,786-sample mix with the same settings."
    st.caption(md_text(caption))


def article_panel(p: Plan) -> None:
    st.markdown("**The seed article's estimate beside this plan**")
    st.dataframe(pd.DataFrame(article_comparison(p)), hide_index=True, width="stretch")
