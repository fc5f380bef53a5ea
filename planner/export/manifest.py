"""The manifest: a versioned, validated record of a chosen mix that a pipeline can act on and the
planner can restore exactly. YAML or JSON; loaded defensively: a regular file of at most 1 MB (read
through planner.safe_io, never more than the cap), no YAML tags, aliases or complex keys, no
duplicate keys, no NaN/Infinity, no number too long to read, strict names (planner.ids) and no
control characters in any string. Older schema versions are migrated (versions.py)."""
from __future__ import annotations

import datetime as dt
import json
import unicodedata
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError

from planner._version import __version__
from planner.errors import PlannerInputError, describe_validation_error
from planner.export.versions import CURRENT, VersionError, migrate_manifest
from planner.ids import FORMATS, HUB_NAME_PATTERN, HUB_PART_PATTERN, ID_PATTERN, check_no_control
from planner.safe_io import LIMITS, read_capped
from planner.scenario import Scenario

if TYPE_CHECKING:
    from planner.catalog.stats import StatsCatalog
    from planner.planning import Plan

SCHEMA_VERSION = CURRENT
MAX_MANIFEST_BYTES = LIMITS["manifest"]      # the one cap, for files and uploads alike
SOURCE_NOTE = "hub source replaced: "    # the note a received manifest's changed hub source leaves
NOTE_CODES = ("overlap", "licence")     # the findings a manifest carries as notes (planner/findings.py)
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "manifest.schema.json"


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the first bad field."""


Text = Annotated[str, StringConstraints(max_length=2000), AfterValidator(check_no_control)]
Id = Annotated[str, StringConstraints(pattern=f"^{ID_PATTERN}$"), AfterValidator(check_no_control)]
HubName = Annotated[str, StringConstraints(pattern=f"^{HUB_NAME_PATTERN}$"), AfterValidator(check_no_control)]
HubPart = Annotated[str, StringConstraints(pattern=f"^{HUB_PART_PATTERN}$"), AfterValidator(check_no_control)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class ManifestComponent(BaseModel):
    """One component as a pipeline needs it. `local_path` is information only: materialize reads a
    local file only when the user's own catalog (or `--local ID=FILE`) names it."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    id: Id
    name: Text
    hf_repo: HubName | None = None
    subset: HubPart | None = None
    split: HubPart | None = None
    local_path: Text | None = None
    sha256: Sha256 | None = None          # measured components: the content the statistics came from
    format: Literal[FORMATS] | None = None  # type: ignore[valid-type]  # mypy reads no Literal of a tuple
    rows_selected: int = Field(ge=0, le=10**10)
    rows_available: int = Field(ge=0, le=10**12)
    selection: Literal["uniform", "first", "shortest"] = "uniform"
    seed: int = Field(0, ge=0, le=2**32 - 1)
    licence: Text | None = None


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
    # added in version 4 (absent from older manifests)
    total_usd_disaggregated: float | None = None
    expected_acceptance_length: float | None = None     # planner/phases/quality.py: an estimate
    expected_acceptance_low: float | None = None
    expected_acceptance_high: float | None = None
    expected_speedup: float | None = None


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    schema_version: Literal[SCHEMA_VERSION] = SCHEMA_VERSION  # type: ignore[valid-type]  # Literal of a name
    created_at: Annotated[str, StringConstraints(pattern=r"^[0-9T:+\-.Z ]{10,40}$")]
    planner_version: Annotated[str, StringConstraints(pattern=r"^[0-9A-Za-z.+\-]{1,32}$")]
    scenario: Scenario
    components: list[ManifestComponent] = Field(max_length=500)
    predicted: PredictedTotals
    statistics: Text
    layers: list[Annotated[int, Field(ge=0, le=1024)]] = Field(max_length=256)
    notes: list[Text] = Field(default_factory=list, max_length=200)


def build_manifest(scenario: Scenario, catalog: StatsCatalog | None = None, plan: Plan | None = None, *,
                   local_paths: bool = True) -> Manifest:
    """The manifest of `scenario`. local_paths=False (the dashboard) names measured components by
    id and content hash only, never by a path on the server."""
    from planner import planning
    from planner.catalog.stats import get_catalog  # the model and the catalog load when a manifest is built
    cat = catalog or (get_catalog() if scenario.uniform is None else None)
    plan = plan or planning.plan(scenario, cat)
    # a catalog is opened above unless the scenario is uniform
    comps = [] if scenario.uniform is not None or cat is None else [
        _manifest_component(cat.components[m.id], m, local_paths) for m in planning.included_mix(scenario, cat)]
    stats = _statistics_line(scenario, comps)
    notes = [f.text for f in plan.findings if f.code in NOTE_CODES]
    return Manifest(
        created_at=dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat(),
        planner_version=__version__, scenario=scenario, components=comps, layers=plan.layers,
        predicted=_predicted(plan), statistics=stats, notes=notes)


