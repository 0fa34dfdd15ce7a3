"""bite's results and report: what the test command did with each mutant, as text and as JSON."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .mutants import Mutant

OUTCOMES = ("caught", "timeout", "survived", "error")


@dataclass(frozen=True)
class Result:
    """What the test command did with one mutant."""

    mutant: Mutant
    outcome: str
    detail: str = ""


@dataclass(frozen=True)
class Report:
    """Every mutant's outcome; `lines()` is the text report, `as_json()` the machine one."""

    results: tuple[Result, ...]
    isolation: str

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    @property
    def exit_code(self) -> int:
        """1 when a mutant survived, else 2 when one could not be run, else 0."""
        if self.count("survived"):
            return 1
        return 2 if self.count("error") else 0

    def summary(self) -> str:
        counts = ", ".join(f"{self.count(outcome)} {outcome}" for outcome in OUTCOMES)
        total = len(self.results)
        return f"bite: {total} mutant{'s' if total != 1 else ''} in {self.isolation}: {counts}"

    def lines(self) -> Iterator[str]:
        rows = [("ID", "OPERATOR", "WHERE", "CALLS", "OUTCOME")]
        rows += [
            (
                r.mutant.id,
                r.mutant.operator,
                r.mutant.where,
                " <-> ".join(r.mutant.calls),
                r.outcome,
            )
            for r in self.results
        ]
        widths = [max(len(row[column]) for row in rows) for column in range(4)]
        for row in rows:
            yield ("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[4])
        for result in self.results:
            if result.outcome == "survived":
                mutant = result.mutant
                yield ""
                yield f"survived {mutant.id}: {mutant.operator} {' <-> '.join(mutant.calls)}"
                yield from mutant.diff().splitlines()
        for result in self.results:
            if result.outcome == "error":
                yield ""
                yield f"error {result.mutant.id}: {result.detail}"
        yield ""
        yield self.summary()

    def as_json(self) -> dict[str, Any]:
        return {
            "isolation": self.isolation,
            "mutants": [
                {
                    "id": r.mutant.id,
                    "operator": r.mutant.operator,
                    "file": r.mutant.path,
                    "line": r.mutant.line,
                    "end_line": r.mutant.end_line,
                    "calls": list(r.mutant.calls),
                    "outcome": r.outcome,
                    "detail": r.detail,
                    "diff": r.mutant.diff(),
                }
                for r in self.results
            ],
            "summary": {outcome: self.count(outcome) for outcome in OUTCOMES},
            "exit_code": self.exit_code,
        }
