"""Judging the runs: per log and cell `ok`, `UNSTABLE`, `AMBIENT` or `ERROR`, and errors compared by kind.

An error's *kind* is what went wrong without the words that change from run to run:
`timeout`, `exit 1`, `exit 1: FileNotFoundError`, `no log written`, `unreadable log`.
pytest's last line (`1 failed in 0.03s`) carries a timing; comparing such text would
make every run of probe report something else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..diff import diff
from ..errors import CallpinError, LogFormatError
from ..logfile import Log, load
from ..render_diff import render_op
from .cells import Cell
from .children import Run
from .report import Finding, ProbeReport

# An exception's name at the start of a line, or after pytest's `FAILED test_id - `.
_EXCEPTION = re.compile(
    r"^(?:(?:FAILED|ERROR) \S+ - )?(?:[A-Za-z_]\w*\.)*([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Warning))\b"
)
_TIMING = re.compile(r"\b\d+(?:\.\d+)?\s?(?:s|ms|seconds?)\b")


@dataclass(frozen=True)
class Failure:
    """Why a log is missing or unusable in one run: its comparable kind and the text shown."""

    kind: str
    detail: str


def error_kind(returncode: int, tail: str, timed_out: bool = False) -> str:
    """The kind of a failed run: `timeout`, or its exit code and the exception its telling line names."""
    if timed_out:
        return "timeout"
    named = _EXCEPTION.match(tail)
    return f"exit {returncode}: {named.group(1)}" if named else f"exit {returncode}"


def _without_timings(text: str) -> str:
    return _TIMING.sub("<time>", text)


def _failure(run: Run, log: str) -> Failure | Log:
    """The log `log` as `run` wrote it, or why it cannot be used."""
    path = run.logs.get(log)
    if run.timed_out or run.returncode != 0:
        kind = error_kind(run.returncode, run.stderr_tail, run.timed_out)
        why = "timed out" if run.timed_out else f"exit {run.returncode}"
        text = f"{why}: {run.stderr_tail}" if run.stderr_tail and not run.timed_out else run.stderr_tail or why
        return Failure(kind, _without_timings(text))
    if path is None:
        return Failure("no log written", "no log written")
    return _read(path)


def _read(path: Path) -> Log | Failure:
    try:
        return load(path)
    except LogFormatError as exc:
        return Failure("unreadable log", f"unreadable log ({exc.reason})")


def first_difference(old: Log, new: Log) -> str:
    """The first differing event of two logs, as the diff renders it."""
    try:
        found = diff(old, new)
    except CallpinError as exc:
        return f"cannot diff ({exc})"
    if found.same:
        return "same events, different bytes"
    return render_op(found, found.ops[0])


def _cell(log: str, runs: list[Run]) -> tuple[list[Failure], list[Log]]:
    failures: list[Failure] = []
    logs: list[Log] = []
    for run in sorted(runs, key=lambda r: r.number):
        got = _failure(run, log)
        if isinstance(got, Failure):
            failures.append(got)
        else:
            logs.append(got)
    return failures, logs


def _log_of_failure(log: str, runs: list[Run], reference: Log | None) -> str:
    """What the log a failing run still wrote shows against the baseline's, when it differs.

    A pin whose block raised still writes its log: the calls made before the failure
    often say why (a `proxies=` the environment put there).
    """
    if reference is None:
        return ""
    for run in runs:
        path = run.logs.get(log)
        read = _read(path) if path is not None else None
        if isinstance(read, Log) and read.fingerprint != reference.fingerprint:
            return f"; its log: {first_difference(reference, read)}"
    return ""


def classify(cells: list[Cell], results: list[Run]) -> ProbeReport:
    """The report of every log any run wrote, over every cell.

    A cell whose runs fail the same way (by kind) as the baseline cell's is no finding
    of its own: the capture fails there too, which the baseline's finding says.
    """
    report = ProbeReport(cells)
    by_cell: dict[str, list[Run]] = {cell.name: [] for cell in cells}
    for run in results:
        by_cell[run.cell.name].append(run)
    for log in sorted({name for run in results for name in run.logs}):
        row: dict[str, str] = {}
        stable: dict[str, Log] = {}
        baseline_kinds: set[str] | None = None
        for cell in cells:
            failures, logs = _cell(log, by_cell[cell.name])
            if failures:
                kinds = {failure.kind for failure in failures}
                if cell.group == "baseline":
                    baseline_kinds = kinds
                if cell.group == "baseline" or kinds != baseline_kinds:
                    detail = failures[0].detail + _log_of_failure(log, by_cell[cell.name], stable.get("baseline"))
                    report.findings.append(Finding(log, "error", cell.name, detail))
                row[cell.name] = "ERROR"
                continue
            moved = next((later for later in logs[1:] if later.fingerprint != logs[0].fingerprint), None)
            if moved is not None:
                report.findings.append(Finding(log, "unstable", cell.name, first_difference(logs[0], moved)))
                row[cell.name] = "UNSTABLE"
                continue
            stable[cell.name] = logs[0]
            row[cell.name] = "ok"
        reference = stable.get("baseline")
        # A log whose runs disagree in one cell can differ between any two cells by that
        # nondeterminism alone (a dict filled in memory-address order): a difference
        # from the baseline is then no evidence of the cell's setting, and is unstable.
        unstable = "UNSTABLE" in row.values()
        for cell in cells[1:]:
            candidate = stable.get(cell.name)
            if reference is not None and candidate is not None and candidate.fingerprint != reference.fingerprint:
                row[cell.name] = "UNSTABLE" if unstable else "AMBIENT"
                difference = first_difference(reference, candidate)
                if unstable:
                    difference += " (runs agree in this cell, but the log is unstable elsewhere)"
                report.findings.append(Finding(log, "unstable" if unstable else "ambient", cell.name, difference))
        report.table[log] = row
    return report
