"""python -m planner {estimate,components,profile,trim,export,materialize}: the command line.

Flag names are a contract (scripts depend on them). Bad input exits 2 with one line that names
the flag and the value; no traceback.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

from pydantic import ValidationError

from planner.cli import calibrate, components, estimate, export, materialize, preflight, profile, status, trim
from planner.cli._common import ALL_FLAGS, CliError, Parser, flag_for, shown
from planner.errors import PlannerInputError, describe_validation_error
from planner.export.manifest import ManifestError
from planner.text import printable

__all__ = ["CliError", "build_parser", "main"]


def build_parser() -> Parser:
    parser = Parser(prog="planner", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    estimate.register(sub)
    components.register(sub)
    profile.register_profile(sub)
    trim.register(sub)
    export.register(sub)
    materialize.register(sub)
    calibrate.register(sub)
    calibrate.register_watch(sub)
    status.register(sub)
    preflight.register(sub)
    return parser


def _message(exc: BaseException) -> str:
    if isinstance(exc, PlannerInputError):
        flag = flag_for(exc.field, ALL_FLAGS) or exc.field
        return f"{flag}: {shown(exc.value)} is not allowed; {exc.allowed}"
    if isinstance(exc, ValidationError):
        return describe_validation_error(exc)
    if isinstance(exc, OSError):
        return f"{getattr(exc, 'filename', '') or 'a file (unnamed by the system)'}: {exc.strerror or exc}"
    return str(exc)


class Terminated(BaseException):
    """SIGTERM (scancel, timeout, systemd) raised as an exception, so every temp file is removed on
    the way out as on any error (safe_io.atomic_writer, sharding.ShardWriter)."""


def _terminate(signum, frame):
    raise Terminated()


@contextlib.contextmanager
def _sigterm_raises():
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def main(argv: list[str] | None = None) -> int:
    try:
        with _sigterm_raises():
            args = build_parser().parse_args(argv)
            return args.func(args)
    except Terminated:
        print("planner: terminated; nothing was written", file=sys.stderr)
        return 143
    except BrokenPipeError:   # `planner ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (CliError, PlannerInputError, ValidationError, ManifestError, OSError) as exc:
        one_line = printable(_message(exc))   # one line, whatever the message quotes from the input
        print(f"planner: error: {one_line}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("planner: interrupted", file=sys.stderr)
        return 130
