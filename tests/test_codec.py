"""The canonical codec: natives match msgpack, ext types round-trip, encoding is pure."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
import re
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callpin import codec, forms, normalize
from callpin.codec import (
    MAX_DEPTH,
    Custom,
    Cycle,
    EnumValue,
    ObjectState,
    Opaque,
    Record,
    Unencodable,
    decode,
    encode,
)
from callpin.errors import CorruptLog, LimitExceeded, UsageError
from callpin.event import decode_event
from callpin.forms import register, unregister
from callpin.normalize import DEFAULT_RULES, NO_RULES, RuleSet, rule, secret_keys
from callpin.values import qualified_name


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        127,
        128,
        -32,
        -33,
        255,
        256,
        65535,
        65536,
        2**32,
        2**64 - 1,
        -(2**63),
        1.5,
        -0.0,
        "",
        "x" * 31,
        "x" * 32,
        "x" * 256,
        "é" * 70000,
        b"",
        b"x" * 300,
        [],
        list(range(16)),
        {},
        {str(i): i for i in range(16)},
    ],
)
def test_natives_are_the_bytes_msgpack_writes(encoder_class, value):
    assert encoder_class(NO_RULES).encode(value) == msgpack.packb(value, use_bin_type=True)


scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text()
    | st.binary()
    | st.decimals(allow_nan=False)
    | st.uuids()
    | st.datetimes(timezones=st.none() | st.timezones())
    | st.dates()
    | st.times()
    | st.timedeltas()
)
hashables = st.recursive(
    scalars, lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=4), max_leaves=8
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(hashables, inner, max_size=5)
        | st.tuples(inner, inner)
        | st.sets(hashables, max_size=5)
        | st.frozensets(hashables, max_size=5)
    ),
    max_leaves=25,
)


def _equivalent(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN (encoding canonicalizes every NaN)."""
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, Decimal) and isinstance(b, Decimal):
        return str(a) == str(b)
    if isinstance(a, (dt.datetime, dt.time)) and isinstance(b, type(a)):
        # Aware values decode with a fixed offset; Python refuses to equate an ambiguous
        # (fold) wall time across zones, so compare the written form.
        return a.isoformat() == b.isoformat()
    if type(a) is not type(b):
        return False
    if isinstance(a, (set, frozenset)):
        # Set elements have no order to compare by; their canonical bytes are the identity.
        return encode(a, NO_RULES) == encode(b, NO_RULES)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(_equivalent, a, b))
    if isinstance(a, dict):
        return (
            list(map(type, a)) == list(map(type, b))
            and len(a) == len(b)
            and all(_equivalent(x, y) and _equivalent(a[x], b[y]) for x, y in zip(a, b, strict=True))
        )
    return a == b


@settings(max_examples=300, deadline=None)
@given(values)
def test_raw_encoding_round_trips(value):
    data = encode(value, NO_RULES)
    decoded = decode(data)
    assert encode(decoded, NO_RULES) == data
    if not _has_nan_in_collection(value):
        assert _equivalent(decoded, value)


def _has_nan_in_collection(value: Any) -> bool:
    if isinstance(value, (set, frozenset, dict, list, tuple)):
        items = list(value) + (list(value.values()) if isinstance(value, dict) else [])
        return any(isinstance(v, float) and math.isnan(v) for v in items) or any(
            _has_nan_in_collection(v) for v in items
        )
    if isinstance(value, Decimal):
        return value.is_nan()
    return False


@settings(max_examples=200, deadline=None)
@given(values)
def test_encoding_is_a_pure_function_of_the_value(value):
    from callpin.normalize import DEFAULT_RULES

    assert encode(value) == encode(value)
    assert encode(value, DEFAULT_RULES) == encode(decode(encode(value, NO_RULES)), DEFAULT_RULES)


def test_nan_payloads_are_canonical():
    import struct

    odd_nan = struct.unpack(">d", b"\xff\xf8\x00\x00\x00\x00\x00\x01")[0]
    assert encode(odd_nan, NO_RULES) == encode(float("nan"), NO_RULES)


class Shade(enum.IntEnum):
    DARK = 1


def test_int_enum_is_an_enum_not_an_int():
    assert decode(encode(Shade.DARK, NO_RULES)) == EnumValue(f"{__name__}.Shade", "DARK")


class Perm(enum.IntFlag):
    R = 4
    W = 2


def test_flag_values_no_member_names_are_told_apart_by_their_value(encoder_class):
    found = decode(encoder_class(NO_RULES).encode([Perm(0), Perm(8), Perm(16), Perm.R | Perm.W, Perm.R]))
    assert found == [
        EnumValue(f"{__name__}.Perm", "(0)"),
        EnumValue(f"{__name__}.Perm", "(8)"),
        EnumValue(f"{__name__}.Perm", "(16)"),
        EnumValue(f"{__name__}.Perm", "R|W"),
        EnumValue(f"{__name__}.Perm", "R"),
    ]
    assert [repr(value) for value in found[1:3]] == ["Perm(8)", "Perm(16)"]


def test_the_standard_streams_are_written_by_name_whichever_object_holds_them(encoder_class, monkeypatch):
    import io
    import sys

    original = [sys.__stdin__, sys.__stdout__, sys.__stderr__]
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # a test runner's capture
    found = decode(encoder_class(NO_RULES).encode([*original, sys.stderr]))
    assert found == [Opaque(f"sys.{name}", f"<sys.{name}>") for name in ("stdin", "stdout", "stderr", "stderr")]


@dataclasses.dataclass(frozen=True)
class Card:
    number: str
    expires: dt.date


def test_dataclass_fields_keep_their_order_and_values():
    decoded = decode(encode(Card("4242", dt.date(2030, 1, 1)), NO_RULES))
    assert decoded == Record(f"{__name__}.Card", (("number", "4242"), ("expires", dt.date(2030, 1, 1))))
    assert repr(decoded) == "Card(number='4242', expires=datetime.date(2030, 1, 1))"


class Cents:
    def __init__(self, value: int) -> None:
        self.value = value


def test_registered_type_is_encoded_by_its_function():
    register(Cents, lambda c: c.value)
    try:
        assert decode(encode(Cents(150), NO_RULES)) == Custom(f"{__name__}.Cents", 150)
    finally:
        unregister(Cents)
    assert decode(encode(Cents(150), NO_RULES)) == ObjectState(f"{__name__}.Cents", 1, (("value", 150),))


def test_a_type_registered_as_opaque_is_recorded_by_its_repr():
    register(Cents, forms.opaque)
    cents = Cents(150)
    try:
        assert decode(encode(cents, NO_RULES)) == Opaque(f"{__name__}.Cents", repr(cents))
    finally:
        unregister(Cents)


def test_a_form_registered_after_the_type_was_recorded_applies_from_then_on():
    state = ObjectState(f"{__name__}.Cents", 1, (("value", 150),))
    assert decode(encode(Cents(150), NO_RULES)) == state
    register(Cents, lambda c: c.value)
    try:
        assert decode(encode(Cents(150), NO_RULES)) == Custom(f"{__name__}.Cents", 150)
    finally:
        unregister(Cents)
    assert decode(encode(Cents(150), NO_RULES)) == state


