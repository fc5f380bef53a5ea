"""Readable summaries of a Plan: the text report of the CLI and the article comparison."""
from __future__ import annotations

import textwrap

from pydantic import BaseModel

from planner.decisions.verdict import verdict
from planner.phases.nodes import nodes_text
from planner.planning import Plan
from planner.presets.drafter_kinds import DRAFTER_KINDS
from planner.units import bytes_to, fmt_bytes, fmt_hours, fmt_usd

# The seed article's figures (binary GiB as printed there).
ARTICLE = {
    "samples": 913_786,
    "tokens_per_sample": 800,
    "bytes_per_token": 51_204,
    "storage_bytes": 913_786 * 800 * 51_204,
    "hidden_bytes_per_token": 5 * 5120 * 2,      # 5 layers x 5120 x bf16
    "id_bytes_per_token": 4,                     # an int32 token id
    "tokens_per_s": 120,
    "batching": 4,
    "single_stream_hours": 1057.6,
    "batched_hours": 264.4,
    "output_tokens": 456_893_000,
}


class Step(BaseModel):
    step: str
    storage_bytes: int
    why: str


class HoursStep(BaseModel):
    step: str
    hours: float
    why: str


def article_steps(plan: Plan, catalog=None) -> list[Step]:
    """The road from the article's 37,431,598,675,200 bytes to this plan's storage_bytes, one cause at a
    time, each step the bytes once that cause is applied. Until the last step the figures are for the
    article's 913,786 conversations (this mix's bytes per conversation x 913,786), so the mix's own size
    is one step of its own; the last step is this plan's storage_bytes exactly."""
    from planner import planning
    a = ARTICLE
    scale = a["samples"] / plan.conversations if plan.conversations else 1.0
    # this mix as conversations at their real lengths (no cap, no per-turn rows, no padding), then capped
    whole = plan.scenario.with_changes(unit="conversation", capture_batch_size=1)
    raw = planning.plan(whole.with_changes(max_seq_len="none"), catalog, band=False)
    capped = planning.plan(whole.with_changes(max_seq_len=plan.max_seq_len or "none"), catalog,
                           band=False).unpadded_tokens
    bpt_ids = a["hidden_bytes_per_token"] + plan.id_mask_bytes_per_token
    cap = "no cap" if plan.max_seq_len is None else f"the {plan.max_seq_len:,}-token cap ({plan.overflow}s longer rows)"
    rows = [
        ("the article", a["storage_bytes"], f"{a['samples']:,} samples x {a['tokens_per_sample']} tokens x "
                                            f"{a['bytes_per_token']:,} bytes"),
        ("real lengths", raw.unpadded_tokens * a["bytes_per_token"] * scale,
         f"{raw.unpadded_tokens / max(plan.conversations, 1):,.0f} tokens per conversation (the mix's measured lengths"
         f"{', responses regenerated' if plan.scenario.regenerate else ''}) instead of {a['tokens_per_sample']}"),
        ("the cap", capped * a["bytes_per_token"] * scale, cap),
        ("id and mask dtypes", capped * bpt_ids * scale,
         f"{plan.id_mask_bytes_per_token} bytes of token ids and loss mask per token in the {plan.layout} layout "
         f"instead of the article's {a['id_bytes_per_token']}-byte id"),
        ("per-turn rows", plan.unpadded_tokens * bpt_ids * scale,
         "a row per assistant turn, each the prefix through it" if plan.unit == "turn"
         else "a row per conversation, as the article"),
        ("batch padding", plan.tokens * bpt_ids * scale,
         (f"batches of {plan.capture_batch_size} padded to their longest row"
          f"{' (length-sorted)' if plan.sort_by_length else ''}" if plan.padding == "batch" else
          f"every row padded to {plan.max_seq_len:,} tokens" if plan.padding == "max_length" else "no padding")
         + (", the last partial batch left out (drop_last)" if plan.drop_last and plan.capture_batch_size > 1 else "")),
        ("the layout's layers", plan.tokens * plan.bytes_per_token * scale,
         f"{plan.bytes_per_token - plan.id_mask_bytes_per_token:,} bytes per token of states "
         f"({len(plan.layers)} layers of {plan.model}, {plan.hidden_dtype}, and what else the layout stores)"
         + (", as the article" if plan.bytes_per_token - plan.id_mask_bytes_per_token == a["hidden_bytes_per_token"]
            else f" instead of {a['hidden_bytes_per_token']:,}")),
        ("file overhead", plan.storage_bytes * scale,
         f"{plan.files:,.0f} files, {plan.file_overhead_bytes:,.0f} bytes of header and block rounding each"),
        ("the mix", plan.storage_bytes, f"{plan.conversations:,} conversations" + (
            ", as the article" if plan.conversations == a["samples"] else f" instead of {a['samples']:,}")),
    ]
    return [Step(step=s, storage_bytes=round(v), why=w) for s, v, w in rows]


