"""The journal and its per-call path, driven directly (as wrapt calls a spy) under both implementations.

Each test builds a `Journal` from one implementation's parts (encoder, lock, flag) and
calls that implementation's `Spy` with `(wrapped, instance, args, kwargs)`, so the
reference `journal.Spy` and the C `_speedups.Spy` answer the same questions.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

import callpin
from callpin import _impl, codec, journal
from callpin.journal import AsyncSpy, Journal, describe_error, run_stub
from callpin.logfile import Event
from callpin.normalize import DEFAULT_RULES


class Parts(NamedTuple):
    """One implementation's pieces of the per-call path."""

    encoder: Any
    spy: Any
    lock: Any
    state: Any


PARTS = {"python": Parts(codec.Encoder, journal.Spy, journal.Lock, journal.ThreadState)}
if _impl.IMPLEMENTATION == "c":
    PARTS["c"] = Parts(_impl.Encoder, _impl.Spy, _impl.Lock, _impl.ThreadState)
needs_c = pytest.mark.skipif(
    "c" not in PARTS, reason="the C speedups are not live (not built, or CALLPIN_PURE_PYTHON=1)"
)


@pytest.fixture(params=sorted(PARTS))
def parts(request: pytest.FixtureRequest) -> Parts:
    """Each available implementation of the per-call path in turn."""
    return PARTS[request.param]


def make_journal(parts: Parts, *, record_raise: bool = True, start: bool = True) -> Journal:
    made = Journal(parts.encoder(DEFAULT_RULES), lock=parts.lock(), state=parts.state(), record_raise=record_raise)
    if start:
        made.start()
    return made


def events(made: Journal) -> list[Event]:
    return list(callpin.Log.from_frames(made.snapshot(), rules=DEFAULT_RULES, meta={}))


def call(spy: Any, function: Callable[..., Any], *args: Any, instance: Any = None, **kwargs: Any) -> Any:
    """Call `function` through `spy` as wrapt calls a spy."""
    return spy(function, instance, args, kwargs)


def double(n: int) -> int:
    return n * 2


class Declined(Exception):
    pass


def decline(reason: str) -> None:
    raise Declined(reason)


class Gateway:
    def ping(self, value: Any = None) -> str:
        return "pong"


# ---------------------------------------------------------------------------------------
# Events and outcomes.


def test_a_call_event_is_appended_before_the_call_runs(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "billing.charge", None, False)
    seen = []
    assert call(spy, lambda n: seen.append(len(made.snapshot())) or n, 5) == 5
    assert seen == [1]
    assert [(e.kind, e.label, e.args, e.thread, e.depth) for e in events(made)] == [
        ("call", "billing.charge", (5,), 1, 0)
    ]


def test_return_events_are_written_only_when_asked(parts):
    made = make_journal(parts)
    returning = parts.spy(made, "a", None, True)
    silent = parts.spy(made, "b", None, False)
    call(returning, double, 2)
    call(silent, double, 3)
    assert [(e.kind, e.label, e.value) for e in events(made)] == [
        ("call", "a", None),
        ("return", "a", 4),
        ("call", "b", None),
    ]


@pytest.mark.parametrize("record_raise", [True, False])
def test_an_exception_is_reraised_as_it_was_and_recorded_as_the_journal_says(parts, record_raise):
    made = make_journal(parts, record_raise=record_raise)
    spy = parts.spy(made, "refund", None, True)
    assert spy.record_raise is record_raise
    with pytest.raises(Declined) as raised:
        call(spy, decline, "no funds")
    assert str(raised.value) == "no funds"
    assert raised.value.__context__ is None
    expected = [("call", None)] + ([("raise", (f"{__name__}.Declined", "no funds"))] if record_raise else [])
    assert [(e.kind, e.error) for e in events(made)] == expected


def test_a_stub_runs_instead_of_the_target(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "double", lambda n: -n, True)
    assert call(spy, double, 4) == -4
    assert [(e.kind, e.value) for e in events(made)] == [("call", None), ("return", -4)]


def test_keyword_arguments_are_recorded_sorted_by_name(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "charge", None, False)
    call(spy, lambda **kwargs: None, zeta=1, alpha=2, mid=3)
    assert [list(e.kwargs) for e in events(made)] == [["alpha", "mid", "zeta"]]


def test_keywords_already_in_order_are_kept_as_they_were_given():
    given = {"amount": 1, "currency": "usd"}
    assert codec.sorted_keywords(given) is given
    shuffled = {"currency": "usd", "amount": 1}
    assert list(codec.sorted_keywords(shuffled).items()) == [("amount", 1), ("currency", "usd")]
    assert list(shuffled) == ["currency", "amount"]


