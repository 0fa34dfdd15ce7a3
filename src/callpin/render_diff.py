"""Turn a diff into readable text or JSON.

`rows(diff, context)` lays a diff out once, as the sequence of lines a reader sees
(differences, equal events around them, and markers for the equal stretches left
out); `render_text` prints those rows, and the side-by-side HTML report
(`render_html.py`) draws the same rows.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import TYPE_CHECKING, Any, NamedTuple

from .cases import CASE_MARK
from .diff import Counts, Op
from .event import render_event
from .fields import ABSENT, FieldChange
from .render_log import json_text, jsonable
from .text import counted, printable, value_text

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .diff import Diff, Run
    from .event import Event

_COLORS = {"moved": "33", "missing": "31", "extra": "32", "changed": "36", "skip": "2"}


def render_field(change: FieldChange) -> str:
    """`args[1]: 1500 → 0`; an absent side reads `(absent)`."""
    return printable(f"{change.path}: {value_text(change.old)} → {value_text(change.new)}")


class Row(NamedTuple):
    """One line of a laid-out diff.

    `kind` is "equal", one of the op kinds, or "skip" (`hidden` equal events left
    out). `event` is the new side's event, the old side's for "missing".
    """

    kind: str
    old: int | None
    new: int | None
    event: Event | None
    fields: tuple[FieldChange, ...] = ()
    hidden: int = 0


def rows(diff: Diff, *, context: int = 3, origins: bool = False) -> list[Row]:
    """The differences in reading order, with up to `context` equal events around each.

    With `origins`, each moved event is also placed where it stood in the old log,
    as a "moved" row with `new` None (and its own context), so the old side reads in
    old order: what a side-by-side view needs. Only the events shown are decoded.
    With order "none" there is no alignment, so the differences are listed without
    context.
    """
    if diff.order == "none":
        return [_op_row(diff, op) for op in diff.ops]
    # Positions on a doubled axis: new event j sits at 2j + 1, and an event of the
    # old side only, shown before new event p, sits at 2p, so sorting places each
    # row; old-side rows at one spot keep their old order.
    starts = [run.new for run in diff.runs]
    placed: list[tuple[int, int, int, Row]] = []
    shown: set[int] = set()

    def place(at: int, on_new: bool, row: Row) -> None:
        placed.append((2 * at + on_new, 0, -1 if on_new else row.old or 0, row))
        shown.update(_equal_before(diff.runs, starts, at, context))
        shown.update(_equal_from(diff.runs, starts, at + on_new, context))

    for op in diff.ops:
        place(diff.position(op), op.new is not None, _op_row(diff, op))
        if origins and op.op == "moved":
            assert op.old is not None
            place(diff.position_in_new(op.old), False, Row("moved", op.old, None, diff.old[op.old]))
    for j in shown:
        event = diff.new[j]
        placed.append((2 * j + 1, 1, -1, Row("equal", diff.aligned_old(j), j, event)))
    placed.sort(key=lambda item: item[:3])
    laid_out: list[Row] = []
    last = -1
    for spot, _, _, row in placed:
        hidden = _between(last, spot)
        if hidden:
            laid_out.append(Row("skip", None, None, None, hidden=hidden))
        laid_out.append(row)
        last = max(last, spot)
    end = 2 * len(diff.new) + 1
    if laid_out and _between(last, end):
        laid_out.append(Row("skip", None, None, None, hidden=_between(last, end)))
    return laid_out


def _between(low: int, high: int) -> int:
    """How many new events (at odd spots) lie strictly between two spots."""
    first = low + 1 if low % 2 == 0 else low + 2
    last = high - 1 if high % 2 == 0 else high - 2
    return 0 if last < first else (last - first) // 2 + 1


def _equal_before(runs: Sequence[Run], starts: list[int], end: int, count: int) -> list[int]:
    """Up to `count` equal new indices below `end`, nearest first (from the aligned runs)."""
    found: list[int] = []
    k = bisect_left(starts, end) - 1
    while k >= 0 and len(found) < count:
        run = runs[k]
        top = min(end, run.new + run.length)
        found.extend(range(top - 1, max(run.new, top - (count - len(found))) - 1, -1))
        k -= 1
    return found


def _equal_from(runs: Sequence[Run], starts: list[int], start: int, count: int) -> list[int]:
    """Up to `count` equal new indices from `start` up, nearest first (from the aligned runs)."""
    found: list[int] = []
    k = max(bisect_right(starts, start) - 1, 0)
    while k < len(runs) and len(found) < count:
        run = runs[k]
        low = max(start, run.new)
        found.extend(range(low, min(run.new + run.length, low + count - len(found))))
        k += 1
    return found


def _op_row(diff: Diff, op: Op) -> Row:
    if op.new is not None:
        return Row(op.op, op.old, op.new, diff.new[op.new], op.fields)
    assert op.old is not None
    return Row(op.op, op.old, op.new, diff.old[op.old], op.fields)


def render_text(diff: Diff, *, context: int = 3, color: bool = False, limit: int | None = None) -> str:
    """The diff for a reader: one line per op with its old and new indices and the event,
    `context` equal events around each, then the count table and a summary line.

    With `limit`, at most that many lines of rows are shown, then one line saying how
    many differences were left out; the count table then lists only the labels whose
    counts differ. A failure message stays readable however large the drift.
    """
    width = max(len(str(max(len(diff.old), len(diff.new), 1) - 1)), 3)
    lines = [
        f"old: {diff.old.path or '(in memory)'} ({counted(len(diff.old), 'event')})",
        f"new: {diff.new.path or '(in memory)'} ({counted(len(diff.new), 'event')})",
    ]
    if diff.order != "strict" or diff.ignore:
        ignoring = f", ignoring {', '.join(diff.ignore)}" if diff.ignore else ""
        lines.append(f"order: {diff.order}{ignoring}")
    laid_out = rows(diff, context=context)
    if laid_out:
        lines.append(f"{'':8} {'old':>{width}} {'new':>{width}}")
    shown_lines = 0
    shown_ops = 0
    calls = repeated_changes(diff)
    first: dict[str, int] = {}
    cases = _CaseFinder(diff)
    for row in laid_out:
        row_lines = _row_lines(row, width, color, calls, first)
        heading = cases.heading(row)
        if heading is not None:
            row_lines.insert(0, f"{'':8} {heading}")
        if limit is not None and shown_lines + len(row_lines) > limit:
            left = len(diff.ops) - shown_ops
            lines.append(f"… {counted(left, 'more difference')} not shown")
            return "\n".join([*lines, render_stat(diff, color=color, changed_only=True)])
        shown_lines += len(row_lines)
        shown_ops += row.kind not in ("equal", "skip")
        lines.extend(row_lines)
    return "\n".join([*lines, render_stat(diff, color=color)])


class _CaseFinder:
    """The case (of `callpin.cases`) each difference falls in: the nearest `case` mark before it.

    A heading is given when a difference falls in another case than the one before it,
    so a drift in a log of many cases names its case however far its mark is. Logs
    without case marks (their counts say so) are never searched.
    """

    def __init__(self, diff: Diff) -> None:
        self._sides = (diff.old, diff.new) if CASE_MARK in diff.counts else None
        self._memo: tuple[dict[int, str | None], dict[int, str | None]] = ({}, {})
        self._current: str | None = None

    def heading(self, row: Row) -> str | None:
        if self._sides is None or row.kind in ("equal", "skip"):
            return None
        side, index = (1, row.new) if row.new is not None else (0, row.old)
        if index is None:
            return None
        case = self._case(side, index)
        if case is None or case == self._current:
            return None
        self._current = case
        return f"in case {case}"

    def _case(self, side: int, index: int) -> str | None:
        assert self._sides is not None
        log, memo = self._sides[side], self._memo[side]
        visited: list[int] = []
        found: str | None = None
        while index >= 0:
            if index in memo:
                found = memo[index]
                break
            visited.append(index)
            event = log[index]
            if event.kind == "mark" and event.label == CASE_MARK:
                found = str(event.value)
                break
            index -= 1
        for seen in visited:
            memo[seen] = found
        return found


def repeated_changes(diff: Diff) -> dict[str, list[int]]:
    """Each field change (as `render_field` writes it) found in more than one changed op,
    with the new indices of the events it occurs in."""
    where: dict[str, list[int]] = {}
    for op in diff.ops:
        if op.op == "changed" and op.new is not None:
            for change in op.fields:
                where.setdefault(render_field(change), []).append(op.new)
    return {text: events for text, events in where.items() if len(events) > 1}


def _row_lines(
    row: Row, width: int, color: bool, calls: dict[str, list[int]] | None = None, first: dict[str, int] | None = None
) -> list[str]:
    if row.kind == "skip":
        text = f"{'':8} {'…':>{width}} {'':>{width}}  ({counted(row.hidden, 'equal event')})"
        return [_paint(text, "skip", color)]
    old = "-" if row.old is None else str(row.old)
    new = "-" if row.new is None else str(row.new)
    tag = "" if row.kind == "equal" else row.kind
    assert row.event is not None
    line = f"{tag:8} {old:>{width}} {new:>{width}}  {render_event(row.event)}"
    out = [_paint(line, row.kind, color)]
    pad = " " * (8 + 2 * width + 6)
    calls = calls or {}
    first = {} if first is None else first
    earlier: list[int] = []
    for change in row.fields:
        text = render_field(change)
        events = calls.get(text)
        if events is None:
            out.append(_paint(pad + text, row.kind, color))
        elif text in first:
            # A change repeated across calls is written out once, where it first occurs.
            earlier.append(first[text])
        else:
            first[text] = events[0]
            listed = _numbers(events)
            out.append(_paint(f"{pad}{text}  (in {len(events)} calls: {listed})", row.kind, color))
    if earlier:
        listed = _numbers(sorted(set(earlier)))
        out.append(_paint(f"{pad}(and {counted(len(earlier), 'change')} shown at {listed})", row.kind, color))
    return out


def _numbers(events: list[int], shown: int = 8) -> str:
    """Event numbers as `#0, #1, #2`; a long list keeps its first and last few around a count of the rest."""
    if len(events) <= shown:
        return ", ".join(f"#{j}" for j in events)
    head, tail = events[: shown - 2], events[-2:]
    rest = len(events) - len(head) - len(tail)
    return ", ".join(f"#{j}" for j in head) + f", … {rest} more …, " + ", ".join(f"#{j}" for j in tail)


class CountRow(NamedTuple):
    """One label of the count table: its (old, new) pair per shown column, None where both are 0."""

    label: str
    cells: tuple[tuple[int, int] | None, ...]
    differs: bool


def count_table(diff: Diff) -> tuple[tuple[str, ...], list[CountRow]]:
    """The count table's columns (calls, returns, raises, marks: those some label has) and rows."""
    shown = [k for k, name in enumerate(Counts._fields) if any(counts[k] != (0, 0) for counts in diff.counts.values())]
    columns = tuple(Counts._fields[k] for k in shown)
    table = [
        CountRow(label, tuple(None if counts[k] == (0, 0) else counts[k] for k in shown), counts.differs)
        for label, counts in diff.counts.items()
    ]
    return columns, table