def test_a_registration_undone_gives_the_type_the_form_it_had_before():
    state = ObjectState(f"{__name__}.Cents", 1, (("value", 150),))
    with register(Cents, lambda c: c.value) as outer:
        assert outer.cls is Cents
        with register(Cents, forms.opaque):
            assert isinstance(decode(encode(Cents(150), NO_RULES)), Opaque)
        assert decode(encode(Cents(150), NO_RULES)) == Custom(f"{__name__}.Cents", 150)
    assert decode(encode(Cents(150), NO_RULES)) == state
    registered = forms.registered_forms()
    register(Cents, forms.opaque)
    assert forms.restore_forms(registered) and not forms.restore_forms(registered)
    assert decode(encode(Cents(150), NO_RULES)) == state


def test_a_class_an_abc_registers_after_it_was_recorded_reads_as_that_abc():
    from collections.abc import Mapping

    class Settings:
        def __init__(self) -> None:
            self.items_ = {"a": 1}

        def __getitem__(self, key: str) -> int:
            return self.items_[key]

        def __iter__(self) -> Any:
            return iter(self.items_)

        def __len__(self) -> int:
            return 1

        def items(self) -> Any:
            return self.items_.items()

    name = f"{__name__}.{Settings.__qualname__}"
    assert decode(encode(Settings(), NO_RULES)) == ObjectState(name, 1, (("items_", {"a": 1}),))
    Mapping.register(Settings)
    assert decode(encode(Settings(), NO_RULES)) == Custom(name, {"a": 1})


class ClaimsToBeADict:
    """A proxy-like object whose `__class__` says dict: isinstance() believes it, so the encoder does."""

    def __init__(self, wrapped: dict[str, int]) -> None:
        self.wrapped = wrapped

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return dict

    def items(self) -> Any:
        return self.wrapped.items()


def test_an_object_whose_class_claims_another_type_is_asked_every_time():
    plain = type("Plain", (), {})
    for _ in range(2):  # the second time a form of its type is known
        assert decode(encode(ClaimsToBeADict({"a": 1}), NO_RULES)) == {"a": 1}
    assert decode(encode(plain(), NO_RULES)) == ObjectState(f"{__name__}.Plain", 1, ())


@pytest.mark.parametrize("kind", ["namedtuple", "dataclass", "exception", "mapping"])
def test_a_class_made_at_run_time_is_not_kept_alive_by_its_form(kind):
    import collections
    import gc
    import weakref
    from collections.abc import Mapping

    def made() -> tuple[type, Any]:
        if kind == "namedtuple":
            cls: type = collections.namedtuple("Pair", "a b")
            return cls, cls(1, 2)
        if kind == "dataclass":
            cls = dataclasses.make_dataclass("Row", ["a"])
            return cls, cls(1)
        if kind == "exception":
            cls = type("Failed", (Exception,), {})
            return cls, cls("no")
        cls = type(
            "Items",
            (Mapping,),
            {"__getitem__": lambda self, k: 1, "__iter__": lambda self: iter("a"), "__len__": lambda self: 1},
        )
        return cls, cls()

    cls, value = made()
    assert decode(encode(value, NO_RULES)) != repr(value)
    gone = weakref.ref(cls)
    del cls, value
    gc.collect()
    assert gone() is None


def test_native_types_cannot_be_registered():
    with pytest.raises(UsageError):
        register(dict, lambda d: 1)


class ExplodingRepr:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


def test_a_value_whose_repr_raises_becomes_a_marker():
    decoded = decode(encode([1, ExplodingRepr(), 2], NO_RULES))
    assert decoded == [1, Unencodable(f"{__name__}.ExplodingRepr", "RuntimeError"), 2]


class ReRaising:
    """A repr that raises one kept exception instance every time (a cached error)."""

    def __init__(self) -> None:
        self.error = RuntimeError("cached")

    def __repr__(self) -> str:
        raise self.error


# Recorded by its repr, whose failure is what the test is about.
forms.register(ReRaising, forms.opaque)


def test_an_exception_turned_into_a_marker_keeps_no_traceback(encoder_class):
    # Kept, the traceback holds the failed call's frames, and an exception raised by
    # every repr grows by one traceback entry per encode: memory without bound.
    value = ReRaising()
    encoder = encoder_class(NO_RULES)
    for _ in range(3):
        assert decode(encoder.encode(value)) == Unencodable(f"{__name__}.ReRaising", "RuntimeError")
    assert value.error.__traceback__ is None


class Subclassed(dict):  # type: ignore[type-arg]
    def items(self):  # type: ignore[override]
        raise ValueError("hostile")


def test_a_hostile_mapping_becomes_a_marker_and_its_siblings_survive():
    assert decode(encode({"ok": 1, "bad": Subclassed(a=1)}, NO_RULES)) == {
        "ok": 1,
        "bad": Unencodable(f"{__name__}.Subclassed", "ValueError"),
    }


