"""The C passes of a diff: the chooser, bad arguments, a parser that changes its list, memory errors, leaks."""

from __future__ import annotations

import gc
import importlib
import os
import subprocess
import sys
import textwrap

import pytest

from callpin import _impl
from sample_logs import call, log_of

pytestmark = pytest.mark.skipif(
    _impl.IMPLEMENTATION != "c",
    reason="the C speedups are not live (not built, or CALLPIN_PURE_PYTHON=1)",
)

if _impl.IMPLEMENTATION == "c":
    from callpin import _speedups

diff_module = importlib.import_module("callpin.diff")


def test_the_diff_runs_the_c_passes_when_the_speedups_are_live():
    assert _impl.correspond is _speedups.correspond
    assert _impl.frame_keys is _speedups.frame_keys
    assert diff_module.correspond is _speedups.correspond
    assert diff_module.frame_keys is _speedups.frame_keys


def test_the_pure_python_switch_gives_the_diff_the_reference_passes():
    script = (
        "import importlib; from callpin import _impl, align, frame_keys;"
        "d = importlib.import_module('callpin.diff');"
        "print(_impl.IMPLEMENTATION, d.correspond is align.correspond, d.frame_keys is frame_keys.frame_keys)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "CALLPIN_PURE_PYTHON": "1"},
        check=True,
    )
    assert out.stdout.split() == ["python", "True", "True"]


# ---------------------------------------------------------------------------------------
# Arguments the C code refuses, and a parser that changes what it is given.


@pytest.mark.parametrize(
    ("a", "error"),
    [([1, "x"], TypeError), ([1, 2.0], TypeError), ([-1], OverflowError), ([2**64], OverflowError), (3, TypeError)],
)
def test_correspond_takes_only_ints_of_64_bits(a, error):
    with pytest.raises(error):
        _speedups.correspond(a, [1, 2], 40_000)
    with pytest.raises(error):
        _speedups.correspond([1, 2], a, 40_000)


def test_frame_keys_takes_only_a_list_of_bytes():
    with pytest.raises(TypeError):
        _speedups.frame_keys((b"\x98\x00\xa1a",), bytes)
    with pytest.raises(TypeError, match="bytes"):
        _speedups.frame_keys([b"\x98\x00\xa1a", "text"], bytes)


def test_a_parser_returning_other_than_bytes_is_a_type_error():
    with pytest.raises(TypeError, match="must be bytes"):
        _speedups.frame_keys([b"\x98\x00\xda\x00\x01a"], lambda frame, index: index)


def test_a_parser_that_empties_the_list_ends_the_walk_without_a_crash():
    frames = [b"\x98\x00\xda\x00\x01a", b"\x98\x00\xa1b", b"\x98\x00\xa1c"]

    def parse(frame: bytes, index: int) -> bytes:
        frames.clear()
        return frame[1:3]

    keys, key_of, counts, firsts = _speedups.frame_keys(frames, parse)
    assert (keys, key_of, counts, firsts) == ([b"\x00\xda"], [0], [1], [0])


def test_a_parser_that_grows_the_list_is_an_error():
    frames = [b"\x98\x00\xda\x00\x01a", b"\x98\x00\xa1b"]

    def parse(frame: bytes, index: int) -> bytes:
        frames.append(b"\x98\x00\xa1c")
        return frame[1:3]

    with pytest.raises(RuntimeError, match="grew"):
        _speedups.frame_keys(frames, parse)


def test_a_parser_error_propagates_from_the_first_frame_it_fails_on():
    frames = [b"\x98\x00\xa1a", b"\x98\x00\xda\x00\x01b", b"\x98\x00\xda\x00\x01c"]
    seen: list[int] = []

    def parse(frame: bytes, index: int) -> bytes:
        seen.append(index)
        raise ValueError(f"event {index}")

    with pytest.raises(ValueError, match="event 1"):
        _speedups.frame_keys(frames, parse)
    assert seen == [1]


# ---------------------------------------------------------------------------------------
# Memory errors and leaks.


def test_memory_errors_at_every_allocation_leave_no_crash_and_working_passes():
    pytest.importorskip("_testcapi", reason="needs CPython's _testcapi to fail allocations")
    # Fail the n-th allocation for every n: each failure must end as a MemoryError
    # (or, past the last allocation, the right result), and later calls stay correct.
    script = textwrap.dedent(
        """
        import _testcapi
        from callpin import _speedups, align, frame_keys
        a = [k % 7 for k in range(60)] + list(range(100, 140))
        b = a[:20] + [a[21], a[20]] + a[22:50] + [999] + a[55:] + [k % 7 for k in range(30)]
        frames = [b"\\x98\\x00\\xa1" + bytes([97 + k % 5]) + b"\\xc0" for k in range(40)]
        frames[7] = b"\\x98\\x00\\xda\\x00\\x01z"
        parse = lambda frame, index: frame[1:3]
        calls = [
            (lambda: _speedups.correspond(a, b, 40_000), lambda: align.correspond(a, b, 40_000)),
            (lambda: _speedups.correspond(a, b, 0), lambda: align.correspond(a, b, 0)),
            (lambda: _speedups.frame_keys(frames, parse), lambda: frame_keys.frame_keys(frames, parse)),
        ]
        outcomes = set()
        for live, reference in calls:
            expected = reference()
            for start in range(1, 400):
                _testcapi.set_nomemory(start, start + 1)
                try:
                    outcomes.add("same" if live() == expected else "different")
                except MemoryError:
                    outcomes.add("MemoryError")
                finally:
                    _testcapi.remove_mem_hooks()
                assert live() == expected
        print(" ".join(sorted(outcomes)))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["MemoryError", "same"]


def test_the_c_passes_leave_the_reference_counts_of_their_arguments_as_they_were():
    a = [10**18 + k % 9 for k in range(200)]
    b = list(reversed(a))
    frames = [b"\x98\x00\xa2ab\xc0" for _ in range(50)] + [b"\x98\x01\xda\x00\x01c"]

    def parse(frame: bytes, index: int) -> bytes:
        return frame[1:3]

    before = [sys.getrefcount(x) for x in (a, b, a[0], a[5], frames, frames[0], frames[-1], parse)]
    for _ in range(50):
        _speedups.correspond(a, b, 40_000)
        _speedups.frame_keys(frames, parse)
    gc.collect()
    after = [sys.getrefcount(x) for x in (a, b, a[0], a[5], frames, frames[0], frames[-1], parse)]
    assert after == before


def test_repeated_diffs_do_not_grow_memory():
    tracemalloc = pytest.importorskip("tracemalloc")
    old = log_of(*(call("svc.step", k % 13) for k in range(400)))
    new = log_of(*(call("svc.step", k % 11) for k in range(400)))
    a = [k % 13 for k in range(2_000)]
    b = [k % 11 for k in range(2_000)]
    for _ in range(3):
        diff_module.diff(old, new)
        _speedups.correspond(a, b, 40_000)
    tracemalloc.start()
    try:
        first = tracemalloc.get_traced_memory()[0]
        for _ in range(30):
            diff_module.diff(old, new)
            _speedups.correspond(a, b, 40_000)
            _speedups.correspond(a, b, 0)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - first
    finally:
        tracemalloc.stop()
    assert grown < 64 * 1024
