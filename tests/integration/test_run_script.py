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


def _bootstrap(monkeypatch, tmp_path):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location("bootstrap_script", ROOT / "scripts" / "_bootstrap.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    monkeypatch.setattr(mod, "VENV", tmp_path / ".venv")
    return mod


def test_run_installs_the_runtime_only_and_a_test_install_serves_it(monkeypatch, tmp_path, capsys):
    # issue 35 item 13: scripts/run.py's first run installs what the dashboard needs, not the test extra
    b = _bootstrap(monkeypatch, tmp_path)
    steps = b.install_steps(tmp_path / "py", b.RUNTIME)
    cmd = steps[0][1]
    # issue 32 item 8: with the tokenizers (the profile extra), constrained to the lock of the tested set
    assert cmd[-2:] == ["-e", f"{ROOT}[profile]"] and "--no-compile" in cmd and not any("[test]" in a for a in cmd)
    assert cmd[cmd.index("-c") + 1] == str(ROOT / "requirements.lock")
    assert b.install_steps(tmp_path / "py", "test")[0][1][-1] == f"{ROOT}[test]"
    assert "-c" in b.install_steps(tmp_path / "py", "test")[0][1]
    # a venv that scripts/test.py set up (its stamp) serves run.py without another install: nothing runs
    calls = []
    monkeypatch.setattr(b.subprocess, "call", lambda c: calls.append(c) or 0)
    py = b.venv_python()
    py.parent.mkdir(parents=True)
    py.touch()
    digest = b.digest()
    (b.VENV / f".installed-test-{digest}").touch()
    assert b.ensure_env() == py and calls == []
    # without it, one [setup i/n] line per step, then the runtime stamp
    (b.VENV / f".installed-test-{digest}").unlink()
    assert b.ensure_env() == py and len(calls) == 1
    assert "[setup 1/1] installing the dashboard's runtime dependencies" in capsys.readouterr().out
    assert (b.VENV / f".installed-runtime-{digest}").exists()