def _nest(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


def test_depth_limit_at_and_one_past():
    at_limit = decode(encode(_nest(MAX_DEPTH), NO_RULES))
    assert at_limit == _nest(MAX_DEPTH)
    past = decode(encode(_nest(MAX_DEPTH + 1), NO_RULES))
    inner = past
    for _ in range(MAX_DEPTH + 1):
        inner = inner[0]
    assert inner == Unencodable("builtins.list", f"nested deeper than {MAX_DEPTH}")


def test_very_deep_nesting_is_recorded_not_fatal():
    assert encode(_nest(100_000), NO_RULES).endswith(b"nested deeper than 64")


def test_self_referencing_containers_get_cycle_markers():
    item: dict[str, Any] = {}
    item["me"] = [item]
    assert decode(encode(item, NO_RULES)) == {"me": [Cycle(2)]}


def test_shared_references_are_not_cycles():
    shared = [1]
    assert decode(encode([shared, shared], NO_RULES)) == [[1], [1]]


def test_freezegun_style_datetime_subclass_encodes_as_a_datetime():
    class FakeDatetime(dt.datetime):
        pass

    real = dt.datetime(2024, 1, 2, 3, 4, 5)
    fake = FakeDatetime(2024, 1, 2, 3, 4, 5)
    assert encode(fake, NO_RULES) == encode(real, NO_RULES)


def test_set_order_does_not_depend_on_iteration_order():
    words = [f"w{i}" for i in range(50)]
    assert encode(set(words), NO_RULES) == encode(set(reversed(words)), NO_RULES)


def test_set_numbering_does_not_depend_on_uuid_values():
    from callpin.normalize import DEFAULT_RULES

    # The same shape with fresh uuids each time must give the same bytes.
    first = encode({(uuid.uuid4(), "charge"), (uuid.uuid4(), "refund")}, DEFAULT_RULES)
    for _ in range(20):
        assert encode({(uuid.uuid4(), "charge"), (uuid.uuid4(), "refund")}, DEFAULT_RULES) == first


def test_decimal_is_written_the_same_whatever_the_context():
    import decimal

    with decimal.localcontext() as context:
        context.capitals = 0
        assert encode(Decimal("1E+3"), NO_RULES) == encode(Decimal("1000").scaleb(0).normalize(), NO_RULES)


@pytest.mark.parametrize(
    "data",
    [b"\xc1", b"\x92\x01", b"\xc7\x01\x63x", b"\xd4\x06\x00", b"\xa2\xff\xfe", b"\xc7\x03\x05abc", b"\xd5\x0f\x92\x01"],
    ids=["reserved-byte", "short-array", "unknown-ext", "short-uuid", "bad-utf8", "bad-decimal", "bad-placeholder"],
)
def test_malformed_bytes_raise_corrupt_log(data):
    with pytest.raises(CorruptLog):
        decode(data)


@pytest.mark.parametrize("code", [15, 16, 20], ids=["placeholder", "cycle", "instance"])
def test_a_number_past_64_bits_in_a_marker_is_corrupt(code):
    huge = _ext(4, (1 << 20_000).to_bytes(2_502, "big"))  # too long to print in decimal
    payload = huge if code == 16 else b"\x92\xa1x" + huge
    with pytest.raises(CorruptLog, match="malformed"):
        decode(_ext(code, payload))
    assert decode(_ext(code, payload.replace(huge, b"\xcf" + b"\xff" * 8))) is not None


def test_ext_nesting_limit_at_and_one_past():
    from callpin.codec import MAX_EXT_DEPTH

    def nested_tuples(levels: int) -> bytes:
        data = b"\x90"
        for _ in range(levels):
            data = _ext(1, b"\x91" + data)
        return data

    decode(nested_tuples(MAX_EXT_DEPTH))
    with pytest.raises(LimitExceeded, match=str(MAX_EXT_DEPTH)):
        decode(nested_tuples(MAX_EXT_DEPTH + 1))


def _ext(code: int, payload: bytes) -> bytes:
    out = bytearray()
    codec._pack_ext(code, payload, out)
    return bytes(out)


def _same_hash(count: int) -> list[int]:
    # Python hashes an int as its value modulo 2**61 - 1: these all hash to 0.
    return [(2**61 - 1) * (k + 1) for k in range(count)]


def _map_bytes(keys: list[int]) -> bytes:
    return msgpack.Packer().pack_map_header(len(keys)) + b"".join(encode(key, NO_RULES) + b"\xc0" for key in keys)


def _set_bytes(code: int, items: list[int]) -> bytes:
    elements = sorted(encode(item, NO_RULES) for item in items)  # the canonical order
    return _ext(code, msgpack.Packer().pack_array_header(len(items)) + b"".join(elements))


def test_set_and_map_keys_sharing_one_hash_at_the_limit_build_a_set_and_a_dict():
    from callpin.codec import MAX_SHARED_HASH

    items = _same_hash(MAX_SHARED_HASH)
    assert decode(_set_bytes(2, items)) == set(items)
    assert decode(_map_bytes(items)) == dict.fromkeys(items)


def test_set_and_map_keys_sharing_one_hash_past_the_limit_stay_in_order():
    from callpin.codec import MAX_SHARED_HASH, Pairs, SetItems

    one_past = _same_hash(MAX_SHARED_HASH + 1)
    elements = decode(_set_bytes(3, one_past))
    assert isinstance(elements, SetItems)
    assert elements.frozen
    assert sorted(elements.items) == one_past
    assert decode(_map_bytes(one_past)) == Pairs(tuple((key, None) for key in one_past))
    # Built as a set or dict, 50,000 of them would take minutes (n² comparisons): they
    # stay a SetItems and a Pairs, which are never hashed, and re-encode to the same bytes.
    many = _same_hash(50_000)
    for data, kind in ((_set_bytes(2, many), SetItems), (_map_bytes(many), Pairs)):
        decoded = decode(data)
        assert isinstance(decoded, kind)
        assert encode(decoded, NO_RULES) == data


@pytest.mark.parametrize(
    ("data", "limit"),
    [
        (b"\xdd" + (codec.MAX_ITEMS + 1).to_bytes(4, "big") + b"\x00" * (codec.MAX_ITEMS + 1), codec.MAX_ITEMS),
        (b"\xdb" + (codec.MAX_STR + 1).to_bytes(4, "big") + b"x" * (codec.MAX_STR + 1), codec.MAX_STR),
    ],
    ids=["array", "str"],
)
def test_a_decoding_limit_error_names_the_limit_that_was_hit(data, limit):
    with pytest.raises(LimitExceeded) as raised:
        decode(data)
    assert raised.value.limit == limit


def test_decoding_never_imports_or_constructs_user_types():
    payload = b"\x92" + encode("os.system", NO_RULES) + encode({"cmd": "echo pwned"}, NO_RULES)
    decoded = decode(_ext(13, payload))
    assert decoded == Record("os.system", (("cmd", "echo pwned"),))
    assert "pickle" not in codec.__dict__


# ---------------------------------------------------------------------------------------
# Fields the encoder writes as given: the same strict reading in both implementations.


@pytest.mark.parametrize(
    ("kind", "thread", "error"),
    [(2**64, 1, OverflowError), (-(2**63) - 1, 1, OverflowError), (0, 1.0, TypeError), ("0", 1, TypeError)],
)
def test_event_ints_must_be_ints_of_64_bits(encoder_class, kind, thread, error):
    with pytest.raises(error):
        encoder_class().encode_event(kind, "l", [], {}, None, None, thread, 0)


def test_event_label_and_error_must_be_str(encoder_class):
    with pytest.raises(TypeError):
        encoder_class().encode_event(0, b"label", [], {}, None, None, 1, 0)
    with pytest.raises(TypeError):
        encoder_class().encode_event(0, "l", [], {}, None, ("E", 5), 1, 0)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (Cycle(2**64), "OverflowError"),
        (codec.Placeholder("uuid", 1.5), "TypeError"),
        (EnumValue(1, "RED"), "TypeError"),
        (Record("r", (("a", 1, 2),)), "ValueError"),
    ],
)
def test_malformed_inert_values_become_markers(encoder_class, value, reason):
    decoded = decode(encoder_class(NO_RULES).encode(value))
    assert decoded == Unencodable(qualified_name(type(value)), reason)


def test_inert_values_read_their_items_once_whatever_the_iterable(encoder_class):
    record = Record("r", (pair for pair in [("a", 1), ("b", 2)]))  # type: ignore[arg-type]
    assert decode(encoder_class(NO_RULES).encode(record)) == Record("r", (("a", 1), ("b", 2)))


def test_a_str_subclass_is_written_as_its_text_never_through_its_methods(encoder_class):
    class Loud(str):
        def encode(self, *args: Any, **kwargs: Any) -> bytes:  # type: ignore[override]
            raise AssertionError("called")

        def __str__(self) -> str:
            raise AssertionError("called")

    plain = encoder_class().encode(Opaque("t", "at 0x7f3a2c1b4d90"))
    assert encoder_class().encode(Opaque("t", Loud("at 0x7f3a2c1b4d90"))) == plain
    named = encoder_class().encode(EnumValue("t", "x"))
    assert encoder_class().encode(EnumValue(Loud("t"), "x")) == named


