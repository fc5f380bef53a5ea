"""Headline metrics, each with its difference from the full 913,786-sample mix."""
from __future__ import annotations

import streamlit as st

from drafter_dashboard.safe_text import md_text
from planner.decisions.headlines import HEADLINES, Headline, shown_difference
from planner.phases.nodes import nodes_text
from planner.planning import Plan
from planner.presets.drafter_kinds import DRAFTER_KINDS
from planner.units import TB, TiB, fmt_hours

METRIC_WIDTH = 172     # px: the grid wraps (5 a row at 1280 px, 3 at 1024) and no value or label is cut
# a label longer than its metric wraps onto a second line instead of ending in "..."; every label takes
# two lines, so the values of a row stay level (a fixed rule of this page, no user text in it)
GRID_CSS = """<style>
.st-key-headline [data-testid="stMetricLabel"] { min-height: 2.7em; align-items: flex-start; }
.st-key-headline [data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"] { white-space: normal;
  overflow: visible; text-overflow: clip; }
.st-key-headline [data-testid="stMetricLabel"] p { white-space: normal; }
.st-key-headline [data-testid="stMetricValue"] { font-size: 1.75rem; }
</style>"""


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


def _basis(e) -> str:
    """What the extraction figure rests on: each phase's calibration row or the roofline alone."""
    parts = [f"{c.phase} {'on ' + c.row if c.row else 'on the roofline alone'}"
             + (", an extrapolation" if c.extrapolated else "")
             for c in (e.prefill_calibration, e.decode_calibration) if c is not None]
    return "; ".join(parts) if parts else _mode(e)


def bands_caption(p: Plan) -> str:
    """The bands to bet on and their basis, in one line under the metrics (issue 22): extraction days,
    tau with where it is measured and the target-size term, offline training days and the bound that
    binds, and the speedup at the serving and the fleet's batch."""
    e, t, q = p.extraction, p.training, p.quality
    ext = f"Extraction {e.wall_hours / 24:,.2f} days"
    if e.wall_hours_low is not None and e.wall_hours_high is not None:
        ext += f" (band {e.wall_hours_low / 24:,.2f}-{e.wall_hours_high / 24:,.2f})"
    ext += f", basis: {_basis(e)}."
    k = "" if q.num_speculative_tokens is None else f" K={q.num_speculative_tokens}"
    tau = (f"τ {q.acceptance_length:.2f} (band {q.acceptance_low:.2f}-{q.acceptance_high:.2f}) as "
           f"{q.eval_engine}{k} T={q.temperature:g} measures it; target-size term x{q.target_factor:.2f} "
           f"({q.target_factor_low:.2f}-{q.target_factor_high:.2f})"
           + ("; outside the published points" if q.extrapolated else "")
           + f"; acceptance rate {q.acceptance_rate:.2f} ({q.acceptance_rate_low:.2f}-{q.acceptance_rate_high:.2f}) "
           f"as {q.eval_engine} prints it.")
    train = (f"Offline training {t.offline_wall_hours / 24:,.2f} days (band {t.offline_wall_hours_low / 24:,.2f}-"
             f"{t.offline_wall_hours_high / 24:,.2f}), bound by {t.bounds.get('offline', t.offline_bound)}.")
    speed = f"Speedup {q.speedup:.2f}x at batch {q.serving_batch:g}"
    if q.payback_speedup is not None:
        speed += f", {q.payback_speedup:.2f}x at the fleet's batch {q.fleet_batch:g} (the payback's)"
    if q.speedup_low < 1:
        speed += f"; its band reaches {q.speedup_low:.2f}x: a slowdown (see the findings)"
    if q.served_cost > 1:
        speed += f"; {q.served_cost_basis}"
    return " ".join([ext, tau, train, speed + "."])


def _measure(q) -> str:
    return f"{q.eval_engine} K={q.num_speculative_tokens} T={q.temperature:g}"


def not_like_for_like(p: Plan, base: Plan | None) -> str:
    """Why this plan's tau and speedup cannot be compared with `base`'s (issue 35: a layout switch that
    also switches the drafter kind and how tau is measured, DFlash at K=15 -> EAGLE-3 at K=3, showed
    3.16 -> 2.66 as a loss), or "" when they can."""
    if base is None:
        return ""
    q, b = p.quality, base.quality
    why = []
    if q.drafter != b.drafter:
        why.append(f"the drafter kind ({_kind(b.drafter)} -> {_kind(q.drafter)})")
    if _measure(q) != _measure(b):
        why.append(f"how τ is measured ({_measure(b)} -> {_measure(q)})")
    if not why:
        return ""
    return (f"τ {b.acceptance_length:.2f} -> {q.acceptance_length:.2f} is not like for like: the change also switched "
            + " and ".join(why) + ". τ and the speedup compare only within one drafter kind and one way of "
            "measuring; their deltas are left out.")


