"""The parser class, CliError and the table of commands: all that `planner --help` loads.

The table names each command's module and its help, so the top-level parser lists every command
without importing any (issue 32 item 8: `planner --help` under 0.3 s); a command's module, and the
model it runs, load only when that command is given.
"""
from __future__ import annotations

import argparse
from typing import NamedTuple


class CliError(Exception):
    """A bad command line: main() prints `planner: error: <message>` on one line and exits 2."""


class Parser(argparse.ArgumentParser):
    """No abbreviations (a new flag must never change what an old command line means) and errors
    raised as CliError, so main() prints them on one line."""

    def __init__(self, *args, **kwargs):
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        raise CliError(message)


class Command(NamedTuple):
    module: str        # planner.cli.<module>
    register: str      # its function that adds the command's parser: register(sub)
    help: str


COMMANDS: dict[str, Command] = {
    "estimate": Command("estimate", "register", "plan storage, GPU time, transfer, training and cost"),
    "components": Command("components", "register", "the component catalog"),
    "profile": Command("profile", "register_profile",
                       "measure a local JSONL/JSON/Parquet dataset into the user catalog"),
    "trim": Command("trim", "register", "trim the mix to a budget and write a manifest"),
    "export": Command("export", "register", "pipeline commands or the manifest in another format"),
    "materialize": Command("materialize", "register", "write the manifest's exact rows as JSONL"),
    "calibrate": Command("calibrate", "register", "measure a partial run against its plan and forecast the rest"),
    "watch": Command("calibrate", "register_watch", "a progress bar of a run against its plan, refreshed"),
    "status": Command("status", "register", "each rank of a sharded capture: complete, partial or missing"),
    "preflight": Command("preflight", "register", "measure disk, GPUs and the capture on this machine before the run"),
}


def add_command(sub, name: str) -> argparse.ArgumentParser:
    """The subparser of command `name`, with its help from COMMANDS."""
    return sub.add_parser(name, help=COMMANDS[name].help)
