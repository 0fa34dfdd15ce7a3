"""Hostile values at record time: recorded where they can be, marked where not, never fatal.

Every value of the catalogue below is passed to a spied function (or returned by it,
raised by it, or is the receiver of a spied method) inside `callpin.record`. For each,
through the live spy and through the Python reference spy:

- the spied call ran and gave its own result (the same object returned, or the same
  exception raised), and nothing else escaped from the recorder;
- the log written is read back by `callpin.load` and every event decodes;
- what could not be encoded is marked: an `Unencodable`, `Cycle` or `Opaque` value, or
  an error message saying it could not be printed or written;
- where the C speedups are live, the C spy writes the bytes the Python spy writes, and
  the C encoder the bytes the Python encoder writes for the value itself.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import callpin
from callpin import _impl, codec, journal

C_LIVE = _impl.IMPLEMENTATION == "c"

COLLABORATOR = """
RESULT = ["result"]

def take(*args, **kwargs):
    return RESULT

def give():
    return RESULT

class Gateway:
    def ping(self, *args):
        return RESULT
"""

UUID_TEXT = "12345678-1234-5678-1234-567812345678"

# A marker that an error message was not written as given (journal.describe_error, codec).
MESSAGE_MARKED = "message"


@dataclasses.dataclass(frozen=True)
class Case:
    """One hostile value: how it is made (fresh each time) and how it reaches the recorder.

    `via` is `argument`, `keyword`, `return`, `raise` or `receiver`; `marked` is the
    marker expected in the event (`Unencodable`, `Cycle`, `Opaque`, MESSAGE_MARKED), or
    None when the value has a canonical form and nothing may be marked.
    """

    name: str
    via: str
    make: Callable[[], Any]
    marked: type | str | None


# ---------------------------------------------------------------------------------------
# The hostile values.


class ReprRaises:
    def __repr__(self) -> str:
        raise ValueError("repr")


class ReprRecurses:
    def __repr__(self) -> str:
        return repr(self)


class ReprWrongType:
    def __repr__(self) -> Any:
        return 42


class Shouting(str):
    """A str whose every method raises: only its data may be read."""

    def __str__(self) -> str:
        raise AssertionError("__str__")

    def __repr__(self) -> str:
        raise AssertionError("__repr__")

    def __len__(self) -> int:
        raise AssertionError("__len__")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("__eq__")

    def __hash__(self) -> int:
        raise AssertionError("__hash__")

    def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
        raise AssertionError("encode")


class ReprShouting:
    def __repr__(self) -> str:
        return Shouting("shouting 0x7f00deadbeef")


class ReprHuge:
    size = codec.MAX_STR + 1

    def __repr__(self) -> str:
        return "r" * self.size


class EqHashRaise:
    def __eq__(self, other: object) -> bool:
        raise ValueError("eq")

    def __hash__(self) -> int:
        raise ValueError("hash")

    def __repr__(self) -> str:
        return "eq-hash"


class IterLenRaise:
    def __iter__(self) -> Iterator[Any]:
        raise ValueError("iter")

    def __len__(self) -> int:
        raise ValueError("len")

    def __repr__(self) -> str:
        return "iter-len"


class GetattrRaises:
    def __getattr__(self, name: str) -> Any:
        raise ValueError(name)

    def __repr__(self) -> str:
        return "getattr"


class GetattributeRaises:
    def __getattribute__(self, name: str) -> Any:
        raise ValueError(name)


class ClassRaises:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        raise ValueError("__class__")


class ClassLiesInt:
    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return int


class ClassNotAType:
    @property  # type: ignore[misc]
    def __class__(self) -> Any:
        return 5

    def __repr__(self) -> str:
        return "not a type"


class ItemsRaise(dict):  # type: ignore[type-arg]
    def items(self) -> Any:  # type: ignore[override]
        raise ValueError("items")


class ItemsWrongType(dict):  # type: ignore[type-arg]
    def items(self) -> Any:  # type: ignore[override]
        return 5


class ItemsChangeIt(dict):  # type: ignore[type-arg]
    def items(self) -> Any:  # type: ignore[override]
        for key in dict.keys(self):
            self[f"{key}+"] = 1
            yield key, 1


class ListShouting(list):  # type: ignore[type-arg]
    def __iter__(self) -> Iterator[Any]:
        raise AssertionError("__iter__")

    def __len__(self) -> int:
        raise AssertionError("__len__")


class IntShouting(int):
    def __int__(self) -> int:
        raise AssertionError("__int__")

    def __index__(self) -> int:
        raise AssertionError("__index__")

    def __repr__(self) -> str:
        raise AssertionError("__repr__")


class FloatShouting(float):
    def __float__(self) -> float:
        raise AssertionError("__float__")

    def __repr__(self) -> str:
        raise AssertionError("__repr__")


class Fields(tuple):  # type: ignore[type-arg]
    _fields = ("a", 1)


@dataclasses.dataclass
class FieldRaises:
    value: int

    def __getattribute__(self, name: str) -> Any:
        if name == "value":
            raise ValueError("field")
        return object.__getattribute__(self, name)


@dataclasses.dataclass
class Node:
    child: Any


class KeyTurnsHostile:
    """Hashable when put in a dict, raising from __hash__ and __eq__ afterwards."""

    def __init__(self) -> None:
        self.hostile = False

    def __hash__(self) -> int:
        if self.hostile:
            raise ValueError("hash")
        return 1

    def __eq__(self, other: object) -> bool:
        if self.hostile:
            raise ValueError("eq")
        return self is other

    def __repr__(self) -> str:
        return "key"


class Registered:
    """Given a canonical form by `callpin.register` in the `registered` fixture."""

    def __init__(self, form: Callable[[Registered], Any]) -> None:
        self.form = form


class Ordered(str):
    """A keyword name whose own ordering raises."""

    def __lt__(self, other: object) -> bool:
        raise ValueError("lt")

    def __gt__(self, other: object) -> bool:
        raise ValueError("gt")


class StrRaises(Exception):
    def __str__(self) -> str:
        raise ValueError("str")


class StrRecurses(Exception):
    def __str__(self) -> str:
        return str(self)


class StrWrongType(Exception):
    def __str__(self) -> Any:
        return 42


class StrShouting(Exception):
    def __str__(self) -> str:
        return Shouting("declined at 0x7f00deadbeef")


class Declined(Exception):
    pass


def nested_lists(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


def nested_dicts(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"d": value}
    return value


def nested_tuples(levels: int) -> tuple[Any, ...]:
    value: tuple[Any, ...] = ()
    for _ in range(levels):
        value = (value,)
    return value


def nested_nodes(levels: int) -> Node:
    value = Node(None)
    for _ in range(levels):
        value = Node(value)
    return value


def self_list() -> list[Any]:
    value: list[Any] = [1]
    value.append(value)
    return value


def self_dict() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["me"] = value
    return value


def tuple_via_list() -> tuple[Any, ...]:
    inner: list[Any] = []
    value = (inner, 1)
    inner.append(value)
    return value


def mutual_lists() -> list[Any]:
    first: list[Any] = []
    second: list[Any] = [first]
    first.append(second)
    return first


def hostile_key_dict() -> dict[Any, Any]:
    key = KeyTurnsHostile()
    value = {key: 1, "k": 2}
    key.hostile = True
    return value


def list_changed_by_registered_form(change: str) -> list[Any]:
    items: list[Any] = []

    def form(obj: Registered) -> Any:
        if change == "append":
            items.append(Registered(form))
        elif change == "clear":
            items.clear()
        else:
            items[0] = "replaced"
        return "form"

    items.extend([Registered(form), 1])
    return items


def dict_changed_by_registered_form() -> dict[str, Any]:
    value: dict[str, Any] = {}

    def form(obj: Registered) -> Any:
        value[f"k{len(value)}"] = 1
        return "form"

    value["a"] = Registered(form)
    value["b"] = 2
    return value


def set_changed_while_ordered() -> set[Any]:
    value: set[Any] = set()

    class Adder:
        def __repr__(self) -> str:
            value.add(len(value))
            value.discard(self)
            return "adder"

    value.update({Adder(), Adder(), 1})
    return value


def raising(exc: BaseException) -> Callable[[], BaseException]:
    return lambda: exc


def catalogue(big: int) -> list[Case]:
    """Every hostile value; `big` is the size of the long str and bytes (past MAX_STR)."""
    limit = codec.MAX_ITEMS
    huge_repr = type("ReprHuge", (ReprHuge,), {"size": big})
    return [
        Case("repr raises", "argument", ReprRaises, codec.Unencodable),
        Case("repr recurses forever", "argument", ReprRecurses, codec.Unencodable),
        Case("repr returns an int", "argument", ReprWrongType, codec.Unencodable),
        Case("repr returns a hostile str", "argument", ReprShouting, codec.Opaque),
        Case("repr past the str limit", "argument", huge_repr, codec.Unencodable),
        Case("__eq__ and __hash__ raise", "argument", EqHashRaise, codec.Opaque),
        Case("__iter__ and __len__ raise", "argument", IterLenRaise, codec.Opaque),
        Case("__getattr__ raises", "argument", GetattrRaises, codec.Opaque),
        Case("__getattribute__ raises", "argument", GetattributeRaises, codec.Unencodable),
        Case("__class__ raises", "argument", ClassRaises, codec.Unencodable),
        Case("__class__ is int", "argument", ClassLiesInt, codec.Unencodable),
        Case("__class__ is not a type", "argument", ClassNotAType, codec.Opaque),
        Case("mapping items() raises", "argument", lambda: ItemsRaise(a=1), codec.Unencodable),
        Case("mapping items() is an int", "argument", lambda: ItemsWrongType(a=1), codec.Unencodable),
        Case("mapping items() changes it", "argument", lambda: ItemsChangeIt(a=1), codec.Unencodable),
        # The key is recorded by its state (hostile=True): no hash or eq of it runs.
        Case("dict key whose hash and eq raise", "argument", hostile_key_dict, None),
        Case("list subclass whose methods raise", "argument", lambda: ListShouting([1, 2]), None),
        Case("str subclass whose methods raise", "argument", lambda: Shouting("text"), None),
        Case("int subclass whose methods raise", "argument", lambda: IntShouting(7), None),
        Case("float subclass whose methods raise", "argument", lambda: FloatShouting(0.5), None),
        Case("tuple with non-str _fields", "argument", lambda: Fields((1, 2)), None),
        Case("dataclass field raises", "argument", lambda: FieldRaises(1), codec.Unencodable),
        Case("self-referencing list", "argument", self_list, codec.Cycle),
        Case("self-referencing dict", "argument", self_dict, codec.Cycle),
        Case("self-referencing tuple via a list", "argument", tuple_via_list, codec.Cycle),
        Case("two lists holding each other", "argument", mutual_lists, codec.Cycle),
        Case("100,000-deep lists", "argument", lambda: nested_lists(100_000), codec.Unencodable),
        Case("100,000-deep dicts", "argument", lambda: nested_dicts(100_000), codec.Unencodable),
        Case("100,000-deep tuples", "argument", lambda: nested_tuples(100_000), codec.Unencodable),
        Case("100,000-deep dataclasses", "argument", lambda: nested_nodes(100_000), codec.Unencodable),
        Case("str past the limit", "argument", lambda: "s" * big, codec.Unencodable),
        Case("bytes past the limit", "argument", lambda: b"b" * big, codec.Unencodable),
        Case(
            "str of uuids past the limit once normalized",
            "argument",
            lambda: f"{UUID_TEXT} {'p' * 64}" * (big // 64 + 1),
            codec.Unencodable,
        ),
        Case("list past the item limit", "argument", lambda: [0] * (limit + 1), codec.Unencodable),
        Case("big ints", "argument", lambda: [2**64, -(2**63) - 1, 2**100, -(2**100), 10**4000], None),
        Case(
            "list grown by a registered form",
            "argument",
            lambda: list_changed_by_registered_form("append"),
            codec.Unencodable,
        ),
        Case(
            "list cleared by a registered form",
            "argument",
            lambda: list_changed_by_registered_form("clear"),
            codec.Unencodable,
        ),
        Case(
            "list item replaced by a registered form",
            "argument",
            lambda: list_changed_by_registered_form("replace"),
            None,
        ),
        Case("dict grown by a registered form", "argument", dict_changed_by_registered_form, codec.Unencodable),
        Case("set changed while its elements are ordered", "argument", set_changed_while_ordered, codec.Opaque),
        Case("registered form raises", "argument", lambda: Registered(_raise), codec.Unencodable),
        Case("registered form is the value itself", "argument", lambda: Registered(_itself), codec.Cycle),
        Case(
            "registered form 100,000 deep",
            "argument",
            lambda: Registered(lambda obj: nested_lists(100_000)),
            codec.Unencodable,
        ),
        Case(
            "exception value with hostile args",
            "argument",
            lambda: Declined(ReprRaises(), [ReprRecurses()]),
            codec.Unencodable,
        ),
        Case("keyword value whose repr raises", "keyword", ReprRaises, codec.Unencodable),
        Case("keyword names whose ordering raises", "keyword", lambda: 1, None),
        Case("return value whose repr raises", "return", ReprRaises, codec.Unencodable),
        Case("return value referencing itself", "return", self_dict, codec.Cycle),
        Case("return value 100,000 deep", "return", lambda: nested_lists(100_000), codec.Unencodable),
        Case("return value past the str limit", "return", lambda: "s" * big, codec.Unencodable),
        Case("exception whose __str__ raises", "raise", raising(StrRaises()), MESSAGE_MARKED),
        Case("exception whose __str__ recurses", "raise", raising(StrRecurses()), MESSAGE_MARKED),
        Case("exception whose __str__ returns an int", "raise", raising(StrWrongType()), MESSAGE_MARKED),
        Case("exception whose __str__ returns a hostile str", "raise", raising(StrShouting()), None),
        Case("exception whose argument's repr raises", "raise", raising(Declined(ReprRaises())), MESSAGE_MARKED),
        Case("exception message past the str limit", "raise", lambda: Declined("m" * big), MESSAGE_MARKED),
        Case("receiver whose __class__ raises", "receiver", lambda: _HiddenReceiver, None),
    ]


def _raise(obj: Registered) -> Any:
    raise LookupError("no form")


def _itself(obj: Registered) -> Any:
    return obj


# Made a subclass of the collaborator's Gateway by the `collaborator` fixture.
_HiddenReceiver: Any = None


# ---------------------------------------------------------------------------------------
# Recording one case.


@dataclasses.dataclass
class Outcome:
    broken: str | None = None
    recorder_error: str | None = None
    unreadable: str | None = None
    frames: list[bytes] = dataclasses.field(default_factory=list)
    markers: set[type | str] = dataclasses.field(default_factory=set)


def markers_in(value: Any, found: set[type | str], seen: set[int]) -> None:
    """The marker types inside a decoded value (iteratively: values may be deep)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (codec.Unencodable, codec.Cycle, codec.Opaque)):
            found.add(type(item))
            continue
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif isinstance(item, (codec.Record, codec.ObjectState)):
            stack.extend(value for _, value in item.fields)
        elif isinstance(item, codec.Pairs):
            stack.extend(part for pair in item.items for part in pair)
        elif isinstance(item, codec.SetItems):
            stack.extend(item.items)
        elif isinstance(item, codec.Custom):
            stack.append(item.value)
        elif isinstance(item, codec.ExceptionValue):
            stack.extend(item.args)


