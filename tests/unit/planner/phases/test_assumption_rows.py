"""What every phase's Assumptions rows share (planner/phases/assumption_rows.py): a value paired with its preset
(the preset's source while it is in use, "yours" naming the preset when it differs), a declared row taken from
those placed last, and the tag of a value against its field's default."""
from planner.phases.assumption_rows import Assumption, changed_tag, paired, take


def test_a_value_equal_to_its_preset_carries_the_presets_source_and_tag():
    a = paired("decode MFU", 0.25, 0.25, "vLLM bench, 2025")
    # shown as f"{0.25:g}" = "0.25"; the preset's own tag (estimate unless given) and source, word for word
    assert a == Assumption(name="decode MFU", value="0.25", tag="estimate", source="vLLM bench, 2025")
    assert paired("x", 2.0, 2.0, "s", tag="published").tag == "published"


def test_a_value_other_than_its_preset_is_yours_and_names_the_preset():
    a = paired("decode MFU", 0.3, 0.25, "vLLM bench, 2025", tag="published", shown="30%")
    # the shown text is used as given; the preset's 0.25 (f"{0.25:g}") and its source follow
    assert a == Assumption(name="decode MFU", value="30%", tag="yours",
                           source="set in the scenario; the preset's 0.25: vLLM bench, 2025")


def test_take_moves_a_declared_row_out_of_those_placed_last():
    row = Assumption(name="compression", value="1.1x", tag="yours", source="s")
    plain = {"compression": row, "training.mfu": row}
    assert take(plain, "compression") == [row]
    assert list(plain) == ["training.mfu"]          # taken once: not placed again at the end
    assert take(plain, "compression") == []          # absent (or not in force): nothing placed


def test_changed_tag_compares_with_the_default():
    assert changed_tag(8, 8) == "estimate"
    assert changed_tag((8, 64), (8, 32)) == "yours"   # a tuple of fields: any one changed is yours
