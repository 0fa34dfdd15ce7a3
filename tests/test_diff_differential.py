"""Differential: the C passes of a diff give the Python reference's results on generated inputs."""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callpin import _impl, align, diff, frame_keys
from callpin.diff import Diff
from sample_logs import Spec, call, log_of, mark, raised, ret

pytestmark = pytest.mark.skipif(
    _impl.IMPLEMENTATION != "c",
    reason="the C speedups are not live (not built, or CALLPIN_PURE_PYTHON=1)",
)

if _impl.IMPLEMENTATION == "c":
    from callpin import _speedups

# The module (`callpin.diff` is also the function the package exports).
diff_module = importlib.import_module("callpin.diff")

# Few distinct values, so that sequences repeat elements (the hard case of the
# alignment), swap them, and leave gaps with and without unique elements.
keys = st.lists(st.integers(0, 6), max_size=40)
# Edits of a sequence: each element kept, dropped, doubled or replaced, then
# neighbours swapped, so the pairs look like an old log and its new run.
edits = st.lists(st.sampled_from(["keep", "keep", "keep", "drop", "double", "replace"]), max_size=60)
swaps = st.lists(st.integers(0, 60), max_size=8)
DIGESTS = st.sampled_from([0, 1, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15])


def edited(old: list[int], plan: list[str], swapped: list[int], fresh: int) -> list[int]:
    new: list[int] = []
    for k, element in enumerate(old):
        step = plan[k] if k < len(plan) else "keep"
        if step == "keep":
            new.append(element)
        elif step == "double":
            new += [element, element]
        elif step == "replace":
            new.append(fresh + k)
    for p in swapped:
        if p + 1 < len(new):
            new[p], new[p + 1] = new[p + 1], new[p]
    return new


@settings(max_examples=600, deadline=None)
@given(a=keys, b=keys, exact=st.sampled_from([0, 4, 40_000]))
def test_correspond_of_unrelated_sequences_is_the_reference(a, b, exact):
    assert _speedups.correspond(a, b, exact) == align.correspond(a, b, exact)


@settings(max_examples=600, deadline=None)
@given(old=st.lists(st.integers(0, 30), max_size=80), plan=edits, swapped=swaps, exact=st.sampled_from([0, 40_000]))
def test_correspond_of_an_edited_sequence_is_the_reference(old, plan, swapped, exact):
    new = edited(old, plan, swapped, fresh=1000)
    assert _speedups.correspond(old, new, exact) == align.correspond(old, new, exact)


@settings(max_examples=300, deadline=None)
@given(a=st.lists(DIGESTS, max_size=12), b=st.lists(DIGESTS, max_size=12))
def test_correspond_takes_the_whole_64_bit_range(a, b):
    assert _speedups.correspond(a, b, 40_000) == align.correspond(a, b, 40_000)


@settings(max_examples=100, deadline=None)
@given(order=st.permutations(range(300)))
def test_correspond_of_a_shuffle_is_the_reference(order):
    # Every element unique: the longest increasing subsequences decide everything.
    old = list(range(300))
    assert _speedups.correspond(old, order, 40_000) == align.correspond(old, order, 40_000)


# ---------------------------------------------------------------------------------------
# frame_keys: the same keys and tallies, and the same calls of the parser.


def frame_heads() -> st.SearchStrategy[bytes]:
    """Frames that open as event arrays and frames that do not, with short, long and odd labels."""
    label = st.binary(max_size=40)
    fixstr = label.filter(lambda text: len(text) < 32).map(lambda text: bytes([0xA0 | len(text)]) + text)
    str8 = label.map(lambda text: bytes([0xD9, len(text)]) + text)
    str16 = label.map(lambda text: bytes([0xDA, 0, len(text)]) + text)
    head = st.sampled_from([b"\x98\x00", b"\x98\x01", b"\x98\x03"])
    event = st.builds(
        lambda start, name, rest: start + name + rest, head, st.one_of(fixstr, str8, str16), st.binary(max_size=6)
    )
    return st.one_of(event, event, event, st.binary(max_size=8))


def keys_and_calls(implementation: Any, frames: list[bytes]) -> tuple[Any, list[tuple[bytes, int]]]:
    calls: list[tuple[bytes, int]] = []

    def parse(frame: bytes, index: int) -> bytes:
        calls.append((frame, index))
        if len(frame) < 3:
            raise ValueError(f"event {index} is malformed")
        return frame[1:3]

    try:
        return implementation(frames, parse), calls
    except ValueError as error:
        return str(error), calls


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=st.lists(frame_heads(), max_size=30))
def test_frame_keys_are_the_reference_and_parse_the_same_frames(frames):
    assert keys_and_calls(_speedups.frame_keys, frames) == keys_and_calls(frame_keys.frame_keys, frames)


# ---------------------------------------------------------------------------------------
# Whole diffs: the live passes against the reference passes, over generated logs.

EVENTS = [
    call("svc.a"),
    call("svc.a", 1),
    call("svc.b", 2, currency="usd"),
    call("svc.b", 3, currency="eur"),
    ret("svc.a", {"ok": True}),
    raised("svc.b", "ValueError", "bad"),
    mark("returned", 1),
    call("svc.c", thread=2),
    call("svc.c", 1, thread=2),
    call("x" * 40, depth=1),
]
logs = st.lists(st.sampled_from(range(len(EVENTS))), max_size=30)


def comparison(result: Diff) -> tuple[Any, ...]:
    return result.ops, result.runs, result.counts, result.summary


def reference_diff(monkeypatch: pytest.MonkeyPatch, *args: Any, **options: Any) -> Diff:
    with monkeypatch.context() as patch:
        patch.setattr(diff_module, "correspond", align.correspond)
        patch.setattr(diff_module, "frame_keys", frame_keys.frame_keys)
        return diff(*args, **options)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    old=logs,
    plan=edits,
    swapped=swaps,
    order=st.sampled_from(["strict", "thread", "none"]),
    ignore=st.sampled_from([(), ("args",), ("kwargs", "thread")]),
)
def test_a_diff_is_the_reference_diff(monkeypatch, old, plan, swapped, order, ignore):
    new = edited(old, plan, swapped, fresh=0)
    new = [k % len(EVENTS) for k in new]
    old_log = log_of(*(EVENTS[k] for k in old))
    new_log = log_of(*(EVENTS[k] for k in new))
    live = diff(old_log, new_log, order=order, ignore=ignore)
    expected = reference_diff(monkeypatch, old_log, new_log, order=order, ignore=ignore)
    assert comparison(live) == comparison(expected)


def test_a_long_diff_is_the_reference_diff(monkeypatch):
    # Long enough for the alignment's every pass: unique anchors, repeated events in
    # long gaps (pairs in order of occurrence), small exact gaps, swaps and moves.
    specs: list[Spec] = [call("svc.step", k % 97) if k % 5 else call("db.commit") for k in range(3_000)]
    new = list(specs)
    for p in range(10, 2_900, 37):
        new[p], new[p + 1] = new[p + 1], new[p]
    del new[500:520]
    new[1_000:1_000] = [call("audit.inserted", k) for k in range(15)]
    new.insert(2_000, new.pop(100))
    old_log, new_log = log_of(*specs), log_of(*new)
    live = diff(old_log, new_log)
    assert comparison(live) == comparison(reference_diff(monkeypatch, old_log, new_log))
    assert live.summary["moved"] and live.summary["missing"] and live.summary["extra"]
