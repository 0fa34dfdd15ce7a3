"""Alignment and classification: moved, missing, extra, changed; order modes; identity."""

from __future__ import annotations

import gc
import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from callpin import CorruptLog, Record, RulesMismatch, UsageError, diff
from callpin import diff as diff_function
from callpin.diff import Counts, Diff, Op
from callpin.fields import ABSENT, FieldChange
from callpin.logfile import Log
from callpin.normalize import DEFAULT_RULES, RuleSet, rule
from sample_logs import call, frames_of, log_of, mark, raised, renewal, ret, write

# The alignment module, for its tuning constant.
engine = importlib.import_module("callpin.align")

A, B, C, D, E, F = (call(f"svc.{name}") for name in "abcdef")


def ops_of(result: Diff) -> list[tuple[str, int | None, int | None]]:
    return [(op.op, op.old, op.new) for op in result.ops]


def kinds(result: Diff) -> list[str]:
    return sorted(op.op for op in result.ops)


# ---------------------------------------------------------------------------
# The three alignment outcomes.


def test_identical_logs_are_the_same():
    result = diff(log_of(A, B, C), log_of(A, B, C))
    assert result.same
    assert result.ops == ()
    assert result.summary == {"moved": 0, "missing": 0, "extra": 0, "changed": 0}


def test_adjacent_swap_reports_both_calls_as_moved_and_nothing_else():
    result = diff(log_of(A, B, C, D), log_of(A, C, B, D))
    assert sorted(ops_of(result)) == [("moved", 1, 2), ("moved", 2, 1)]
    assert not result.same


@pytest.mark.parametrize("distance", [2, 3, 5])
def test_a_call_moved_later_across_others_is_the_only_move(distance):
    events = [call("svc.step", k) for k in range(8)]
    moved = [*events[:1], *events[2 : 2 + distance], events[1], *events[2 + distance :]]
    result = diff(log_of(*events), log_of(*moved))
    assert ops_of(result) == [("moved", 1, 1 + distance)]


@pytest.mark.parametrize("distance", [2, 4])
def test_a_call_moved_earlier_across_others_is_the_only_move(distance):
    events = [call("svc.step", k) for k in range(8)]
    source = 1 + distance
    moved = [events[0], events[source], *events[1:source], *events[source + 1 :]]
    result = diff(log_of(*events), log_of(*moved))
    assert ops_of(result) == [("moved", source, 1)]


def test_swapping_two_blocks_of_two_reports_every_event_of_the_region():
    # Either block could be the one that moved: the smallest explanation is not
    # unique, so neither is singled out.
    result = diff(log_of(A, B, C, D, E), log_of(A, D, E, B, C))
    assert sorted(ops_of(result)) == [
        ("moved", 1, 3),
        ("moved", 2, 4),
        ("moved", 3, 1),
        ("moved", 4, 2),
    ]


def test_an_inserted_call_is_only_extra():
    result = diff(log_of(A, B, C), log_of(A, B, F, C))
    assert ops_of(result) == [("extra", None, 2)]
    assert result.ops[0].label == "svc.f"


def test_a_deleted_call_is_only_missing():
    result = diff(log_of(A, B, C), log_of(A, C))
    assert ops_of(result) == [("missing", 1, None)]
    assert result.ops[0].label == "svc.b"


def test_a_swap_far_from_an_insertion_is_reported_apart_from_it():
    events = [call("svc.step", k) for k in range(20)]
    edited = [*events[:3], events[4], events[3], *events[5:15], F, *events[15:]]
    result = diff(log_of(*events), log_of(*edited))
    assert sorted(ops_of(result)) == [("extra", None, 15), ("moved", 3, 4), ("moved", 4, 3)]


# ---------------------------------------------------------------------------
# changed: same kind and label in the same aligned place.


def test_a_changed_positional_argument_is_named_by_index():
    result = diff(
        log_of(A, call("billing.charge_card", "card_A", 1500), B),
        log_of(A, call("billing.charge_card", "card_A", 0), B),
    )
    assert ops_of(result) == [("changed", 1, 1)]
    assert result.ops[0].fields == (FieldChange("args[1]", 1500, 0),)


