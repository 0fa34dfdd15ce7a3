"""Stubs: the receiver opt-in, and stubs of nested recordings running beneath the outer spies."""

from __future__ import annotations

import asyncio

import pytest

import callpin
from callpin import Instance, UsageError, _impl, journal, spy

COLLABORATORS = """
    def charge(card, amount):
        return ("real", card, amount)

    async def fetch(key):
        return ("real", key)

    class Gateway:
        def __init__(self, name):
            self.name = name

        def send(self, payload):
            return ("sent", self.name, payload)

        @classmethod
        def create(cls, name):
            return cls(name)

        @staticmethod
        def fee(amount):
            return amount // 10
"""


@pytest.fixture
def billing(make_module):
    return make_module("cp_stub_billing", COLLABORATORS)


@pytest.fixture(params=["live", "python"])
def spies(request, monkeypatch):
    """The live implementation's spies (C where built), then the Python reference's."""
    if request.param == "python":
        monkeypatch.setattr(_impl, "Spy", journal.Spy)
    return request.param


def calls(rec):
    return [(e.label, e.args) for e in rec.events if e.kind == "call"]


CHARGE = "cp_stub_billing.charge"


# -- nested recordings ------------------------------------------------------------------------


def test_an_inner_stub_answers_and_the_outer_spy_records_the_call(billing, spies):
    with callpin.record(spy=CHARGE) as outer:
        with callpin.record(spy=CHARGE, stub={CHARGE: callpin.returns("inner")}) as inner:
            assert billing.charge("card_A", 1) == "inner"
    assert calls(outer) == calls(inner) == [(CHARGE, ("card_A", 1))]


def test_the_innermost_stub_answers_while_it_is_open_and_the_outer_one_after(billing, spies):
    with callpin.record(spy=CHARGE, stub={CHARGE: callpin.returns("outer")}) as outer:
        with callpin.record(spy=CHARGE, stub={CHARGE: callpin.returns("inner")}) as inner:
            assert billing.charge("card_A", 1) == "inner"
        assert billing.charge("card_B", 2) == "outer"
    assert calls(inner) == [(CHARGE, ("card_A", 1))]
    assert calls(outer) == [(CHARGE, ("card_A", 1)), (CHARGE, ("card_B", 2))]


def test_a_target_stubbed_but_not_spied_inside_is_still_recorded_by_the_outer_spy(billing, spies):
    with callpin.record(spy=CHARGE) as outer:
        with callpin.record(spy=[], stub={CHARGE: callpin.returns("inner")}) as inner:
            assert billing.charge("card_A", 1) == "inner"
    assert calls(outer) == [(CHARGE, ("card_A", 1))]
    assert inner.events == []


def test_an_outer_stub_answers_an_inner_spy_and_both_record(billing, spies):
    with callpin.record(spy=CHARGE, stub={CHARGE: callpin.returns("outer")}) as outer:
        with callpin.record(spy=CHARGE) as inner:
            assert billing.charge("card_A", 1) == "outer"
    assert calls(outer) == calls(inner) == [(CHARGE, ("card_A", 1))]


def test_three_nested_recordings_all_record_the_call_the_innermost_stub_answers(billing, spies):
    stub = {CHARGE: callpin.returns("middle")}
    with callpin.record(spy=CHARGE, outcomes="all") as top:
        with callpin.record(spy=CHARGE, stub=stub, outcomes="all") as middle:
            with callpin.record(spy=[], stub={CHARGE: callpin.returns("bottom")}):
                assert billing.charge("card_A", 1) == "bottom"
    for rec in (top, middle):
        assert [(e.kind, e.value) for e in rec.events] == [("call", None), ("return", "bottom")]


def test_nested_stubs_of_a_method_record_its_receiver_in_both_however_it_is_called(billing, spies):
    send = "cp_stub_billing.Gateway.send"
    gateway = billing.Gateway("gw")
    with callpin.record(spy=send) as outer:
        with callpin.record(spy=send, stub={send: callpin.returns("stubbed")}) as inner:
            assert gateway.send(1) == "stubbed"
            assert billing.Gateway.send(gateway, 2) == "stubbed"
    receiver = Instance("cp_stub_billing.Gateway", 1)
    assert calls(outer) == calls(inner) == [(send, (receiver, 1)), (send, (receiver, 2))]


