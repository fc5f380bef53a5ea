"""The sidebar: every assumption of the scenario, with its catalog default and source."""
from __future__ import annotations

import streamlit as st

from planner.scenario import PRESETS
from planner.specs import disk_presets, gpu_presets, layout_presets, model_presets, storage_price_presets

from drafter_dashboard.state import request_scenario


def _d(key: str, default) -> dict:
    """The widget's default only when the session has no value for it (avoids Streamlit's warning)."""
    return {} if key in st.session_state else {"value": default}


def render(catalog) -> str:
    """Draw the controls; returns the display unit ('TB' or 'TiB')."""
    models, gpus, layouts = model_presets(), gpu_presets(), layout_presets()
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

    with sb.expander("Target model and capture", expanded=True):
        st.selectbox("Target model", list(models) + ["custom"], key="w_model",
                     format_func=lambda m: models[m].name if m in models else "Custom model...")
        if st.session_state["w_model"] == "custom":
            a, b = st.columns(2)
            a.number_input("hidden size", 64, 65536, key="w_cm_hidden", **_d("w_cm_hidden", 5120))
            b.number_input("layers", 1, 1024, key="w_cm_layers", **_d("w_cm_layers", 64))
            a.number_input("full-attention layers", 0, 1024, key="w_cm_full", **_d("w_cm_full", 64),
                           help="the rest are linear-attention layers with a fixed per-sequence state")
            b.number_input("vocab", 1, 10_000_000, key="w_cm_vocab", **_d("w_cm_vocab", 151936))
            a.number_input("Q heads", 1, 1024, key="w_cm_q", **_d("w_cm_q", 40))
            b.number_input("KV heads", 1, 1024, key="w_cm_kv", **_d("w_cm_kv", 8))
            a.number_input("head dim", 1, 4096, key="w_cm_hd", **_d("w_cm_hd", 128))
            b.number_input("params (B)", 0.01, 10000.0, key="w_cm_params_b", **_d("w_cm_params_b", 30.0))
            a.number_input("active params (B)", 0.01, 10000.0, key="w_cm_active_b", **_d("w_cm_active_b", 30.0))
        else:
            m = models[st.session_state["w_model"]]
            st.caption(f"hidden {m.hidden_size:,}, {m.num_layers} layers, {m.params / 1e9:,.1f}B params [{m.tag}]",
                       help=m.source + (f" Estimates: {m.estimates}" if m.estimates else ""))
        st.selectbox("Capture layout", list(layouts), key="w_layout", format_func=lambda x: layouts[x].name)
        lay = layouts[st.session_state["w_layout"]]
        st.caption(f"{lay.file_pattern}", help=f"Source: {lay.source}" + (f" Estimates: {lay.estimates}"
                                                                               if lay.estimates else ""))
        a, b = st.columns(2)
        a.selectbox("Hidden dtype", ["layout default", "bf16", "fp16", "fp8"], key="w_hidden_dtype",
                    help="fp8 stores one byte per value plus per-token scales (speculators supports it)")
        b.number_input("Layer count (0 = layout's)", 0, 256, key="w_layer_count",
                       help="DFlash rule: n layers evenly spaced from 1 to L-3")
        st.text_input("Custom layer ids (comma-separated, overrides the rule)", key="w_layers")

    with sb.expander("Samples", expanded=True):
        st.radio("Sample unit", ["conversation", "turn"], key="w_unit", horizontal=True,
                 help="turn: speculators' fan-out, one training row per assistant turn holding the prefix through it")
        st.checkbox("Cap the sequence length", key="w_cap_on", help="maximum sequence length (truncation)")
        st.number_input("Max sequence length (tokens)", 16, 10_000_000, step=256, key="w_cap",
                       disabled=not st.session_state.get("w_cap_on"),
                       help=f"layout default: {lay.default_max_seq_len or 'none'}; speculators 8192, SpecForge 2048")
        st.toggle("Regenerate responses with the target", key="w_regen",
                  help="on-policy data (speculators' docs ask for it) costs decode time; off = prefill-only")
        st.slider("Response length multiplier", 0.25, 4.0, step=0.05, key="w_resp_mult",
                  disabled=not st.session_state.get("w_regen"), help="thinking models answer longer")
        st.slider("Tokens per sample x", 0.5, 1.5, step=0.05, key="w_length_scale",
                  help="catalog lengths are ~cl100k tokens; a Qwen tokenizer differs by about +-10%")

    with sb.expander("Extraction hardware", expanded=True):
        a, b = st.columns([2, 1])
        a.selectbox("GPU", list(gpus) + ["custom"], key="w_ex_gpu",
                    format_func=lambda g: gpus[g].name if g in gpus else "Custom GPU...")
        b.number_input("count", 1, 100_000, key="w_ex_gpus")
        if "custom" in (st.session_state["w_ex_gpu"], st.session_state.get("w_tr_gpu")):
            c, d = st.columns(2)
            c.number_input("memory GB", 1.0, 10000.0, key="w_cg_mem", **_d("w_cg_mem", 80.0))
            d.number_input("bandwidth TB/s", 0.01, 100.0, key="w_cg_bw", **_d("w_cg_bw", 3.35))
            c.number_input("BF16 TFLOPS", 1.0, 100000.0, key="w_cg_bf16", **_d("w_cg_bf16", 989.0))
            d.number_input("FP8 TFLOPS (0 = none)", 0.0, 100000.0, key="w_cg_fp8", **_d("w_cg_fp8", 1979.0))
            c.number_input("prefill MFU", 0.05, 1.0, key="w_cg_mfu", **_d("w_cg_mfu", 0.4))
            d.number_input("$/GPU-hour", 0.0, 1000.0, key="w_cg_price", **_d("w_cg_price", 2.0))
        st.radio("Weights", ["bf16", "fp8"], key="w_weight_dtype", horizontal=True)
        st.radio("Throughput model", ["roofline", "fixed"], key="w_tp_mode", horizontal=True,
                 help="fixed: the article's tok/s x batching; roofline: compute and bandwidth bounds")
        if st.session_state["w_tp_mode"] == "fixed":
            a, b = st.columns(2)
            a.number_input("tok/s per GPU", 1.0, 1e7, key="w_tps")
            b.number_input("batching x", 0.1, 1e5, key="w_batching")
        else:
            a, b = st.columns(2)
            a.number_input("Prefill MFU (blank = GPU's)", 0.05, 1.0, key="w_mfu", value=None,
                           help="0.45-0.55 on H100/H200/B200; 0.30-0.45 on AMD, PCIe and consumer cards")
            b.slider("Decode bandwidth eff.", 0.3, 1.0, step=0.05, key="w_bw_eff")
            st.number_input("Max decode batch", 1, 65536, key="w_max_batch", help="vLLM max_num_seqs default 256")
        disks = disk_presets()
        st.selectbox("Extraction disk", list(disks), key="w_disk", format_func=lambda d: disks[d]["name"])
        st.number_input("Disk capacity TB (blank = no check)", 0.1, 1e7, key="w_disk_cap", value=None)
        st.checkbox("Staging on another filesystem (writes twice)", key="w_double_write",
                    help="vLLM writes each file to a staging path, then the client moves it; across "
                         "filesystems every byte is written twice")
        st.slider("Compression", 1.0, 2.0, step=0.05, key="w_compression",
                  help="bf16 activations compress ~1.0-1.2x; the article assumed 1.5-2x")

    with sb.expander("Transfer", expanded=False):
        st.selectbox("Method", ["link", "object_store", "drives", "none"], key="w_transfer",
                     format_func={"link": "network link", "object_store": "object storage (up + down)",
                                  "drives": "shipped drives", "none": "none (same machine)"}.get)
        if st.session_state["w_transfer"] in ("link", "object_store"):
            a, b = st.columns(2)
            links = sorted({1.0, 10.0, 25.0, 100.0, 200.0, 400.0, 800.0, float(st.session_state["w_link"])})
            a.selectbox("Link Gb/s", links, key="w_link")
            b.slider("Efficiency", 0.05, 1.0, step=0.05, key="w_link_eff",
                     help="single-stream rsync/scp 0.1-0.4; parallel tools 0.5-0.8; RDMA 0.8-0.9")
        elif st.session_state["w_transfer"] == "drives":
            st.number_input("Days in transit", 0.5, 365.0, key="w_drive_days")

    with sb.expander("Training", expanded=False):
        a, b = st.columns([2, 1])
        a.selectbox("Training GPU", list(gpus) + ["custom"], key="w_tr_gpu",
                    format_func=lambda g: gpus[g].name if g in gpus else "Custom GPU...")
        b.number_input("count", 1, 100_000, key="w_tr_gpus")
        a, b = st.columns(2)
        a.number_input("Epochs", 0.1, 1000.0, step=1.0, key="w_epochs")
        b.number_input("Training MFU", 0.05, 1.0, step=0.05, key="w_tr_mfu")
        st.number_input("Drafter params (B, blank = estimate)", 0.001, 1000.0, key="w_drafter_b", value=None)
        disks = disk_presets()
        st.selectbox("Training disk (read)", list(disks), key="w_tr_disk", format_func=lambda d: disks[d]["name"])

    with sb.expander("Prices", expanded=False):
        prices = storage_price_presets()
        st.selectbox("Storage", list(prices), key="w_storage", format_func=lambda p: prices[p]["name"])
        st.number_input("$/TB-month (blank = preset's)", 0.0, 1e5, key="w_tb_price", value=None)
        st.number_input("Months held", 0.0, 120.0, step=0.5, key="w_months")
        g = gpus.get(st.session_state["w_ex_gpu"])
        st.number_input(f"Extraction $/GPU-hour (blank = {g.default_price() if g else '?'})", 0.0, 1000.0,
                        key="w_ex_price", value=None)
        g = gpus.get(st.session_state["w_tr_gpu"])
        st.number_input(f"Training $/GPU-hour (blank = {g.default_price() if g else '?'})", 0.0, 1000.0,
                        key="w_tr_price", value=None)
    return unit