def _kind(drafter: str) -> str:
    return {"dflash": "DFlash", "eagle3": "EAGLE-3", "eagle1": "EAGLE"}.get(drafter, drafter)


def _recipe(t) -> str:
    if DRAFTER_KINDS.lookup(t.drafter).drafts_blocks:
        return f"DFlash {t.drafter_layers} layers, {t.num_anchors} anchors x block {t.block_size}"
    return f"{'EAGLE-3' if t.drafter == 'eagle3' else 'EAGLE'} {t.ttt_steps} TTT step(s)"


SHOWN_UNIT = {"rows": "", "tokens": ""}    # a headline's unit as its label shows it (none for counts)


def _item(h: Headline, fmt, help_text: str, shown: str | None, band: str = "", *, div: float, unit: str,
          name: str | None = None):
    """A metric of headline `h`: (label, text of a value, help, getter of a plan in the shown unit, delta
    colour). `shown`: the unit in the label (None: the headline's; bytes in `unit`); `name`: another name."""
    if shown is None:
        shown = unit if h.unit == "bytes" else SHOWN_UNIT.get(h.unit, h.unit)
    scale = 1 / div if h.unit == "bytes" else 1.0
    label = (f"{name or h.label} ({shown})" if shown else name or h.label) + band
    return label, fmt, help_text, (lambda x: h.get(x) * scale), h.delta_color()


