"""The scenario in a link: compact JSON (only what differs from the defaults), zlib, base64url.
Decoding is defensive: size caps before and after decompression, no NaN/Infinity, and the same
pydantic models as a manifest; never pickle."""
from __future__ import annotations

import base64
import json
import zlib

from pydantic import ValidationError

from planner.errors import describe_validation_error
from planner.scenario import Scenario

PREFIX = "v1."
MAX_PARAM_CHARS = 8000
MAX_JSON_BYTES = 256_000


class ShareError(ValueError):
    pass


def encode(s: Scenario) -> str:
    data = s.model_dump(mode="json", exclude_defaults=True)
    raw = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    return PREFIX + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def _reject(name):
    raise ShareError(f"{name} is not allowed in a shared scenario")


def decode(text: str) -> Scenario:
    if not isinstance(text, str) or not text:
        raise ShareError("the link holds no scenario")
    if len(text) > MAX_PARAM_CHARS:
        raise ShareError(f"the link's scenario is {len(text):,} characters, over the {MAX_PARAM_CHARS:,} limit")
    if not text.startswith(PREFIX):
        raise ShareError("the link's scenario is not in a format this planner knows (expected 'v1.')")
    body = text[len(PREFIX):]
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
    except (ValueError, UnicodeDecodeError):
        raise ShareError("the link's scenario is not valid JSON")
    if not isinstance(obj, dict):
        raise ShareError(f"the link's scenario must be a JSON object, not {type(obj).__name__}")
    try:
        return Scenario.model_validate(obj)
    except ValidationError as exc:
        raise ShareError(describe_validation_error(exc, prefix="scenario"))