def test_assigning_rules_between_encodings_applies_the_new_rules(encoder_class):
    key = "12345678-1234-5678-1234-567812345678"
    tickets = DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")])
    encoder = encoder_class(NO_RULES)
    assert decode(encoder.encode(f"{key} T-1 x")) == f"{key} T-1 x"
    encoder.rules = DEFAULT_RULES
    assert decode(encoder.encode(f"{key} T-1 x")) == "<uuid:1> T-1 x"
    encoder.rules = tickets
    assert decode(encoder.encode("T-1 x")) == "<ticket:1> x"
    encoder.rules = NO_RULES
    assert decode(encoder.encode(f"{key} T-1")) == f"{key} T-1"


def _list_changed_while_encoded(change: str) -> list[Any]:
    items: list[Any] = []

    class Changer:
        def __repr__(self) -> str:
            if change == "grow":
                # Every element met appends another: iterating would never end.
                items.append(Changer())
            elif change == "shrink":
                items.clear()
            else:
                items[:] = ["x", "y"]
            return "changer"

    items.extend([Changer(), 1])
    return items


@pytest.mark.parametrize("change", ["grow", "shrink"])
def test_a_list_that_changes_size_while_encoded_is_marked_not_miscounted(encoder_class, change):
    changing = _list_changed_while_encoded(change)
    encoded = encoder_class(NO_RULES).encode(["before", changing, "after"])
    assert decode(encoded) == ["before", Unencodable("builtins.list", "RuntimeError"), "after"]


def test_a_list_changed_in_place_while_encoded_is_written_as_met(encoder_class):
    items = _list_changed_while_encoded("replace")
    changer = qualified_name(type(items[0]))
    assert decode(encoder_class(NO_RULES).encode(items)) == [Opaque(changer, "changer"), "y"]


def test_an_error_message_past_the_size_limit_is_replaced_by_a_text_saying_so(encoder_class):
    message = "x" * (codec.MAX_STR + 1)
    frame = encoder_class().encode_event(2, "billing.charge", [], {}, None, ("Big", message), 1, 0)
    reason = f"str of {codec.MAX_STR + 1} bytes exceeds the limit of {codec.MAX_STR}"
    assert decode(frame)[5] == ["Big", f"<unencodable str: {reason}>"]


# -- the forms the shortcuts of the Python encoder write ------------------------------------


@pytest.mark.parametrize(
    ("count", "tail"),
    [
        (100, "c7070f92a475756964" + "64"),
        (200, "d70f92a475756964" + "ccc8"),
        (300, "c7090f92a475756964" + "cd012c"),
    ],
)
def test_a_placeholder_number_is_written_in_its_smallest_int_form(encoder_class, count, tail):
    keys = [uuid.UUID(int=n) for n in range(1, count + 1)]
    encoded = encoder_class().encode(keys)
    assert decode(encoded) == [codec.Placeholder("uuid", n) for n in range(1, count + 1)]
    assert encoded.hex().endswith(tail)


@pytest.mark.parametrize("number", [0, 1, 2**64, 2**127, 2**128 - 1, 0x0123456789ABCDEF0123456789ABCDEF])
def test_a_uuid_is_numbered_by_its_value_as_an_object_and_in_text(number):
    value = uuid.UUID(int=number)
    assert codec.uuid_key(value) == number
    assert normalize.UUID.key(str(value)) == number
    assert normalize.UUID.key(str(value).upper()) == number


class _Code(enum.IntEnum):
    FIVE = 5


def test_a_uuid_holding_an_int_subclass_shares_its_number_with_its_text(encoder_class):
    # UUID(int=...) keeps the int it is given: here an IntEnum member.
    value = uuid.UUID(int=_Code.FIVE)
    assert type(value.int) is _Code
    assert decode(encoder_class().encode([value, str(value), uuid.UUID(str(value))])) == [
        codec.Placeholder("uuid", 1),
        "<uuid:1>",
        codec.Placeholder("uuid", 1),
    ]


def _uuid_holding(number: Any) -> uuid.UUID:
    value = uuid.UUID(int=1)
    object.__setattr__(value, "int", number)  # what a careless subclass or a pickle could leave
    return value


@pytest.mark.parametrize(
    ("number", "reason"),
    [(1 << 128, "OverflowError"), (-5, "OverflowError"), (_Code.FIVE, None), ("abc", "TypeError"), (None, "TypeError")],
)
def test_a_uuid_whose_int_is_no_128_bit_int_is_unencodable_wherever_it_is_written(encoder_class, number, reason):
    # As a value, in a set (numbered by shape first) and in a call's args and kwargs: the
    # same marker from both encoders, never a number made from the uuid's text.
    expected = codec.Placeholder("uuid", 1) if reason is None else Unencodable("uuid.UUID", reason)
    encoder = encoder_class()
    assert decode(encoder.encode(_uuid_holding(number))) == expected
    assert decode(encoder_class().encode({_uuid_holding(number)})) == {expected}
    frame = encoder_class().encode_event(
        0, "l", [_uuid_holding(number)], {"k": _uuid_holding(number)}, None, None, 1, 0
    )
    assert decode(frame)[2:4] == [[expected], {"k": expected}]


def test_a_uuid_and_its_text_in_one_event_share_a_number(encoder_class):
    key = uuid.UUID("12345678-9abc-4def-8123-456789abcdef")
    frame = encoder_class().encode_event(0, "l", [key], {"note": f"key {str(key).upper()}"}, None, None, 1, 0)
    assert decode(frame)[2:4] == [[codec.Placeholder("uuid", 1)], {"note": "key <uuid:1>"}]


def test_empty_args_and_kwargs_fields_are_one_byte_each(encoder_class):
    frame = encoder_class().encode_event(1, "l", (), {}, 5, None, 1, 0)
    assert frame == bytes.fromhex("9801a16c908005c00100")


def test_args_that_hold_their_own_tuple_mark_the_cycle_as_a_list_of_them_would(encoder_class):
    inner: list[Any] = []
    args = (inner,)
    inner.append(args)
    frame = encoder_class(NO_RULES).encode_event(0, "l", args, {}, None, None, 1, 0)
    assert decode(frame)[2] == [[(Cycle(2),)]]


def test_a_recurring_text_is_checked_against_the_rules_once(monkeypatch):
    checked: list[str] = []

    def counting(text: str, rules: Any, reprs: bool) -> bool:
        checked.append(text)
        return may_match(text, rules, reprs)

    may_match = codec.may_match
    monkeypatch.setattr(codec, "may_match", counting)
    encoder = codec.Encoder()
    values = ["usd", "usd", {"usd": "usd"}, ("usd",), ["eur", "usd"]]
    assert decode(encoder.encode(values)) == ["usd", "usd", {"usd": "usd"}, ("usd",), ["eur", "usd"]]
    assert checked == ["usd", "eur"]


