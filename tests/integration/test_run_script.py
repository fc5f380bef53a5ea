"""scripts/run.py: `--port N` reaches streamlit as --server.port N (issue 20)."""
import importlib.util
import sys

import pytest

from tests.helpers import ROOT


def _run_module():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("run_script", ROOT / "scripts" / "run.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_port_flag_becomes_server_port():
    run = _run_module()
    assert run.streamlit_args(["--port", "8502"]) == ["--server.port", "8502"]
    assert run.streamlit_args(["--port=9000", "--server.address", "0.0.0.0"]) == \
        ["--server.port", "9000", "--server.address", "0.0.0.0"]
    assert run.streamlit_args([]) == []


@pytest.mark.parametrize("argv", [["--port"], ["--port", "abc"], ["--port=0"], ["--port", "70000"]])
def test_bad_port_is_one_line(argv):
    run = _run_module()
    with pytest.raises(SystemExit) as exc:
        run.streamlit_args(argv)
    assert "--port" in str(exc.value) and "\n" not in str(exc.value)
