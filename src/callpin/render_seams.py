"""The seams report: a table per function for people, one JSON document for machines."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .seams import KINDS, FunctionSeams, Seam

# A long target or callee text is cut in the middle so the table stays within 120 columns.
_WIDTH = 120
_NAME_WIDTH = 48
_LINES_WIDTH = 24


@dataclass(frozen=True)
class SeamsReport:
    """The seams of the functions found; `lines()` for people, `as_json()` for machines."""

    functions: tuple[FunctionSeams, ...]

    def counts(self) -> dict[str, int]:
        """How many distinct callees of each kind, over every function."""
        return {kind: sum(len(f.of(kind)) for f in self.functions) for kind in KINDS}

    def lines(self) -> Iterator[str]:
        file = None
        for function in self.functions:
            if function.file != file:
                file = function.file
                yield file
            yield from _function_lines(function)
        counts = self.counts()
        pinned = sum(1 for f in self.functions for seam in f.of("collaborator") if seam.pinned)
        total = len(self.functions)
        yield (
            f"seams: {total} function{'s' if total != 1 else ''}, {counts['collaborator']} collaborators"
            f" ({pinned} pinned), {counts['internal']} internal, {counts['ambient']} ambient,"
            f" {counts['unresolved']} unresolved"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "functions": [function.as_json() for function in self.functions],
            "summary": {"functions": len(self.functions), **self.counts()},
        }


def spy_line(function: FunctionSeams) -> str:
    """A ready `spy=[...]` for one function's collaborators."""
    return "spy=[" + ", ".join(repr(target) for target in function.spy()) + "]"


def _function_lines(function: FunctionSeams) -> Iterator[str]:
    kind = "" if function.function.kind == "function" else f" ({function.function.kind})"
    private = ", private" if function.function.private else ""
    yield f"  {function.function.qualname}{kind}  line {function.function.line}{private}"
    if not function.seams:
        yield "    no calls to collaborators, internal functions or ambient state"
        return
    rows = [_row(seam) for seam in function.seams]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)]
        line = "    " + "  ".join(cells)
        if len(line) + 2 + len(row[3]) <= _WIDTH:
            yield (line + "  " + row[3]).rstrip()
        else:
            # A long note goes under its row, so the table keeps to the width.
            yield line.rstrip()
            yield from textwrap.wrap(row[3], _WIDTH, initial_indent=" " * 6, subsequent_indent=" " * 6)


def _row(seam: Seam) -> tuple[str, str, str, str]:
    return seam.kind, _cut(seam.name), _where(seam), _note(seam)


def _where(seam: Seam) -> str:
    if seam.count == 1:
        return f"line {seam.lines[0]}"
    shown = [str(line) for line in seam.lines]
    if len(",".join(shown)) > _LINES_WIDTH:
        # Many call lines (a decorator on every command): the first few, the last, the count;
        # JSON has them all.
        shown = [*shown[:3], "…", shown[-1]]
    return f"lines {','.join(shown)} ({seam.count}x)"


def _note(seam: Seam) -> str:
    if seam.kind == "collaborator":
        built = "constructed; " if seam.constructs else ""
        return built + ("pinned" if seam.pinned else "not pinned")
    if seam.kind == "internal":
        return "private: keep it out of spy=, free to change" if seam.private else ""
    return seam.hint or ""


def _cut(text: str) -> str:
    if len(text) <= _NAME_WIDTH:
        return text
    keep = (_NAME_WIDTH - 1) // 2
    return text[:keep] + "…" + text[-(_NAME_WIDTH - 1 - keep) :]


def report(functions: Sequence[FunctionSeams]) -> SeamsReport:
    """The report of the functions `seams.find` gave."""
    return SeamsReport(tuple(functions))
