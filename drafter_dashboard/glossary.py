"""The page's terms in plain words (issue 35): written once here, shown in the Terms popover beside the
headline and as the help of the figures that use them."""
from __future__ import annotations

import streamlit as st

# term -> what it means on this page (each as the planner uses it: planner/phases/quality.py for tau, K and T,
# planner/phases/extraction.py for TP, MFU and the roofline, planner/phases/padding.py for drop_last)
GLOSSARY: dict[str, str] = {
    "τ (tau), acceptance length": "how many tokens the target model accepts per drafting step on average, the "
                                  "drafted ones plus its own; higher is better. Only comparable between plans "
                                  "measured the same way (same drafter kind, engine, K and T).",
    "K": "how many tokens the drafter proposes per step (the serving engine's speculative tokens).",
    "T": "the sampling temperature of the evaluation (0: greedy).",
    "drafter kind": "the small model trained on the stored states: EAGLE-3 (one token at a time, test-time "
                    "training steps) or DFlash (blocks of tokens).",
    "layout": "the training pipeline whose files the capture writes (SpecForge, Model-Optimizer, ...); it fixes "
              "which layers are stored and, with them, the drafter kind.",
    "hidden states": "the target model's internal activations at a few layers, stored per token for training.",
    "TP (tensor parallel)": "how many GPUs share one copy of the target model; a group of TP GPUs serves one "
                            "replica.",
    "MFU": "model FLOPs utilisation: the share of the GPU's peak arithmetic a phase really uses.",
    "roofline": "the speed a GPU could reach if only its memory bandwidth or its arithmetic limited it; "
                "calibration scales it by what published runs measured.",
    "calibrated": "the roofline scaled by a published measurement near this model and GPU (see the basis).",
    "drop_last": "the last capture batch, if not full, is left out, so a few rows are never captured.",
    "capture batch": "rows captured together; each is padded to the longest row of its batch.",
    "offline / online / disaggregated": "offline: capture the states once, store them, train from disk; online: "
                                        "rerun the target in every epoch, nothing stored; disaggregated: capture "
                                        "GPUs stream states to trainer GPUs every epoch.",
    "band": "the range the figure may fall in, from the spread of the published data it rests on.",
}


def popover() -> None:
    """A small button opening the terms, one line each."""
    with st.popover("Terms", icon=":material/menu_book:", width="stretch",
                    help="τ, K, T, TP, MFU, the roofline, drop_last... in plain words"):
        st.markdown("\n".join(["| term | what it means |", "|---|---|"]
                               + [f"| **{term}** | {text} |" for term, text in GLOSSARY.items()]))
