"""No leaks in the C encoder and spy: memory and reference counts over many encodes.

Runs with the C speedups live (`make test` runs the pure-Python pass too, where this
is skipped). Values of every kind, including ones that fail inside the encoder (a
raising repr, values past the limits, a list changed while encoded), are encoded and
recorded many times after a warm-up; tracemalloc and the process's resident memory
must stay within a bound, and the reference counts of the values, of interned strings
and of None, True and False must come back to what they were.
"""

from __future__ import annotations

import gc
import os
import sys
import tracemalloc
import types
import uuid
from collections.abc import Callable
from typing import Any

import pytest

import callpin
from callpin import _impl, codec

pytestmark = pytest.mark.skipif(callpin.IMPLEMENTATION != "c", reason="the C speedups are not live")

KEY = "12345678-1234-5678-1234-567812345678"
INTERNED = sys.intern("amount")
TRACEMALLOC_BOUND = 1024 * 1024


class ReprRaises:
    def __repr__(self) -> str:
        raise ValueError("repr")


class Shown:
    def __repr__(self) -> str:
        return "<Shown at 0x7f00deadbeef>"


def changing_list() -> list[Any]:
    items: list[Any] = []

    class Grower:
        def __repr__(self) -> str:
            items.append(1)
            return "grower"

    items.extend([Grower(), 2])
    return items


def values() -> list[Any]:
    """Values of every kind: written whole, marked, or failing inside the encoder."""
    cycle: list[Any] = [1]
    cycle.append(cycle)
    deep: list[Any] = []
    for _ in range(codec.MAX_DEPTH + 5):
        deep = [deep]
    return [
        {INTERNED: 1500, "id": KEY, "when": "2024-03-01T09:30:00Z", "n": 10**30, "f": 0.5},
        {frozenset({1, "x", KEY}), (1, 2), uuid.UUID(KEY)},
        [ReprRaises(), Shown(), cycle, deep, None, True, False],
        "s" * (codec.MAX_STR + 1),
        [0] * (codec.MAX_ITEMS + 1),
        "lone \ud800 surrogate",
        Exception(KEY, ReprRaises()),
    ]


