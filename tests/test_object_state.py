"""Objects by value: their state read without running their code, numbered by identity, within a budget."""

from __future__ import annotations

import collections
import collections.abc
import datetime as _dt
import functools
import io
import logging
import sys
import types
import uuid
from typing import Any, ClassVar

import pytest

import callpin
from callpin import codec
from callpin.codec import Custom, Cycle, Instance, ObjectState, Opaque, Record, decode
from callpin.fields import FieldChange
from callpin.logfile import Log
from callpin.normalize import DEFAULT_RULES, NO_RULES
from callpin.object_state import instance_state
from clirun import run_in

MOD = __name__


class PreparedRequest:
    """Request-like: public and private attributes, and a property that must never run."""

    def __init__(self, url: str, body: bytes = b"") -> None:
        self.method = "GET"
        self.url = url
        self.headers = {"Accept": "*/*"}
        self._body = body

    @property
    def explode(self) -> str:
        raise AssertionError("a property ran")

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"__getattr__ ran for {name}")


class Slotted:
    __slots__ = ("__hidden", "count", "unset")

    def __init__(self) -> None:
        self.count = 3
        self.__hidden = "h"


class Session:
    def send(self, request: Any, **kwargs: Any) -> str:
        return "ok"


def state(value: Any, encoder_class: Any, rules: Any = NO_RULES) -> Any:
    return decode(encoder_class(rules).encode(value))


def test_an_object_is_recorded_as_its_type_and_attributes_without_running_its_code(encoder_class):
    assert state(PreparedRequest("https://x/a", b"k=v"), encoder_class) == ObjectState(
        f"{MOD}.PreparedRequest",
        1,
        (("_body", b"k=v"), ("headers", {"Accept": "*/*"}), ("method", "GET"), ("url", "https://x/a")),
    )


def test_instance_attributes_are_recorded_by_name_whatever_order_they_were_set_in(encoder_class):
    # An ORM sets a loaded row's columns in the order of a set of its own: the same
    # row would be another log on another run.
    first, second = Session(), Session()
    first.__dict__.update(b=2, a=1, c=3)
    second.__dict__.update(c=3, a=1, b=2)
    assert encoder_class(NO_RULES).encode(first) == encoder_class(NO_RULES).encode(second)
    assert [name for name, _ in state(first, encoder_class).fields] == ["a", "b", "c"]


def test_slots_keep_their_declared_order_before_the_instance_dict(encoder_class):
    class Both:
        __slots__ = ("__dict__", "z")

    both = Both()
    both.z = 0
    both.y = 1
    both.a = 2
    assert [name for name, _ in state(both, encoder_class).fields] == ["z", "a", "y"]


def test_slots_are_read_from_their_descriptors_and_an_unset_slot_is_left_out(encoder_class):
    assert state(Slotted(), encoder_class) == ObjectState(
        f"{MOD}.Slotted", 1, (("_Slotted__hidden", "h"), ("count", 3))
    )


def test_names_starting_with_two_underscores_are_left_out():
    holder = PreparedRequest("u")
    holder.__dict__["__cache__"] = 1
    assert [name for name, _ in instance_state(holder) or ()] == ["_body", "headers", "method", "url"]


def test_dunder_slots_are_recorded():
    # pydantic keeps a model's extra fields in the slot `__pydantic_extra__`.
    class Model:
        __slots__ = ("__dict__", "__extra__")

    model = Model()
    model.__extra__ = {"charge_id": "c-1"}
    assert instance_state(model) == (("__extra__", {"charge_id": "c-1"}),)


def test_an_object_without_readable_state_is_recorded_by_its_repr(encoder_class):
    import itertools

    assert state(itertools.count(5), encoder_class) == Opaque("itertools.count", "count(5)")
    assert isinstance(state(len, encoder_class), Opaque)
    assert isinstance(state(collections, encoder_class), Opaque)


def test_an_instance_of_a_class_with_no_attributes_set_is_numbered_with_an_empty_state(encoder_class):
    assert state(Session(), encoder_class) == ObjectState(f"{MOD}.Session", 1, ())


def test_mappings_and_sequences_of_other_libraries_are_recorded_as_their_items(encoder_class):
    assert state(collections.UserDict(a=1), encoder_class) == Custom("collections.UserDict", {"a": 1})
    assert state(collections.UserList([1, 2]), encoder_class) == Custom("collections.UserList", [1, 2])


class Unloaded(collections.abc.Mapping):  # type: ignore[type-arg]
    """A lazy Mapping whose items need what a test does not have."""

    def __init__(self, source: str) -> None:
        self.source = source

    def __getitem__(self, key: Any) -> Any:
        raise ConnectionError("not loaded")

    def __iter__(self) -> Any:
        raise ConnectionError("not loaded")

    def __len__(self) -> int:
        raise ConnectionError("not loaded")


class Unreadable(collections.abc.Sequence):  # type: ignore[type-arg]
    def __init__(self, source: str) -> None:
        self.source = source

    def __getitem__(self, index: Any) -> Any:
        raise ConnectionError("not loaded")

    def __len__(self) -> int:
        raise ConnectionError("not loaded")


