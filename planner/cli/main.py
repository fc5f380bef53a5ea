"""python -m planner {estimate,components,profile,trim,export,materialize}: the command line.

Flag names are a contract (scripts depend on them). Bad input exits 2 with one line that names
the flag and the value; no traceback.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
import threading

from planner.cli._parser import COMMANDS, CliError, Parser
from planner.text import printable

__all__ = ["CliError", "build_parser", "main"]


def build_parser(only: str | None = None) -> Parser:
    """The parser of every command, or (`only`) of that command alone: the others are listed with their
    help (planner/cli/_parser.py COMMANDS) without importing their modules, so `planner --help` and each
    command load only what they run."""
    parser = Parser(prog="planner", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for name, c in COMMANDS.items():
        if only is None or name == only:
            getattr(importlib.import_module(f"planner.cli.{c.module}"), c.register)(sub)
        else:
            sub.add_parser(name, help=c.help)
    return parser


def _command(argv: list[str]) -> str | None:
    """The command a command line names (its first word, when it is one), else None."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def _user_error(exc: BaseException) -> bool:
    """A bad input (one line, exit 2), not a bug. The classes are looked up among the modules loaded: an
    error of a module that was never imported cannot have been raised (so --help imports none of them)."""
    kinds: list[type] = [CliError, OSError]
    for module, name in (("planner.errors", "PlannerInputError"), ("pydantic", "ValidationError"),
                         ("planner.export.manifest", "ManifestError")):
        if module in sys.modules:
            kinds.append(getattr(sys.modules[module], name))
    return isinstance(exc, tuple(kinds))


def _message(exc: BaseException) -> str:
    errors = sys.modules.get("planner.errors")
    if errors is not None and isinstance(exc, errors.PlannerInputError):
        from planner.cli._common import ALL_FLAGS, flag_for, shown  # loaded already: the model raised it
        flag = flag_for(exc.field, ALL_FLAGS) or exc.field
        return f"{flag}: {shown(exc.value)} is not allowed; {exc.allowed}"
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(exc, pydantic.ValidationError):
        return errors.describe_validation_error(exc) if errors else str(exc)
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
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        with _sigterm_raises():
            args = build_parser(_command(argv) or "").parse_args(argv)
            return args.func(args)
    except Terminated:
        print("planner: terminated; nothing was written", file=sys.stderr)
        return 143
    except BrokenPipeError:   # `planner ... | head`: the reader left; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        print("planner: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if not _user_error(exc):
            raise
        one_line = printable(_message(exc))   # one line, whatever the message quotes from the input
        print(f"planner: error: {one_line}", file=sys.stderr)
        return 2