def article_hours_steps(plan: Plan) -> list[HoursStep]:
    """The road from the article's 264.4 h of batched extraction to this plan's extraction wall-clock:
    the tokens to generate, the real decode rate, the GPUs, and the capture pass it left out."""
    a, e = ARTICLE, plan.extraction
    article_rate = a["tokens_per_s"] * a["batching"]
    rows = [
        ("the article", a["output_tokens"] / article_rate / 3600,
         f"{a['output_tokens']:,} tokens at {a['tokens_per_s']} tok/s x {a['batching']} batching on one GPU"),
        ("tokens to generate", plan.output_tokens / article_rate / 3600,
         f"{plan.output_tokens:,.0f} tokens to generate (the mix's responses"
         f"{'' if plan.scenario.regenerate else ', none: not regenerated'})"),
        ("decode rate", plan.output_tokens / e.decode_tokens_per_s_per_gpu / 3600 if e.decode_tokens_per_s_per_gpu
         else 0.0, f"{e.decode_tokens_per_s_per_gpu:,.0f} tok/s per GPU ({e.mode}, batch {e.decode_batch}) instead of "
                   f"{article_rate}"),
        ("GPUs", e.decode_hours, f"{e.gpus_used} x {e.gpu} instead of one"),
        ("capture pass", e.wall_hours, f"a prefill pass over the {plan.tokens:,.0f} stored tokens"
                                       f"{'' if e.capture_hours else ' (rides along in this mode)'}"),
    ]
    return [HoursStep(step=s, hours=h, why=w) for s, h, w in rows]


def _storage_reasons(p: Plan) -> list[str]:
    """Why this plan's storage differs from the article's."""
    tps = p.tokens / p.samples if p.samples else 0.0
    reasons = []
    if abs(tps - 800) > 1:
        reasons.append(f"{tps:,.0f} stored tokens per training row instead of 800 "
                       f"(component length statistics{', sequence cap' if p.max_seq_len else ''}"
                       f"{', per-turn fan-out' if p.unit == 'turn' else ''}"
                       f"{', batch padding' if p.padding != 'none' else ''})")
    if p.bytes_per_token != ARTICLE["bytes_per_token"]:
        reasons.append(f"{p.bytes_per_token:,} bytes per token in the {p.layout} layout instead of 51,204")
    if p.file_overhead_bytes:
        reasons.append(f"{p.file_overhead_bytes:,.0f} bytes of file overhead per row")
    if p.samples != ARTICLE["samples"]:
        reasons.append(f"{p.samples:,.0f} training rows instead of 913,786")
    return reasons


def _time_reasons(p: Plan) -> list[str]:
    """Why this plan's extraction time differs from the article's."""
    e = p.extraction
    reasons = []
    if e.mode in ("roofline", "calibrated"):
        reasons.append(f"real batching: {e.decode_batch} sequences per replica give "
                       f"{e.decode_tokens_per_s_per_gpu:,.0f} decode tok/s per GPU ({e.decode_bound}-bound) "
                       f"instead of 120 x 4")
        reasons.append(f"{e.gpus_used} GPUs instead of 1")
        if e.capture_hours:
            reasons.append(f"plus a capture (prefill) pass of {fmt_hours(e.capture_hours)} the article left out")
    elif e.gpus_used != 1:
        reasons.append(f"{e.gpus_used} GPUs instead of 1")
    if round(p.output_tokens) != ARTICLE["output_tokens"]:
        reasons.append(f"{p.output_tokens / 1e6:,.0f}M tokens to generate instead of 457M")
    return reasons