def test_a_mapping_or_sequence_that_refuses_its_items_is_recorded_by_its_state(encoder_class):
    assert state(Unloaded("db://a"), encoder_class) == ObjectState(f"{MOD}.Unloaded", 1, (("source", "db://a"),))
    assert state(Unreadable("db://b"), encoder_class) == ObjectState(f"{MOD}.Unreadable", 1, (("source", "db://b"),))
    # Its state is pinned: another source is another value.
    assert state(Unloaded("db://a"), encoder_class) != state(Unloaded("db://c"), encoder_class)


def test_a_type_registered_as_opaque_keeps_its_repr(encoder_class):
    callpin.register(PreparedRequest, callpin.opaque)
    try:
        found = state(PreparedRequest("https://x/a"), encoder_class)
    finally:
        callpin.unregister(PreparedRequest)
    assert isinstance(found, Opaque) and found.type == f"{MOD}.PreparedRequest"


def test_a_type_registered_by_identity_is_its_number_alone(encoder_class):
    callpin.register(PreparedRequest, callpin.identity)
    try:
        first, second = PreparedRequest("a"), PreparedRequest("b")
        found = state([first, second, {"again": first}, Session()], encoder_class)
    finally:
        callpin.unregister(PreparedRequest)
    kind = f"{MOD}.PreparedRequest"
    assert found == [
        Instance(kind, 1),
        Instance(kind, 2),
        {"again": Instance(kind, 1)},
        ObjectState(f"{MOD}.Session", 1, ()),
    ]


class InstanceState:
    """Named as SQLAlchemy's: the bookkeeping an ORM object keeps in `_sa_instance_state`."""

    def __init__(self, runid: int) -> None:
        self.runid = runid


InstanceState.__module__ = "sqlalchemy.orm.state"


class Order:
    def __init__(self, runid: int) -> None:
        self._sa_instance_state = InstanceState(runid)
        self.reference = "ord-1"


def test_an_orm_objects_bookkeeping_is_recorded_by_identity(encoder_class):
    # Its load counter and session id differ from run to run; the columns are the state.
    assert state(Order(9), encoder_class) == state(Order(1), encoder_class)
    assert state(Order(9), encoder_class) == ObjectState(
        f"{MOD}.Order",
        1,
        (("_sa_instance_state", Instance("sqlalchemy.orm.state.InstanceState", 1)), ("reference", "ord-1")),
    )


def test_the_same_object_has_one_number_and_another_the_next(encoder_class):
    first, second = PreparedRequest("a"), PreparedRequest("b")
    found = state([first, {"again": first}, second], encoder_class)
    assert [found[0].number, found[1]["again"].number, found[2].number] == [1, 1, 2]


def test_an_object_is_written_with_its_state_at_each_appearance(encoder_class):
    encoder = encoder_class(NO_RULES)
    request = PreparedRequest("https://x/a")
    before = decode(encoder.encode(request))
    request.url = "https://x/b"
    after = decode(encoder.encode(request))
    assert (before.number, after.number) == (1, 1)
    assert dict(after.fields)["url"] == "https://x/b"


def cut(type_name: str, number: int, obj: Any, rules: Any = NO_RULES) -> Instance:
    """What the budget writes for `obj`: its identity and the digest of its state."""
    return Instance(type_name, number, True, codec.state_digest(obj, rules))


def test_an_object_past_the_budget_is_recorded_by_identity_and_the_digest_of_its_state(encoder_class):
    big = PreparedRequest("x" * codec.OBJECT_BUDGET)
    assert state(big, encoder_class) == cut(f"{MOD}.PreparedRequest", 1, big)
    just_in = PreparedRequest("x" * (codec.OBJECT_BUDGET - 200))
    assert isinstance(state(just_in, encoder_class), ObjectState)


def test_the_digest_of_a_cut_object_changes_with_its_state_alone(encoder_class):
    def digest(url: str, body: Any) -> Any:
        encoder = encoder_class(DEFAULT_RULES)
        encoder.encode(["https://x/other", PreparedRequest("y")])  # numbers taken before it
        return decode(encoder.encode(PreparedRequest(url, body))).digest

    body = b"x" * codec.OBJECT_BUDGET
    first = digest("https://x/a", body)
    assert first is not None and len(first) == 8
    # Its numbers and placeholders count from 1 inside it: what else the log holds, and
    # a uuid or a timestamp the rules number, change nothing.
    assert digest("https://x/a", body) == first
    assert digest(f"https://x/{uuid.uuid4()}", body) == digest(f"https://x/{uuid.uuid4()}", body)
    assert digest("https://x/b", body) != first
    assert digest("https://x/a", body + b"!") != first


def test_a_cut_object_of_a_format_1_2_log_reads_without_a_digest_and_writes_the_same_bytes(encoder_class):
    written = bytes.fromhex("c70a1792a75265717565737401")  # ext 23 ["Request", 1], as 1.2 wrote it
    found = decode(written)
    assert found == Instance("Request", 1, True) and found.digest is None
    assert repr(found) == "<Request#1, over the state budget>"
    assert encoder_class(NO_RULES).encode(found) == written


class Heavy:
    def __init__(self) -> None:
        self.blob = "x" * codec.OBJECT_BUDGET


