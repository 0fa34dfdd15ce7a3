"""Draw a diff as the report page: a summary that links to every difference, then both sides.

Rows come from `render_diff.rows`, the layout the text report prints, with each
moved event at its old and its new place, the two linked. Differences and their
context are written out; an equal run between them folds into a `<details>`,
written out when short and packed when long (packing: the events' frames, which
the page's script draws when the fold is opened), so a page grows with the
differences rather than with the logs, and writing it costs little more than
reading the events it shows.
"""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Final, NamedTuple

from ..render_diff import Row, count_table, rows, summary_line
from ..text import counted
from .assets import stylesheet
from .cells import Painter, escape, field_list
from .packing import FrameChunk, frame_chunks, frames_chunk, lazy_rows, packed_rows, page_facts
from .page import controls, head_height, lane_heads, page, thread_legend
from .sequence import Outline, outline

if TYPE_CHECKING:
    from ..diff import Diff
    from ..logfile import Log
    from .sequence import Stacks, Step

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
    laid_out = rows(diff, context=context, origins=True)
    if not laid_out and diff.order != "none" and len(diff.new):
        laid_out = [Row("skip", None, None, None, hidden=len(diff.new))]
    op_rows = [row for row in laid_out if row.kind not in ("equal", "skip")]
    # Every new event is either shown in a row or counted by one skip row, in
    # order, so the events a skip folds are the next `hidden` new indices.
    folds: dict[int, range] = {}
    cursor = 0
    for k, row in enumerate(laid_out):
        if row.kind == "skip":
            folds[k] = range(cursor, cursor + row.hidden)
            cursor += row.hidden
        elif row.new is not None:
            cursor = row.new + 1
    packed = [k for k, folded in folds.items() if len(folded) > INLINE_FOLD]
    chunks = dict(zip(packed, frame_chunks(diff, (folds[k] for k in packed)), strict=True))
    placed = _outline(diff, laid_out, folds, chunks)
    sides = _Sides(placed.steps[0], placed.steps[1], Painter())
    lanes = placed.lanes

    body: list[str] = ['<input type="checkbox" id="list-view" hidden>', "<header><h1>callpin diff</h1>"]
    body.append(f'<p class="sides">old: {_side_name(diff.old)} · new: {_side_name(diff.new)}</p>')
    if diff.order != "strict" or diff.ignore:
        ignoring = f", ignoring {', '.join(diff.ignore)}" if diff.ignore else ""
        body.append(f"<p>order: {escape(diff.order)}{escape(ignoring)}</p>")
    body.append(_summary(diff, op_rows))
    body.append(f'<div class="overview">{_differences(op_rows)}{_count_table(diff, op_rows)}</div>')
    body.append(thread_legend(placed.threads))
    body.append('</header><main class="diff">')
    heads = lane_heads(lanes)
    body.append(
        '<div class="nav">'
        + controls(len(op_rows))
        + f'<div class="row heads"><i></i><span class="ix">old</span>{heads}<span class="tx">old</span>'
        f'<span class="ix">new</span>{heads}<span class="tx">new</span></div></div>'
    )
    moved_to = {op.old: op.new for op in diff.ops if op.op == "moved"}
    for k, row in enumerate(laid_out):
        if row.kind == "skip":
            body.append(_fold(diff, folds[k], chunks.get(k), sides, placed.stacks))
            continue
        body.append(_diff_row(row, sides, partner=_partner(row, moved_to)))
    body.append("</main>")
    if chunks:
        body.append(page_facts(lanes))
    title = f"callpin diff: {diff.old.path or 'old'} → {diff.new.path or 'new'}"
    return page(title, stylesheet(len(lanes), sides=2, head_height=head_height(lanes)), body)


def _outline(diff: Diff, laid_out: list[Row], folds: dict[int, range], chunks: dict[int, list[FrameChunk]]) -> Outline:
    """Place both sides, decoding the events drawn here: the rows, the short folds
    and the chunks drawn as markup; the frames chunks get the open calls before them."""
    shown_old = {row.old for row in laid_out if row.old is not None}
    shown_new = {row.new for row in laid_out if row.new is not None}
    starts_old: set[int] = set()
    starts_new: set[int] = set()
    for k, folded in folds.items():
        if k not in chunks:
            shown_new.update(folded)
            shown_old.update(old for old in map(diff.aligned_old, folded) if old is not None)
            continue
        for chunk in chunks[k]:
            if chunk.drawn:
                shown_new.update(range(chunk.new, chunk.new + chunk.length))
                if chunk.old is not None:
                    shown_old.update(range(chunk.old, chunk.old + chunk.length))
            else:
                starts_new.add(chunk.new)
                if chunk.old is not None:
                    starts_old.add(chunk.old)
    return outline((diff.old, diff.new), (shown_old, shown_new), (starts_old, starts_new))


def _fold(
    diff: Diff, folded: range, chunks: list[FrameChunk] | None, sides: _Sides, stacks: list[dict[int, Stacks]]
) -> str:
    """An equal run as a `<details>`: written out when short, packed when long."""
    events = counted(len(folded), "equal event")
    where = f"new #{folded[0]}" if len(folded) == 1 else f"new #{folded[0]} to #{folded[-1]}"
    summary = f"<summary>{events} ({where})</summary>"
    if chunks is None:
        drawn = "".join(_equal_row(diff.aligned_old(j), j, sides) for j in folded)
        return f'<details class="skip">{summary}{drawn}</details>'
    packed: list[str] = []
    for chunk in chunks:
        olds = range(chunk.length) if chunk.old is None else range(chunk.old, chunk.old + chunk.length)
        if chunk.drawn:
            news = range(chunk.new, chunk.new + chunk.length)
            markup = (
                _equal_row(None if chunk.old is None else old, new, sides) for old, new in zip(olds, news, strict=True)
            )
            packed.extend(packed_rows(markup)[0])
        else:
            opened = (() if chunk.old is None else stacks[0][chunk.old], stacks[1][chunk.new])
            packed.append(frames_chunk(diff, chunk, opened))
    return (
        f'<details class="skip lazy">{summary}'
        + lazy_rows(
            packed,
            more="show more of these events",
            fallback=f"These {events} are drawn by the page's script; `callpin diff` lists them as text.",
        )
        + "</details>"
    )


class _Sides(NamedTuple):
    """What every row is drawn from: both sides' steps (by index) and the page's painter."""

    old: dict[int, Step]
    new: dict[int, Step]
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
