"""The mix table's script (drafter_dashboard/mix_table.js) runs in the page with the page's privileges
(Streamlit does not sandbox a v2 component): every text it shows comes from the catalog, a profiled
component or a link, so it is put in as text, never parsed as HTML, and the script loads nothing."""
import re
from pathlib import Path

import drafter_dashboard

SCRIPT = (Path(drafter_dashboard.__file__).parent / "mix_table.js").read_text("utf-8")
CODE = re.sub(r"//[^\n]*", "", SCRIPT)     # the comments may name what the code must not do


def test_no_text_is_parsed_as_html_and_nothing_is_loaded():
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function(",
                 "setAttribute(\"on", "fetch(", "XMLHttpRequest", "import(", "src", "href", "location"):
        assert sink not in CODE, sink
    assert "textContent" in CODE


def test_the_script_sends_only_the_edit_event():
    # one trigger, "edit", which drafter_dashboard.mix_editor registers (on_edit_change); no state value
    assert re.findall(r"setTriggerValue\(\"(\w+)\"", CODE) == ["edit"]
    assert "setStateValue" not in CODE


def test_every_editable_column_has_an_input_and_only_those():
    from drafter_dashboard.mix_editor import EDITABLE
    keys = set(re.findall(r'c\.key === "(\w+)"', CODE))
    assert set(EDITABLE) <= keys <= set(EDITABLE)


def test_a_number_is_read_by_the_servers_pattern():
    # plain() sends a number without its commas when it matches mix_editor.NUMBER_PATTERN, given in the
    # table's data: no second grammar of numbers in the script (issue 36)
    from drafter_dashboard.mix_editor import NUMBER_PATTERN
    assert "new RegExp(\"^(?:\" + t.d.number + \")$\")" in CODE and "\\d" not in CODE
    assert NUMBER_PATTERN and "[0-9]" in NUMBER_PATTERN
