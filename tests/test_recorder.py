"""record(): events, outcomes, stubs, marks, depth, threads, reentrancy and the files written."""

from __future__ import annotations

import os
import threading
import types

import pytest

import callpin
from callpin import Instance, TargetError, UsageError
from callpin.logfile import log_bytes
from callpin.names import output_name

COLLABORATORS = """
    seen = []

    def charge(card, amount, **options):
        seen.append((card, amount))
        return {"ok": True, "amount": amount}

    def fail(message):
        raise ValueError(message)

    def outer(n):
        return inner(n) + 1

    def inner(n):
        return n

    def echo(value):
        return value

    class Gateway:
        def ping(self):
            return "pong"
"""


@pytest.fixture
def billing(make_module):
    return make_module("cp_billing", COLLABORATORS)


def kinds(rec):
    return [(e.kind, e.label) for e in rec.events]


# -- events ---------------------------------------------------------------------------------


def test_the_call_event_is_appended_before_the_collaborator_runs(billing):
    seen_inside = []
    with callpin.record(
        spy="cp_billing.echo",
        stub={"cp_billing.echo": lambda value: seen_inside.extend(rec.events)},
    ) as rec:
        billing.echo(1)
    assert [(e.kind, e.args) for e in seen_inside] == [("call", (1,))]


def test_a_call_that_raises_is_recorded_as_attempted_and_the_exception_reaches_the_caller(billing):
    raised = ValueError("card 4242 declined")
    with callpin.record(spy="cp_billing.charge", stub={"cp_billing.charge": callpin.raises(raised)}) as rec:
        with pytest.raises(ValueError) as caught:
            billing.charge("card_A", 1500)
    assert caught.value is raised
    assert [(e.kind, e.args, e.error) for e in rec.events] == [
        ("call", ("card_A", 1500), None),
        ("raise", (), ("ValueError", "card 4242 declined")),
    ]


def test_a_raise_event_carries_the_normalized_message(billing):
    message = "order 123e4567-e89b-12d3-a456-426614174000 failed"
    with callpin.record(spy="cp_billing.fail") as rec:
        with pytest.raises(ValueError):
            billing.fail(message)
    assert rec.events[1].error == ("ValueError", "order <uuid:1> failed")


def test_a_raise_event_names_a_non_builtin_exception_by_module_and_name(billing, make_module):
    errors = make_module("cp_errors", "class Declined(Exception):\n    pass\n")
    with callpin.record(spy="cp_billing.charge", stub={"cp_billing.charge": callpin.raises(errors.Declined)}) as rec:
        with pytest.raises(errors.Declined):
            billing.charge("card_A", 1)
    assert rec.events[1].error == ("cp_errors.Declined", "")


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        ("raise", ["call", "call", "raise"]),
        ("all", ["call", "return", "call", "raise"]),
        ("none", ["call", "call"]),
    ],
)
def test_outcomes_choose_which_results_are_recorded(billing, outcomes, expected):
    with callpin.record(spy=["cp_billing.echo", "cp_billing.fail"], outcomes=outcomes) as rec:
        billing.echo(5)
        with pytest.raises(ValueError):
            billing.fail("no")
    assert [e.kind for e in rec.events] == expected


def test_return_values_are_recorded_with_outcomes_all(billing):
    with callpin.record(spy="cp_billing.charge", outcomes="all") as rec:
        billing.charge("card_A", 10)
    assert rec.events[1].value == {"ok": True, "amount": 10}


def test_unknown_outcomes_are_a_usage_error():
    with pytest.raises(UsageError, match="outcomes"):
        callpin.record(spy=[], outcomes="some")  # type: ignore[arg-type]


def test_a_dict_mutated_after_the_call_is_recorded_as_it_was_at_call_time(billing):
    payload = {"amount": 1500, "items": ["a"]}
    with callpin.record(spy="cp_billing.echo") as rec:
        billing.echo(payload)
        payload["amount"] = 0
        payload["items"].append("b")
    assert rec.events[0].args == ({"amount": 1500, "items": ["a"]},)


