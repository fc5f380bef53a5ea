"""The scenario in a link: JSON, zlib, base64url, behind a version prefix (`v2.`).

Links carry the whole scenario (a later change of a default cannot change what a link means);
links of older versions are migrated with the defaults of their own version (versions.py).
Decoding is defensive: size caps before and after decompression, no NaN/Infinity, a depth limit,
the same pydantic models as a manifest; never pickle."""
from __future__ import annotations

import base64
import json
import zlib

from pydantic import ValidationError

from planner.errors import describe_validation_error
from planner.export.versions import CURRENT, VersionError, link_version, migrate_link
from planner.scenario import Scenario

PREFIX = f"v{CURRENT}."
MAX_PARAM_CHARS = 8000
MAX_JSON_BYTES = 256_000


class ShareError(ValueError):
    pass


def encode(s: Scenario) -> str:
    raw = json.dumps(s.model_dump(mode="json"), separators=(",", ":"), sort_keys=True).encode()
    return PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def _reject(name):
    raise ShareError(f"{name} is not allowed in a shared scenario")


def decode(text: str) -> Scenario:
    if not isinstance(text, str) or not text:
        raise ShareError("the link holds no scenario")
    if len(text) > MAX_PARAM_CHARS:
        raise ShareError(f"the link's scenario is {len(text):,} characters, over the {MAX_PARAM_CHARS:,} limit")
    try:
        version = link_version(text)
    except VersionError as exc:
        raise ShareError(str(exc))
    body = text.partition(".")[2]
    try:
        packed = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
        d = zlib.decompressobj()
        raw = d.decompress(packed, MAX_JSON_BYTES)
        if d.unconsumed_tail:
            raise ShareError("the link's scenario expands beyond the size limit")
    except ShareError:
        raise
    except (ValueError, zlib.error):
        raise ShareError("the link's scenario is damaged (not base64url + zlib)")
    try:
        obj = json.loads(raw.decode("utf-8"), parse_constant=_reject)
    except ShareError:
        raise
    except RecursionError:
        raise ShareError("the link's scenario is nested too deeply")
    except (ValueError, UnicodeDecodeError):
        raise ShareError("the link's scenario is not valid JSON (or holds a number too long to read)")
    if not isinstance(obj, dict):
        raise ShareError(f"the link's scenario must be a JSON object, not {type(obj).__name__}")
    try:
        return Scenario.model_validate(migrate_link(obj, version))
    except ValidationError as exc:
        raise ShareError(describe_validation_error(exc, prefix="scenario"))
    except RecursionError:
        raise ShareError("the link's scenario is nested too deeply")


MAX_NAME = 40


def encode_set(pinned: Scenario | None, saved: dict[str, Scenario]) -> str:
    """The pinned baseline and the saved scenarios in one link parameter, as `encode` does one."""
    obj = {"pinned": pinned.model_dump(mode="json") if pinned is not None else None,
           "saved": {name: s.model_dump(mode="json") for name, s in saved.items()}}
    raw = json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()
    return PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode_set(text: str) -> tuple[Scenario | None, dict[str, Scenario]]:
    """The pinned and saved scenarios of a link (ShareError naming the first bad part)."""
    if not isinstance(text, str) or not text:
        raise ShareError("the link holds no saved scenarios")
    if len(text) > MAX_PARAM_CHARS:
        raise ShareError(f"the link's saved scenarios are {len(text):,} characters, over the {MAX_PARAM_CHARS:,} limit")
    try:
        version = link_version(text)
    except VersionError as exc:
        raise ShareError(str(exc))
    body = text.partition(".")[2]
    try:
        packed = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
        d = zlib.decompressobj()
        raw = d.decompress(packed, MAX_JSON_BYTES)
        if d.unconsumed_tail:
            raise ShareError("the link's saved scenarios expand beyond the size limit")
        obj = json.loads(raw.decode("utf-8"), parse_constant=_reject)
    except ShareError:
        raise
    except RecursionError:
        raise ShareError("the link's saved scenarios are nested too deeply")
    except (ValueError, zlib.error, UnicodeDecodeError):
        raise ShareError("the link's saved scenarios are damaged")
    if not isinstance(obj, dict) or set(obj) - {"pinned", "saved"} or not isinstance(obj.get("saved", {}), dict):
        raise ShareError("the link's saved scenarios are not {pinned, saved}")
    from planner.ids import has_control

    def one(where: str, d) -> Scenario:
        if not isinstance(d, dict):
            raise ShareError(f"{where} must be a JSON object")
        try:
            return Scenario.model_validate(migrate_link(d, version))
        except ValidationError as exc:
            raise ShareError(f"{where}: " + describe_validation_error(exc, prefix="scenario"))
    saved = {}
    for name, d in obj.get("saved", {}).items():
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or has_control(name):
            raise ShareError(f"a saved scenario's name must be 1-{MAX_NAME} characters without control characters")
        saved[name] = one(f"saved {name!r}", d)
    pinned = one("the pinned scenario", obj["pinned"]) if obj.get("pinned") is not None else None
    return pinned, saved
