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


def _pack(obj) -> str:
    raw = json.dumps(obj, separators=(",", ":"), sort_keys=True).encode()
    return PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def encode(scenario: Scenario) -> str:
    return _pack(scenario.model_dump(mode="json"))


def _reject(name):
    raise ShareError(f"{name} is not allowed in a shared scenario")


def _unpack(text, what: str, verb: str) -> tuple[int, object]:
    """(version, JSON value) of a link parameter: bounded in length and in what it expands to, no
    NaN/Infinity, nesting bounded; ShareError naming `what` ("scenario is", "saved scenarios are")."""
    subject = f"the link's {what} {verb}"
    if not isinstance(text, str) or not text:
        raise ShareError(f"the link holds no {what}")
    if len(text) > MAX_PARAM_CHARS:
        raise ShareError(f"{subject} {len(text):,} characters, over the {MAX_PARAM_CHARS:,} limit")
    try:
        version = link_version(text)
    except VersionError as exc:
        raise ShareError(str(exc)) from exc
    body = text.partition(".")[2]
    try:
        packed = base64.b64decode(body + "=" * (-len(body) % 4), altchars=b"-_", validate=True)
        d = zlib.decompressobj()
        raw = d.decompress(packed, MAX_JSON_BYTES)
        if d.unconsumed_tail:
            raise ShareError(f"{subject} over the size limit once expanded")
    except ShareError:
        raise
    except (ValueError, zlib.error):
        raise ShareError(f"{subject} damaged (not base64url + zlib)") from None
    try:
        return version, json.loads(raw.decode("utf-8"), parse_constant=_reject)
    except ShareError:
        raise
    except RecursionError:
        raise ShareError(f"{subject} nested too deeply") from None
    except (ValueError, UnicodeDecodeError):
        raise ShareError(f"{subject} not valid JSON (or holds a number too long to read)") from None


def decode(text: str) -> Scenario:
    version, obj = _unpack(text, "scenario", "is")
    if not isinstance(obj, dict):
        raise ShareError(f"the link's scenario must be a JSON object, not {type(obj).__name__}")
    try:
        return Scenario.model_validate(migrate_link(obj, version))
    except ValidationError as exc:
        raise ShareError(describe_validation_error(exc, prefix="scenario")) from exc
    except VersionError as exc:   # a field an old version's migration reads, refused before it computes
        raise ShareError(str(exc)) from exc
    except RecursionError:
        raise ShareError("the link's scenario is nested too deeply") from None


MAX_NAME = 40
MAX_SAVED = 4        # saved scenarios a session (and its link) holds beside the pinned one
RESERVED_NAMES = ("current", "pinned")   # the Compare view's own columns


def saved_name_problem(name) -> str | None:
    """Why `name` cannot name a saved scenario (the session's and a link's rule), or None."""
    import unicodedata

    from planner.ids import has_control
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > MAX_NAME or has_control(name) \
            or any(unicodedata.category(ch) == "Cf" for ch in name):
        return (f"a saved scenario's name must be 1-{MAX_NAME} characters without control characters or "
                f"invisible format characters (zero-width spaces, byte-order marks, direction overrides)")
    if name.strip().lower() in RESERVED_NAMES:
        return f"a saved scenario cannot be named {name.strip()!r}: the Compare view uses that name"
    if any(name.strip().lower().endswith(f" - {r}") for r in RESERVED_NAMES):
        return (f"a saved scenario cannot be named {name.strip()!r}: the Compare view names its difference "
                f"columns 'NAME - pinned' and 'NAME - current'")
    return None


def encode_set(pinned: Scenario | None, saved: dict[str, Scenario]) -> str:
    """The pinned baseline and the saved scenarios in one link parameter, as `encode` does one."""
    return _pack({"pinned": pinned.model_dump(mode="json") if pinned is not None else None,
                  "saved": {name: s.model_dump(mode="json") for name, s in saved.items()}})


def decode_set(text: str) -> tuple[Scenario | None, dict[str, Scenario]]:
    """The pinned and saved scenarios of a link (ShareError naming the first bad part)."""
    version, obj = _unpack(text, "saved scenarios", "are")
    if not isinstance(obj, dict) or set(obj) - {"pinned", "saved"} or not isinstance(obj.get("saved", {}), dict):
        raise ShareError("the link's saved scenarios are not {pinned, saved}")
    if len(obj.get("saved", {})) > MAX_SAVED:
        raise ShareError(f"the link holds {len(obj['saved']):,} saved scenarios; at most {MAX_SAVED}")
    def one(where: str, data) -> Scenario:
        if not isinstance(data, dict):
            raise ShareError(f"{where} must be a JSON object")
        try:
            return Scenario.model_validate(migrate_link(data, version))
        except ValidationError as exc:
            raise ShareError(f"{where}: " + describe_validation_error(exc, prefix="scenario")) from exc
        except VersionError as exc:
            raise ShareError(f"{where}: {exc}") from exc
        except RecursionError:
            raise ShareError(f"{where} is nested too deeply") from None
    saved = {}
    for name, d in obj.get("saved", {}).items():
        problem = saved_name_problem(name)
        if problem:
            raise ShareError(problem)
        saved[name] = one(f"saved {name!r}", d)
    pinned = one("the pinned scenario", obj["pinned"]) if obj.get("pinned") is not None else None
    return pinned, saved
