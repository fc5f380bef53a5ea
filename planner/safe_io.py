"""Every file the planner reads whole or writes goes through here.

Reading: `open_regular` opens with O_NONBLOCK (a FIFO cannot hang the open), fstat()s the open
descriptor and refuses anything but a regular file (devices, FIFOs, sockets, directories);
`read_capped` then reads at most limit + 1 bytes, so /dev/zero or a growing file cannot eat memory
whatever st_size says.

Writing: `atomic_write` writes a temp file beside the target, fsyncs it and os.replace()s it in,
with the usual file mode (0666 & ~umask, not mkstemp's 0600). It refuses a target that exists and
is not a regular file (a device, a FIFO, a directory, a symlink) and a target that is one of the
command's own inputs; the temp file is removed on every failure.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Iterable

from planner.errors import PlannerInputError

_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# Caps for whole-file inputs, per kind (bytes).
LIMITS = {
    "manifest": 1_000_000,
    "user catalog": 64_000_000,
    "tokenizer": 64_000_000,
    "quality points file": 1_000_000,
}


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | os.PathLike, field: str, nofollow: bool = False) -> int:
    """An O_RDONLY descriptor for `path`, which must be a regular file (checked on the open fd).
    nofollow: a symlink as the last component is refused (O_NOFOLLOW), not followed."""
    text = os.fspath(path)
    if not text:
        raise PlannerInputError(field, text, "give a file path")
    try:
        fd = os.open(text, os.O_RDONLY | _O_NONBLOCK | _O_BINARY | (_O_NOFOLLOW if nofollow else 0))
    except FileNotFoundError:
        raise PlannerInputError(field, text, "it cannot be read: no such file") from None
    except IsADirectoryError:
        raise PlannerInputError(field, text, "it is a directory; give a regular file") from None
    except OSError as exc:
        if nofollow and exc.errno == errno.ELOOP:
            raise PlannerInputError(field, text, "it is a symbolic link (not followed)") from exc
        raise PlannerInputError(field, text, f"it cannot be read: {exc.strerror or exc}") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PlannerInputError(field, text, f"it is {_kind(st.st_mode)}; only regular files are read")
        if _O_NONBLOCK:
            try:
                import fcntl
                flags = fcntl.fcntl(fd, fcntl.F_GETFL)
                fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~_O_NONBLOCK)
            except (ImportError, OSError):  # pragma: no cover - non-POSIX
                pass
    except BaseException:
        os.close(fd)
        raise
    return fd


def check_regular(path: str | os.PathLike, field: str) -> None:
    """Refuse a path that is not a regular file (for streamed inputs that are opened elsewhere)."""
    os.close(open_regular(path, field))


@contextlib.contextmanager
def open_binary(path: str | os.PathLike, field: str, nofollow: bool = False):
    """A binary file object on a checked regular file (nofollow: as open_regular)."""
    fd = open_regular(path, field, nofollow)
    with os.fdopen(fd, "rb") as fh:
        yield fh


def read_capped(path: str | os.PathLike, field: str, kind: str, limit: int | None = None) -> bytes:
    """The whole file, refused when it holds more than the cap for `kind` (reads at most cap + 1 bytes)."""
    cap = LIMITS[kind] if limit is None else limit
    with open_binary(path, field) as fh:
        data = fh.read(cap + 1)
    if len(data) > cap:
        raise PlannerInputError(field, os.fspath(path), f"it is over the {cap:,}-byte limit for a {kind}")
    return data


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def check_output(path: str | os.PathLike, field: str, inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """The output path, refused when it is empty, a directory, an existing non-regular file or
    symlink, or one of the command's inputs."""
    text = os.fspath(path)
    if not text or not text.strip():
        raise PlannerInputError(field, text, "give an output file path")
    target = Path(text)
    if text.endswith(("/", os.sep)):
        raise PlannerInputError(field, text, "it is a directory; give a file path")
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise PlannerInputError(field, text, f"it cannot be checked: {exc.strerror or exc}") from exc
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise PlannerInputError(field, text, f"it is {_kind(st.st_mode)}; the planner only replaces regular files")
    parent = target.parent if str(target.parent) else Path(".")
    if not parent.is_dir():
        raise PlannerInputError(field, text, f"its folder {str(parent)!r} does not exist")
    if st is not None:
        for inp in inputs:
            try:
                if _same_file(st, os.stat(inp)):
                    raise PlannerInputError(field, text, f"it is also an input of this command ({os.fspath(inp)})")
            except OSError:
                continue
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike, data: str | bytes, *, field: str,
                 inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """Write `data` to `path` whole or not at all (temp file, fsync, os.replace)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_writer(path, field=field, inputs=inputs, mode="wb") as fh:
        fh.write(raw)
    return Path(os.fspath(path))


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, *, field: str, inputs: Iterable[str | os.PathLike] = (),
                  mode: str = "w"):
    """A file object whose content replaces `path` only when the block ends without an error."""
    target = check_output(path, field, inputs)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with (os.fdopen(fd, "wb") if mode == "wb" else os.fdopen(fd, "w", encoding="utf-8")) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not exc.filename:   # a full disk, an I/O error: name the file
            raise PlannerInputError(field, os.fspath(path), f"it cannot be written: {exc.strerror or exc}") from exc
        raise
