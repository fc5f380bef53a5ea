"""Making third-party text safe where it is shown: a terminal, a log, markdown and HTML."""
from __future__ import annotations

import math
import re

from planner.ids import _UNSHOWN

# Characters markdown (CommonMark + Streamlit's extensions) gives a meaning to.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~:$=^])")


def _escaped(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def printable(text: object) -> str:
    """Third-party text (a name, a path, a reason quoting a file) for a terminal, a log or a page, on one
    line: every control, format (bidi), separator or surrogate character (ids.UNSHOWN_PATTERN) shown as
    \\xNN, \\uNNNN or \\UNNNNNNNN, never sent; a newline too, so a value never prints a line of its own
    and never reorders the text around it. The one escaping function: md_escape and html_escape use it."""
    return _UNSHOWN.sub(_escaped, str(text))


def printable_lines(text: object) -> str:
    """A text the planner laid out in lines (a report): printable() of each line, its newlines kept."""
    return "\n".join(printable(line) for line in str(text).split("\n"))


def html_escape(text: object) -> str:
    """Third-party text for HTML (a report's cell, a chart's label): printable(), then HTML-escaped."""
    import html
    return html.escape(printable(text), quote=True)


_ZWSP = "\u200b"
# GitHub-flavoured markdown turns a bare https://..., www. or a@b.c into a link even when its
# characters are backslash-escaped (seen in chromium with Streamlit 1.67): a zero-width space after
# ':', '@' and 'www' stops that.
_AUTOLINK = re.compile(r"(\\:|@|(?i:www)(?=\\\.))")


def md_escape(text: object) -> str:
    """Text for markdown: every character with a markdown meaning is backslash-escaped, and no
    autolink can form, so a name like `[login](https://...)` or `![x](https://...)` shows as typed
    and never as a link or an image."""
    escaped = _MD_SPECIAL.sub(r"\\\1", printable(str(text).replace("\n", " ")))
    return _AUTOLINK.sub(lambda m: m.group() + _ZWSP, escaped)


def shown(value: object) -> str:
    """A value for an error message: repr, shortened; huge integers are never turned into text."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 100:
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1:,} digits"
    text = repr(value)
    if len(text) > 160:
        return f"{text[:120]}... ({len(str(value)):,} characters)"
    return text


def count(number: int, noun: str, plural: str | None = None) -> str:
    """'1 rank', '2 ranks', '1,000 rows': a number with its noun in the number's grammar."""
    return f"{number:,} {noun if number == 1 else (plural or noun + 's')}"


def dealt_note(total: int, world: int, noun: str = "row") -> str:
    """How the planner deals `total` rows to `world` shards in turn (sharding.rank_of), in words:
    'one shard of 10 rows'; 'dealt in turn (row p of the materialized order to shard p mod 4), 2 or 3
    rows each (shards 0 to 1 one row more), about 1/4 of every component and so of the bytes'."""
    div, mod = divmod(total, world)
    if world == 1:
        return f"one shard of {count(total, noun)}"
    if mod == 0:
        each = f"{count(div, noun)} each"
    else:
        first = "shard 0" if mod == 1 else f"shards 0 to {mod - 1:,}"
        each = f"{div:,} or {count(div + 1, noun)} each ({first} one {noun} more)"
    return (f"dealt in turn ({noun} p of the materialized order to shard p mod {world:,}), {each}, "
            f"about 1/{world:,} of every component and so of the bytes")
