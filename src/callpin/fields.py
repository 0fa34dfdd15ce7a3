"""The differing fields of two events of the same kind and label, by path into their values."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from . import codec
from ._impl import Encoder
from .event import FIELDS, Event
from .normalize import NO_RULES


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


def field_changes(
    old: Event, new: Event, raw_old: list[bytes], raw_new: list[bytes], ignore: tuple[str, ...]
) -> tuple[FieldChange, ...]:
    """Each differing field of two events of one kind and label, by path.

    `raw_old` and `raw_new` are the canonical bytes of their eight fields (equal bytes:
    an equal field); the fields named in `ignore` are left out.
    """
    canonical: Callable[[Any], bytes] = Encoder(NO_RULES).encode
    changes: list[FieldChange] = []
    for k, name in enumerate(FIELDS):
        if k < 2 or name in ignore or raw_old[k] == raw_new[k]:
            continue
        before = len(changes)
        _walk(name, _field(old, name), _field(new, name), canonical, changes)
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
        return codec.Record("error", (("type", value[0]), ("message", value[1])))
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
    if type(old) is dict and type(new) is dict:
        for key in [*old, *(key for key in new if key not in old)]:
            _walk(
                _key_path(path, key),
                old[key] if key in old else ABSENT,
                new[key] if key in new else ABSENT,
                canonical,
                out,
            )
    elif type(old) is type(new) and type(old) in (list, tuple):
        for k in range(max(len(old), len(new))):
            _walk(
                f"{path}[{k}]",
                old[k] if k < len(old) else ABSENT,
                new[k] if k < len(new) else ABSENT,
                canonical,
                out,
            )
    elif (
        isinstance(old, codec.Record)
        and isinstance(new, codec.Record)
        and old.type == new.type
        and [name for name, _ in old.fields] == [name for name, _ in new.fields]
    ):
        for (name, before), (_, after) in zip(old.fields, new.fields, strict=True):
            _walk(f"{path}.{name}", before, after, canonical, out)
    else:
        out.append(FieldChange(path, old, new))


def _key_path(path: str, key: Any) -> str:
    if isinstance(key, str) and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{key!r}]"
