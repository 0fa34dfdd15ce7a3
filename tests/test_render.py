"""Rendering events, logs and diffs as text and JSON."""

from __future__ import annotations

import json
import re

import pytest

from callpin import Opaque, Record, diff
from callpin.diff import ABSENT, FieldChange
from callpin.logfile import Event
from callpin.normalize import RuleSet
from callpin.render import (
    render_event,
    render_field,
    render_json,
    render_log,
    render_log_json,
    render_stat,
    render_text,
    rows,
    value_text,
)
from sample_logs import call, log_of, mark, raised, ret

A, B, C = (call(f"svc.{name}") for name in "abc")


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


def test_value_text_is_repr_wherever_repr_can_show_the_value():
    value = {"a": (1,), "s": frozenset({2}), "r": Record("m.R", (("x", [1.5, None]),))}
    assert value_text(value) == repr(value)


def test_a_decoded_event_renders_through_its_own_method():
    log = log_of(call("billing.charge_card", "card_A", 1500))
    assert log[0].render() == "billing.charge_card('card_A', 1500)"


@pytest.mark.parametrize(
    ("change", "text"),
    [
        (FieldChange("args[1]", 1500, 0), "args[1]: 1500 → 0"),
        (FieldChange("kwargs.currency", "usd", "eur"), "kwargs.currency: 'usd' → 'eur'"),
        (FieldChange("kwargs.currency", ABSENT, "eur"), "kwargs.currency: (absent) → 'eur'"),
    ],
)
def test_a_field_change_renders_as_path_old_and_new(change, text):
    assert render_field(change) == text


# ---------------------------------------------------------------------------
# Logs.


def test_a_log_as_json_writes_lone_surrogates_as_escapes_and_huge_ints_as_reprs():
    huge = 1 << 20_000
    text = render_log_json(log_of(mark("x\ud800", ["y\udfff", huge])))
    text.encode("utf-8")
    event = json.loads(text)["events"][0]
    assert event["label"] == "x\ud800"
    assert event["value"] == ["y\udfff", {"$repr": f"{huge:#x}"}]


def test_a_log_renders_a_header_and_one_line_per_event_without_indices():
    text = render_log(log_of(call("billing.charge_card", "card_A", 1500), ret("billing.charge_card", 1)))
    assert text == (
        "# callpin log: 2 events, rules: uuid, timestamp, address\n"
        "billing.charge_card('card_A', 1500)\n"
        "billing.charge_card → 1\n"
    )


def test_a_log_renders_the_same_text_every_time():
    assert render_log(log_of(A, B, mark("m", {"x": 1}))) == render_log(log_of(A, B, mark("m", {"x": 1})))


def test_a_log_without_rules_and_with_meta_says_so():
    from callpin.logfile import Log
    from sample_logs import frames_of

    rules = RuleSet(())
    log = Log.from_frames(frames_of(A, rules=rules), rules=rules, meta={"scenario": "renew"})
    assert render_log(log).splitlines()[:2] == [
        "# callpin log: 1 event, rules: none",
        "# meta: {'scenario': 'renew'}",
    ]


def test_a_log_renders_as_json_with_every_field():
    log = log_of(call("svc.f", (1, 2), [3], key=None), raised("svc.f", "ValueError", "bad", thread=2))
    document = json.loads(render_log_json(log))
    assert document["count"] == 2
    assert document["fingerprint"] == log.fingerprint
    assert document["rules"] == ["uuid", "timestamp", "address"]
    assert document["events"][0] == {
        "index": 0,
        "kind": "call",
        "label": "svc.f",
        "args": [{"$repr": "(1, 2)"}, [3]],
        "kwargs": {"key": None},
        "value": None,
        "error": None,
        "thread": 1,
        "depth": 0,
    }
    assert document["events"][1]["error"] == {"type": "ValueError", "message": "bad"}
    assert document["events"][1]["thread"] == 2


# ---------------------------------------------------------------------------
# Diffs as text.


def test_each_op_is_a_line_with_its_old_and_new_index_and_the_event():
    text = render_text(diff(log_of(A, B, C), log_of(A, C, B)))
    assert re.search(r"^moved +1 +2  svc\.b\(\)$", text, re.M)
    assert re.search(r"^moved +2 +1  svc\.c\(\)$", text, re.M)


def test_the_rows_have_a_column_header_only_when_there_are_rows():
    assert re.search(r"^ +old +new$", render_text(diff(log_of(A, B), log_of(B, A))), re.M)
    assert "old new" not in render_text(diff(log_of(A), log_of(A)))


def test_missing_and_extra_show_a_dash_on_the_side_they_are_absent_from():
    text = render_text(diff(log_of(A, B), log_of(A, C)))
    assert re.search(r"^missing +1 +-  svc\.b\(\)$", text, re.M)
    assert re.search(r"^extra +- +1  svc\.c\(\)$", text, re.M)


def test_a_changed_op_lists_its_fields_under_it():
    text = render_text(diff(log_of(call("svc.pay", 1500)), log_of(call("svc.pay", 0))))
    lines = text.splitlines()
    at = next(k for k, line in enumerate(lines) if line.startswith("changed"))
    assert lines[at + 1].strip() == "args[0]: 1500 → 0"


def test_context_shows_that_many_equal_events_around_a_difference():
    events = [call("svc.step", k) for k in range(20)]
    text = render_text(diff(log_of(*events), log_of(*events[:10], *events[11:])), context=2)
    shown = re.findall(r"svc\.step\((\d+)\)", text)
    assert shown == ["8", "9", "10", "11", "12"]
    assert "(8 equal events)" in text
    assert "(7 equal events)" in text


