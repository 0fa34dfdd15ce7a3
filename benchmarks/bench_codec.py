"""Encode + normalize per event (C, pure Python, plain msgpack) and a 1,000,000-event log.

Everything is measured in this one process: each comparison runs its candidates in
interleaved rounds (the order rotates every round) and reports the median per call, so
the ratios compare figures taken side by side under the same machine load.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import msgpack
from targets import check

import callpin
from callpin import _impl, codec, logfile
from callpin.event import KIND_CODES
from callpin.normalize import DEFAULT_RULES

ROUNDS = int(os.environ.get("CALLPIN_BENCH_ROUNDS", "7"))
CALLS = 20_000
LOG_EVENTS = 1_000_000
LOG_ROUNDS = 3
SPEEDUP = 8.0  # encode + normalize of a small event: the C path at least 8x the pure-Python one

Event = tuple[int, str, tuple[Any, ...], dict[str, Any], Any, Any, int, int]
# A run of `calls` events: its setup (fresh values, a fresh encoder) is not timed.
Candidate = Callable[[list[Event]], Callable[[], None]]


def small_events(count: int) -> list[Event]:
    """charge_card('card_A', 1500, currency='usd', idempotency_key=<fresh uuid4>)."""
    return [
        (
            0,
            "billing.charge_card",
            ("card_A", 1500),
            {"currency": "usd", "idempotency_key": str(uuid.uuid4())},
            None,
            None,
            1,
            0,
        )
        for _ in range(count)
    ]


def heavy_events(count: int) -> list[Event]:
    """A 50-key dict and 100 ints as the arguments of one call."""
    payload = {f"field_{i:02d}": (f"value {i}" if i % 2 else i * 1000) for i in range(50)}
    amounts = list(range(0, 100 * 7919, 7919))
    return [(0, "billing.charge_batch", (payload, amounts), {}, None, None, 1, 0)] * count


class Headers(Mapping[str, str]):
    """A header mapping that is not a builtin (like requests' CaseInsensitiveDict): recorded as its items."""

    def __init__(self, items: dict[str, str]) -> None:
        self._store = {key.lower(): (key, value) for key, value in items.items()}

    def __getitem__(self, key: str) -> str:
        return self._store[key.lower()][1]

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._store.values())

    def __len__(self) -> int:
        return len(self._store)


class Request:
    """A request-like object with no registered form: recorded by its type and its state."""

    def __init__(self, url: str, body: bytes) -> None:
        self.method = "POST"
        self.url = url
        self.headers = Headers(
            {
                "Accept": "application/json",
                "Content-Type": "application/json",
                "User-Agent": "shop/1.4",
                "Idempotency-Key": str(uuid.uuid4()),
                "Authorization": "Bearer sk_live_0123456789",
            }
        )
        self.body = body


class Point:
    __slots__ = ("label", "x", "y")

    def __init__(self, x: int, y: int, label: str) -> None:
        self.x, self.y, self.label = x, y, label


def object_events(count: int) -> list[Event]:
    """send(<Request>): a fresh request-like object each (a __dict__ of 4, a Mapping of 5 headers, a UTF-8 body)."""
    return [
        (
            0,
            "http.send",
            (Request(f"https://api.example/orders/{index}", b'{"order": "%s"}' % str(uuid.uuid4()).encode()),),
            {},
            None,
            None,
            1,
            0,
        )
        for index in range(count)
    ]


def slots_events(count: int) -> list[Event]:
    """plot(<Point>): a fresh three-slot object each."""
    return [(0, "chart.plot", (Point(index, index * 2, "p"),), {}, None, None, 1, 0) for index in range(count)]


def _state(value: Any) -> Any:
    """msgpack's fallback for the objects above: what a hand-written packer would write."""
    if isinstance(value, Mapping):
        return dict(value)
    if hasattr(value, "__dict__"):
        return vars(value)
    return [getattr(value, name) for name in value.__slots__]


def callpin_encoder(encoder_class: Any) -> Candidate:
    def prepare(events: list[Event]) -> Callable[[], None]:
        encode_event = encoder_class(DEFAULT_RULES).encode_event

        def run() -> None:
            for event in events:
                encode_event(*event)

        return run

    return prepare


def plain_msgpack(events: list[Event]) -> Callable[[], None]:
    packb = msgpack.packb

    def run() -> None:
        for kind, label, args, kwargs, value, error, thread, depth in events:
            packb([kind, label, list(args), kwargs, value, error, thread, depth], default=_state)

    return run


def interleaved(candidates: dict[str, Candidate], make_events: Callable[[int], list[Event]]) -> dict[str, float]:
    """Median ns per call of each candidate over interleaved rounds."""
    samples: dict[str, list[float]] = {name: [] for name in candidates}
    names = list(candidates)
    for round_index in range(ROUNDS):
        order = names[round_index % len(names) :] + names[: round_index % len(names)]
        for name in order:
            run = candidates[name](make_events(CALLS))
            start = time.perf_counter_ns()
            run()
            samples[name].append((time.perf_counter_ns() - start) / CALLS)
    return {name: statistics.median(values) for name, values in samples.items()}


