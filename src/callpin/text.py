"""Readable text of decoded values: a repr that never fails, escaped to one printable line."""

from __future__ import annotations

import re
from typing import Any

from .values import Custom, ExceptionValue, ObjectState, Pairs, Record, SetItems

# Where value_text gives up on a value repr() cannot show: no writer nests values
# deeper than codec.MAX_DEPTH, so only a hand-made log reaches this depth.
SHOWN_DEPTH = 100
_NESTING_INERT = (Record, ObjectState, Custom, ExceptionValue, Pairs, SetItems)
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")


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
    """repr() of a decoded value, also where repr() refuses one, the same in every process.

    A log may hold an int past Python's limit for converting ints to decimal text
    (shown in hex) or a value nested deeper than 100 (shown down to depth 100, then
    `...`). A set's elements are written in the order of their texts, not in repr()'s
    order, which follows their hashes and so changes with PYTHONHASHSEED.
    """
    try:
        text = repr(value)
    except (RecursionError, ValueError):
        return _bounded_text(value, SHOWN_DEPTH)
    # Where repr() gives up on deep nesting is the interpreter's business (3.11 counts it
    # against the recursion limit and the current stack, 3.13 against a far larger C
    # limit), so the cut is made here, the same on every Python. Each level of nesting
    # writes at least two characters: a shorter text cannot hold a value that deep.
    # A text with no '{' holds no set, whose repr() would follow its elements' hashes.
    if len(text) <= 2 * SHOWN_DEPTH and "{" not in text:
        return text
    return _bounded_text(value, SHOWN_DEPTH)


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
        # In the order of their texts: a set's own order follows its elements' hashes,
        # and so PYTHONHASHSEED.
        inside = "{" + ", ".join(sorted(map(inner, value))) + "}"
        return inside if kind is set else f"frozenset({inside})"
    if isinstance(value, _NESTING_INERT):
        return value.show(inner)
    return repr(value)


def counted(count: int, noun: str) -> str:
    """`1 event`, `2 events`: a count with its noun."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
