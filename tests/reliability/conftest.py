"""The reliability suite's shared parts: its size, and the figures it reports.

Every test here runs in `make test` at a quick size and in `make reliability` at the
long size (`CALLPIN_RELIABILITY=long`). A test measures what it checks and hands the
numbers to the `figures` fixture; `make reliability` collects them from every xdist
worker through the file named by `CALLPIN_FIGURES` and prints them as one table
(`tests/reliability/table.py`). A figure marked `zero=True` is a promise: the test
itself asserts it, and the table flags it when it is not 0.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TypeVar

import pytest

T = TypeVar("T")


@dataclass(frozen=True)
class Scale:
    """How hard the suite pushes: `quick` inside `make test`, `long` in `make reliability`."""

    long: bool

    def pick(self, quick: T, long: T) -> T:
        return long if self.long else quick


class Figures:
    """Figures of one check, appended as JSON lines to `$CALLPIN_FIGURES` when it is set."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.seen: list[dict[str, object]] = []

    def add(self, check: str, figure: str, value: float | int | str, *, zero: bool = False) -> None:
        row = {"check": check, "figure": figure, "value": value, "zero": zero}
        self.seen.append(row)
        if self.path:
            line = json.dumps(row, sort_keys=True) + "\n"
            # One write per row on an O_APPEND descriptor: rows of parallel workers never mix.
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode())
            finally:
                os.close(fd)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here + os.sep):
            item.add_marker(pytest.mark.reliability)


@pytest.fixture(scope="session")
def scale() -> Scale:
    value = os.environ.get("CALLPIN_RELIABILITY", "quick")
    if value not in ("quick", "long"):
        raise pytest.UsageError(f"CALLPIN_RELIABILITY must be quick or long, not {value!r}")
    return Scale(long=value == "long")


@pytest.fixture(scope="session")
def figures() -> Figures:
    return Figures(os.environ.get("CALLPIN_FIGURES") or None)