def test_the_texts_the_python_encoder_keeps_are_short_and_bounded():
    encoder = codec.Encoder()
    long_text = "x" * (codec._PLAIN_LONGEST + 1)
    encoder.encode([long_text, *(f"text {n}" for n in range(codec._PLAIN_KEPT + 10))])
    assert len(encoder._plain) == codec._PLAIN_KEPT
    assert long_text not in encoder._plain
    assert decode(encoder.encode(["text 5", f"text {codec._PLAIN_KEPT + 5}"])) == [
        "text 5",
        f"text {codec._PLAIN_KEPT + 5}",
    ]


def test_a_text_kept_is_written_alike_in_every_place_a_text_goes(encoder_class):
    encoder = encoder_class()
    encoder.encode("plain")
    kept = encoder.encode(
        [
            "plain",
            {"plain": "plain"},
            ("plain",),
            Record("r", (("plain", "plain"),)),
            codec.Opaque("plain", "plain"),
            b"plain",
        ]
    )
    fresh = encoder_class().encode(
        [
            "plain",
            {"plain": "plain"},
            ("plain",),
            Record("r", (("plain", "plain"),)),
            codec.Opaque("plain", "plain"),
            b"plain",
        ]
    )
    assert kept == fresh


UUID_TEXT = "12345678-1234-5678-1234-567812345678"


def test_a_text_kept_under_one_rule_set_is_normalized_under_the_next(encoder_class):
    encoder = encoder_class(RuleSet([normalize.TIMESTAMP]))
    assert decode(encoder.encode([UUID_TEXT, UUID_TEXT])) == [UUID_TEXT, UUID_TEXT]
    encoder.rules = DEFAULT_RULES
    assert decode(encoder.encode(UUID_TEXT)) == "<uuid:1>"


def test_texts_that_come_and_go_are_each_written_as_themselves(encoder_class):
    # The C encoder asks its kept texts by the text object's address first: a text freed
    # and another made in its place must not be written from what was kept for the first.
    encoder = encoder_class(DEFAULT_RULES)
    for n in range(3000):
        text = f"sku-{n}"
        assert [decode(encoder.encode(text)) for _ in range(2)] == [text, text]
        assert decode(encoder.encode_event(0, "l", (), {text: 1}, None, None, 1, 0))[3] == {text: 1}
        assert decode(encoder.encode_event(0, "l", (), {text: 1}, None, None, 1, 0))[3] == {text: 1}


def test_a_text_kept_as_a_value_is_still_normalized_as_a_repr(encoder_class):
    # The address rule applies to reprs only: the same text is kept as it is in one
    # place and normalized in the other, in either order.
    encoder = encoder_class()
    text = "at 0x7f3a2c1b4d90"
    assert decode(encoder.encode([text, Opaque("t", text), text])) == [text, Opaque("t", "at <addr:1>"), text]


class _Ticket:
    def __init__(self) -> None:
        self.id = UUID_TEXT


def test_a_text_first_met_while_an_object_is_measured_is_normalized(encoder_class):
    # An object's state is measured once without normalization (its budget) before it
    # is written: that pass must leave nothing a later text reuses.
    encoder = encoder_class()
    state = decode(encoder.encode(_Ticket()))
    assert dict(state.fields) == {"id": "<uuid:1>"}
    assert decode(encoder.encode(UUID_TEXT)) == "<uuid:1>"


def test_a_key_names_redaction_is_asked_of_the_rules_once_per_encoder(encoder_class):
    asked: list[str] = []

    class Asking(RuleSet):
        def secret_key(self, name: str) -> bool:
            asked.append(name)
            return super().secret_key(name)

    encoder = encoder_class(Asking(DEFAULT_RULES.rules))
    encoded = encoder.encode([{"token": "t1", "x": 1}, {"token": "t2", "x": 2}, {"token": "t1"}])
    assert decode(encoded) == [
        {"token": codec.Placeholder("secret", 1), "x": 1},
        {"token": codec.Placeholder("secret", 2), "x": 2},
        {"token": codec.Placeholder("secret", 1)},
    ]
    assert asked == ["token", "x"]


def test_a_secret_name_met_inside_a_secret_is_still_redacted_after(encoder_class):
    # The value under `token` is numbered by its raw bytes, where no name is asked
    # whether it is secret: `password` met there (a text kept since the first dict)
    # must not be remembered as a name written as it is.
    encoder = encoder_class(DEFAULT_RULES)
    encoded = encoder.encode([{"password": "b"}, {"token": {"password": "a"}}, {"password": "c"}])
    assert decode(encoded) == [
        {"password": codec.Placeholder("secret", 1)},
        {"token": codec.Placeholder("secret", 2)},
        {"password": codec.Placeholder("secret", 3)},
    ]


def test_the_value_of_a_name_value_pair_under_a_secret_name_is_redacted(encoder_class):
    # A message's headers, kept as a list of (name, value) tuples (email, http.client).
    headers = [("Subject", "hi"), ("Authorization", "Bearer abc"), ("X-Api-Key", "k1"), ("token", None)]
    encoded = encoder_class(DEFAULT_RULES).encode([headers, ("token", 5), ("token",), ("x", "y")])
    assert decode(encoded) == [
        [
            ("Subject", "hi"),
            ("Authorization", codec.Placeholder("secret", 1)),
            ("X-Api-Key", codec.Placeholder("secret", 2)),
            ("token", None),
        ],
        ("token", codec.Placeholder("secret", 3)),
        ("token",),
        ("x", "y"),
    ]
    assert b"Bearer abc" not in encoded and b"k1" not in encoded
    assert b"Bearer abc" in encoder_class(NO_RULES).encode(headers)


def test_a_value_its_name_entry_calls_secret_is_redacted(encoder_class):
    # Environment variables as a container spec lists them, HAR headers, AWS tags, a cookie.
    import http.cookiejar

    cookie = http.cookiejar.Cookie(0, "sessionid", "abc123", None, False, "x.com", False, False, "/", False, False,
                                   None, False, None, None, {})  # fmt: skip
    values = [
        {"name": "DB_PASSWORD", "value": "pw1"},
        {"name": "HOME", "value": "/root"},
        {"Key": "api_token", "Value": "t1"},
        {"key": "Authorization", "value": "Bearer b"},
        codec.Record("app.Env", (("name", "SECRET_KEY"), ("value", "sk"))),
        {"value": "v", "name": 3},
        {"name": "DB_PASSWORD"},
        cookie,
    ]
    encoded = encoder_class(DEFAULT_RULES).encode(values)
    found = decode(encoded)
    assert found[:7] == [
        {"name": "DB_PASSWORD", "value": codec.Placeholder("secret", 1)},
        {"name": "HOME", "value": "/root"},
        {"Key": "api_token", "Value": codec.Placeholder("secret", 2)},
        {"key": "Authorization", "value": codec.Placeholder("secret", 3)},
        codec.Record("app.Env", (("name", "SECRET_KEY"), ("value", codec.Placeholder("secret", 4)))),
        {"value": "v", "name": 3},
        {"name": "DB_PASSWORD"},
    ]
    assert dict(found[7].fields)["value"] == codec.Placeholder("secret", 5)
    assert dict(found[7].fields)["name"] == "sessionid"
    for secret in (b"pw1", b"t1", b"Bearer b", b"abc123"):
        assert secret not in encoded
    assert b"pw1" in encoder_class(NO_RULES).encode(values)