def test_keyword_arguments_are_recorded_in_name_order(billing):
    with callpin.record(spy="cp_billing.charge") as rec:
        billing.charge("card_A", 1, zeta=1, alpha=2)
        billing.charge("card_A", 1, alpha=2, zeta=1)
    first, second = rec.frames
    assert first == second
    assert list(rec.events[0].kwargs) == ["alpha", "zeta"]


def test_receivers_are_numbered_per_class_by_first_appearance(billing):
    first, second = billing.Gateway(), billing.Gateway()
    with callpin.record(spy="cp_billing.Gateway.ping") as rec:
        second.ping()
        first.ping()
        second.ping()
    assert [e.args for e in rec.events] == [
        (Instance("cp_billing.Gateway", 1),),
        (Instance("cp_billing.Gateway", 2),),
        (Instance("cp_billing.Gateway", 1),),
    ]


def test_values_are_normalized_with_the_recording_rules(billing):
    key = "123e4567-e89b-12d3-a456-426614174000"
    with callpin.record(spy="cp_billing.echo") as rec:
        billing.echo(key)
        billing.echo(f"again {key}")
    assert [e.args for e in rec.events] == [("<uuid:1>",), ("again <uuid:1>",)]
    with callpin.record(spy="cp_billing.echo", normalize=callpin.RuleSet()) as raw:
        billing.echo(key)
    assert raw.events[0].args == (key,)
    assert raw.rules == callpin.RuleSet()


def test_a_value_the_codec_cannot_encode_does_not_break_the_call(billing):
    class Broken:
        def __repr__(self):
            raise RuntimeError("no repr")

    with callpin.record(spy="cp_billing.echo", outcomes="all") as rec:
        value = Broken()
        assert billing.echo(value) is value
    assert type(rec.events[0].args[0]).__name__ == "Unencodable"


def test_depth_counts_spied_calls_inside_spied_calls(billing):
    with callpin.record(spy=["cp_billing.outer", "cp_billing.inner"], outcomes="all") as rec:
        billing.outer(1)
        billing.inner(2)
    assert [(e.kind, e.label, e.depth) for e in rec.events] == [
        ("call", "cp_billing.outer", 0),
        ("call", "cp_billing.inner", 1),
        ("return", "cp_billing.inner", 1),
        ("return", "cp_billing.outer", 0),
        ("call", "cp_billing.inner", 0),
        ("return", "cp_billing.inner", 0),
    ]


def test_calls_after_the_block_are_not_recorded(billing):
    with callpin.record(spy="cp_billing.echo") as rec:
        kept = billing.echo
    assert kept(3) == 3
    assert rec.events == []


def test_a_recording_is_entered_once(billing):
    recording = callpin.record(spy="cp_billing.echo")
    with recording:
        pass
    with pytest.raises(UsageError, match="once"):
        with recording:
            pass


# -- stubs and marks ----------------------------------------------------------------------------


def test_returns_replaces_the_collaborator_while_recording(billing):
    with callpin.record(spy="cp_billing.charge", stub={"cp_billing.charge": callpin.returns({"ok": False})}) as rec:
        assert billing.charge("card_A", 5) == {"ok": False}
    assert billing.seen == []
    assert kinds(rec) == [("call", "cp_billing.charge")]
    assert billing.charge("card_A", 5) == {"ok": True, "amount": 5}


def test_a_stub_is_any_callable_and_gets_the_call_arguments(billing):
    stub = {"cp_billing.charge": lambda card, amount: {"ok": amount < 100}}
    with callpin.record(spy="cp_billing.charge", stub=stub):
        assert billing.charge("card_A", 5) == {"ok": True}
        assert billing.charge("card_A", 500) == {"ok": False}


def test_a_stub_reaches_aliases_of_its_target(billing, make_module):
    legacy = make_module("cp_legacy", "from cp_billing import charge\n")
    with callpin.record(spy="cp_billing.charge", stub={"cp_billing.charge": callpin.returns("stubbed")}):
        assert legacy.charge("card_A", 1) == "stubbed"


def test_a_target_stubbed_but_not_spied_is_replaced_and_not_recorded(billing):
    with callpin.record(spy="cp_billing.echo", stub={"cp_billing.charge": callpin.returns("stubbed")}) as rec:
        assert billing.charge("card_A", 1) == "stubbed"
        billing.echo(1)
    assert kinds(rec) == [("call", "cp_billing.echo")]
    assert [p.place for p in rec.targets] == ["cp_billing.echo", "cp_billing.charge"]


