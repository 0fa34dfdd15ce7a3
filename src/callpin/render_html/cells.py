"""Draw one event of the report: its index, its arrow between lifelines, and its text in full.

The arrow sits in a narrow diagram column (lifelines, activation bars, the arrow
and its head) and the text in a column of its own beside it, so no text ever lies
under a lifeline or an arrow, and a long call wraps instead of being cut. Nesting
indents the text by depth (`--d`); each kind has its own class (`k-call`,
`k-return`, `k-raise`, `k-mark`) and a raise its own arrow, colour and marker.
Positions are lane numbers in CSS custom properties (`--a` the leftmost lane an
arrow touches, `--n` how many lanes it spans), so a row's markup stays small. Every
text taken from a log passes through `html.escape`.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Final

from ..event import render_event
from ..text import printable, value_text

if TYPE_CHECKING:
    from ..fields import FieldChange
    from .sequence import Step

# Arrows and activation bars take their thread's colour (thread 1 first, cycling).
THREAD_COLORS: Final = ("#2d3748", "#805ad5", "#d53f8c", "#0987a0", "#975a16", "#4a5568")
# Past this many characters an event's text opens in place (one click) instead of
# filling the screen; the head shown before it is opened.
LONG_CHARS: Final = 600
LONG_HEAD: Final = 240
# Indentation stops here; deeper events say their depth in words.
INDENT_DEPTH: Final = 24


def escape(text: str) -> str:
    """Text from a log as markup: printable (see text.printable), then HTML-escaped."""
    return html.escape(printable(text), quote=True)


def thread_class(thread: int) -> str:
    """The class that gives a thread's colour: t1..t6, cycling."""
    return f"t{(thread - 1) % len(THREAD_COLORS) + 1}"


class Painter:
    """Draws event cells, each distinct drawing and each distinct event's text once.

    A long log repeats itself (the same arrow between the same lanes, the same
    event on both sides of a diff), so one painter per page keeps what it drew.
    """

    def __init__(self) -> None:
        self._drawings: dict[tuple[str, int, int, int, tuple[tuple[int, int], ...]], str] = {}
        self._texts: dict[bytes, str] = {}

    def side_cell(self, step: Step | None, *, index_link: str = "") -> str:
        """The index, the drawing and the text of one event; empty cells for a side without it."""
        if step is None:
            return f'<span class="ix">{index_link}</span><span class="g"></span><span class="tx"></span>'
        event = step.event
        thread = ""
        if event.thread != 1:
            thread = f' <b class="{thread_class(event.thread)}">t{event.thread}</b>'
        key = (event.kind, event.thread, step.source, step.target, step.bars)
        drawn = self._drawings.get(key)
        if drawn is None:
            drawn = self._drawings[key] = drawing(step)
        text = self._texts.get(step.frame)
        if text is None:
            text = self._texts[step.frame] = event_text(step)
        return f'<span class="ix">{step.index}{index_link}{thread}</span>{drawn}{text}'


def drawing(step: Step) -> str:
    """The diagram cell: the open calls' bars, then the arrow (or a mark's diamond)."""
    event = step.event
    kind = event.kind
    parts = [f'<span class="g {thread_class(event.thread)}">']
    last = len(step.bars) - 1
    for k, (lane, shift) in enumerate(step.bars):
        end = ""
        if k == last and kind == "call":
            end = " top"
        elif k == last and kind != "mark" and lane == step.source:
            end = " end"
        parts.append(f'<b class="bar{end}" style="--l:{lane};--k:{shift}"></b>')
    source, target = step.source, step.target
    if kind == "mark":
        parts.append(f'<i class="mk" style="--a:{source}"></i>')
    elif source == target:
        parts.append(f'<i class="ar {_ARROWS[kind]} self" style="--a:{source}"></i>')
    else:
        direction = "r" if target > source else "l"
        left, span = min(source, target), abs(target - source)
        parts.append(f'<i class="ar {_ARROWS[kind]} {direction}" style="--a:{left};--n:{span}"></i>')
    parts.append("</span>")
    return "".join(parts)


_ARROWS: Final = {"call": "call", "return": "ret", "raise": "raise"}


def event_text(step: Step) -> str:
    """The event's whole text, indented by depth; a raise's exception in its own span."""
    event = step.event
    # The text without its thread prefix and indentation (this cell shows both its own way).
    plain = render_event(event if event.thread == 1 and not event.depth else event._replace(thread=1, depth=0))
    depth = event.depth
    prefix = ""
    if depth > INDENT_DEPTH:
        prefix = f'<span class="dp">[depth {depth}] </span>'
        depth = INDENT_DEPTH
    style = f' style="--d:{depth}"' if depth else ""
    tail = ""
    if event.kind == "raise" and event.error is not None:
        kind, message = event.error
        raised = printable(f" !! {kind}: {message}" if message else f" !! {kind}")
        if plain.endswith(raised):
            plain, tail = plain[: -len(raised)], f'<span class="err">{escape(raised)}</span>'
    body = f"{prefix}{escape(plain)}{tail}"
    if len(plain) > LONG_CHARS:
        # One click opens the whole text in place; the head says how much there is.
        body = (
            f'<details class="long"><summary>{escape(plain[:LONG_HEAD])}… '
            f"<em>({len(plain):,} characters)</em></summary>{body}</details>"
        )
    return f'<span class="tx k-{event.kind}"{style}>{body}</span>'


def field_list(changes: tuple[FieldChange, ...]) -> str:
    """Each changed field of an event as `path: old → new`, the two values marked apart."""
    if not changes:
        return ""
    items = "".join(
        f'<li><span class="fp">{escape(change.path)}</span>: <del>{escape(value_text(change.old))}</del>'
        f" → <ins>{escape(value_text(change.new))}</ins></li>"
        for change in changes
    )
    return f'<ul class="fields">{items}</ul>'
