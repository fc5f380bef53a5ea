"""planner/text.py: the one escaping of third-party text for a terminal, a log, markdown and HTML, and
the characters it escapes (planner/ids.py UNSHOWN_PATTERN), which quote() writes
as bytes (issue 36, item 6)."""
import sys
import unicodedata

import pytest

from planner.export.commands import quote
from planner.ids import _UNSHOWN, has_unshown
from planner.text import html_escape, md_escape, printable, printable_lines

UNSAFE = ("Cc", "Cf", "Cs", "Zl", "Zp")


def test_the_pattern_is_every_control_format_separator_and_surrogate_character():
    matched = {c for c in range(sys.maxunicode + 1) if _UNSHOWN.fullmatch(chr(c))}
    wanted = {c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in UNSAFE}
    assert sorted(wanted - matched) == []
    # beyond this Python's Unicode: only characters it does not know yet (U+13439-1343F: Cf in 15.0)
    assert [hex(c) for c in sorted(matched - wanted) if unicodedata.category(chr(c)) != "Cn"] == []


@pytest.mark.parametrize("raw, shown", [
    ("a\nb", "a\\x0ab"), ("tab\there", "tab\\x09here"), ("\r\x1b[31m", "\\x0d\\x1b[31m"), ("\x85", "\\x85"),
    ("abc\u202edcba", "abc\\u202edcba"),                  # right-to-left override
    ("\u2066x\u2069", "\\u2066x\\u2069"),                  # left-to-right isolate .. pop isolate
    ("\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"),        # the marks
    ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),               # line and paragraph separators
    ("\u200b\u200d\ufeff\u00ad", "\\u200b\\u200d\\ufeff\\xad"),
    ("\U000e0041", "\\U000e0041"),                          # a tag character, past the BMP
    ("\ud800", "\\ud800"),
    ("naïve 数据 é", "naïve 数据 é"),                        # letters are letters
])
def test_printable_escapes_each_such_character_and_nothing_else(raw, shown):
    assert printable(raw) == shown
    assert has_unshown(raw) == (raw != shown)


def test_lines_of_the_planners_own_keep_their_newlines_only():
    assert printable_lines("one\u202e\ntwo\tthree") == "one\\u202e\ntwo\\x09three"


def test_markdown_and_html_show_the_escapes():
    assert md_escape("x\u202ey") == "x\\\\u202ey"           # the backslash itself escaped for markdown
    assert html_escape("<b>\u202e</b>\n") == "&lt;b&gt;\\u202e&lt;/b&gt;\\x0a"


def test_a_shell_word_holds_the_bytes_of_a_bidi_control():
    assert quote("a\u202eb") == "$'a\\xe2\\x80\\xaeb'"