def test_an_object_over_the_budget_because_of_objects_it_holds_keeps_its_own_values(encoder_class):
    # An ORM object with its session, a request with its adapter: the objects inside are
    # written by identity, the object's own values stay pinned.
    order = Session()
    order.__dict__.update(reference="ord-1", amount=1500, owner=Heavy(), lines=[Heavy(), {"k": Heavy()}])
    found = state(order, encoder_class)
    heavy = f"{MOD}.Heavy"
    assert found == ObjectState(
        f"{MOD}.Session",
        1,
        (
            ("amount", 1500),
            ("lines", [cut(heavy, 1, Heavy()), {"k": cut(heavy, 2, Heavy())}]),
            ("owner", cut(heavy, 3, Heavy())),
            ("reference", "ord-1"),
        ),
    )
    # The same object under the budget is written whole.
    order.__dict__.update(owner=Session(), lines=[])
    assert dict(state(order, encoder_class).fields)["owner"] == ObjectState(f"{MOD}.Session", 2, ())


def test_an_object_over_the_budget_even_shallow_is_its_identity_and_the_next_object_is_whole(encoder_class):
    encoder = encoder_class(NO_RULES)
    big = PreparedRequest("x" * codec.OBJECT_BUDGET)
    big.headers = Heavy()
    assert decode(encoder.encode(big)) == cut(f"{MOD}.PreparedRequest", 1, big)
    nested = Session()
    nested.inner = Session()
    assert decode(encoder.encode(nested)).fields == (("inner", ObjectState(f"{MOD}.Session", 2, ())),)


def test_an_object_cut_by_the_budget_says_so_in_the_log_and_one_by_identity_on_purpose_does_not(encoder_class):
    # ext 23 where the budget cut an object, ext 20 for a receiver, an object past the
    # object depth or one registered by identity: `show` and the diff tell them apart.
    big = PreparedRequest("x" * codec.OBJECT_BUDGET)
    encoded = encoder_class(NO_RULES).encode(big)
    assert encoded[:3] == bytes((0xC7, len(encoded) - 3, codec.EXT_OVER_BUDGET))
    digest = codec.state_digest(big, NO_RULES).hex()
    assert repr(decode(encoded)) == f"<PreparedRequest#1, over the state budget, digest {digest}>"
    # (test_objects_nested_past_the_object_depth_are_recorded_by_identity: past the depth, ext 20)
    callpin.register(Session, callpin.identity)
    try:
        encoded = encoder_class(NO_RULES).encode(Session())
    finally:
        callpin.unregister(Session)
    assert encoded[2] == codec.EXT_INSTANCE
    assert repr(decode(encoded)) == "<Session#1>"


def test_an_instance_cut_by_the_budget_reads_back_and_writes_the_same_bytes(encoder_class):
    order = Session()
    order.__dict__.update(reference="ord-1", owner=Heavy())
    for value in (PreparedRequest("x" * codec.OBJECT_BUDGET), order):
        encoded = encoder_class(DEFAULT_RULES).encode(value)
        assert encoder_class(NO_RULES).encode(decode(encoded)) == encoded


def test_the_encoder_counts_the_objects_it_wrote_past_the_budget(encoder_class):
    encoder = encoder_class(DEFAULT_RULES)
    order = Session()
    order.__dict__.update(reference="ord-1", owner=Heavy())
    big = PreparedRequest("x" * codec.OBJECT_BUDGET)
    encoder.encode([big, order, order, PreparedRequest("https://x/a")])
    # As a secret's value (numbered by its raw bytes) an object is not written: not counted.
    encoder.encode({"token": PreparedRequest("x" * codec.OBJECT_BUDGET)})
    assert encoder.identities.past_budget == {
        (f"{MOD}.PreparedRequest", "identity"): 1,
        (f"{MOD}.Session", "shallow"): 2,
    }


def test_an_object_past_the_budget_in_a_set_is_counted_once(encoder_class):
    # A set's elements are encoded once more to order them (numbering left as it is):
    # that pass writes nothing to the log and counts nothing.
    encoder = encoder_class(DEFAULT_RULES)
    encoder.encode({PreparedRequest("x" * codec.OBJECT_BUDGET), 1})
    assert encoder.identities.past_budget == {(f"{MOD}.PreparedRequest", "identity"): 1}


def test_a_written_baseline_names_the_objects_it_does_not_pin_in_full(make_module, tmp_path):
    module = make_module("past_budget_send", "def send(request):\n    return 1\n")
    baseline = tmp_path / "send.cpin"
    pinned = callpin.pin(baseline, spy=["past_budget_send.send"], mode="new")
    with pinned as recording:
        module.send(PreparedRequest("x" * codec.OBJECT_BUDGET))
        module.send(PreparedRequest("https://x/a"))
    assert recording.past_budget == {(f"{MOD}.PreparedRequest", "identity"): 1}
    assert pinned.note == (
        f"wrote {baseline} (2 events); objects over the {codec.OBJECT_BUDGET}-byte state budget:"
        f" {MOD}.PreparedRequest by identity and a digest of its state alone (a change shows, not where) (1x);"
        " register a form to pin what matters of them (docs/api.md)"
    )
    # Under the budget, the note is what it was.
    again = callpin.pin(tmp_path / "small.cpin", spy=["past_budget_send.send"], mode="new")
    with again:
        module.send(PreparedRequest("https://x/a"))
    assert again.note == f"wrote {tmp_path / 'small.cpin'} (1 event)"