def test_a_changed_keyword_argument_is_named_by_keyword():
    result = diff(
        log_of(call("billing.charge_card", "card_A", currency="usd")),
        log_of(call("billing.charge_card", "card_A", currency="eur")),
    )
    assert result.ops[0].fields == (FieldChange("kwargs.currency", "usd", "eur"),)


def test_every_differing_field_is_listed():
    result = diff(
        log_of(call("billing.charge_card", "card_A", 1500, currency="usd")),
        log_of(call("billing.charge_card", "card_B", 1500, currency="eur")),
    )
    assert [change.path for change in result.ops[0].fields] == ["args[0]", "kwargs.currency"]


@pytest.mark.parametrize(
    ("before", "after", "path", "old", "new"),
    [
        ({"order": {"amount": 5}}, {"order": {"amount": 6}}, "args[0].order.amount", 5, 6),
        ({"items": [1, 2, 3]}, {"items": [1, 9, 3]}, "args[0].items[1]", 2, 9),
        ({"a b": 1}, {"a b": 2}, "args[0]['a b']", 1, 2),
        ({1: "x"}, {1: "y"}, "args[0][1]", "x", "y"),
        ((1, (2, 3)), (1, (2, 4)), "args[0][1][1]", 3, 4),
        ([1], [1, 2], "args[0][1]", ABSENT, 2),
        ({"a": 1}, {}, "args[0].a", 1, ABSENT),
        ([1], (1,), "args[0]", [1], (1,)),
        (1, 1.0, "args[0]", 1, 1.0),
    ],
)
def test_nested_differences_are_named_by_path(before, after, path, old, new):
    result = diff(log_of(call("svc.send", before)), log_of(call("svc.send", after)))
    (change,) = result.ops[0].fields
    assert (change.path, change.old, change.new) == (path, old, new)
    assert type(change.new) is type(new)


def test_a_record_field_is_named_by_field_name():
    from dataclasses import dataclass

    @dataclass
    class Invoice:
        number: str
        total: int

    result = diff(
        log_of(call("billing.file", Invoice("n1", 100))),
        log_of(call("billing.file", Invoice("n1", 90))),
    )
    (change,) = result.ops[0].fields
    assert (change.path, change.old, change.new) == ("args[0].total", 100, 90)


def test_records_of_different_types_differ_as_a_whole():
    result = diff(
        log_of(call("svc.send", Record("a.X", (("v", 1),)))),
        log_of(call("svc.send", Record("a.Y", (("v", 1),)))),
    )
    assert [change.path for change in result.ops[0].fields] == ["args[0]"]


def test_an_added_positional_argument_is_absent_on_the_old_side():
    result = diff(log_of(call("svc.send", 1)), log_of(call("svc.send", 1, 2)))
    assert result.ops[0].fields == (FieldChange("args[1]", ABSENT, 2),)


def test_a_changed_return_value_and_error_are_named():
    result = diff(
        log_of(ret("svc.get", {"ok": True}), raised("svc.put", "ValueError", "bad")),
        log_of(ret("svc.get", {"ok": False}), raised("svc.put", "KeyError", "bad")),
    )
    assert [op.fields for op in result.ops] == [
        (FieldChange("value.ok", True, False),),
        (FieldChange("error.type", "ValueError", "KeyError"),),
    ]


def test_a_changed_thread_is_named():
    result = diff(log_of(call("svc.a", thread=1)), log_of(call("svc.a", thread=2)))
    assert result.ops[0].fields == (FieldChange("thread", 1, 2),)


def test_a_different_label_in_the_same_place_is_missing_and_extra_not_changed():
    result = diff(log_of(A, call("svc.x", 1), B), log_of(A, call("svc.y", 1), B))
    assert sorted(ops_of(result)) == [("extra", None, 1), ("missing", 1, None)]


