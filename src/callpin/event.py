"""One recorded event: its fields, its decoding from a frame, and its one-line text."""

from __future__ import annotations

from typing import Any, NamedTuple

from . import codec
from .errors import CorruptLog
from .text import SHOWN_DEPTH, printable, value_text

KINDS = ("call", "return", "raise", "mark")
KIND_CODES = {name: code for code, name in enumerate(KINDS)}
FIELDS = ("kind", "label", "args", "kwargs", "value", "error", "thread", "depth")
_INDENT = "  "


class Event(NamedTuple):
    """One recorded interaction, as read back from a log."""

    # `index` (the event's position in its log) shadows tuple.index on purpose: it is
    # the name every reader of a log uses, and Event is never searched like a tuple.
    index: int  # type: ignore[assignment]
    kind: str
    label: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    value: Any
    error: tuple[str, str] | None
    thread: int
    depth: int

    def render(self) -> str:
        """One readable line, e.g. `billing.charge_card('card_A', 1500)`."""
        return render_event(self)


def decode_event(frame: bytes, index: int, decoder: codec.Decoder) -> Event:
    """Decode one event frame; CorruptLog when it is not a well-formed event."""
    fields = decoder.decode(frame)
    if not (isinstance(fields, list) and len(fields) == 8):
        raise CorruptLog(decoder.path, f"event {index} is not an event array", intact=index)
    kind, label, args, kwargs, value, error, thread, depth = fields
    well_formed = (
        type(kind) is int
        and 0 <= kind < len(KINDS)
        and type(label) is str
        and type(args) is list
        and type(kwargs) is dict
        and all(type(key) is str for key in kwargs)
        and (
            error is None
            or (type(error) is list and len(error) == 2 and type(error[0]) is str and type(error[1]) is str)
        )
        and type(thread) is int
        and 1 <= thread < 2**64
        and type(depth) is int
        and 0 <= depth < 2**64
    )
    if not well_formed:
        raise CorruptLog(decoder.path, f"event {index} is malformed", intact=index)
    return Event(
        index,
        KINDS[kind],
        label,
        tuple(args),
        kwargs,
        value,
        None if error is None else (error[0], error[1]),
        thread,
        depth,
    )


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
    indent = _INDENT * event.depth if event.depth <= SHOWN_DEPTH else f"[depth {event.depth}] "
    return printable(prefix + indent + text)


def _arguments(event: Event) -> str:
    parts = [value_text(arg) for arg in event.args]
    parts.extend(f"{name}={value_text(value)}" for name, value in event.kwargs.items())
    return f"({', '.join(parts)})"
