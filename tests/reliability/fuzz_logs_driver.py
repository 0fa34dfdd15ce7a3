"""Feed mutated and generated logs to the reader and the CLI in a child; print a JSON summary.

    python tests/reliability/fuzz_logs_driver.py SEED WORKER WORKERS START STOP WORKDIR

Input `i` (for `i` in `range(START, STOP)` with `i % WORKERS == WORKER`) is built from
`random.Random(f"{SEED}:{i}")` alone, so any one input can be rebuilt from the seed and
its number (`--show SEED I WORKDIR` prints it as hex). Each input goes through `callpin.load` and
`Log.verify`, a streaming `LogReader`, and in-process `callpin show`, `callpin diff`
(against a valid log, both ways) and `callpin verify`. This runs in its own process so
that a segfault, a MemoryError or a runaway allocation (the address space is capped)
is counted as a crash of one input rather than taking pytest down with it; the parent
(`test_fuzzed_logs.py`) reads the summary, or the input file left behind if the child died.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import enum
import faulthandler
import io
import json
import os
import pathlib
import random
import re
import resource
import struct
import sys
import time
import traceback
import uuid
from collections import namedtuple
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import msgpack
import xxhash

import callpin
from callpin._impl import Encoder
from callpin.cli import cli
from callpin.errors import LogFormatError
from callpin.event import KIND_CODES
from callpin.logfile import LogReader, log_bytes
from callpin.normalize import DEFAULT_RULES, NO_RULES, rule

VECTORS = pathlib.Path(__file__).resolve().parent.parent / "vectors"
HANG_SECONDS = 2.0
# The watchdog (faulthandler, which dumps every thread and exits) is re-armed once per
# batch: re-arming it costs a thread join, more than a typical input takes.
WATCHDOG_BATCH = 50
WATCHDOG_SECONDS = WATCHDOG_BATCH * HANG_SECONDS * 5 + 60
MEMORY_LIMIT_MB = 200
ADDRESS_SPACE = 2 << 30  # a runaway allocation fails fast instead of swapping
_TRAILER = struct.Struct(">BBQQ")


# ---------------------------------------------------------------------------
# The seed corpus: real logs written through the library.


class Colour(enum.Enum):
    RED = 1
    BLUE = "blue"


@dataclasses.dataclass
class Receipt:
    amount: int
    note: Any


Point = namedtuple("Point", "x y")


class Token:
    """A value of a type without a canonical form: written as an opaque repr."""

    def __init__(self, number: int) -> None:
        self.number = number

    def __repr__(self) -> str:
        return f"<Token {self.number}\x1b[0m\n>"


class Gateway:
    """A collaborator: its calls are what the seed logs record."""

    def __repr__(self) -> str:
        # A fixed address, so logs recorded without the address rule are the same every run.
        return "<Gateway object at 0x7f00deadbeef>"

    def charge(self, *args: Any, **kwargs: Any) -> Any:
        return kwargs.get("back", args[:1])

    def fail(self, *args: Any) -> Any:
        raise ValueError(*args)


def _text(rng: random.Random) -> str:
    alphabet = [
        "a",
        "Z",
        " ",
        "é",
        "漢",
        "\n",
        "\x1b",
        "\x00",
        "\u202e",
        "\ud800",
        "0x7ffd1234abcd",
        "2024-01-02T03:04:05Z",
        "9b2e4f3a-1c2d-4e5f-8a9b-0c1d2e3f4a5b",
        "\U0001f600",
        "\\",
    ]
    return "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A Python value of a type the encoder handles (or turns into a marker)."""
    scalars: list[Callable[[], Any]] = [
        lambda: None,
        lambda: rng.random() < 0.5,
        lambda: rng.choice([0, -1, 127, 2**63 - 1, -(2**63), 2**64 - 1, 2**64, -(2**70), 10**40]),
        lambda: rng.getrandbits(rng.choice([8, 64, 200])) * rng.choice([1, -1]),
        lambda: rng.choice([0.5, -0.0, float("inf"), float("nan"), 1e308]),
        lambda: _text(rng),
        lambda: rng.randbytes(rng.randrange(20)),
        lambda: Decimal(rng.choice(["1.50", "-0", "1E+9", "NaN", "sNaN", "-Infinity"])),
        lambda: uuid.UUID(int=rng.getrandbits(128)),
        lambda: dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=rng.choice([None, dt.UTC])),
        lambda: dt.date(1999, 12, 31),
        lambda: dt.time(23, 59, 1, 5),
        lambda: dt.timedelta(days=rng.randrange(-5, 5), microseconds=7),
        lambda: pathlib.PurePosixPath("/tmp") / _text(rng).replace("\x00", ""),
        lambda: rng.choice(list(Colour)),
        lambda: ValueError(_text(rng), 3),
        lambda: Token(rng.randrange(9)),
        lambda: Gateway(),
    ]
    if depth > 3 or rng.random() < 0.5:
        return rng.choice(scalars)()
    size = rng.randrange(4)
    items = [_value(rng, depth + 1) for _ in range(size)]
    shape = rng.randrange(9)
    if shape == 0:
        return items
    if shape == 1:
        return tuple(items)
    if shape == 2:
        return {rng.choice([_text(rng), rng.randrange(9), (1, "k")]): item for item in items}
    if shape == 3:
        return {1, "a", (2, 3), frozenset({4})} if rng.random() < 0.5 else frozenset(range(size))
    if shape == 4:
        return Receipt(size, items)
    if shape == 5:
        return Point(items, size)
    if shape == 6:
        looped: list[Any] = list(items)
        looped.append(looped)
        return looped
    if shape == 7:
        deep: Any = 0
        for _ in range(70):  # past the writer's depth limit: written as a marker
            deep = [deep]
        return deep
    return {"nested": items, ("t", 1): None}