def record_case(case: Case, module: types.ModuleType, path: str) -> Outcome:
    outcome = Outcome()
    value = case.make()
    label = {"return": "give", "raise": "give", "receiver": "Gateway"}.get(case.via, "take")
    stub: dict[str, Callable[..., Any]] = {}
    if case.via == "return":
        stub = {f"{module.__name__}.give": callpin.returns(value)}
    elif case.via == "raise":
        stub = {f"{module.__name__}.give": callpin.raises(value)}
    expected: Any = value if case.via == "return" else module.RESULT
    try:
        with callpin.record(path, spy=f"{module.__name__}.{label}", stub=stub, outcomes="all") as rec:
            try:
                if case.via == "argument":
                    result = module.take(value)
                elif case.via == "keyword":
                    names = {Ordered(f"n{n}"): value for n in (3, 1, 2)}
                    result = module.take(value, **names, first=value)
                elif case.via == "receiver":
                    result = value().ping(1)
                else:
                    result = module.give()
            except BaseException as exc:  # whatever escaped is looked at
                if case.via != "raise" or exc is not value:
                    outcome.broken = outcome.recorder_error = f"{type(exc).__name__}: {exc!s:.200}"
            else:
                if case.via == "raise" or result is not expected:
                    outcome.broken = f"returned {type(result).__name__}"
        outcome.frames = rec.frames
    except Exception as exc:  # the recorder itself failing is counted
        outcome.recorder_error = f"{type(exc).__name__}: {exc!s:.200}"
        return outcome
    try:
        events = list(callpin.load(path))
    except callpin.LogFormatError as exc:
        outcome.unreadable = str(exc)
        return outcome
    # A call and its return; spying the class also records the receiver's construction.
    if len(events) != (4 if case.via == "receiver" else 2):
        outcome.unreadable = f"{len(events)} events"
    for event in events:
        markers_in([event.args, event.kwargs, event.value], outcome.markers, set())
        if event.error is not None and (
            event.error[1] == "<unprintable>" or event.error[1].startswith("<unencodable str:")
        ):
            outcome.markers.add(MESSAGE_MARKED)
    return outcome


