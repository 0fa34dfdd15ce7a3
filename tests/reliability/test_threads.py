"""Threads: many threads calling one spied function lose, duplicate and reorder nothing.

With the C speedups every call goes through the C spy and the recording's C lock; with
CALLPIN_PURE_PYTHON=1 through the reference `journal.Spy` and `threading.Lock`. Each call
carries its thread's index and sequence number, so the log shows whether any call was
lost, recorded twice or moved out of its thread's program order, and which ordinal each
thread got (docs/api.md: by first appearance, the recording thread is 1).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import callpin
from callpin import _impl
from callpin.errors import LogFormatError

from .conftest import Figures, Scale

THREADS = 16
CALLS = 10_000
# Threads that go on calling while recording stops (and its log is written).
CALLERS = 4

SPY = "callpin_threads_target.send"
SOURCE = """
def send(thread, sequence):
    return sequence
"""


@pytest.fixture
def target(make_module: Callable[..., ModuleType]) -> ModuleType:
    return make_module("callpin_threads_target", SOURCE)


def test_the_spy_under_test_is_the_live_implementations(target: ModuleType) -> None:
    # The C pass must really run the C spy; a silent fallback would test Python twice.
    with callpin.record(spy=SPY):
        wired = type(target.send._self_wrapper)
    assert wired is _impl.Spy
    assert (wired.__module__ == "callpin._speedups") == (callpin.IMPLEMENTATION == "c")


def _sequences(log: callpin.Log) -> dict[int, list[int]]:
    """Each worker's sequence numbers in log order."""
    seen: dict[int, list[int]] = {}
    for event in log:
        seen.setdefault(event.args[0], []).append(event.args[1])
    return seen


def _check_ordinals(log: callpin.Log, workers: int) -> None:
    """One ordinal per worker, 2..workers+1 (the recording thread made no call), numbered
    by first appearance in the log."""
    ordinal_of: dict[int, set[int]] = {}
    first_seen: list[int] = []
    calls = ((event.args[0], event.thread) for event in log if event.kind == "call")
    for worker, ordinal in calls:
        ordinal_of.setdefault(worker, set()).add(ordinal)
        if ordinal not in first_seen:
            first_seen.append(ordinal)
    assert all(len(ordinals) == 1 for ordinals in ordinal_of.values()), ordinal_of
    assert sorted(next(iter(o)) for o in ordinal_of.values()) == list(range(2, workers + 2))
    assert first_seen == list(range(2, workers + 2))


def _record_sixteen_threads(target: ModuleType, path: Path) -> callpin.Recording:
    start = threading.Barrier(THREADS)

    def work(worker: int) -> None:
        send = target.send
        start.wait()
        for sequence in range(CALLS):
            send(worker, sequence)

    with callpin.record(path, spy=[SPY]) as rec:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return rec


def test_sixteen_threads_record_every_call_once_in_program_order(
    target: ModuleType,
    tmp_path: Path,
    scale: Scale,
    figures: Figures,
) -> None:
    rounds = scale.pick(2, 20)
    expected = {(worker, n) for worker in range(THREADS) for n in range(CALLS)}
    recorded = lost = duplicated = unreadable = 0
    for round_ in range(rounds):
        path = tmp_path / f"round-{round_}.cpin"
        rec = _record_sixteen_threads(target, path)
        try:
            log = callpin.load(path)
            log.verify()
        except LogFormatError:
            unreadable += 1
            continue
        seen = [(event.args[0], event.args[1]) for event in log]
        recorded += len(seen)
        lost += len(expected - set(seen))
        duplicated += len(seen) - len(set(seen))
        assert len(log) == THREADS * CALLS
        assert log.fingerprint == rec.log().fingerprint
        assert {(e.kind, e.label, e.depth) for e in log} == {("call", SPY, 0)}
        sequences = _sequences(log)
        assert sorted(sequences) == list(range(THREADS))
        for worker, numbers in sequences.items():
            assert numbers == list(range(CALLS)), f"worker {worker} out of program order"
        _check_ordinals(log, THREADS)

    figures.add("threads", "implementation", callpin.IMPLEMENTATION)
    figures.add("threads", "rounds", rounds)
    figures.add("threads", "calls recorded", recorded)
    figures.add("threads", "events lost", lost, zero=True)
    figures.add("threads", "events duplicated", duplicated, zero=True)
    figures.add("threads", "unreadable logs", unreadable, zero=True)
    assert (lost, duplicated, unreadable) == (0, 0, 0)
    assert recorded == rounds * THREADS * CALLS


