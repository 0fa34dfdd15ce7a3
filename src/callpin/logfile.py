"""The .cpin file format: header, event frames, trailer, integrity, atomic write, streaming read.

Layout (docs/FORMAT.md has the byte-level description):

    b"CPIN" major minor | header map | event frame ... | 0xd8 0x7f count:u64 fingerprint:u64

The fingerprint is xxh3-64 of the body (every byte between the header and the trailer),
so it depends only on the interactions, never on the header's producer or paths.
"""

from __future__ import annotations

import errno
import io
import os
import struct
from collections import deque
from collections.abc import Iterator, Sequence
from typing import IO, Any, overload

import msgpack
import xxhash

from . import codec
from .atomic import ReplacingFile
from .errors import CorruptLog, LimitExceeded, LogFormatError, NotALog, TruncatedLog, UnsupportedVersion
from .event import Event, decode_event
from .normalize import DEFAULT_RULES, NO_RULES, RuleSet

MAGIC = b"CPIN"
VERSION = (1, 4)
PRODUCER = "callpin"
TRAILER_CODE = 0x7F
_TRAILER = struct.Struct(">BBQQ")
TRAILER_SIZE = _TRAILER.size
MAX_HEADER = 1024 * 1024
MAX_PIPED = 1024 * 1024 * 1024
_CHUNK = 1 << 20


def encode_header(rules: RuleSet, meta: dict[str, Any] | None) -> bytes:
    header = {"producer": PRODUCER, "rules": rules.describe(), "meta": dict(meta or {})}
    return MAGIC + bytes(VERSION) + codec.Encoder(NO_RULES).encode(header)


def _trailer(count: int, fingerprint: int) -> bytes:
    return _TRAILER.pack(0xD8, TRAILER_CODE, count, fingerprint)


def _fingerprint_text(value: int) -> str:
    return f"{value:016x}"


# ---------------------------------------------------------------------------
# Writing.