def render_stat(diff: Diff, *, color: bool = False, changed_only: bool = False) -> str:
    """The count table and the summary line: per label, calls (and returns, raises, marks)
    in each log, `billing.charge_card  2 → 3`. `changed_only` lists only the labels
    whose counts differ, and says how many others there are."""
    columns, table = count_table(diff)
    kept = [row for row in table if row.differs] if changed_only else table
    if table and not kept:
        return f"counts: the same in both logs for {counted(len(table), 'label')}\n{summary_line(diff)}"
    width = max((len(printable(row.label)) for row in kept), default=0)
    cells = [[_pair(cell) for cell in row.cells] for row in kept]
    widths = [max([len(name), *(len(row[k]) for row in cells)]) for k, name in enumerate(columns)]
    lines = [f"{'counts:':<{width + 2}}  " + "  ".join(f"{n:<{w}}" for n, w in zip(columns, widths, strict=True))]
    for row, texts in zip(kept, cells, strict=True):
        line = f"  {printable(row.label):<{width}}  " + "  ".join(
            f"{text:<{w}}" for text, w in zip(texts, widths, strict=True)
        )
        line = line.rstrip()
        lines.append(_paint(line, "changed", color) if row.differs else line)
    if len(kept) < len(table):
        lines.append(f"  ({counted(len(table) - len(kept), 'label')} with the same counts)")
    lines[0] = lines[0].rstrip()
    lines.append(summary_line(diff))
    return "\n".join(lines)


