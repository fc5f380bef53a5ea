"""The sidebar: every assumption of the scenario, with its catalog default and source.

A loop over the sections (planner.scenario.inputs.SECTIONS): each draws the inputs the Scenario declares in it
(planner/scenario/inputs.py: label, help, widget, column, shown/enabled rules), in their order. The few whose
options or label come from the presets in use (a GPU list, the layout's own defaults, a custom model's
grid) are drawn by the functions of SPECIAL, which read their label and help from the declaration too."""
from __future__ import annotations

import streamlit as st

from drafter_dashboard.registry import BY_PLACEMENT, CAP_MODE, CAP_MODES, CONTROLS, SET, WL_MODE, WL_MODES, widget_range
from drafter_dashboard.safe_text import md_text
from drafter_dashboard.state import keep, request_scenario, restore, value_of
from planner.ids import FAMILIES
from planner.presets.drafter_kinds import DRAFTER_KINDS
from planner.presets.specs import (
    ModelSpec,
    disk_presets,
    gpu_presets,
    layout_presets,
    model_presets,
    storage_price_presets,
)
from planner.scenario import Scenario, gpus_on_nodes
from planner.scenario.inputs import SECTIONS as ALL_SECTIONS
from planner.scenario.inputs import Declared, in_section, literal_choices
from planner.scenario.model import PRESETS


def _k(key: str) -> str:
    """A control's key, its kept value put back in the session state first if the last run did not
    draw it (state.restore_hidden_widgets took it out), so the widget shows what the user set."""
    restore((key,))
    return key


def _num(container, label: str, key: str, blank: bool = False, **kw):
    """A number input whose range is the scenario model's (so any value a link carries fits);
    `blank`: the field may be empty (None). The value itself comes from the session state."""
    if blank:
        kw["value"] = None
    return container.number_input(label, key=_k(key), **widget_range(key), **kw)


def _gpus_from_nodes(phase: str, nodes_key: str, per_key: str, gpus_key: str) -> None:
    """Nodes (or GPUs per node) changed: the GPU count follows (planner.scenario.model.gpus_on_nodes), as the
    CLI's --nodes sets --gpus; a product above the count's bound is left for the scenario to name."""
    nodes, per = value_of(nodes_key), value_of(per_key)
    if nodes and per:
        try:
            keep(gpus_key, gpus_on_nodes(phase, int(nodes), int(per)))
        except ValueError:      # above the count's bound: left for the scenario to name
            pass


# The collapsed sections: each is built only while it is open (an expander alone still builds its
# contents on every run). Its controls keep their values in the scenario, the link and the manifest
# while closed (state.restore_hidden_widgets puts back every control a run did not draw).
SECTIONS = {t: f"w_open_{t.split()[0].lower()}" for t, expanded in ALL_SECTIONS.items() if not expanded}


def _section(sb, label: str):
    """A collapsed sidebar section whose open state reruns the page (its `.open` says whether to build it)."""
    return sb.expander(label, expanded=False, key=SECTIONS[label], on_change="rerun")


_BY_PATH = {c.path: c for c in CONTROLS}


def _widget_value(path: str):
    """The scenario value a drawn (or kept) control holds now, for the shown/enabled rules."""
    c = _BY_PATH[tuple(path.split("."))]
    return c.from_widget(value_of(c.key, c.default))


def _holds(rule) -> bool:
    return rule is None or _widget_value(rule[0]) in rule[1]


def _options(d: Declared) -> list:
    """A select's or radio's options: the widget value for None (if any), then the field's Literal."""
    return ([d.input.none] if d.input.none is not None else []) + list(d.choices)


def _draw(container, d: Declared, **kw) -> bool:
    """One declared input's widget (its label, help, range and options from the declaration)."""
    i = d.input
    if i.widget == "special":
        return SPECIAL[d.path](container, d)
    if i.help is not None:
        kw["help"] = i.help
    if i.enabled_when is not None:
        kw["disabled"] = not _holds(i.enabled_when)
    if i.widget in ("select", "radio"):
        if i.labels:
            kw["format_func"] = i.labels.get
        if i.widget == "radio":
            container.radio(i.label, _options(d), key=_k(i.key), horizontal=i.horizontal, **kw)
        else:
            container.selectbox(i.label, _options(d), key=_k(i.key), **kw)
    elif i.widget in ("toggle", "checkbox"):
        getattr(container, i.widget)(i.label, key=_k(i.key), **kw)
    elif i.widget == "text":
        container.text_input(i.label, key=_k(i.key), **kw)
    else:
        if i.step is not None:
            kw["step"] = i.step
        if i.key in SYNC:
            kw.update(on_change=_gpus_from_nodes, args=SYNC[i.key])
        # an empty number box stands for None where the field takes None and no widget value does
        _num(container, i.label, i.key, blank=d.optional and i.none is None, **kw)
    return True


