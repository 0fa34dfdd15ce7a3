"""probe's report: the table of outcomes per log and cell, the findings, the VOLATILE line, JSON."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .cells import GROUPS, Cell

WIDTH = 120
# The text table writes each outcome in a few letters so that a dozen cells fit
# WIDTH columns; the legend under it spells them out. JSON keeps the words.
_SHORT_OUTCOMES = {"ok": "ok", "AMBIENT": "AMB", "UNSTABLE": "UNS", "ERROR": "ERR"}
_GAP = 2
_MIN_LOG = 20
_TITLES = (
    ("unstable", "unstable (runs in one cell differ; a log unstable anywhere is judged ambient nowhere)"),
    ("ambient", "ambient (stable, but different from the baseline cell)"),
    ("error", "error (the command failed or wrote no log)"),
)


@dataclass
class Finding:
    """A volatile log: which signal, in which cell, the error's kind, and what happened."""

    log: str
    signal: str  # unstable, ambient, error
    cell: str
    detail: str

    def as_json(self) -> dict[str, str]:
        return {"log": self.log, "signal": self.signal, "cell": self.cell, "detail": self.detail}


def shorten(name: str, width: int) -> str:
    """`name` in at most `width` characters, keeping its end (the file name): `…/b/c.cpin`."""
    if len(name) <= width:
        return name
    tail = name[len(name) - width + 1 :]
    slash = tail.find("/")
    return "…" + (tail[slash:] if 0 <= slash < len(tail) - 1 else tail)


def _wrapped(words: list[str], first: str, width: int) -> Iterator[str]:
    """`words` after `first`, two spaces apart, in lines of at most `width`, continued under the first word."""
    line, fresh = first, True
    for word in words:
        if not fresh and len(line) + 2 + len(word) > width:
            yield line
            line, fresh = " " * len(first), True
        line, fresh = (line + word if fresh else f"{line}  {word}"), False
    if not fresh:
        yield line


@dataclass
class ProbeReport:
    """Per log and cell, the outcome (`ok`, `UNSTABLE`, `AMBIENT`, `ERROR`), plus findings.

    `failed` says whether the baseline cell itself failed for a log: then nothing can
    be compared with it, and probe exits 2 after the report.
    """

    cells: list[Cell]
    table: dict[str, dict[str, str]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def volatile(self) -> list[str]:
        """The settings (cell groups) found volatile and `unstable`, in a fixed order.

        An error of the baseline cell is no setting's doing: it is reported, never listed.
        """
        names: set[str] = set()
        for finding in self.findings:
            if finding.signal == "unstable":
                names.add("unstable")
            elif finding.cell != "baseline":
                names.add(finding.cell.split("=", 1)[0])
        return [name for name in ("unstable", *GROUPS) if name in names]

    @property
    def failed(self) -> bool:
        return any(f.signal == "error" and f.cell == "baseline" for f in self.findings)

    def verdict_line(self) -> str:
        return "VOLATILE: " + (", ".join(self.volatile) if self.volatile else "none")

    def _names(self) -> dict[str, str]:
        """Each log's name as the table shows it, shortened to leave room for every cell."""
        columns = sum(max(len(cell.short), 3) + _GAP for cell in self.cells)
        room = max(_MIN_LOG, WIDTH - columns)
        return {log: shorten(log, room) for log in self.table}

    def _table(self) -> Iterator[str]:
        widths = [max(len(cell.short), 3) for cell in self.cells]
        names = self._names()
        width = max([len("log"), *map(len, names.values())])
        header = ["log".ljust(width), *(c.short.ljust(w) for c, w in zip(self.cells, widths, strict=True))]
        yield (" " * _GAP).join(header).rstrip()
        for log, row in sorted(self.table.items()):
            outcomes = [row.get(c.name, "-") for c in self.cells]
            shown = [_SHORT_OUTCOMES.get(o, o).ljust(w) for o, w in zip(outcomes, widths, strict=True)]
            yield (" " * _GAP).join([names[log].ljust(width), *shown]).rstrip()

    def _legend(self) -> Iterator[str]:
        yield from _wrapped([f"{cell.short} {cell.name}" for cell in self.cells], "cells: ", WIDTH)
        outcomes = "AMB ambient, UNS unstable, ERR error, - no log"
        shortened = {log for log, name in self._names().items() if name != log}
        if shortened:
            # The findings below name their logs in full; the JSON names every log.
            below = any(finding.log in shortened for finding in self.findings)
            outcomes += f"; full log names {'below and ' if below else ''}in --format json"
        yield outcomes

    def lines(self) -> Iterator[str]:
        yield from self._table()
        yield ""
        yield from self._legend()
        for signal, title in _TITLES:
            found = [f for f in self.findings if f.signal == signal]
            if found:
                yield ""
                yield f"{title}:"
                for finding in found:
                    yield f"  {finding.log} under {finding.cell}: {finding.detail}"

    def as_json(self) -> dict[str, Any]:
        return {
            "cells": [cell.name for cell in self.cells],
            "table": self.table,
            "findings": [f.as_json() for f in self.findings],
            "volatile": self.volatile,
        }
