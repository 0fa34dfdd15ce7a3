"""Fixed byte vectors: every implementation encodes to them, and they decode to the inert forms."""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import pathlib
import subprocess
import sys
from typing import Any

import pytest
from tests.vectors import cases

from callpin import codec
from callpin.codec import (
    Custom,
    Cycle,
    EnumValue,
    ExceptionValue,
    Instance,
    ObjectState,
    Opaque,
    Placeholder,
    Record,
    Unencodable,
)
from callpin.logfile import LogWriter, load, log_bytes
from callpin.normalize import DEFAULT_RULES

HERE = pathlib.Path(__file__).parent / "vectors"
MOD = "tests.vectors.cases"

# The documented decoded form of every case whose value does not decode to itself.
DECODED: dict[str, Any] = {
    "str-surrogate": "a\ud800b",
    "path": pathlib.PurePosixPath("a/b/c.txt"),
    "path-windows": pathlib.PurePosixPath("C:/data/in.csv"),
    "enum": EnumValue(f"{MOD}.Colour", "RED"),
    "dataclass": Record(f"{MOD}.Money", (("amount", 1500), ("currency", "usd"))),
    "namedtuple": Record(f"{MOD}.Point", (("x", 1), ("y", 2))),
    "exception": ExceptionValue("builtins.ValueError", ("bad amount", 3)),
    "cycle-list": [1, Cycle(1)],
    "cycle-dict": {"a": 1, "self": Cycle(1)},
    "opaque-raw": Opaque(f"{MOD}.Gateway", "<Gateway object at 0x7f3a2c1b4d90>"),
    "opaque-normalized": Opaque(f"{MOD}.Gateway", "<Gateway object at <addr:1>>"),
    "uuid-normalized": Placeholder("uuid", 1),
    "uuid-same-twice": [Placeholder("uuid", 1), Placeholder("uuid", 2), "<uuid:1>"],
    "uuid-in-text": "order <uuid:1> for <uuid:2> and <uuid:1>",
    "datetime-normalized": Placeholder("ts", 1),
    "timestamp-in-text": "at <ts:1> and <ts:1>",
    "timestamp-http-date": "Date: <ts:1>; expires=<ts:2>",
    "secret-lines": [
        b"POST /q HTTP/1.1\r\nHost: x\r\nAuthorization: <secret:1>\r\nX-Api-Key: <secret:2>\r\n\r\n",
        'db:\n  user: ada\n  password: "<secret:3>"\n  keyboard: qwerty\n',
    ],
    "set-of-uuids": {Placeholder("uuid", 1), Placeholder("uuid", 2)},
    "user-rule": "tickets <ticket:1> and <ticket:1>, <ticket:2>",
    "too-deep-marker": cases._nested(codec.MAX_DEPTH),  # the innermost list is replaced
    "object-state": ObjectState(
        f"{MOD}.Request",
        1,
        (("method", "GET"), ("headers", {"Accept": "*/*"}), ("url", "https://example.com/a")),
    ),
    "object-same-twice": [
        ObjectState(
            f"{MOD}.Request", 1, (("method", "GET"), ("headers", {"Accept": "*/*"}), ("url", "https://example.com/a"))
        ),
        {
            "again": ObjectState(
                f"{MOD}.Request",
                1,
                (("method", "GET"), ("headers", {"Accept": "*/*"}), ("url", "https://example.com/a")),
            )
        },
        ObjectState(
            f"{MOD}.Request", 2, (("method", "POST"), ("headers", {"Accept": "*/*"}), ("url", "https://example.com/b"))
        ),
    ],
    "object-past-budget": Instance(f"{MOD}.Request", 1, True, bytes.fromhex("4709f41e82c68e43")),
    "object-past-budget-shallow": ObjectState(
        f"{MOD}.Chain", 1, (("inner", Instance(f"{MOD}.Request", 1, True, bytes.fromhex("4709f41e82c68e43"))),)
    ),
    "object-nested-past-depth": ObjectState(
        f"{MOD}.Chain",
        1,
        (
            (
                "inner",
                ObjectState(
                    f"{MOD}.Chain",
                    2,
                    (
                        (
                            "inner",
                            ObjectState(
                                f"{MOD}.Chain",
                                3,
                                (("inner", Instance(f"{MOD}.Chain", 4, False, bytes.fromhex("71ebf367f8e84cb0"))),),
                            ),
                        ),
                    ),
                ),
            ),
        ),
    ),
    "mapping-items": Custom("collections.UserDict", {"b": 1, "a": [2]}),
    "bytes-utf8-normalized": b"id=<uuid:1>&at=<ts:1>",
    "tmp-paths": ["<tmp:1>/out.json", pathlib.PurePosixPath("<tmp:1>/in.csv"), "<tmp:2>/x"],
    "secret-values": {
        "Authorization": Placeholder("secret", 1),
        "auth": Placeholder("secret", 2),
        "X-Api-Key": Placeholder("secret", 1),
        "url": "https://<secret:3>@host/x",
    },
}


