"""The user catalog (profiled components): its model, and the one place it is read and written.

A file that cannot be read or does not validate is never ignored and then overwritten (that loses
the components in it): it is renamed aside, `<stem>.corrupt-<UTC timestamp>.json`, and every
catalog built while such a file exists carries a warning naming it. Writes hold an inter-process
lock (filelock, so it works on Windows too) and go through safe_io.atomic_write.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path
from typing import Annotated, Literal

import filelock
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints, ValidationError, model_validator

from planner.errors import PlannerInputError, describe_validation_error
from planner.ids import FORMATS, ID_PATTERN, check_no_control
from planner.safe_io import atomic_write, read_capped

MAX_COMPONENTS = 5_000
MAX_BINS = 4_096            # 32 bins per octave over 2^0 .. 2^128 tokens
LOCK_TIMEOUT_S = 60.0

ID_RE = re.compile(ID_PATTERN)
SHA_RE = re.compile(r"[0-9a-f]{64}")


def _fullmatch(pattern: re.Pattern, value: str, what: str) -> str:
    if pattern.fullmatch(value) is None:
        raise ValueError(f"must be {what}")
    return value


Text = Annotated[str, StringConstraints(max_length=4_096), AfterValidator(check_no_control)]
ShortText = Annotated[str, StringConstraints(max_length=256), AfterValidator(check_no_control)]
Id = Annotated[str, AfterValidator(lambda v: _fullmatch(ID_RE, v, "an id: 1-64 of a-z 0-9 _ . - "))]
Sha256 = Annotated[str, AfterValidator(lambda v: _fullmatch(SHA_RE, v, "64 lowercase hex digits"))]
Count = Annotated[int, Field(ge=0, le=10**13)]
Number = Annotated[float, Field(ge=0)]


class UserCatalogError(ValueError):
    """The user catalog file cannot be used as it is (unreadable, not JSON, not a valid catalog)."""


class AtomsJson(BaseModel):
    """A length distribution as stored: parallel lists, one entry per bin."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    rows: list[Number] = Field(max_length=MAX_BINS)
    tokens: list[Number] = Field(max_length=MAX_BINS)
    response: list[Number] = Field(max_length=MAX_BINS)
    turns: list[Number] = Field(max_length=MAX_BINS)

    @model_validator(mode="after")
    def _same_length(self):
        if not (len(self.rows) == len(self.tokens) == len(self.response) == len(self.turns)) or not self.rows:
            raise ValueError("rows, tokens, response and turns must be non-empty lists of one length")
        return self


class ProvenanceItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tag: ShortText
    source: Text


class SampledJson(BaseModel):
    """How a sampled profile was drawn and how sure its means are: `rows_sampled` of `rows_total`
    conversations (the component's row count is the total), with the 95% intervals of the mean
    tokens per conversation and per turn row (None: too few rows for one)."""
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    rows_sampled: Count
    rows_total: Count
    seed: Annotated[int, Field(ge=0, le=2**63 - 1)]
    mean_tokens_ci: tuple[Number, Number] | None = None
    mean_turn_tokens_ci: tuple[Number, Number] | None = None

    @model_validator(mode="after")
    def _ordered(self):
        if self.rows_sampled > self.rows_total:
            raise ValueError("rows_sampled must not exceed rows_total")
        for ci in (self.mean_tokens_ci, self.mean_turn_tokens_ci):
            if ci is not None and ci[0] > ci[1]:
                raise ValueError("an interval's low end must not exceed its high end")
        return self


class UserComponent(BaseModel):
    """One profiled component, as profile.measured_component writes it."""
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False)
    id: Id
    name: ShortText
    family: ShortText = "custom"
    hf_repo: ShortText | None = None
    subset: ShortText | None = None
    split: ShortText | None = None
    licence: ShortText | None = None
    licence_note: Text | None = None
    format: Literal[FORMATS] = "auto"  # type: ignore[valid-type]  # mypy reads no Literal of a tuple
    source_format: Literal[FORMATS] = "auto"  # type: ignore[valid-type]  # mypy reads no Literal of a tuple
    rows_in_mix: Count
    rows_available: Count
    turns: Number
    mean_tokens: Number
    median_tokens: Number | None = None
    assistant_share: float = Field(ge=0, le=1)
    provenance: dict[ShortText, ProvenanceItem] = Field(default_factory=dict, max_length=32)
    local_path: Text | None = None
    sha256: Sha256 | None = None
    tokenizer: ShortText = ""
    bad_lines: Count = 0
    template: ShortText | None = None       # which chat-template tokens were counted (older entries: none said)
    sampled: SampledJson | None = None      # a sampled profile (older entries and full scans: None)
    conversation: AtomsJson
    turn: AtomsJson


class UserCatalog(BaseModel):
    model_config = ConfigDict(extra="ignore")
    version: Literal[1] = 1
    components: list[UserComponent] = Field(default_factory=list, max_length=MAX_COMPONENTS)

    @model_validator(mode="after")
    def _unique_ids(self):
        seen = set()
        for c in self.components:
            if c.id in seen:
                raise ValueError(f"component id {c.id!r} appears twice")
            seen.add(c.id)
        return self

    def get(self, cid: str) -> UserComponent | None:
        return next((c for c in self.components if c.id == cid), None)


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number")