def test_a_plain_name_written_again_is_forgotten_with_the_rules(encoder_class):
    # `x` is written the second time from what the encoder kept; a rule set that makes
    # it a secret name must redact it from then on.
    encoder = encoder_class(DEFAULT_RULES)
    encoder.encode({"x": "1"})
    assert decode(encoder.encode({"x": "1"})) == {"x": "1"}
    encoder.rules = DEFAULT_RULES.with_rules([secret_keys(r"^x$", "x_keys")])
    assert decode(encoder.encode({"x": "1"})) == {"x": codec.Placeholder("secret", 1)}


def test_a_keyword_written_from_what_was_kept_is_forgotten_with_the_rules(encoder_class):
    # From the second call `x=` is written from the keyword names the encoder keeps; a
    # secret keyword is never kept as one written as it is, and a rule set that makes
    # `x` a secret name must redact it from then on.
    encoder = encoder_class(DEFAULT_RULES)

    def kwargs(**given: str) -> dict[str, Any]:
        frame = encoder.encode_event(0, "svc.send", (), given, None, None, 1, 0)
        return dict(decode_event(frame, 0, codec.Decoder()).kwargs)

    secret = codec.Placeholder
    assert kwargs(token="t1", x="1") == {"token": secret("secret", 1), "x": "1"}
    assert kwargs(token="t2", x="1") == {"token": secret("secret", 2), "x": "1"}
    assert kwargs(token="t1", x="2") == {"token": secret("secret", 1), "x": "2"}
    encoder.rules = DEFAULT_RULES.with_rules([secret_keys(r"^x$", "x_keys")])
    # The first event under the new rules is written in full (its frame is new), the
    # next around its kept frame.
    assert kwargs(token="t3", x="1") == {"token": secret("secret", 3), "x": secret("secret", 4)}
    assert kwargs(token="t3", x="1") == {"token": secret("secret", 3), "x": secret("secret", 4)}
    # Under rules that redact nothing, a name kept as redacted is forgotten too.
    encoder.rules = RuleSet([normalize.UUID])
    for _ in range(3):
        assert kwargs(token="t4", x="1") == {"token": "t4", "x": "1"}


def test_an_event_frame_kept_under_one_rule_set_is_written_anew_under_the_next(encoder_class):
    # The label is a kept text under the default rules, so its frame is kept too; a rule
    # set that changes the label must write it changed from then on.
    encoder = encoder_class(DEFAULT_RULES)
    for _ in range(2):
        encoder.encode_event(0, "charge_card", ("a",), {}, None, None, 1, 0)
        encoder.encode_event(1, "charge_card", (), {}, None, None, 1, 0)
    renamed = DEFAULT_RULES.with_rules([rule(r"card", "card_word")])
    encoder.rules = renamed
    fresh = encoder_class(renamed)
    for kind, args in ((0, ("a",)), (1, ())):
        event = (kind, "charge_card", args, {}, None, None, 1, 0)
        assert encoder.encode_event(*event) == fresh.encode_event(*event)
    assert decode_event(fresh.encode_event(1, "charge_card", (), {}, None, None, 1, 0), 0, codec.Decoder()).label == (
        "charge_<card_word:1>"
    )


class _Label(str):
    pass


@pytest.mark.parametrize(
    "kind, label, args, kwargs",
    [
        (0, "charge_card", ("card_A", 1500), {"currency": "usd", "idempotency_key": uuid.UUID(int=7)}),
        (1, "charge_card", (), {}),
        (3, "returned", (), {}),
        (0, "charge_card", tuple(range(16)), {}),
        (0, "charge_card", (), {f"k{i:02d}": i for i in range(16)}),
        (0, "charge_<uuid>", (UUID_TEXT,), {"token": "t1"}),
        (0, _Label("charge_card"), ("a",), {}),
        # Keywords out of order, numbered values among them: numbered in name order.
        (0, "charge_card", (), {"key": uuid.UUID(int=7), "currency": "usd", "again": uuid.UUID(int=9)}),
        (0, "charge_card", (uuid.UUID(int=1),), {"b": uuid.UUID(int=2), "a": [uuid.UUID(int=3)]}),
        (0, "charge_card", (), {_Label("b"): 1, "a": 2, _Label("c"): 3}),
        (0, "charge_card", (), {"token": "t1", "amount": 5}),
    ],
)
def test_a_call_event_is_the_event_with_no_outcome_and_its_keywords_in_name_order(
    encoder_class, kind, label, args, kwargs
):
    # encode_call is encode_event with a None value and error and the keywords sorted,
    # for the journal's own events: twice over, so the second is written around the
    # frame the first kept.
    calls, events = encoder_class(DEFAULT_RULES), encoder_class(DEFAULT_RULES)
    for thread, depth in ((1, 0), (1, 0), (2, 3), (2, 3)):
        assert calls.encode_call(kind, label, args, kwargs, thread, depth) == events.encode_event(
            kind, label, args, codec.sorted_keywords(kwargs), None, None, thread, depth
        )
    assert calls.numbering.table == events.numbering.table


def test_a_call_event_under_a_lower_item_limit_is_the_event_with_no_outcome(encoder_class, monkeypatch):
    monkeypatch.setattr(codec, "MAX_ITEMS", 3)  # before the encoders are made: the C one takes it then
    calls, events = encoder_class(DEFAULT_RULES), encoder_class(DEFAULT_RULES)
    for _ in range(2):
        assert calls.encode_call(0, "f", (1, 2, 3, 4), {}, 1, 0) == events.encode_event(
            0, "f", (1, 2, 3, 4), {}, None, None, 1, 0
        )


def test_an_event_written_around_a_kept_frame_is_the_event_written_in_full():
    encoder = codec.Encoder()
    key = uuid.uuid4()
    first = encoder.encode_event(0, "charge_card", ("card_A", 1500), {"idempotency_key": key}, None, None, 1, 0)
    assert (0, "charge_card", 1, 0) in encoder._frames
    second = encoder.encode_event(0, "charge_card", ("card_B",), {"idempotency_key": uuid.uuid4()}, None, None, 1, 0)
    returned = encoder.encode_event(1, "charge_card", (), {}, None, None, 1, 0)
    returned_again = encoder.encode_event(1, "charge_card", (), {}, None, None, 1, 0)
    assert (1, "charge_card", 1, 0) in encoder._frames
    # The same events from an encoder that keeps no frame (each label is new to it).
    full = codec.Encoder()
    full._frames = _Forgetful()
    assert [
        full.encode_event(0, "charge_card", ("card_A", 1500), {"idempotency_key": key}, None, None, 1, 0),
        full.encode_event(0, "charge_card", ("card_B",), {"idempotency_key": uuid.uuid4()}, None, None, 1, 0),
        full.encode_event(1, "charge_card", (), {}, None, None, 1, 0),
        full.encode_event(1, "charge_card", (), {}, None, None, 1, 0),
    ] == [first, second, returned, returned_again]