def _pair(cell: tuple[int, int] | None) -> str:
    return "" if cell is None else f"{cell[0]} → {cell[1]}"


def summary_line(diff: Diff) -> str:
    """`identical: 12 events` or `4 differences: 2 moved, 0 missing, 1 extra, 1 changed`."""
    if diff.same:
        return f"identical: {counted(len(diff.new), 'event')}"
    total = len(diff.ops)
    parts = ", ".join(f"{n} {kind}" for kind, n in diff.summary.items())
    return f"{total} difference{'s' if total != 1 else ''}: {parts}"


def render_op(diff: Diff, op: Op) -> str:
    """One op on one line: `#3 billing.send_receipt: args[1]: '09:00' → '18:00'` for a
    change (every differing field), `#2 moved: billing.charge_card(...)` otherwise."""
    index = op.new if op.new is not None else op.old
    if op.fields:
        return printable(f"#{index} {op.label}: " + "; ".join(map(render_field, op.fields)))
    return f"#{index} {op.op}: {render_event(_op_row(diff, op).event)}"  # type: ignore[arg-type]


def _paint(text: str, kind: str, color: bool) -> str:
    code = _COLORS.get(kind)
    if not color or code is None:
        return text
    return f"\x1b[{code}m{text}\x1b[0m"


def render_json(diff: Diff, *, stat: bool = False) -> str:
    """The diff as JSON: `{"same", "summary", "ops", "counts"}`; `stat` leaves out "ops".

    Each op is `{"op", "label", "old", "new", "fields"}`; each field change is
    `{"path", "old", "new"}` with a side left out where the path is absent.
    """
    document: dict[str, Any] = {"same": diff.same, "summary": diff.summary}
    if not stat:
        document["ops"] = [
            {
                "op": op.op,
                "label": op.label,
                "old": op.old,
                "new": op.new,
                "fields": [_field_json(change) for change in op.fields],
            }
            for op in diff.ops
        ]
    columns, table = count_table(diff)
    document["counts"] = {
        row.label: {name: list(cell) for name, cell in zip(columns, row.cells, strict=True) if cell is not None}
        for row in table
    }
    return json_text(document)


def _field_json(change: FieldChange) -> dict[str, Any]:
    out: dict[str, Any] = {"path": change.path}
    if change.old is not ABSENT:
        out["old"] = jsonable(change.old)
    if change.new is not ABSENT:
        out["new"] = jsonable(change.new)
    return out
