"""The differing fields of two events of the same kind and label, by path into their values."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from . import values
from ._impl import Encoder
from .errors import UsageError
from .event import FIELDS, Event
from .normalize import NO_RULES

# One step of a key path after its field: `.name`, `[3]`, `['key']` or `["key"]`.
_STEP = re.compile(r"""\.([^.\[\]]+)|\[(-?\d+)\]|\['([^']*)'\]|\["([^"]*)"\]""")


class _Absent:
    """The side of a field change where the path does not exist."""

    def __repr__(self) -> str:
        return "(absent)"


ABSENT: Final = _Absent()


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One differing field of a `changed` event: its path and both values."""

    path: str
    old: Any
    new: Any


@dataclass(frozen=True, slots=True)
class KeyPath:
    """A path into one field of an event, as `--ignore kwargs.headers.Date` names it."""

    field: str
    steps: tuple[str | int, ...]

    @property
    def text(self) -> str:
        """The path as field changes spell it."""
        path = self.field
        for step in self.steps:
            path = f"{path}[{step}]" if isinstance(step, int) else _key_path(path, step)
        return path

    def covers(self, path: str) -> bool:
        """True when `path` is this path or lies inside it."""
        text = self.text
        return path == text or path.startswith((text + ".", text + "["))

    def strip(self, value: Any) -> Any:
        """`value` (this path's field) without what the path names."""
        return _strip(value, self.steps)


def key_path(text: str, fields: tuple[str, ...]) -> KeyPath:
    """Parse `field.key[0]['other key']`; raises UsageError naming what is wrong."""
    name = re.match(r"[a-z]+", text)
    if name is None or name.group() not in fields:
        raise UsageError(f"cannot ignore {text!r}: a path starts with a field ({', '.join(fields)})")
    steps: list[str | int] = []
    pos = name.end()
    while pos < len(text):
        step = _STEP.match(text, pos)
        if step is None:
            raise UsageError(f"cannot ignore {text!r}: not a key path (e.g. kwargs.headers.Date, args[1].url)")
        attribute, index, single, double = step.groups()
        steps.append(int(index) if index is not None else next(s for s in (attribute, single, double) if s is not None))
        pos = step.end()
    return KeyPath(name.group(), tuple(steps))


def _strip(value: Any, steps: tuple[str | int, ...]) -> Any:
    if not steps:
        return None
    step, rest = steps[0], steps[1:]
    if isinstance(value, values.Custom):
        return values.Custom(value.type, _strip(value.value, steps))
    if isinstance(value, dict) and step in value:
        if not rest:
            return {key: item for key, item in value.items() if key != step}
        return {key: _strip(item, rest) if key == step else item for key, item in value.items()}
    if isinstance(value, (values.Record, values.ObjectState)):
        kept = tuple(
            (name, _strip(item, rest) if name == step else item) for name, item in value.fields if rest or name != step
        )
        if isinstance(value, values.ObjectState):
            return values.ObjectState(value.type, value.number, kept)
        return values.Record(value.type, kept)
    if isinstance(value, (list, tuple)) and isinstance(step, int) and -len(value) <= step < len(value):
        items = list(value)
        items[step] = _strip(items[step], rest)
        return type(value)(items)
    return value


def field_changes(
    old: Event,
    new: Event,
    raw_old: list[bytes],
    raw_new: list[bytes],
    ignore: tuple[str, ...],
    paths: tuple[KeyPath, ...] = (),
) -> tuple[FieldChange, ...]:
    """Each differing field of two events of one kind and label, by path.

    `raw_old` and `raw_new` are the canonical bytes of their eight fields (equal bytes:
    an equal field); the fields named in `ignore`, and what the key `paths` name, are
    left out.
    """
    canonical: Callable[[Any], bytes] = Encoder(NO_RULES).encode
    changes: list[FieldChange] = []
    for k, name in enumerate(FIELDS):
        if k < 2 or name in ignore or raw_old[k] == raw_new[k]:
            continue
        before = len(changes)
        _walk(name, _field(old, name), _field(new, name), canonical, changes)
        if paths:
            changes[before:] = [one for one in changes[before:] if not any(p.covers(one.path) for p in paths)]
            if len(changes) == before:
                continue
        if len(changes) == before:
            # Bytes differ where the decoded values look alike (1 and 1.0 inside a
            # set...): report the whole field rather than nothing.
            changes.append(FieldChange(name, getattr(old, name), getattr(new, name)))
    return tuple(changes)


def _field(event: Event, name: str) -> Any:
    value = getattr(event, name)
    if name == "args":
        return list(value)
    if name == "error" and value is not None:
        return values.Record("error", (("type", value[0]), ("message", value[1])))
    return value


def _walk(
    path: str,
    old: Any,
    new: Any,
    canonical: Callable[[Any], bytes],
    out: list[FieldChange],
) -> None:
    if old is ABSENT or new is ABSENT:
        out.append(FieldChange(path, old, new))
        return
    if canonical(old) == canonical(new):
        return
    if isinstance(old, values.Custom) and isinstance(new, values.Custom) and old.type == new.type:
        # A registered form is its type and a value: the path goes on into the value.
        _walk(path, old.value, new.value, canonical, out)
    elif isinstance(old, Mapping) and isinstance(new, Mapping) and type(old) is type(new):
        for key in [*old, *(key for key in new if key not in old)]:
            _walk(
                _key_path(path, key),
                old[key] if key in old else ABSENT,
                new[key] if key in new else ABSENT,
                canonical,
                out,
            )
    elif isinstance(old, values.Pairs) and isinstance(new, values.Pairs):
        _walk(path, dict(enumerate(old.items)), dict(enumerate(new.items)), canonical, out)
    elif type(old) is type(new) and isinstance(old, (list, tuple)):
        for k in range(max(len(old), len(new))):
            _walk(
                f"{path}[{k}]",
                old[k] if k < len(old) else ABSENT,
                new[k] if k < len(new) else ABSENT,
                canonical,
                out,
            )
    elif isinstance(old, values.ObjectState) and isinstance(new, values.ObjectState) and old.type == new.type:
        # One object or another: the number is the identity, the fields its state.
        if old.number != new.number:
            out.append(FieldChange(path, values.Instance(old.type, old.number), values.Instance(new.type, new.number)))
        _walk(path, values.Record(old.type, old.fields), values.Record(new.type, new.fields), canonical, out)
    elif isinstance(old, values.Record) and isinstance(new, values.Record) and old.type == new.type:
        # Object state gains and loses attributes: a field on one side only is absent on the other.
        before, after = dict(old.fields), dict(new.fields)
        for name in [*before, *(name for name in after if name not in before)]:
            _walk(f"{path}.{name}", before.get(name, ABSENT), after.get(name, ABSENT), canonical, out)
    else:
        out.append(FieldChange(path, old, new))


def _key_path(path: str, key: Any) -> str:
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{key!r}]"
