"""Turn an event, a log or a diff into readable text or JSON.

`rows(diff, context)` lays a diff out once, as the sequence of lines a reader sees
(differences, equal events around them, and markers for the equal stretches left
out); `render_text` prints those rows, and the side-by-side HTML report
(`render_html.py`) draws the same rows.
"""

from __future__ import annotations

import json
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NamedTuple

from .codec import Custom, ExceptionValue, Pairs, Record, SetItems
from .diff import ABSENT, FieldChange, Op

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .diff import Diff, Run
    from .logfile import Event, Log

_COLORS = {"moved": "33", "missing": "31", "extra": "32", "changed": "36", "skip": "2"}
_INDENT = "  "
# Where value_text gives up on a value repr() cannot show: no writer nests values
# deeper than codec.MAX_DEPTH, so only a hand-made log reaches this depth.
_SHOWN_DEPTH = 100
_NESTING_INERT = (Record, Custom, ExceptionValue, Pairs, SetItems)
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")
_NOT_ASCII_OR_NEWLINE = re.compile(r"[^\n\x20-\x7e]")


def render_event(event: Event) -> str:
    """One readable line: `billing.charge_card('card_A', 1500, currency='usd')`.

    A return reads `label → value`, a raise `label !! ValueError: message`, a mark
    `mark name = value`. Nested calls are indented by depth (past 100, `[depth 123]`);
    a thread other than the recording thread is shown as a `[t2]` prefix.
    """
    if event.kind == "mark":
        text = f"mark {event.label} = {value_text(event.value)}"
    else:
        text = event.label
        if event.kind == "call" or event.args or event.kwargs:
            text += _arguments(event)
        if event.kind == "return":
            text += f" → {value_text(event.value)}"
        elif event.kind == "raise":
            kind, message = event.error if event.error is not None else ("?", "")
            text += f" !! {kind}: {message}" if message else f" !! {kind}"
    prefix = f"[t{event.thread}] " if event.thread != 1 else ""
    # Past depth 100 the depth is written out: indentation would fill the screen (or
    # memory, for a depth of 2**60 in a crafted log).
    indent = _INDENT * event.depth if event.depth <= _SHOWN_DEPTH else f"[depth {event.depth}] "
    return printable(prefix + indent + text)


def _arguments(event: Event) -> str:
    parts = [value_text(arg) for arg in event.args]
    parts.extend(f"{name}={value_text(value)}" for name, value in event.kwargs.items())
    return f"({', '.join(parts)})"


def printable(text: str) -> str:
    """`text` with every character repr() would escape written as its escape (`\\n`, `\\x1b`).

    Labels, opaque reprs and exception messages come from the log as they are; escaped,
    a rendered event is exactly one line (line-based tools such as git diff stay
    aligned), cannot move a terminal's cursor or colours, and holds no lone surrogate
    that could not be written out as UTF-8.
    """
    if text.isprintable():
        return text
    return _NOT_PRINTABLE_ASCII.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    return char if char.isprintable() else char.encode("unicode_escape").decode("ascii")


def value_text(value: Any) -> str:
    """repr() of a decoded value, also where repr() refuses one.

    A log may hold an int past Python's limit for converting ints to decimal text
    (shown in hex) or a value nested past the recursion limit (shown down to depth
    100, then `...`).
    """
    try:
        return repr(value)
    except (RecursionError, ValueError):
        return _bounded_text(value, _SHOWN_DEPTH)


def _bounded_text(value: Any, depth: int) -> str:
    if depth <= 0:
        return "..."

    def inner(item: Any) -> str:
        return _bounded_text(item, depth - 1)

    kind = type(value)
    if kind is int:
        try:
            return repr(value)
        except ValueError:
            return hex(value)
    if kind is list:
        return f"[{', '.join(map(inner, value))}]"
    if kind is tuple:
        return f"({', '.join(map(inner, value))}{',' if len(value) == 1 else ''})"
    if kind is dict:
        return "{" + ", ".join(f"{inner(k)}: {inner(v)}" for k, v in value.items()) + "}"
    if kind in (set, frozenset):
        if not value:
            return f"{kind.__name__}()"
        inside = "{" + ", ".join(map(inner, value)) + "}"
        return inside if kind is set else f"frozenset({inside})"
    if isinstance(value, _NESTING_INERT):
        return value.show(inner)
    return repr(value)