def _draw_section(section: str) -> None:
    """The section's inputs in order. Consecutive half-width inputs (or a wide and a narrow one) with
    the same shown rule share a row of columns, drawn alternately into them; a caption starts anew."""
    cols, kind, rule, n = None, None, None, 0
    for d in in_section(section, Scenario):
        i = d.input
        if i.caption:
            st.caption(i.caption)
            cols = None
        if not _holds(i.shown_when):
            continue
        if i.col == "full":
            cols = None
            _draw(st, d)
            continue
        k = "half" if i.col == "half" else "thirds"
        if cols is None or (k, i.shown_when) != (kind, rule):
            cols, kind, rule, n = st.columns(2 if k == "half" else [2, 1]), k, i.shown_when, 0
        if _draw(cols[n % len(cols)], d):
            n += 1


def render(catalog) -> str:
    """Draw the controls; returns the display unit ('TB' or 'TiB')."""
    sb = st.sidebar
    sb.header("Scenario")
    c1, c2 = sb.columns([3, 2])
    c1.selectbox("Preset", list(PRESETS), key="w_preset_pick",
                 help="default: the 913,786-sample mix, SpecForge DFlash, roofline. seed-article: the article's "
             "back-of-envelope to the byte.")
    if c2.button("Load", key="w_preset_load", width="stretch"):
        name = st.session_state["w_preset_pick"]
        request_scenario(PRESETS[name](), notice=f"Loaded the {name} preset")
    unit = sb.radio("Units", ["TB", "TiB"], horizontal=True, key="w_units",
                    help="Decimal TB (10^12 bytes) by default; binary TiB (2^40) on request")
    for section, expanded in ALL_SECTIONS.items():
        if expanded:
            with sb.expander(section, expanded=True):
                _draw_section(section)
            continue
        sec = _section(sb, section)
        if sec.open:                  # built only while open: the closed ones keep their values
            with sec:
                _draw_section(section)
    return unit


# ---------------------------------------------------------------- the inputs drawn by hand
def _layout():
    return layout_presets()[value_of("w_layout")]


def _gpu_help() -> str:
    return md_text("; ".join(f"{g}: {v.name}" for g, v in gpu_presets().items()))


def _disk_help() -> str:
    return md_text("; ".join(f"{k}: {v['name']}" for k, v in disk_presets().items()))


def _model(c, d: Declared) -> bool:
    c.selectbox(d.input.label, list(model_presets()) + ["custom"], key=_k(d.input.key), help=d.input.help)
    return True