def loop(encoder: Any, spied: Callable[..., Any], fixed: list[Any], count: int) -> None:
    per_round = len(fixed) + 4
    for _ in range(max(1, count // per_round)):
        for value in fixed:
            encoder.encode(value)
        encoder.encode(changing_list())
        encoder.encode_event(
            0, "billing.charge", fixed[:3], {INTERNED: fixed[0]}, None, ("E", f"at {KEY} 0x7f00deadbeef"), 1, 0
        )
        spied(fixed[0], fixed[2], amount=1, key=KEY)
        try:
            spied(ReprRaises(), fail=True)
        except LookupError:
            pass


def resident_kb() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_encoding_and_recording_leak_neither_memory_nor_references(
    make_module: Callable[..., types.ModuleType], scale, figures
):
    module = make_module(
        "cp_leaks",
        """
def charge(*args, fail=False, **kwargs):
    if fail:
        raise LookupError("declined")
    return True
""",
    )
    count = scale.pick(100_000, 1_000_000)
    fixed = values()
    # None, True, False and the interned "amount" are watched apart: the interpreter's
    # caches and other code of the process (under xdist, its worker's own thread) move
    # their counts by a few either way; a leak of one reference per call would move them
    # by `count`.
    watched = [*fixed, *fixed[0].values(), *fixed[2][:4], KEY]
    singletons = (None, True, False, INTERNED)
    encoder = _impl.Encoder()
    with callpin.record(spy="cp_leaks.charge", outcomes="all") as rec:
        frames = rec._journal.frames
        numbered = rec._journal.instances
        kept = rec._journal.kept
        loop(encoder, module.charge, fixed, 2_000)
        del frames[:]
        numbered.clear()
        kept.clear()
        encoder.identities.kept.clear()
        gc.collect()
        references = [sys.getrefcount(obj) for obj in watched]
        singletons_before = [sys.getrefcount(obj) for obj in singletons]
        rss_before = resident_kb()
        tracemalloc.start()
        try:
            baseline = tracemalloc.get_traced_memory()[0]
            done = 0
            while done < count:
                step = min(20_000, count - done)
                loop(encoder, module.charge, fixed, step)
                # The recording's own frames grow by design, and so do the objects it has
                # numbered (each held until the log is finished, so no id is reused in
                # it: a fresh ReprRaises per call is a new one); only leaks must not.
                del frames[:]
                numbered.clear()
                kept.clear()  # the objects written by their repr, held as numbered ones are
                done += step
            encoder.numbering = type(encoder.numbering)()
            # The encoder holds every object it numbered (a fresh Grower, and its class,
            # each round) until its log is finished; finish it.
            encoder.identities.instances.clear()
            encoder.identities.kept.clear()
            gc.collect()
            grown = tracemalloc.get_traced_memory()[0] - baseline
        finally:
            tracemalloc.stop()
        rss_grown = resident_kb() - rss_before
        after = [sys.getrefcount(obj) for obj in watched]
        singletons_after = [sys.getrefcount(obj) for obj in singletons]
    drift = sum(abs(now - before) for now, before in zip(after, references, strict=True))
    figures.add("leaks", "encodes", count)
    figures.add("leaks", "tracemalloc growth KB", round(grown / 1024, 1))
    figures.add("leaks", "RSS growth KB", rss_grown)
    figures.add("leaks", "refcount drift", drift, zero=True)
    singletons_drift = max(abs(now - before) for now, before in zip(singletons_after, singletons_before, strict=True))
    figures.add("leaks", "None/True/False/interned refcount drift", singletons_drift)
    assert after == references
    assert singletons_drift < 2_000
    assert grown < TRACEMALLOC_BOUND
    # AddressSanitizer (make sanitize) keeps freed memory in quarantine, out of reach
    # of the resident-size bound; tracemalloc still counts what is really held.
    if "asan" not in os.environ.get("LD_PRELOAD", ""):
        assert rss_grown < 64 * 1024


def _traced_growth(run: Callable[[], None], warm: int, measured: int) -> int:
    """Bytes still held after `measured` more runs, once `warm` runs filled the caches."""
    tracemalloc.start()
    try:
        for _ in range(warm):
            run()
        gc.collect()
        baseline = tracemalloc.get_traced_memory()[0]
        for _ in range(measured):
            run()
        gc.collect()
        return int(tracemalloc.get_traced_memory()[0] - baseline)
    finally:
        tracemalloc.stop()


def test_recorded_calls_with_receivers_and_raises_hold_no_memory(
    make_module: Callable[..., types.ModuleType], scale, figures
):
    module = make_module(
        "cp_leak_calls",
        """
def charge(card, amount, **options):
    return {"ok": amount}

def refund(amount):
    raise LookupError(f"no refund of {amount}")

class Gateway:
    def ping(self, value):
        return value
""",
    )

    def blocks() -> None:
        with callpin.record(
            spy=["cp_leak_calls.charge", "cp_leak_calls.refund", "cp_leak_calls.Gateway"], outcomes="all"
        ) as rec:
            gateway = module.Gateway()
            for index in range(100):
                module.charge(f"card {index}", index, zeta=index, alpha=[index])
                try:
                    module.refund(index)
                except LookupError:
                    pass
                gateway.ping(index)
        # 600 calls and outcomes, and the gateway's construction (call and return).
        assert len(rec.frames) == 602

    # The interpreter's caches (the types' attribute caches hold the names looked up)
    # fill during the first runs; a leak keeps growing through the rest. 120,000 events
    # leaking even 8 bytes each would be 15 times the bound.
    grown = _traced_growth(blocks, warm=scale.pick(50, 100), measured=scale.pick(100, 200))
    figures.add("leaks", "recorded blocks: tracemalloc growth KB", round(grown / 1024, 1))
    assert grown < 64 * 1024


def test_many_encodes_of_failing_values_hold_no_memory(scale, figures):
    cycle: list[Any] = [1]
    cycle.append(cycle)
    deep: list[Any] = []
    for _ in range(codec.MAX_DEPTH + 2):
        deep = [deep]
    hostile = [
        {"id": KEY, "when": "2024-03-01T09:30:00Z", "n": 10**30, "f": float("nan"), "s": "a\ud800"},
        {frozenset({1, "x", KEY}), (1, 2)},
        [ReprRaises(), cycle, deep],
        codec.Record("r", (("a", [1]), ("b", 2))),
        codec.Pairs(((KEY, 1), ([1], 2))),
        uuid.UUID(KEY),
    ]
    encoder = _impl.Encoder()

    def encodes() -> None:
        for value in hostile:
            encoder.encode(value)
        encoder.encode_event(0, "l", hostile, {"k": KEY}, None, ("E", "m 0x7f0000001234"), 1, 0)

    grown = _traced_growth(encodes, warm=50, measured=scale.pick(1_000, 2_000))
    figures.add("leaks", "failing encodes: tracemalloc growth KB", round(grown / 1024, 1))
    assert grown < 64 * 1024
