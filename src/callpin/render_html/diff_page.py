"""Draw a diff as the report page: a summary that links to every difference, then both sides.

Rows come from `render_diff.rows`, the layout the text report prints, with each
moved event at its old and its new place, the two linked. Differences and their
context are written out; an equal run between them folds into a `<details>`,
written out when short and packed (page.packed_rows) when long, so a page grows
with the differences rather than with the logs.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Final, NamedTuple

from ..render_diff import Row, count_table, rows, summary_line
from ..text import counted
from .assets import stylesheet
from .cells import Painter, escape, field_list
from .page import controls, head_height, lane_heads, lazy_rows, packed_rows, page, thread_legend
from .sequence import place

if TYPE_CHECKING:
    from ..diff import Diff
    from ..logfile import Log
    from .sequence import Step

# An equal run of at most this many events is written out (readable without
# JavaScript); a longer one is packed and drawn when opened.
INLINE_FOLD: Final = 40
# The summary lists at most this many differences; the rest are a key press away.
LISTED_DIFFERENCES: Final = 1000


def render_html(diff: Diff, *, context: int = 3) -> str:
    """A diff as one HTML page: both sequences side by side, each op coloured by kind.

    Rows come from `render.rows` with `context` equal events around each op; the
    equal stretches between them fold into `<details>` ("N equal events"). Every op
    row carries the class `op op-<kind>`, `data-op`, `data-label` and its indices,
    and an id (`old-<i>` for a row of the old side only, `new-<j>` otherwise); the
    two places of a moved event link to each other. A changed row lists each
    differing field. The summary, the list of differences and the count table open
    the page, each entry a link to its difference.
    """
    # A long diff makes millions of small tuples and strings, none of them in a
    # cycle; the cyclic collector's passes over them were a third of placing the
    # events of a 1,000,000-event diff (8.1 s against 5.5 s without them).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _page(diff, context)
    finally:
        if collecting:
            gc.enable()


def _page(diff: Diff, context: int) -> str:
    lanes, (old_steps, new_steps) = place(diff.old, diff.new)
    sides = _Sides(old_steps, new_steps, Painter())
    laid_out = rows(diff, context=context, origins=True)
    if not laid_out and diff.order != "none" and len(diff.new):
        laid_out = [Row("skip", None, None, None, hidden=len(diff.new))]
    op_rows = [row for row in laid_out if row.kind not in ("equal", "skip")]

    body: list[str] = ['<input type="checkbox" id="list-view" hidden>', "<header><h1>callpin diff</h1>"]
    body.append(f'<p class="sides">old: {_side_name(diff.old)} · new: {_side_name(diff.new)}</p>')
    if diff.order != "strict" or diff.ignore:
        ignoring = f", ignoring {', '.join(diff.ignore)}" if diff.ignore else ""
        body.append(f"<p>order: {escape(diff.order)}{escape(ignoring)}</p>")
    body.append(_summary(diff, op_rows))
    body.append(f'<div class="overview">{_differences(op_rows)}{_count_table(diff, op_rows)}</div>')
    body.append(thread_legend(old_steps, new_steps))
    body.append('</header><main class="diff">')
    heads = lane_heads(lanes)
    body.append(
        '<div class="nav">'
        + controls(len(op_rows))
        + f'<div class="row heads"><i></i><span class="ix">old</span>{heads}<span class="tx">old</span>'
        f'<span class="ix">new</span>{heads}<span class="tx">new</span></div></div>'
    )
    # Every new event is either shown in a row or counted by one skip row, in
    # order, so the events a skip folds are the next `hidden` new indices.
    cursor = 0
    moved_to = {op.old: op.new for op in diff.ops if op.op == "moved"}
    for row in laid_out:
        if row.kind == "skip":
            body.append(_fold(diff, range(cursor, cursor + row.hidden), sides))
            cursor += row.hidden
            continue
        if row.new is not None:
            cursor = row.new + 1
        body.append(_diff_row(row, sides, partner=_partner(row, moved_to)))
    body.append("</main>")
    title = f"callpin diff: {diff.old.path or 'old'} → {diff.new.path or 'new'}"
    return page(title, stylesheet(len(lanes), sides=2, head_height=head_height(lanes)), body)


def _fold(diff: Diff, folded: range, sides: _Sides) -> str:
    """An equal run as a `<details>`: written out when short, packed when long."""
    events = counted(len(folded), "equal event")
    where = f"new #{folded[0]}" if len(folded) == 1 else f"new #{folded[0]} to #{folded[-1]}"
    summary = f"<summary>{events} ({where})</summary>"
    drawn = (_equal_row(diff.aligned_old(j), j, sides) for j in folded)
    if len(folded) <= INLINE_FOLD:
        return f'<details class="skip">{summary}{"".join(drawn)}</details>'
    chunks, _ = packed_rows(drawn)
    return (
        f'<details class="skip lazy">{summary}'
        + lazy_rows(
            chunks,
            more="show more of these events",
            fallback=f"These {events} are drawn by the page's script; `callpin diff` lists them as text.",
        )
        + "</details>"
    )


class _Sides(NamedTuple):
    """What every row is drawn from: both sides' steps and the page's painter."""

    old: list[Step]
    new: list[Step]
    painter: Painter


def _equal_row(old: int | None, new: int, sides: _Sides) -> str:
    cell = sides.painter.side_cell
    return f'<div class="row eq"><i></i>{cell(sides.old[old] if old is not None else None)}{cell(sides.new[new])}</div>'


def _diff_row(row: Row, sides: _Sides, *, partner: str = "") -> str:
    if row.kind == "equal":
        assert row.new is not None
        return _equal_row(row.old, row.new, sides)
    old = sides.old[row.old] if row.old is not None else None
    new = sides.new[row.new] if row.new is not None else None
    if row.kind == "moved" and row.new is not None:
        # Its old place has a row of its own; this one shows the new place only.
        old = None
    shown = new if new is not None else old
    assert shown is not None
    attributes = [
        f'class="row op op-{row.kind}"',
        f'id="{_row_id(row)}"',
        f'data-op="{row.kind}"',
        f'data-label="{escape(shown.event.label)}"',
    ]
    if row.old is not None:
        attributes.append(f'data-old="{row.old}"')
    if row.new is not None:
        attributes.append(f'data-new="{row.new}"')
    tag = f'<span class="tag">{row.kind}</span>'
    old_link = new_link = ""
    if partner:
        target_side, target_index = partner.split("-")
        where = "to new" if target_side == "new" else "from old"
        tag = f'<a class="tag" href="#{partner}" title="moved {where} #{target_index}">{row.kind}</a>'
        if target_side == "new":
            new_link = f' <a href="#{partner}">→{target_index}</a>'
        else:
            old_link = f' <a href="#{partner}">{target_index}→</a>'
    return (
        f"<div {' '.join(attributes)}>{tag}{sides.painter.side_cell(old, index_link=old_link)}"
        f"{sides.painter.side_cell(new, index_link=new_link)}{field_list(row.fields)}</div>"
    )


def _row_id(row: Row) -> str:
    return f"new-{row.new}" if row.new is not None else f"old-{row.old}"


def _partner(row: Row, moved_to: dict[int | None, int | None]) -> str:
    """The id of the other place of a moved event; empty for any other row."""
    if row.kind != "moved":
        return ""
    if row.new is not None:
        return f"old-{row.old}"
    return f"new-{moved_to[row.old]}"


def _side_name(log: Log) -> str:
    return f"{escape(log.path or '(in memory)')} ({counted(len(log), 'event')})"


def _summary(diff: Diff, op_rows: list[Row]) -> str:
    """The summary line, each kind's count a link to its first difference."""
    if diff.same:
        return f'<p class="summary">{escape(summary_line(diff))}</p>'
    first: dict[str, str] = {}
    for row in op_rows:
        first.setdefault(row.kind, _row_id(row))
    parts = []
    for kind, n in diff.summary.items():
        text = f"{n} {kind}"
        parts.append(f'<a class="kind-{kind}" href="#{first[kind]}">{text}</a>' if kind in first else text)
    total = len(diff.ops)
    return f'<p class="summary">{total} difference{"s" if total != 1 else ""}: {", ".join(parts)}</p>'


