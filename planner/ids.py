"""The one definition of every name a user or a received file may give: ids, hub names, local
paths. The scenario, manifests, links, the user catalog and `profile --name` all use these.

Patterns are matched with re.fullmatch (a `$` would accept a trailing newline).
"""
from __future__ import annotations

import re

# Component, model, GPU, layout, disk and price ids: lower case, digits, '_', '.', '-'; 1-64 chars.
ID_PATTERN = r"[a-z0-9][a-z0-9_.\-]{0,63}"
# A Hugging Face hub name: owner/name of [A-Za-z0-9._-] (1-96 characters each side).
HUB_NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._\-]{0,95}/[A-Za-z0-9][A-Za-z0-9._\-]{0,95}"
# A hub subset or split: letters, digits, '_', '.', '-', '+'; 1-128 chars.
HUB_PART_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.+\-]{0,127}"
# A local path a custom model may name instead of a hub name: safe characters only, no '..' part,
# not starting with '-' (a command would read "--trust-remote-code" as a flag: write ./-name).
LOCAL_PATH_PATTERN = r"(?!-)(?!.*(?:^|/)\.\.(?:/|$))[A-Za-z0-9_./\-+@]{1,255}"

# The catalog's families: the domains of the quality model, the serving workload and `profile --family`.
FAMILIES = ("general", "code", "tool", "agentic", "math")
# the record formats a component's files may be read as (planner/catalog/formats.py reads them)
FORMATS = ("auto", "sharegpt", "openai", "alpaca", "glaive")
# the ways planner/decisions/trim.py fits a mix to a budget
TRIM_STRATEGIES = ("proportional", "protect", "value", "cap", "quality")

_ID = re.compile(ID_PATTERN)
_HUB = re.compile(HUB_NAME_PATTERN)
_HUB_PART = re.compile(HUB_PART_PATTERN)
_LOCAL = re.compile(LOCAL_PATH_PATTERN)
# C0 and C1 control characters (newline, CR, ESC, NUL, ...) and lone surrogates: refused in ids, names and
# paths (has_control, check_no_control).
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
# Characters never shown or passed to a shell as they are (issue 36): every character of the Unicode categories
# Cc (C0 with newline and tab, DEL, C1), Cf (format: the bidi embeddings, overrides and isolates
# U+202A-202E and U+2066-2069, the marks U+200E, U+200F and U+061C, zero-width characters, the soft
# hyphen, the BOM, tags), Zl and Zp (U+2028, U+2029: line breaks to some terminals and editors) and Cs
# (lone surrogates), Unicode 15.1 (U+13439-1343F are Cf since 15.0). Written out, not computed, so that
# the Ray driver can copy it (ray_driver._quote_source); tests/unit/planner/test_text.py checks it
# against unicodedata. planner.text.printable shows these escaped, commands.quote writes them as bytes.
UNSHOWN_PATTERN = (r"[\x00-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e"
                   r"\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
                   r"\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
                   r"\U000e0001\U000e0020-\U000e007f]")
_UNSHOWN = re.compile(UNSHOWN_PATTERN)


def is_id(text: object) -> bool:
    return isinstance(text, str) and _ID.fullmatch(text) is not None


def is_hub_name(text: object) -> bool:
    return isinstance(text, str) and _HUB.fullmatch(text) is not None


def is_hub_part(text: object) -> bool:
    return isinstance(text, str) and _HUB_PART.fullmatch(text) is not None


def is_local_path(text: object) -> bool:
    return isinstance(text, str) and _LOCAL.fullmatch(text) is not None


def has_control(text: str) -> bool:
    return _CONTROL.search(text) is not None


def has_unshown(text: str) -> bool:
    """A character of UNSHOWN_PATTERN: a control, format (bidi), separator or surrogate character."""
    return _UNSHOWN.search(text) is not None


def check_no_control(text: str) -> str:
    """For pydantic validators: refuse control characters (newline, CR, ANSI escapes, NUL)."""
    if has_control(text):
        raise ValueError("control characters (newline, carriage return, escape, NUL ...) are not allowed")
    return text