def encoded_by_both(case: Case) -> tuple[bytes, bytes]:
    """The value itself through the Python encoder and through the live one."""
    return codec.Encoder().encode(case.make()), _impl.Encoder().encode(case.make())


@pytest.fixture
def collaborator(make_module: Callable[..., types.ModuleType]) -> Iterator[types.ModuleType]:
    global _HiddenReceiver
    module = make_module("cp_hostile", COLLABORATOR)

    class Hidden(module.Gateway):  # type: ignore[name-defined,misc]
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            raise ValueError("__class__")

    _HiddenReceiver = Hidden
    callpin.register(Registered, lambda obj: obj.form(obj))
    try:
        yield module
    finally:
        callpin.unregister(Registered)
        _HiddenReceiver = None


def test_hostile_values_are_recorded_or_marked_and_never_break_the_call(
    collaborator, monkeypatch, tmp_path, scale, figures
):
    big = scale.pick(codec.MAX_STR + 1, 100 * 1024 * 1024)
    cases = catalogue(big)
    problems: list[str] = []
    counts = {"broken": 0, "recorder": 0, "unreadable": 0, "mismatch": 0, "unencodable": 0}
    for case in cases:
        live = record_case(case, collaborator, str(tmp_path / "live.cpin"))
        with monkeypatch.context() as patched:
            patched.setattr(_impl, "Spy", journal.Spy)
            reference = record_case(case, collaborator, str(tmp_path / "python.cpin"))
        for spies, outcome in (("live", live), ("python", reference)):
            for kind, problem in (
                ("broken", outcome.broken),
                ("recorder", outcome.recorder_error),
                ("unreadable", outcome.unreadable),
            ):
                if problem is not None:
                    counts[kind] += 1
                    problems.append(f"{case.name} ({spies} spy): {kind}: {problem}")
            if case.marked is None and codec.Unencodable in outcome.markers:
                problems.append(f"{case.name} ({spies} spy): marked though it has a form")
            if case.marked is not None and case.marked not in outcome.markers:
                problems.append(
                    f"{case.name} ({spies} spy): no {getattr(case.marked, '__name__', case.marked)}"
                    f" marker, found {sorted(map(str, outcome.markers))}"
                )
        if live.frames != reference.frames:
            counts["mismatch"] += 1
            problems.append(f"{case.name}: the C and Python spies wrote different bytes")
        if C_LIVE and case.via in ("argument", "return"):
            python_bytes, c_bytes = encoded_by_both(case)
            if python_bytes != c_bytes:
                counts["mismatch"] += 1
                problems.append(f"{case.name}: the C and Python encoders wrote different bytes")
        if codec.Unencodable in live.markers:
            counts["unencodable"] += 1
    check = "hostile arguments"
    figures.add(check, "cases tried", len(cases))
    figures.add(check, "calls broken", counts["broken"], zero=True)
    figures.add(check, "recorder errors", counts["recorder"], zero=True)
    figures.add(check, "unreadable logs", counts["unreadable"], zero=True)
    figures.add(check, "C/Python byte mismatches", counts["mismatch"], zero=True)
    figures.add(check, "values marked unencodable", counts["unencodable"])
    assert problems == []
    assert counts["unencodable"] >= 20