def test_a_flat_call_around_a_kept_frame_is_written_without_the_general_path():
    encoder = codec.Encoder()
    event = (0, "charge_card", ("card_A", 1500, None, True), {"key": uuid.uuid4(), "n": -(2**63)}, None, None, 1, 0)
    encoder.encode_event(*event)
    encoder._framed = _refuse  # type: ignore[method-assign]
    encoder._call_fields = _refuse  # type: ignore[method-assign]
    again = encoder.encode_event(*event)
    full = codec.Encoder()
    full._frames = _Forgetful()
    assert [full.encode_event(*event), full.encode_event(*event)][1] == again
    assert decode_event(again, 0, codec.Decoder()).kwargs["key"] == codec.Placeholder("uuid", 1)
    # A secret keyword's name written before as a value only: its redaction is asked first.
    encoder = codec.Encoder()
    encoder.encode_event(0, "login", ("token",), {}, None, None, 1, 0)
    login = decode_event(encoder.encode_event(0, "login", (), {"token": 1234}, None, None, 1, 0), 0, codec.Decoder())
    assert login.kwargs == {"token": codec.Placeholder("secret", 1)}
    # The kwargs map is on the cycle stack while its values are written, as in _dict.
    looped: dict[str, Any] = {"a": 1}
    looped["self"] = [looped]
    encoder, full = codec.Encoder(), codec.Encoder()
    full._frames = _Forgetful()
    for _ in range(2):
        assert encoder.encode_event(0, "loop", (), looped, None, None, 1, 0) == full.encode_event(
            0, "loop", (), looped, None, None, 1, 0
        )
    # A value that raises in the flat path: the event is written by the general path,
    # and nothing is left on the cycle stack.
    encoder._call_value = _refuse  # type: ignore[method-assign]
    assert encoder.encode_event(0, "loop", (), {"a": 1.5}, None, None, 1, 0) == full.encode_event(
        0, "loop", (), {"a": 1.5}, None, None, 1, 0
    )
    assert encoder._stack == []
    # Sixteen args or keywords need a longer header than the flat path writes.
    for args, kwargs in (((1,) * 16, {}), ((), {f"k{index:02}": index for index in range(16)})):
        encoder = codec.Encoder()
        encoder.encode_event(0, "charge_card", (), {}, None, None, 1, 0)
        encoder.encode_event(0, "charge_card", args, kwargs, None, None, 1, 0)
        assert (
            decode_event(
                encoder.encode_event(0, "charge_card", args, kwargs, None, None, 1, 0), 0, codec.Decoder()
            ).args
            == args
        )


def _kept_and_full(rules: RuleSet = DEFAULT_RULES) -> tuple[codec.Encoder, codec.Encoder]:
    """An encoder that keeps frames and one that keeps none, each with a frame for `loop` asked."""
    kept, full = codec.Encoder(rules), codec.Encoder(rules)
    full._frames = _Forgetful()
    for encoder in (kept, full):
        encoder.encode_event(0, "loop", (), {}, None, None, 1, 0)
    return kept, full


def test_a_call_around_a_kept_frame_past_a_lowered_item_limit_is_marked_as_in_full(monkeypatch):
    monkeypatch.setattr(codec, "MAX_ITEMS", 2)
    kept, full = _kept_and_full(NO_RULES)
    event = (0, "loop", (1, 2, 3), {"a": 1, "b": 2, "c": 3}, None, None, 1, 0)
    written = kept.encode_event(*event)
    assert written == full.encode_event(*event)
    decoded = decode_event(written, 0, codec.Decoder())
    assert decoded.args == (Unencodable("builtins.list", "3 items exceed the limit of 2"),)
    assert decoded.kwargs == {"**kwargs": Unencodable("builtins.dict", "3 items exceed the limit of 2")}


class _NoModule(type):
    @property
    def __module__(cls) -> str:  # type: ignore[override]
        raise ValueError("no module")


class _Unmarkable(metaclass=_NoModule):
    """A value whose marker cannot be written: its type's name raises."""

    def __repr__(self) -> str:
        raise ValueError("no repr")


def test_a_field_that_fails_around_a_kept_frame_is_written_again_as_in_full():
    # The args are written once and the kwargs field again item by item, as the general
    # path does: an object's form runs as often, an object past the budget counts once.
    calls: list[int] = []

    class Counted:
        def __init__(self) -> None:
            self.data = "x" * 5000

        def __getattribute__(self, name: str) -> Any:
            if name == "__dict__":
                calls.append(1)
            return object.__getattribute__(self, name)

    counted = Counted()
    for args, kwargs in (((counted,), {"k": _Unmarkable()}), ((counted, _Unmarkable()), {"k": counted})):
        written = []
        for encoder in _kept_and_full(NO_RULES):
            calls.clear()
            written.append(encoder.encode_event(0, "loop", args, kwargs, None, None, 1, 0))
            written.append(len(calls))
            written.append(dict(encoder.identities.past_budget))
            assert encoder._stack == []
        assert written[:3] == written[3:]


def test_an_event_written_while_a_value_is_takes_the_general_path():
    # A registered form that writes an event of the same encoder, under a secret key: the
    # inner event's redaction and the frame kept are those of the general path.
    class Nested:
        pass

    results = []
    for encoder in _kept_and_full():
        # `token` is known to be a secret name: in the raw pass of a secret, it is not.
        encoder.encode_event(0, "loop", (), {"token": "zzz"}, None, None, 1, 0)
        inner: list[bytes] = []

        def form(value: Nested, encoder: codec.Encoder = encoder, inner: list[bytes] = inner) -> str:
            inner.append(encoder.encode_event(0, "loop", (), {"token": "abc"}, None, None, 1, 0))
            return "nested"

        forms.register(Nested, form)
        try:
            outer = encoder.encode({"password": Nested()})
        finally:
            forms.unregister(Nested)
        results.append((outer, inner, encoder.numbering.table))
    assert results[0] == results[1]


def test_a_frame_written_under_rules_replaced_meanwhile_is_not_kept():
    class Switch:
        pass

    written = []
    for encoder in _kept_and_full():

        def form(value: Switch, encoder: codec.Encoder = encoder) -> str:
            encoder.rules = NO_RULES
            return "switched"

        forms.register(Switch, form)
        try:
            encoder.encode_event(0, "/tmp/x", (Switch(), "/tmp/x"), {}, None, None, 1, 0)
        finally:
            forms.unregister(Switch)
        written.append(encoder.encode_event(0, "/tmp/x", (), {}, None, None, 1, 0))
    assert written[0] == written[1]
    assert decode_event(written[0], 0, codec.Decoder()).label == "/tmp/x"


