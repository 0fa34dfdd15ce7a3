"""Small hand-built logs for the diff, render and command-line tests.

`call("billing.charge_card", "card_A", 1500, currency="usd")` describes one event;
`log_of(...)` encodes events with the live encoder into an in-memory Log and
`write(path, ...)` writes them as a .cpin file.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

from callpin._impl import Encoder
from callpin.event import KIND_CODES
from callpin.logfile import Log, write_log
from callpin.normalize import DEFAULT_RULES, RuleSet


class Spec(NamedTuple):
    kind: str
    label: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = {}  # noqa: RUF012 - never mutated
    value: Any = None
    error: tuple[str, str] | None = None
    thread: int = 1
    depth: int = 0


def call(label: str, *args: Any, thread: int = 1, depth: int = 0, **kwargs: Any) -> Spec:
    return Spec("call", label, args, kwargs, thread=thread, depth=depth)


def ret(label: str, value: Any, *, thread: int = 1, depth: int = 0) -> Spec:
    return Spec("return", label, value=value, thread=thread, depth=depth)


def raised(label: str, kind: str, message: str, *, thread: int = 1, depth: int = 0) -> Spec:
    return Spec("raise", label, error=(kind, message), thread=thread, depth=depth)


def mark(name: str, value: Any) -> Spec:
    return Spec("mark", name, value=value)


def frames_of(*events: Spec, rules: RuleSet = DEFAULT_RULES) -> list[bytes]:
    encoder = Encoder(rules)
    return [
        encoder.encode_event(KIND_CODES[e.kind], e.label, e.args, e.kwargs, e.value, e.error, e.thread, e.depth)
        for e in events
    ]


def log_of(*events: Spec, rules: RuleSet = DEFAULT_RULES, path: str | None = None) -> Log:
    return Log.from_frames(frames_of(*events, rules=rules), rules=rules, path=path)


def write(path: str | os.PathLike[str], *events: Spec, rules: RuleSet = DEFAULT_RULES) -> str:
    write_log(path, frames_of(*events, rules=rules), rules=rules)
    return os.fspath(path)


# The renewals scenario, as the events its pinned test records: look the card up,
# charge the renewal (the legacy code clamps a negative balance to 0), send a receipt.
def renewal(amount: int = 1500, *, swapped: bool = False) -> list[Spec]:
    charge = call("billing.charge_card", "card_A", amount=amount, currency="usd")
    receipt = call("billing.send_receipt", "card_A", "renewed")
    billing = [receipt, charge] if swapped else [charge, receipt]
    return [call("accounts.lookup", "cust_1"), *billing, mark("returned", {"ok": True})]
