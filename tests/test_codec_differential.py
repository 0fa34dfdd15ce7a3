"""Differential: the C encoder writes Python's bytes and numbering for generated values."""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
import pathlib
import string
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callpin import _impl, codec, forms
from callpin.normalize import ADDRESS, DEFAULT_RULES, NO_RULES, TIMESTAMP, UUID, RuleSet, rule

pytestmark = [
    pytest.mark.skipif(
        _impl.IMPLEMENTATION != "c",
        reason="the C speedups are not live (not built, or CALLPIN_PURE_PYTHON=1)",
    ),
    # The strategies below are large; hypothesis warns once when it first prints one.
    pytest.mark.filterwarnings("ignore:Generating overly large repr"),
]

RULE_SETS = [
    DEFAULT_RULES,
    NO_RULES,
    RuleSet([UUID]),
    RuleSet([TIMESTAMP]),
    RuleSet([ADDRESS]),
    RuleSet([TIMESTAMP, ADDRESS, UUID]),
    DEFAULT_RULES.with_rules([rule(r"T-[0-9]+", "ticket")]),
    RuleSet([rule(r"[0-9a-f]{8}-[0-9a-f]{4}", "short"), UUID, TIMESTAMP, ADDRESS]),
]


# ---------------------------------------------------------------------------------------
# Types the encoder meets through canonical_form.


class Colour(enum.Enum):
    RED = 1
    BLUE = "b"


@dataclasses.dataclass
class Money:
    amount: Any
    currency: Any


Point = collections.namedtuple("Point", "x y")


