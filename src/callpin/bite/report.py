"""bite's results and report: each mutant's outcome and what caught it, as text and JSON; shard reports merged.

A caught mutant says what caught it: `drift` (a pin reported a difference), `assert`
(a test's assertion or its own verdict), `error` (any other exception: the mutated code
crashed), or `exit` (the command failed and reported nothing bite could read). One
caught only by `error` is *weak*: any test that runs the code would have caught it, so
it shows nothing about the harness watching the call.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from .mutants import OPERATORS, Mutant

OUTCOMES = ("caught", "timeout", "survived", "error")
CAUGHT_BY = ("drift", "assert", "error", "exit")


@dataclass(frozen=True)
class Result:
    """What the test command did with one mutant."""

    mutant: Mutant
    outcome: str
    detail: str = ""
    # For a caught mutant: one of CAUGHT_BY.
    caught_by: str | None = None

    @property
    def weak(self) -> bool:
        """Caught only by a crash of the mutated code, which shows nothing of the harness."""
        return self.caught_by == "error"


def _exit_code(summary: Mapping[str, int]) -> int:
    """1 when a mutant survived, else 2 when one could not be run, else 0."""
    if summary.get("survived"):
        return 1
    return 2 if summary.get("error") else 0


def _table(rows: list[tuple[str, ...]]) -> Iterator[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]) - 1)]
    for row in rows:
        yield "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False)) + "  " + row[-1]


def _calls(calls: Sequence[str], by_name: bool) -> str:
    """A mutant's calls as the reports print them; `(by name)` when --loose matched one by its name alone."""
    return " <-> ".join(calls) + (" (by name)" if by_name else "")


def plan_lines(mutants: Sequence[Mutant]) -> Iterator[str]:
    """The planned mutants, one a line (id, operator, place, calls), for `--list`."""
    if mutants:
        rows: list[tuple[str, ...]] = [("ID", "OPERATOR", "WHERE", "CALLS")]
        rows += [(m.id, m.operator, m.where, _calls(m.calls, m.loose)) for m in mutants]
        yield from _table(rows)
    yield f"bite: {len(mutants)} mutant{'s' if len(mutants) != 1 else ''} planned; nothing run"


def _outcome_cell(mutant: Mapping[str, Any]) -> str:
    by = mutant.get("caught_by")
    return f"{mutant['outcome']} ({by})" if mutant["outcome"] == "caught" and by else str(mutant["outcome"])


def _weak_line(mutant: Mapping[str, Any]) -> str:
    calls = " and ".join(dict.fromkeys(mutant["calls"]))
    return (
        f"weak {mutant['id']}: caught only by {mutant['detail']}: the mutated code crashed, as it would "
        f"under any test; only a drift or an assertion shows the harness watches {calls}"
    )


def _summary_line(data: Mapping[str, Any]) -> str:
    summary = data["summary"]
    by = ", ".join(f"{kind} {n}" for kind, n in data.get("caught_by", {}).items() if n)
    counts = [
        f"{summary[outcome]} {outcome}" + (f" ({by})" if outcome == "caught" and by else "") for outcome in OUTCOMES
    ]
    total = len(data["mutants"])
    shard = f" (shard {data['shard']})" if data.get("shard") else ""
    weak = f"; {len(data['weak'])} weak" if data.get("weak") else ""
    return f"bite: {total} mutant{'s' if total != 1 else ''}{shard} in {data['isolation']}: {', '.join(counts)}{weak}"


def _lines(data: Mapping[str, Any]) -> Iterator[str]:
    """The text report of a report's JSON form: the table, survivors' diffs, weak catches, errors, a summary."""
    mutants = data["mutants"]
    rows: list[tuple[str, ...]] = [("ID", "OPERATOR", "WHERE", "CALLS", "OUTCOME")]
    rows += [
        (
            m["id"],
            m["operator"],
            f"{m['file']}:{m['line']}",
            _calls(m["calls"], m.get("matched") == "name"),
            _outcome_cell(m),
        )
        for m in mutants
    ]
    yield from _table(rows)
    for m in mutants:
        if m["outcome"] == "survived":
            yield ""
            yield f"survived {m['id']}: {m['operator']} {' <-> '.join(m['calls'])}"
            yield from m["diff"].splitlines()
    weak = [m for m in mutants if m.get("weak")]
    if weak:
        yield ""
    for m in weak:
        yield _weak_line(m)
    for m in mutants:
        if m["outcome"] == "error":
            yield ""
            yield f"error {m['id']}: {m['detail']}"
    yield ""
    yield _summary_line(data)