def test_keywords_named_by_str_subclasses_are_ordered_by_their_text():
    class Named(str):
        def __lt__(self, other: object) -> bool:
            raise AssertionError("compared through the subclass")

        __gt__ = __le__ = __ge__ = __lt__

    given = {Named("b"): 1, "a": 2, Named("c"): 3}
    assert [str.__str__(name) for name in codec.sorted_keywords(given)] == ["a", "b", "c"]


def test_the_spy_shows_what_it_was_made_with(parts):
    made = make_journal(parts, record_raise=False)
    stub = callpin.returns(1)
    spy = parts.spy(made, "label", stub, True)
    assert (spy.journal, spy.label, spy.stub, spy.record_raise, spy.record_return) == (made, "label", stub, False, True)


# ---------------------------------------------------------------------------------------
# Open and closed.


def test_a_journal_not_started_or_stopped_records_nothing(parts):
    made = make_journal(parts, start=False)
    spy = parts.spy(made, "double", None, True)
    assert call(spy, double, 1) == 2
    made.start()
    call(spy, double, 2)
    made.stop()
    assert call(spy, double, 3) == 6
    assert [e.args for e in events(made) if e.kind == "call"] == [(2,)]


def test_the_spy_reads_whether_the_journal_is_open_at_every_call(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "double", None, False)
    made.open = False
    call(spy, double, 1)
    made.open = True
    call(spy, double, 2)
    assert [e.args for e in events(made)] == [(2,)]


def test_a_snapshot_is_a_copy(parts):
    made = make_journal(parts)
    call(parts.spy(made, "double", None, False), double, 1)
    taken = made.snapshot()
    taken.clear()
    assert len(made.snapshot()) == 1


# ---------------------------------------------------------------------------------------
# Depth, marks and the flag.


def test_a_call_made_inside_a_spied_call_is_one_deeper_and_the_depth_comes_back(parts):
    made = make_journal(parts)
    inner = parts.spy(made, "inner", None, False)
    outer = parts.spy(made, "outer", None, False)

    def outer_body(n: int) -> int:
        made.mark("inside", n)
        return call(inner, double, n) + 1

    assert call(outer, outer_body, 3) == 7
    with pytest.raises(Declined):
        call(outer, lambda: call(inner, decline, "deep"))
    assert made.depth.get() == 0
    assert [(e.kind, e.label, e.depth) for e in events(made)] == [
        ("call", "outer", 0),
        ("mark", "inside", 1),
        ("call", "inner", 1),
        ("call", "outer", 0),
        ("call", "inner", 1),
        ("raise", "inner", 1),
        ("raise", "outer", 0),
    ]


def test_a_call_made_while_the_flag_is_set_passes_through_unrecorded(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "double", None, True)
    made.state.inside = True
    try:
        assert call(spy, double, 1) == 2
        made.mark("ignored", 1)
    finally:
        made.state.inside = False
    call(spy, double, 2)
    assert [(e.kind, e.args) for e in events(made)] == [("call", (2,)), ("return", ())]


def test_a_spied_call_made_while_encoding_an_argument_is_not_recorded(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "double", None, False)

    class Chatty:
        def __repr__(self) -> str:
            return f"Chatty({call(spy, double, 5)})"

    call(spy, lambda value: value, Chatty())
    (event,) = events(made)
    assert event.args[0].repr == "Chatty(10)"
    assert made.state.inside is False


# ---------------------------------------------------------------------------------------
# Threads and receivers.


def test_threads_are_numbered_by_first_appearance_after_the_starting_thread(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "double", None, False)
    for n in range(2):
        worker = threading.Thread(target=call, args=(spy, double, n))
        worker.start()
        worker.join()
    call(spy, double, 9)
    assert [(e.args, e.thread) for e in events(made)] == [((0,), 2), ((1,), 3), ((9,), 1)]
    assert made.threads == 3


def test_receivers_are_numbered_per_type_and_kept_until_the_journal_stops(parts):
    made = make_journal(parts)
    spy = parts.spy(made, f"{__name__}.Gateway.ping", None, False)
    first, second = Gateway(), Gateway()
    for receiver in (first, second, first):
        call(spy, receiver.ping, instance=receiver)
    call(spy, Gateway.ping, first, instance=Gateway)  # a class as the instance: not numbered
    numbers = [(e.args[0].type, e.args[0].number) for e in events(made)[:3]]
    assert numbers == [(f"{__name__}.Gateway", 1), (f"{__name__}.Gateway", 2), (f"{__name__}.Gateway", 1)]
    assert len(events(made)[3].args) == 1
    assert made.instance_counts == {f"{__name__}.Gateway": 2}
    assert [held for held, _ in made.instances.values()] == [first, second]
    made.stop()
    assert made.instances == {}


# ---------------------------------------------------------------------------------------
# What both implementations share: bytes and the description of an error.