def test_a_different_kind_in_the_same_place_is_missing_and_extra_not_changed():
    result = diff(log_of(call("svc.x")), log_of(ret("svc.x", None)))
    assert kinds(result) == ["extra", "missing"]


def test_changed_events_pair_by_label_inside_a_gap():
    result = diff(
        log_of(A, call("svc.x", 1), call("svc.y", 1), B),
        log_of(A, call("svc.y", 2), B),
    )
    assert sorted(ops_of(result)) == [("changed", 2, 1), ("missing", 1, None)]


# ---------------------------------------------------------------------------
# Repeated events and counts.


def test_a_duplicated_call_is_one_extra_and_its_count_goes_from_2_to_3():
    charge = call("billing.charge_card", "card_A", 1500)
    result = diff(log_of(A, charge, B, charge), log_of(A, charge, charge, B, charge))
    assert kinds(result) == ["extra"]
    assert result.counts["billing.charge_card"].calls == (2, 3)
    assert result.counts["svc.a"] == Counts(calls=(1, 1))


@pytest.mark.parametrize("size", [31, 32, 255, 256, 70_000])
def test_labels_of_any_length_are_counted_and_named(size):
    label = "svc." + "x" * (size - 4)
    result = diff(log_of(call(label, 1), A), log_of(call(label, 2), A, call(label, 3)))
    assert result.counts == {label: Counts(calls=(1, 2)), "svc.a": Counts(calls=(1, 1))}
    assert [(op.op, op.label) for op in result.ops] == [("changed", label), ("extra", label)]


def test_a_label_that_is_not_valid_utf8_is_counted_and_named():
    label = "svc.\udcff"
    result = diff(log_of(call(label)), log_of(call(label), call(label)))
    assert result.counts == {label: Counts(calls=(1, 2))}


def test_counts_count_calls_apart_from_their_returns_and_raises():
    old = log_of(call("svc.charge"), ret("svc.charge", 1), call("svc.notify"), mark("returned", 1))
    new = log_of(
        call("svc.charge"), raised("svc.charge", "ValueError", "declined"), call("svc.notify"), call("svc.notify")
    )
    result = diff(old, new)
    assert result.counts["svc.charge"] == Counts(calls=(1, 1), returns=(1, 0), raises=(0, 1))
    assert result.counts["svc.notify"] == Counts(calls=(1, 2))
    assert result.counts["returned"] == Counts(marks=(1, 0))
    assert result.counts["svc.charge"].differs and not Counts(calls=(2, 2)).differs


def test_counts_cover_labels_of_both_logs_in_order():
    result = diff(log_of(B, A, A), log_of(B, C))
    assert {label: counts.calls for label, counts in result.counts.items()} == {
        "svc.a": (2, 0),
        "svc.b": (1, 1),
        "svc.c": (0, 1),
    }


def test_identical_repeated_calls_reordered_among_themselves_are_not_reported():
    # Ignoring the thread, the calls from threads 1 and 2 are the same call:
    # which of them came first is not a difference.
    old = log_of(A, call("svc.tick", thread=1), B, call("svc.tick", thread=2), C)
    new = log_of(A, call("svc.tick", thread=2), B, call("svc.tick", thread=1), C)
    assert diff(old, new, ignore=["thread"]).same
    assert not diff(old, new).same


def test_a_repeated_call_inserted_early_shifts_no_other_occurrence():
    tick = call("db.commit")
    old = [tick, call("svc.a", 1), tick, call("svc.a", 2), tick, call("svc.a", 3)]
    new = [tick, F, tick, call("svc.a", 1), tick, call("svc.a", 2), tick, call("svc.a", 3)]
    result = diff(log_of(*old), log_of(*new))
    assert kinds(result) == ["extra", "extra"]
    assert result.counts["db.commit"].calls == (3, 4)


def test_a_gap_without_unique_events_gets_the_smallest_explanation():
    c, d = call("svc.c"), call("svc.d")
    result = diff(log_of(c, d, c, d), log_of(d, c, d, c))
    assert ops_of(result) == [("moved", 0, 3)]