def test_a_frame_met_out_of_order_while_a_form_replaces_the_rules_stays_with_its_rules():
    # Under no rules `/tmp/x` is a kept text and its frame is kept; a form assigns rules
    # that change it while the args are written, then the keywords come out of order.
    class Switch:
        pass

    written = []
    for encoder in (codec.Encoder(NO_RULES), codec.Encoder(NO_RULES)):
        if written:
            encoder._frames = _Forgetful()
        for _ in range(2):
            encoder.encode_call(0, "/tmp/x", (), {"a": 1, "b": 2}, 1, 0)

        def form(value: Switch, encoder: codec.Encoder = encoder) -> str:
            encoder.rules = DEFAULT_RULES
            return "switched"

        forms.register(Switch, form)
        try:
            encoder.encode_call(0, "/tmp/x", (Switch(),), {"b": 2, "a": 1}, 1, 0)
        finally:
            forms.unregister(Switch)
        written.append(encoder.encode_call(0, "/tmp/x", (), {}, 1, 0))
    assert written[0] == written[1]
    assert decode_event(written[0], 0, codec.Decoder()).label != "/tmp/x"


def _refuse(*args: Any) -> None:
    raise AssertionError("the general path was taken")


_FLAT_UUIDS = [uuid.UUID(int=1), uuid.UUID(int=2**128 - 1), uuid.UUID("12345678-1234-5678-1234-567812345678")]
_flat_values = st.one_of(
    # Keyword names among the texts: a name written as a value before it is a keyword.
    st.sampled_from(["card_A", "usd", "a-b", "2024-01-02T03:04:05Z", "x=1", "u@h", "", "token", "Password"]),
    st.sampled_from([-33, -32, -1, 0, 127, 128, 255, 2**16, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1]),
    st.none(),
    st.booleans(),
    st.sampled_from(_FLAT_UUIDS),
    st.sampled_from([1.5, b"x", ("t",), ["l"]]),
)
_flat_events = st.tuples(
    st.sampled_from([0, 1]),
    st.sampled_from(["charge_card", "send"]),
    st.lists(_flat_values, max_size=17).map(tuple),
    st.dictionaries(st.sampled_from(["card", "token", "amount", "Password", "currency"]), _flat_values, max_size=4),
)


@settings(max_examples=300, deadline=None)
@given(
    rules=st.sampled_from([DEFAULT_RULES, NO_RULES, RuleSet([normalize.UUID])]),
    events=st.lists(_flat_events, min_size=2, max_size=8),
)
def test_flat_calls_around_kept_frames_are_the_events_written_in_full(rules, events):
    # encode_event writes the keywords in the order given, encode_call in name order.
    kept, full, calls, sorted_full = (codec.Encoder(rules) for _ in range(4))
    full._frames = sorted_full._frames = _Forgetful()
    for kind, label, args, kwargs in events:
        event = (kind, label, args, kwargs, None, None, 1, 0)
        assert kept.encode_event(*event) == full.encode_event(*event)
        assert calls.encode_call(kind, label, args, kwargs, 1, 0) == sorted_full.encode_event(
            kind, label, args, codec.sorted_keywords(kwargs), None, None, 1, 0
        )
    assert kept.numbering.table == full.numbering.table
    assert calls.numbering.table == sorted_full.numbering.table
    assert kept._stack == calls._stack == []


def test_values_of_keywords_out_of_order_are_numbered_in_name_order(encoder_class):
    # The frame and the keyword names are kept first, so that the uuids, new, are met
    # on the flat path: `key` before `again` at the call site, `again` first by name.
    encoder = encoder_class(DEFAULT_RULES)
    for _ in range(2):
        encoder.encode_call(0, "charge_card", (), {"again": 0, "key": 0}, 1, 0)
    first, second = uuid.UUID(int=1), uuid.UUID(int=2)
    frame = encoder.encode_call(0, "charge_card", (), {"key": first, "again": second, "at": [first]}, 1, 0)
    assert decode_event(frame, 0, codec.Decoder()).kwargs == {
        "again": codec.Placeholder("uuid", 1),
        "at": [codec.Placeholder("uuid", 2)],
        "key": codec.Placeholder("uuid", 2),
    }


def test_a_frame_met_with_keywords_out_of_order_sorts_them_first_from_then_on():
    encoder, full = codec.Encoder(), codec.Encoder()
    full._frames = _Forgetful()
    calls = [{"amount": 1, "currency": "usd"}] * 2 + [
        {"currency": "eur", "amount": 2},
        {"amount": 3, "currency": "gbp"},
    ]
    written = [encoder.encode_call(0, "charge", (), kwargs, 1, 0) for kwargs in calls]
    assert encoder._frames[0, "charge", 1, 0][3] is True
    assert written == [full.encode_call(0, "charge", (), kwargs, 1, 0) for kwargs in calls]
    # Sorted first, the keywords are written on the flat path.
    encoder._keywords_field = _refuse  # type: ignore[method-assign]
    assert encoder.encode_call(0, "charge", (), calls[2], 1, 0) == written[2]


def test_a_redacted_keyword_is_written_on_the_flat_path_once_its_name_is_kept():
    encoder, full = codec.Encoder(), codec.Encoder()
    full._frames = _Forgetful()
    first = (0, "login", (), {"password": "p0", "token": "t0", "user": "u"}, 1, 0)
    for _ in range(2):  # the frame kept, then the names
        encoder.encode_call(*first)
    encoder._keywords_field = _refuse  # type: ignore[method-assign]
    assert set(encoder._redacted_keywords) == {"password", "token"}
    again = (0, "login", (), {"password": "p1", "token": "t0", "user": uuid.UUID(int=3)}, 1, 0)
    written = encoder.encode_call(*again)
    assert decode_event(written, 0, codec.Decoder()).kwargs == {
        "password": codec.Placeholder("secret", 3),
        "token": codec.Placeholder("secret", 2),
        "user": codec.Placeholder("uuid", 1),
    }
    assert [full.encode_call(*first), full.encode_call(*first), full.encode_call(*again)][2] == written
    assert encoder.numbering.table == full.numbering.table


class _Forgetful(dict):  # type: ignore[type-arg]
    """A frame table that keeps nothing."""

    def __setitem__(self, key: Any, value: Any) -> None:
        pass


# -- what the C encoder takes --------------------------------------------------------------


def _documented_interface() -> set[str]:
    """The entry names in the table of docs/speedups.md's "The configuration interface"."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "speedups.md").read_text()
    section = text.split("## The configuration interface", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([^`]+)`", row)}


def test_the_speedups_interface_is_the_one_documented():
    assert set(codec.SPEEDUPS_INTERFACE) == _documented_interface()
    assert len(codec.SPEEDUPS_INTERFACE) == 30


def test_the_speedups_interface_cannot_be_changed():
    with pytest.raises(TypeError):
        codec.SPEEDUPS_INTERFACE["limits"] = lambda: (1, 1, 1)  # type: ignore[index]


def test_limits_are_the_module_limits_as_they_stand(monkeypatch):
    assert codec.limits() == (codec.MAX_DEPTH, codec.MAX_STR, codec.MAX_ITEMS)
    monkeypatch.setattr(codec, "MAX_ITEMS", 3)
    assert codec.limits()[2] == 3