def article_comparison(plan: Plan) -> list[dict]:
    """Rows of (metric, article, this plan, why they differ)."""
    compression = plan.scenario.compression
    link = plan.transfer_method in ("link", "object_store")
    return [
        {"metric": "hidden-state storage", "article": f"{fmt_bytes(ARTICLE['storage_bytes'])} "
         f"({bytes_to(ARTICLE['storage_bytes'], 'TiB') * 1024:,.1f} GiB)",
         "plan": fmt_bytes(plan.storage_bytes) + (f" raw, {fmt_bytes(plan.storage_bytes_compressed)} at "
                                                f"{compression:g}x compression" if compression != 1 else ""),
         "why": "; ".join(_storage_reasons(plan)) or "same inputs"},
        {"metric": "extraction wall-clock", "article": "44.1 days single stream; 11.0 days with 4x batching",
         "plan": fmt_hours(plan.extraction.wall_hours), "why": "; ".join(_time_reasons(plan)) or "same inputs"},
        {"metric": "transfer", "article": "not computed (4-8 h for 17-35 TB at a theoretical 10 Gb/s)",
         "plan": fmt_hours(plan.transfer_hours) if plan.transfer_method != "none" else "none (same machine)",
         "why": f"{plan.transfer_method}, {plan.scenario.transfer.link_gbps:g} Gb/s at "
                f"{plan.scenario.transfer.efficiency:.0%} efficiency" if link else plan.transfer_method},
    ]


def _quality_lines(p: Plan) -> list[str]:
    q = p.quality
    if q is None:
        return []
    domains = ", ".join(f"{f} {v:.2f}" for f, v in q.per_domain.items() if q.workload.get(f, 0) > 0)
    out = [f"  drafter quality        acceptance length {q.acceptance_length:.2f} ({q.acceptance_low:.2f}-"
           f"{q.acceptance_high:.2f}), speedup {q.speedup:.2f}x ({q.speedup_low:.2f}-{q.speedup_high:.2f}) "
           "[estimate]",
           f"                         per family served: {domains}",
           f"                         acceptance rate {q.acceptance_rate:.2f} ({q.acceptance_rate_low:.2f}-"
           f"{q.acceptance_rate_high:.2f}) as {q.eval_engine} prints it"
           + (f"; the cycle as served costs x{q.served_cost:.2f}" if q.served_cost > 1 else "")]
    if q.payback_days is not None:
        out.append(f"  payback                {q.payback_days:,.1f} days of serving on {q.serving_gpu} "
                   f"(saves {fmt_usd(q.saved_usd_per_day or 0)} a day)")
    return out


def _node_lines(p, unit: str) -> list[str]:
    n = p.nodes
    per = (f"{bytes_to(n.storage_per_node_bytes, unit):,.2f} {unit} per extraction node" if n.placement == "local"
           else "nothing on the nodes' disks")
    e, t = p.extraction, p.training
    ex = nodes_text(n.extraction_nodes, n.extraction_gpus_per_node, max(e.gpus, e.gpus_used))
    tr = nodes_text(n.training_nodes, n.training_gpus_per_node, t.gpus)
    lines = [f"  nodes                  extraction {ex}, training {tr}; {n.placement} placement: {per}; capture writes "
             f"{n.capture_write_bytes_per_s / 1e9:,.1f} GB/s ({n.capture_write_bound})"]
    if n.gather_hours:
        lines.append(f"  gather                 {fmt_hours(n.gather_hours)}: "
                     f"{bytes_to(n.gather_bytes, unit):,.2f} {unit} at "
                     f"{n.gather_bytes_per_s / 1e9:,.1f} GB/s (limited by the {n.gather_bound}); "
                     f"{bytes_to(n.training_storage_per_node_bytes, unit):,.2f} {unit} per training node")
    else:
        lines.append(f"                         {n.gather_note}")
    return lines


