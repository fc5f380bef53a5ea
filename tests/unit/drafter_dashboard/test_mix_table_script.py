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
