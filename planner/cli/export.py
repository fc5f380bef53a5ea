"""CLI: export (pipeline commands for a manifest, or the manifest in another format)."""
from __future__ import annotations

import argparse

from planner.cli._common import read_manifest
from planner.export.commands import EXPORT_FORMATS


def run(a: argparse.Namespace) -> int:
    m = read_manifest(a.manifest, "manifest")
    print(EXPORT_FORMATS[a.format].render(m, a.manifest), end="")
    return 0


def register(sub) -> None:
    e = sub.add_parser("export", help="pipeline commands or the manifest in another format")
    e.add_argument("manifest")
    e.add_argument("--format", required=True, choices=list(EXPORT_FORMATS))
    e.set_defaults(func=run)
