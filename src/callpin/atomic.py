"""Replace a file whole or not at all: a durable temporary file beside it, then a rename."""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from typing import IO

import xxhash

TEMP_SUFFIX = ".callpin-tmp"


def replace_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Replace the file at `path` with `data` as a log is replaced: whole, or not at all."""
    ReplacingFile(os.fspath(path)).commit(data)


@contextlib.contextmanager
def private_copy(path: str | os.PathLike[str], data: bytes) -> Iterator[str]:
    """`data` written durably to a temporary name beside `path`, removed on exit.

    For writers that publish with `os.link` (which fails rather than replaces) instead
    of `os.replace`. The name follows the writers' pattern for `path`, so if this
    process dies first, the next writer of `path` removes it.
    """
    out = ReplacingFile(os.fspath(path))
    try:
        out.seal(data)
        yield out.temp
    finally:
        out.abort()


# A temporary name adds at most 31 bytes to its target's; a target name longer than
# this is clipped in the temporary name (with a hash, so that clipped names differ).
_TEMP_BASE_MAX = 200


def _temp_base(base: str) -> str:
    if len(base.encode("utf-8", "surrogateescape")) <= _TEMP_BASE_MAX:
        return base
    digest = xxhash.xxh3_64_hexdigest(base.encode("utf-8", "surrogateescape"))[:12]
    clipped = base.encode("utf-8", "surrogateescape")[: _TEMP_BASE_MAX - 13]
    return clipped.decode("utf-8", "ignore") + "~" + digest


class ReplacingFile:
    """A temporary file in the target's folder that `commit` moves over the target.

    Its name, `.<name>.<pid>-<random>.callpin-tmp`, says which process writes it, so
    that the next writer of the same target removes it once that process is gone (a
    SIGKILL runs no clean-up). Its owner calls `abort` or `commit`, which removes it
    on any failure.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(self._folder, exist_ok=True)
        base = _temp_base(os.path.basename(path))
        _remove_dead_temps(self._folder, base)
        self.temp = os.path.join(self._folder, f".{base}.{os.getpid()}-{secrets.token_hex(4)}{TEMP_SUFFIX}")
        fd = os.open(self.temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        self._file: IO[bytes] = os.fdopen(fd, "wb")

    def write(self, data: bytes) -> None:
        self._file.write(data)

    def seal(self, last: bytes = b"") -> None:
        """Write `last` and make the temporary file's content durable; closes it."""
        try:
            self._file.write(last)
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
        except BaseException:
            self.abort()
            raise

    def commit(self, last: bytes = b"") -> None:
        """Write `last`, make the content durable and move it over the target, atomically."""
        self.seal(last)
        try:
            os.replace(self.temp, self.path)
        except BaseException:
            self.abort()
            raise
        _fsync_folder(self._folder)

    def abort(self) -> None:
        """Close and remove the temporary file; the target stays as it was."""
        self._file.close()
        _unlink_quietly(self.temp)


def _remove_dead_temps(folder: str, base: str) -> None:
    prefix = f".{base}."
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not (name.startswith(prefix) and name.endswith(TEMP_SUFFIX)):
            continue
        owner = name[len(prefix) : -len(TEMP_SUFFIX)].split("-", 1)[0]
        if owner.isdigit() and not process_alive(int(owner)):
            _unlink_quietly(os.path.join(folder, name))


def process_alive(pid: int) -> bool:
    """Whether process `pid` exists (the writer of a temporary file, a scratch folder's owner)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _fsync_folder(folder: str) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
