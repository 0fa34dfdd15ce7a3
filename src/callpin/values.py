"""The inert value types a log holds, and the instance numbers of one log's objects.

Decoding returns plain values plus these small frozen types, never an object of a user
class; the encoders write them back as they read (docs/FORMAT.md names each one's ext
code). `Identities` numbers the objects of one log: `<Type#n>` is the n-th distinct
object of its type, wherever it appears.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Record:
    """A dataclass, namedtuple or attrs instance: its qualified type name and fields in order."""

    type: str
    fields: tuple[tuple[str, Any], ...]

    def __repr__(self) -> str:
        return self.show(repr)

    def show(self, text: Callable[[Any], str]) -> str:
        """This value's repr, with `text` writing each value inside it."""
        inner = ", ".join(f"{name}={text(value)}" for name, value in self.fields)
        return f"{_short(self.type)}({inner})"


@dataclass(frozen=True, slots=True)
class Custom:
    """A value of a type given a canonical form with `callpin.register`."""

    type: str
    value: Any

    def __repr__(self) -> str:
        return self.show(repr)

    def show(self, text: Callable[[Any], str]) -> str:
        """This value's repr, with `text` writing the value inside it."""
        return f"{_short(self.type)}({text(self.value)})"


@dataclass(frozen=True, slots=True)
class EnumValue:
    """An Enum member: its qualified type name and member name (a flag value with no name:
    its value's repr in parentheses, `(8)`)."""

    type: str
    name: str

    def __repr__(self) -> str:
        if self.name.startswith("("):
            return f"{_short(self.type)}{self.name}"
        return f"{_short(self.type)}.{self.name}"