def _recipe(t) -> str:
    if DRAFTER_KINDS.lookup(t.drafter).drafts_blocks:
        return f"({t.drafter_layers} layers, {t.num_anchors} anchors x block {t.block_size})"
    return f"({t.drafter_layers} layer, {t.ttt_steps} TTT step{'s' if t.ttt_steps != 1 else ''})"


def _calibration_lines(e) -> list[str]:
    cal = e.calibration
    if cal is None:
        return []
    if not cal.row:
        return [f"                         {cal.note}"]
    return [f"                         calibrated on {cal.row}: measured {cal.measured:,.0f} / roofline "
            f"{cal.roofline:,.0f} {cal.metric} tok/s/GPU = x{cal.factor:.2f} ({cal.source}, {cal.date})"]


def _band_line(p: Plan, unit: str) -> list[str]:
    """The storage band beside the storage (none where every length is exact, or in a trim's inner plan)."""
    lo, hi = p.storage_bytes_low, p.storage_bytes_high
    if lo is None or hi is None or lo == hi:
        return []
    why = "sampled profiles' 95% intervals and " if p.sampled_components else ""
    return [f"  storage band (raw)     {bytes_to(lo, unit):>16,.2f} to {bytes_to(hi, unit):,.2f} {unit}   "
            f"({why}each component's length spread, widened where its length is an estimate)"]


def _figure_lines(p: Plan, unit: str, measured: str | None) -> list[str]:
    """The plan's figures: rows, tokens, storage, extraction, nodes, transfer."""
    e = p.extraction
    mark = f"   [{measured}]" if measured else ""
    return [
        f"  conversations          {p.conversations:>16,}",
        f"  training rows (files)  {p.samples:>16,.0f}",
        f"  stored tokens          {p.tokens:>16,.0f}   ({p.tokens / max(p.samples, 1):,.0f} per row)",
        f"  bytes per token        {p.bytes_per_token:>16,}{mark}",
        f"  storage (raw)          {bytes_to(p.storage_bytes, unit):>16,.2f} {unit}{mark}",
        *_band_line(p, unit),
        f"  storage (/{p.scenario.compression:g} compr.)  {bytes_to(p.storage_bytes_compressed, unit):>15,.2f} {unit}",
        f"  tokens to generate     {p.output_tokens:>16,.0f}",
        f"  extraction             {e.gpus_used} x {e.gpu}, TP {e.tensor_parallel}: {fmt_hours(e.wall_hours)} wall, "
        f"{e.gpu_hours:,.0f} GPU-h (limited by {e.bound})" + (f"; capture rate{mark}" if measured else ""),
        f"                         {e.mode}: prefill {e.prefill_tokens_per_s_per_gpu:,.0f} tok/s/GPU, decode "
        f"{e.decode_tokens_per_s_per_gpu:,.0f} tok/s/GPU (batch {e.decode_batch}), serving "
        f"{e.serving_output_tokens_per_s_per_gpu:,.0f} output tok/s/GPU",
        *_calibration_lines(e),
        *_node_lines(p, unit),
        f"  transfer               {fmt_hours(p.transfer_hours)} ({p.transfer_method})",
    ]