def _too_deep_expected() -> Any:
    value: Any = Unencodable("builtins.list", f"nested deeper than {codec.MAX_DEPTH}")
    for _ in range(codec.MAX_DEPTH + 1):
        value = [value]
    return value


DECODED["too-deep-marker"] = _too_deep_expected()


def test_there_are_at_least_forty_vectors():
    assert len(cases.CASES) >= 40
    assert {p.stem for p in HERE.glob("*.hex")} == set(cases.CASES)


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_value_encodes_to_the_fixed_bytes(encoder_class, name):
    value, rules = cases.CASES[name]
    assert encoder_class(rules).encode(value).hex() == cases.expected(name).hex()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_fixed_bytes_decode_to_the_documented_form(name):
    value, _ = cases.CASES[name]
    decoded = codec.decode(cases.expected(name))
    assert _same(decoded, DECODED.get(name, value))


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_decoded_form_reencodes_to_the_same_bytes(encoder_class, name):
    from callpin.normalize import NO_RULES

    # Decoded values are already normalized; re-encoding them without rules is identity.
    data = cases.expected(name)
    assert encoder_class(NO_RULES).encode(codec.decode(data)) == data


def _small_log_frames(encoder_class: Any) -> list[bytes]:
    encoder = encoder_class(DEFAULT_RULES)
    key = "5f0e7a52-3c1d-4f8e-9a0b-1c2d3e4f5a6b"
    return [
        encoder.encode_event(
            0, "billing.charge_card", ["card_A", 1500], {"currency": "usd", "idempotency_key": key}, None, None, 1, 0
        ),
        encoder.encode_event(1, "billing.charge_card", [], {}, {"ok": True}, None, 1, 0),
        encoder.encode_event(
            0,
            "billing.send_receipt",
            ["a@example.com", 1500],
            {"sent_at": dt.datetime(2024, 3, 1, 9, 0)},
            None,
            None,
            1,
            0,
        ),
        encoder.encode_event(
            2, "billing.send_receipt", [], {}, None, ("builtins.TimeoutError", f"smtp timeout for {key}"), 1, 0
        ),
        encoder.encode_event(3, "returned", [], {}, {"charged": 1500}, None, 1, 0),
    ]


def test_a_small_log_has_the_fixed_bytes(encoder_class, tmp_path):
    frames = _small_log_frames(encoder_class)
    expected = (HERE / "small-log.cpin").read_bytes()
    assert log_bytes(frames) == expected
    with LogWriter(tmp_path / "small.cpin") as writer:
        for frame in frames:
            writer.write(frame)
    assert (tmp_path / "small.cpin").read_bytes() == expected


def test_the_small_log_reads_back():
    log = load(HERE / "small-log.cpin")
    assert [e.kind for e in log] == ["call", "return", "call", "raise", "mark"]
    assert log[0].kwargs["idempotency_key"] == "<uuid:1>"
    assert log[2].kwargs["sent_at"] == Placeholder("ts", 1)
    assert log[3].error == ("builtins.TimeoutError", "smtp timeout for <uuid:1>")
    assert log.fingerprint == (HERE / "small-log.fingerprint").read_text().strip()


# Run by each interpreter in turn: its encodings of every case, and of the small log, as hex.
_ENCODE_ALL = """
import json, platform
from callpin import _impl
from callpin.logfile import log_bytes
from tests.test_vectors import _small_log_frames
from tests.vectors import cases
encoded = {name: _impl.Encoder(rules).encode(value).hex() for name, (value, rules) in cases.CASES.items()}
encoded["small-log.cpin"] = log_bytes(_small_log_frames(_impl.Encoder)).hex()
print(json.dumps({"implementation": _impl.IMPLEMENTATION, "python": platform.python_version(), "bytes": encoded}))
"""


@pytest.mark.slow
def test_every_interpreter_found_writes_the_fixed_vectors_with_both_implementations():
    # CALLPIN_INTERPRETERS: the environments `make test-all` made, one per supported Python.
    pythons = os.environ.get("CALLPIN_INTERPRETERS", sys.executable).split(os.pathsep)
    expected = {name: cases.expected(name).hex() for name in cases.CASES}
    expected["small-log.cpin"] = (HERE / "small-log.cpin").read_bytes().hex()
    root = HERE.parent.parent
    for python in pythons:
        for implementation in ("c", "python"):
            env = {key: value for key, value in os.environ.items() if key != "CALLPIN_PURE_PYTHON"}
            if implementation == "python":
                env["CALLPIN_PURE_PYTHON"] = "1"
            done = subprocess.run(
                [python, "-c", _ENCODE_ALL], cwd=root, env=env, capture_output=True, text=True, check=False
            )
            assert done.returncode == 0, f"{python}: {done.stderr}"
            report = json.loads(done.stdout)
            where = f"{python} (Python {report['python']}, {implementation})"
            assert report["implementation"] == implementation, f"{where}: the C speedups are not live"
            differing = sorted(name for name in expected if report["bytes"].get(name) != expected[name])
            assert differing == [], f"{where} writes other bytes for {differing}"