@needs_c
def test_both_spies_write_the_same_frames():
    def scenario(parts: Parts) -> list[bytes]:
        made = make_journal(parts)
        spy = parts.spy(made, "charge", None, True)
        key = "12345678-1234-5678-1234-567812345678"
        call(spy, lambda *a, **k: {"id": key}, "card", 1500, currency="usd", key=key)
        with pytest.raises(Declined):
            call(spy, decline, f"declined at 2024-05-01T10:00:00Z for {key}")
        call(spy, Gateway().ping, instance=Gateway())
        made.mark("end", (key, {3, 1}))
        return made.snapshot()

    assert scenario(PARTS["c"]) == scenario(PARTS["python"])


def test_an_error_is_described_by_its_type_name_and_message():
    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no message")

    assert describe_error(ValueError("bad")) == ("ValueError", "bad")
    assert describe_error(Declined("no")) == (f"{__name__}.Declined", "no")
    assert describe_error(Unprintable()) == (f"{__name__}.{Unprintable.__qualname__}", "<unprintable>")


class Terse(Journal):
    """A journal describing every error alike: which description a spy uses shows."""

    __slots__ = ()

    @staticmethod
    def describe_error(exc: BaseException) -> tuple[str, str]:
        return "Error", "terse"


def test_the_spy_describes_an_error_with_the_journals_describe_error(parts):
    made = Terse(parts.encoder(DEFAULT_RULES), lock=parts.lock(), state=parts.state(), record_raise=True)
    made.start()
    with pytest.raises(Declined):
        call(parts.spy(made, "refund", None, False), decline, "why")
    assert [e.error for e in events(made)] == [None, ("Error", "terse")]


# ---------------------------------------------------------------------------------------
# What the C spy takes from the journal.


@needs_c
@pytest.mark.parametrize(
    ("attribute", "replacement"),
    [("lock", journal.Lock), ("state", journal.ThreadState), ("encoder", codec.Encoder), ("frames", tuple)],
)
def test_the_c_spy_refuses_a_journal_without_its_c_pieces(attribute, replacement):
    made = make_journal(PARTS["c"])
    setattr(made, attribute, replacement())
    with pytest.raises(TypeError, match=f"journal's {attribute}"):
        _impl.Spy(made, "label", None, False)


@needs_c
def test_the_c_spy_refuses_a_stub_that_is_not_callable():
    with pytest.raises(TypeError, match="not callable"):
        _impl.Spy(make_journal(PARTS["c"]), "label", 3, False)


# ---------------------------------------------------------------------------------------
# Coroutine functions (the Python AsyncSpy, over either implementation's journal).


async def fetch(key: str) -> dict[str, str]:
    return {"key": key}


def test_a_coroutine_call_is_recorded_when_made_and_its_outcome_when_awaited(parts):
    made = make_journal(parts)
    spy = AsyncSpy(made, "fetch", None, True)
    inner = parts.spy(made, "double", None, False)

    async def body(key: str) -> dict[str, str]:
        call(inner, double, 1)
        return await fetch(key)

    awaitable = call(spy, body, "k")
    assert [e.kind for e in events(made)] == ["call"]
    assert asyncio.run(awaitable) == {"key": "k"}
    assert [(e.kind, e.label, e.depth) for e in events(made)] == [
        ("call", "fetch", 0),
        ("call", "double", 1),
        ("return", "fetch", 0),
    ]


def test_the_stub_of_a_coroutine_function_runs_when_awaited_and_its_awaitable_is_awaited():
    ran = []

    def stub(key: str) -> Any:
        ran.append(key)
        return fetch(key)

    pending = run_stub(stub, ("k",), {})
    assert ran == []
    assert asyncio.run(pending) == {"key": "k"}
    assert ran == ["k"]


# ---------------------------------------------------------------------------------------
# The label: normalized as any text, under the rules the encoder has at each call.

UUID_LABEL = "billing.charge[0f0e0d0c-0b0a-0908-0706-050403020100]"


def test_a_label_holding_a_uuid_is_numbered_in_log_order_at_every_call(parts):
    import uuid

    made = make_journal(parts)
    spy = parts.spy(made, UUID_LABEL, None, False)
    first = uuid.UUID(int=1)
    call(spy, repr, first)
    call(spy, repr, 2)
    assert [(e.label, e.args) for e in events(made)] == [
        ("billing.charge[<uuid:1>]", (callpin.Placeholder("uuid", 2),)),
        ("billing.charge[<uuid:1>]", (2,)),
    ]


def test_a_label_is_written_under_the_rules_the_encoder_has_when_called(parts):
    made = make_journal(parts)
    spy = parts.spy(made, "billing.charge", None, False)
    call(spy, double, 1)
    made.encoder.rules = DEFAULT_RULES.with_rules([callpin.rule(r"charge", "verb")])
    call(spy, double, 2)
    made.encoder.rules = DEFAULT_RULES
    call(spy, double, 3)
    assert [e.label for e in events(made)] == ["billing.charge", "billing.<verb:1>", "billing.charge"]
