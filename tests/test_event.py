"""An event's fields and its one-line text."""

from __future__ import annotations

import pytest

from callpin import Opaque, Record
from callpin.event import Event, render_event
from sample_logs import call, log_of


def event(kind="call", label="svc.f", args=(), kwargs=None, value=None, error=None, thread=1, depth=0):
    return Event(0, kind, label, args, kwargs or {}, value, error, thread, depth)


# ---------------------------------------------------------------------------
# Events.


@pytest.mark.parametrize(
    ("the_event", "text"),
    [
        (
            event(label="billing.charge_card", args=("card_A", 1500), kwargs={"currency": "usd"}),
            "billing.charge_card('card_A', 1500, currency='usd')",
        ),
        (event(label="db.commit"), "db.commit()"),
        (
            event(kind="return", label="billing.charge_card", value={"ok": True}),
            "billing.charge_card → {'ok': True}",
        ),
        (
            event(kind="raise", label="billing.charge_card", error=("ValueError", "card declined")),
            "billing.charge_card !! ValueError: card declined",
        ),
        (
            event(kind="raise", label="svc.f", error=("KeyboardInterrupt", "")),
            "svc.f !! KeyboardInterrupt",
        ),
        (event(kind="mark", label="returned", value=3), "mark returned = 3"),
        (event(depth=2), "    svc.f()"),
        (event(thread=2), "[t2] svc.f()"),
        (event(thread=3, depth=1), "[t3]   svc.f()"),
    ],
)
def test_an_event_renders_as_one_readable_line(the_event, text):
    assert render_event(the_event) == text


def test_an_event_with_line_breaks_in_a_value_stays_on_one_line():
    text = render_event(event(args=(Opaque("x.Y", "<Y\nmulti>"), "a\nb")))
    assert text == "svc.f(<Y\\nmulti>, 'a\\nb')"


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("\x1b]0;title\x07", "\\x1b]0;title\\x07"),
        ("svc.\u202eevil", "svc.\\u202eevil"),
        ("lone\ud800", "lone\\ud800"),
        ("tab\there", "tab\\there"),
        ("\x00\x7f\x85\u2028", "\\x00\\x7f\\x85\\u2028"),
    ],
)
def test_a_label_from_the_log_is_escaped_so_a_terminal_only_prints_it(label, shown):
    text = render_event(event(kind="raise", label=label, error=(label, label)))
    assert text == f"{shown} !! {shown}: {shown}"
    assert text.isprintable()
    text.encode("utf-8")


def test_a_call_nested_past_depth_100_names_its_depth_instead_of_indenting():
    assert render_event(event(depth=100)) == "  " * 100 + "svc.f()"
    assert render_event(event(depth=2**64 - 1, thread=2)) == f"[t2] [depth {2**64 - 1}] svc.f()"


def test_an_int_past_the_decimal_text_limit_renders_in_hex():
    huge = 1 << 20_000
    assert render_event(event(args=(huge, [huge]))) == f"svc.f({huge:#x}, [{huge:#x}])"


def test_a_value_nested_past_the_recursion_limit_renders_down_to_depth_100():
    deep: object = None
    for _ in range(5000):
        deep = [deep]
    text = render_event(event(kind="return", value=Record("m.R", (("x", deep),))))
    assert text == "svc.f → R(x=" + "[" * 99 + "..." + "]" * 99 + ")"


def test_a_decoded_event_renders_through_its_own_method():
    log = log_of(call("billing.charge_card", "card_A", 1500))
    assert log[0].render() == "billing.charge_card('card_A', 1500)"