@dataclass(frozen=True, slots=True)
class ExceptionValue:
    """An exception passed as a value: its qualified type name and args."""

    type: str
    args: tuple[Any, ...]

    def __repr__(self) -> str:
        return self.show(repr)

    def show(self, text: Callable[[Any], str]) -> str:
        """This value's repr, with `text` writing each value inside it."""
        return f"{_short(self.type)}({', '.join(map(text, self.args))})"


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A normalized value: `<uuid:1>` is the first distinct uuid of the log."""

    name: str
    number: int

    def __repr__(self) -> str:
        return f"<{self.name}:{self.number}>"


@dataclass(frozen=True, slots=True)
class Cycle:
    """A reference back to a container being encoded, `up` levels above."""

    up: int

    def __repr__(self) -> str:
        return f"<cycle:{self.up}>"


@dataclass(frozen=True, slots=True)
class Opaque:
    """Anything without a canonical form: its qualified type name and normalized repr."""

    type: str
    repr: str

    def __repr__(self) -> str:
        return self.repr


@dataclass(frozen=True, slots=True)
class Unencodable:
    """A value that could not be encoded (its repr raised, it was nested too deep...)."""

    type: str
    reason: str

    def __repr__(self) -> str:
        return f"<unencodable {_short(self.type)}: {self.reason}>"


@dataclass(frozen=True, slots=True)
class Instance:
    """An object by its identity alone: the n-th distinct instance of its class in the log
    (a spied method's receiver, an object past the object depth or registered by identity).
    `over_budget`: written so because its state was over `OBJECT_BUDGET`; `digest` (since
    format 1.3) is then the 8-byte digest of that state (`state_digest`), so a change of
    the state still shows, though not where. None in a 1.2 log. With `over_budget` false,
    a `digest` (since format 1.4) says the object was past the object depth: the digest
    is of its state written from it."""

    type: str
    number: int
    over_budget: bool = False
    digest: bytes | None = None

    def __repr__(self) -> str:
        if self.digest is not None and not self.over_budget:
            return f"<{_short(self.type)}#{self.number}, past the object depth, digest {self.digest.hex()}>"
        if self.digest is not None:
            return f"<{_short(self.type)}#{self.number}, over the state budget, digest {self.digest.hex()}>"
        if self.over_budget:
            return f"<{_short(self.type)}#{self.number}, over the state budget>"
        return f"<{_short(self.type)}#{self.number}>"


@dataclass(frozen=True, slots=True)
class ObjectState:
    """An object recorded by its state: its type, its instance number in the log, its attributes."""

    type: str
    number: int
    fields: tuple[tuple[str, Any], ...]

    def __repr__(self) -> str:
        return self.show(repr)

    def show(self, text: Callable[[Any], str]) -> str:
        """This value's repr, with `text` writing each value inside it."""
        inner = ", ".join(f"{name}={text(value)}" for name, value in self.fields)
        return f"{_short(self.type)}#{self.number}({inner})"


@dataclass(frozen=True, slots=True)
class Pairs:
    """A map whose decoded keys cannot form a dict (unhashable): its items in order."""

    items: tuple[tuple[Any, Any], ...]

    def __repr__(self) -> str:
        return self.show(repr)

    def show(self, text: Callable[[Any], str]) -> str:
        """This value's repr, with `text` writing each key and value inside it."""
        return "{" + ", ".join(f"{text(k)}: {text(v)}" for k, v in self.items) + "}"


@dataclass(frozen=True, slots=True)
class SetItems:
    """A set whose decoded elements cannot form a set (unhashable or collapsing)."""

    frozen: bool
    items: tuple[Any, ...]

    def __repr__(self) -> str:
        return self.show(repr)

    def show(self, text: Callable[[Any], str]) -> str:
        """This value's repr, with `text` writing each element inside it."""
        inner = ", ".join(map(text, self.items))
        return f"frozenset({{{inner}}})" if self.frozen else f"{{{inner}}}"


def _short(qualified: str) -> str:
    return qualified.rsplit(".", 1)[-1] if "<" not in qualified else qualified


def qualified_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


class Identities:
    """The instance numbers of one log: the n-th distinct object of a type is `<Type#n>`.

    Receivers of spied methods and objects recorded by value share these numbers, so one
    object reads as one instance wherever it appears. Each object numbered is held until
    the log is finished (`instances.clear()`), so its id cannot be reused by another
    object within the log (`kept` holds the objects written by their repr so, whose reprs
    show their addresses). `instances` maps id to `(object, Instance)`, `counts` a type
    name to the numbers given (the C spies read and write both dicts as they are).

    `past_budget` counts the outermost objects whose state was over `OBJECT_BUDGET`, by
    type name and how they were written: `"shallow"` (their own values, the objects they
    hold by identity) or `"identity"` (by identity and a digest of their state alone: a
    change shows, not where). Both encoders tell it through `note_past_budget`, in normal mode only.
    """

    __slots__ = ("counts", "instances", "kept", "past_budget")

    def __init__(self) -> None:
        self.instances: dict[int, tuple[object, Instance]] = {}
        # The objects written by a repr that shows an address ("0x"), by id, held as
        # `instances` are: `<function <lambda> at <addr:1>>` is never another object's
        # in the log.
        self.kept: dict[int, object] = {}
        self.counts: dict[str, int] = {}
        self.past_budget: dict[tuple[str, str], int] = {}

    def note_past_budget(self, type_name: str, how: str) -> None:
        """One more object of `type_name` written `how` ("shallow" or "identity") past the budget."""
        key = (type_name, how)
        self.past_budget[key] = self.past_budget.get(key, 0) + 1

    def instance(self, obj: object, type_name: str | None = None, peek: bool = False) -> Instance:
        """The `Instance` of `obj`, numbered on its first appearance (with `peek`: number 0 when new)."""
        known = self.instances.get(id(obj))
        if known is not None:
            return known[1]
        if type_name is None:
            type_name = qualified_name(type(obj))
        if peek:
            return Instance(type_name, 0)
        number = self.counts.get(type_name, 0) + 1
        self.counts[type_name] = number
        made = Instance(type_name, number)
        self.instances[id(obj)] = (obj, made)
        return made


# The value types themselves: a form cannot be registered for them.
INERT_TYPES = (
    Record,
    ObjectState,
    Custom,
    EnumValue,
    ExceptionValue,
    Placeholder,
    Cycle,
    Opaque,
    Unencodable,
    Instance,
    Pairs,
    SetItems,
)