def test_show_and_diff_say_where_the_budget_cut_an_object(make_module, tmp_path):
    module = make_module("cut_send", "def send(request):\n    return 1\n")
    with callpin.pin(tmp_path / "old.cpin", spy=["cut_send.send"], mode="new"):
        module.send(PreparedRequest("x" * codec.OBJECT_BUDGET))
    with callpin.pin(tmp_path / "new.cpin", spy=["cut_send.send"], mode="new"):
        module.send(PreparedRequest("https://x/a"))
    code, shown, _ = run_in(tmp_path, "show", "old.cpin")
    assert code == 0
    assert "cut_send.send(<PreparedRequest#1, over the state budget, digest " in shown
    code, diffed, _ = run_in(tmp_path, "diff", "old.cpin", "new.cpin")
    assert code == 1
    assert "args[0]: <PreparedRequest#1, over the state budget, digest " in diffed
    assert "> → PreparedRequest#1(" in diffed


def test_a_change_inside_an_object_cut_by_the_budget_fails_its_pin(make_module, tmp_path):
    # An email over the budget: its subject changed is a drift, not a silent pass.
    module = make_module("cut_mail", "def send(message):\n    return 1\n")

    def send(subject: str) -> None:
        request = PreparedRequest("mailto:ada", b"x" * codec.OBJECT_BUDGET)
        request.headers = {"Subject": subject}
        module.send(request)

    with callpin.pin(tmp_path / "mail.cpin", spy=["cut_mail.send"], mode="new"):
        send("Your invoice")
    with callpin.pin(tmp_path / "mail.cpin", spy=["cut_mail.send"], mode="check"):
        send("Your invoice")
    with pytest.raises(callpin.Drift, match="args\\[0\\]: <PreparedRequest#1, over the state budget, digest "):
        with callpin.pin(tmp_path / "mail.cpin", spy=["cut_mail.send"], mode="check"):
            send("URGENT: wire money")


def _nested_requests(levels: int, innermost_url: str = "u") -> Any:
    value: Any = None
    for level in range(levels):
        holder = PreparedRequest(innermost_url if level == 0 else "u")
        holder.headers = {"inner": value}
        value = holder
    return value


def test_objects_nested_past_the_object_depth_are_their_identity_and_the_digest_of_their_state(encoder_class):
    value = _nested_requests(codec.MAX_OBJECT_DEPTH + 1)
    found = state(value, encoder_class)
    for _ in range(codec.MAX_OBJECT_DEPTH - 1):
        found = dict(found.fields)["headers"]["inner"]
    innermost = value
    for _ in range(codec.MAX_OBJECT_DEPTH):
        innermost = innermost.headers["inner"]
    past = dict(found.fields)["headers"]["inner"]
    assert past == Instance(
        f"{MOD}.PreparedRequest", codec.MAX_OBJECT_DEPTH + 1, False, codec.state_digest(innermost, NO_RULES)
    )
    assert repr(past).startswith("<PreparedRequest#4, past the object depth, digest ")
    # A change past the depth changes the digest (format 1.3 wrote the identity alone).
    edited = state(_nested_requests(codec.MAX_OBJECT_DEPTH + 1, "v"), encoder_class)
    assert edited != state(value, encoder_class)
    # Inside a digest, an object past the depth is its identity alone: no digest of a digest.
    whole = decode(encoder_class(NO_RULES).encode_whole(value, 0))
    for _ in range(codec.MAX_OBJECT_DEPTH):
        whole = dict(whole.fields)["headers"]["inner"]
    assert whole == Instance(f"{MOD}.PreparedRequest", codec.MAX_OBJECT_DEPTH + 1)


def test_a_change_four_objects_deep_fails_its_pin_naming_the_cut_object(make_module, tmp_path):
    module = make_module("deep_ledger", "def record(intent):\n    return 1\n")
    path = tmp_path / "deep.cpin"
    with callpin.pin(path, spy=["deep_ledger.record"], mode="new"):
        module.record(_nested_requests(codec.MAX_OBJECT_DEPTH + 1, "London"))
    with callpin.pin(path, spy=["deep_ledger.record"], mode="check"):
        module.record(_nested_requests(codec.MAX_OBJECT_DEPTH + 1, "London"))
    cut = r"args\[0\]\.headers\.inner\.headers\.inner\.headers\.inner: <PreparedRequest#4, past the object depth"
    with pytest.raises(callpin.Drift, match=cut):
        with callpin.pin(path, spy=["deep_ledger.record"], mode="check"):
            module.record(_nested_requests(codec.MAX_OBJECT_DEPTH + 1, "Paris"))


def test_an_object_referring_to_itself_reads_as_a_cycle(encoder_class):
    request = PreparedRequest("u")
    request.headers = {"self": request}
    assert dict(state(request, encoder_class).fields)["headers"]["self"] == Cycle(3)


