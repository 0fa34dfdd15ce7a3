"""Rendering a diff as text and JSON."""

from __future__ import annotations

import json
import re

import pytest

from callpin import diff
from callpin.fields import ABSENT, FieldChange
from callpin.render_diff import render_field, render_json, render_stat, render_text, rows
from sample_logs import call, log_of, mark, raised, ret

A, B, C = (call(f"svc.{name}") for name in "abc")


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
    assert re.fullmatch(r"counts: +calls", lines[-4])


def test_an_identical_diff_says_so():
    text = render_text(diff(log_of(A, B), log_of(A, B)))
    assert text.splitlines()[-1] == "identical: 2 events"
    assert "moved" not in text


def test_one_event_is_counted_in_the_singular():
    assert render_text(diff(log_of(A), log_of(A))).splitlines()[-1] == "identical: 1 event"


def test_the_stat_view_has_counts_and_summary_only():
    text = render_stat(diff(log_of(A, B), log_of(B, A)))
    assert text.splitlines() == [
        "counts:  calls",
        "  svc.a  1 → 1",
        "  svc.b  1 → 1",
        "2 differences: 2 moved, 0 missing, 0 extra, 0 changed",
    ]


def test_the_count_table_counts_calls_and_shows_a_raise_in_its_own_column():
    old = log_of(call("svc.charge"), ret("svc.charge", 1), call("svc.notify"))
    new = log_of(call("svc.charge"), raised("svc.charge", "ValueError", "no"), call("svc.notify"), call("svc.notify"))
    lines = render_stat(diff(old, new)).splitlines()
    assert lines[:3] == [
        "counts:       calls  returns  raises",
        "  svc.charge  1 → 1  1 → 0    0 → 1",
        "  svc.notify  1 → 2",
    ]


def test_the_changed_only_count_table_says_how_many_labels_it_leaves_out():
    text = render_stat(diff(log_of(A, B, C), log_of(A, B, C, C)), changed_only=True)
    assert text.splitlines()[1:3] == ["  svc.c  1 → 2", "  (2 labels with the same counts)"]


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
        "counts": {"svc.a": {"calls": [1, 1]}, "svc.b": {"calls": [0, 1]}, "svc.pay": {"calls": [1, 1]}},
    }


def test_json_counts_name_each_kind_a_label_has():
    old = log_of(call("svc.charge"), mark("returned", 1))
    new = log_of(call("svc.charge"), raised("svc.charge", "ValueError", "no"), mark("returned", 1))
    assert json.loads(render_json(diff(old, new)))["counts"] == {
        "returned": {"marks": [1, 1]},
        "svc.charge": {"calls": [1, 1], "raises": [0, 1]},
    }


def test_the_json_stat_view_leaves_out_the_ops():
    document = json.loads(render_json(diff(log_of(A), log_of(B)), stat=True))
    assert set(document) == {"same", "summary", "counts"}


def test_a_field_change_repeated_across_calls_is_written_once_with_the_calls_it_occurs_in():
    context = {"user": "u1"}
    grown = {"user": "u1", "a": 1, "b": 2, "c": 3}
    old = log_of(*(call(f"svc.step{k}", k, ctx=context) for k in range(5)))
    new = log_of(*(call(f"svc.step{k}", k, ctx=grown) for k in range(5)))
    text = render_text(diff(old, new))
    for key, value in (("a", 1), ("b", 2), ("c", 3)):
        line = f"kwargs.ctx.{key}: (absent) → {value}"
        assert text.count(line) == 1
        assert f"{line}  (in 5 calls: #0, #1, #2, #3, #4)" in text
    assert text.count("(and 3 changes shown at #0)") == 4


def test_a_change_repeated_in_many_calls_lists_the_first_and_last_calls_and_counts_the_rest():
    old = log_of(*(call("svc.step", k, ctx={"v": 1}) for k in range(40)))
    new = log_of(*(call("svc.step", k, ctx={"v": 2}) for k in range(40)))
    text = render_text(diff(old, new))
    assert "kwargs.ctx.v: 1 → 2  (in 40 calls: #0, #1, #2, #3, #4, #5, … 32 more …, #38, #39)" in text
    assert max(len(line) for line in text.splitlines()) < 160


def test_a_field_change_in_one_call_only_is_written_plainly():
    old = log_of(call("svc.a", ctx={"x": 1}), call("svc.b", ctx={"x": 1}))
    new = log_of(call("svc.a", ctx={"x": 2}), call("svc.b", ctx={"x": 3}))
    text = render_text(diff(old, new))
    assert "kwargs.ctx.x: 1 → 2\n" in text + "\n"
    assert "calls:" not in text