def _custom_model(c, d: Declared) -> bool:
    """A custom model's figures (config.json), or the preset model's summary."""
    if value_of("w_model") != "custom":
        m = model_presets()[value_of("w_model")]
        c.caption(md_text(f"{m.name}: hidden {m.hidden_size:,}, {m.num_layers} layers, {m.params / 1e9:,.1f}B "
                          f"params [{m.tag}]"),
                  help=md_text(m.source + (f" Estimates: {m.estimates}" if m.estimates else "")))
        return True
    a, b = c.columns(2)
    _num(a, "hidden size", "w_cm_hidden")
    _num(b, "layers", "w_cm_layers")
    _num(a, "full-attention layers", "w_cm_full",
         help="the rest are linear-attention layers with a fixed per-sequence state")
    _num(b, "vocab", "w_cm_vocab")
    _num(a, "Q heads", "w_cm_q")
    _num(b, "KV heads", "w_cm_kv")
    _num(a, "head dim", "w_cm_hd")
    _num(b, "KV latent dim (0 = none)", "w_cm_latent", help="MLA-style compressed KV cache width")
    _num(a, "params (B)", "w_cm_params_b")
    _num(b, "active params (B)", "w_cm_active_b")
    _num(a, "MLP width (0 = 8/3 x hidden)", "w_cm_ffn",
         help="config.json intermediate_size: sizes the drafter's layers")
    _num(b, "vision params (B)", "w_cm_vision_b", help="a text forward does not run the vision tower")
    _num(a, "MTP params (B)", "w_cm_mtp_b", help="nor the multi-token-prediction head")
    b.checkbox("tied embeddings", key=_k("w_cm_tied"), help="untied: the input embedding is a lookup, no FLOPs")
    c.caption("Linear-attention (Gated DeltaNet) layers, from config.json")
    a, b = c.columns(2)
    _num(a, "key heads", "w_cm_lin_k", help="linear_num_key_heads")
    _num(b, "value heads", "w_cm_lin_v", help="linear_num_value_heads")
    _num(a, "key head dim", "w_cm_lin_kd")
    _num(b, "value head dim", "w_cm_lin_vd")
    _num(a, "conv kernel", "w_cm_lin_kernel", help="linear_conv_kernel_dim")
    b.selectbox("state dtype", list(literal_choices(ModelSpec.model_fields["linear_state_dtype"].annotation)),
                key=_k("w_cm_lin_dtype"),
                help="mamba_ssm_dtype: vLLM caches the temporal state in it")
    _num(c, "state bytes per layer (0 = from the shape)", "w_cm_state", step=65536,
         help="an explicit per-sequence state of one linear-attention layer (conv + temporal)")
    c.caption("MoE (0 experts = dense): what the verify step reads, from config.json")
    a, b = c.columns(2)
    _num(a, "routed experts", "w_cm_experts", help="num_experts / n_routed_experts a layer")
    _num(b, "experts per token", "w_cm_topk", help="num_experts_per_tok (top-k)")
    _num(c, "routed expert params (B)", "w_cm_expert_b",
         help="every routed expert over all layers: layers x experts x 3 x hidden x moe_intermediate_size")
    return True


def _layout_pick(c, d: Declared) -> bool:
    c.selectbox(d.input.label, list(layout_presets()), key=_k(d.input.key), help=d.input.help)
    lay = _layout()
    c.caption(md_text(f"{lay.name}: {lay.file_pattern}"),
              help=md_text(f"Source: {lay.source}" + (f" Estimates: {lay.estimates}" if lay.estimates else "")))
    return True


def _unit(c, d: Declared) -> bool:
    u = _layout().defaults.unit
    c.radio(f"{d.input.label} (layout's: {u.value})", _options(d), key=_k(d.input.key), horizontal=True,
            help=md_text(f"{d.input.help} This layout: {u.value} ({u.source})"))
    return True


def _cap(c, d: Declared) -> bool:
    """max_seq_len's three states: the layout's cap, a cap of w_cap tokens, or none."""
    ds = _layout().defaults
    a, b = c.columns(2)
    a.selectbox(f"Sequence cap (layout's: {ds.max_seq_len.value})", list(CAP_MODES), key=_k(CAP_MODE),
                help=md_text(f"This layout: {ds.max_seq_len.value} ({ds.max_seq_len.source}); rows past it are "
                             f"{'skipped' if ds.overflow.value == 'skip' else 'truncated'}"))
    _num(b, d.input.label, d.input.key, step=256, disabled=value_of(CAP_MODE) != "cap")
    return True


def _capture_batch(c, d: Declared) -> bool:
    ds = _layout().defaults
    _num(c, d.input.label, d.input.key,
         help=md_text(f"This layout: {ds.capture_batch_size.value} rows ({ds.capture_batch_size.source}); "
                      f"padding: {ds.padding.value}. 1 = no padding"))
    return True


def _sort(c, d: Declared) -> bool:
    c.selectbox(f"{d.input.label} (layout's: {'sorted' if _layout().defaults.sort_by_length.value else 'file order'})",
                [w for _, w in d.input.mapping], key=_k(d.input.key), help=d.input.help)
    return True


def _gpu(c, d: Declared) -> bool:
    c.selectbox(d.input.label, list(gpu_presets()) + ["custom"], key=_k(d.input.key), help=_gpu_help())
    return True


