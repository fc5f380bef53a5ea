"""The sidebar: every assumption of the scenario, with its catalog default and source."""
from __future__ import annotations

import streamlit as st

from planner.scenario import PRESETS, gpus_on_nodes
from planner.specs import disk_presets, gpu_presets, layout_presets, model_presets, storage_price_presets

from drafter_dashboard.safe_text import md_text

from planner.ids import FAMILIES
from drafter_dashboard.registry import (BY_PLACEMENT, CAP_MODE, CAP_MODES, EXTRACTION_GPU, FILE_ORDER, LAYOUT, SET, SORTED, WL_MODE,
                                        WL_MODES, widget_range)
from drafter_dashboard.state import keep, request_scenario


def _num(container, label: str, key: str, blank: bool = False, **kw):
    """A number input whose range is the scenario model's (so any value a link carries fits);
    `blank`: the field may be empty (None). The value itself comes from the session state."""
    if blank:
        kw["value"] = None
    return container.number_input(label, key=key, **widget_range(key), **kw)


def _gpus_from_nodes(phase: str, nodes_key: str, per_key: str, gpus_key: str) -> None:
    """Nodes (or GPUs per node) changed: the GPU count follows (planner.scenario.gpus_on_nodes), as the
    CLI's --nodes sets --gpus; a product above the count's bound is left for the scenario to name."""
    nodes, per = st.session_state.get(nodes_key), st.session_state.get(per_key)
    if nodes and per:
        try:
            keep(gpus_key, gpus_on_nodes(phase, int(nodes), int(per)))
        except ValueError:      # above the count's bound: left for the scenario to name
            pass


# The collapsed sections: each is built only while it is open (an expander alone still builds its
# contents on every run). Its controls keep their values in the scenario, the link and the manifest
# while closed (state.restore_hidden_widgets puts back every control a run did not draw).
SECTIONS = {"Transfer": "w_open_transfer", "Training": "w_open_training", "Nodes and placement": "w_open_nodes",
            "Serving (quality estimate)": "w_open_serving", "Prices": "w_open_prices"}