def test_a_gap_over_the_exact_bound_still_pairs_every_equal_event(monkeypatch):
    monkeypatch.setattr(engine, "EXACT_GAP_CELLS", 0)
    c, d = call("svc.c"), call("svc.d")
    result = diff(log_of(c, d, c, d), log_of(d, c, d, c))
    assert {op.op for op in result.ops} == {"moved"}


# ---------------------------------------------------------------------------
# Identity: ignored fields.


def test_an_ignored_field_is_left_out_of_identity():
    old = log_of(ret("svc.get", 1), call("svc.put", depth=1))
    new = log_of(ret("svc.get", 2), call("svc.put", depth=2))
    assert diff(old, new, ignore=["value", "depth"]).same
    assert kinds(diff(old, new, ignore=["value"])) == ["changed"]


def test_an_ignored_field_is_not_listed_in_changes():
    old = log_of(call("svc.put", 1, mode="a"))
    new = log_of(call("svc.put", 2, mode="b"))
    (op,) = diff(old, new, ignore=["args"]).ops
    assert [change.path for change in op.fields] == ["kwargs.mode"]


def test_ignore_accepts_a_single_field_name():
    assert diff(log_of(ret("svc.get", 1)), log_of(ret("svc.get", 2)), ignore="value").same


@pytest.mark.parametrize("field", ["kind", "label", "amount", "index"])
def test_a_field_outside_the_payload_cannot_be_ignored(field):
    with pytest.raises(UsageError, match="cannot ignore"):
        diff(log_of(A), log_of(A), ignore=[field])


# ---------------------------------------------------------------------------
# Order modes.


def test_thread_order_ignores_the_interleaving_of_threads():
    old = log_of(call("w.a", thread=1), call("w.x", thread=2), call("w.b", thread=1), call("w.y", thread=2))
    new = log_of(call("w.x", thread=2), call("w.y", thread=2), call("w.a", thread=1), call("w.b", thread=1))
    assert diff(old, new, order="thread").same
    assert not diff(old, new).same


def test_thread_order_reports_a_swap_inside_one_thread():
    old = log_of(call("w.a", thread=1), call("w.x", thread=2), call("w.b", thread=1))
    new = log_of(call("w.b", thread=1), call("w.x", thread=2), call("w.a", thread=1))
    assert sorted(ops_of(diff(old, new, order="thread"))) == [("moved", 0, 2), ("moved", 2, 0)]


def test_thread_order_matches_threads_by_ordinal():
    old = log_of(call("w.a", thread=1), call("w.x", thread=2))
    new = log_of(call("w.a", thread=1), call("w.x", thread=3))
    assert sorted(ops_of(diff(old, new, order="thread"))) == [
        ("extra", None, 1),
        ("missing", 1, None),
    ]


def test_no_order_ignores_any_reordering():
    assert diff(log_of(A, B, C, D), log_of(D, C, B, A), order="none").same


def test_no_order_reports_a_duplicate_as_one_extra():
    result = diff(log_of(A, B), log_of(B, A, B), order="none")
    assert ops_of(result) == [("extra", None, 2)]
    assert result.counts["svc.b"].calls == (1, 2)


def test_no_order_reports_a_changed_call_as_missing_and_extra():
    result = diff(log_of(call("svc.x", 1)), log_of(call("svc.x", 2)), order="none")
    assert ops_of(result) == [("missing", 0, None), ("extra", None, 0)]


def test_an_unknown_order_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown order 'random'"):
        diff(log_of(A), log_of(A), order="random")


# ---------------------------------------------------------------------------
# Inputs.


