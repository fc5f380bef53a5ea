"""Headline metrics, each with its difference from the full 913,786-sample mix."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from planner.plan import Plan
from planner.report import article_comparison
from drafter_dashboard.safe_text import md_text
from planner.units import fmt_hours


COLUMNS = 5


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


def _calibration_band(e) -> str:
    """The per-phase calibration's band and basis (issue 22): each phase's row, or the roofline alone,
    and whether it is an extrapolation across architecture class or GPU."""
    if e.calibrated_wall_hours_low is None:
        return ""
    basis = "; ".join(f"{c.phase} {'on ' + c.row if c.row else 'the roofline alone'}"
                      + (" (an extrapolation)" if c.extrapolated else "")
                      for c in (e.prefill_calibration, e.decode_calibration) if c is not None)
    return (f"; calibration band {e.calibrated_wall_hours_low / 24:,.2f}-{e.calibrated_wall_hours_high / 24:,.2f} "
            f"days from held-out published rows ({basis})")


def _recipe(t) -> str:
    if t.drafter == "dflash":
        return f"DFlash {t.drafter_layers} layers, {t.num_anchors} anchors x block {t.block_size}"
    return f"{'EAGLE-3' if t.drafter == 'eagle3' else 'EAGLE'} {t.ttt_steps} TTT step(s)"


def headline(p: Plan, base: Plan | None, unit: str, against: str = "") -> None:
    """The headline figures, units in the labels (values stay short enough to show whole), each with
    its difference from `base` (the pinned scenario, or the full mix with the same settings)."""
    div = 2**40 if unit == "TiB" else 1e12
    e, t, c, q = p.extraction, p.training, p.cost_usd, p.quality
    comp = p.scenario.compression
    n = p.nodes
    # a sampled profile's 95% band: a +- in the label (the value stays short), low-high in the help
    sampled = p.storage_bytes_low is not None and p.storage_bytes_high is not None
    band_s = band_e = ""
    help_s = help_e = ""
    if sampled:
        lo, hi = p.storage_bytes_low / comp / div, p.storage_bytes_high / comp / div
        band_s = f" ±{(hi - lo) / 2:,.2f}"
        help_s = (f"; 95% band {lo:,.2f}-{hi:,.2f} {unit} from the sampled profiles of "
                  f"{', '.join(p.sampled_components)}")
        elo, ehi = e.wall_hours_low / 24, e.wall_hours_high / 24
        band_e = f" ±{(ehi - elo) / 2:,.2f}"
        help_e = f"; 95% band {elo:,.2f}-{ehi:,.2f} days from the sampled profiles"
    items = [
        ("Samples", p.samples, lambda v: f"{v:,.0f}",
         f"training rows (files): {p.conversations:,} conversations" + (", one row per assistant turn"
                                                                        if p.unit == "turn" else ""),
         lambda x: x.samples, "normal"),
        ("Stored tokens", p.tokens, _num, "tokens whose hidden states are stored, after the cap and padding",
         lambda x: x.tokens, "inverse"),
        ((f"Storage ({unit})" if comp == 1 else f"Storage ({unit}, {comp:g}x compressed)") + band_s,
         p.storage_bytes_compressed / div, lambda v: f"{v:,.2f}",
         f"on disk; raw {p.storage_bytes / div:,.2f} {unit}" + help_s, lambda x: x.storage_bytes_compressed / div,
         "inverse"),
    ]
    if n.placement == "local" and n.extraction_nodes > 1:
        items.append((f"Per node ({unit})", p.storage_per_node_bytes / div, lambda v: f"{v:,.2f}",
                      f"each of the {n.extraction_nodes} extraction nodes' disks holds its shard",
                      lambda x: x.storage_per_node_bytes / div, "inverse"))
    if p.gather_hours:
        items.append(("Gather (h)", p.gather_hours, lambda v: f"{v:,.1f}",
                      f"{n.gather_note}; {n.gather_bytes_per_s / 1e9:,.1f} GB/s, limited by the {n.gather_bound}",
                      lambda x: x.gather_hours, "inverse"))
    if comp != 1:
        items.append((f"Raw storage ({unit})", p.storage_bytes / div, lambda v: f"{v:,.2f}",
                      "before compression", lambda x: x.storage_bytes / div, "inverse"))
    items += [
        ("Extraction (GPU-days)", e.gpu_hours / 24, lambda v: f"{v:,.2f}",
         f"{e.gpus_used} x {e.gpu}, limited by {e.bound}; {_mode(e)}", lambda x: x.extraction.gpu_hours / 24,
         "inverse"),
        ("Extraction (days)" + band_e, e.wall_hours / 24, lambda v: f"{v:,.2f}",
         f"regenerate {fmt_hours(e.decode_hours)} + capture {fmt_hours(e.capture_hours)} on {e.nodes} node"
         f"{'s' * (e.nodes > 1)} of {e.gpus_per_node} GPUs" + help_e + _calibration_band(e),
         lambda x: x.extraction.wall_hours / 24, "inverse"),
        ("Transfer (h)", p.transfer_hours, lambda v: f"{v:,.1f}", f"method: {p.transfer_method}",
         lambda x: x.transfer_hours, "inverse"),
        ("Train offline (GPU-days)", t.offline_gpu_hours / 24, lambda v: f"{v:,.2f}",
         f"{t.gpus} x {t.gpu}, {t.epochs:g} epochs, limited by {t.offline_bound}; {_recipe(t)}: "
         f"{t.flops_per_sample / 1e12:,.1f} TFLOP per sample, {t.samples_per_s:,.1f} samples/s, "
         f"{t.tokens_per_s:,.0f} tok/s", lambda x: x.training.offline_gpu_hours / 24, "inverse"),
        ("Train online (GPU-days)", t.online_gpu_hours / 24, lambda v: f"{v:,.2f}",
         "target forward pass rerun every epoch; no hidden-state storage",
         lambda x: x.training.online_gpu_hours / 24, "inverse"),
        ("Total USD offline", c.total_offline, lambda v: f"${v:,.0f}",
         f"extraction ${c.extraction:,.0f} + storage rent ${c.storage:,.0f} + transfer ${c.transfer:,.0f} + "
         f"training ${c.training_offline:,.0f}", lambda x: x.cost_usd.total_offline, "inverse"),
        ("Total USD online", c.total_online, lambda v: f"${v:,.0f}",
         f"regeneration ${c.regeneration:,.0f} + training ${c.training_online:,.0f}; offline cheaper after "
         + ("never" if t.breakeven_epochs is None else f"{t.breakeven_epochs:,.1f} epochs"),
         lambda x: x.cost_usd.total_online, "inverse"),
        ("Offline, wall (days)", p.wall_days_offline, lambda v: f"{v:,.2f}",
         "extraction + gather + transfer + offline training, one after the other", lambda x: x.wall_days_offline,
         "inverse"),
        ("Online, wall (days)", p.wall_days_online, lambda v: f"{v:,.2f}",
         "regeneration + online training", lambda x: x.wall_days_online, "inverse"),
        (f"Acceptance length ({q.eval_engine} K={q.num_speculative_tokens} T={q.temperature:g})",
         q.acceptance_length, lambda v: f"{v:,.2f}",
         f"expected tau of the {q.drafter} drafter for the serving workload, as {q.harness} measures it: "
         f"band {q.acceptance_low:.2f}-{q.acceptance_high:.2f} (basis: the published data-scaling points and "
         "two-harness pairs, see Assumptions)"
         + (" - outside the published points: wide band" if q.extrapolated else ""),
         lambda x: x.quality.acceptance_length, "normal"),
        (f"Speedup (batch {q.serving_batch:g})", q.speedup, lambda v: f"{v:,.2f}x",
         f"expected decoding speedup {q.speedup_low:.2f}x-{q.speedup_high:.2f}x at batch {q.serving_batch:g}; "
         + (f"{q.payback_speedup:.2f}x at the fleet's batch {q.fleet_batch:g}, which the payback uses"
            if q.payback_speedup is not None else "")
         + (f"; pays back in {q.payback_days:,.1f} days of serving on {q.serving_gpu}"
            if q.payback_days is not None else ""), lambda x: x.quality.speedup, "normal"),
        ("USD disaggregated", c.total_disaggregated, lambda v: f"${v:,.0f}",
         f"{t.disaggregated_capture_gpus} capture + {t.disaggregated_train_gpus} trainer GPUs streaming every epoch, "
         f"{p.wall_days_disaggregated:,.2f} days, limited by {t.disaggregated_bound}; offline cheaper after "
         + ("never" if t.breakeven_epochs_disaggregated is None else f"{t.breakeven_epochs_disaggregated:,.1f} epochs"),
         lambda x: x.cost_usd.total_disaggregated, "inverse"),
    ]
    cols = st.columns(COLUMNS)
    for i, (label, value, fmt, help_text, getter, colour) in enumerate(items):
        delta = _signed(fmt, value - getter(base)) if base is not None else None
        cols[i % COLUMNS].metric(label, fmt(value), delta=delta, delta_color=colour, help=md_text(help_text))
    caption = (f"Throughput: {_mode(e)}. Offline dollars: extraction ${c.extraction:,.0f}, storage rent "
               f"${c.storage:,.0f} ({p.scenario.costs.storage_months:g} months), transfer ${c.transfer:,.0f}, "
               f"training ${c.training_offline:,.0f}.")
    if base is not None and against:
        caption += f" Deltas: against {against}."
    st.caption(md_text(caption))


def article_panel(p: Plan) -> None:
    st.markdown("**The seed article's estimate beside this plan**")
    st.table(pd.DataFrame(article_comparison(p)).set_index("metric"))   # a table wraps the long "why"
