"""The scenario in the session: widgets are its source of truth; a scenario from a preset, an
import, a shared link or an applied trim is written into the widgets before they render."""
from __future__ import annotations

import streamlit as st

from planner.errors import PlannerInputError
from planner.plan import resolved_mix
from planner.scenario import Scenario, default_scenario
from planner.specs import GPUSpec, ModelSpec

PENDING = "_pending_scenario"
MIX = "mix_rows"
MIX_VERSION = "mix_version"
NOTICE = "_notice"
LAST = "_last_scenario"


def mix_from_scenario(s: Scenario, catalog) -> list[dict]:
    if s.uniform is not None:
        return []
    return [{**m.model_dump(), "include": True} for m in resolved_mix(s, catalog)]


def load_into_widgets(s: Scenario, catalog) -> None:
    """Write every widget's value for scenario `s` (call before the widgets are created)."""
    ss = st.session_state
    ss.update(widget_values(s))
    ss["uniform"] = s.uniform.model_dump() if s.uniform is not None else None
    ss[MIX] = mix_from_scenario(s, catalog)
    ss[MIX_VERSION] = ss.get(MIX_VERSION, 0) + 1
    ss[LAST] = s


def hidden_keys(s: Scenario) -> set[str]:
    """The widgets the sidebar does not draw for scenario `s`."""
    hidden = set()
    if s.throughput.mode == "roofline":
        hidden |= {"w_tps", "w_batching"}
    else:
        hidden |= {"w_mfu", "w_bw_eff", "w_max_batch"}
    if s.transfer.method not in ("link", "object_store"):
        hidden |= {"w_link", "w_link_eff"}
    if s.transfer.method != "drives":
        hidden.add("w_drive_days")
    return hidden


def restore_hidden_widgets() -> None:
    """Streamlit forgets (or resets) the state of a widget that a run did not draw: the fixed-mode
    inputs in roofline mode, the link inputs when shipping drives ... Put back, from the last
    scenario, every value whose widget was not drawn, so that showing it again shows what the
    user set. Drawn widgets are left alone: their state carries the user's latest change."""
    ss = st.session_state
    last = ss.get(LAST)
    if last is None:
        return
    values = widget_values(last)
    for key in hidden_keys(last):
        ss[key] = values[key]
    for key, value in values.items():
        if key not in ss:
            ss[key] = value


def remember(s: Scenario) -> None:
    st.session_state[LAST] = s


def widget_values(s: Scenario) -> dict:
    ss: dict = {}
    ss["w_preset"] = s.preset if s.preset in ("default", "seed-article") else "default"
    ss["w_model"] = s.model
    cm = s.custom_model
    if cm is not None:
        ss.update(w_cm_hidden=cm.hidden_size, w_cm_layers=cm.num_layers, w_cm_full=cm.full_attention_layers,
                  w_cm_q=cm.num_q_heads, w_cm_kv=cm.num_kv_heads, w_cm_hd=cm.head_dim, w_cm_vocab=cm.vocab_size,
                  w_cm_params_b=cm.params / 1e9, w_cm_active_b=cm.active_params / 1e9)
    ss["w_layout"] = s.layout
    ss["w_hidden_dtype"] = s.hidden_dtype or "layout default"
    ss["w_layers"] = ",".join(str(x) for x in s.layers) if s.layers else ""
    ss["w_layer_count"] = s.layer_count or 0
    ss["w_unit"] = s.unit
    ss["w_cap_on"] = s.max_seq_len is not None
    ss["w_cap"] = s.max_seq_len or 2048
    ss["w_regen"] = s.regenerate
    ss["w_resp_mult"] = float(s.response_multiplier)
    ss["w_length_scale"] = float(s.length_scale)
    ss["w_ex_gpu"] = s.extraction_gpu
    ss["w_ex_gpus"] = s.extraction_gpus
    cg = s.custom_gpu
    if cg is not None:
        ss.update(w_cg_mem=cg.memory_gb, w_cg_bw=cg.bandwidth_tb_s, w_cg_bf16=cg.bf16_tflops,
                  w_cg_fp8=cg.fp8_tflops or 0.0, w_cg_mfu=cg.prefill_mfu)
    ss["w_weight_dtype"] = s.weight_dtype
    t = s.throughput
    ss["w_tp_mode"] = t.mode
    ss["w_tps"] = float(t.tokens_per_s)
    ss["w_batching"] = float(t.batching)
    ss["w_mfu"] = t.prefill_mfu
    ss["w_bw_eff"] = float(t.decode_bandwidth_efficiency)
    ss["w_max_batch"] = t.max_batch
    ss["w_disk"] = s.disk
    ss["w_disk_cap"] = s.disk_capacity_tb
    ss["w_double_write"] = s.staging_double_write
    ss["w_compression"] = float(s.compression)
    tr = s.transfer
    ss["w_transfer"] = tr.method
    ss["w_link"] = float(tr.link_gbps)
    ss["w_link_eff"] = float(tr.efficiency)
    ss["w_drive_days"] = float(tr.drive_days)
    trn = s.training
    ss["w_tr_gpu"] = trn.gpu
    ss["w_tr_gpus"] = trn.gpus
    ss["w_epochs"] = float(trn.epochs)
    ss["w_tr_mfu"] = float(trn.mfu)
    ss["w_tr_disk"] = trn.disk
    ss["w_drafter_b"] = trn.drafter_params / 1e9 if trn.drafter_params else None
    c = s.costs
    ss["w_storage"] = c.storage
    ss["w_months"] = float(c.storage_months)
    ss["w_ex_price"] = c.extraction_usd_per_gpu_hour
    ss["w_tr_price"] = c.training_usd_per_gpu_hour
    ss["w_tb_price"] = c.storage_usd_per_tb_month
    return ss


