"""Turn a log or a diff into one self-contained HTML page: an SVG sequence diagram of the calls.

The page needs nothing from outside: the stylesheet and the drawings are inline
and there is no script; stretches of equal events fold into `<details>`. Every text
taken from a log (labels, values, messages, meta, paths) passes through
`html.escape`, so a log cannot inject markup. A diff is drawn from `render.rows`,
the same layout the text view prints, with each moved event shown at both its
old and its new place and the two linked.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Final, NamedTuple

from .event import render_event
from .render_diff import Row, count_table, render_field, rows, summary_line
from .text import counted, printable, value_text

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .diff import Diff
    from .event import Event
    from .logfile import Log

# Each op kind has a strong colour (its tag) and a tint (its row); no other part
# of the page uses them, so a row's colour always says its kind.
OP_COLORS: Final = {
    "moved": "#b7791f",
    "missing": "#c53030",
    "extra": "#2f855a",
    "changed": "#2b6cb0",
}
OP_TINTS: Final = {
    "moved": "#fdf3d7",
    "missing": "#fde2e1",
    "extra": "#dcf5e6",
    "changed": "#dde9f8",
}
# Arrows and activation bars take their thread's colour (thread 1 first, cycling).
THREAD_COLORS: Final = ("#2d3748", "#805ad5", "#d53f8c", "#0987a0", "#975a16", "#4a5568")

CALLER: Final = "code under test"
LANE_WIDTH: Final = 140
ROW_HEIGHT: Final = 24
LABEL_CHARS: Final = 48
LANE_NAME_CHARS: Final = 22
TITLE_CHARS: Final = 2000

_ARROW_Y = 18
_TEXT_Y = 13
_BAR_WIDTH = 6


def render_html(diff: Diff, *, context: int = 3) -> str:
    """A diff as one HTML page: both sequences side by side, each op coloured by kind.

    Rows come from `render.rows` with `context` equal events around each op; the
    equal stretches between them fold into `<details>` ("N equal events"). Every op
    row carries the class `op-<kind>`, `data-op`, `data-label` and its indices, and
    an id (`old-<i>` for a row of the old side only, `new-<j>` otherwise); the two
    places of a moved event link to each other. A changed row lists each differing
    field. The count table and the summary line close the page.
    """
    lanes = _lanes(diff.old, diff.new)
    old_steps = _steps(diff.old, lanes)
    new_steps = _steps(diff.new, lanes)
    width = LANE_WIDTH * len(lanes)
    laid_out = rows(diff, context=context, origins=True)
    if not laid_out and diff.order != "none" and len(diff.new):
        laid_out = [Row("skip", None, None, None, hidden=len(diff.new))]

    body: list[str] = [
        "<header><h1>callpin diff</h1>",
        f'<p class="sides">old: {_side_name(diff.old)} · new: {_side_name(diff.new)}</p>',
    ]
    if diff.order != "strict" or diff.ignore:
        ignoring = f", ignoring {', '.join(diff.ignore)}" if diff.ignore else ""
        body.append(f"<p>order: {_e(diff.order)}{_e(ignoring)}</p>")
    body.append(f'<p class="summary">{_e(summary_line(diff))}</p>')
    body.append(_thread_legend(old_steps, new_steps))
    body.append('</header><main class="diff">')
    body.append(
        '<div class="row heads"><i></i>'
        f'<span class="ix">old</span>{_lane_heads(lanes)}'
        f'<span class="ix">new</span>{_lane_heads(lanes)}</div>'
    )
    # Every new event is either shown in a row or counted by one skip row, in
    # order, so the events a skip folds are the next `hidden` new indices.
    cursor = 0
    moved_to = {op.old: op.new for op in diff.ops if op.op == "moved"}
    for row in laid_out:
        if row.kind == "skip":
            folded = range(cursor, cursor + row.hidden)
            cursor += row.hidden
            body.append(f'<details class="skip"><summary>{counted(row.hidden, "equal event")}</summary>')
            body.extend(_diff_row(Row("equal", diff.aligned_old(j), j, None), old_steps, new_steps) for j in folded)
            body.append("</details>")
            continue
        if row.new is not None:
            cursor = row.new + 1
        body.append(_diff_row(row, old_steps, new_steps, partner=_partner(row, moved_to)))
    body.append("</main>")
    body.append(_count_table(diff))
    title = f"callpin diff: {diff.old.path or 'old'} → {diff.new.path or 'new'}"
    return _page(title, _stylesheet(width, sides=2), body)


def render_log_html(log: Log) -> str:
    """A log as one HTML page: its header facts and the sequence diagram of every event."""
    lanes = _lanes(log)
    steps = _steps(log, lanes)
    rules = ", ".join(one.name for one in log.rules.rules) or "none"
    body = [
        "<header><h1>callpin log</h1>",
        f'<p class="sides">{_side_name(log)} · fingerprint {_e(log.fingerprint)} · rules: {_e(rules)}</p>',
    ]
    if log.meta:
        body.append(f'<p class="meta">meta: {_e(value_text(log.meta))}</p>')
    body.append(_thread_legend(steps))
    body.append('</header><main class="log">')
    body.append(f'<div class="row heads"><span class="ix">#</span>{_lane_heads(lanes)}</div>')
    body.extend(f'<div class="row">{_cell(steps[i])}</div>' for i in range(len(steps)))
    body.append("</main>")
    return _page(
        f"callpin log: {log.path or '(in memory)'}",
        _stylesheet(LANE_WIDTH * len(lanes), sides=1),
        body,
    )


# ---------------------------------------------------------------------------
# The sequence: lanes and, per event, where its arrow runs.


class _Step(NamedTuple):
    """One event placed in the diagram: the lanes its arrow joins and the open calls.

    `bars` holds, for each call of the event's thread still open at this event,
    its lane and how many open calls below it share that lane.
    """

    event: Event
    source: int
    target: int
    bars: tuple[tuple[int, int], ...]


def _module(label: str) -> str:
    """The lifeline of a label: its module part (`billing` of `billing.charge_card`)."""
    return label.rpartition(".")[0] or label


def _lanes(*logs: Log) -> dict[str, int]:
    """Lane 0 is the code under test; then one per collaborator module, in order of appearance."""
    lanes = {CALLER: 0}
    for log in logs:
        for event in log:
            if event.kind != "mark":
                lanes.setdefault(_module(event.label), len(lanes))
    return lanes


def _steps(log: Log, lanes: dict[str, int]) -> list[_Step]:
    """Each event's arrow: a call runs from the lane of the call it is nested in (by
    depth, within its thread) to its collaborator; a return or raise runs back."""
    # Per thread, the calls still open as (depth, lane), innermost last. Without
    # recorded outcomes a call stays open until its thread's next event at the
    # same depth or shallower.
    open_calls: dict[int, list[tuple[int, int]]] = {}
    steps: list[_Step] = []
    for event in log:
        stack = open_calls.setdefault(event.thread, [])
        depth = event.depth
        if event.kind in ("return", "raise"):
            while stack and stack[-1][0] > depth:
                stack.pop()
            target = lanes[_module(event.label)]
            returning = bool(stack) and stack[-1][0] == depth
            below = stack[:-1] if returning else stack
            caller = below[-1][1] if below else 0
            steps.append(_Step(event, target, caller, _bars(stack)))
            if returning:
                stack.pop()
            continue
        while stack and stack[-1][0] >= depth:
            stack.pop()
        caller = stack[-1][1] if stack else 0
        if event.kind == "mark":
            steps.append(_Step(event, caller, caller, _bars(stack)))
            continue
        target = lanes[_module(event.label)]
        stack.append((depth, target))
        steps.append(_Step(event, caller, target, _bars(stack)))
    return steps


def _bars(stack: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    placed: list[tuple[int, int]] = []
    for _, lane in stack:
        placed.append((lane, sum(1 for other, _ in placed if other == lane)))
    return tuple(placed)


# ---------------------------------------------------------------------------
# Drawing one event.


def _cell(step: _Step | None, *, index_link: str = "") -> str:
    """The index cell and the drawing of one event; an empty pair for a side without it."""
    if step is None:
        return f'<span class="ix">{index_link}</span><i class="seq"></i>'
    event = step.event
    thread = ""
    if event.thread != 1:
        thread = f' <b class="{_thread_class(event.thread)}">t{event.thread}</b>'
    return f'<span class="ix">{event.index}{thread}</span>{_drawing(step)}'


def _drawing(step: _Step) -> str:
    event = step.event
    parts = [f'<svg class="seq {_thread_class(event.thread)}"><title>{_e(_title(event))}</title>']
    last = len(step.bars) - 1
    for k, (lane, shift) in enumerate(step.bars):
        top, bottom = 0, ROW_HEIGHT
        if k == last and event.kind == "call":
            top = _ARROW_Y - 3
        elif k == last and event.kind in ("return", "raise") and lane == step.source:
            bottom = _ARROW_Y + 3
        x = _center(lane) - _BAR_WIDTH // 2 + 4 * shift
        parts.append(f'<rect class="bar" x="{x}" y="{top}" width="{_BAR_WIDTH}" height="{bottom - top}"/>')
    start, end = _lane_x(step, step.source), _lane_x(step, step.target)
    text_x = min(start, end) + 8
    if event.kind == "mark":
        parts.append(f'<path class="mk" d="M{start} {_ARROW_Y - 6}l6 6-6 6-6-6z"/>')
        text_x = start + 10
    elif start == end:
        # A call into the lane it comes from: a small loop back onto the lifeline.
        parts.append(f'<path class="{_arrow_class(event)}" d="M{start} 10h18v{_ARROW_Y - 10}h-18m6-4l-6 4 6 4"/>')
        text_x = start + 24
    else:
        head = "m-6-4l6 4-6 4" if end > start else "m6-4l-6 4 6 4"
        parts.append(f'<path class="{_arrow_class(event)}" d="M{start} {_ARROW_Y}H{end}{head}"/>')
    parts.append(f'<text x="{text_x}" y="{_TEXT_Y}">{_e(_short(_caption(event)))}</text></svg>')
    return "".join(parts)


def _lane_x(step: _Step, lane: int) -> int:
    """Where an arrow meets a lane: the edge of its innermost open bar there, else the lifeline."""
    shifts = [shift for bar_lane, shift in step.bars if bar_lane == lane]
    return _center(lane) + (4 * shifts[-1] if shifts else 0)


def _center(lane: int) -> int:
    return lane * LANE_WIDTH + LANE_WIDTH // 2


def _arrow_class(event: Event) -> str:
    return {"call": "call", "return": "ret", "raise": "raise"}[event.kind]


def _thread_class(thread: int) -> str:
    return f"t{(thread - 1) % len(THREAD_COLORS) + 1}"


def _plain(event: Event) -> str:
    """The event's one readable line without its thread prefix and depth indentation."""
    return render_event(event._replace(thread=1, depth=0))