def encoding_table() -> list[str]:
    candidates: dict[str, Candidate] = {}
    if _impl.IMPLEMENTATION == "c":
        candidates["callpin (C)"] = callpin_encoder(_impl.Encoder)
    candidates["callpin (pure Python)"] = callpin_encoder(codec.Encoder)
    candidates["msgpack.packb, no normalization"] = plain_msgpack
    lines = [
        "Encode + normalize per event (ns per event, median of interleaved rounds)",
        "",
        "| event | " + " | ".join(candidates) + " | Python / C | C / msgpack |",
        "|---|" + "---:|" * (len(candidates) + 2),
    ]
    for label, make_events in (
        ("small (charge_card, fresh uuid4)", small_events),
        ("heavy (50-key dict, 100 ints)", heavy_events),
        ("object state (request-like: 4 attributes, 5 headers, UTF-8 body)", object_events),
        ("object state (3 slots)", slots_events),
    ):
        medians = interleaved(candidates, make_events)
        c = medians.get("callpin (C)")
        python = medians["callpin (pure Python)"]
        plain = medians["msgpack.packb, no normalization"]
        speedup = f"{python / c:.1f}x" if c else "n/a"
        if c and make_events is small_events:
            check("encode + normalize, small event: Python / C", python / c, SPEEDUP, at_most=False, unit="x")
        versus = f"{c / plain:.2f}" if c else "n/a"
        cells = " | ".join(f"{value:,.0f}" for value in medians.values())
        lines.append(f"| {label} | {cells} | {speedup} | {versus} |")
    return lines


# ---------------------------------------------------------------------------------------
# A log of a million events.


def log_events(count: int) -> list[Event]:
    """Calls with a fresh uuid4 each, every one followed by its return value."""
    events: list[Event] = []
    for index in range(count // 2):
        key = str(uuid.uuid4())
        events.append(
            (
                0,
                "billing.charge_card",
                ("card_A", 1500 + index % 100),
                {"currency": "usd", "idempotency_key": key},
                None,
                None,
                1,
                0,
            )
        )
        events.append((1, "billing.charge_card", (), {}, {"ok": True, "charge": f"ch_{index}"}, None, 1, 0))
    return events


def _json_default(value: Any) -> Any:
    return repr(value)


def log_table(folder: str) -> list[str]:
    events = log_events(LOG_EVENTS)
    path = os.path.join(folder, "bench.cpin")
    encode_s, write_s, read_s = [], [], []
    frames: list[bytes] = []
    for _ in range(LOG_ROUNDS):
        encode_event = _impl.Encoder(DEFAULT_RULES).encode_event
        start = time.perf_counter()
        frames = [encode_event(*event) for event in events]
        encode_s.append(time.perf_counter() - start)

        start = time.perf_counter()
        with logfile.LogWriter(path) as writer:
            for frame in frames:
                writer.write(frame)
        write_s.append(time.perf_counter() - start)

        start = time.perf_counter()
        with logfile.LogReader(path) as reader:
            read = sum(1 for _ in reader.frames())
        read_s.append(time.perf_counter() - start)
        assert read == len(events)

    # Decoding every event (and writing each as one JSON line, for the size comparison)
    # is the slow path a diff or `callpin show` takes; measured once.
    json_path = os.path.join(folder, "bench.jsonl")
    start = time.perf_counter()
    with logfile.LogReader(path) as reader:
        for _ in reader:
            pass
    decode_s = time.perf_counter() - start
    with logfile.LogReader(path) as reader, open(json_path, "w", encoding="utf-8") as out:
        for event in reader:
            row = [
                KIND_CODES[event.kind],
                event.label,
                list(event.args),
                event.kwargs,
                event.value,
                event.error,
                event.thread,
                event.depth,
            ]
            out.write(json.dumps(row, separators=(",", ":"), ensure_ascii=False, default=_json_default))
            out.write("\n")

    count = len(events)
    cpin_size, json_size = os.path.getsize(path), os.path.getsize(json_path)
    rate = lambda seconds: f"{count / statistics.median(seconds):,.0f}"  # noqa: E731
    return [
        f"A log of {count:,} events (median of {LOG_ROUNDS} rounds; decode measured once)",
        "",
        "| step | events/s |",
        "|---|---:|",
        f"| encode + normalize ({_impl.IMPLEMENTATION}) | {rate(encode_s)} |",
        f"| write (LogWriter, fsync and rename included) | {rate(write_s)} |",
        f"| streaming read (LogReader.frames, integrity checked) | {rate(read_s)} |",
        f"| streaming read + decode every event (iterating LogReader) | {rate([decode_s])} |",
        "",
        "| file | bytes | bytes/event | vs JSON lines |",
        "|---|---:|---:|---:|",
        f"| .cpin | {cpin_size:,} | {cpin_size / count:.1f} | {cpin_size / json_size:.2f} |",
        f"| JSON lines (compact arrays) | {json_size:,} | {json_size / count:.1f} | 1.00 |",
    ]


def machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")),
                cpu,
            )
    except OSError:
        pass
    return [
        f"machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
        f"python {platform.python_version()} ({platform.python_implementation()}), "
        f"callpin {callpin.__version__} ({callpin.IMPLEMENTATION}), "
        f"msgpack {'.'.join(map(str, msgpack.version))}",
    ]


def main() -> None:
    for line in machine():
        print(line)
    print()
    for line in encoding_table():
        print(line)
    sys.stdout.flush()
    print()
    with tempfile.TemporaryDirectory(prefix="callpin-bench-") as folder:
        for line in log_table(folder):
            print(line)


if __name__ == "__main__":
    main()