def headline(p: Plan, base: Plan | None, unit: str, against: str = "") -> None:
    """The headline figures, units in the labels (values stay short enough to show whole), each with
    its difference from `base` (the pinned scenario, or the full mix with the same settings)."""
    div = TiB if unit == "TiB" else TB
    e, t, c, q = p.extraction, p.training, p.cost_usd, p.quality
    comp = p.scenario.compression
    n = p.nodes
    # the storage band (every plan's: the lengths' spread, a sampled profile's 95% interval): a +- in the
    # label (the value stays short), low-high in the help; the extraction's only from sampled profiles
    band_s = band_e = ""
    help_s = help_e = ""
    lo_b, hi_b = p.storage_bytes_low, p.storage_bytes_high
    if lo_b is not None and hi_b is not None and lo_b != hi_b:
        lo, hi = lo_b / comp / div, hi_b / comp / div
        band_s = f" ±{(hi - lo) / 2:,.2f}"
        help_s = (f"; band {lo:,.2f}-{hi:,.2f} {unit}: each component's length spread, widened where its length "
                  "is an estimate" + (f"; the 95% band of the sampled profiles of {', '.join(p.sampled_components)}"
                                      if p.sampled_components else ""))
    if p.sampled_components and e.sampled_wall_hours_low is not None:
        elo, ehi = e.sampled_wall_hours_low / 24, e.sampled_wall_hours_high / 24
        band_e = f" ±{(ehi - elo) / 2:,.2f}"
        help_e = f"; 95% band {elo:,.2f}-{ehi:,.2f} days from the sampled profiles"
    # (headline name of planner/decisions/headlines.py: label, getter and which way is better), text of the
    # value, help, and the unit as the label shows it (None: the headline's, bytes in `unit`)
    two = lambda v: f"{v:,.2f}"                               # noqa: E731
    one = lambda v: f"{v:,.1f}"                               # noqa: E731
    usd = lambda v: f"${v:,.0f}"                              # noqa: E731
    dropped = p.rows_before_drop - p.samples      # drop_last's rows, said on the headline (issue 35)
    rows = [
        ("samples", lambda v: f"{v:,.0f}",
         f"training rows (files): {p.conversations:,} conversations" + (", one row per assistant turn"
                                                                        if p.unit == "turn" else "")
         + (f"; drop_last leaves out the last partial capture batch: {dropped:,.0f} of {p.rows_before_drop:,.0f} "
            "rows are never captured" if dropped >= 0.5 else ""),
         f"{dropped:,.0f} cut by drop_last" if dropped >= 0.5 else ""),
        ("tokens", _num, "tokens whose hidden states are stored, after the cap and padding", ""),
        ("storage", two, f"on disk; raw {p.storage_bytes / div:,.2f} {unit}" + help_s,
         (unit if comp == 1 else f"{unit}, {comp:g}x compressed"), band_s),
        ("gpu_days", two, f"{e.gpus_used} x {e.gpu}, limited by {e.bound}; {_mode(e)}", None),
        ("extraction_days", two,
         f"regenerate {fmt_hours(e.decode_hours)} + capture {fmt_hours(e.capture_hours)} on "
         f"{nodes_text(e.nodes, e.gpus_per_node, max(e.gpus, e.gpus_used))}" + help_e + _calibration_band(e),
         None, band_e),
        ("transfer_hours", one, f"method: {p.transfer_method}", None),
        ("train_offline_gpu_days", two,
         f"{t.gpus} x {t.gpu}, {t.epochs:g} epochs, limited by {t.offline_bound}; {_recipe(t)}: "
         f"{t.flops_per_sample / 1e12:,.1f} TFLOP per sample, {t.samples_per_s:,.1f} samples/s, "
         f"{t.tokens_per_s:,.0f} tok/s", None),
        ("train_online_gpu_days", two, "target forward pass rerun every epoch; no hidden-state storage", None),
        ("usd", usd, f"extraction ${c.extraction:,.0f} + storage ${c.storage:,.0f} + transfer ${c.transfer:,.0f} + "
         f"training ${c.training_offline:,.0f}", None),
        ("usd_online", usd,
         f"regeneration ${c.regeneration:,.0f} + training ${c.training_online:,.0f}; offline cheaper after "
         + ("never" if t.breakeven_epochs is None else f"{t.breakeven_epochs:,.1f} epochs"), None),
        ("usd_disaggregated", usd,
         f"{t.disaggregated_capture_gpus} capture + {t.disaggregated_train_gpus} trainer GPUs streaming every epoch, "
         f"{p.wall_days_disaggregated:,.2f} days, limited by {t.disaggregated_bound}; offline cheaper after "
         + ("never" if t.breakeven_epochs_disaggregated is None else f"{t.breakeven_epochs_disaggregated:,.1f} epochs"),
         None),
        ("days", two, "extraction + gather + transfer + offline training, one after the other", None),
        ("days_online", two, "regeneration + online training", None),
        ("acceptance_length", two,
         f"expected tau of the {q.drafter} drafter for the serving workload, as {q.harness} measures it: "
         f"band {q.acceptance_low:.2f}-{q.acceptance_high:.2f} (basis: the published data-scaling points and "
         "two-harness pairs, see Assumptions)"
         + (" - outside the published points: wide band" if q.extrapolated else ""),
         f"{q.eval_engine} K={q.num_speculative_tokens} T={q.temperature:g}"),
        ("speedup", lambda v: f"{v:,.2f}x",
         f"expected decoding speedup {q.speedup_low:.2f}x-{q.speedup_high:.2f}x at batch {q.serving_batch:g} "
         "(below 1: the drafter slows decoding down); "
         + (f"{q.payback_speedup:.2f}x at the fleet's batch {q.fleet_batch:g}, which the payback uses"
            if q.payback_speedup is not None else "")
         + (f"; pays back in {q.payback_days:,.1f} days of serving on {q.serving_gpu}"
            if q.payback_days is not None else ""),
         f"batch {q.serving_batch:g}" if q.speedup >= 1 else f"batch {q.serving_batch:g}, below 1x"),
    ]
    # the figures only some scenarios have come last: the grid above them never moves
    if n.placement == "local" and n.extraction_nodes > 1:
        rows.append(("storage_per_node", two,
                     f"each of the {n.extraction_nodes} extraction nodes' disks holds its shard",
                     None))
    if p.gather_hours:
        rows.append(("gather_hours", one,
                     f"{n.gather_note}; {n.gather_bytes_per_s / 1e9:,.1f} GB/s, limited by the {n.gather_bound}", None))
    if comp != 1:
        rows.append(("raw_storage", two, "before compression", None))
    # below 1x the speedup is a slowdown, and says so in its name
    names = {"speedup": "Slowdown"} if q.speedup < 1 else {}
    items = [_item(HEADLINES[r[0]], *r[1:], div=div, unit=unit, name=names.get(r[0])) for r in rows]
    st.html(GRID_CSS)
    grid = st.container(horizontal=True, wrap=True, gap="small", key="headline")
    unlike = not_like_for_like(p, base)
    for (label, fmt, help_text, getter, colour), r in zip(items, rows, strict=True):
        value = getter(p)
        unit_of = HEADLINES[r[0]].unit        # the difference of the two figures as shown, as Compare takes it
        delta = _signed(fmt, shown_difference(unit_of, value, getter(base))) if base is not None else None
        if unlike and r[0] in ("acceptance_length", "speedup") and delta is not None:
            delta = "not like for like"          # the sentence under the grid says why
        off = delta == "not like for like"
        grid.metric(label, fmt(value), delta=delta, delta_color="off" if off else colour,
                    delta_arrow="off" if off else "auto", help=md_text(help_text), width=METRIC_WIDTH)
    if unlike:
        st.warning(md_text(unlike), icon=":material/compare_arrows:")