def _custom_gpu(c, d: Declared) -> bool:
    if "custom" not in (value_of("w_ex_gpu"), value_of("w_tr_gpu")):
        return False
    a, b = c.columns(2)
    _num(a, "memory GB", "w_cg_mem")
    _num(b, "bandwidth TB/s", "w_cg_bw")
    _num(a, "BF16 TFLOPS", "w_cg_bf16")
    _num(b, "FP8 TFLOPS (0 = none)", "w_cg_fp8")
    _num(a, "prefill MFU", "w_cg_mfu", step=0.05)
    _num(b, "$/GPU-hour (low)", "w_cg_price_low", blank=True)
    _num(a, "$/GPU-hour (high)", "w_cg_price_high", blank=True,
         help="the price used is the middle of low and high; the sensitivity chart spans them")
    return True


def _disk(c, d: Declared) -> bool:
    c.selectbox(d.input.label, list(disk_presets()), key=_k(d.input.key), help=_disk_help())
    return True


def _link(c, d: Declared) -> bool:
    """The usual link speeds, and the one in use."""
    links = sorted({1.0, 10.0, 25.0, 100.0, 200.0, 400.0, 800.0, float(value_of(d.input.key))})
    c.selectbox(d.input.label, links, key=_k(d.input.key))
    return True


def _recipe(c, d: Declared) -> bool:
    """TTT steps (EAGLE), anchors and block size (DFlash): the layout's value in the label."""
    lay = _layout()
    blocks = DRAFTER_KINDS.lookup(lay.drafter).drafts_blocks    # anchors x blocks, not TTT steps
    name = d.path.split(".")[-1]
    if (name == "ttt_steps") == blocks:
        return False
    fallback = {"ttt_steps": (1, "one step"), "num_anchors": (512, "SpecForge's 512"),
                "block_size": (16, "SpecForge's 16")}[name]
    v = getattr(lay.training, name)
    _num(c, f"{d.input.label} (0 = layout's {v.value if v else fallback[0]})", d.input.key,
         help=md_text(v.source if v else fallback[1]))
    return True


def _workload(c, d: Declared) -> bool:
    c.radio(d.input.label, list(WL_MODES), key=_k(WL_MODE), horizontal=True, help=d.input.help)
    if value_of(WL_MODE) == SET:
        for col, f in zip(c.columns(len(FAMILIES)), FAMILIES, strict=True):
            _num(col, f, f"w_wl_{f}", step=0.05)
    return True


def _serving_gpu(c, d: Declared) -> bool:
    c.selectbox(d.input.label, [d.input.none] + list(gpu_presets()), key=_k(d.input.key))
    return True


def _storage(c, d: Declared) -> bool:
    prices = storage_price_presets()
    c.selectbox(d.input.label, [BY_PLACEMENT] + list(prices), key=_k(d.input.key),
                format_func=lambda k: "by placement" if k == BY_PLACEMENT else k,
                help=md_text(f"{BY_PLACEMENT}: the nodes' own disks (local, no rent beyond the node price), "
                             "the shared filesystem's volume or the transfer's object store; "
                             + "; ".join(f"{k}: {v['name']}" for k, v in prices.items())))
    return True


def _gpu_price(c, d: Declared) -> bool:
    """A price per GPU-hour; blank: the GPU preset's (named in the label)."""
    g = gpu_presets().get(value_of("w_ex_gpu" if d.path.endswith("extraction_usd_per_gpu_hour")
                                            else "w_tr_gpu"))
    _num(c, f"{d.input.label} (blank = {g.default_price() if g else 'the custom GPU'})", d.input.key, blank=True)
    return True


SPECIAL = {
    "model": _model, "custom_model": _custom_model, "layout": _layout_pick, "unit": _unit, "max_seq_len": _cap,
    "capture_batch_size": _capture_batch, "sort_by_length": _sort, "extraction_gpu": _gpu,
    "custom_gpu": _custom_gpu, "disk": _disk, "transfer.link_gbps": _link, "training.gpu": _gpu,
    "training.ttt_steps": _recipe, "training.num_anchors": _recipe, "training.block_size": _recipe,
    "training.disk": _disk, "quality.workload": _workload, "quality.serving_gpu": _serving_gpu,
    "costs.storage": _storage, "costs.extraction_usd_per_gpu_hour": _gpu_price,
    "costs.training_usd_per_gpu_hour": _gpu_price,
}
# nodes (or GPUs per node) set the GPU count: (phase, nodes key, GPUs per node key, GPU count key)
SYNC = {k: args for args in (("extraction", "w_ex_nodes", "w_ex_per_node", "w_ex_gpus"),
                             ("training", "w_tr_nodes", "w_tr_per_node", "w_tr_gpus")) for k in args[1:3]}
