"""Whatever callpin writes, callpin reads: logs recorded in hostile scenarios all read back.

A spied function that recurses into a RecursionError, called from every depth between
the top of the stack and the recursion limit, records events whose encoding runs out of
stack at every possible point; values whose repr raises (RecursionError, MemoryError,
ValueError) fail inside encoding; threads do both at once. Every log written is loaded,
verified and decoded event by event (`callpin verify`, `show` and `diff` read the same
way): the figure is the number of unreadable logs, and it must be 0. Where a value
could not be encoded, the event keeps its shape and the value is an `Unencodable` marker.
"""

from __future__ import annotations

import sys
import threading
import types
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import callpin
from callpin import Unencodable
from callpin.errors import LogFormatError

from .conftest import Figures, Scale

CHECK = "every written log reads back"

DEEP = """
def dive(level, payload, **options):
    return dive(level + 1, payload, **options)

def take(*args, **kwargs):
    return args
"""


class ReprRecurses:
    def __repr__(self) -> str:
        return repr(self)


class ReprNoMemory:
    def __repr__(self) -> str:
        raise MemoryError


class ReprRaises:
    def __repr__(self) -> str:
        raise ValueError("no repr")


@pytest.fixture
def deep() -> Iterator[types.ModuleType]:
    module = types.ModuleType("cp_deep")
    exec(DEEP, module.__dict__)
    sys.modules["cp_deep"] = module
    try:
        yield module
    finally:
        del sys.modules["cp_deep"]


def _payload() -> dict[str, Any]:
    # Nested containers, a uuid to number and an object of each hostile kind: every
    # part of the encoder is in use when the stack runs out.
    return {
        "key": uuid.UUID(int=7),
        "items": [1, (2, 3), {"x": [4, {"y": "z" * 40}]}],
        "objects": [ReprRecurses(), ReprNoMemory(), ReprRaises()],
    }


def _at_depth(levels: int, act: Callable[[], None]) -> None:
    try:
        if levels:
            _at_depth(levels - 1, act)
        else:
            act()
    except RecursionError:
        pass  # the stack ran out before the spied call (at one depth, calling `act` itself)


def _dive(module: types.ModuleType) -> None:
    try:
        module.dive(0, _payload(), tag=ReprRecurses(), key=uuid.UUID(int=8))
    except RecursionError:
        pass


class Tally:
    """The logs read back, their events, and those that could not be read (with why)."""

    def __init__(self) -> None:
        self.logs = 0
        self.events = 0
        self.markers = 0
        self.unreadable: list[str] = []

    def read(self, path: Path) -> None:
        self.logs += 1
        try:
            log = callpin.load(path)
            log.verify()
            events = list(log)
        except LogFormatError as exc:
            self.unreadable.append(f"{path.name}: {exc}")
            return
        self.events += len(events)
        for event in events:
            assert isinstance(event.args, tuple) and isinstance(event.kwargs, dict)
            values = [*event.args, *event.kwargs.values(), event.value]
            self.markers += sum(isinstance(value, Unencodable) for value in values)


def test_logs_recorded_while_the_stack_runs_out_read_back(deep, tmp_path, scale: Scale, figures: Figures):
    tally = Tally()
    limit = sys.getrecursionlimit()
    step = scale.pick(50, 1)
    for outcomes in ("raise", "all"):
        for start in range(0, limit, step):
            path = tmp_path / f"{outcomes}-{start}.cpin"
            with callpin.record(path, spy=["cp_deep.dive"], outcomes=outcomes):  # type: ignore[arg-type]
                _at_depth(start, lambda: _dive(deep))
            tally.read(path)

    # Values that fail inside encoding, near the top of the stack and at its edge.
    def hostile_calls() -> None:
        for value in (ReprRecurses(), ReprNoMemory(), ReprRaises()):
            deep.take(value, [value], key=value, nested={"v": (value,)})

    for start in range(0, limit, step * 4):
        path = tmp_path / f"hostile-{start}.cpin"
        with callpin.record(path, spy=["cp_deep.take"], outcomes="all"):
            try:
                _at_depth(start, hostile_calls)
            except RecursionError:
                pass
        tally.read(path)

    # Threads recursing at once into one recording.
    path = tmp_path / "threads.cpin"
    with callpin.record(path, spy=["cp_deep.dive"], outcomes="all"):
        workers = [threading.Thread(target=_dive, args=(deep,)) for _ in range(scale.pick(4, 16))]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    tally.read(path)

    figures.add(CHECK, "logs written (recursion from every depth, failing reprs, threads)", tally.logs)
    figures.add(CHECK, "events read back", tally.events)
    figures.add(CHECK, "values marked Unencodable in place", tally.markers)
    figures.add(CHECK, "unreadable logs", len(tally.unreadable), zero=True)
    assert tally.unreadable == []
    assert tally.markers > 0  # the scenarios did reach the encoder's failure paths


def test_a_value_whose_marker_cannot_be_written_is_a_marker_in_its_own_place(deep, tmp_path):
    # At the edge of the stack even the marker of a value cannot be written; the event
    # keeps its args array and kwargs map, and the value reads as Unencodable.
    path = tmp_path / "edge.cpin"
    with callpin.record(path, spy=["cp_deep.dive"]):
        _dive(deep)
    events = list(callpin.load(path))
    assert events and all(event.label == "cp_deep.dive" for event in events if event.kind == "call")
    deepest = [event for event in events if event.kind == "call"][-1]
    assert len(deepest.args) == 2 and set(deepest.kwargs) == {"key", "tag"}
    assert any(isinstance(value, Unencodable) for value in (*deepest.args, *deepest.kwargs.values()))
