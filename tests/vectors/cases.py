"""The fixed encoding vectors: each case's value and the exact bytes it must encode to.

The expected bytes live next to this file as `<name>.hex`. They are the format's
contract: a change to any of them is a format change (docs/FORMAT.md, "compatibility").
Regenerate deliberately with `python -m tests.vectors.cases --write` and review the diff.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import enum
import pathlib
import sys
import uuid
from decimal import Decimal
from pathlib import Path, PurePosixPath
from typing import Any

from callpin import codec, forms
from callpin.normalize import DEFAULT_RULES, NO_RULES, TMP_ROOTS, RuleSet, rule

HERE = Path(__file__).parent


class Colour(enum.Enum):
    RED = "r"
    BLUE = "b"


@dataclasses.dataclass
class Money:
    amount: int
    currency: str


Point = collections.namedtuple("Point", "x y")


class Gateway:
    def __repr__(self) -> str:
        return "<Gateway object at 0x7f3a2c1b4d90>"


# Recorded by its repr (the opaque vectors): registered so, as a user would.
forms.register(Gateway, forms.opaque)


class Request:
    """A request-like object: recorded by its state (slots, then its __dict__ by name)."""

    __slots__ = ("__dict__", "method")

    def __init__(self, method: str, url: str) -> None:
        self.method = method
        self.url = url
        self.headers = {"Accept": "*/*"}


class Chain:
    def __init__(self, inner: Any) -> None:
        self.inner = inner


def _chain(levels: int) -> Chain:
    value: Any = None
    for _ in range(levels):
        value = Chain(value)
    return value


_SHARED = Request("GET", "https://example.com/a")


def _cycle() -> list[Any]:
    items: list[Any] = [1]
    items.append(items)
    return items


def _dict_cycle() -> dict[str, Any]:
    found: dict[str, Any] = {"a": 1}
    found["self"] = found
    return found


U1 = uuid.UUID("12345678-1234-5678-1234-567812345678")
U2 = uuid.UUID("87654321-4321-8765-4321-876543218765")
TICKETS = RuleSet([*DEFAULT_RULES.rules, rule(r"T-[0-9]+", "ticket")])

# name: (value, rules). The decoded form is checked separately in test_vectors.py.
CASES: dict[str, tuple[Any, RuleSet]] = {
    "none": (None, NO_RULES),
    "true": (True, NO_RULES),
    "false": (False, NO_RULES),
    "int-zero": (0, NO_RULES),
    "int-fix-max": (127, NO_RULES),
    "int-uint8": (200, NO_RULES),
    "int-neg-fix": (-32, NO_RULES),
    "int-int8": (-100, NO_RULES),
    "int-uint64-max": (2**64 - 1, NO_RULES),
    "int-int64-min": (-(2**63), NO_RULES),
    "bigint-positive": (2**64, NO_RULES),
    "bigint-negative": (-(2**63) - 1, NO_RULES),
    "bigint-huge": (10**40, NO_RULES),
    "float": (1.5, NO_RULES),
    "float-neg-zero": (-0.0, NO_RULES),
    "float-nan": (float("nan"), NO_RULES),
    "float-inf": (float("inf"), NO_RULES),
    "float-neg-inf": (float("-inf"), NO_RULES),
    "str-empty": ("", NO_RULES),
    "str-ascii": ("card_A", NO_RULES),
    "str-non-ascii": ("Grüße, 東京 ✓", NO_RULES),
    "str-32": ("x" * 32, NO_RULES),
    "str-surrogate": ("a\ud800b", NO_RULES),
    "bytes": (b"\x00\xffpay", NO_RULES),
    "bytes-empty": (b"", NO_RULES),
    "list-empty": ([], NO_RULES),
    "list-nested": ([1, [2, [3, []]], "x"], NO_RULES),
    "list-16": (list(range(16)), NO_RULES),
    "dict-empty": ({}, NO_RULES),
    "dict-order-kept": ({"b": 1, "a": 2}, NO_RULES),
    "dict-int-tuple-keys": ({1: "one", (2, "two"): [2]}, NO_RULES),
    "tuple-empty": ((), NO_RULES),
    "tuple": ((1, "a", None), NO_RULES),
    "set-ints": ({3, 1, 2}, NO_RULES),
    "set-mixed": ({"b", 2, (1,), None, 1.5, b"x"}, NO_RULES),
    "set-empty": (set(), NO_RULES),
    "frozenset": (frozenset({"z", "a"}), NO_RULES),
    "decimal": (Decimal("15.00"), NO_RULES),
    "decimal-exponent": (Decimal("1E+3"), NO_RULES),
    "uuid-raw": (U1, NO_RULES),
    "datetime-naive-raw": (dt.datetime(2024, 3, 1, 9, 30, 0), NO_RULES),
    "datetime-aware-raw": (
        dt.datetime(2024, 3, 1, 9, 30, 0, 123456, tzinfo=dt.timezone(dt.timedelta(hours=9))),
        NO_RULES,
    ),
    "date": (dt.date(2024, 2, 29), NO_RULES),
    "time": (dt.time(23, 59, 1), NO_RULES),
    "time-aware": (dt.time(8, 0, tzinfo=dt.UTC), NO_RULES),
    "timedelta": (dt.timedelta(days=-1, seconds=5, microseconds=7), NO_RULES),
    "path": (pathlib.PurePosixPath("a/b/c.txt"), NO_RULES),
    "path-windows": (pathlib.PureWindowsPath(r"C:\\data\\in.csv"), NO_RULES),
    "enum": (Colour.RED, NO_RULES),
    "dataclass": (Money(1500, "usd"), NO_RULES),
    "namedtuple": (Point(1, 2), NO_RULES),
    "exception": (ValueError("bad amount", 3), NO_RULES),
    "cycle-list": (_cycle(), NO_RULES),
    "cycle-dict": (_dict_cycle(), NO_RULES),
    "opaque-raw": (Gateway(), NO_RULES),
    "opaque-normalized": (Gateway(), DEFAULT_RULES),
    "uuid-normalized": (U1, DEFAULT_RULES),
    "uuid-same-twice": ([U1, U2, str(U1).upper()], DEFAULT_RULES),
    "uuid-in-text": (f"order {U2} for {U1} and {U2}", DEFAULT_RULES),
    "datetime-normalized": (dt.datetime(2024, 3, 1, 9, 30), DEFAULT_RULES),
    "timestamp-in-text": ("at 2024-03-01 09:30:00.5+09:00 and 2024-03-01T09:30:00.5+09:00", DEFAULT_RULES),
    "timestamp-http-date": (
        "Date: Sat, 05 Dec 2026 08:41:44 GMT; expires=Sat, 05-Dec-2026 08:41:44 GMT",
        DEFAULT_RULES,
    ),
    "timestamp-near-miss": ("2024-03-01 and 12024-03-01T09:30:00 and 2024-03-01T09:30", DEFAULT_RULES),
    "set-of-uuids": ({U1, U2}, DEFAULT_RULES),
    "user-rule": ("tickets T-17 and T-17, T-9", TICKETS),
    "object-state": (Request("GET", "https://example.com/a"), NO_RULES),
    "object-same-twice": ([_SHARED, {"again": _SHARED}, Request("POST", "https://example.com/b")], NO_RULES),
    "object-past-budget": (Request("PUT", "x" * codec.OBJECT_BUDGET), NO_RULES),
    "object-past-budget-shallow": (Chain(Request("PUT", "x" * codec.OBJECT_BUDGET)), NO_RULES),
    "object-nested-past-depth": (_chain(codec.MAX_OBJECT_DEPTH + 2), NO_RULES),
    "mapping-items": (collections.UserDict({"b": 1, "a": [2]}), NO_RULES),
    "secret-values": (
        {"Authorization": "Basic dTpw", "auth": ("u", "p"), "X-Api-Key": "Basic dTpw", "url": "https://u:p@host/x"},
        DEFAULT_RULES,
    ),
    "secret-lines": (
        [
            b"POST /q HTTP/1.1\r\nHost: x\r\nAuthorization: Basic dTpw\r\nX-Api-Key: k1\r\n\r\n",
            'db:\n  user: ada\n  password: "dTpw"\n  keyboard: qwerty\n',
        ],
        DEFAULT_RULES,
    ),
    "bytes-utf8-normalized": (f"id={U1}&at=2024-03-01T09:30:00".encode(), DEFAULT_RULES),
    "bytes-not-utf8-raw": (b"\xff" + str(U1).encode(), DEFAULT_RULES),
    "tmp-paths": (
        [
            f"{TMP_ROOTS[0]}/tmpa1b2c3/out.json",
            PurePosixPath(f"{TMP_ROOTS[0]}/tmpa1b2c3") / "in.csv",
            f"{TMP_ROOTS[0]}/pytest-of-ci/pytest-7/test_renew0/x",
        ],
        DEFAULT_RULES,
    ),
    "depth-limit": (None, NO_RULES),  # replaced below: nested one level past MAX_DEPTH
    "too-deep-marker": (None, NO_RULES),  # replaced below: a value past MAX_DEPTH
}


def _nested(levels: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(levels):
        value = [value]
    return value


CASES["depth-limit"] = (_nested(codec.MAX_DEPTH), NO_RULES)
CASES["too-deep-marker"] = (_nested(codec.MAX_DEPTH + 1), NO_RULES)


def expected(name: str) -> bytes:
    return bytes.fromhex((HERE / f"{name}.hex").read_text().strip())


def write_all() -> None:
    for name, (value, rules) in CASES.items():
        (HERE / f"{name}.hex").write_text(codec.Encoder(rules).encode(value).hex() + "\n")


if __name__ == "__main__":
    # Import the module under its package name so the qualified type names in the
    # vectors are `tests.vectors.cases.Money`, not `__main__.Money`.
    from tests.vectors import cases as module

    if sys.argv[1:] == ["--write"]:
        module.write_all()
    else:
        for name, (value, rules) in module.CASES.items():
            print(f"{name:24} {codec.Encoder(rules).encode(value).hex()}")