def test_objects_in_a_set_are_numbered_whatever_the_set_order(encoder_class):
    one, two = PreparedRequest("a"), PreparedRequest("b")
    encoded = {encoder_class(DEFAULT_RULES).encode(set(pair)) for pair in ([one, two], [two, one])}
    assert len(encoded) == 1
    found = sorted(decode(next(iter(encoded))).items, key=lambda item: item.number)
    assert [dict(item.fields)["url"] for item in found] == ["a", "b"]


def test_the_same_instance_as_receiver_and_as_argument_has_one_number(make_module):
    module = make_module("objsvc", "class Session:\n    def send(self, other):\n        return 1\n")
    session = module.Session()
    with callpin.record(None, spy=["objsvc.Session.send"]) as rec:
        session.send(session)
    (event,) = rec.events
    receiver, argument = event.args
    assert receiver == Instance("objsvc.Session", 1)
    assert isinstance(argument, ObjectState) and argument.number == 1


def test_an_object_returned_and_marked_keeps_its_number(make_module):
    module = make_module("objsvc2", "class Client:\n    def fetch(self, request):\n        return request\n")
    client, request = module.Client(), PreparedRequest("https://x/a")
    with callpin.record(None, spy=["objsvc2.Client.fetch"], outcomes="all") as rec:
        rec.mark("built", request)
        client.fetch(request)
    mark, call, returned = rec.events
    assert mark.value.number == call.args[1].number == returned.value.number == 1


class Notifier:
    def __init__(self, channel: str) -> None:
        self.channel = channel

    def send(self, text: str) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"__getattr__ ran for {name}")


def test_a_bound_method_is_its_function_and_its_object_by_state(encoder_class):
    assert state(Notifier("sms").send, encoder_class) == Record(
        "builtins.method",
        (("__func__", "Notifier.send"), ("__self__", ObjectState(f"{MOD}.Notifier", 1, (("channel", "sms"),)))),
    )


def test_the_object_of_a_bound_method_has_its_number_in_the_log(make_module):
    module = make_module("objcb", "class Gate:\n    def charge(self, on_done):\n        return 1\n")
    gate, notifier = module.Gate(), Notifier("sms")
    with callpin.record(None, spy=["objcb.Gate.charge"]) as rec:
        gate.charge(notifier.send)
        gate.charge(gate.charge)
        gate.charge(notifier)
    first, itself, again = rec.events
    assert first.args[1].fields[1][1].number == again.args[1].number == 1
    assert itself.args[0] == Instance("objcb.Gate", 1)
    assert itself.args[1].fields == (("__func__", "Gate.charge"), ("__self__", ObjectState("objcb.Gate", 1, ())))


def test_a_callback_bound_to_another_object_is_a_change_naming_its_state(make_module):
    def log_of(channel: str) -> Log:
        module = make_module("objcb2", "class Gate:\n    def charge(self, on_done):\n        return 1\n")
        with callpin.record(None, spy=["objcb2.Gate.charge"]) as rec:
            module.Gate().charge(Notifier(channel).send)
        return Log.from_frames(list(rec.frames), rules=DEFAULT_RULES)

    (op,) = callpin.diff(log_of("sms"), log_of("mail")).ops
    assert op.fields == (FieldChange("args[1].__self__.channel", "sms", "mail"),)


def test_a_partial_is_its_function_and_the_arguments_it_adds(encoder_class):
    notifier = Notifier("sms")
    found = state([notifier, functools.partial(notifier.send, "hi", urgent=True)], encoder_class)
    assert found[1] == Record(
        "functools.partial",
        (
            ("func", Record("builtins.method", (("__func__", "Notifier.send"), ("__self__", found[0])))),
            ("args", ("hi",)),
            ("keywords", {"urgent": True}),
        ),
    )


class Report(io.StringIO):
    def __init__(self) -> None:
        super().__init__("sku,count\n")
        self.name = "report.csv"

    def getvalue(self) -> str:
        raise AssertionError("the subclass's getvalue ran")


def test_an_in_memory_file_is_what_it_holds_and_where_it_is(encoder_class):
    read_from = io.BytesIO(b"abc")
    read_from.read(1)
    closed = io.StringIO("x")
    closed.close()
    assert state([io.StringIO("a,b\n"), read_from, closed, Report()], encoder_class) == [
        ObjectState("_io.StringIO", 1, (("value", "a,b\n"), ("position", 0))),
        ObjectState("_io.BytesIO", 1, (("value", b"abc"), ("position", 1))),
        ObjectState("_io.StringIO", 2, (("closed", True),)),
        ObjectState(f"{MOD}.Report", 1, (("value", "sku,count\n"), ("position", 0), ("name", "report.csv"))),
    ]
    big = io.BytesIO(b"x" * codec.OBJECT_BUDGET)
    assert state(big, encoder_class) == cut("_io.BytesIO", 1, big)


_ARRAY_VALUES: dict[int, list[Any]] = {}


class ndarray:
    """numpy's array as callpin reads it: `dtype`, `shape` and `tolist` of the type itself."""

    __slots__ = ("__weakref__",)

    def __init__(self, values: list[Any]) -> None:
        _ARRAY_VALUES[id(self)] = values

    dtype = property(lambda self: "int64")
    shape = property(lambda self: (len(_ARRAY_VALUES[id(self)]),))

    def tolist(self) -> list[Any]:
        return list(_ARRAY_VALUES[id(self)])


