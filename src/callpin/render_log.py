"""Turn a log into readable text (for `callpin show` and git's textconv) or JSON."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .event import render_event
from .text import SHOWN_DEPTH, counted, printable, value_text

if TYPE_CHECKING:
    from .logfile import Log

_NOT_ASCII_OR_NEWLINE = re.compile(r"[^\n\x20-\x7e]")


def render_log(log: Log) -> str:
    """Every event of a log, one per line, after a header line; stable, for git textconv.

    Lines carry no index, so a line diff of two renderings aligns inserted and
    removed calls instead of renumbering everything after them.
    """
    lines = [f"# callpin log: {counted(len(log), 'event')}, rules: {printable(log.rules.shown())}"]
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
        "rule_patterns": log.rules.patterns(),
        "meta": jsonable(log.meta),
        "events": [
            {
                "index": event.index,
                "kind": event.kind,
                "label": event.label,
                "args": [jsonable(arg) for arg in event.args],
                "kwargs": {name: jsonable(value) for name, value in event.kwargs.items()},
                "value": jsonable(event.value),
                "error": None if event.error is None else {"type": event.error[0], "message": event.error[1]},
                "thread": event.thread,
                "depth": event.depth,
            }
            for event in log
        ],
    }
    return json_text(document)


def json_text(document: Any) -> str:
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


def jsonable(value: Any, depth: int = 0) -> Any:
    """JSON's own types as themselves; any other value as `{"$repr": value_text(value)}`,
    and so are ints JSON text cannot hold and containers nested past depth 100."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if type(value) is int and (value.bit_length() <= 64 or _has_decimal_text(value)):
        return value
    if type(value) is float and math.isfinite(value):
        return value
    if depth < SHOWN_DEPTH:
        if type(value) is list:
            return [jsonable(item, depth + 1) for item in value]
        if type(value) is dict and all(isinstance(key, str) for key in value):
            return {key: jsonable(item, depth + 1) for key, item in value.items()}
    return {"$repr": value_text(value)}


def _has_decimal_text(value: int) -> bool:
    try:
        repr(value)
    except ValueError:
        return False
    return True