def _section(sb, label: str):
    """A collapsed sidebar section whose open state reruns the page (its `.open` says whether to build it)."""
    return sb.expander(label, expanded=False, key=SECTIONS[label], on_change="rerun")


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
                     help="the model's name, size and source are below")
        if st.session_state["w_model"] == "custom":
            a, b = st.columns(2)
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
            _num(a, "MLP width (0 = 8/3 x hidden)", "w_cm_ffn", help="config.json intermediate_size: sizes the drafter's layers")
            _num(b, "vision params (B)", "w_cm_vision_b", help="a text forward does not run the vision tower")
            _num(a, "MTP params (B)", "w_cm_mtp_b", help="nor the multi-token-prediction head")
            b.checkbox("tied embeddings", key="w_cm_tied", help="untied: the input embedding is a lookup, no FLOPs")
            st.caption("Linear-attention (Gated DeltaNet) layers, from config.json")
            a, b = st.columns(2)
            _num(a, "key heads", "w_cm_lin_k", help="linear_num_key_heads")
            _num(b, "value heads", "w_cm_lin_v", help="linear_num_value_heads")
            _num(a, "key head dim", "w_cm_lin_kd")
            _num(b, "value head dim", "w_cm_lin_vd")
            _num(a, "conv kernel", "w_cm_lin_kernel", help="linear_conv_kernel_dim")
            b.selectbox("state dtype", ["float32", "bfloat16", "float16"], key="w_cm_lin_dtype",
                        help="mamba_ssm_dtype: vLLM caches the temporal state in it")
            _num(st, "state bytes per layer (0 = from the shape)", "w_cm_state", step=65536,
                 help="an explicit per-sequence state of one linear-attention layer (conv + temporal)")
        else:
            m = models[st.session_state["w_model"]]
            st.caption(md_text(f"{m.name}: hidden {m.hidden_size:,}, {m.num_layers} layers, {m.params / 1e9:,.1f}B "
                                 f"params [{m.tag}]"),
                       help=md_text(m.source + (f" Estimates: {m.estimates}" if m.estimates else "")))
        st.selectbox("Capture layout", list(layouts), key="w_layout", help="the pipeline whose files are planned")
        lay = layouts[st.session_state["w_layout"]]
        st.caption(md_text(f"{lay.name}: {lay.file_pattern}"),
                   help=md_text(f"Source: {lay.source}" + (f" Estimates: {lay.estimates}" if lay.estimates else "")))
        a, b = st.columns(2)
        a.selectbox("Hidden dtype", [LAYOUT, "bf16", "fp16", "fp8"], key="w_hidden_dtype",
                    help="fp8 stores one byte per value plus per-token scales (speculators supports it)")
        _num(b, "Layer count (0 = layout's)", "w_layer_count", help="DFlash rule: n layers evenly spaced from 1 to L-3")
        st.text_input("Custom layer ids (comma-separated, overrides the rule)", key="w_layers")

    with sb.expander("Samples", expanded=True):
        d = lay.defaults
        st.radio(f"Sample unit (layout's: {d.unit.value})", [LAYOUT, "conversation", "turn"], key="w_unit",
                 horizontal=True, help=md_text("turn: one training row per assistant turn holding the prefix through it. "
                              f"This layout: {d.unit.value} ({d.unit.source})"))
        a, b = st.columns(2)
        a.selectbox(f"Sequence cap (layout's: {d.max_seq_len.value})", list(CAP_MODES), key=CAP_MODE,
                    help=md_text(f"This layout: {d.max_seq_len.value} ({d.max_seq_len.source}); rows past it are "
                                 f"{'skipped' if d.overflow.value == 'skip' else 'truncated'}"))
        _num(b, "Cap (tokens)", "w_cap", step=256, disabled=st.session_state.get(CAP_MODE) != "cap")
        a, b = st.columns(2)
        _num(a, "Capture batch (0 = layout's)", "w_capture_batch",
             help=md_text(f"This layout: {d.capture_batch_size.value} rows ({d.capture_batch_size.source}); "
                          f"padding: {d.padding.value}. 1 = no padding"))
        b.selectbox(f"Batch order (layout's: {'sorted' if d.sort_by_length.value else 'file order'})",
                    [LAYOUT, SORTED, FILE_ORDER], key="w_sort",
                    help="length-sorted batches pad only within a band of lengths")
        st.toggle("Regenerate responses with the target", key="w_regen",
                  help="on-policy data (speculators' docs ask for it) costs decode time; off = prefill-only")
        a, b = st.columns(2)
        _num(a, "Response length x", "w_resp_mult", step=0.05, disabled=not st.session_state.get("w_regen"),
             help="thinking models answer longer")
        _num(b, "Tokens per sample x", "w_length_scale", step=0.05,
             help="catalog lengths are ~cl100k tokens; a Qwen tokenizer differs by about +-10%")

    with sb.expander("Extraction hardware", expanded=True):
        a, b = st.columns([2, 1])
        a.selectbox("GPU", list(gpus) + ["custom"], key="w_ex_gpu",
                    help=md_text("; ".join(f"{g}: {v.name}" for g, v in gpus.items())))
        _num(b, "count", "w_ex_gpus")
        if "custom" in (st.session_state["w_ex_gpu"], st.session_state.get("w_tr_gpu")):
            c, d = st.columns(2)
            _num(c, "memory GB", "w_cg_mem")
            _num(d, "bandwidth TB/s", "w_cg_bw")
            _num(c, "BF16 TFLOPS", "w_cg_bf16")
            _num(d, "FP8 TFLOPS (0 = none)", "w_cg_fp8")
            _num(c, "prefill MFU", "w_cg_mfu", step=0.05)
            _num(d, "$/GPU-hour (low)", "w_cg_price_low", blank=True)
            _num(c, "$/GPU-hour (high)", "w_cg_price_high", blank=True,
                 help="the price used is the middle of low and high; the sensitivity chart spans them")
        a, b = st.columns(2)
        a.radio("Weights", ["bf16", "fp8"], key="w_weight_dtype", horizontal=True)
        b.radio("KV cache", ["bf16", "fp8"], key="w_kv_dtype", horizontal=True,
                help="vLLM --kv-cache-dtype: fp8 halves the KV bytes per token (more sequences per batch)")
        st.radio("Throughput model", ["calibrated", "roofline", "fixed"], key="w_tp_mode", horizontal=True,
                 help="calibrated: the roofline scaled by the nearest published measurement (see Assumptions); "
                      "roofline: compute and bandwidth bounds alone; fixed: the article's tok/s x batching")
        if st.session_state["w_tp_mode"] == "fixed":
            a, b = st.columns(2)
            _num(a, "tok/s per GPU", "w_tps")
            _num(b, "batching x", "w_batching")
        else:
            a, b = st.columns(2)
            _num(a, "Prefill MFU (blank = GPU's)", "w_mfu", blank=True, step=0.05,
                 help="0.45-0.55 on H100/H200/B200; 0.30-0.45 on AMD, PCIe and consumer cards")
            _num(b, "Decode bandwidth eff.", "w_bw_eff", step=0.05)
            _num(a, "Decode compute eff. (blank = preset)", "w_decode_mfu", blank=True, step=0.05,
                 help="decode's own compute efficiency, fitted on the published measurements (bench/fidelity.py)")
            _num(b, "Tensor-parallel eff.", "w_tp_eff", step=0.05, help="throughput kept per GPU when a model "
                 "is split over several")
            _num(a, "max_num_seqs (0 = vLLM's)", "w_max_batch",
                 help="vLLM's default for the GPU's memory: 1,024 at 70 GiB and more (not A100), else 256")
            _num(b, "max_batched_tokens (0 = vLLM's)", "w_max_tokens",
                 help="vLLM's default for the GPU's memory: 16,384 at 70 GiB and more (not A100), else 8,192")
        disks = disk_presets()
        st.selectbox("Extraction disk", list(disks), key="w_disk",
                     help=md_text("; ".join(f"{k}: {v['name']}" for k, v in disks.items())))
        _num(st, "Disk TB per node (blank = no check)", "w_disk_cap", blank=True,
             help="each extraction node's local disk: with local placement it holds that node's shard")
        st.checkbox("Staging on another filesystem (writes twice)", key="w_double_write",
                    help="vLLM writes each file to a staging path, then the client moves it; across "
                         "filesystems every byte is written twice")
        _num(st, "Compression x", "w_compression", step=0.05,
             help="bf16 activations compress ~1.0-1.2x; the article assumed 1.5-2x")

    sec = _section(sb, "Transfer")
    if sec.open:                  # built only while open: the closed ones keep their values
        with sec:
            st.selectbox("Method", ["link", "object_store", "drives", "none"], key="w_transfer",
                         format_func={"link": "network link", "object_store": "object storage (up + down)",
                                      "drives": "shipped drives", "none": "none (same machine)"}.get)
            if st.session_state["w_transfer"] in ("link", "object_store"):
                a, b = st.columns(2)
                links = sorted({1.0, 10.0, 25.0, 100.0, 200.0, 400.0, 800.0, float(st.session_state["w_link"])})
                a.selectbox("Link Gb/s", links, key="w_link")
                _num(b, "Efficiency", "w_link_eff", step=0.05,
                     help="single-stream rsync/scp 0.1-0.4; parallel tools 0.5-0.8; RDMA 0.8-0.9")
                if st.session_state["w_transfer"] == "object_store":
                    _num(st, "Egress $/GB (blank = the storage's)", "w_egress", blank=True)
            elif st.session_state["w_transfer"] == "drives":
                _num(st, "Days in transit", "w_drive_days")

    sec = _section(sb, "Training")
    if sec.open:                  # built only while open: the closed ones keep their values
        with sec:
            a, b = st.columns([2, 1])
            a.selectbox("Training GPU", list(gpus) + ["custom"], key="w_tr_gpu",
                        help=md_text("; ".join(f"{g}: {v.name}" for g, v in gpus.items())))
            _num(b, "count", "w_tr_gpus")
            a, b = st.columns(2)
            _num(a, "Epochs", "w_epochs", step=1.0)
            _num(b, "Training MFU", "w_tr_mfu", step=0.05)
            _num(a, "Drafter params (B, blank = estimate)", "w_drafter_b", blank=True)
            _num(b, "Drafter layers (0 = layout's)", "w_drafter_layers")
            tr = lay.training
            if lay.drafter == "dflash":
                _num(a, f"Anchors (0 = layout's {tr.num_anchors.value if tr.num_anchors else 512})", "w_anchors",
                     help=md_text(tr.num_anchors.source if tr.num_anchors else "SpecForge's 512"))
                _num(b, f"Block size (0 = layout's {tr.block_size.value if tr.block_size else 16})", "w_block",
                     help=md_text(tr.block_size.source if tr.block_size else "SpecForge's 16"))
            else:
                _num(a, f"TTT steps (0 = layout's {tr.ttt_steps.value if tr.ttt_steps else 1})", "w_ttt",
                     help=md_text(tr.ttt_steps.source if tr.ttt_steps else "one step"))
            disks = disk_presets()
            st.selectbox("Training disk (read)", list(disks), key="w_tr_disk",
                         help=md_text("; ".join(f"{k}: {v['name']}" for k, v in disks.items())))
            st.caption("Disaggregated: capture servers stream the states to trainers every epoch")
            a, b = st.columns(2)
            _num(a, "Capture GPUs (0 = extraction's)", "w_dis_capture")
            _num(b, "Trainer GPUs (0 = training's)", "w_dis_train")
            _num(st, "Stream buffer GB", "w_buffer", help="TorchSpec's Mooncake segment is 8 GB")

    sec = _section(sb, "Nodes and placement")
    if sec.open:                  # built only while open: the closed ones keep their values
        with sec:
            nodes_help = "0 = as many nodes as the GPUs need; otherwise nodes x GPUs per node must equal the GPU count"
            a, b = st.columns(2)
            ex_sync = {"on_change": _gpus_from_nodes, "args": ("extraction", "w_ex_nodes", "w_ex_per_node", "w_ex_gpus")}
            tr_sync = {"on_change": _gpus_from_nodes, "args": ("training", "w_tr_nodes", "w_tr_per_node", "w_tr_gpus")}
            _num(a, "Extraction nodes", "w_ex_nodes", help=nodes_help + " (setting nodes sets the GPU count)", **ex_sync)
            _num(b, "GPUs per node", "w_ex_per_node", help="extraction nodes' GPUs; a tensor-parallel group stays "
                 "within a node when it fits", **ex_sync)
            _num(a, "Training nodes", "w_tr_nodes", help=nodes_help + " (setting nodes sets the GPU count)", **tr_sync)
            _num(b, "Training GPUs per node", "w_tr_per_node", **tr_sync)
            _num(st, "Training disk TB per node (blank = no check)", "w_tr_disk_cap", blank=True,
                 help="checked against each training node's share after the gather")
            st.radio("Hidden states on", ["local", "shared"], key="w_placement", horizontal=True,
                     format_func={"local": "each node's disk", "shared": "a shared filesystem"}.get,
                     help="local: each extraction node keeps its shard, gathered to the training nodes over the node "
                          "network; shared: a network filesystem whose bandwidth caps capture writes and training reads")
            if st.session_state.get("w_placement") == "shared":
                a, b = st.columns(2)
                _num(a, "Shared FS GB/s", "w_shared_gbs", step=5.0, help="its aggregate bandwidth, all clients together")
                _num(b, "Shared FS TB (blank = no check)", "w_shared_cap", blank=True)
            a, b = st.columns(2)
            _num(a, "Node network Gb/s", "w_node_gbps", step=25.0, help="per node, between the nodes of a site: the "
                 "gather and the disaggregated stream use it")
            b.radio("Transport", ["tcp", "rdma"], key="w_node_kind", horizontal=True)

    sec = _section(sb, "Serving (quality estimate)")
    if sec.open:                  # built only while open: the closed ones keep their values
        with sec:
            st.radio("Serving workload", list(WL_MODES), key=WL_MODE, horizontal=True,
                     help="what the drafter will serve, as shares of the catalog's families; the mix's own: its "
                          "training-token shares. Shares are scaled to sum to 1")
            if st.session_state.get(WL_MODE) == SET:
                cols = st.columns(len(FAMILIES))
                for col, f in zip(cols, FAMILIES):
                    _num(col, f, f"w_wl_{f}", step=0.05)
            _num(st, "Transfer between families (blank = 0.5)", "w_q_transfer", blank=True, step=0.05,
                 help="how much one family's training tokens count for another (0: nothing, 1: as its own); an "
                      "estimate, see Assumptions")
            _num(st, "Served tokens/day (B, blank = none)", "w_serving_tokens_b", blank=True,
                 help="billions of tokens served a day: gives the payback of the offline run")
            st.selectbox("Serving GPU", [EXTRACTION_GPU] + list(gpus), key="w_serving_gpu")
            # a selectbox in a third of the sidebar cuts its own value at 1024 px: a row of its own
            st.selectbox("tau measured on", ["vllm", "sglang", "paper"], key="w_eval_engine",
                         help="where tau is measured: the serving engine (chain drafting, its usual K) or the "
                              "paper's own harness; planner/presets/harness.yaml")
            e2, e3 = st.columns(2)
            _num(e2, "Temperature", "w_temperature", step=0.1)
            _num(e3, "Draft tokens K (0 = usual)", "w_spec_k", step=1,
                 help="num_speculative_tokens; 0: the engine's usual value for the drafter kind")
            b1, b2 = st.columns(2)
            _num(b1, "Serving batch (speedup)", "w_serving_batch", step=1.0,
                 help="the batch the speedup is given at; 1 is the papers' interactive figure")
            _num(b2, "Fleet batch (payback)", "w_fleet_batch", step=1.0,
                 help="the serving fleet's batch: the payback uses the speedup at it")

    sec = _section(sb, "Prices")
    if sec.open:                  # built only while open: the closed ones keep their values
        with sec:
            prices = storage_price_presets()
            st.selectbox("Storage", [BY_PLACEMENT] + list(prices), key="w_storage",
                         format_func=lambda k: "by placement" if k == BY_PLACEMENT else k,
                         help=md_text(f"{BY_PLACEMENT}: the nodes' own disks (local, no rent beyond the node price), "
                                      "the shared filesystem's volume or the transfer's object store; "
                                      + "; ".join(f"{k}: {v['name']}" for k, v in prices.items())))
            _num(st, "$/TB-month (blank = preset's)", "w_tb_price", blank=True)
            a, b = st.columns(2)
            _num(a, "Months held (blank = timeline)", "w_months", blank=True, step=0.5,
                 help="blank: from the first write to the last training epoch, plus the days kept after")
            _num(b, "Days kept after", "w_keep_days", step=1.0, help="after the last epoch (blank months only)")
            g = gpus.get(st.session_state["w_ex_gpu"])
            _num(st, f"Extraction $/GPU-hour (blank = {g.default_price() if g else 'the custom GPU'})", "w_ex_price",
                 blank=True)
            g = gpus.get(st.session_state["w_tr_gpu"])
            _num(st, f"Training $/GPU-hour (blank = {g.default_price() if g else 'the custom GPU'})", "w_tr_price",
                 blank=True)
    return unit