def _differences(op_rows: list[Row]) -> str:
    """Every difference in reading order (up to LISTED_DIFFERENCES), each a link to its row."""
    if not op_rows:
        return ""
    items = []
    for row in op_rows[:LISTED_DIFFERENCES]:
        assert row.event is not None
        where = f"#{row.new}" if row.new is not None else f"old #{row.old}"
        items.append(
            f'<li class="op-{row.kind}"><a href="#{_row_id(row)}"><span class="tag">{row.kind}</span>'
            f"{where} {escape(row.event.label)}</a></li>"
        )
    left = len(op_rows) - LISTED_DIFFERENCES
    if left > 0:
        items.append(f"<li>… {counted(left, 'more difference')}: n / j steps through them</li>")
    listed = "".join(items)
    return f'<details class="difflist" open><summary>differences</summary><ol class="diffs">{listed}</ol></details>'


def _count_table(diff: Diff, op_rows: list[Row]) -> str:
    """The count table by label; a label that differs links to its first difference."""
    columns, table = count_table(diff)
    first: dict[str, str] = {}
    for op_row in op_rows:
        assert op_row.event is not None
        first.setdefault(op_row.event.label, _row_id(op_row))
    heads = "".join(f"<th>{name}</th>" for name in columns)
    lines = [f'<div class="countbox"><table class="counts"><caption>counts</caption><tr><th>label</th>{heads}</tr>']
    for row in table:
        differs = ' class="differs"' if row.differs else ""
        cells = "".join("<td></td>" if cell is None else f"<td>{cell[0]} → {cell[1]}</td>" for cell in row.cells)
        label = escape(row.label)
        if row.label in first:
            label = f'<a href="#{first[row.label]}">{label}</a>'
        lines.append(f"<tr{differs}><td>{label}</td>{cells}</tr>")
    lines.append("</table></div>")
    return "".join(lines)