def _recorded_log(rng: random.Random, path: str) -> None:
    gateway = Gateway()
    spy = [callpin.target(gateway, "charge"), callpin.target(gateway, "fail")]
    normalize = rng.choice([DEFAULT_RULES, NO_RULES, DEFAULT_RULES.with_rules([rule(r"card_[A-Z]", "card")])])
    with callpin.record(
        path,
        spy=spy,
        outcomes=rng.choice(["all", "raise", "none"]),
        normalize=normalize,
        meta={"seed": rng.randrange(100)},
    ) as rec:
        for _ in range(rng.randrange(1, 8)):
            args = [_value(rng) for _ in range(rng.randrange(4))]
            kwargs = {f"k{n}": _value(rng) for n in range(rng.randrange(3))}
            roll = rng.randrange(4)
            if roll == 0:
                with contextlib.suppress(ValueError):
                    gateway.fail(*args)
            elif roll == 1:
                rec.mark(_text(rng) or "mark", _value(rng))
            else:
                gateway.charge(*args, back=_value(rng), **kwargs)


def _generated_frames(rng: random.Random, encoder: Any) -> list[bytes]:
    """Events written straight through the encoder, with labels, threads and depths
    no recording would make."""
    frames = []
    for _ in range(rng.randrange(1, 6)):
        kind = rng.choice(list(KIND_CODES.values()))
        error = (_text(rng), _text(rng)) if rng.random() < 0.3 else None
        frames.append(
            encoder.encode_event(
                kind,
                _text(rng),
                tuple(_value(rng) for _ in range(rng.randrange(3))),
                {_text(rng): _value(rng)},
                _value(rng),
                error,
                rng.randrange(1, 2**40),
                rng.randrange(0, 99),
            )
        )
    return frames


@dataclasses.dataclass
class Seed:
    """One valid log: its bytes and, for re-sealed mutations, its parts."""

    data: bytes
    header: bytes
    frames: list[bytes]


def _split(data: bytes) -> Seed:
    unpacker = msgpack.Unpacker(strict_map_key=False, raw=True)
    unpacker.feed(data[6 : -_TRAILER.size])
    unpacker.skip()
    header_end = 6 + unpacker.tell()
    frames = []
    start = unpacker.tell()
    for _ in unpacker:
        frames.append(data[6 + start : 6 + unpacker.tell()])
        start = unpacker.tell()
    return Seed(data, data[:header_end], frames)