def test_context_reaches_past_neighbouring_differences_to_equal_events():
    steps = [call("svc.step", k) for k in range(9)]
    new = [*steps[:3], call("svc.x"), call("svc.y"), *steps[6:]]
    laid_out = rows(diff(log_of(*steps), log_of(*new)), context=2)
    assert [(row.kind, row.old, row.new) for row in laid_out] == [
        ("skip", None, None),
        ("equal", 1, 1),
        ("equal", 2, 2),
        ("missing", 3, None),
        ("missing", 4, None),
        ("missing", 5, None),
        ("extra", None, 3),
        ("extra", None, 4),
        ("equal", 6, 5),
        ("equal", 7, 6),
        ("skip", None, None),
    ]


def test_zero_context_shows_only_the_differences():
    events = [call("svc.step", k) for k in range(6)]
    text = render_text(diff(log_of(*events), log_of(*events[:3], *events[4:])), context=0)
    assert re.findall(r"svc\.step\((\d+)\)", text) == ["3"]


def test_a_missing_event_is_placed_between_its_neighbours():
    laid_out = rows(diff(log_of(A, B, C), log_of(A, C)), context=5)
    assert [(row.kind, row.old, row.new) for row in laid_out] == [
        ("equal", 0, 0),
        ("missing", 1, None),
        ("equal", 2, 1),
    ]


def test_without_order_rows_list_only_the_differences():
    laid_out = rows(diff(log_of(A, B, C), log_of(C, A), order="none"), context=3)
    assert [(row.kind, row.old, row.new) for row in laid_out] == [("missing", 1, None)]


def test_the_count_table_and_the_summary_close_the_report():
    charge = call("billing.charge_card", "card_A")
    text = render_text(diff(log_of(charge, A, charge), log_of(charge, A, charge, charge)))
    lines = text.splitlines()
    assert lines[-1] == "1 difference: 0 moved, 0 missing, 1 extra, 0 changed"
    assert re.fullmatch(r"  billing\.charge_card +2 → 3", lines[-3])
    assert lines[-4] == "counts:"


def test_an_identical_diff_says_so():
    text = render_text(diff(log_of(A, B), log_of(A, B)))
    assert text.splitlines()[-1] == "identical: 2 events"
    assert "moved" not in text


def test_one_event_is_counted_in_the_singular():
    assert render_text(diff(log_of(A), log_of(A))).splitlines()[-1] == "identical: 1 event"
    assert render_log(log_of(A)).splitlines()[0].startswith("# callpin log: 1 event, rules: ")


def test_the_stat_view_has_counts_and_summary_only():
    text = render_stat(diff(log_of(A, B), log_of(B, A)))
    assert text.splitlines() == [
        "counts:",
        "  svc.a  1 → 1",
        "  svc.b  1 → 1",
        "2 differences: 2 moved, 0 missing, 0 extra, 0 changed",
    ]


def test_text_names_both_logs_and_a_non_default_comparison():
    result = diff(log_of(A, path="old.cpin"), log_of(A, path="new.cpin"), order="thread", ignore=["depth"])
    assert render_text(result).splitlines()[:3] == [
        "old: old.cpin (1 event)",
        "new: new.cpin (1 event)",
        "order: thread, ignoring depth",
    ]


def test_text_has_no_colour_unless_asked():
    result = diff(log_of(A, B), log_of(B, A))
    assert "\x1b[" not in render_text(result)
    assert "\x1b[33mmoved" in render_text(result, color=True)


# ---------------------------------------------------------------------------
# Diffs as JSON.


def test_a_diff_renders_as_json_with_same_summary_ops_and_counts():
    result = diff(
        log_of(call("svc.pay", 1500, currency="usd"), A),
        log_of(call("svc.pay", 0), A, B),
    )
    assert json.loads(render_json(result)) == {
        "same": False,
        "summary": {"moved": 0, "missing": 0, "extra": 1, "changed": 1},
        "ops": [
            {
                "op": "changed",
                "label": "svc.pay",
                "old": 0,
                "new": 0,
                "fields": [
                    {"path": "args[0]", "old": 1500, "new": 0},
                    {"path": "kwargs.currency", "old": "usd"},
                ],
            },
            {"op": "extra", "label": "svc.b", "old": None, "new": 2, "fields": []},
        ],
        "counts": {"svc.a": [1, 1], "svc.b": [0, 1], "svc.pay": [1, 1]},
    }


def test_the_json_stat_view_leaves_out_the_ops():
    document = json.loads(render_json(diff(log_of(A), log_of(B)), stat=True))
    assert set(document) == {"same", "summary", "counts"}


def test_json_indents_the_document_but_writes_each_value_on_one_line():
    # A value nested to the writer's limit used to be indented at every level: over 100
    # spaces a line, a 148 kB log written as 10 MB of JSON.
    deep: list = [1]
    for _ in range(60):
        deep = [deep, "x"]
    log = log_of(*(call("svc.f", deep) for _ in range(50)))
    text = render_log_json(log)
    document = json.loads(text)
    assert document["events"][0]["args"] == [deep]
    assert max(len(line) - len(line.lstrip(" ")) for line in text.splitlines()) == 6
    assert len(text) * 5 < len(json.dumps(document, indent=2))
    assert text.startswith('{\n  "count": 50,\n  "fingerprint": ')