def test_logs_normalized_with_fewer_rules_are_compared_after_applying_the_others():
    token = "5f0c6a8e-7d1b-4b7a-9c1e-2f3a4b5c6d7e"
    only_uuid = RuleSet.named(["uuid"])
    stamped = call("svc.a", token, "2024-01-02T03:04:05Z")
    other = call("svc.a", token, "2025-06-07T08:09:10Z")
    assert diff(log_of(stamped, rules=only_uuid), log_of(other)).same
    assert diff(log_of(other), log_of(stamped, rules=only_uuid)).same
    changed = diff(log_of(stamped, rules=only_uuid), log_of(call("svc.a", "x", "2025-06-07T08:09:10Z")))
    assert [op.op for op in changed.ops] == ["changed"]


def test_rules_with_one_name_and_two_patterns_cannot_be_compared_and_are_named_once():
    old_rules = DEFAULT_RULES.with_rules([rule(r"v\d+", "build")])
    new_rules = DEFAULT_RULES.with_rules([rule(r"v[0-9.]+", "build")])
    with pytest.raises(RulesMismatch) as raised_error:
        diff(log_of(A, rules=old_rules, path="old.cpin"), log_of(A, rules=new_rules, path="new.cpin"))
    message = str(raised_error.value)
    assert "'build' is 'v\\\\d+' in one and 'v[0-9.]+' in the other" in message
    assert message.count("'build' is") == 1
    assert raised_error.value.old == old_rules
    assert raised_error.value.new == new_rules
    assert isinstance(raised_error.value, AssertionError)


def test_rules_given_to_diff_normalize_both_sides():
    old = log_of(call("svc.a", "lib 1.2.3"))
    new = log_of(call("svc.a", "lib 1.2.4"))
    assert not diff(old, new).same
    assert diff(old, new, rules=[rule(r"\d+\.\d+\.\d+", "version")]).same


def test_diff_reads_logs_from_paths(tmp_path):
    old = write(tmp_path / "old.cpin", A, B)
    new = write(tmp_path / "new.cpin", B, A)
    result = diff(old, new)
    assert kinds(result) == ["moved", "moved"]
    assert result.old.path == old


def test_events_outside_the_differences_are_not_decoded():
    # Thread 0 does not exist: decoding this frame raises. It is equal on both
    # sides and far from the difference, so diffing never decodes it.
    unreadable = b"\x98\x00\xa5svc.z\x90\x80\xc0\xc0\x00\x00"
    frames = frames_of(A, B, C)
    old = Log.from_frames([unreadable, *frames], rules=DEFAULT_RULES)
    new = Log.from_frames([unreadable, *frames_of(A, C)], rules=DEFAULT_RULES)
    assert ops_of(diff(old, new)) == [("missing", 2, None)]
    with pytest.raises(CorruptLog):
        old[0]


@pytest.mark.parametrize("frame", [b"\x98", b"\x93\x00\xa1x\x90", b"\x98\xcc\x01\xa1x"])
def test_a_malformed_frame_is_a_corrupt_log(frame):
    log = Log.from_frames([frame], rules=DEFAULT_RULES)
    with pytest.raises(CorruptLog, match="event 0"):
        diff(log, log_of(A))


def test_diff_is_exported_as_the_package_function():
    assert diff_function is diff
    assert Op("extra", "svc.a", None, 0).fields == ()


# ---------------------------------------------------------------------------
# The renewals scenario at the level of its logs (recording comes later).


def test_renewals_refactor_with_the_same_calls_is_identical():
    assert diff(log_of(*renewal()), log_of(*renewal())).same


def test_renewals_swapping_the_two_billing_calls_is_exactly_two_moved():
    result = diff(log_of(*renewal()), log_of(*renewal(swapped=True)))
    assert result.summary == {"moved": 2, "missing": 0, "extra": 0, "changed": 0}
    assert {op.label for op in result.ops} == {"billing.charge_card", "billing.send_receipt"}


def test_renewals_dropping_the_clamp_is_one_change_naming_the_amount():
    result = diff(log_of(*renewal(amount=0)), log_of(*renewal(amount=-250)))
    (op,) = result.ops
    assert (op.op, op.label) == ("changed", "billing.charge_card")
    assert op.fields == (FieldChange("kwargs.amount", 0, -250),)