def build_corpus(seed: int, folder: str) -> list[Seed]:
    rng = random.Random(f"{seed}:corpus")
    corpus = [_split((VECTORS / "small-log.cpin").read_bytes())]
    for n in range(12):
        path = os.path.join(folder, f"recorded-{n}.cpin")
        _recorded_log(rng, path)
        corpus.append(_split(pathlib.Path(path).read_bytes()))
    encoder = Encoder(DEFAULT_RULES)
    for _ in range(6):
        corpus.append(_split(log_bytes(_generated_frames(rng, encoder), rules=DEFAULT_RULES)))
    corpus.append(_split(log_bytes([], rules=NO_RULES)))
    return corpus


# ---------------------------------------------------------------------------
# Hostile pieces: msgpack values no writer produces.

_HUGE_HEADS = [
    b"\xdb\xff\xff\xff\xff",
    b"\xc6\xff\xff\xff\xff",
    b"\xdd\xff\xff\xff\xff",
    b"\xdf\xff\xff\xff\xff",
    b"\xc9\xff\xff\xff\xff\x01",
    b"\xdd\x00\x0f\x42\x40",
    b"\xdd\x00\x0f\x42\x3f",
    b"\xdb\x01\x00\x00\x01",
    b"\xc6\x10\x00\x00\x01",
    b"\xc9\x10\x00\x00\x00\x04",
    b"\xdc\xff\xff",
    b"\xde\xff\xff",
    b"\xda\xff\xff",
]
_EXT_PAYLOADS: dict[int, list[Any]] = {
    4: [lambda r: r.randbytes(r.choice([0, 1, 9, 1800, 5000, 70000]))],
    5: [
        lambda r: r.choice(
            [
                b"1E999999999999999999",
                b"sNaN",
                b"-NaN123",
                b"1e-999999999",
                b"",
                b"\xff",
                b"1_0",
                b"9" * 5000,
                b" 1 ",
            ]
        )
    ],
    6: [lambda r: r.randbytes(r.choice([15, 16, 17]))],
    7: [
        lambda r: r.choice(
            [
                b"2024-01-02T03:04:05+99:00",
                b"9999-12-31T23:59:59.999999-23:59",
                b"",
                b"\xe9",
                b"2024-02-30",
                b"0001-01-01T00:00:00+00:01",
            ]
        )
    ],
    8: [lambda r: r.choice([b"2024-13-01", b"0000-01-01", b"+10000-01-01", b"2024-W01-1"])],
    9: [lambda r: r.choice([b"24:00", b"12:00:00+25:00", b"T12", b"\x00"])],
    11: [lambda r: r.choice([b"\xed\xa0\x80", b"\xff", b"/" * 10, b"a\x00b"])],
    16: [lambda r: msgpack.packb(r.choice([-1, 2**64 - 1, "x", None, 10**6]))],
    18: [lambda r: r.choice([b"\xed\xa0\x80", b"\xff\xfe", b"\xf4\x90\x80\x80", b"a\x1bb"])],
}


def _pack(value: Any) -> bytes:
    if isinstance(value, str):
        # A lone surrogate goes in as its (invalid) UTF-8 bytes, as no writer would put it.
        raw = value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogateescape")
        return msgpack.packb(raw, unicode_errors="surrogateescape")
    return msgpack.packb(value, use_bin_type=True)


def _array(items: list[bytes]) -> bytes:
    return msgpack.Packer().pack_array_header(len(items)) + b"".join(items)


def _map(pairs: list[tuple[bytes, bytes]]) -> bytes:
    return msgpack.Packer().pack_map_header(len(pairs)) + b"".join(k + v for k, v in pairs)


