"""Draw one log as a report page: its header facts and the sequence of every event.

The first FIRST_ROWS events are written out (readable without JavaScript); the
rest are packed (packing.packed_rows) and drawn a chunk at a time as the reader
scrolls, so a page of 50,000 events opens as fast as one of a thousand.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ..text import counted, value_text
from .assets import stylesheet
from .cells import Painter, escape
from .packing import lazy_rows, packed_rows
from .page import controls, head_height, lane_heads, page, thread_legend
from .sequence import place

if TYPE_CHECKING:
    from ..logfile import Log

FIRST_ROWS: Final = 1000


def render_log_html(log: Log) -> str:
    """A log as one HTML page: its header facts and the sequence diagram of every event."""
    lanes, (steps,) = place(log)
    cell = Painter().side_cell
    rules = ", ".join(one.name for one in log.rules.rules) or "none"
    name = f"{escape(log.path or '(in memory)')} ({counted(len(log), 'event')})"
    body = [
        '<input type="checkbox" id="list-view" hidden>',
        "<header><h1>callpin log</h1>",
        f'<p class="sides">{name} · fingerprint {escape(log.fingerprint)} · rules: {escape(rules)}</p>',
    ]
    if log.meta:
        body.append(f'<p class="meta">meta: {escape(value_text(log.meta))}</p>')
    body.append(thread_legend(step.event.thread for step in steps))
    body.append('</header><main class="log">')
    body.append(
        f'<div class="nav">{controls(0)}<div class="row heads"><span class="ix">#</span>'
        f'{lane_heads(lanes)}<span class="tx">event</span></div></div>'
    )
    body.extend(f'<div class="row">{cell(step)}</div>' for step in steps[:FIRST_ROWS])
    rest = steps[FIRST_ROWS:]
    if rest:
        chunks, _ = packed_rows(f'<div class="row">{cell(step)}</div>' for step in rest)
        body.append(
            '<div class="lazy">'
            + lazy_rows(
                chunks,
                more=f"show more (events {FIRST_ROWS} to {len(steps) - 1} follow)",
                fallback=f"The other {counted(len(rest), 'event')} are drawn by the page's script; "
                "`callpin show` prints them all as text.",
            )
            + "</div>"
        )
    body.append("</main>")
    return page(
        f"callpin log: {log.path or '(in memory)'}",
        stylesheet(len(lanes), sides=1, head_height=head_height(lanes)),
        body,
    )