def parse(raw: bytes, path: Path) -> UserCatalog:
    """Validate the bytes of a user catalog file; UserCatalogError says what is wrong."""
    try:
        obj = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as exc:
        raise UserCatalogError(f"not UTF-8 text (byte {exc.start})") from exc
    except RecursionError:
        raise UserCatalogError("nested too deeply") from None
    except ValueError as exc:
        raise UserCatalogError(f"not valid JSON ({getattr(exc, 'msg', exc)})") from exc
    if not isinstance(obj, dict):
        raise UserCatalogError(f"a user catalog is an object with 'components', got {type(obj).__name__}")
    try:
        return UserCatalog.model_validate(obj)
    except ValidationError as exc:
        raise UserCatalogError(describe_validation_error(exc)) from exc
    except RecursionError:
        raise UserCatalogError("nested too deeply") from None


def _read(path: Path) -> tuple[bytes | None, UserCatalog | None, str | None]:
    """(raw bytes, catalog, problem); (None, empty catalog, None) when there is no file."""
    if not os.path.lexists(path):
        return None, UserCatalog(), None
    try:
        raw = read_capped(path, "user catalog file", "user catalog")
    except PlannerInputError as exc:
        return b"", None, exc.allowed
    except OSError as exc:
        return b"", None, f"cannot be read ({exc.strerror or exc})"
    try:
        return raw, parse(raw, path), None
    except UserCatalogError as exc:
        return raw, None, str(exc)


def lock(path: Path) -> filelock.FileLock:
    """The inter-process lock that serialises read-modify-write of one user catalog file."""
    return filelock.FileLock(str(path.with_name(path.name + ".lock")), timeout=LOCK_TIMEOUT_S)


def _aside_name(path: Path) -> Path:
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return path.with_name(f"{path.stem}.corrupt-{stamp}.json")


def _put_aside_locked(path: Path, raw: bytes | None) -> None:
    """Rename an unusable file aside, if it is still the one that was found unusable."""
    again, cat, _ = _read(path)
    if again is None or cat is not None or (raw and again != raw):
        return   # gone, repaired or replaced meanwhile
    try:
        os.replace(path, _aside_name(path))
    except OSError:
        pass     # a read-only folder: still never overwritten, see write_component


def set_aside(path: Path) -> list[Path]:
    """Files this user catalog was renamed to because they could not be used, oldest first."""
    return sorted(path.parent.glob(f"{path.stem}.corrupt-*.json"))


def load(path: Path) -> tuple[UserCatalog, str | None]:
    """The user catalog at `path` and a warning to show (None when all is well). An unusable file
    is renamed aside under the lock; its components are then not loaded until the user repairs it."""
    path = Path(path)
    raw, cat, problem = _read(path)
    if cat is None:
        try:
            with lock(path):
                _put_aside_locked(path, raw)
        except (filelock.Timeout, OSError):
            pass
        # read again: set aside (gone), replaced meanwhile by a writer, or still there (read-only folder)
        raw, cat, problem = _read(path)
    aside = set_aside(path)
    if cat is None:
        return UserCatalog(), f"user catalog {path} cannot be used and was ignored ({problem})"
    if aside:
        _, _, why = _read(aside[-1])
        why = f" ({why})" if why else ""
        return cat, (f"user catalog {path} could not be used{why}; it was kept aside as {aside[-1].name}: its "
                     f"components are not loaded until you repair it and rename it back (or delete it)")
    return cat, None


def write_component(path: Path, component: dict, replace: bool = False) -> UserComponent:
    """Add one profiled component (replace an existing id only when `replace`), atomically."""
    path = Path(path)
    try:
        entry = UserComponent.model_validate(component)
    except ValidationError as exc:
        # the field at fault, not --name: a too-long display name or a bad measured value is named as such
        first = exc.errors()[0]
        loc = ".".join(str(x) for x in first["loc"]) or "id"
        raise PlannerInputError(f"profiled component {component.get('id')!r}: {loc}",
                                "(missing)" if first["type"] == "missing" else first.get("input"),
                                first["msg"]) from exc
    try:
        with lock(path):
            raw, cat, problem = _read(path)
            if cat is None:
                _put_aside_locked(path, raw)
                if os.path.lexists(path):
                    raise PlannerInputError("user catalog file", str(path),
                                            f"cannot be used ({problem}) and cannot be renamed aside; fix or move it")
                cat = UserCatalog()
            if cat.get(entry.id) is not None and not replace:
                raise PlannerInputError("--name", entry.id, "a component with that id exists; pass --replace to "
                                                            "replace it")
            new = UserCatalog(components=[c for c in cat.components if c.id != entry.id] + [entry])
            _fault_point("before_replace")
            atomic_write(path, new.model_dump_json(), field="user catalog file")
    except filelock.Timeout:
        raise PlannerInputError("user catalog file", str(path), f"is locked by another process for over "
                                                               f"{LOCK_TIMEOUT_S:.0f} s; try again") from None
    return entry


def _fault_point(name: str) -> None:
    """Fault injection for the data-safety tests: PLANNER_FAULT=<name> parks the process here
    (to be killed with SIGKILL). Inert unless that variable names this point."""
    if os.environ.get("PLANNER_FAULT") == name:
        import sys
        import time
        print(f"FAULT-POINT {name}", file=sys.stderr, flush=True)
        time.sleep(3600)