def _raw_value(rng: random.Random, depth: int = 0) -> bytes:
    """The bytes of a msgpack value with random, often malformed, ext payloads and map keys."""
    roll = rng.randrange(14)
    if depth > 4 or roll < 5:
        return _pack(
            rng.choice(
                [
                    None,
                    True,
                    -1,
                    2**64 - 1,
                    -(2**63),
                    1.5,
                    float("nan"),
                    "",
                    _text(rng).encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
                    b"\x00",
                    "\x1b[2J",
                    "\u2028",
                ]
            )
        )
    if roll == 5:
        return _array([_raw_value(rng, depth + 1) for _ in range(rng.randrange(4))])
    if roll == 6:
        return _map([(_raw_value(rng, depth + 1), _raw_value(rng, depth + 1)) for _ in range(rng.randrange(3))])
    code = rng.choice([*range(0, 23), 127, 99, -1, -128])
    if code in _EXT_PAYLOADS and rng.random() < 0.7:
        payload = rng.choice(_EXT_PAYLOADS[code])(rng)
    elif rng.random() < 0.8:
        payload = rng.choice(
            [
                _array([_raw_value(rng, depth + 1) for _ in range(rng.randrange(4))]),
                _array([_pack(_text(rng)), _pack(rng.randrange(-3, 9))]),
                _array([_pack(_text(rng)), _raw_value(rng, depth + 1)]),
                _raw_value(rng, depth + 1),
            ]
        )
    else:
        payload = rng.randbytes(rng.randrange(20))
    return _ext_bytes(code, payload)