class Masked(ndarray):
    __slots__ = ("mask",)

    def __init__(self, values: list[Any]) -> None:
        super().__init__(values)
        self.mask = [False] * len(values)

    dtype = property(lambda self: "a subclass's property never runs")  # type: ignore[assignment]


def test_a_numpy_array_is_its_dtype_shape_and_values_whatever_its_repr(encoder_class, monkeypatch):
    numpy = types.ModuleType("numpy")
    numpy.ndarray = ndarray  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "numpy", numpy)
    masked = Masked([1, 2])
    assert state([ndarray([1, 2, 3]), masked], encoder_class) == [
        ObjectState(f"{MOD}.ndarray", 1, (("dtype", "int64"), ("shape", (3,)), ("values", [1, 2, 3]))),
        ObjectState(
            f"{MOD}.Masked", 1, (("dtype", "int64"), ("shape", (2,)), ("values", [1, 2]), ("mask", [False, False]))
        ),
    ]
    # Large: held to the budget, so a change of one element changes the digest.
    big, other = ndarray([0] * 5000), ndarray([0] * 5000)
    _ARRAY_VALUES[id(other)][4500] = 1
    cut_big, cut_other = state(big, encoder_class), state(other, encoder_class)
    assert cut_big.over_budget and cut_other.over_budget and cut_big.digest != cut_other.digest


class _Column:
    """A column or index as pandas gives one: `tolist()`, `is_unique`."""

    def __init__(self, values: list[Any]) -> None:
        self.values = values
        self.is_unique = len(set(values)) == len(values)

    def tolist(self) -> list[Any]:
        return list(self.values)


class Index(_Column):
    """pandas' Index as callpin reads it: name (names past one level), dtype, values."""

    def __init__(self, values: list[Any], name: Any = None, names: list[Any] | None = None) -> None:
        super().__init__(values)
        self.name, self.names = name, names or [name]
        self.nlevels, self.dtype = len(self.names), "object"


class RangeIndex(Index):
    def __init__(self, stop: int, name: Any = None) -> None:
        super().__init__(list(range(stop)), name)
        self.start, self.stop, self.step = 0, stop, 1


class _Positions:
    def __init__(self, frame: DataFrame) -> None:
        self.frame = frame

    def __getitem__(self, key: tuple[slice, int]) -> _Column:
        return _Column(self.frame._mgr[key[1]][2])


class DataFrame:
    """pandas' DataFrame as callpin reads it. Its state is a block manager, whose repr
    gives the shapes alone, and a cache of the columns read so far (pandas' own)."""

    def __init__(self, columns: dict[str, list[Any]] | list[tuple[str, list[Any]]], attrs: Any = None) -> None:
        pairs = list(columns.items()) if isinstance(columns, dict) else columns
        self._mgr = [(label, "int64", values) for label, values in pairs]
        self._item_cache: dict[str, Any] = {}
        self.attrs = attrs or {}
        self.index = RangeIndex(len(pairs[0][1]))

    def __repr__(self) -> str:
        return f"BlockManager: {len(self._mgr)} columns"

    columns = property(lambda self: _Column([label for label, _, _ in self._mgr]))
    dtypes = property(lambda self: _Column([dtype for _, dtype, _ in self._mgr]))
    iloc = property(lambda self: _Positions(self))


class Series:
    def __init__(self, values: list[Any], name: Any = None, index: Index | None = None) -> None:
        self._values, self.name, self.dtype, self.attrs = values, name, "float64", {}
        self.index = index or RangeIndex(len(values))

    def tolist(self) -> list[Any]:
        return list(self._values)


class Refusing(DataFrame):
    dtypes = property(lambda self: 1 / 0)  # type: ignore[assignment]


class NaTType(_dt.datetime):
    def __repr__(self) -> str:
        return "NaT"


@pytest.fixture
def pandas(monkeypatch):
    module = types.ModuleType("pandas")
    module.DataFrame, module.Series, module.Index = DataFrame, Series, Index  # type: ignore[attr-defined]
    module.NaT = NaTType(1970, 1, 1)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pandas", module)
    return module


def test_a_pandas_frame_is_its_dtypes_index_and_column_values(encoder_class, pandas):
    frame = DataFrame({"sku": ["A", "B"], "qty": [1, 2]})
    rows = RangeIndex(2)
    ranged = ObjectState(f"{MOD}.RangeIndex", 1, (("name", None), ("start", 0), ("stop", 2), ("step", 1)))
    assert state(frame, encoder_class) == ObjectState(
        f"{MOD}.DataFrame",
        1,
        (
            ("dtypes", {"sku": "int64", "qty": "int64"}),
            ("index", ranged),
            ("data", {"sku": ["A", "B"], "qty": [1, 2]}),
        ),
    )
    assert frame._item_cache == {}  # read by position: no column cached
    # Two frames whose blocks have the same shapes are two values (their repr was one).
    other = DataFrame({"sku": ["A", "B"], "qty": [1, 3]})
    assert repr(other) == repr(frame)
    assert state(other, encoder_class) != state(frame, encoder_class)
    # Columns that share a label are [label, values] pairs; attrs when set.
    twice = state(DataFrame([("a", [1]), ("a", [2])], attrs={"source": "feed"}), encoder_class)
    assert dict(twice.fields)["data"] == [["a", [1]], ["a", [2]]]
    assert dict(twice.fields)["attrs"] == {"source": "feed"}
    named = Index(["x", "y"], name="sku")
    assert state(Series([1.5, 2.5], name="price", index=named), encoder_class) == ObjectState(
        f"{MOD}.Series",
        1,
        (
            ("name", "price"),
            ("dtype", "float64"),
            ("index", ObjectState(f"{MOD}.Index", 1, (("name", "sku"), ("dtype", "object"), ("values", ["x", "y"])))),
            ("values", [1.5, 2.5]),
        ),
    )
    levels = Index([("a", 1), ("b", 2)], names=["k", "n"])
    assert dict(state(levels, encoder_class).fields)["names"] == ["k", "n"]
    assert state(rows, encoder_class) == ranged