def scenario_from_widgets() -> dict:
    """The scenario as a plain dict from the widgets (validated by the caller)."""
    ss = st.session_state
    last = ss.get(LAST)
    if last is not None:   # a widget not drawn in this run keeps the last scenario's value
        for key, value in widget_values(last).items():
            if key not in ss:
                ss[key] = value
    mix = [{"id": m["id"], "rows": int(m["rows"]), "selection": m.get("selection", "uniform"),
            "seed": int(m.get("seed", 0))} for m in ss.get(MIX, []) if m.get("include", True)]
    layers_text = (ss.get("w_layers") or "").strip()
    layers = None
    if layers_text:
        try:
            layers = [int(x) for x in layers_text.replace(" ", "").split(",") if x]
        except ValueError:
            raise PlannerInputError("layers", layers_text, "give comma-separated whole numbers, e.g. 1,16,31")
    data = {
        "preset": ss.get("w_preset", "default"),
        "mix": None if ss.get("uniform") else mix,
        "uniform": ss.get("uniform"),
        "model": ss["w_model"],
        "layout": ss["w_layout"],
        "layers": layers,
        "layer_count": ss.get("w_layer_count") or None,
        "hidden_dtype": None if ss.get("w_hidden_dtype") == "layout default" else ss.get("w_hidden_dtype"),
        "unit": ss["w_unit"],
        "max_seq_len": int(ss["w_cap"]) if ss.get("w_cap_on") else None,
        "regenerate": bool(ss["w_regen"]),
        "response_multiplier": ss["w_resp_mult"],
        "length_scale": ss["w_length_scale"],
        "throughput": {"mode": ss["w_tp_mode"], "tokens_per_s": ss["w_tps"], "batching": ss["w_batching"],
                       "prefill_mfu": ss.get("w_mfu"), "decode_bandwidth_efficiency": ss["w_bw_eff"],
                       "max_batch": int(ss["w_max_batch"])},
        "weight_dtype": ss["w_weight_dtype"],
        "extraction_gpu": ss["w_ex_gpu"],
        "extraction_gpus": int(ss["w_ex_gpus"]),
        "disk": ss["w_disk"],
        "disk_capacity_tb": ss.get("w_disk_cap"),
        "staging_double_write": bool(ss.get("w_double_write")),
        "compression": ss["w_compression"],
        "transfer": {"method": ss["w_transfer"], "link_gbps": ss["w_link"], "efficiency": ss["w_link_eff"],
                     "drive_days": ss["w_drive_days"]},
        "training": {"gpu": ss["w_tr_gpu"], "gpus": int(ss["w_tr_gpus"]), "epochs": ss["w_epochs"],
                     "mfu": ss["w_tr_mfu"], "disk": ss["w_tr_disk"],
                     "drafter_params": ss["w_drafter_b"] * 1e9 if ss.get("w_drafter_b") else None},
        "costs": {"storage": ss["w_storage"], "storage_months": ss["w_months"],
                  "extraction_usd_per_gpu_hour": ss.get("w_ex_price"),
                  "training_usd_per_gpu_hour": ss.get("w_tr_price"),
                  "storage_usd_per_tb_month": ss.get("w_tb_price")},
    }
    if ss["w_model"] == "custom":
        data["custom_model"] = custom_model_dict()
    if "custom" in (ss["w_ex_gpu"], ss["w_tr_gpu"]):
        data["custom_gpu"] = custom_gpu_dict()
    return data


def custom_model_dict() -> dict:
    ss = st.session_state
    layers = int(ss.get("w_cm_layers", 64))
    full = int(ss.get("w_cm_full", layers))
    return ModelSpec(id="custom", name="Custom model", hidden_size=int(ss.get("w_cm_hidden", 5120)),
                     num_layers=layers, full_attention_layers=min(full, layers),
                     linear_attention_layers=layers - min(full, layers), num_q_heads=int(ss.get("w_cm_q", 40)),
                     num_kv_heads=int(ss.get("w_cm_kv", 8)), head_dim=int(ss.get("w_cm_hd", 128)),
                     vocab_size=int(ss.get("w_cm_vocab", 151936)), params=float(ss.get("w_cm_params_b", 30.0)) * 1e9,
                     active_params=min(float(ss.get("w_cm_active_b", 30.0)), float(ss.get("w_cm_params_b", 30.0))) * 1e9,
                     linear_state_bytes_per_layer=1572864 if layers > full else 0).model_dump()


def custom_gpu_dict() -> dict:
    ss = st.session_state
    fp8 = float(ss.get("w_cg_fp8") or 0.0)
    return GPUSpec(id="custom", name="Custom GPU", memory_gb=float(ss.get("w_cg_mem", 80.0)),
                   bandwidth_tb_s=float(ss.get("w_cg_bw", 3.35)), bf16_tflops=float(ss.get("w_cg_bf16", 989.0)),
                   fp8_tflops=fp8 or None, prefill_mfu=float(ss.get("w_cg_mfu", 0.4)),
                   price_low=float(ss.get("w_cg_price", 2.0)), price_high=float(ss.get("w_cg_price", 2.0))).model_dump()


def ensure_initialised(catalog, initial: Scenario | None = None) -> None:
    if "w_model" not in st.session_state:
        load_into_widgets(initial or default_scenario(), catalog)


def request_scenario(s: Scenario, notice: str | None = None) -> None:
    """Replace the whole scenario on the next run (import, preset, shared link, trim)."""
    st.session_state[PENDING] = s
    if notice:
        st.session_state[NOTICE] = notice
    st.rerun()


def apply_pending(catalog) -> None:
    s = st.session_state.pop(PENDING, None)
    if s is not None:
        load_into_widgets(s, catalog)