def _statistics_line(s: Scenario, comps: list[ManifestComponent]) -> str:
    """Where the manifest's statistics come from: the user's uniform samples, or the catalog (and which of its
    components were measured)."""
    if s.uniform is not None:
        return "uniform samples given by the user"
    measured = [c.id for c in comps if c.local_path or c.sha256]
    return ("DuckDB catalog built from datasets_meta/components.yaml (reconstructed row counts, estimated and "
            "published length statistics, tags per number)"
            + ("; measured: " + ", ".join(measured) if measured else ""))


def _manifest_component(c, m, local_paths: bool) -> ManifestComponent:
    """Catalog component `c` as mix item `m` selects it (its local path only with `local_paths`)."""
    return ManifestComponent(id=c.id, name=c.name, hf_repo=c.hf_repo, subset=c.subset, split=c.split,
                             local_path=c.local_path if local_paths else None,
                             sha256=getattr(c, "sha256", None),
                             format=c.source_format if c.origin == "measured" else None,
                             rows_selected=m.rows,
                             rows_available=c.rows_available, selection=m.selection, seed=m.seed,
                             licence=c.licence)


def _predicted(p: Plan) -> PredictedTotals:
    return PredictedTotals(conversations=p.conversations, samples=p.samples, tokens=p.tokens,
                           storage_bytes=p.storage_bytes, storage_bytes_compressed=p.storage_bytes_compressed,
                           output_tokens=p.output_tokens, extraction_gpu_hours=p.extraction.gpu_hours,
                           extraction_wall_hours=p.extraction.wall_hours, transfer_hours=p.transfer_hours,
                           training_offline_gpu_hours=p.training.offline_gpu_hours,
                           training_online_gpu_hours=p.training.online_gpu_hours,
                           total_usd_offline=p.cost_usd.total_offline,
                           total_usd_online=p.cost_usd.total_online,
                           total_usd_disaggregated=p.cost_usd.total_disaggregated,
                           expected_acceptance_length=p.quality.acceptance_length,
                           expected_acceptance_low=p.quality.acceptance_low,
                           expected_acceptance_high=p.quality.acceptance_high,
                           expected_speedup=p.quality.speedup)


def dump_manifest(manifest: Manifest, fmt: str = "yaml") -> str:
    """The manifest as YAML (UTF-8 text) or JSON (ASCII). A received manifest's text may hold
    invisible format characters (Unicode Cf: bidi overrides, zero-width spaces) that would reorder
    what a terminal or an editor shows: then the YAML escapes every non-ASCII character (\\u202e)."""
    data = manifest.model_dump(mode="json", exclude_none=False)
    if fmt == "json":
        return json.dumps(data, indent=2) + "\n"
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    if any(unicodedata.category(ch) == "Cf" for ch in text if not ch.isascii()):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=False)
    return text


# ---------------------------------------------------------------- defensive loading
def _line(event: yaml.Event) -> str:
    """The line a YAML event starts on, from 1 (the parser marks each event it gives; "?" without a mark)."""
    mark = event.start_mark
    return str(mark.line + 1) if mark is not None else "?"