class LogWriter:
    """Write a log through a temporary file in the target's folder, then `os.replace`.

    A crash or kill at any point leaves the previous file at `path` untouched; the
    temporary files of dead writers are removed by the next writer of the same path.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        rules: RuleSet = DEFAULT_RULES,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self._out: ReplacingFile | None = ReplacingFile(self.path)
        self._out.write(encode_header(rules, meta))
        self._hasher = xxhash.xxh3_64()
        self.count = 0
        self.fingerprint: str | None = None

    def write(self, frame: bytes) -> None:
        """Append one encoded event frame."""
        assert self._out is not None, "LogWriter is closed"
        self._out.write(frame)
        self._hasher.update(frame)
        self.count += 1

    def close(self) -> str:
        """Write the trailer, make the file durable and move it into place; the fingerprint."""
        if self._out is None:
            assert self.fingerprint is not None
            return self.fingerprint
        out, self._out = self._out, None
        digest = self._hasher.intdigest()
        out.commit(_trailer(self.count, digest))
        self.fingerprint = _fingerprint_text(digest)
        return self.fingerprint

    def abort(self) -> None:
        """Drop the temporary file; the file at `path` stays as it was."""
        if self._out is not None:
            out, self._out = self._out, None
            out.abort()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self.close()
        else:
            self.abort()


def write_log(
    path: str | os.PathLike[str],
    frames: Sequence[bytes] | Iterator[bytes],
    *,
    rules: RuleSet = DEFAULT_RULES,
    meta: dict[str, Any] | None = None,
) -> str:
    """Write already-encoded frames as a log at `path`, atomically; the fingerprint."""
    with LogWriter(path, rules=rules, meta=meta) as writer:
        for frame in frames:
            writer.write(frame)
    assert writer.fingerprint is not None
    return writer.fingerprint


def log_bytes(frames: Sequence[bytes], *, rules: RuleSet = DEFAULT_RULES, meta: dict[str, Any] | None = None) -> bytes:
    """The bytes of a whole log held in memory (the same bytes LogWriter writes)."""
    body = b"".join(frames)
    return encode_header(rules, meta) + body + _trailer(len(frames), xxhash.xxh3_64_intdigest(body))


# ---------------------------------------------------------------------------
# Reading.


class LogReader:
    """Stream a log from disk: header first, then frames, integrity checked at the end.

    Iterating yields decoded `Event`s; `frames()` yields the raw frame bytes without
    decoding them. Either raises a `LogFormatError` subclass naming the file and how
    many events were intact when the file is truncated, corrupt or over a limit.
    """

    def __init__(self, path: str | os.PathLike[str], *, data: bytes | None = None) -> None:
        self.path = os.fspath(path)
        if data is not None:
            # A log held in memory (e.g. a baseline read from git); `path` only names it.
            self._file = io.BytesIO(data)
        else:
            self._file = self._open()
        try:
            self._read_header()
        except BaseException:
            self._file.close()
            raise
        self.count: int | None = None
        self.fingerprint: str | None = None

    _file: IO[bytes]

    def _open(self) -> IO[bytes]:
        try:
            file = open(self.path, "rb")
        except IsADirectoryError:
            raise LogFormatError(self.path, "is a directory, not a callpin log") from None
        except FileNotFoundError:
            raise LogFormatError(self.path, "no such file") from None
        except PermissionError:
            raise LogFormatError(self.path, "permission denied") from None
        except OSError as exc:
            raise LogFormatError(self.path, f"cannot open: {os.strerror(exc.errno or errno.EIO)}") from None
        if file.seekable():
            return file
        # A pipe (`callpin diff <(git show HEAD~1:baselines/renew.cpin) baselines/renew.cpin`)
        # cannot be read twice or from its end: hold it in memory, up to a bound.
        with file:
            return io.BytesIO(read_piped(file, self.path))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> LogReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _read_header(self) -> None:
        self._size = self._file.seek(0, io.SEEK_END)
        self._file.seek(0)
        head = self._file.read(6)
        if len(head) < 4 or head[:4] != MAGIC:
            what = "empty file" if not head else "no callpin magic bytes"
            raise NotALog(self.path, f"not a callpin log ({what})")
        if len(head) < 6:
            raise TruncatedLog(self.path, "truncated inside the header (0 events intact)", intact=0)
        version = (head[4], head[5])
        if version[0] != VERSION[0]:
            raise UnsupportedVersion(self.path, version)
        self.version = version
        unpacker = msgpack.Unpacker(
            raw=False,
            strict_map_key=False,
            max_buffer_size=MAX_HEADER,
            ext_hook=codec.Decoder(self.path)._ext,
            object_pairs_hook=codec._pairs_or_dict,
        )
        unpacker.feed(self._file.read(MAX_HEADER))
        try:
            header = unpacker.unpack()
        except msgpack.OutOfData:
            raise TruncatedLog(self.path, "truncated inside the header (0 events intact)", intact=0) from None
        except Exception as exc:
            raise CorruptLog(self.path, f"malformed header ({type(exc).__name__})", intact=0) from None
        if not (isinstance(header, dict) and header.get("producer") == PRODUCER):
            raise CorruptLog(self.path, "malformed header (not a callpin header map)", intact=0)
        try:
            self.rules = RuleSet.from_description(header.get("rules", []))
        except ValueError as exc:
            raise CorruptLog(self.path, f"malformed header ({exc})", intact=0) from None
        meta = header.get("meta", {})
        if not isinstance(meta, dict):
            raise CorruptLog(self.path, "malformed header (meta is not a map)", intact=0)
        self.header = header
        self.meta: dict[str, Any] = meta
        self._body_start = 6 + unpacker.tell()

    def _trailer_fields(self) -> tuple[int, int] | None:
        if self._size - TRAILER_SIZE < self._body_start:
            return None
        self._file.seek(self._size - TRAILER_SIZE)
        tail = self._file.read(TRAILER_SIZE)
        head, code, count, digest = _TRAILER.unpack(tail)
        if head != 0xD8 or code != TRAILER_CODE:
            return None
        return count, digest

    def frames(self) -> Iterator[bytes]:
        """Every event frame's raw bytes in order; verifies count and fingerprint at the end."""
        trailer = self._trailer_fields()
        body_end = self._size - TRAILER_SIZE if trailer is not None else self._size
        self._file.seek(self._body_start)
        hasher = xxhash.xxh3_64()
        unpacker = msgpack.Unpacker(
            max_buffer_size=codec.MAX_FRAME + _CHUNK,
            **codec.UNPACK_LIMITS,
        )
        window = bytearray()
        window_start = self._body_start
        position = self._body_start
        remaining = body_end - self._body_start
        count = 0
        while True:
            try:
                unpacker.skip()
            except msgpack.OutOfData:
                if remaining <= 0:
                    break
                chunk = self._file.read(min(_CHUNK, remaining))
                if not chunk:
                    break
                remaining -= len(chunk)
                hasher.update(chunk)
                unpacker.feed(chunk)
                del window[: position - window_start]
                window_start = position
                window += chunk
                continue
            except msgpack.StackError:
                raise LimitExceeded(
                    self.path,
                    f"event {count} nested deeper than the decoder's stack ({codec.MSGPACK_STACK_DEPTH})",
                    limit=codec.MSGPACK_STACK_DEPTH,
                    intact=count,
                ) from None
            except ValueError as exc:
                raise _frame_error(self.path, count, exc) from None
            except Exception as exc:
                raise CorruptLog(
                    self.path,
                    f"corrupt at event {count} ({type(exc).__name__}); {count} events intact",
                    intact=count,
                ) from None
            end = self._body_start + unpacker.tell()
            frame = bytes(window[position - window_start : end - window_start])
            position = end
            if frame[0] != codec.FRAME_HEAD:
                raise CorruptLog(
                    self.path,
                    f"corrupt at event {count} (not an event frame); {count} events intact",
                    intact=count,
                )
            count += 1
            yield frame
        if trailer is None:
            raise TruncatedLog(self.path, f"truncated: no trailer after {count} intact events", intact=count)
        if position != body_end:
            raise CorruptLog(
                self.path,
                f"corrupt: event {count} runs past the trailer; {count} events intact",
                intact=count,
            )
        expected_count, expected_digest = trailer
        if expected_count != count:
            raise CorruptLog(
                self.path,
                f"corrupt: trailer says {expected_count} events, body has {count}",
                intact=count,
            )
        if hasher.intdigest() != expected_digest:
            raise CorruptLog(
                self.path,
                f"corrupt: fingerprint mismatch (trailer {_fingerprint_text(expected_digest)}, "
                f"body {_fingerprint_text(hasher.intdigest())}) over {count} events",
                intact=count,
            )
        self.count = count
        self.fingerprint = _fingerprint_text(expected_digest)

    def __iter__(self) -> Iterator[Event]:
        decoder = codec.Decoder(self.path)
        for index, frame in enumerate(self.frames()):
            yield decode_event(frame, index, decoder)