def _deep(rng: random.Random) -> bytes:
    """A value nested far past every limit, or just around one."""
    depth = rng.choice([63, 64, 65, 100, 101, 499, 990, 1000, 1023, 1024, 1025, 5000, 100_000])
    style = rng.randrange(4)
    if style == 0:
        return b"\x91" * depth + b"\xc0"
    if style == 1:
        return b"\x81\xa1k" * depth + b"\xc0"
    if style == 2:
        value = b"\xc0"
        for _ in range(min(depth, 300)):  # tuples of tuples: one ext level each
            body = b"\x91" + value
            value = _ext_bytes(1, body)
        return value
    inner = b"\x91" * min(depth, 900) + b"\xc0"
    for _ in range(min(depth // 10, 120)):
        inner = _ext_bytes(rng.choice([1, 2, 3]), b"\x91" + b"\x91" * rng.randrange(900) + inner)
    return inner


def _ext_bytes(code: int, payload: bytes) -> bytes:
    """An ext value in msgpack's smallest form; `code` may be negative (reserved types)."""
    size = len(payload)
    fixed = {1: 0xD4, 2: 0xD5, 4: 0xD6, 8: 0xD7, 16: 0xD8}
    if size in fixed:
        head = bytes([fixed[size]])
    elif size < 256:
        head = bytes([0xC7, size])
    elif size < 65536:
        head = b"\xc8" + size.to_bytes(2, "big")
    else:
        head = b"\xc9" + size.to_bytes(4, "big")
    return head + struct.pack(">b", code) + payload


def _crowded(rng: random.Random) -> bytes:
    """A set or map whose elements or keys all share one hash: quadratic to build."""
    count = rng.choice([64, 65, 3000, 30_000])
    # Python hashes an int as its value modulo 2**61 - 1; past 2**64 they are ext 4.
    values = [(2**61 - 1) * (k + 9) for k in range(count)]
    keys = [_ext_bytes(4, value.to_bytes((value.bit_length() + 8) // 8, "big")) for value in values]
    if rng.random() < 0.5:
        return _ext_bytes(rng.choice([2, 3]), _array(keys))
    return _map([(key, b"\xc0") for key in keys])


def _hostile_frame(rng: random.Random) -> bytes:
    fields = [_pack(x) for x in (0, "svc.call", [], {}, None, None, 1, 0)]
    slot = rng.randrange(8)
    roll = rng.randrange(6)
    if roll == 0:
        fields[slot] = _deep(rng)
    elif roll == 5:
        fields[slot] = _crowded(rng)
    elif roll == 1:
        fields[slot] = rng.choice(_HUGE_HEADS) + rng.randbytes(rng.randrange(8))
    elif roll == 2:
        fields[slot] = _array([_raw_value(rng) for _ in range(rng.randrange(1, 4))])
    elif roll == 3:
        fields[slot] = _raw_value(rng)
    else:
        label = rng.choice(["\x1b]0;owned\x07", "a\nb", "\ud800x", "\u202eevil", "x" * 70000, ""])
        fields[1] = (
            _ext_bytes(18, label.encode("utf-8", "surrogatepass"))
            if rng.random() < 0.5
            else _pack(label.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
        )
        if rng.random() < 0.5:
            fields[5] = _pack([label.replace("\ud800", "?"), "boom\x1b[31m\r\n"])
    head = rng.choice([b"\x98"] * 8 + [b"\x97", b"\x99", b"\xdc\x00\x08", b"\x90", b"\x80"])
    return head + b"".join(fields)


def _hostile_header(rng: random.Random) -> bytes:
    pairs = {b"producer": _pack("callpin"), b"rules": _pack([]), b"meta": _pack({})}
    roll = rng.randrange(6)
    if roll == 0:
        pairs[b"rules"] = _pack([[rng.choice(["uuid", "nope", "x"]), rng.choice([None, "((", "(a+)+$", "[", 3, ""])]])
    elif roll == 1:
        pairs[b"meta"] = _raw_value(rng) if rng.random() < 0.8 else _crowded(rng)
    elif roll == 2:
        pairs[b"rules"] = _raw_value(rng)
    elif roll == 3:
        pairs[b"producer"] = _pack(rng.choice([b"callpin", "callpin\x00", None]))
    elif roll == 4:
        pairs[_raw_value(rng)] = _raw_value(rng)
    header = _map(
        [
            (_pack(key.decode()), value)
            for key, value in pairs.items()
            if isinstance(key, bytes) and key in (b"producer", b"rules", b"meta")
        ]
        + [(k, v) for k, v in pairs.items() if k not in (b"producer", b"rules", b"meta")]
    )
    if rng.random() < 0.15:
        header = _raw_value(rng)
    magic = rng.choice([b"CPIN\x01\x00", b"CPIN\x01\x09", b"CPIN\x02\x00", b"CPIN\x00\x00", b"CPIN\x01", b"CPI"])
    return magic + header


# ---------------------------------------------------------------------------
# Mutators of whole files.


def _flip(rng: random.Random, data: bytearray) -> None:
    if data:
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)


def _set_byte(rng: random.Random, data: bytearray) -> None:
    if data:
        data[rng.randrange(len(data))] = rng.choice(
            [0x00, 0xFF, 0x7F, 0x80, 0xC1, 0xD8, 0xDD, 0xDF, 0xC9, rng.randrange(256)]
        )


def _truncate(rng: random.Random, data: bytearray) -> None:
    del data[rng.randrange(len(data) + 1) :]


def _delete(rng: random.Random, data: bytearray) -> None:
    start = rng.randrange(len(data) + 1)
    del data[start : start + rng.randrange(1, 40)]


def _insert(rng: random.Random, data: bytearray) -> None:
    at = rng.randrange(len(data) + 1)
    data[at:at] = rng.randbytes(rng.randrange(1, 12))


def _duplicate(rng: random.Random, data: bytearray) -> None:
    start = rng.randrange(len(data) + 1)
    piece = data[start : start + rng.randrange(1, 200)]
    at = rng.randrange(len(data) + 1)
    data[at:at] = piece * rng.choice([1, 1, 2, 50])


def _length_prefix(rng: random.Random, data: bytearray) -> None:
    """Overwrite a byte after a msgpack length-prefixed head with a random or huge size."""
    heads = [
        k
        for k, byte in enumerate(data)
        if byte in (0xC4, 0xC5, 0xC6, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD, 0xDE, 0xDF, 0xC7, 0xC8, 0xC9)
    ]
    at = rng.choice(heads) if heads else rng.randrange(len(data) + 1)
    size = rng.choice(
        [
            b"\xff\xff\xff\xff",
            b"\x7f\xff\xff\xff",
            b"\x00\x0f\x42\x40",
            b"\x01\x00\x00\x00",
            rng.randbytes(4),
            b"\xff\xff",
        ]
    )
    data[at + 1 : at + 1 + len(size)] = size


def _huge_claim(rng: random.Random, data: bytearray) -> None:
    at = rng.randrange(len(data) + 1)
    data[at:at] = rng.choice(_HUGE_HEADS)


def _trailer_damage(rng: random.Random, data: bytearray) -> None:
    if len(data) >= 18:
        at = len(data) - 18 + rng.randrange(18)
        data[at] = rng.randrange(256)
        if rng.random() < 0.3:
            data[-16:-8] = rng.choice([b"\xff" * 8, b"\x00" * 8, (2**63).to_bytes(8, "big")])


def _header_damage(rng: random.Random, data: bytearray) -> None:
    at = rng.randrange(min(len(data), 40) + 1)
    if at < len(data):
        data[at] = rng.randrange(256)


_FRAME_MUTATORS = [
    _flip,
    _set_byte,
    _truncate,
    _delete,
    _insert,
    _duplicate,
    _length_prefix,
    _huge_claim,
]
_FILE_MUTATORS = [*_FRAME_MUTATORS, _trailer_damage, _header_damage]


def _sealed(header: bytes, frames: list[bytes], count: int | None = None) -> bytes:
    """A log whose trailer agrees with its body, so the reader must decode the frames."""
    body = b"".join(frames)
    digest = xxhash.xxh3_64_intdigest(body)
    return header + body + _TRAILER.pack(0xD8, 0x7F, len(frames) if count is None else count, digest)


def make_input(seed: int, index: int, corpus: list[Seed]) -> tuple[bytes, Seed]:
    """Input number `index` of the run with `seed` (a mutated, spliced or generated log)
    and the valid log it was made from."""
    rng = random.Random(f"{seed}:{index}")
    base = rng.choice(corpus)
    roll = rng.randrange(10)
    if roll < 4:
        # Byte mutations of a whole file; most break the fingerprint.
        data = bytearray(base.data)
        for _ in range(rng.choice([1, 1, 2, 3, 8])):
            rng.choice(_FILE_MUTATORS)(rng, data)
        return bytes(data), base
    if roll == 4:
        # Splice: the head of one log and the tail of another.
        other = rng.choice(corpus).data
        head = base.data[: rng.randrange(len(base.data) + 1)]
        return head + other[rng.randrange(len(other) + 1) :], base
    # The rest is re-sealed: the trailer agrees with the body, so frames get decoded.
    frames = list(base.frames)
    header = base.header
    if roll == 5:
        if frames:
            k = rng.randrange(len(frames))
            frame = bytearray(frames[k])
            for _ in range(rng.choice([1, 1, 2, 4])):
                rng.choice(_FRAME_MUTATORS)(rng, frame)
            frames[k] = bytes(frame)
    elif roll in (6, 7):
        frames.insert(rng.randrange(len(frames) + 1), _hostile_frame(rng))
    elif roll == 8:
        header = _hostile_header(rng)
    else:
        # Duplicate, drop or reorder frames; sometimes a trailer count that lies.
        if frames:
            k = rng.randrange(len(frames))
            choice = rng.randrange(3)
            if choice == 0:
                frames[k:k] = [frames[k]] * rng.choice([1, 2, 1000])
            elif choice == 1:
                del frames[k]
            else:
                rng.shuffle(frames)
        if rng.random() < 0.2:
            return _sealed(header, frames, rng.choice([0, 2**64 - 1, len(frames) + 1])), base
    return _sealed(header, frames), base


# ---------------------------------------------------------------------------
# Running one input through every consumer.


@dataclasses.dataclass
class Outcome:
    target: str
    verdict: str  # accepted, rejected, crash, hang
    detail: str = ""
    seconds: float = 0.0


def _through_reader(path: str) -> None:
    log = callpin.load(path)
    log.verify()
    with LogReader(path) as reader:
        for _ in reader:
            pass


def _reader(path: str) -> Outcome:
    try:
        _through_reader(path)
    except LogFormatError:
        return Outcome("reader", "rejected")
    except BaseException:
        return Outcome("reader", "crash", traceback.format_exc())
    return Outcome("reader", "accepted")


_NOT_PRINTABLE_ASCII = re.compile(r"[^\n\x20-\x7e]")


def _unsafe_char(text: str) -> str | None:
    """The first character of `text` a terminal would act on rather than print (or None)."""
    for found in _NOT_PRINTABLE_ASCII.finditer(text):
        if not found.group().isprintable():
            return found.group()
    return None


class _Stream:
    """A stdout or stderr for in-process commands, emptied before each one.

    Strict UTF-8 like a terminal's: a lone surrogate that reaches it is an error. One
    stream per process is reused because click caches its wrapper of every stream it
    meets and never lets go of one that needs no wrapping (a new stream per command
    grew this process by the size of every output).
    """

    def __init__(self) -> None:
        self.raw = io.BytesIO()
        self.text = io.TextIOWrapper(self.raw, encoding="utf-8", errors="strict", newline="\n")

    def empty(self) -> None:
        self.text.flush()
        self.raw.seek(0)
        self.raw.truncate()


_STDOUT, _STDERR = _Stream(), _Stream()


def _cli(name: str, args: list[str], *, text_output: bool = False) -> Outcome:
    _STDOUT.empty()
    _STDERR.empty()
    stdout, stderr, out, err = _STDOUT.text, _STDERR.text, _STDOUT.raw, _STDERR.raw
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            code = cli.main(args, standalone_mode=False)
            stdout.flush()
            stderr.flush()
    except BaseException:
        return Outcome(name, "crash", traceback.format_exc())
    printed = err.getvalue().decode("utf-8", "replace")
    lines = printed.splitlines()
    if code in (0, 1):
        if printed:
            return Outcome(name, "crash", f"exit {code} with stderr {printed!r}")
        if text_output:
            shown = out.getvalue().decode("utf-8", "surrogateescape")
            char = _unsafe_char(shown)
            if char is not None:
                return Outcome(name, "crash", f"unescaped {char!r} in the output")
        return Outcome(name, "accepted", str(code))
    if (
        code == 2
        and len(lines) == 1
        and lines[0].startswith("callpin:")
        and "Traceback" not in printed
        and _unsafe_char(lines[0]) is None
    ):
        return Outcome(name, "rejected")
    return Outcome(name, "crash", f"exit {code} with stderr {printed!r}")


_DIFF_OPTIONS = [
    [],
    ["--order", "thread"],
    ["--order", "none"],
    ["--ignore", "args"],
    ["--format", "json"],
    ["--context", "0"],
]


def run_input(path: str, valid: str, index: int) -> list[Outcome]:
    """Every consumer's outcome for the log at `path`; `valid` is the log it was made from."""
    show_format = ("text", "json", "html")[index % 3] if index % 4 == 0 else "text"
    diff_options = ["diff", "--no-color", *_DIFF_OPTIONS[index % len(_DIFF_OPTIONS)]]
    steps: list[Callable[[], Outcome]] = [
        lambda: _reader(path),
        lambda: _cli("show", ["show", "--format", show_format, path], text_output=show_format == "text"),
        lambda: _cli("diff", [*diff_options, valid, path]),
        lambda: _cli("diff", [*diff_options, path, valid]),
        lambda: _cli("verify", ["verify", path]),
    ]
    outcomes = []
    for step in steps:
        # CPU time, not wall time: the machine may be shared, and a consumer that waits
        # rather than computes is left to the watchdog.
        started = time.process_time()
        outcome = step()
        outcome.seconds = time.process_time() - started
        if outcome.seconds > HANG_SECONDS and outcome.verdict != "crash":
            outcome.detail = f"{outcome.target} took {outcome.seconds:.1f} s of CPU"
            outcome.verdict = "hang"
        outcomes.append(outcome)
    verdicts = {outcomes[0].verdict, outcomes[-1].verdict}
    if len(verdicts) == 2 and verdicts <= {"accepted", "rejected"}:
        outcomes.append(
            Outcome(
                "verify",
                "crash",
                f"the reader says {outcomes[0].verdict}, verify {outcomes[-1].verdict}",
            )
        )
    return outcomes


def _peak_mb() -> float:
    # The high-water mark of this process's own memory. On Linux ru_maxrss survives exec:
    # a child started by a large parent (a pytest worker that ran other tests first)
    # would report the parent's peak before reading one input.
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Summary:
    """What one child found, printed as JSON at the end."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(("tried", "runs", "accepted", "rejected", "crashes", "hangs", "memory"), 0)
        self.slowest: tuple[float, int | None, str] = (0.0, None, "")
        self.first_failure: dict[str, Any] | None = None
        self.signatures: dict[str, list[int]] = {}

    def add(self, index: int, data: bytes, outcomes: list[Outcome], memory: Outcome | None) -> None:
        self.counts["tried"] += 1
        self.counts["runs"] += len(outcomes)
        slowest = max(outcomes, key=lambda outcome: outcome.seconds)
        if slowest.seconds > self.slowest[0]:
            self.slowest = (slowest.seconds, index, slowest.target)
        bad = [outcome for outcome in outcomes if outcome.verdict in ("crash", "hang")]
        bad += [memory] if memory is not None else []
        if not bad:
            self.counts["accepted" if outcomes[0].verdict == "accepted" else "rejected"] += 1
            return
        verdicts = {outcome.verdict for outcome in bad}
        self.counts["crashes"] += "crash" in verdicts
        self.counts["hangs"] += "hang" in verdicts
        self.counts["memory"] += "memory" in verdicts
        for outcome in bad:
            last = (outcome.detail.strip().splitlines() or [""])[-1][:160]
            signature = re.sub(r"\d+", "N", f"{outcome.target} {outcome.verdict}: {last}")
            self.signatures.setdefault(signature, [0, index])[0] += 1
        if self.first_failure is None:
            self.first_failure = {
                "index": index,
                "target": bad[0].target,
                "verdict": bad[0].verdict,
                "detail": bad[0].detail,
                "hex": data.hex(),
            }

    def json(self) -> str:
        return json.dumps(
            {
                **self.counts,
                "slowest": list(self.slowest),
                "peak_rss_mb": round(_peak_mb(), 1),
                "first_failure": self.first_failure,
                "signatures": self.signatures,
            }
        )


def main(argv: list[str]) -> int:
    if argv[:1] == ["--show"]:
        seed, index, folder = int(argv[1]), int(argv[2]), argv[3]
        print(make_input(seed, index, build_corpus(seed, folder))[0].hex())
        return 0
    seed, worker, workers, start, stop = map(int, argv[:5])
    folder = argv[5]
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    corpus = build_corpus(seed, folder)
    path = os.path.join(folder, "input.cpin")
    valid = os.path.join(folder, "valid.cpin")
    summary = Summary()
    over_memory = False
    for index in range(start + (worker - start) % workers, stop, workers):
        data, base = make_input(seed, index, corpus)
        # The input and its number stay on disk while it runs: if this process dies,
        # the parent reports that input.
        pathlib.Path(path).write_bytes(data)
        pathlib.Path(valid).write_bytes(base.data)
        pathlib.Path(folder, "index").write_text(str(index))
        if summary.counts["tried"] % WATCHDOG_BATCH == 0:
            faulthandler.dump_traceback_later(WATCHDOG_SECONDS, exit=True)
        outcomes = run_input(path, valid, index)
        memory = None
        if not over_memory and _peak_mb() > MEMORY_LIMIT_MB:
            over_memory = True
            memory = Outcome("memory", "memory", f"peak RSS {_peak_mb():.0f} MB after this input")
        summary.add(index, data, outcomes, memory)
    faulthandler.cancel_dump_traceback_later()
    print(summary.json())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
