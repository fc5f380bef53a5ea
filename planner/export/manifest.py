"""The manifest: a versioned, validated record of a chosen mix that a pipeline can act on and the
planner can restore exactly. YAML or JSON; loaded defensively (size cap, no YAML tags or aliases,
no duplicate keys, no NaN/Infinity)."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from planner import __version__
from planner.errors import describe_validation_error
from planner.plan import Plan, plan, resolved_mix
from planner.scenario import Scenario
from planner.catalog.stats import StatsCatalog, get_catalog

SCHEMA_VERSION = 1
MAX_MANIFEST_BYTES = 1_000_000
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "manifest.schema.json"


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the first bad field."""


class ManifestComponent(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    id: str
    name: str
    hf_repo: str | None = None
    subset: str | None = None
    split: str | None = None
    local_path: str | None = None
    format: str | None = None
    rows_selected: int = Field(ge=0)
    rows_available: int = Field(ge=0)
    selection: Literal["uniform", "first", "shortest"] = "uniform"
    seed: int = Field(0, ge=0)
    licence: str | None = None


class PredictedTotals(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    conversations: int
    samples: float
    tokens: float
    storage_bytes: float
    storage_bytes_compressed: float
    output_tokens: float
    extraction_gpu_hours: float
    extraction_wall_hours: float
    transfer_hours: float
    training_offline_gpu_hours: float
    training_online_gpu_hours: float
    total_usd_offline: float
    total_usd_online: float


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    schema_version: Literal[1] = SCHEMA_VERSION
    created_at: str
    planner_version: str
    scenario: Scenario
    components: list[ManifestComponent] = Field(max_length=500)
    predicted: PredictedTotals
    statistics: str
    layers: list[int]
    notes: list[str] = Field(default_factory=list, max_length=200)


def build_manifest(s: Scenario, catalog: StatsCatalog | None = None, p: Plan | None = None) -> Manifest:
    cat = catalog or (get_catalog() if s.uniform is None else None)
    p = p or plan(s, cat)
    comps = []
    if s.uniform is None:
        for m in resolved_mix(s, cat):
            c = cat.components[m.id]
            comps.append(ManifestComponent(id=c.id, name=c.name, hf_repo=c.hf_repo, subset=c.subset, split=c.split,
                                           local_path=c.local_path, format=c.source_format, rows_selected=m.rows,
                                           rows_available=c.rows_available, selection=m.selection, seed=m.seed,
                                           licence=c.licence))
    stats = ("uniform samples given by the user" if s.uniform is not None else
             "DuckDB catalog built from datasets_meta/components.yaml (reconstructed row counts, estimated and "
             "published length statistics, tags per number)" +
             ("; measured: " + ", ".join(c.id for c in comps if c.local_path) if any(c.local_path for c in comps) else ""))
    notes = [w for w in p.warnings if "overlap" in w or "licence" in w.lower() or "CC BY" in w or "scraped" in w
             or "unconfirmed" in w]
    return Manifest(
        created_at=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        planner_version=__version__, scenario=s, components=comps, layers=p.layers,
        predicted=PredictedTotals(conversations=p.conversations, samples=p.samples, tokens=p.tokens,
                                  storage_bytes=p.storage_bytes, storage_bytes_compressed=p.storage_bytes_compressed,
                                  output_tokens=p.output_tokens, extraction_gpu_hours=p.extraction.gpu_hours,
                                  extraction_wall_hours=p.extraction.wall_hours, transfer_hours=p.transfer_hours,
                                  training_offline_gpu_hours=p.training.offline_gpu_hours,
                                  training_online_gpu_hours=p.training.online_gpu_hours,
                                  total_usd_offline=p.cost_usd.total_offline,
                                  total_usd_online=p.cost_usd.total_online),
        statistics=stats, notes=notes)


def dump_manifest(m: Manifest, fmt: str = "yaml") -> str:
    data = m.model_dump(mode="json", exclude_none=False)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


# ---------------------------------------------------------------- defensive loading
class _StrictLoader(yaml.SafeLoader):
    """Safe YAML without aliases (no alias bombs), explicit tags, or duplicate keys."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise ManifestError(f"line {event.start_mark.line + 1}: YAML aliases (*{event.anchor}) are not allowed")
        tag = getattr(event, "tag", None)
        if tag not in (None, "!") and isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent,
                                                          yaml.MappingStartEvent)):
            raise ManifestError(f"line {event.start_mark.line + 1}: YAML tags ({tag}) are not allowed")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise ManifestError(f"line {key_node.start_mark.line + 1}: duplicate key {key!r}")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ManifestError(f"duplicate key {k!r}")
        out[k] = v
    return out


def _no_constants(name):
    raise ManifestError(f"{name} is not a number a manifest may hold")


def parse_manifest(data: bytes | str, name: str = "manifest") -> Manifest:
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{name}: {len(raw):,} bytes is over the {MAX_MANIFEST_BYTES:,}-byte limit for a manifest")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{name}: not UTF-8 text (byte {exc.start})")
    stripped = text.lstrip()
    try:
        if stripped.startswith("{"):
            obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
        else:
            obj = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - _StrictLoader is a SafeLoader
    except ManifestError as exc:
        raise ManifestError(f"{name}: {exc}")
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}")
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ManifestError(f"{name}: invalid YAML{where}: {getattr(exc, 'problem', None) or exc}")
    except RecursionError:
        raise ManifestError(f"{name}: nested too deeply")
    if not isinstance(obj, dict):
        raise ManifestError(f"{name}: a manifest is a mapping with schema_version, scenario, components ...; "
                            f"got {type(obj).__name__}")
    if obj.get("schema_version") != SCHEMA_VERSION:
        raise ManifestError(f"schema_version: {obj.get('schema_version')!r} is not allowed; this planner reads "
                            f"schema_version {SCHEMA_VERSION}")
    try:
        m = Manifest.model_validate(obj)
    except ValidationError as exc:
        raise ManifestError(describe_validation_error(exc))
    _check_against_catalog(m)
    return m


def _check_against_catalog(m: Manifest) -> None:
    s = m.scenario
    if s.uniform is not None:
        return
    cat = get_catalog()
    for i, item in enumerate(s.mix or []):
        if item.id not in cat.components:
            raise ManifestError(f"scenario.mix.{i}.id: {item.id!r} is not allowed; unknown component (known: "
                                f"{', '.join(cat.components)})")
    listed = {c.id: c for c in m.components}
    for i, item in enumerate(s.mix or []):
        c = listed.get(item.id)
        if c is not None and c.rows_selected != item.rows:
            raise ManifestError(f"components.{item.id}.rows_selected: {c.rows_selected} does not match "
                                f"scenario.mix.{i}.rows ({item.rows})")


def load_manifest(path: str | Path) -> Manifest:
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ManifestError(f"{path}: cannot be read ({exc.strerror})")
    if size > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{path.name}: {size:,} bytes is over the {MAX_MANIFEST_BYTES:,}-byte limit for a manifest")
    return parse_manifest(path.read_bytes(), path.name)


def json_schema() -> dict:
    return Manifest.model_json_schema()