def test_raises_instantiates_an_exception_class_per_call(billing):
    with callpin.record(spy=[], stub={"cp_billing.echo": callpin.raises(KeyError)}):
        with pytest.raises(KeyError) as first:
            billing.echo(1)
        with pytest.raises(KeyError) as second:
            billing.echo(1)
    assert first.value is not second.value


def test_raises_needs_an_exception():
    with pytest.raises(UsageError):
        callpin.raises("boom")  # type: ignore[arg-type]


def test_a_stub_must_be_callable():
    with pytest.raises(UsageError, match="not callable"):
        callpin.record(spy=[], stub={"cp_billing.echo": 42})  # type: ignore[dict-item]


def test_a_stub_target_must_be_a_single_callable(billing):
    with pytest.raises(callpin.TargetError, match="one callable"):
        with callpin.record(spy=[], stub={"cp_billing": callpin.returns(1)}):
            pass


def test_a_class_stub_replaces_its_constructor_and_is_restored(billing):
    original = billing.Gateway
    fake = object()
    with callpin.record(spy="cp_billing.Gateway", stub={"cp_billing.Gateway": callpin.returns(fake)}):
        assert billing.Gateway() is fake
    assert billing.Gateway is original


def test_a_class_stubbed_and_spied_records_its_construction_with_the_stubs_result(make_module):
    module = make_module(
        "cp_shop",
        "class Gateway:\n    def __init__(self, host, password=None):\n        self.host = host\n"
        "    def charge(self, amount):\n        return 'real'\n",
    )
    fake = types.SimpleNamespace(charge=lambda amount: "fake")
    with callpin.record(
        spy={"gateway": "cp_shop.Gateway"}, stub={"cp_shop.Gateway": callpin.returns(fake)}, outcomes="all"
    ) as rec:
        assert module.Gateway("h1", "hunter2").charge(5) == "fake"
    assert [(e.kind, e.label) for e in rec.events] == [("call", "gateway"), ("return", "gateway")]
    call, returned = rec.events
    assert call.args == ("h1", callpin.Placeholder("secret", 1))
    assert isinstance(returned.value, callpin.ObjectState) and returned.value.type == "types.SimpleNamespace"
    assert b"hunter2" not in b"".join(rec.frames)
    # The class is spied as usual once the stub is gone: its construction and its methods.
    with callpin.record(spy="cp_shop.Gateway") as plain_rec:
        module.Gateway("h2").charge(1)
    assert [e.label for e in plain_rec.events] == ["cp_shop.Gateway", "cp_shop.Gateway.charge"]


def test_a_stubbed_async_target_stays_awaitable(make_module):
    import asyncio

    module = make_module("cp_async", "async def fetch(key):\n    return key\n")
    with callpin.record(
        spy="cp_async.fetch", stub={"cp_async.fetch": callpin.returns("stubbed")}, outcomes="all"
    ) as rec:
        assert asyncio.run(module.fetch("k")) == "stubbed"
    assert [(e.kind, e.value) for e in rec.events] == [("call", None), ("return", "stubbed")]


def test_mark_pins_a_value_in_order_with_the_calls(billing):
    with callpin.record(spy="cp_billing.echo") as rec:
        billing.echo(1)
        rec.mark("returned", {"status": "renewed"})
    assert [(e.kind, e.label, e.value) for e in rec.events] == [
        ("call", "cp_billing.echo", None),
        ("mark", "returned", {"status": "renewed"}),
    ]


def test_mark_outside_the_block_is_a_usage_error(billing):
    with callpin.record(spy="cp_billing.echo") as rec:
        pass
    with pytest.raises(UsageError):
        rec.mark("late", 1)


# -- threads and reentrancy -------------------------------------------------------------------


def test_threads_are_numbered_by_first_appearance_and_the_recording_thread_is_1(billing):
    def worker(value):
        billing.echo(value)

    with callpin.record(spy="cp_billing.echo") as rec:
        for value in ("a", "b"):
            thread = threading.Thread(target=worker, args=(value,))
            thread.start()
            thread.join()
        billing.echo("main")
    assert [(e.args, e.thread) for e in rec.events] == [(("a",), 2), (("b",), 3), (("main",), 1)]