def test_a_pandas_frame_pandas_cannot_read_is_its_state_and_nat_is_its_name(encoder_class, pandas):
    refusing = state(Refusing({"a": [1]}), encoder_class)
    assert refusing.type == f"{MOD}.Refusing" and [name for name, _ in refusing.fields] == [
        "_item_cache",
        "_mgr",
        "attrs",
        "index",
    ]
    assert state(pandas.NaT, encoder_class) == Opaque(f"{MOD}.NaTType", "NaT")


def test_a_pandas_frame_edit_is_a_change_named_by_its_column_and_row(make_module, pandas):
    def log_of(quantities: list[int]) -> Log:
        module = make_module("objpd", "class Sink:\n    def push(self, frame):\n        return 1\n")
        with callpin.record(None, spy=["objpd.Sink.push"]) as rec:
            module.Sink().push(DataFrame({"sku": ["A", "B"], "qty": quantities}))
        return Log.from_frames(list(rec.frames), rules=DEFAULT_RULES)

    (op,) = callpin.diff(log_of([1, 2]), log_of([1, 3])).ops
    assert op.op == "changed"
    assert op.fields == (FieldChange("args[1].data.qty[1]", 2, 3),)


class BaseClient:
    """botocore's client as callpin reads it: `meta` (service model, region, endpoint URL,
    config); its state holds the caches its session shares with other clients."""

    def __init__(self, region: str, cache: dict[str, Any], **options: Any) -> None:
        config = ClientConfig(region_name=region, user_agent=f"Botocore/1.0 os/{sys.platform}", **options)
        service = types.SimpleNamespace(service_name="s3")
        self.meta = types.SimpleNamespace(
            config=config, service_model=service, region_name=region, endpoint_url=f"https://s3.{region}.example"
        )
        self._loader = cache
        self._credentials = ("AKIAEXAMPLE", "never-read")


class ClientConfig:
    OPTION_DEFAULTS: ClassVar[dict[str, Any]] = {"region_name": None, "connect_timeout": 60, "retries": None}

    def __init__(self, **options: Any) -> None:
        self.connect_timeout, self.retries, self._user_provided_options = 60, None, options
        vars(self).update(options)


class S3(BaseClient):
    pass


def test_a_botocore_client_is_its_service_region_endpoint_and_config(encoder_class, monkeypatch):
    module = types.ModuleType("botocore.client")
    module.BaseClient = BaseClient  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "botocore.client", module)
    client = S3("eu-west-1", {"s3": "model"}, retries={"max_attempts": 3})
    assert state(client, encoder_class) == ObjectState(
        f"{MOD}.S3",
        1,
        (
            ("service", "s3"),
            ("region", "eu-west-1"),
            ("endpoint_url", "https://s3.eu-west-1.example"),
            ("config", {"region_name": "eu-west-1", "retries": {"max_attempts": 3}}),
        ),
    )
    # What the session cached for other clients is not part of it; a region is.
    after_others = S3("eu-west-1", {"s3": "model", "sqs": "model"}, retries={"max_attempts": 3})
    assert state(after_others, encoder_class) == state(client, encoder_class)
    assert state(S3("us-east-1", {}), encoder_class) != state(S3("eu-west-1", {}), encoder_class)
    # A client botocore's members cannot describe is written by its state.
    broken = S3("eu-west-1", {})
    del broken.meta
    assert [name for name, _ in state(broken, encoder_class).fields] == ["_credentials", "_loader"]


class Signature(dict):  # type: ignore[type-arg]
    """A celery Signature is a dict of its task, args and options."""


class Rows(list):  # type: ignore[type-arg]
    pass


def test_a_dict_or_list_subclass_of_another_library_keeps_its_type(encoder_class):
    signature = Signature(task="send_email", args=["ada"], token="t0k")
    found = state(signature, encoder_class, DEFAULT_RULES)
    assert found == Custom(
        f"{MOD}.Signature", {"task": "send_email", "args": ["ada"], "token": callpin.Placeholder("secret", 1)}
    )
    assert state(dict(signature), encoder_class) != state(signature, encoder_class)
    assert state(Rows([1, 2]), encoder_class) == Custom(f"{MOD}.Rows", [1, 2])
    # The containers of the standard library stay plain: a refactor between them and dict is no change.
    for plain in (collections.OrderedDict(a=1), collections.defaultdict(list, a=1), collections.Counter(a=1)):
        assert state(plain, encoder_class) == {"a": 1}