def _training_cost_lines(p: Plan) -> list[str]:
    """Training each way, its break-even in epochs, and the cost each way."""
    t, c = p.training, p.cost_usd
    online = "never" if t.breakeven_epochs is None else f"{t.breakeven_epochs:,.1f} epochs"
    disaggregated = ("never" if t.breakeven_epochs_disaggregated is None
                     else f"{t.breakeven_epochs_disaggregated:,.1f} epochs")
    return [
        f"  training offline       {t.gpus} x {t.gpu}: {fmt_hours(t.offline_wall_hours)} wall, "
        f"{t.offline_gpu_hours:,.0f} GPU-h (limited by {t.offline_bound})",
        f"                         {t.drafter} {_recipe(t)}: {t.flops_per_sample / 1e12:,.2f} TFLOP per sample, "
        f"{t.samples_per_s:,.1f} samples/s, {t.tokens_per_s:,.0f} tok/s",
        f"  training online        {fmt_hours(t.online_wall_hours)} wall, {t.online_gpu_hours:,.0f} GPU-h",
        f"  training disaggregated {t.disaggregated_capture_gpus} capture + {t.disaggregated_train_gpus} trainer GPUs: "
        f"{fmt_hours(t.disaggregated_wall_hours)} wall, {t.disaggregated_gpu_hours:,.0f} GPU-h "
        f"(limited by {t.disaggregated_bound})",
        f"  offline cheaper after  {online} (than online), {disaggregated} (than disaggregated)",
        f"  cost offline           {fmt_usd(c.total_offline)} (extraction {fmt_usd(c.extraction)}, storage "
        f"{fmt_usd(c.storage)}, transfer {fmt_usd(c.transfer)}, training {fmt_usd(c.training_offline)})",
        f"                         storage: {c.storage_preset} at ${c.storage_usd_per_tb_month:,.2f}/TB-month for "
        f"{c.storage_days_held:,.1f} days ({c.storage_months_held:,.2f} months)",
        f"  cost online            {fmt_usd(c.total_online)}",
        f"  cost disaggregated     {fmt_usd(c.total_disaggregated)}",
    ]


def _table_lines(p: Plan, unit: str) -> list[str]:
    """The components, the roads from the article's storage and hours, and the article's rows."""
    lines = [f"  {'component':<18}{'rows':>10}{'tokens':>16}{'storage':>12}{'rows %':>8}{'bytes %':>8}"]
    for x in p.components:
        lines.append(f"  {x.id:<18}{x.rows:>10,}{x.tokens:>16,.0f}{bytes_to(x.storage_bytes, unit):>9,.2f} {unit}"
                     f"{x.share_of_rows:>8.1%}{x.share_of_bytes:>8.1%}")
    lines += ["", "From the article's storage to this plan's:"]
    for st in article_steps(p):
        lines.append(f"  {st.step:<20}{bytes_to(st.storage_bytes, unit):>12,.2f} {unit}   {st.why}")
    lines += ["", "From the article's extraction hours to this plan's:"]
    for hs in article_hours_steps(p):
        lines.append(f"  {hs.step:<20}{hs.hours:>12,.1f} h    {hs.why}")
    lines += ["", "Against the seed article:"]
    for row in article_comparison(p):
        lines.append(f"  {row['metric']}: article {row['article']}; this plan {row['plan']}")
        lines.append(f"    why: {row['why']}")
    return lines


def _finding_lines(p: Plan) -> list[str]:
    if not p.findings:
        return []
    lines = ["", "Warnings:"]
    for f in p.findings:
        lines.append(f"  - {'BLOCKS: ' if f.severity == 'blocks' else ''}{f.text}")
        if f.severity == "blocks" and f.fix:
            lines += textwrap.wrap(f"fix: {f.fix}", 100, initial_indent="      ", subsequent_indent="        ")
    return lines


def text_report(plan: Plan, binary: bool = False, measured: str | None = None) -> str:
    """`measured`: the label of a run's calibration the plan took its bytes and capture rate from,
    said beside each figure it replaces."""
    unit = "TiB" if binary else "TB"
    lines = [
        f"drafter data planner {plan.planner_version} - preset {plan.scenario.preset}",
        f"model {plan.model}, layout {plan.layout} (layers {plan.layers}, {plan.hidden_dtype})",
        "",
        *textwrap.wrap(f"Verdict: {verdict(plan).sentence}", 100, subsequent_indent="  "),
        "",
        *_figure_lines(plan, unit, measured),
        *_training_cost_lines(plan),
        *_quality_lines(plan),
        "",
        *_table_lines(plan, unit),
        *_finding_lines(plan),
        "", "Assumptions [tag] and sources:",
        *[f"  - {a.name}: {a.value} [{a.tag}]\n      {a.source}" for a in plan.assumptions],
    ]
    return "\n".join(lines)