def _verdicts(mutants: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The counts of a report's mutants: by outcome, by what caught them, and the weak ones."""
    return {
        "summary": {outcome: sum(1 for m in mutants if m["outcome"] == outcome) for outcome in OUTCOMES},
        "caught_by": {kind: sum(1 for m in mutants if m.get("caught_by") == kind) for kind in CAUGHT_BY},
        "weak": [m["id"] for m in mutants if m.get("weak")],
    }


@dataclass(frozen=True)
class Report:
    """Every mutant's outcome; `lines()` is the text report, `as_json()` the machine one."""

    results: tuple[Result, ...]
    isolation: str
    shard: tuple[int, int] | None = None

    def count(self, outcome: str) -> int:
        return sum(1 for result in self.results if result.outcome == outcome)

    @property
    def exit_code(self) -> int:
        """1 when a mutant survived, else 2 when one could not be run, else 0."""
        return _exit_code({outcome: self.count(outcome) for outcome in OUTCOMES})

    def summary(self) -> str:
        return list(_lines(self.as_json()))[-1]

    def lines(self) -> Iterator[str]:
        return _lines(self.as_json())

    def as_json(self) -> dict[str, Any]:
        mutants = [
            {
                "id": r.mutant.id,
                "operator": r.mutant.operator,
                "file": r.mutant.path,
                "line": r.mutant.line,
                "end_line": r.mutant.end_line,
                "calls": list(r.mutant.calls),
                "matched": "name" if r.mutant.loose else "binding",
                "outcome": r.outcome,
                "caught_by": r.caught_by,
                "weak": r.weak,
                "detail": r.detail,
                "diff": r.mutant.diff(),
            }
            for r in self.results
        ]
        return {
            "isolation": self.isolation,
            "shard": None if self.shard is None else f"{self.shard[0]}/{self.shard[1]}",
            "mutants": mutants,
            **_verdicts(mutants),
            "exit_code": self.exit_code,
        }


@dataclass(frozen=True)
class MergedReport:
    """Shard reports combined into the report one run would give, in the same order."""

    data: dict[str, Any]

    @property
    def exit_code(self) -> int:
        return int(self.data["exit_code"])

    def lines(self) -> Iterator[str]:
        return _lines(self.data)

    def as_json(self) -> dict[str, Any]:
        return self.data


_OPERATOR_ORDER = {name: rank for rank, name in enumerate(OPERATORS)}


def _sort_key(mutant: Mapping[str, Any]) -> tuple[str, int, int, int, str]:
    # The order make_mutants gives within a file, with the files in name order as a
    # snapshot lists them, so a merge reads like one run.
    return (
        mutant["file"],
        mutant["line"],
        _OPERATOR_ORDER.get(mutant["operator"], 99),
        mutant["end_line"],
        mutant["id"],
    )


def merge(reports: Sequence[Mapping[str, Any]], names: Sequence[str]) -> MergedReport:
    """One report from the JSON reports of the shards of a run; `names` name them in errors."""
    mutants: dict[str, dict[str, Any]] = {}
    isolation: set[str] = set()
    for data, name in zip(reports, names, strict=True):
        try:
            entries = list(data["mutants"])
            isolation.add(str(data["isolation"]))
            for entry in entries:
                entry_id = str(entry["id"])
                if entry_id in mutants:
                    raise UsageError(
                        f"mutant {entry_id} is in two reports (the second is {name}); merge each shard once"
                    )
                if entry["outcome"] not in OUTCOMES:
                    raise UsageError(f"{name}: unknown outcome {entry['outcome']!r}")
                if entry.get("caught_by") not in (None, *CAUGHT_BY):
                    raise UsageError(f"{name}: unknown way of being caught {entry['caught_by']!r}")
                mutants[entry_id] = dict(entry)
        except (KeyError, TypeError) as exc:
            raise UsageError(f"{name} is not a bite JSON report (missing {exc})") from None
    ordered = sorted(mutants.values(), key=_sort_key)
    verdicts = _verdicts(ordered)
    ran = sorted(isolation - {"no scratch copies"}) or sorted(isolation)
    return MergedReport(
        {
            "isolation": " and ".join(ran),
            "shard": None,
            "mutants": ordered,
            **verdicts,
            "exit_code": _exit_code(verdicts["summary"]),
        }
    )