class _StrictLoader(yaml.SafeLoader):
    """Safe YAML without aliases (no alias bombs), explicit tags, or duplicate keys."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            raise ManifestError(f"line {_line(event)}: YAML aliases (*{event.anchor}) are not allowed")
        tag = getattr(event, "tag", None)
        if tag not in (None, "!") and isinstance(event, (yaml.ScalarEvent, yaml.SequenceStartEvent,
                                                          yaml.MappingStartEvent)):
            raise ManifestError(f"line {_line(event)}: YAML tags ({tag}) are not allowed")
        return super().compose_node(parent, index)

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise ManifestError(f"line {key_node.start_mark.line + 1}: a key must be a plain name, not a "
                                    f"{'list' if isinstance(key_node, yaml.SequenceNode) else 'mapping'}")
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


def parse_manifest(data: bytes | str, name: str = "manifest", catalog: StatsCatalog | None = None) -> Manifest:
    """A manifest from its text, checked against `catalog` (default: the shipped catalog and this
    user's; the dashboard passes the session's, so a visitor's own upload resolves and no other
    visitor's id is ever named). A shipped component's hub source is the catalog's, whatever the
    manifest says: a different one is replaced and noted in `notes`."""
    obj = _manifest_object(data, name)
    try:
        obj = migrate_manifest(obj)
    except VersionError as exc:
        raise ManifestError(str(exc)) from exc
    try:
        m = Manifest.model_validate(obj)
    except ValidationError as exc:
        raise ManifestError(describe_validation_error(exc)) from exc
    except RecursionError:
        raise ManifestError(f"{name}: nested too deeply") from None
    return _check_against_catalog(m, catalog)


def _manifest_text(data: bytes | str, name: str) -> str:
    """The manifest's text: at most MAX_MANIFEST_BYTES of UTF-8."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if len(raw) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"{name}: {len(raw):,} bytes is over the {MAX_MANIFEST_BYTES:,}-byte limit for a manifest")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestError(f"{name}: not UTF-8 text (byte {exc.start})") from exc


def _manifest_object(data: bytes | str, name: str) -> dict:
    """The manifest's mapping, read as JSON (text starting with '{') or strict YAML, refused in one line."""
    text = _manifest_text(data, name)
    try:
        if text.lstrip().startswith("{"):
            obj = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
        else:
            obj = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - _StrictLoader is a SafeLoader
    except ManifestError as exc:
        raise ManifestError(f"{name}: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ManifestError(f"{name}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ManifestError(f"{name}: invalid YAML{where}: {getattr(exc, 'problem', None) or exc}") from exc
    except RecursionError:
        raise ManifestError(f"{name}: nested too deeply") from None
    except ValueError as exc:   # int() of more than 4,300 digits, and the like
        raise ManifestError(f"{name}: a value cannot be read ({str(exc)[:120]})") from exc
    if not isinstance(obj, dict):
        raise ManifestError(f"{name}: a manifest is a mapping with schema_version, scenario, components ...; "
                            f"got {type(obj).__name__}")
    if any(not isinstance(k, str) for k in obj):
        raise ManifestError(f"{name}: every top-level key must be a name")
    return obj


def _check_against_catalog(m: Manifest, cat: StatsCatalog | None = None) -> Manifest:
    s = m.scenario
    if s.uniform is not None:
        return m
    from planner.catalog.stats import get_catalog
    cat = cat if cat is not None else get_catalog()
    _check_mix(m, cat)
    # a catalog component is read from the catalog's hub source: a received manifest cannot point
    # `openorca` at another repository (the difference is replaced and noted)
    comps, notes = [], []
    for c in m.components:
        known = cat.components.get(c.id)
        source = (known.hf_repo, known.subset, known.split) if known is not None and known.hf_repo else None
        if source is not None and (c.hf_repo, c.subset, c.split) != source:
            notes.append(f"{SOURCE_NOTE}components.{c.id} named {c.hf_repo} ({c.subset}, {c.split}); the "
                         f"catalog's {source[0]} ({source[1]}, {source[2]}) is used")
            c = c.model_copy(update=dict(zip(("hf_repo", "subset", "split"), source, strict=True)))
        comps.append(c)
    return m.model_copy(update={"components": comps, "notes": [*m.notes, *notes]}) if notes else m


def _check_mix(m: Manifest, cat: StatsCatalog) -> None:
    """Every mix item is a component of `cat`, with the rows its component entry selects."""
    mix = m.scenario.mix or []
    for i, item in enumerate(mix):
        if item.id not in cat.components:
            raise ManifestError(f"scenario.mix.{i}.id: {item.id!r} is not allowed; unknown component (known: "
                                f"{', '.join(cat.components)})")
    listed = {c.id: c for c in m.components}
    for i, item in enumerate(mix):
        c = listed.get(item.id)
        if c is not None and c.rows_selected != item.rows:
            raise ManifestError(f"components.{item.id}.rows_selected: {c.rows_selected} does not match "
                                f"scenario.mix.{i}.rows ({item.rows})")


def load_manifest(path: str | Path, field: str = "manifest") -> Manifest:
    """A manifest file: a regular file (not a FIFO or a device), read up to the cap and no further.
    The one reader of a manifest file (the CLI's --manifest and positional manifests included)."""
    try:
        data = read_capped(path, field, "manifest")
    except PlannerInputError as exc:
        raise ManifestError(str(exc)) from exc
    return parse_manifest(data, Path(path).name)


def source_notes(manifest: Manifest) -> list[str]:
    """The notes saying a component's hub source was replaced by the catalog's (to show the user)."""
    return [n for n in manifest.notes if n.startswith(SOURCE_NOTE)]


def json_schema() -> dict:
    return Manifest.model_json_schema()
