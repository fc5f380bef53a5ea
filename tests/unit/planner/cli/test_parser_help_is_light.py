"""`planner --help` loads the command table, not the commands (issue 32 item 8: under 0.3 s), and a
command loads its own module and not the others'."""
from __future__ import annotations

import subprocess
import sys

import pytest

from planner.cli._parser import COMMANDS
from tests.helpers import ROOT


def _loaded(argv: list[str]) -> tuple[str, set[str]]:
    code = ("import sys\nfrom planner.cli.main import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print('LOADED', ' '.join(sorted(sys.modules)))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    *out, last = r.stdout.splitlines()
    return "\n".join(out), set(last.split()[1:])


def test_help_lists_every_command_and_loads_none_of_them():
    out, loaded = _loaded(["--help"])
    for name, c in COMMANDS.items():
        assert name in out and c.help[:30] in " ".join(out.split()), name
    planner = {m for m in loaded if m.startswith("planner")}
    assert planner == {"planner", "planner._moved", "planner._version", "planner.cli", "planner.cli._parser",
                       "planner.cli.main", "planner.text", "planner.ids"}, planner
    assert not {m.split(".")[0] for m in loaded} & {"pydantic", "yaml", "duckdb", "numpy", "pandas", "jinja2"}


@pytest.mark.parametrize("command", ["estimate", "status"])
def test_a_command_loads_its_module_alone(command):
    out, loaded = _loaded([command, "--help"])
    assert out.startswith(f"usage: planner {command}")
    modules = {f"planner.cli.{c.module}" for c in COMMANDS.values()}
    assert modules & loaded == {f"planner.cli.{COMMANDS[command].module}"}


def test_the_full_parser_still_has_every_command():
    from planner.cli.main import build_parser
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    assert list(sub.choices) == list(COMMANDS)
    # each command's own flags are there (estimate's scenario flags, status's --verify)
    assert "--costs-training-usd-per-gpu-hour" in sub.choices["estimate"]._option_string_actions
    assert "--verify" in sub.choices["status"]._option_string_actions
