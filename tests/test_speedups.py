"""The C encoder: the chooser, its robustness under hostile callbacks, limits, threads and leaks."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import os
import subprocess
import sys
import textwrap
import threading
import uuid
from typing import Any

import pytest

from callpin import _impl, codec, forms, values
from callpin.codec import Unencodable, decode
from callpin.normalize import DEFAULT_RULES, NO_RULES, Numbering, rule

pytestmark = pytest.mark.skipif(
    _impl.IMPLEMENTATION != "c",
    reason="the C speedups are not live (not built, or CALLPIN_PURE_PYTHON=1)",
)

if _impl.IMPLEMENTATION == "c":
    from callpin import _speedups

CEncoder = _impl.Encoder
PyEncoder = codec.Encoder
KEY = "12345678-1234-5678-1234-567812345678"
KEY_VALUE = uuid.UUID(KEY).int  # what a uuid is numbered by, in text and as an object
TICKETS = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])


def both(make: Any, rules: Any = DEFAULT_RULES, method: str = "encode", *args: Any) -> tuple[Any, Any]:
    """Encode a fresh `make()` with each implementation (callbacks may change a value)."""
    results = []
    for implementation in (PyEncoder, CEncoder):
        encoder = implementation(rules)
        call = getattr(encoder, method)
        try:
            results.append(call(make(), *args))
        except BaseException as exc:  # both must fail alike, whatever the exception
            results.append(type(exc))
    return results[0], results[1]


def nested(levels: int, leaf: Any = None) -> Any:
    value = [] if leaf is None else leaf
    for _ in range(levels):
        value = [value]
    return value


# ---------------------------------------------------------------------------------------
# The chooser.


def test_the_c_encoder_is_the_live_one():
    assert _impl.Encoder is not codec.Encoder
    assert _impl.Encoder.__module__ == "callpin._speedups"


def test_pure_python_is_forced_by_the_environment():
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import callpin, callpin._impl as i; print(callpin.IMPLEMENTATION, i.Encoder.__module__)",
        ],
        env={**os.environ, "CALLPIN_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == ["python", "callpin.codec"]


def test_configuring_again_with_the_same_interface_changes_nothing():
    _speedups.configure(**codec.SPEEDUPS_INTERFACE)
    assert CEncoder(NO_RULES).encode(uuid.UUID(KEY)) == PyEncoder(NO_RULES).encode(uuid.UUID(KEY))


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"limits": lambda: (1, 1, 1)}, RuntimeError, "already configured with another limits"),
        ({"Extra": int}, TypeError, "takes no 'Extra'"),
        ({"TooLarge": int}, TypeError, "TooLarge is not an exception class"),
        ({"BUILTIN_RULES": []}, TypeError, "BUILTIN_RULES is not a tuple"),
        ({"datetime": dt.date}, ImportError, "datetime.datetime is not the C datetime type"),
    ],
)
def test_configure_refuses_another_interface(change, error, message):
    with pytest.raises(error, match=message):
        _speedups.configure(**{**codec.SPEEDUPS_INTERFACE, **change})


def test_configure_refuses_an_interface_with_an_entry_missing():
    partial = dict(codec.SPEEDUPS_INTERFACE)
    del partial["canonical_form"]
    with pytest.raises(TypeError, match="missing canonical_form"):
        _speedups.configure(**partial)
    with pytest.raises(TypeError, match="keyword arguments only"):
        _speedups.configure(codec)  # type: ignore[call-arg]


def test_the_encoder_reads_its_limits_when_it_is_created(monkeypatch):
    monkeypatch.setattr(codec, "MAX_ITEMS", 2)
    limited = CEncoder(NO_RULES)
    monkeypatch.setattr(codec, "MAX_ITEMS", 1_000_000)
    assert decode(limited.encode([1, 2, 3])) == Unencodable("builtins.list", "3 items exceed the limit of 2")
    assert decode(CEncoder(NO_RULES).encode([1, 2, 3])) == [1, 2, 3]


def test_args_and_kwargs_fields_past_the_item_limit_are_marked_alike(monkeypatch):
    monkeypatch.setattr(codec, "MAX_ITEMS", 2)
    event = (0, "l", (1, 2, 3), {"a": 1, "b": 2, "c": 3}, None, None, 1, 0)
    assert CEncoder(NO_RULES).encode_event(*event) == PyEncoder(NO_RULES).encode_event(*event)


def test_the_encoder_has_the_python_encoders_interface():
    encoder = CEncoder(rules=NO_RULES)
    assert encoder.rules is NO_RULES
    assert isinstance(encoder.numbering, Numbering)
    assert CEncoder().rules is DEFAULT_RULES
    frame = encoder.encode_event(kind=0, label="l", args=(1,), kwargs={}, value=None, error=None, thread=1, depth=0)
    assert frame == PyEncoder(NO_RULES).encode_event(0, "l", (1,), {}, None, None, 1, 0)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((0, "l", [], {}, None, None, 1), {}),
        ((0, "l", [], {}, None, None, 1, 0), {"depth": 0}),
        ((), {"nope": 1}),
        ((0,) * 9, {}),
    ],
)
def test_encode_event_rejects_wrong_arguments_like_a_python_method(args, kwargs):
    with pytest.raises(TypeError):
        CEncoder().encode_event(*args, **kwargs)


@pytest.mark.parametrize(
    "event",
    [
        (2**64, "l", [], {}, None, None, 1, 0),
        (0, "l", [], {}, None, None, 1.0, 0),
        (0, 5, [], {}, None, None, 1, 0),
        (0, "l", [], {}, None, ("E", 5), 1, 0),
        (0, "l", 5, {}, None, None, 1, 0),
        (0, "l", [], {}, None, ("E",), 1, 0),
    ],
)
def test_malformed_events_raise_the_same_error_in_both(event):
    python, c = both(lambda: event[0], DEFAULT_RULES, "encode_event", *event[1:])
    assert isinstance(python, type) and issubclass(python, Exception)
    assert c is python


# ---------------------------------------------------------------------------------------
# The C scan of the built-in rules, at the edges of their patterns.

_STEMS = [
    KEY,
    KEY.upper(),
    KEY[:-1],
    KEY + "0",
    KEY.replace("-", "", 1),
    "2024-03-01T09:30:00",
    "2024-03-01 09:30:00",
    "2024-03-01t09:30:00",
    "2024-03-01T09:30",
    "2024-03-01T09:30:00.",
    "2024-03-01T09:30:00.5",
    "2024-03-01T09:30:00,123456",
    "2024-03-01T09:30:00Z",
    "2024-03-01T09:30:00+09:00",
    "2024-03-01T09:30:00-0930",
    "2024-03-01T09:30:00+09",
    "2024-03-01T09:30:00+09:0",
    "2024-03-01T09:30:00.5Z",
    "2024-03-01 09:30:00." + "1" * 200 + "+09:00",
    *(f"0x{'a1' * 8}"[: 2 + digits] for digits in (5, 6, 7, 15, 16)),
    f"0x{'A1' * 9}"[:19],
    "0X7f3a2c1b4d90",
]
_EDGES = ["", "a", "Z", "0", "1", " ", "-", "_", "é", "\ud800"]


@pytest.mark.parametrize("stem", _STEMS)
@pytest.mark.parametrize("rules", [DEFAULT_RULES, TICKETS], ids=["builtin", "user-rules"])
def test_the_c_scan_matches_the_patterns_at_their_edges(stem, rules):
    texts = [before + stem + after for before in _EDGES for after in _EDGES]
    texts += [stem + stem, stem + " " + stem, f"<{stem}>", f"{stem} {stem[:-1]}0 {stem[:-1]}1"]
    python, c = PyEncoder(rules), CEncoder(rules)
    for text in texts:
        value = [text, Shown(text), {text, Shown(text)}]
        assert c.encode(value) == python.encode(value), text
    assert c.numbering.table == python.numbering.table


class Shown:
    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


# ---------------------------------------------------------------------------------------
# Numbering shared with Python.


def test_user_rules_and_the_c_scan_share_one_numbering():
    encoder = CEncoder(TICKETS)
    encoder.encode(f"T-1 {KEY}")
    encoder.encode(uuid.UUID(KEY))
    encoder.encode("T-2 T-1")
    assert encoder.numbering.table == {"ticket": {"T-1": 1, "T-2": 2}, "uuid": {KEY_VALUE: 1}}


def test_a_replaced_numbering_continues_from_its_state():
    numbering = Numbering()
    numbering.number("uuid", 0)
    encoder = CEncoder()
    encoder.numbering = numbering
    assert codec.decode(encoder.encode(KEY)) == "<uuid:2>"
    assert numbering.table["uuid"][KEY_VALUE] == 2


def test_a_key_stored_with_none_is_numbered_as_numbering_does():
    # Numbering.number reads a None entry as "not numbered yet": both encoders give it
    # the next number (the table's size plus one, the None entry counted) and store it.
    encoded, tables = [], []
    for make in (PyEncoder, CEncoder):
        encoder = make()
        encoder.numbering.table = {"secret": {"abc": None}, "uuid": {KEY_VALUE: None}}
        encoded.append(encoder.encode([{"token": "abc"}, uuid.UUID(KEY)]))
        tables.append(encoder.numbering.table)
    assert encoded[0] == encoded[1]
    assert codec.decode(encoded[1]) == [{"token": codec.Placeholder("secret", 2)}, codec.Placeholder("uuid", 2)]
    assert tables[0] == tables[1] == {"secret": {"abc": 2}, "uuid": {KEY_VALUE: 2}}


def test_a_numbering_subclass_is_asked_through_its_methods():
    calls = []

    class Counting(Numbering):
        def number(self, placeholder: str, key: str | int) -> int:
            calls.append((placeholder, key))
            return 7

    encoder = CEncoder()
    encoder.numbering = Counting()
    assert codec.decode(encoder.encode(f"id {KEY}")) == "id <uuid:7>"
    assert calls == [("uuid", KEY_VALUE)]


def test_assigning_rules_changes_what_is_normalized():
    encoder = CEncoder(NO_RULES)
    assert codec.decode(encoder.encode(KEY)) == KEY
    encoder.rules = DEFAULT_RULES
    assert codec.decode(encoder.encode(KEY)) == "<uuid:1>"
    with pytest.raises(TypeError):
        del encoder.rules


# ---------------------------------------------------------------------------------------
# Depth, cycles and limits.


@pytest.mark.parametrize("levels", [codec.MAX_DEPTH, codec.MAX_DEPTH + 1, codec.MAX_DEPTH + 5])
def test_depth_limit_at_and_past_the_limit(levels):
    python, c = both(lambda: nested(levels))
    assert c == python
    innermost = codec.decode(c)
    for _ in range(min(levels, codec.MAX_DEPTH + 1)):
        innermost = innermost[0]
    if levels <= codec.MAX_DEPTH:
        assert innermost == []
    else:
        assert innermost == Unencodable("builtins.list", f"nested deeper than {codec.MAX_DEPTH}")


def test_past_the_depth_limit_an_unknown_object_is_not_asked_for_its_form():
    asked = []

    class Loud:
        def __repr__(self) -> str:
            asked.append(1)
            return "loud"

    python, c = both(lambda: nested(codec.MAX_DEPTH + 1, Loud()))
    assert c == python
    assert asked == []


def test_scalars_and_markers_are_written_past_the_depth_limit():
    leaves = [1, "x", codec.Placeholder("uuid", 1), codec.Cycle(1), uuid.UUID(KEY)]
    for leaf in leaves:
        python, c = both(lambda leaf=leaf: nested(codec.MAX_DEPTH + 1, leaf))
        assert c == python
        assert b"nested deeper" not in c


def test_a_depth_limit_past_the_c_stack_gives_a_recursion_marker(monkeypatch):
    monkeypatch.setattr(codec, "MAX_DEPTH", 10**6)
    encoded = CEncoder(NO_RULES).encode(nested(50_000))
    assert b"RecursionError" in encoded


@pytest.mark.parametrize("shape", ["list", "dict", "tuple-list", "record", "object"])
def test_cycles_are_marked_as_in_python(shape):
    @dataclasses.dataclass
    class Node:
        child: Any

    class Holder:
        def __init__(self) -> None:
            self.me: Any = None

    def make() -> Any:
        if shape == "list":
            items: list[Any] = [1]
            items.append(items)
            return items
        if shape == "dict":
            found: dict[str, Any] = {}
            found["me"] = [found]
            return found
        if shape == "tuple-list":
            inner: list[Any] = []
            outer = (inner,)
            inner.append(outer)
            return outer
        if shape == "record":
            node = Node(None)
            node.child = [node]
            return node
        holder = Holder()
        forms.register(Holder, lambda h: {"me": h.me})
        holder.me = holder
        return holder

    try:
        python, c = both(make)
    finally:
        forms.unregister(Holder)
    assert c == python
    assert b"\xd4\x10" in c  # a fixext1 cycle marker


def test_a_list_of_one_million_items_is_at_the_limit_and_one_more_is_past_it():
    at_limit = CEncoder(NO_RULES).encode([None] * codec.MAX_ITEMS)
    assert len(at_limit) == 5 + codec.MAX_ITEMS
    python, c = both(lambda: [None] * (codec.MAX_ITEMS + 1), NO_RULES)
    assert c == python
    reason = f"{codec.MAX_ITEMS + 1} items exceed the limit of {codec.MAX_ITEMS}"
    assert codec.decode(c) == Unencodable("builtins.list", reason)


@pytest.mark.parametrize(("size", "marked"), [(codec.MAX_STR, False), (codec.MAX_STR + 1, True)])
def test_strings_at_and_past_the_size_limit(size, marked):
    text = "é" * (size // 2) + "x" * (size % 2)
    python, c = both(lambda: text)
    assert c == python
    if marked:
        reason = f"str of {size} bytes exceeds the limit of {codec.MAX_STR}"
        assert codec.decode(c) == Unencodable("builtins.str", reason)
    else:
        assert len(c) == 5 + size


# ---------------------------------------------------------------------------------------
# Hostile callbacks.


class Raising:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    def __repr__(self) -> str:
        raise self.error


# Recorded by its repr, whose failure is what these tests are about.
forms.register(Raising, forms.opaque)


@pytest.mark.parametrize("error", [ValueError("x"), MemoryError(), RecursionError(), LookupError()])
def test_an_exception_from_repr_becomes_a_marker_naming_it(error):
    python, c = both(lambda: {"a": [1, Raising(error), 2]})
    assert c == python
    assert codec.decode(c)["a"][1] == Unencodable(f"{__name__}.Raising", type(error).__name__)


@pytest.mark.parametrize("error", [KeyboardInterrupt(), SystemExit(3)])
def test_a_base_exception_from_repr_propagates_and_leaves_the_encoder_usable(error):
    encoder = CEncoder()
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(type(error)):
        encoder.encode([cycle, {"k": Raising(error)}])
    assert encoder.encode(cycle) == PyEncoder().encode(cycle)


def test_an_iterator_that_raises_in_event_args_propagates_from_both():
    class Broken:
        def __iter__(self) -> Any:
            raise ValueError("no iteration")

    python, c = both(lambda: 0, DEFAULT_RULES, "encode_event", "l", Broken(), {}, None, None, 1, 0)
    assert python is c is ValueError


def test_a_registered_form_that_iterates_a_raising_iterable_becomes_a_marker():
    class Bag:
        def __iter__(self) -> Any:
            raise TypeError("no iteration")

    forms.register(Bag, list)
    try:
        python, c = both(lambda: [Bag()])
    finally:
        forms.unregister(Bag)
    assert c == python
    assert codec.decode(c) == [Unencodable(values.qualified_name(Bag), "TypeError")]


def test_set_elements_are_ordered_by_bytes_never_hashed_or_compared_again():
    calls = []

    class Touchy:
        def __init__(self, n: int) -> None:
            self.n = n

        def __hash__(self) -> int:
            calls.append("hash")
            return self.n

        def __eq__(self, other: object) -> bool:
            calls.append("eq")
            raise TypeError("no comparisons")

        def __lt__(self, other: object) -> bool:
            raise TypeError("no ordering")

        def __repr__(self) -> str:
            return f"Touchy({self.n})"

    members = {Touchy(2), Touchy(1), Touchy(3)}
    calls.clear()
    python = PyEncoder().encode(members)
    c = CEncoder().encode(members)
    assert c == python
    assert calls == []


def test_a_dict_growing_during_encoding_is_marked_as_in_python():
    def make() -> dict[str, Any]:
        target: dict[str, Any] = {}

        class Grower:
            def __repr__(self) -> str:
                target["new"] = 1
                return "grower"

        target.update(a=Grower(), b=2)
        return target

    python, c = both(make)
    assert c == python
    assert codec.decode(c) == Unencodable("builtins.dict", "RuntimeError")


def test_a_dict_whose_keys_change_at_the_same_size_is_marked_as_in_python():
    def make() -> dict[str, Any]:
        target: dict[str, Any] = {}

        class Swapper:
            def __repr__(self) -> str:
                del target["a"]
                target["c"] = 3
                return "swapper"

        target.update(a=Swapper(), b=2)
        return target

    python, c = both(make)
    assert c == python
    assert codec.decode(c) == Unencodable("builtins.dict", "RuntimeError")


def test_a_value_deleted_from_its_dict_while_encoded_stays_alive():
    def make() -> dict[str, Any]:
        target: dict[str, Any] = {}

        class Suicidal:
            def __repr__(self) -> str:
                target.clear()
                gc.collect()
                return f"still here {id(self):#x}"

        target["a"] = Suicidal()
        return target

    python, c = both(make)
    assert c == python


@pytest.mark.parametrize("change", ["clear", "append", "replace"])
def test_a_list_changed_while_encoded_is_written_as_python_iterates_it(change):
    def make() -> list[Any]:
        items: list[Any] = []

        class Changer:
            def __repr__(self) -> str:
                if change == "clear":
                    items.clear()
                elif change == "append" and len(items) < 5:
                    items.append("more")
                elif change == "replace":
                    items[:] = ["x", "y", "z"]
                return "changer"

        items.extend([Changer(), 1])
        return items

    python, c = both(make)
    assert c == python


def test_a_callback_that_reenters_the_encoder_sees_its_state_as_in_python():
    def make_for(encoder_box: list[Any]) -> Any:
        class Reentrant:
            def __repr__(self) -> str:
                return encoder_box[0].encode({KEY: [self.__class__.__name__]}).hex()

        return {frozenset({Reentrant(), KEY}), KEY}

    outputs = []
    for implementation in (PyEncoder, CEncoder):
        box: list[Any] = []
        encoder = implementation(DEFAULT_RULES)
        box.append(encoder)
        outputs.append((encoder.encode(make_for(box)), encoder.numbering.table))
    assert outputs[0] == outputs[1]


def test_memory_errors_at_every_allocation_leave_no_crash_and_a_working_encoder():
    pytest.importorskip("_testcapi", reason="needs CPython's _testcapi to fail allocations")
    # Fail the n-th allocation for every n: each failure inside the encoder must end as a
    # marker or a MemoryError, never a crash, and leave later encodings correct.
    script = textwrap.dedent(
        f"""
        import _testcapi, uuid
        from callpin import _impl, codec
        from callpin.normalize import DEFAULT_RULES, rule
        tickets = DEFAULT_RULES.with_rules([rule("T-[0-9]+", "ticket")])
        value = {{"k": [1, "id {KEY} T-1", uuid.UUID("{KEY}"), (2, frozenset({{"a", "{KEY}"}})),
                        10**30, 1.5, "\u00e9" * 40, {{uuid.UUID(int=1), uuid.UUID(int=2)}}]}}
        outcomes = set()
        for rules in (DEFAULT_RULES, tickets):
            expected = codec.Encoder(rules).encode(value)
            for start in range(1, 500):
                encoder = _impl.Encoder(rules)
                _testcapi.set_nomemory(start, start + 1)
                try:
                    outcomes.add("same" if encoder.encode(value) == expected else "marked")
                except MemoryError:
                    outcomes.add("MemoryError")
                finally:
                    _testcapi.remove_mem_hooks()
                assert _impl.Encoder(rules).encode(value) == expected
        print(" ".join(sorted(outcomes)))
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["MemoryError", "marked", "same"]