def test_a_nested_stub_of_a_coroutine_function_is_awaited_beneath_the_outer_spy(billing, spies):
    fetch = "cp_stub_billing.fetch"
    with callpin.record(spy=fetch, outcomes="all") as outer:
        with callpin.record(spy=[], stub={fetch: callpin.returns("stubbed")}):
            assert asyncio.run(billing.fetch("k")) == "stubbed"
    assert [(e.kind, e.args, e.value) for e in outer.events] == [("call", ("k",), None), ("return", (), "stubbed")]


def test_nested_stubbed_recordings_restore_every_place_identically(billing, make_module):
    legacy = make_module("cp_stub_legacy", "from cp_stub_billing import charge\n")
    original, send = billing.charge, vars(billing.Gateway)["send"]
    with callpin.record(spy=[CHARGE, "cp_stub_billing.Gateway"]):
        with callpin.record(spy=CHARGE, stub={CHARGE: callpin.returns(1), "cp_stub_billing.Gateway.send": print}):
            assert legacy.charge("card_A", 1) == 1
    assert billing.charge is original and legacy.charge is original
    assert vars(billing.Gateway)["send"] is send and "__init__" in vars(billing.Gateway)
    assert spy._layers == {}


def test_nested_stubbed_recordings_write_the_same_bytes_with_either_spy(billing, monkeypatch):
    def frames():
        send = "cp_stub_billing.Gateway.send"
        with callpin.record(spy=[CHARGE, "cp_stub_billing.Gateway"], outcomes="all") as outer:
            with callpin.record(
                spy=[send], stub={send: callpin.with_receiver(lambda gw, p: gw.name), CHARGE: callpin.returns(2)}
            ) as inner:
                gateway = billing.Gateway("gw")
                gateway.send({"p": 1})
                billing.charge("card_A", 1)
        return outer.frames + inner.frames

    live = frames()
    monkeypatch.setattr(_impl, "Spy", journal.Spy)
    assert frames() == live


# -- the receiver ------------------------------------------------------------------------------


def test_a_stub_with_receiver_gets_the_instance_and_can_delegate_to_the_saved_original(billing, spies):
    send = "cp_stub_billing.Gateway.send"
    real_send = billing.Gateway.send

    def loud(gateway, payload):
        return ("loud", *real_send(gateway, payload.upper()))

    with callpin.record(spy="cp_stub_billing.Gateway", stub={send: callpin.with_receiver(loud)}) as rec:
        gateway = billing.Gateway("gw")
        assert gateway.send("hi") == ("loud", "sent", "gw", "HI")
    receiver = Instance("cp_stub_billing.Gateway", 1)
    assert calls(rec) == [("cp_stub_billing.Gateway", (receiver, "gw")), (send, (receiver, "hi"))]


def test_the_receiver_is_the_class_for_a_classmethod_and_none_for_functions(billing, spies):
    seen = []

    def keep(receiver, *args):
        seen.append(receiver)
        return args

    stub = {
        "cp_stub_billing.Gateway.create": callpin.with_receiver(keep),
        "cp_stub_billing.Gateway.fee": callpin.with_receiver(keep),
        CHARGE: callpin.with_receiver(keep),
    }
    with callpin.record(spy=[CHARGE], stub=stub):
        assert billing.Gateway.create("a") == ("a",)
        assert billing.Gateway.fee(10) == (10,)
        assert billing.charge("card_A", 1) == ("card_A", 1)
    assert seen == [billing.Gateway, None, None]


def test_a_stub_without_the_opt_in_never_gets_the_receiver(billing, spies):
    send = "cp_stub_billing.Gateway.send"
    with callpin.record(spy=send, stub={send: lambda *args: args}):
        assert billing.Gateway("gw").send(1) == (1,)


def test_a_stub_with_receiver_of_a_coroutine_function_method_is_awaited(make_module, spies):
    module = make_module("cp_stub_async", "class Client:\n    async def get(self, key):\n        return key\n")

    async def get(client, key):
        return (type(client).__name__, key)

    target = "cp_stub_async.Client.get"
    with callpin.record(spy=target, stub={target: callpin.with_receiver(get)}, outcomes="all") as rec:
        assert asyncio.run(module.Client().get("k")) == ("Client", "k")
    assert [e.kind for e in rec.events] == ["call", "return"]


def test_with_receiver_needs_a_callable_and_is_callable_itself():
    with pytest.raises(UsageError, match="needs a callable"):
        callpin.with_receiver(42)  # type: ignore[arg-type]
    stub = callpin.with_receiver(lambda receiver, x: (receiver, x))
    assert stub(1, 2) == (1, 2)
    assert callpin.with_receiver(stub) is stub
