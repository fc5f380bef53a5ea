"""planner/export/manifest.py: a manifest built from a plan, dumped and read back exactly; hostile text refused
in one line naming what is wrong."""
from __future__ import annotations

import json

import pytest

from planner.export.manifest import (
    MAX_MANIFEST_BYTES,
    SOURCE_NOTE,
    ManifestError,
    build_manifest,
    dump_manifest,
    load_manifest,
    parse_manifest,
    source_notes,
)
from planner.scenario import Scenario, seed_article_scenario


@pytest.fixture(scope="module")
def uniform():
    return build_manifest(seed_article_scenario())


@pytest.fixture(scope="module")
def mixed():
    s = Scenario.model_validate({"mix": [{"id": "openorca", "rows": 1000, "seed": 7}]})
    return build_manifest(s)


def test_a_uniform_manifest_carries_the_plan_and_no_components(uniform):
    # the seed article: 913,786 samples of 800 tokens: 913,786 x 800 = 731,028,800 tokens
    assert uniform.predicted.conversations == 913_786
    assert uniform.predicted.tokens == 731_028_800
    assert uniform.components == [] and uniform.statistics == "uniform samples given by the user"


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_dump_and_parse_round_trip(uniform, mixed, fmt):
    for m in (uniform, mixed):
        assert parse_manifest(dump_manifest(m, fmt)) == m
    assert dump_manifest(uniform, "json").isascii()


def test_a_mix_manifest_names_its_components_from_the_catalog(mixed):
    (c,) = mixed.components
    assert (c.id, c.rows_selected, c.seed, c.selection) == ("openorca", 1000, 7, "uniform")
    assert (c.hf_repo, c.split) == ("Open-Orca/OpenOrca", "train")


def test_a_changed_hub_source_is_replaced_and_noted(mixed):
    d = json.loads(dump_manifest(mixed, "json"))
    d["components"][0]["hf_repo"] = "evil/repo"
    m = parse_manifest(json.dumps(d))
    assert m.components[0].hf_repo == "Open-Orca/OpenOrca"
    (note,) = source_notes(m)
    assert note.startswith(SOURCE_NOTE + "components.openorca named evil/repo")


def test_rows_that_disagree_with_the_mix_and_unknown_components_are_refused(mixed):
    d = json.loads(dump_manifest(mixed, "json"))
    d["components"][0]["rows_selected"] = 999
    with pytest.raises(ManifestError, match=r"components.openorca.rows_selected: 999 does not match "
                                            r"scenario.mix.0.rows \(1000\)"):
        parse_manifest(json.dumps(d))
    d = json.loads(dump_manifest(mixed, "json"))
    d["scenario"]["mix"][0]["id"] = "nosuch"
    d["components"][0]["id"] = "nosuch"
    with pytest.raises(ManifestError, match="scenario.mix.0.id: 'nosuch' is not allowed; unknown component"):
        parse_manifest(json.dumps(d))


@pytest.mark.parametrize("text, fragment", [
    ("a: &x 1\nb: *x\n", "line 2: YAML aliases (*x) are not allowed"),
    ("a: !!python/object:os.system 1\n", "YAML tags (tag:yaml.org,2002:python/object:os.system) are not allowed"),
    ("a: 1\na: 2\n", "line 2: duplicate key 'a'"),
    ("? [1]\n: 2\n", "line 1: a key must be a plain name, not a list"),
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    ('{"a": NaN}', "NaN is not a number a manifest may hold"),
    ('{"a": 1', "invalid JSON at line 1"),
    ("a: [1\n", "invalid YAML"),
    ("- 1\n", "a manifest is a mapping"),
    ("1: 2\n", "every top-level key must be a name"),
    ('{"a": ' + "9" * 5000 + "}", "a value cannot be read"),
])
def test_hostile_text_is_one_line(text, fragment):
    with pytest.raises(ManifestError) as e:
        parse_manifest(text, "m.yaml")
    msg = str(e.value)
    assert msg.startswith("m.yaml: ") and fragment in msg and "\n" not in msg


def test_size_and_encoding_limits():
    with pytest.raises(ManifestError, match=f"over the {MAX_MANIFEST_BYTES:,}-byte limit"):
        parse_manifest(b"#" * (MAX_MANIFEST_BYTES + 1))
    with pytest.raises(ManifestError, match=r"not UTF-8 text \(byte 3\)"):
        parse_manifest(b"a: \xff\n")


def test_an_unknown_field_or_a_control_character_names_the_field(uniform):
    d = json.loads(dump_manifest(uniform, "json"))
    d["statistics"] = "x\x07y"
    with pytest.raises(ManifestError, match="statistics"):
        parse_manifest(json.dumps(d))
    d = json.loads(dump_manifest(uniform, "json"))
    d["extra"] = 1
    with pytest.raises(ManifestError, match="extra"):
        parse_manifest(json.dumps(d))


def test_invisible_format_characters_are_escaped_in_yaml(uniform):
    m = uniform.model_copy(update={"notes": ["caf\u00e9 \u202egnp.exe"]})
    text = dump_manifest(m)
    assert "\u202e" not in text and "\\u202E" in text   # escaped: caf\\xE9 \\u202Egnp.exe
    assert parse_manifest(text).notes == m.notes
    plain = uniform.model_copy(update={"notes": ["caf\u00e9"]})
    assert "caf\u00e9" in dump_manifest(plain)   # no Cf: UTF-8 text kept as written


def test_load_manifest_reads_a_file_and_refuses_a_directory(tmp_path, uniform):
    p = tmp_path / "plan.yaml"
    p.write_text(dump_manifest(uniform))
    assert load_manifest(p) == uniform
    with pytest.raises(ManifestError):
        load_manifest(tmp_path)