# ---------------------------------------------------------------------------------------
# Threads and leaks.


def test_threads_with_their_own_encoders_write_what_one_thread_writes():
    class Slow:
        def __init__(self, n: int) -> None:
            self.n = n

        def __repr__(self) -> str:
            sum(range(200))  # long enough for the interpreter to switch threads
            return f"<Slow {self.n} at 0x7f00000{self.n:05x}>"

    def events(n: int) -> list[Any]:
        return [{"id": str(uuid.UUID(int=n * 7919 + i)), "obj": Slow(i), "set": {Slow(i), i}} for i in range(40)]

    def encode_all(implementation: Any, n: int) -> list[bytes]:
        encoder = implementation()
        return [encoder.encode(event) for event in events(n)]

    expected = {n: encode_all(PyEncoder, n) for n in range(4)}
    results: dict[int, list[bytes]] = {}

    def work(n: int) -> None:
        results[n] = encode_all(CEncoder, n)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert results == expected


def _hostile_values() -> list[Any]:
    cycle: list[Any] = [1]
    cycle.append(cycle)
    return [
        {"id": KEY, "when": "2024-03-01T09:30:00Z", "n": 10**30, "f": float("nan"), "s": "a\ud800"},
        {frozenset({1, "x", KEY}), (1, 2)},
        [Raising(ValueError("x")), cycle, nested(codec.MAX_DEPTH + 2)],
        codec.Record("r", (("a", [1]), ("b", 2, 3))),
        codec.Pairs(((KEY, 1), ([1], 2))),
        uuid.UUID(KEY),
    ]


def test_encoding_leaves_the_reference_counts_of_its_arguments_as_they_were():
    values = _hostile_values()
    objects = [*values, *values[0].values(), KEY, ValueError, DEFAULT_RULES, TICKETS]
    encoder = CEncoder(TICKETS)
    for value in values:
        encoder.encode(value)
    # Counted with every collectable cycle gone, before and after: what stays is what the
    # encoder holds. Garbage of earlier tests that refers to these objects (encoders in
    # cycles hold their rules) is otherwise collected whenever the collector runs, which
    # differs between Python versions, and the counts then drop during the loop.
    gc.collect()
    before = [sys.getrefcount(obj) for obj in objects]
    for _ in range(200):
        for value in values:
            encoder.encode(value)
        encoder.encode_event(0, KEY, values, {"k": values[0]}, values[1], ("E", f"at {KEY}"), 1, 0)
    gc.collect()
    after = [sys.getrefcount(obj) for obj in objects]
    assert after == before