class Ring(collections.deque):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise AssertionError("a subclass's __iter__ ran")


def test_a_deque_keeps_its_maxlen_and_an_array_its_typecode(encoder_class):
    import array

    assert state(collections.deque([1, 2]), encoder_class) == Custom("collections.deque", [1, 2])
    assert state(Ring([1, 2], maxlen=3), encoder_class) == Record(f"{MOD}.Ring", (("iterable", [1, 2]), ("maxlen", 3)))
    ints, longs = array.array("i", [1, 2]), array.array("l", [1, 2])
    assert state(ints, encoder_class) == Record("array.array", (("typecode", "i"), ("initializer", [1, 2])))
    assert state(longs, encoder_class) != state(ints, encoder_class)


class Plugin(types.ModuleType):
    pass


def test_a_module_is_its_name_not_the_file_it_was_loaded_from(encoder_class):
    client = Notifier("http")
    client.transport = io  # type: ignore[attr-defined]
    found = state(client, encoder_class)
    assert dict(found.fields)["transport"] == Opaque("builtins.module", "<module 'io'>")
    assert state(Plugin("shop.plugins"), encoder_class) == Opaque(f"{MOD}.Plugin", "<module 'shop.plugins'>")
    nameless = Plugin("x")
    del nameless.__name__
    assert state(nameless, encoder_class) == Opaque(f"{MOD}.Plugin", "<module>")


class AuditLogger(logging.Logger):
    pass


def test_a_logger_is_its_name_whatever_else_the_process_has_logged(encoder_class):
    service = Notifier("sms")
    service.log = logging.getLogger("callpin.tests.service")  # type: ignore[attr-defined]
    before = encoder_class(NO_RULES).encode(service)
    logging.getLogger("callpin.tests.service.child").setLevel(logging.DEBUG)
    logging.getLogger().addHandler(logging.NullHandler())
    try:
        assert encoder_class(NO_RULES).encode(service) == before
    finally:
        logging.getLogger().handlers.pop()
    assert dict(decode(before).fields)["log"] == Custom("logging.Logger", "callpin.tests.service")
    assert state(AuditLogger("audit"), encoder_class) == Custom(f"{MOD}.AuditLogger", "audit")


def test_objects_written_by_their_repr_never_share_an_address_number(make_module):
    # Two fresh callbacks, each dropped after its call: the second would get the first's
    # address, and read as the same object passed twice.
    import gc
    import weakref

    module = make_module("objrepr", "class Gate:\n    def charge(self, on_done):\n        return 1\n")
    gate = module.Gate()

    def make() -> Any:
        return lambda: 1

    gone = []
    with callpin.record(None, spy=["objrepr.Gate.charge"]) as rec:
        for _ in range(2):
            callback = make()
            gone.append(weakref.ref(callback))
            gate.charge(callback)
            del callback
    first, second = (event.args[1].repr for event in rec.events)
    assert first.endswith("at <addr:1>>") and second.endswith("at <addr:2>>")
    gc.collect()
    assert [ref() for ref in gone] == [None, None]  # held until the recording ended


def _log_of_one_send(url: str, make_module: Any, name: str) -> Log:
    module = make_module(name, "class Session:\n    def send(self, request):\n        return 1\n")
    with callpin.record(None, spy=[f"{name}.Session.send"]) as rec:
        module.Session().send(PreparedRequest(url))
    return Log.from_frames(list(rec.frames), rules=DEFAULT_RULES)


def test_a_url_change_of_a_request_object_is_one_change_naming_url(make_module):
    old = _log_of_one_send("https://x/a", make_module, "objhttp")
    new = _log_of_one_send("https://x/b", make_module, "objhttp")
    (op,) = callpin.diff(old, new).ops
    assert op.op == "changed"
    assert op.fields == (FieldChange("args[1].url", "https://x/a", "https://x/b"),)


def test_a_request_object_with_an_unchanged_state_is_no_difference(make_module):
    old = _log_of_one_send("https://x/a", make_module, "objhttp2")
    new = _log_of_one_send("https://x/a", make_module, "objhttp2")
    assert callpin.diff(old, new).ops == ()


@pytest.mark.parametrize("rules", [NO_RULES, DEFAULT_RULES])
def test_decoded_object_state_reencodes_to_the_same_bytes(encoder_class, rules):
    data = encoder_class(rules).encode([PreparedRequest("https://x/a"), Slotted()])
    assert encoder_class(NO_RULES).encode(decode(data)) == data


def test_a_class_made_at_run_time_is_not_kept_alive_by_being_recorded():
    import gc
    import weakref

    from callpin import _impl

    def made() -> type:
        class Slotted:
            __slots__ = ("n",)

            def __init__(self) -> None:
                self.n = 1

        return Slotted

    cls = made()
    encoder = _impl.Encoder(NO_RULES)
    written = encoder.encode(cls())  # outside the assert: its rewriting keeps operands
    assert b"Slotted" in written
    gone = weakref.ref(cls)
    encoder.identities.instances.clear()  # the log is finished
    del cls
    gc.collect()
    assert gone() is None
