"""Time callpin.diff on 10k / 100k / 1M-event log pairs with scattered edits, against difflib.

Each pair is a log and a copy of it with 1% of its events swapped with their
neighbour, 0.5% deleted and 0.5% inserted. callpin.diff gets the two logs (it digests
the frames itself); difflib.SequenceMatcher(autojunk=False) gets the two lists of
digests, so the ratio compares alignment with alignment. difflib is quadratic on
the repeated events these logs hold, so it runs only up to DIFFLIB_MAX events.

    python benchmarks/bench_diff.py            # the whole table
    python benchmarks/bench_diff.py 10000      # chosen sizes
"""

from __future__ import annotations

import difflib
import random
import statistics
import sys
import time
from collections.abc import Callable

import msgpack
import xxhash
from targets import check

from callpin import diff
from callpin.logfile import Log
from callpin.normalize import DEFAULT_RULES

SIZES = (10_000, 100_000, 1_000_000)
DIFFLIB_MAX = 100_000
SWAPPED = 0.01
DELETED = 0.005
INSERTED = 0.005
SEED = 20240601
TARGET_SECONDS = 2.0  # a 1,000,000-event diff in at most 2 s
LINEARITY = 2.0  # near-linear: per-event time at 10^6 at most 2x that at 10^4


def event_frame(label: str, args: list[object]) -> bytes:
    # Plain ints and strings are encoded by callpin exactly as msgpack writes them,
    # so the frames are built at msgpack speed rather than through the encoder.
    return msgpack.packb([0, label, args, {}, None, None, 1, 0], use_bin_type=True)


def make_pair(size: int, seed: int = SEED) -> tuple[list[bytes], list[bytes]]:
    """An old log's frames and an edited copy: swaps, deletions and insertions."""
    rng = random.Random(seed)
    # Dotted labels as spies name them (most longer than 31 bytes).
    labels = [f"examples.service{k}.collaborator.operation{k % 7}" for k in range(20)]
    old = []
    for i in range(size):
        # Every tenth event is the same commit call: repeated identical events
        # are what makes alignment hard (and difflib slow).
        if i % 10 == 9:
            old.append(event_frame("db.commit", []))
        else:
            old.append(event_frame(labels[i % 20], [f"customer-{i // 3}", i * 37 % 10_007]))
    slots = rng.sample(range(0, size - 1, 4), int(size * (SWAPPED + DELETED + INSERTED)))
    swaps = slots[: int(size * SWAPPED)]
    deletions = set(slots[len(swaps) : len(swaps) + int(size * DELETED)])
    insertions = set(slots[len(swaps) + len(deletions) :])
    edited = list(old)
    for p in swaps:
        edited[p], edited[p + 1] = edited[p + 1], edited[p]
    new = []
    for i, frame in enumerate(edited):
        if i in insertions:
            new.append(event_frame("audit.inserted", [i]))
        if i not in deletions:
            new.append(frame)
    return old, new


def median_seconds(run: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench(size: int) -> tuple[float, list[str]]:
    old_frames, new_frames = make_pair(size)
    repeat = 5 if size <= 100_000 else 3

    def callpin_diff() -> object:
        # Fresh logs each time: a Log keeps the events it decoded.
        old = Log.from_frames(old_frames, rules=DEFAULT_RULES)
        new = Log.from_frames(new_frames, rules=DEFAULT_RULES)
        return diff(old, new)

    result = callpin_diff()
    assert not isinstance(result, bool)
    ours = median_seconds(callpin_diff, repeat)
    ops = ", ".join(f"{n} {kind}" for kind, n in result.summary.items())  # type: ignore[attr-defined]
    if size <= DIFFLIB_MAX:
        a = list(map(xxhash.xxh3_64_intdigest, old_frames))
        b = list(map(xxhash.xxh3_64_intdigest, new_frames))
        theirs = median_seconds(
            lambda: difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes(),
            1 if size > 10_000 else 3,
        )
        difflib_text, ratio = f"{theirs:9.3f} s", f"{theirs / ours:7.1f}x"
    else:
        difflib_text, ratio = "  skipped", "      -"
    return ours, [f"{size:>9,}", f"{ours:8.3f} s", difflib_text, ratio, ops]


def main(argv: list[str] | None = None) -> None:
    sizes = [int(arg) for arg in argv or []] or list(SIZES)
    print("callpin.diff vs difflib.SequenceMatcher(autojunk=False), median seconds")
    print(f"edits: {SWAPPED:.1%} swapped pairs, {DELETED:.1%} deleted, {INSERTED:.1%} inserted")
    print(f"difflib skipped above {DIFFLIB_MAX:,} events (quadratic on repeated events)")
    header = ["events", "callpin", "difflib", "speed-up", "ops found"]
    print(f"{header[0]:>9}  {header[1]:>10}  {header[2]:>11}  {header[3]:>7}  {header[4]}")
    seconds: dict[int, float] = {}
    for size in sizes:
        seconds[size], row = bench(size)
        print(f"{row[0]}  {row[1]:>10}  {row[2]:>11}  {row[3]:>7}  {row[4]}", flush=True)
    if 1_000_000 in seconds:
        check("diff of 1,000,000 vs 1,000,000 events", seconds[1_000_000], TARGET_SECONDS, at_most=True, unit=" s")
    if 1_000_000 in seconds and 10_000 in seconds:
        growth = (seconds[1_000_000] / 1_000_000) / (seconds[10_000] / 10_000)
        print(f"per-event time, 10^6 against 10^4: {growth:.2f}x")
        check("diff per-event time, 10^6 / 10^4 events", growth, LINEARITY, at_most=True, unit="x")


if __name__ == "__main__":
    main(sys.argv[1:])
