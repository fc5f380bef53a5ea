"""planner/export/share.py: a scenario in a link (JSON, zlib, base64url behind `v<CURRENT>.`), decoded defensively."""
from __future__ import annotations

import base64
import json
import zlib

import pytest

from planner.export import share
from planner.export.versions import CURRENT
from planner.scenario import default_scenario


def _link(raw: bytes, prefix: str = share.PREFIX) -> str:
    return prefix + base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def test_a_scenario_round_trips_behind_the_current_version_prefix():
    s = default_scenario()
    text = share.encode(s)
    assert share.PREFIX == f"v{CURRENT}." and text.startswith(share.PREFIX)
    assert "=" not in text  # padding is stripped; decode puts it back
    assert share.decode(text) == s
    # the body is the sorted compact JSON of the scenario, nothing else
    body = text.partition(".")[2]
    raw = zlib.decompress(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    assert json.loads(raw) == s.model_dump(mode="json")


def test_empty_long_damaged_and_non_object_links_are_one_line_errors():
    with pytest.raises(share.ShareError, match="holds no scenario"):
        share.decode("")
    # 8,001 characters: one over MAX_PARAM_CHARS = 8,000
    with pytest.raises(share.ShareError, match="8,001 characters, over the 8,000 limit"):
        share.decode(share.PREFIX + "A" * (8001 - len(share.PREFIX)))
    with pytest.raises(share.ShareError, match="damaged"):
        share.decode(share.PREFIX + "not*base64")
    with pytest.raises(share.ShareError, match="must be a JSON object, not list"):
        share.decode(_link(b"[1,2]"))


def test_nan_and_infinity_are_refused():
    with pytest.raises(share.ShareError, match="NaN is not allowed"):
        share.decode(_link(b'{"a": NaN}'))
    with pytest.raises(share.ShareError, match="Infinity is not allowed"):
        share.decode(_link(b'{"a": -Infinity}'))


def test_a_bomb_that_expands_past_the_limit_is_refused():
    # 300,000 spaces compress to a few hundred bytes but expand past MAX_JSON_BYTES = 256,000
    text = _link(b" " * 300_000)
    assert len(text) < share.MAX_PARAM_CHARS
    with pytest.raises(share.ShareError, match="over the size limit once expanded"):
        share.decode(text)


def test_a_bad_field_names_the_field():
    d = default_scenario().model_dump(mode="json")
    d["no_such_field"] = 1
    with pytest.raises(share.ShareError) as e:
        share.decode(_link(json.dumps(d).encode()))
    assert "no_such_field" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("name, fragment", [
    ("", "1-40 characters"),
    ("x" * 41, "1-40 characters"),          # MAX_NAME = 40
    ("a\u200bb", "invisible format"),          # zero-width space, category Cf
    ("tab\there", "control characters"),
    (" Pinned ", "Compare view uses that name"),
    ("mine - current", "difference columns"),
])
def test_saved_name_problems(name, fragment):
    assert fragment in share.saved_name_problem(name)


def test_good_saved_names_have_no_problem():
    assert share.saved_name_problem("x" * 40) is None
    assert share.saved_name_problem("current plan") is None  # only the exact name or a ' - current' ending


def test_a_set_round_trips_and_bounds_are_kept():
    s = default_scenario()
    assert share.decode_set(share.encode_set(s, {"a": s})) == (s, {"a": s})
    assert share.decode_set(share.encode_set(None, {})) == (None, {})
    # MAX_SAVED = 4: five saved scenarios are one too many
    five = {f"s{i}": s for i in range(5)}
    with pytest.raises(share.ShareError, match="holds 5 saved scenarios; at most 4"):
        share.decode_set(share.encode_set(None, five))
    with pytest.raises(share.ShareError, match="Compare view uses that name"):
        share.decode_set(share.encode_set(None, {"current": s}))
    with pytest.raises(share.ShareError, match="not {pinned, saved}"):
        share.decode_set(_link(b'{"other": 1}'))
    with pytest.raises(share.ShareError, match="saved 'a' must be a JSON object"):
        share.decode_set(_link(b'{"saved": {"a": 3}}'))