# ---------------------------------------------------------------------------
# Invariants over arbitrary sequences.

sequences = st.lists(st.sampled_from("abcdefg"), max_size=14)


@pytest.mark.parametrize("exact_cells", [0, 40_000])
@settings(max_examples=150, deadline=None)
@given(old=sequences, new=sequences)
def test_every_event_is_accounted_for_exactly_once(exact_cells, old, new):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "EXACT_GAP_CELLS", exact_cells)
        old_log = log_of(*(call(f"svc.{x}", x) if x in "abc" else mark(x, 1) for x in old))
        new_log = log_of(*(call(f"svc.{x}", x) if x in "abc" else mark(x, 1) for x in new))
        result = diff(old_log, new_log)
    seen_old = [op.old for op in result.ops if op.old is not None]
    seen_new = [op.new for op in result.ops if op.new is not None]
    previous = (-1, -1)
    for run in result.runs:
        assert run.old > previous[0] and run.new > previous[1]
        for k in range(run.length):
            assert old_log.frames[run.old + k] == new_log.frames[run.new + k]
        seen_old.extend(range(run.old, run.old + run.length))
        seen_new.extend(range(run.new, run.new + run.length))
        previous = (run.old + run.length - 1, run.new + run.length - 1)
    assert sorted(seen_old) == list(range(len(old)))
    assert sorted(seen_new) == list(range(len(new)))
    for op in result.ops:
        if op.op == "moved":
            assert old_log.frames[op.old] == new_log.frames[op.new]
        if op.op == "changed":
            assert op.fields and old_log[op.old].label == new_log[op.new].label
    assert result.same == (old == new)
    assert sum(old_count for counts in result.counts.values() for old_count, _ in counts) == len(old)
    assert sum(new_count for counts in result.counts.values() for _, new_count in counts) == len(new)


def test_a_missing_event_after_a_changed_one_is_placed_after_it():
    old = log_of(call("svc.a"), call("svc.b", 1), call("svc.gone"), call("svc.c"))
    new = log_of(call("svc.a"), call("svc.b", 2), call("svc.new"), call("svc.c"))
    result = diff(old, new)
    missing = next(op for op in result.ops if op.op == "missing")
    assert result.position(missing) == 2
    assert [op.op for op in result.ops] == ["changed", "missing", "extra"]
    assert result.position_in_new(0) == 0
    assert result.position_in_new(2) == 2


def test_calls_to_one_collaborator_with_different_arguments_in_a_new_order_are_moved_not_changed():
    names = [f"f{k:02}.txt" for k in range(12)]
    resorted = sorted(names, key=lambda name: (int(name[1:3]) * 7) % 12)

    def reads(order):
        return [
            call("app.start"),
            *(event for name in order for event in (call("fs.read", name), ret("fs.read", name.upper()))),
        ]

    result = diff(log_of(*reads(names)), log_of(*reads(resorted)))
    assert result.summary["changed"] == 0
    assert result.summary["moved"] > 0
    assert {op.label for op in result.ops} == {"fs.read"}


# ---------------------------------------------------------------------------
# The collector.


def test_the_cyclic_collector_is_paused_while_diffing_and_restored(monkeypatch):
    module = importlib.import_module("callpin.diff")
    live = module.correspond
    seen: list[bool] = []

    def correspond(*args):
        seen.append(gc.isenabled())
        return live(*args)

    monkeypatch.setattr(module, "correspond", correspond)
    old, new = log_of(A, B), log_of(B, A)
    assert gc.isenabled()
    diff(old, new)
    assert gc.isenabled()
    gc.disable()
    try:
        diff(old, new)
        assert not gc.isenabled()
    finally:
        gc.enable()
    assert seen == [False, False]


def test_the_collector_is_restored_when_the_diff_fails():
    assert gc.isenabled()
    with pytest.raises(UsageError):
        diff(log_of(A), log_of(A), order="sideways")
    assert gc.isenabled()