def _caption(event: Event) -> str:
    """The text on the arrow: the event without its module, which the lane already names."""
    text = _plain(event)
    module = event.label.rpartition(".")[0]
    if event.kind != "mark" and module and text.startswith(module + "."):
        return text[len(module) + 1 :]
    return text


def _title(event: Event) -> str:
    where = []
    if event.thread != 1:
        where.append(f"thread {event.thread}")
    if event.depth:
        where.append(f"depth {event.depth}")
    extra = f" ({', '.join(where)})" if where else ""
    return _short(f"#{event.index} {_plain(event)}", TITLE_CHARS) + extra


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _e(text: str) -> str:
    return html.escape(printable(text), quote=True)


# ---------------------------------------------------------------------------
# Rows of a diff.


def _diff_row(row: Row, old_steps: list[_Step], new_steps: list[_Step], *, partner: str = "") -> str:
    old = old_steps[row.old] if row.old is not None else None
    new = new_steps[row.new] if row.new is not None else None
    if row.kind == "moved" and row.new is not None:
        # Its old place has a row of its own; this one shows the new place only.
        old = None
    if row.kind == "equal":
        return f'<div class="row eq"><i></i>{_cell(old)}{_cell(new)}</div>'
    shown = new if new is not None else old
    assert shown is not None
    label = shown.event.label
    attributes = [
        f'class="row op op-{row.kind}"',
        f'id="new-{row.new}"' if row.new is not None else f'id="old-{row.old}"',
        f'data-op="{row.kind}"',
        f'data-label="{_e(label)}"',
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
            new_link = f'<a href="#{partner}">→{target_index}</a>'
        else:
            old_link = f'<a href="#{partner}">{target_index}→</a>'
    fields = ""
    if row.fields:
        items = "".join(f"<li>{_e(render_field(change))}</li>" for change in row.fields)
        fields = f'<ul class="fields">{items}</ul>'
    return (
        f"<div {' '.join(attributes)}>{tag}{_cell(old, index_link=old_link)}"
        f"{_cell(new, index_link=new_link)}{fields}</div>"
    )


def _partner(row: Row, moved_to: dict[int | None, int | None]) -> str:
    """The id of the other place of a moved event; empty for any other row."""
    if row.kind != "moved":
        return ""
    if row.new is not None:
        return f"old-{row.old}"
    return f"new-{moved_to[row.old]}"


def _side_name(log: Log) -> str:
    return f"{_e(log.path or '(in memory)')} ({counted(len(log), 'event')})"


def _count_table(diff: Diff) -> str:
    columns, table = count_table(diff)
    heads = "".join(f"<th>{name}</th>" for name in columns)
    lines = [f'<table class="counts"><caption>counts</caption><tr><th>label</th>{heads}</tr>']
    for row in table:
        differs = ' class="differs"' if row.differs else ""
        cells = "".join("<td></td>" if cell is None else f"<td>{cell[0]} → {cell[1]}</td>" for cell in row.cells)
        lines.append(f"<tr{differs}><td>{_e(row.label)}</td>{cells}</tr>")
    lines.append("</table>")
    return "".join(lines)


# ---------------------------------------------------------------------------
# The page.


def _lane_heads(lanes: dict[str, int]) -> str:
    parts = ['<svg class="seq head">']
    for name, lane in lanes.items():
        x = lane * LANE_WIDTH + 4
        parts.append(
            f'<g><title>{_e(name)}</title><rect x="{x}" y="1" width="{LANE_WIDTH - 8}" '
            f'height="{ROW_HEIGHT - 2}" rx="3"/><text x="{_center(lane)}" y="16">'
            f"{_e(_short(name, LANE_NAME_CHARS))}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _thread_legend(*sides: Iterable[_Step]) -> str:
    threads = sorted({step.event.thread for steps in sides for step in steps})
    if len(threads) < 2:
        return ""
    items = " ".join(f'<b class="{_thread_class(t)}">t{t}</b>' for t in threads)
    return f'<p class="threads">threads: {items}</p>'


def _page(title: str, stylesheet: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_e(title)}</title><style>{stylesheet}</style></head><body>\n"
        + "\n".join(part for part in body if part)
        + "\n</body></html>\n"
    )


def _stylesheet(width: int, *, sides: int) -> str:
    half = LANE_WIDTH // 2
    columns = f"4.5em {width}px" if sides == 1 else f"5.5em 4.5em {width}px 4.5em {width}px"
    rules = [
        "body{font:14px system-ui,sans-serif;color:#1a202c;margin:1em}",
        "h1{font-size:1.3em;margin:0 0 .3em}header p{margin:.2em 0}",
        ".summary{font-weight:bold}.meta{font-family:monospace;overflow-wrap:anywhere}",
        f".row{{display:grid;grid-template-columns:{columns};align-items:start}}",
        ".heads{position:sticky;top:0;background:#fff;z-index:1;border-bottom:1px solid #cbd2d9}",
        f".ix{{font:11px/{ROW_HEIGHT}px monospace;text-align:right;padding-right:.5em;color:#4a5568}}",
        ".ix a{color:inherit}",
        f".seq{{display:block;width:{width}px;height:{ROW_HEIGHT}px;"
        f"background:linear-gradient(90deg,transparent {half - 1}px,#cbd2d9 {half - 1}px,"
        f"#cbd2d9 {half + 1}px,transparent {half + 1}px) 0 0/{LANE_WIDTH}px 100% repeat-x}}",
        ".seq text{font:12px ui-monospace,monospace;fill:#1a202c;white-space:pre}",
        ".seq path{fill:none;stroke:var(--t);stroke-width:1.5}",
        ".seq .ret,.seq .raise{stroke-dasharray:4 3}.seq .mk{fill:var(--t)}",
        ".seq .bar{fill:#fff;stroke:var(--t)}",
        ".head{background:none}.head rect{fill:#edf2f7;stroke:#718096}",
        ".head text{text-anchor:middle}",
        ".tag{font:bold 11px/18px sans-serif;color:#fff;text-align:center;margin:3px 4px;"
        "border-radius:3px;text-decoration:none}",
        ".fields{grid-column:1/-1;margin:0 0 4px 11em;padding:0;list-style:none;"
        "font:12px monospace;white-space:pre-wrap}",
        ".skip summary{font:12px sans-serif;color:#4a5568;padding:3px 0 3px 1em;cursor:pointer;"
        "background:#f7fafc;border-top:1px dashed #cbd2d9;border-bottom:1px dashed #cbd2d9}",
        ".counts{border-collapse:collapse;margin-top:1em;font:13px monospace}",
        ".counts caption{text-align:left;font:bold 14px sans-serif}",
        ".counts td,.counts th{padding:2px 1em 2px 0;text-align:left}",
        ".counts .differs{font-weight:bold}.counts .differs td:last-child::after{content:' ≠'}",
        ".threads b{font-family:monospace}",
    ]
    for n, color in enumerate(THREAD_COLORS, start=1):
        rules.append(f".t{n}{{--t:{color}}}b.t{n}{{color:{color}}}")
    for kind, color in OP_COLORS.items():
        rules.append(f".op-{kind}{{background:{OP_TINTS[kind]}}}.op-{kind} .tag{{background:{color}}}")
    return "\n".join(rules)