def test_threads_started_and_ended_while_recording_each_get_their_own_ordinal(
    target: ModuleType,
    tmp_path: Path,
    scale: Scale,
    figures: Figures,
) -> None:
    # Waves of short-lived threads: each wave starts while the one before still runs,
    # so threads begin and end throughout the recording, next to one long-lived thread.
    waves, per_wave, calls = scale.pick(6, 30), 4, CALLS // 10
    failures: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for sequence in range(calls):
                target.send(worker, sequence)
        except BaseException as exc:
            failures.append(exc)

    path = tmp_path / "churn.cpin"
    with callpin.record(path, spy=[SPY], outcomes="all"):
        steady = threading.Thread(target=work, args=(0,))
        steady.start()
        running: list[threading.Thread] = []
        for wave in range(waves):
            started = [threading.Thread(target=work, args=(1 + wave * per_wave + n,)) for n in range(per_wave)]
            for thread in started:
                thread.start()
            for thread in running:
                thread.join()
            running = started
        for thread in [*running, steady]:
            thread.join()
    workers = 1 + waves * per_wave
    log = callpin.load(path)
    log.verify()
    assert failures == []
    assert len(log) == 2 * workers * calls
    # Each thread's calls and returns alternate, in its program order.
    by_worker: dict[int, list[tuple[str, int]]] = {}
    pending: dict[int, int] = {}
    for event in log:
        if event.kind == "call":
            worker, sequence = event.args
            pending[event.thread] = worker
        else:
            worker, sequence = pending.pop(event.thread), event.value
        by_worker.setdefault(worker, []).append((event.kind, sequence))
    for worker, seen in by_worker.items():
        assert seen == [(kind, n) for n in range(calls) for kind in ("call", "return")], worker
    _check_ordinals(log, workers)
    figures.add("threads", "threads started and ended while recording", workers)


class _Callers:
    """CALLERS threads calling the target until told to stop, counting their calls."""

    def __init__(self, target: ModuleType) -> None:
        self.target = target
        self.made = [0] * CALLERS
        self.failures: list[BaseException] = []
        self._start = threading.Barrier(CALLERS + 1)
        self._done = threading.Event()
        self._threads = [threading.Thread(target=self._work, args=(n,)) for n in range(CALLERS)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()
        self._start.wait()

    def wait_for(self, calls: int) -> list[int]:
        """Wait until every thread has made `calls` more calls; the counts before."""
        before = list(self.made)
        while min(m - b for m, b in zip(self.made, before, strict=True)) < calls:
            threading.Event().wait(0.001)
        return before

    def stop(self) -> None:
        self._done.set()
        for thread in self._threads:
            thread.join()

    def _work(self, worker: int) -> None:
        # A reference to the spied function kept from inside the block, and the
        # module attribute, which is restored when recording stops.
        kept = self.target.send
        self._start.wait()
        try:
            sequence = 0
            while not self._done.is_set():
                (kept if sequence % 2 else self.target.send)(worker, sequence)
                sequence += 1
                self.made[worker] = sequence
                if sequence % 100 == 0:
                    # Let the recording thread run: it stops and writes meanwhile.
                    time.sleep(0)
        except BaseException as exc:
            self.failures.append(exc)


def test_calls_after_stop_are_not_recorded_and_do_not_fail(
    target: ModuleType,
    tmp_path: Path,
    scale: Scale,
    figures: Figures,
) -> None:
    rounds = scale.pick(3, 20)
    recorded_after_stop = failed_calls = 0
    for round_ in range(rounds):
        path = tmp_path / f"stopped-{round_}.cpin"
        callers = _Callers(target)
        original = target.send
        with callpin.record(path, spy=[SPY], outcomes="all") as rec:
            callers.start()
            callers.wait_for(200)
        # Recording has stopped; the threads go on calling for a while.
        frozen = len(rec.events)
        before = callers.wait_for(200)
        callers.stop()
        failed_calls += len(callers.failures)
        recorded_after_stop += len(rec.events) - frozen
        log = callpin.load(path)
        log.verify()
        assert len(log) == frozen
        # Every thread's recorded calls are a gapless prefix of the calls it made
        # before recording stopped.
        calls: dict[int, list[int]] = {}
        for event in log:
            if event.kind == "call":
                calls.setdefault(event.args[0], []).append(event.args[1])
        assert sorted(calls) == list(range(CALLERS))
        for worker, numbers in calls.items():
            assert numbers == list(range(len(numbers))), worker
            assert len(numbers) <= before[worker]
        assert target.send is original
    figures.add("threads", "calls after stop recorded", recorded_after_stop, zero=True)
    figures.add("threads", "calls failing after stop", failed_calls, zero=True)
    assert (recorded_after_stop, failed_calls) == (0, 0)
