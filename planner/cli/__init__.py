"""The command line: `planner` / `python -m planner`. One module per command, each with
register(sub) and run(args); shared parts in _common.py; main.py builds the parser."""
from planner.cli.main import main

__all__ = ["main"]