class Shown:
    """An object without a canonical form: written as its (normalized) repr."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


class Refusing:
    """An object whose repr raises: written as an Unencodable marker."""

    def __init__(self, error: type[Exception]) -> None:
        self.error = error

    def __repr__(self) -> str:
        raise self.error("no repr")


class Text(str):
    pass


class Number(int):
    pass


class Items(list):  # type: ignore[type-arg]
    pass


class Members(frozenset):  # type: ignore[type-arg]
    pass


class Wallet:
    """A type given a canonical form with forms.register."""

    def __init__(self, content: Any) -> None:
        self.content = content


forms.register(Wallet, lambda wallet: wallet.content)


# ---------------------------------------------------------------------------------------
# Text that the rules match, nearly match, and do not match.

_hex = st.text("0123456789abcdefABCDEF", min_size=1, max_size=18)
_uuid_text = st.uuids().map(str) | st.uuids().map(lambda u: str(u).upper())
_near_uuid = st.tuples(_uuid_text, st.integers(0, 35), st.sampled_from(["", "g", "-", "0", "é"])).map(
    lambda t: t[0][: t[1]] + t[2] + t[0][t[1] + 1 :]
)
_timestamp_text = st.builds(
    lambda moment, sep, fraction, offset: moment.strftime(f"%Y-%m-%d{sep}%H:%M:%S") + fraction + offset,
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    st.sampled_from(["T", " ", "t", "_"]),
    st.sampled_from(["", ".5", ",123456", ".", ",", ".0001"]),
    st.sampled_from(["", "Z", "+09:00", "-01:30", "+0930", "-0100", "+09", "+09:0", "+09:001", "Z5", "+09005"]),
)
_http_date_text = st.builds(
    lambda moment, day_sep, zone: moment.strftime(f"%a, %d{day_sep}%b{day_sep}%Y %H:%M:%S ") + zone,
    st.datetimes(min_value=dt.datetime(1000, 1, 1), max_value=dt.datetime(9999, 12, 31)),
    st.sampled_from([" ", "-", "_"]),
    st.sampled_from(["GMT", "UTC", "+0900", "-0000", "GMTx", "+090", "gmt", "+09000", "Z"]),
)
_address_text = st.tuples(
    st.sampled_from(["0x", "0X", "x0", "00x"]),
    st.integers(4, 18).flatmap(lambda n: st.text("0123456789abcdefABCDEF", min_size=n, max_size=n)),
).map("".join)
_glue = st.sampled_from(
    [
        "",
        " ",
        "-",
        "x",
        "a",
        "1",
        "12",
        ":",
        ".",
        "T",
        "é",
        "東",
        "\ud800",
        "\udfff",
        "0x",
        "T-12",
        "T-7",
        "2024-",
    ]
)
# Pieces of secret lines (`Authorization: Basic ...`), and of texts that only look like one.
_secret_line = st.sampled_from(
    ["\n", "\r\n", "  ", "\t", ": ", ":", "Authorization", "x-api-KEY", "pass", "Token", "keyboard", "'v'", '"', ","]
)
normalizable_text = st.lists(
    st.one_of(_uuid_text, _near_uuid, _timestamp_text, _http_date_text, _address_text, _glue, _hex, _secret_line),
    max_size=8,
).map("".join)
any_text = st.text(max_size=40) | st.text(st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), max_size=5)
texts = normalizable_text | any_text

# ---------------------------------------------------------------------------------------
# Values.

_offsets = st.timedeltas(min_value=dt.timedelta(hours=-23, minutes=-59), max_value=dt.timedelta(hours=23, minutes=59))
_zones = st.none() | st.just(dt.UTC) | _offsets.map(dt.timezone)
_ints = st.integers() | st.sampled_from(
    [
        0,
        127,
        128,
        255,
        256,
        -32,
        -33,
        -128,
        -129,
        2**16,
        2**32,
        2**63 - 1,
        2**63,
        2**64 - 1,
        2**64,
        -(2**63),
        -(2**63) - 1,
        10**40,
        -(10**40),
    ]
)
_field_ints = st.integers(-(2**63), 2**64 - 1) | st.sampled_from([2**64, -(2**63) - 1])

hashable_scalars = st.one_of(
    st.none(),
    st.booleans(),
    _ints,
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
    st.binary(max_size=20),
    st.uuids(),
    st.datetimes(timezones=_zones),
    st.dates(),
    st.times(timezones=_zones),
    st.timedeltas(),
    st.decimals(allow_nan=False, places=None),
    st.sampled_from(list(Colour)),
    st.builds(pathlib.PurePosixPath, texts.filter(lambda t: "\x00" not in t)),
    st.builds(pathlib.PureWindowsPath, st.text(string.ascii_letters + "\\:/.", max_size=12)),
    st.builds(Text, texts),
    st.builds(Number, _ints),
    st.builds(Shown, texts),
    st.builds(Refusing, st.sampled_from([ValueError, TypeError, MemoryError, RecursionError])),
)
hashables = st.recursive(
    hashable_scalars,
    lambda inner: st.tuples(inner, inner) | st.frozensets(inner, max_size=4) | st.builds(Point, inner, inner),
    max_leaves=8,
)
scalars = hashable_scalars | st.decimals(allow_nan=True) | st.builds(bytearray, st.binary(max_size=8))


def _inert(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.builds(codec.Placeholder, texts, _field_ints),
        st.builds(codec.Cycle, _field_ints),
        st.builds(codec.Opaque, texts, texts),
        st.builds(codec.Unencodable, texts, texts),
        st.builds(codec.Instance, texts, _field_ints),
        st.builds(codec.EnumValue, texts, texts),
        st.builds(codec.Record, texts, st.lists(st.tuples(texts, children), max_size=3).map(tuple)),
        st.builds(codec.Custom, texts, children),
        st.builds(codec.ExceptionValue, texts, st.lists(children, max_size=3).map(tuple)),
        st.builds(codec.Pairs, st.lists(st.tuples(children, children), max_size=3).map(tuple)),
        st.builds(codec.SetItems, st.booleans(), st.lists(children, max_size=4).map(tuple)),
    )


def _self_referencing(child: Any, how: int) -> Any:
    if how == 0:
        items: list[Any] = [child]
        items.append(items)
        return items
    if how == 1:
        found: dict[str, Any] = {"child": child}
        found["self"] = found
        return found
    inner: list[Any] = [child]
    outer = (inner, Money(inner, child))
    inner.append(outer)
    return outer


def _nested(value: Any, levels: int) -> Any:
    for level in range(levels):
        value = [value] if level % 3 else (value,) if level % 2 else {"k": value}
    return value


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(hashables, children, max_size=5),
        st.dictionaries(texts, children, max_size=5).map(collections.OrderedDict),
        st.lists(children, max_size=4).map(tuple),
        st.sets(hashables, max_size=6),
        st.frozensets(hashables, max_size=6),
        st.sets(hashables, max_size=4).map(Members),
        st.lists(children, max_size=3).map(Items),
        st.builds(Money, children, children),
        st.builds(Point, children, children),
        st.builds(ValueError, texts, children),
        st.builds(Wallet, children),
        st.builds(_self_referencing, children, st.integers(0, 2)),
        st.builds(_nested, children, st.integers(codec.MAX_DEPTH - 3, codec.MAX_DEPTH + 3)),
        _inert(children),
    )


values = st.recursive(scalars, _containers, max_leaves=15)


def _outcome(encode: Any, *args: Any) -> tuple[str, Any]:
    try:
        return ("bytes", encode(*args))
    except BaseException as exc:  # both must fail alike, whatever the exception
        return ("raises", type(exc).__name__)


def _numbering_state(encoder: Any) -> Any:
    numbering = encoder.numbering
    return [(name, list(known.items())) for name, known in numbering.table.items()]


_settings = settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)


@_settings
@given(rules=st.sampled_from(RULE_SETS), sequence=st.lists(values, min_size=1, max_size=3))
def test_c_writes_the_python_bytes_and_numbering_for_any_values(rules, sequence):
    python, c = codec.Encoder(rules), _impl.Encoder(rules)
    for value in sequence:
        assert _outcome(c.encode, value) == _outcome(python.encode, value)
        assert _numbering_state(c) == _numbering_state(python)


@settings(_settings, max_examples=1000)
@given(
    rules=st.sampled_from(RULE_SETS),
    sequence=st.lists(texts | st.uuids() | st.datetimes(), max_size=8),
)
def test_c_numbers_text_values_as_python_does(rules, sequence):
    python, c = codec.Encoder(rules), _impl.Encoder(rules)
    for value in sequence:
        assert c.encode(value) == python.encode(value)
        assert c.encode(Shown(str(value))) == python.encode(Shown(str(value)))
    assert c.encode(set(sequence)) == python.encode(set(sequence))
    assert _numbering_state(c) == _numbering_state(python)


event_values = st.recursive(scalars, _containers, max_leaves=5)
events = st.tuples(
    st.integers(0, 3) | _field_ints,
    texts,
    st.lists(event_values, max_size=3),
    st.dictionaries(st.text(max_size=8), event_values, max_size=3),
    event_values,
    st.none() | st.tuples(texts, texts),
    st.integers(1, 5) | _field_ints,
    st.integers(0, 5),
)


@settings(_settings, max_examples=300)
@given(rules=st.sampled_from(RULE_SETS), sequence=st.lists(events, min_size=1, max_size=3))
def test_c_frames_events_as_python_does(rules, sequence):
    python, c = codec.Encoder(rules), _impl.Encoder(rules)
    for event in sequence:
        assert _outcome(c.encode_event, *event) == _outcome(python.encode_event, *event)
    assert _numbering_state(c) == _numbering_state(python)


# Events of a few labels, threads and depths whose value and error are None: the Python
# encoder writes the second and later of them around the bytes it kept for the first.
repeated_events = st.tuples(
    st.integers(0, 3) | _field_ints,
    st.sampled_from(["charge_card", "send", "2024-01-02T03:04:05Z", "<secret>"]),
    # A tuple, as a recorder passes args, or a list.
    st.lists(event_values, max_size=3).map(tuple) | st.lists(event_values, max_size=3),
    st.dictionaries(st.sampled_from(["card", "token", "amount"]), event_values, max_size=3),
    st.none(),
    st.none(),
    st.integers(1, 2) | _field_ints,
    st.integers(0, 2),
)


@settings(_settings, max_examples=300)
@given(rules=st.sampled_from(RULE_SETS), sequence=st.lists(repeated_events, min_size=2, max_size=8))
def test_c_frames_repeated_events_as_python_does(rules, sequence):
    python, c = codec.Encoder(rules), _impl.Encoder(rules)
    for event in sequence:
        assert _outcome(c.encode_event, *event) == _outcome(python.encode_event, *event)
    assert _numbering_state(c) == _numbering_state(python)