def counted(count: int, noun: str) -> str:
    """`1 event`, `2 events`: a count with its noun."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def render_field(change: FieldChange) -> str:
    """`args[1]: 1500 → 0`; an absent side reads `(absent)`."""
    return printable(f"{change.path}: {value_text(change.old)} → {value_text(change.new)}")


def render_log(log: Log) -> str:
    """Every event of a log, one per line, after a header line; stable, for git textconv.

    Lines carry no index, so a line diff of two renderings aligns inserted and
    removed calls instead of renumbering everything after them.
    """
    rules = ", ".join(one.name for one in log.rules.rules) or "none"
    lines = [f"# callpin log: {counted(len(log), 'event')}, rules: {rules}"]
    if log.meta:
        lines.append(f"# meta: {printable(value_text(log.meta))}")
    lines.extend(render_event(event) for event in log)
    return "\n".join(lines) + "\n"


def render_log_json(log: Log) -> str:
    """A log as JSON: its count, fingerprint, rules, meta and every event's fields."""
    document = {
        "count": len(log),
        "fingerprint": log.fingerprint,
        "rules": [one.name for one in log.rules.rules],
        "meta": _jsonable(log.meta),
        "events": [
            {
                "index": event.index,
                "kind": event.kind,
                "label": event.label,
                "args": [_jsonable(arg) for arg in event.args],
                "kwargs": {name: _jsonable(value) for name, value in event.kwargs.items()},
                "value": _jsonable(event.value),
                "error": None if event.error is None else {"type": event.error[0], "message": event.error[1]},
                "thread": event.thread,
                "depth": event.depth,
            }
            for event in log
        ],
    }
    return _json_text(document)


def _json_text(document: Any) -> str:
    # Non-ASCII text stays readable; what `printable` would escape (a lone surrogate
    # from ext 18 has no UTF-8 form at all) is written as JSON's own \\uXXXX escape.
    # Outside strings JSON text is ASCII, so only characters inside strings change.
    text = "".join(_json_parts(document, 0))
    return _NOT_ASCII_OR_NEWLINE.sub(_json_escape, text) + "\n"


# The document's structure (the report, its lists of events or ops, each event or op) is
# indented; the values inside are written on one line. Indenting every level of a value
# nested 64 deep wrote over 100 spaces per line: a 148 kB log became 10 MB of JSON.
_INDENTED_LEVELS = 3


def _json_parts(value: Any, level: int) -> Iterator[str]:
    if level >= _INDENTED_LEVELS or not isinstance(value, (dict, list)) or not value:
        yield json.dumps(value, ensure_ascii=False)
        return
    inner = "\n" + "  " * (level + 1)
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    yield opening
    for number, item in enumerate(value.items() if isinstance(value, dict) else value):
        yield ("," if number else "") + inner
        if isinstance(value, dict):
            yield json.dumps(item[0], ensure_ascii=False) + ": "
            item = item[1]
        yield from _json_parts(item, level + 1)
    yield "\n" + "  " * level + closing


def _json_escape(found: re.Match[str]) -> str:
    char = found.group()
    if char.isprintable():
        return char
    return json.dumps(char)[1:-1]


def _jsonable(value: Any, depth: int = 0) -> Any:
    """JSON's own types as themselves; any other value as `{"$repr": value_text(value)}`,
    and so are ints JSON text cannot hold and containers nested past depth 100."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int and (value.bit_length() <= 64 or _has_decimal_text(value)):
        return value
    if type(value) is float and math.isfinite(value):
        return value
    if depth < _SHOWN_DEPTH:
        if type(value) is list:
            return [_jsonable(item, depth + 1) for item in value]
        if type(value) is dict and all(isinstance(key, str) for key in value):
            return {key: _jsonable(item, depth + 1) for key, item in value.items()}
    return {"$repr": value_text(value)}


def _has_decimal_text(value: int) -> bool:
    try:
        repr(value)
    except ValueError:
        return False
    return True


# ---------------------------------------------------------------------------
# Diffs.


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


def render_text(diff: Diff, *, context: int = 3, color: bool = False) -> str:
    """The diff for a reader: one line per op with its old and new indices and the event,
    `context` equal events around each, then the count table and a summary line."""
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
    for row in laid_out:
        lines.extend(_row_lines(row, width, color))
    return "\n".join([*lines, render_stat(diff, color=color)])


def _row_lines(row: Row, width: int, color: bool) -> list[str]:
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
    out.extend(_paint(pad + render_field(change), row.kind, color) for change in row.fields)
    return out


def render_stat(diff: Diff, *, color: bool = False) -> str:
    """The count table per label (`billing.charge_card  2 → 3`) and the summary line."""
    lines = ["counts:"]
    width = max((len(printable(label)) for label in diff.counts), default=0)
    for label, (before, after) in diff.counts.items():
        line = f"  {printable(label):<{width}}  {before} → {after}"
        lines.append(_paint(line, "changed", color) if before != after else line)
    lines.append(summary_line(diff))
    return "\n".join(lines)


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
    document["counts"] = {label: list(pair) for label, pair in diff.counts.items()}
    return _json_text(document)


def _field_json(change: FieldChange) -> dict[str, Any]:
    out: dict[str, Any] = {"path": change.path}
    if change.old is not ABSENT:
        out["old"] = _jsonable(change.old)
    if change.new is not ABSENT:
        out["new"] = _jsonable(change.new)
    return out
