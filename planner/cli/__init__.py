"""The command line: `planner` / `python -m planner`. One module per command."""
from planner.cli.main import main

__all__ = ["main"]