def plain_summary(p: Plan) -> str:
    """The bands in plain words, one short line (the basis expander's label): what each main figure may
    come to, without the basis's terms."""
    e, t, q = p.extraction, p.training, p.quality
    parts = []
    if e.wall_hours_low is not None and e.wall_hours_high is not None:
        parts.append(f"extraction {e.wall_hours_low / 24:,.1f}-{e.wall_hours_high / 24:,.1f} days")
    parts.append(f"training {t.offline_wall_hours_low / 24:,.1f}-{t.offline_wall_hours_high / 24:,.1f} days")
    parts.append(f"τ {q.acceptance_low:.2f}-{q.acceptance_high:.2f}")
    return "How sure: " + ", ".join(parts)


def basis(p: Plan, base: Plan | None, against: str = "") -> None:
    """The basis of the figures (issue 22's bands, the throughput, the dollars) behind one expander whose
    label says the ranges in plain words (issue 35)."""
    e, c = p.extraction, p.cost_usd
    caption = (f"Throughput: {_mode(e)}. Offline dollars: extraction ${c.extraction:,.0f}, storage "
               f"${c.storage:,.0f} ({c.storage_preset} at ${c.storage_usd_per_tb_month:,.2f}/TB-month for "
               f"{c.storage_days_held:,.1f} days), transfer ${c.transfer:,.0f}, training ${c.training_offline:,.0f}.")
    if base is not None and against:
        caption += f" Deltas: against {against}."
    with st.expander(md_text(plain_summary(p) + " (the basis)")):
        st.caption(md_text(bands_caption(p)))
        st.caption(md_text(caption))


def article_panel(p: Plan) -> None:
    import pandas as pd  # the first metrics do not wait for pandas (nor the article's comparison)

    from planner.export.report import article_comparison
    st.markdown("**The seed article's estimate beside this plan**")
    st.table(pd.DataFrame(article_comparison(p)).set_index("metric"))   # a table wraps the long "why"


def _holds(per_node: float, cap_tb: float | None, div: float, unit: str) -> tuple[str, str]:
    """('20.53 of 30.72 TB', 'fits' | 'over' | 'not checked': no disk size given)."""
    if cap_tb is None:
        return f"{per_node / div:,.2f} {unit}", "not checked"
    return f"{per_node / div:,.2f} of {cap_tb * 1e12 / div:,.2f} {unit}", "over" if per_node > cap_tb * 1e12 else "fits"


def nodes_panel(p: Plan, unit: str) -> None:
    """Where the states sit, node by node: each extraction node's shard and each training node's share
    against its disk, whatever the transfer (the planner's finding checks the training disks only when
    the states are gathered on one site), and the gather."""
    div = TiB if unit == "TiB" else TB
    n, s = p.nodes, p.scenario
    if n.placement == "shared":
        cap = s.shared_capacity_tb
        text, over = _holds(p.storage_bytes_compressed, cap, div, unit)
        rows = [{"where": "shared filesystem", "nodes": 1, "holds": text, "disk": over,
                 "how": n.gather_note}]
    else:
        ex_text, ex_over = _holds(n.storage_per_node_bytes, s.disk_capacity_tb, div, unit)
        tr_text, tr_over = _holds(n.training_storage_per_node_bytes, s.training.disk_capacity_tb, div, unit)
        arrive = ("the gather" if n.gather_bytes else f"the transfer ({p.transfer_method})"
                  if p.transfer_method != "none" else "capture, in place")
        rows = [{"where": "each extraction node", "nodes": n.writing_nodes, "holds": ex_text, "disk": ex_over,
                 "how": "its shard, written by capture"},
                {"where": "each training node", "nodes": n.training_nodes, "holds": tr_text, "disk": tr_over,
                 "how": f"1/{n.training_nodes} of the states, after {arrive}"}]
    over = [r["where"] for r in rows if r["disk"] == "over"]
    gather = (f"gather {n.gather_bytes / div:,.2f} {unit} in {fmt_hours(n.gather_hours)} at "
              f"{n.gather_bytes_per_s / 1e9:,.1f} GB/s ({n.gather_bound})" if n.gather_bytes else "no gather")
    label = (f"Nodes: {n.extraction_nodes} extraction, {n.training_nodes} training; {gather}"
             + (f"; over the disk: {', '.join(over)}" if over else ""))
    with st.expander(label):     # closed: its label names a disk it overflows
        # a markdown table: plain HTML (no grid above the mix editor's) and cheap to draw on every run
        cols = list(rows[0])
        st.markdown("\n".join(["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
                              + ["| " + " | ".join(md_text(str(r[c])) for c in cols) + " |" for r in rows]))
        st.caption(md_text(n.gather_note))