def read_piped(file: IO[bytes], path: str) -> bytes:
    """The whole of a log that can be read only once (a pipe, standard input), within MAX_PIPED."""
    data = file.read(MAX_PIPED + 1)
    if len(data) > MAX_PIPED:
        raise LimitExceeded(
            path, f"a log read from a pipe is held in memory: over {MAX_PIPED >> 20} MiB", limit=MAX_PIPED
        )
    return data


def _frame_error(path: str, count: int, exc: ValueError) -> LogFormatError:
    text = str(exc)
    limit = codec.limit_hit(exc)
    if limit is not None:
        return LimitExceeded(
            path,
            f"event {count} exceeds a decoding limit ({text}); {count} events intact",
            limit=limit,
            intact=count,
        )
    return CorruptLog(
        path, f"corrupt at event {count} ({text or type(exc).__name__}); {count} events intact", intact=count
    )


class Log(Sequence[Event]):
    """A whole log read into memory as frames; events are decoded when first asked for."""

    def __init__(
        self,
        frames: list[bytes],
        *,
        rules: RuleSet,
        meta: dict[str, Any],
        fingerprint: str,
        path: str | None = None,
    ) -> None:
        self.frames = frames
        self.rules = rules
        self.meta = meta
        self.fingerprint = fingerprint
        self.path = path
        self._decoder = codec.Decoder(path)
        self._events: list[Event | None] = [None] * len(frames)

    @overload
    def __getitem__(self, index: int) -> Event: ...

    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...

    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self.frames)))]
        if index < 0:
            index += len(self.frames)
        if not 0 <= index < len(self.frames):
            raise IndexError(index)
        event = self._events[index]
        if event is None:
            event = decode_event(self.frames[index], index, self._decoder)
            self._events[index] = event
        return event

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        where = f" {self.path}" if self.path else ""
        return f"<Log{where}: {len(self.frames)} events, fingerprint {self.fingerprint}>"

    @classmethod
    def from_frames(
        cls, frames: list[bytes], *, rules: RuleSet, meta: dict[str, Any] | None = None, path: str | None = None
    ) -> Log:
        # The body is digested frame by frame (xxh3's streaming form gives the digest of
        # the joined bytes) rather than copied whole first: for a million frames that
        # takes a quarter of the time.
        hasher = xxhash.xxh3_64()
        deque(map(hasher.update, frames), maxlen=0)
        digest = hasher.intdigest()
        return cls(frames, rules=rules, meta=dict(meta or {}), fingerprint=_fingerprint_text(digest), path=path)

    def verify(self) -> None:
        """Decode every event; CorruptLog on the first malformed one."""
        for index in range(len(self.frames)):
            self[index]


def load(path: str | os.PathLike[str], *, data: bytes | None = None) -> Log:
    """Read a whole log, checking its integrity; events decode lazily.

    With `data`, the log is read from those bytes and `path` only names it in errors.
    """
    with LogReader(path, data=data) as reader:
        frames = list(reader.frames())
        assert reader.fingerprint is not None
        return Log(frames, rules=reader.rules, meta=reader.meta, fingerprint=reader.fingerprint, path=reader.path)
