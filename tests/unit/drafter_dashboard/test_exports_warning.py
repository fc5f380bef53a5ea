"""drafter_dashboard.exports.blocked_warning: a blocked plan's exports carry a warning (issue 35 item 11)."""
from drafter_dashboard.exports import blocked_warning
from planner.findings import finding


def test_no_warning_without_a_blocker():
    assert blocked_warning([finding("padding", "rows are padded"), finding("licence", "CC-BY-NC")]) is None


def test_the_first_blocker_its_fix_and_how_many_more():
    one = [finding("padding", "x"), finding("disk-capacity", "82.1 TB do not fit the 30.72 TB disk.")]
    text = blocked_warning(one)
    assert text.startswith("This plan cannot run as configured: 82.1 TB do not fit the 30.72 TB disk. ")
    assert "Fix: trim the mix in Budget" in text and "more blocking" not in text
    three = one + [finding("tp-raised", "TP 2 > 1 GPU"), finding("rows-over-available", "too many rows")]
    assert "(and 2 more blocking findings)" in blocked_warning(three)
    assert "(and 1 more blocking finding)" in blocked_warning(one + [finding("tp-raised", "TP 2 > 1 GPU")])