def test_eight_threads_of_5000_calls_record_exactly_40000_call_events(billing, tmp_path):
    threads, per_thread = 8, 5000
    start = threading.Barrier(threads)

    def worker(number):
        start.wait()
        for index in range(per_thread):
            billing.echo((number, index))

    path = tmp_path / "threads.cpin"
    with callpin.record(path, spy="cp_billing.echo", outcomes="none") as rec:
        workers = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
        for thread in workers:
            thread.start()
        for thread in workers:
            thread.join()
    log = callpin.load(path)
    assert len(log) == threads * per_thread
    assert log.fingerprint == rec.log().fingerprint
    seen = [event.args[0] for event in log]
    assert len(set(seen)) == threads * per_thread
    assert set(seen) == {(n, i) for n in range(threads) for i in range(per_thread)}
    assert {event.thread for event in log} == set(range(2, threads + 2))


def test_a_spied_call_made_while_encoding_another_passes_through_unrecorded(billing):
    class Chatty:
        def __repr__(self):
            return f"Chatty({billing.echo('from repr')})"

    finished = []

    def scenario():
        with callpin.record(spy="cp_billing.echo") as rec:
            billing.echo(Chatty())
        finished.append(rec)

    # A deadlock would hang the thread, not the test run.
    thread = threading.Thread(target=scenario, daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert finished, "recording a value whose repr calls a spied function deadlocked"
    [event] = finished[0].events
    assert event.args[0].repr == "Chatty(from repr)"


def test_a_spied_builtin_that_callpin_itself_uses_records_only_the_users_calls():
    with callpin.record(spy="builtins.sorted") as rec:
        result = sorted([3, 1, 2], key=None, reverse=True)
    assert result == [3, 2, 1]
    # builtins.sorted is global: other threads of the test runner may call it too.
    assert [(e.label, e.args, e.kwargs) for e in rec.events if e.thread == 1] == [
        ("builtins.sorted", ([3, 1, 2],), {"key": None, "reverse": True})
    ]


# -- files ------------------------------------------------------------------------------------


def test_the_log_is_written_to_path_on_exit_with_the_recordings_bytes(billing, tmp_path):
    path = tmp_path / "sub" / "renew.cpin"
    with callpin.record(path, spy="cp_billing.echo", meta={"scenario": "renew"}) as rec:
        billing.echo(1)
        assert not path.exists()
    assert path.read_bytes() == log_bytes(rec.frames, rules=rec.rules, meta={"scenario": "renew"})
    log = callpin.load(path)
    assert log.meta == {"scenario": "renew"}
    assert log.fingerprint == rec.log().fingerprint
    assert [e.args for e in log] == [(1,)]


def test_a_block_that_raised_still_writes_its_log(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    with pytest.raises(RuntimeError):
        with callpin.record(path, spy="cp_billing.echo"):
            billing.echo(1)
            raise RuntimeError("legacy code failed")
    assert [e.args for e in callpin.load(path)] == [(1,)]


def test_an_interrupted_block_leaves_the_previous_log_untouched(billing, tmp_path):
    path = tmp_path / "renew.cpin"
    with callpin.record(path, spy="cp_billing.echo"):
        billing.echo("complete")
    before = path.read_bytes()
    with pytest.raises(KeyboardInterrupt):
        with callpin.record(path, spy="cp_billing.echo"):
            billing.echo("partial")
            raise KeyboardInterrupt
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["renew.cpin"]


def test_output_dir_gets_a_copy_named_after_the_path(billing, tmp_path, monkeypatch):
    out = tmp_path / "out"
    monkeypatch.setenv("CALLPIN_OUTPUT_DIR", str(out))
    path = tmp_path / "baselines" / "test_renewals" / "test_renew.cpin"
    with callpin.record(path, spy="cp_billing.echo"):
        billing.echo(1)
    assert (out / "test_renewals" / "test_renew.cpin").read_bytes() == path.read_bytes()


def test_output_dir_names_a_pathless_recording_after_its_first_label(billing, tmp_path, monkeypatch):
    monkeypatch.setenv("CALLPIN_OUTPUT_DIR", str(tmp_path))
    for value in (1, 2):
        with callpin.record(spy={"billing.echo": "cp_billing.echo"}):
            billing.echo(value)
    assert sorted(os.listdir(tmp_path)) == ["billing.echo-2.cpin", "billing.echo.cpin"]
    assert [e.args for e in callpin.load(tmp_path / "billing.echo-2.cpin")] == [(2,)]


def test_without_output_dir_nothing_else_is_written(billing, tmp_path, monkeypatch):
    monkeypatch.delenv("CALLPIN_OUTPUT_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    with callpin.record(spy="cp_billing.echo") as rec:
        billing.echo(1)
    assert rec.export(None) is None
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    ("source", "label"),
    [
        (None, "x" * 300),
        ("baselines/tests/" + "t" * 206 + ".cpin", None),
        ("/tmp/" + "d" * 300 + "/" + "f" * 300, None),
    ],
)
def test_a_long_name_is_exported_clipped_with_a_hash(source, label, monkeypatch, tmp_path):
    monkeypatch.delenv("CALLPIN_OUTPUT_DIR", raising=False)
    with callpin.record(spy={label or "l": callpin.target(os.path, "basename")}) as rec:
        os.path.basename("/a")
    monkeypatch.setenv("CALLPIN_OUTPUT_DIR", str(tmp_path))
    written = rec.export(source)
    assert written is not None
    relative = os.path.relpath(written, tmp_path)
    assert all(len(part) <= 105 for part in relative.split(os.sep))
    assert relative == output_name(source, label)
    assert callpin.load(written).fingerprint == rec.log().fingerprint


def test_recordings_of_the_same_calls_are_byte_identical(billing):
    def run():
        with callpin.record(spy="cp_billing.Gateway.ping", outcomes="all") as rec:
            billing.Gateway().ping()
        return log_bytes(rec.frames, rules=rec.rules)

    assert run() == run()


def test_placeholders_are_numbered_across_the_whole_log(billing):
    first, second = "11111111-2222-3333-4444-555555555555", "66666666-7777-8888-9999-000000000000"
    with callpin.record(spy="cp_billing.echo") as rec:
        billing.echo(first)
        billing.echo(second)
        billing.echo(first)
    assert [e.args[0] for e in rec.events] == ["<uuid:1>", "<uuid:2>", "<uuid:1>"]


def test_normalize_takes_a_rule_set_an_iterable_of_rules_or_none():
    from callpin.recorder import rule_set

    uuid_rule = callpin.DEFAULT_RULES.rules[0]
    user = callpin.rule(r"order-\d+", "order")
    assert rule_set(callpin.DEFAULT_RULES) is callpin.DEFAULT_RULES
    assert rule_set(None) == rule_set(()) == callpin.RuleSet()
    assert rule_set([uuid_rule, user]) == callpin.RuleSet([uuid_rule, user])
    assert rule_set(one for one in [user]) == callpin.RuleSet([user])
    assert rule_set(user) == callpin.RuleSet([user])
    for wrong in ("uuid", 3, [user, "uuid"], {"uuid": 1}):
        with pytest.raises(UsageError, match=r"normalize= takes a RuleSet .* an iterable of rules .* or None"):
            rule_set(wrong)


def test_a_recording_without_rules_keeps_uuids_as_they_are():
    import uuid

    key = uuid.UUID(int=3)
    with callpin.record(spy=["json.dumps"], normalize=None) as rec:
        __import__("json").dumps(str(key))
    assert rec.rules == callpin.RuleSet()
    assert str(key) in rec.events[0].render()


def test_a_stub_key_that_is_not_a_target_says_what_a_key_must_be():
    with pytest.raises(UsageError, match=r"a stub key is a spy target: a dotted path .*; got 42"):
        with callpin.record(spy=["json.dumps"], stub={42: lambda *a: 1}):
            pass
    with pytest.raises(TargetError, match=r"cannot spy 'dumps': .* \(a stub key is a spy target: a dotted path"):
        with callpin.record(spy=["json.dumps"], stub={"dumps": lambda *a: 1}):
            pass
