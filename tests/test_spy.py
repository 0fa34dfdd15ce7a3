"""Spy targets: resolution, kinds of callables, aliases, exact restore and nesting."""

from __future__ import annotations

import asyncio
import functools
import sys
import time

import pytest

import callpin
from callpin import Instance, TargetError, UsageError, _impl, journal, spy

COLLABORATORS = """
    import functools

    def charge(card, amount):
        return {"card": card, "amount": amount}

    def _private(x):
        return x

    def refund(card):
        return card

    charge_usd = functools.partial(charge, amount=100)

    class Gateway:
        def __init__(self, name="gw"):
            self.name = name

        def charge(self, amount):
            return amount

        @classmethod
        def create(cls, name):
            return cls(name)

        @staticmethod
        def fee(amount):
            return amount // 10

        @property
        def label(self):
            return "gateway " + self.name

        def _hidden(self):
            return 1

    class Sandbox(Gateway):
        pass
"""


@pytest.fixture
def billing(make_module):
    make_module("cp_pkg")
    return make_module("cp_pkg.billing", COLLABORATORS)


def calls(rec):
    return [(e.label, e.args, e.kwargs) for e in rec.events if e.kind == "call"]


# -- resolution -------------------------------------------------------------------------


def test_a_dotted_function_is_spied_under_its_dotted_name(billing):
    with callpin.record(spy="cp_pkg.billing.charge") as rec:
        billing.charge("card_A", 1500)
    assert calls(rec) == [("cp_pkg.billing.charge", ("card_A", 1500), {})]


def test_resolution_imports_the_longest_importable_prefix(tmp_path, monkeypatch):
    package = tmp_path / "cp_disk_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "gateway.py").write_text("def charge(amount):\n    return amount\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "cp_disk_pkg.gateway", raising=False)
    try:
        with callpin.record(spy="cp_disk_pkg.gateway.charge") as rec:
            sys.modules["cp_disk_pkg.gateway"].charge(5)
        assert calls(rec) == [("cp_disk_pkg.gateway.charge", (5,), {})]
    finally:
        sys.modules.pop("cp_disk_pkg.gateway", None)
        sys.modules.pop("cp_disk_pkg", None)


def test_a_name_the_module_binds_to_a_callable_is_not_tried_as_a_submodule(billing, monkeypatch):
    tried = []
    real_import = spy.importlib.import_module

    def import_module(name, package=None):
        tried.append(name)
        return real_import(name, package)

    monkeypatch.setattr(spy.importlib, "import_module", import_module)
    with callpin.record(spy=["cp_pkg.billing.charge", "cp_pkg.billing.Gateway.charge"]) as rec:
        billing.charge("card_A", 1)
    assert calls(rec) == [("cp_pkg.billing.charge", ("card_A", 1), {})]
    assert "cp_pkg.billing.charge" not in tried and "cp_pkg.billing.Gateway" not in tried
    assert tried.count("cp_pkg.billing") == 2


def test_a_submodule_shadowed_by_a_same_named_function_of_its_package_is_still_found(tmp_path, monkeypatch):
    package = tmp_path / "cp_shadow_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .thing import thing\n")
    (package / "thing.py").write_text("def thing():\n    return helper()\n\ndef helper():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with callpin.record(spy="cp_shadow_pkg.thing.helper") as rec:
            sys.modules["cp_shadow_pkg"].thing()
        assert calls(rec) == [("cp_shadow_pkg.thing.helper", (), {})]
    finally:
        sys.modules.pop("cp_shadow_pkg.thing", None)
        sys.modules.pop("cp_shadow_pkg", None)


def test_a_missing_module_is_a_target_error_naming_what_was_tried():
    with pytest.raises(TargetError) as caught:
        with callpin.record(spy="cp_nowhere.billing.charge"):
            pass
    assert caught.value.target == "cp_nowhere.billing.charge"
    assert str(caught.value) == ("cannot spy 'cp_nowhere.billing.charge': no module named 'cp_nowhere' can be imported")


def test_a_missing_attribute_names_the_module_and_suggests_a_close_name(billing):
    with pytest.raises(TargetError) as caught:
        with callpin.record(spy="cp_pkg.billing.chrage"):
            pass
    message = str(caught.value)
    assert "imported 'cp_pkg.billing'" in message
    assert "no attribute 'chrage'" in message
    assert "did you mean 'charge'" in message


def test_a_broken_import_inside_the_target_module_is_reported_not_skipped(tmp_path, monkeypatch):
    (tmp_path / "cp_broken.py").write_text("import cp_missing_dependency\n\ndef f():\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(TargetError, match=r"importing 'cp_broken' failed.*cp_missing_dependency"):
        with callpin.record(spy="cp_broken.f"):
            pass
    sys.modules.pop("cp_broken", None)


def test_a_target_that_is_not_a_dotted_name_is_refused():
    with pytest.raises(TargetError, match="not a dotted name"):
        with callpin.record(spy="cp_pkg.billing.charge()"):
            pass


def test_a_spy_argument_of_the_wrong_type_is_a_usage_error():
    with pytest.raises(UsageError):
        with callpin.record(spy=[42]):  # type: ignore[list-item]
            pass


def test_a_whole_module_spies_its_public_functions_defined_there(billing, make_module):
    make_module(
        "cp_pkg.other",
        "from cp_pkg.billing import charge as imported_charge\n\ndef own():\n    pass\n",
    )
    with callpin.record(spy="cp_pkg.billing") as rec:
        billing.charge("card_A", 1)
        billing.refund("card_A")
        billing._private(1)
    assert [label for label, _, _ in calls(rec)] == [
        "cp_pkg.billing.charge",
        "cp_pkg.billing.refund",
    ]
    assert {p.place for p in rec.targets if not p.alias} == {
        "cp_pkg.billing.charge",
        "cp_pkg.billing.refund",
    }


def test_a_module_spy_skips_functions_it_only_imported(billing, make_module):
    other = make_module("cp_pkg.other", "from cp_pkg.billing import refund\n\ndef own():\n    pass\n")
    with callpin.record(spy="cp_pkg.other", aliases=False) as rec:
        other.refund("card_A")
        other.own()
    assert [label for label, _, _ in calls(rec)] == ["cp_pkg.other.own"]


def test_a_dict_sets_the_labels_of_a_module_spy(billing):
    with callpin.record(spy={"billing": "cp_pkg.billing"}) as rec:
        billing.refund("card_A")
    assert calls(rec) == [("billing.refund", ("card_A",), {})]


def test_the_same_place_under_two_labels_is_refused(billing):
    with pytest.raises(TargetError, match="targeted twice"):
        with callpin.record(spy={"a": "cp_pkg.billing.charge", "b": "cp_pkg.billing.charge"}):
            pass


# -- kinds of callables --------------------------------------------------------------------


def test_an_instance_method_records_its_receiver_as_an_instance_ordinal(billing):
    first, second = billing.Gateway("a"), billing.Gateway("b")
    with callpin.record(spy="cp_pkg.billing.Gateway.charge") as rec:
        assert first.charge(10) == 10
        second.charge(20)
        first.charge(30)
        billing.Gateway.charge(second, 40)
    gateway = "cp_pkg.billing.Gateway"
    assert [args for _, args, _ in calls(rec)] == [
        (Instance(gateway, 1), 10),
        (Instance(gateway, 2), 20),
        (Instance(gateway, 1), 30),
        (Instance(gateway, 2), 40),
    ]


def test_class_and_static_methods_keep_their_kind(billing):
    with callpin.record(spy=["cp_pkg.billing.Gateway.create", "cp_pkg.billing.Gateway.fee"]) as rec:
        made = billing.Gateway.create("x")
        assert type(made) is billing.Gateway
        assert type(billing.Sandbox.create("y")) is billing.Sandbox
        assert billing.Gateway.fee(100) == 10
        assert made.fee(50) == 5
    assert calls(rec) == [
        ("cp_pkg.billing.Gateway.create", ("x",), {}),
        ("cp_pkg.billing.Gateway.create", ("y",), {}),
        ("cp_pkg.billing.Gateway.fee", (100,), {}),
        ("cp_pkg.billing.Gateway.fee", (50,), {}),
    ]
    assert isinstance(vars(billing.Gateway)["create"], classmethod)
    assert isinstance(vars(billing.Gateway)["fee"], staticmethod)


def test_a_whole_class_spies_public_methods_and_leaves_properties_untouched(billing):
    originals = dict(vars(billing.Gateway))
    gateway = billing.Gateway("a")
    with callpin.record(spy="cp_pkg.billing.Gateway") as rec:
        assert vars(billing.Gateway)["label"] is originals["label"]
        assert gateway.label == "gateway a"
        gateway.charge(1)
        gateway.fee(2)
        billing.Gateway.create("b")
        gateway._hidden()
    assert [label for label, _, _ in calls(rec)] == [
        "cp_pkg.billing.Gateway.charge",
        "cp_pkg.billing.Gateway.fee",
        "cp_pkg.billing.Gateway.create",
        "cp_pkg.billing.Gateway",
    ]
    assert dict(vars(billing.Gateway)) == originals
    assert all(vars(billing.Gateway)[name] is value for name, value in originals.items())


def test_spying_a_class_records_its_construction_under_the_class_label_with_the_new_instance_numbered(billing):
    with callpin.record(spy="cp_pkg.billing.Gateway") as rec:
        first = billing.Gateway("a")
        second = billing.Gateway(name="b")
        second.charge(2)
        first.charge(1)
    one, two = Instance("cp_pkg.billing.Gateway", 1), Instance("cp_pkg.billing.Gateway", 2)
    assert calls(rec) == [
        ("cp_pkg.billing.Gateway", (one, "a"), {}),
        ("cp_pkg.billing.Gateway", (two,), {"name": "b"}),
        ("cp_pkg.billing.Gateway.charge", (two, 2), {}),
        ("cp_pkg.billing.Gateway.charge", (one, 1), {}),
    ]
    assert (first.name, second.name) == ("a", "b")
    assert rec.targets[0] == spy.Patch("cp_pkg.billing.Gateway", "cp_pkg.billing.Gateway.__init__", alias=False)


def test_a_dict_label_names_the_construction_of_a_class(billing):
    with callpin.record(spy={"gateway": "cp_pkg.billing.Gateway"}) as rec:
        billing.Gateway("a").charge(1)
    assert [label for label, _, _ in calls(rec)] == ["gateway", "gateway.charge"]


def test_a_subclass_built_while_its_base_is_spied_is_recorded_under_the_base_label(billing):
    with callpin.record(spy="cp_pkg.billing.Gateway") as rec:
        billing.Sandbox("s")
    assert calls(rec) == [("cp_pkg.billing.Gateway", (Instance("cp_pkg.billing.Sandbox", 1), "s"), {})]


def test_a_constructor_that_raises_is_recorded_with_its_raise(billing, make_module):
    module = make_module("cp_strict", "class Strict:\n    def __init__(self, n):\n        raise ValueError(n)\n")
    with callpin.record(spy="cp_strict.Strict") as rec:
        with pytest.raises(ValueError):
            module.Strict(3)
    assert [(e.kind, e.label) for e in rec.events] == [("call", "cp_strict.Strict"), ("raise", "cp_strict.Strict")]


CLASSES_WITHOUT_INIT = """
    class Plain:
        pass

    class Built:
        def __new__(cls, *args, **kwargs):
            instance = super().__new__(cls)
            instance.args = args
            return instance
"""


def test_a_class_without_its_own_init_is_constructed_as_before_and_left_without_one(make_module):
    module = make_module("cp_noinit", CLASSES_WITHOUT_INIT)
    with pytest.raises(TypeError) as unspied:
        module.Plain(1)
    with callpin.record(spy=["cp_noinit.Plain", "cp_noinit.Built"]) as rec:
        module.Plain()
        with pytest.raises(TypeError) as spied:
            module.Plain(1)
        built = module.Built(1, key=2)
    assert str(spied.value) == str(unspied.value)
    assert built.args == (1,)
    assert calls(rec) == [
        ("cp_noinit.Plain", (Instance("cp_noinit.Plain", 1),), {}),
        ("cp_noinit.Plain", (Instance("cp_noinit.Plain", 2), 1), {}),
        ("cp_noinit.Built", (Instance("cp_noinit.Built", 1), 1), {"key": 2}),
    ]
    assert "__init__" not in vars(module.Plain) and "__init__" not in vars(module.Built)
    assert module.Plain.__init__ is object.__init__


def test_a_builtin_class_is_spied_by_its_methods_only_and_has_none():
    with pytest.raises(TargetError, match="defines no public functions"):
        with callpin.record(spy="datetime.date"):
            pass


def test_a_property_named_as_a_target_is_refused(billing):
    with pytest.raises(TargetError, match="property"):
        with callpin.record(spy="cp_pkg.billing.Gateway.label"):
            pass
    assert isinstance(vars(billing.Gateway)["label"], property)


def test_an_inherited_method_spied_on_a_subclass_is_removed_again_on_restore(billing):
    with callpin.record(spy="cp_pkg.billing.Sandbox.charge") as rec:
        billing.Sandbox().charge(5)
        billing.Gateway().charge(6)
    assert [args[1:] for _, args, _ in calls(rec)] == [(5,)]
    assert "charge" not in vars(billing.Sandbox)
    assert billing.Sandbox.charge is billing.Gateway.charge


def test_target_spies_an_attribute_of_an_instance(billing):
    gateway = billing.Gateway("a")
    other = billing.Gateway("b")
    with callpin.record(spy={"gw.charge": callpin.target(gateway, "charge")}) as rec:
        gateway.charge(7)
        other.charge(8)
    assert calls(rec) == [("gw.charge", (Instance("cp_pkg.billing.Gateway", 1), 7), {})]
    assert "charge" not in vars(gateway)


def test_target_on_a_module_patches_like_a_dotted_name(billing):
    with callpin.record(spy=callpin.target(billing, "refund")) as rec:
        billing.refund("card_A")
    assert calls(rec) == [("cp_pkg.billing.refund", ("card_A",), {})]


def test_target_naming_a_class_spies_its_methods_like_a_dotted_name(billing):
    with callpin.record(spy={"gw": callpin.target(billing, "Gateway")}) as rec:
        billing.Gateway.fee(10)
    assert calls(rec) == [("gw.fee", (10,), {})]


def test_target_naming_a_missing_attribute_is_a_target_error(billing):
    with pytest.raises(TargetError, match="no attribute 'chrage'; did you mean 'charge'"):
        with callpin.record(spy=callpin.target(billing, "chrage")):
            pass


def test_target_needs_an_attribute_name(billing):
    with pytest.raises(UsageError):
        callpin.target(billing, "not a name")


def test_a_functools_partial_is_spied_with_the_arguments_it_was_called_with(billing):
    original = billing.charge_usd
    with callpin.record(spy="cp_pkg.billing.charge_usd", outcomes="all") as rec:
        assert billing.charge_usd("card_A") == {"card": "card_A", "amount": 100}
    assert calls(rec) == [("cp_pkg.billing.charge_usd", ("card_A",), {})]
    assert rec.events[1].value == {"card": "card_A", "amount": 100}
    assert billing.charge_usd is original
    assert isinstance(billing.charge_usd, functools.partial)


def test_a_builtin_function_such_as_time_time_is_spied_and_restored():
    original = time.time
    with callpin.record(spy="time.time", outcomes="all") as rec:
        now = time.time()
    assert isinstance(now, float)
    # Other threads of the test runner may call time.time too; this thread's calls are ours.
    ours = [(e.kind, e.label) for e in rec.events if e.thread == 1]
    assert ours == [("call", "time.time"), ("return", "time.time")]
    assert time.time is original


def test_an_async_function_is_recorded_when_called_and_its_raise_when_awaited(make_module):
    module = make_module(
        "cp_async",
        """
        async def fetch(key):
            if key == "bad":
                raise KeyError(key)
            return key.upper()
        """,
    )

    async def scenario(rec):
        pending = module.fetch("bad")
        assert [e.kind for e in rec.events] == ["call"]
        with pytest.raises(KeyError):
            await pending
        return await module.fetch("ok")

    with callpin.record(spy="cp_async.fetch", outcomes="all") as rec:
        assert asyncio.run(scenario(rec)) == "OK"
    assert [(e.kind, e.args, e.value, e.error) for e in rec.events] == [
        ("call", ("bad",), None, None),
        ("raise", (), None, ("KeyError", "'bad'")),
        ("call", ("ok",), None, None),
        ("return", (), "OK", None),
    ]


def test_a_spied_async_function_is_still_a_coroutine_function(make_module):
    import inspect

    module = make_module("cp_async", "async def fetch():\n    return 1\n")
    with callpin.record(spy="cp_async.fetch"):
        assert inspect.iscoroutinefunction(module.fetch)


def test_calls_inside_an_awaited_spied_coroutine_are_one_level_deeper(make_module):
    module = make_module(
        "cp_async",
        """
        def lookup(key):
            return key

        async def fetch(key):
            return lookup(key)
        """,
    )
    with callpin.record(spy=["cp_async.fetch", "cp_async.lookup"]) as rec:
        asyncio.run(module.fetch("k"))
    assert [(e.label, e.depth) for e in rec.events] == [
        ("cp_async.fetch", 0),
        ("cp_async.lookup", 1),
    ]


def test_a_generator_function_records_the_call_and_is_never_iterated_for_the_user(make_module):
    module = make_module(
        "cp_gen",
        """
        produced = []

        def rows(n):
            for i in range(n):
                produced.append(i)
                yield i
        """,
    )
    with callpin.record(spy="cp_gen.rows", outcomes="all") as rec:
        rows = module.rows(3)
        assert module.produced == []
        assert [e.kind for e in rec.events] == ["call"]
        assert list(rows) == [0, 1, 2]
    assert [(e.kind, e.args) for e in rec.events] == [("call", (3,))]


# -- aliases -------------------------------------------------------------------------------


LEGACY = """
    from cp_pkg.billing import charge
    from cp_pkg import billing

    def renew(card):
        charge(card, 100)
        billing.refund(card)
"""


def test_an_alias_imported_with_from_is_recorded_and_restored(billing, make_module):
    legacy = make_module("cp_legacy", LEGACY)
    original = billing.charge
    with callpin.record(spy="cp_pkg.billing.charge") as rec:
        legacy.renew("card_A")
    assert calls(rec) == [("cp_pkg.billing.charge", ("card_A", 100), {})]
    assert legacy.charge is original
    assert billing.charge is original


def test_targets_lists_every_patched_place(billing, make_module):
    make_module("cp_legacy", LEGACY)
    with callpin.record(spy={"charge": "cp_pkg.billing.charge"}) as rec:
        pass
    assert [tuple(p) for p in rec.targets] == [
        ("charge", "cp_pkg.billing.charge", False),
        ("charge", "cp_legacy.charge", True),
    ]


def test_aliases_false_patches_only_the_named_place(billing, make_module):
    legacy = make_module("cp_legacy", LEGACY)
    with callpin.record(spy="cp_pkg.billing.charge", aliases=False) as rec:
        legacy.renew("card_A")
        billing.charge("card_B", 1)
    assert calls(rec) == [("cp_pkg.billing.charge", ("card_B", 1), {})]
    assert [p.place for p in rec.targets] == ["cp_pkg.billing.charge"]


# -- restore ---------------------------------------------------------------------------------


def _places(billing, legacy):
    return {
        "billing.charge": billing.charge,
        "legacy.charge": legacy.charge,
        "Gateway.charge": vars(billing.Gateway)["charge"],
        "Gateway.create": vars(billing.Gateway)["create"],
        "Gateway.fee": vars(billing.Gateway)["fee"],
    }


SPIED = ["cp_pkg.billing.charge", "cp_pkg.billing.Gateway"]


def test_every_place_is_restored_identically_after_a_normal_exit(billing, make_module):
    legacy = make_module("cp_legacy", LEGACY)
    before = _places(billing, legacy)
    with callpin.record(spy=SPIED):
        assert all(_places(billing, legacy)[name] is not value for name, value in before.items())
    assert all(_places(billing, legacy)[name] is value for name, value in before.items())


@pytest.mark.parametrize("raised", [ZeroDivisionError, KeyboardInterrupt])
def test_every_place_is_restored_identically_when_the_block_raises(billing, make_module, raised):
    legacy = make_module("cp_legacy", LEGACY)
    before = _places(billing, legacy)
    with pytest.raises(raised):
        with callpin.record(spy=SPIED):
            raise raised
    assert all(_places(billing, legacy)[name] is value for name, value in before.items())


def test_a_place_that_cannot_be_patched_undoes_the_patches_made_before_it(billing):
    original = billing.charge
    with pytest.raises(TargetError, match="cannot patch"):
        with callpin.record(spy=["cp_pkg.billing.charge", "builtins.str.upper"]):
            pass
    assert billing.charge is original


# -- nesting -----------------------------------------------------------------------------------


def test_an_inner_recorder_reaches_the_outer_only_for_targets_the_outer_spies(billing, make_module):
    legacy = make_module("cp_legacy", LEGACY)
    original_charge, original_refund = billing.charge, billing.refund
    with callpin.record(spy="cp_pkg.billing.charge") as outer:
        with callpin.record(spy=["cp_pkg.billing.charge", "cp_pkg.billing.refund"]) as inner:
            legacy.renew("card_A")
        billing.charge("card_B", 1)
    assert [label for label, _, _ in calls(inner)] == [
        "cp_pkg.billing.charge",
        "cp_pkg.billing.refund",
    ]
    assert calls(outer) == [
        ("cp_pkg.billing.charge", ("card_A", 100), {}),
        ("cp_pkg.billing.charge", ("card_B", 1), {}),
    ]
    assert billing.charge is original_charge and legacy.charge is original_charge
    assert billing.refund is original_refund


def test_nested_recorders_on_methods_each_see_the_receiver_and_restore(billing):
    original = vars(billing.Gateway)["create"]
    gateway = billing.Gateway()
    with callpin.record(spy="cp_pkg.billing.Gateway") as outer:
        with callpin.record(spy="cp_pkg.billing.Gateway.charge") as inner:
            gateway.charge(3)
            billing.Gateway.create("z")
    receiver = Instance("cp_pkg.billing.Gateway", 1)
    assert calls(inner) == [("cp_pkg.billing.Gateway.charge", (receiver, 3), {})]
    assert calls(outer) == [
        ("cp_pkg.billing.Gateway.charge", (receiver, 3), {}),
        ("cp_pkg.billing.Gateway.create", ("z",), {}),
        ("cp_pkg.billing.Gateway", (Instance("cp_pkg.billing.Gateway", 2), "z"), {}),
    ]
    assert vars(billing.Gateway)["create"] is original


def test_nested_recorders_ended_outer_first_restore_every_place(billing, make_module):
    legacy = make_module("cp_legacy", LEGACY)
    before = _places(billing, legacy)
    outer = callpin.record(spy=SPIED)
    inner = callpin.record(spy=SPIED)
    outer.__enter__()
    inner.__enter__()
    outer.__exit__(None, None, None)
    legacy.renew("card_A")
    inner.__exit__(None, None, None)
    assert [label for label, _, _ in calls(inner)] == ["cp_pkg.billing.charge"]
    assert all(_places(billing, legacy)[name] is value for name, value in before.items())
    assert spy._layers == {}


def test_an_inherited_method_stays_absent_when_nested_recorders_end_outer_first(billing):
    outer = callpin.record(spy="cp_pkg.billing.Sandbox.charge")
    inner = callpin.record(spy="cp_pkg.billing.Sandbox.charge")
    outer.__enter__()
    inner.__enter__()
    outer.stop()
    inner.stop()
    assert "charge" not in vars(billing.Sandbox)
    assert billing.Sandbox.charge is vars(billing.Gateway)["charge"]


def test_a_module_imported_inside_the_block_gets_the_original_back(billing, make_module):
    original = billing.charge
    with callpin.record(spy="cp_pkg.billing.charge"):
        late = make_module("cp_late", "from cp_pkg.billing import charge")
        assert late.charge is not original
    assert late.charge is original


def test_a_module_imported_inside_a_block_without_aliases_gets_the_original_back(billing, make_module):
    original = billing.charge
    with callpin.record(spy="cp_pkg.billing.charge", aliases=False):
        late = make_module("cp_late", "from cp_pkg.billing import charge")
    assert late.charge is original


def test_a_place_patched_by_another_thread_after_resolution_is_wrapped_not_skipped(billing):
    # What a second thread entering a recording at the same moment does: it resolved
    # the place before the first one patched it, and patches after.
    resolved = spy.resolve("cp_pkg.billing.Sandbox.charge")
    seen = []

    def handler(wrapped, instance, args, kwargs):
        seen.append(args)
        return wrapped(*args, **kwargs)

    with callpin.record(spy="cp_pkg.billing.Sandbox.charge") as outer:
        late = spy.Patcher()
        late.patch([(resolved[0], handler)], aliases=True)
        billing.Sandbox().charge(5)
        late.restore()
    assert seen == [(5,)]
    assert [args for _, args, _ in calls(outer)] == [(Instance("cp_pkg.billing.Sandbox", 1), 5)]
    assert "charge" not in vars(billing.Sandbox)
    assert spy._layers == {}


def test_a_spied_function_or_method_passed_as_a_value_is_recorded_as_the_unspied_one(billing, make_module):
    # An HTTP client puts a bound method into a hooks dict; spying that method (or the
    # function) must not change how the dict is recorded, nor leak callpin's proxy.
    hooks = make_module("cp_hooks", "def register(hooks):\n    return hooks\n")
    gateway = billing.Gateway()

    def register() -> None:
        hooks.register({"method": gateway.charge, "function": billing.refund, "classmethod": billing.Gateway.create})

    with callpin.record(spy=["cp_hooks.register"]) as plain:
        register()
    spied = [
        "cp_hooks.register",
        "cp_pkg.billing.Gateway.charge",
        "cp_pkg.billing.refund",
        "cp_pkg.billing.Gateway.create",
    ]
    with callpin.record(spy=spied) as proxied:
        register()
    assert proxied.frames == plain.frames
    text = proxied.events[0].render()
    assert "Wrapper" not in text and "SpyProxy" not in text
    assert "method(__func__='Gateway.charge', __self__=Gateway#1(name='gw'))" in text


@pytest.mark.skipif(callpin.IMPLEMENTATION != "c", reason="the C spy's proxies need the C speedups")
def test_the_proxy_of_a_c_spy_is_callpins_own_wrapt_object_proxy(billing):
    import wrapt

    with callpin.record(spy=["cp_pkg.billing.refund", "cp_pkg.billing.Gateway.charge"]):
        refund, charge = billing.refund, billing.Gateway().charge
        assert type(refund) is _impl.PROXY_TYPES[0]
        assert type(charge) is _impl.PROXY_TYPES[1]
        assert isinstance(refund, wrapt.ObjectProxy) and isinstance(charge, wrapt.ObjectProxy)
        assert type(refund._self_wrapper) is _impl.Spy
        assert (refund.__name__, charge.__name__, charge.__self__.name) == ("refund", "charge", "gw")


def test_a_proxy_whose_handler_is_no_c_spy_is_a_wrapt_function_wrapper_of_callpins_own(billing, monkeypatch):
    import wrapt

    monkeypatch.setattr(_impl, "Spy", journal.Spy)
    with callpin.record(spy=["cp_pkg.billing.refund", "cp_pkg.billing.Gateway.charge"]):
        assert type(vars(billing.Gateway)["charge"]) is spy.SpyProxy
        assert type(billing.refund) is spy.FunctionSpyProxy
        assert isinstance(billing.refund, (spy.SpyProxy, wrapt.FunctionWrapper))
        assert type(billing.Gateway().charge) is spy.BoundSpyProxy


def _copied_into_a_class(billing):
    """Calls of a spied module function that code copied into a class while it was spied."""
    with callpin.record(spy="cp_pkg.billing.refund") as rec:
        proxy = billing.refund
        assert proxy._self_binding == "function"
        assert billing.refund("card_A") == "card_A"
        holder = type("Holder", (), {"refund": proxy})()
        assert holder.refund() is holder
        assert type(holder).refund(holder) is holder
        assert type(holder).refund("card_B") == "card_B"
        bound = holder.refund
        assert type(bound) is spy.BoundSpyProxy and bound._self_binding == "function"
        assert bound.__get__(None, type(holder)) is not None
    return [(e.label, e.args) for e in rec.events if e.kind == "call"]


def test_the_proxy_of_a_module_function_binds_and_records_as_wrapts_own_binding_does(billing, monkeypatch):
    # The FunctionSpyProxy asks the function for no __self__ on a call; everything else
    # is as under wrapt's binding of a function: what it records, copied into a class,
    # read through an instance or the class, is what the SpyProxy records.
    monkeypatch.setattr(_impl, "Spy", journal.Spy)
    fast = _copied_into_a_class(billing)
    monkeypatch.setattr(spy, "FunctionSpyProxy", spy.SpyProxy)
    assert fast == _copied_into_a_class(billing)
    holder = f"{__name__}.Holder"
    assert [args for _, args in fast] == [("card_A",), (Instance(holder, 1),), (Instance(holder, 1),), ("card_B",)]


def test_a_module_function_holding_its_own_self_keeps_wrapts_proxy(billing, monkeypatch):
    # A function bound by hand (a __self__ in its own dict) is handed to the spy with that
    # receiver, as wrapt does: it gets the SpyProxy, which asks.
    monkeypatch.setattr(_impl, "Spy", journal.Spy)
    gateway = billing.Gateway("hand")
    billing.refund.__self__ = gateway
    with callpin.record(spy="cp_pkg.billing.refund") as rec:
        assert type(billing.refund) is spy.SpyProxy
        billing.refund("card_A")
    assert calls(rec) == [("cp_pkg.billing.refund", (Instance("cp_pkg.billing.Gateway", 1), "card_A"), {})]


def test_a_proxy_over_a_module_functions_proxy_takes_the_function_binding(billing, monkeypatch):
    monkeypatch.setattr(_impl, "Spy", journal.Spy)
    with callpin.record(spy="cp_pkg.billing.refund") as outer:
        with callpin.record(spy="cp_pkg.billing.refund") as inner:
            proxy = billing.refund
            assert type(proxy) is spy.SpyProxy and type(proxy.__wrapped__) is spy.FunctionSpyProxy
            assert proxy._self_binding == "function"
            billing.refund("card_A")
    assert calls(outer) == calls(inner) == [("cp_pkg.billing.refund", ("card_A",), {})]


ALIASED = """
    from cp_pkg.billing import charge

    def renew():
        return charge("card_A", 1500)
"""


def test_the_module_that_opens_a_recording_keeps_its_own_references(billing, make_module):
    # This test module is the opener: a reference it holds is the original, so a stub
    # that delegates to it reaches the real function (it recursed into the spy before),
    # while the alias in the code under test is still patched under the one label.
    shop = make_module("cp_shop", ALIASED)
    real = billing.charge
    global SAVED_CHARGE
    SAVED_CHARGE = billing.charge
    try:
        with callpin.record(
            spy=["cp_pkg.billing.charge"], stub={"cp_pkg.billing.charge": lambda *a, **k: real(*a, **k)}
        ) as rec:
            assert SAVED_CHARGE is real
            assert shop.renew() == {"card": "card_A", "amount": 1500}
        assert [event.render() for event in rec.events] == ["cp_pkg.billing.charge('card_A', 1500)"]
        assert [(patch.place, patch.alias) for patch in rec.targets] == [
            ("cp_pkg.billing.charge", False),
            ("cp_shop.charge", True),
        ]
    finally:
        del SAVED_CHARGE


def test_modules_named_as_test_code_are_never_patched(billing, make_module):
    shop = make_module("cp_shop", ALIASED)
    spy.keep_test_modules(["cp_shop"])
    try:
        with callpin.record(spy=["cp_pkg.billing.charge"]) as rec:
            shop.renew()
        assert [patch.place for patch in rec.targets] == ["cp_pkg.billing.charge"]
        assert rec.events == []
    finally:
        spy.forget_test_modules()


def test_test_code_is_the_opener_and_the_modules_named_as_test_code():
    spy.keep_test_modules(["tests.test_x", "conftest"])
    try:
        assert spy.test_code("tests.test_x", None)
        assert spy.test_code("conftest", "app")
        assert spy.test_code("__main__", "__main__")
        assert not spy.test_code("app.billing", "__main__")
    finally:
        spy.forget_test_modules()
    assert not spy.test_code("tests.test_x", None)


def test_a_script_that_opens_a_recording_keeps_its_main_module_references(tmp_path):
    import subprocess

    script = tmp_path / "script.py"
    script.write_text(
        "import sys, types, callpin\n"
        "billing = types.ModuleType('cp_script_billing'); sys.modules['cp_script_billing'] = billing\n"
        "exec('def charge(card):\\n    return card\\n', billing.__dict__)\n"
        "from cp_script_billing import charge\n"
        "target = 'cp_script_billing.charge'\n"
        "with callpin.record(spy=[target], stub={target: lambda c: charge(c)}) as rec:\n"
        "    assert charge is billing.__dict__['charge'].__wrapped__\n"
        "    billing.charge('card_A')\n"
        "print([event.render() for event in rec.events])\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[\"cp_script_billing.charge('card_A')\"]"


# ---------------------------------------------------------------------------------------
# The proxies bind as wrapt's FunctionWrapper does, whichever carries the spy.

BINDINGS = """
    class Gateway:
        def ping(self, value=None):
            return value

    table = {"k": 1}
    lookup = table.get
"""


@pytest.fixture
def bindings(make_module):
    return make_module("cp_bindings", BINDINGS)


def test_a_method_bound_through_its_class_and_bound_again_is_recorded_with_its_receiver(bindings):
    gateway = bindings.Gateway()
    with callpin.record(spy="cp_bindings.Gateway") as rec:
        unbound = bindings.Gateway.ping
        assert unbound.__get__(gateway, bindings.Gateway)(5) == 5
    (event,) = [e for e in rec.events if e.label.endswith(".ping")]
    assert (event.args[0].type.rsplit(".", 1)[-1], event.args[1:]) == ("Gateway", (5,))


def test_a_builtin_bound_to_an_object_is_recorded_without_a_receiver_under_nested_recordings(bindings):
    # Its __self__ (the dict) is no receiver: a builtin binds as "builtin", also when the
    # proxy it is called through wraps another recording's proxy.
    with callpin.record(spy="cp_bindings.lookup") as outer:
        with callpin.record(spy="cp_bindings.lookup") as inner:
            assert bindings.lookup("k") == 1
        with callpin.record(spy="cp_bindings.lookup", stub={"cp_bindings.lookup": callpin.returns(2)}) as stubbed:
            assert bindings.lookup("k") == 2
    for rec in (outer, inner, stubbed):
        assert [e.args for e in rec.events if e.kind == "call"] == [("k",)] * (len(rec.events))
    assert len(outer.events) == 2


@pytest.mark.skipif(callpin.IMPLEMENTATION != "c", reason="the C spy's proxies need the C speedups")
def test_setting_a_c_proxys_wrapped_changes_what_it_calls_and_forwards(bindings):
    with callpin.record(spy="cp_bindings.lookup") as rec:
        proxy = bindings.lookup
        proxy.__wrapped__ = {"k": 3}.get
        assert (proxy("k"), proxy.__self__) == (3, {"k": 3})
    assert [e.args for e in rec.events] == [("k",)]


@pytest.mark.skipif(callpin.IMPLEMENTATION != "c", reason="the C spy's proxies need the C speedups")
def test_a_c_proxy_is_made_only_for_a_c_spy_and_its_bound_form_only_by_binding():
    spy_proxy, bound_proxy = _impl.PROXY_TYPES
    with pytest.raises(TypeError):
        spy_proxy(len, journal.Spy)
    with pytest.raises(TypeError, match="cannot create"):
        bound_proxy(len)


@pytest.mark.skipif(callpin.IMPLEMENTATION != "c", reason="the C spy's proxies need the C speedups")
def test_the_c_proxy_types_are_made_once_from_wraps_types():
    import wrapt

    from callpin import _speedups

    assert _speedups.proxy_types(wrapt.ObjectProxy, wrapt.FunctionWrapper.__base__) == _impl.PROXY_TYPES
    with pytest.raises(RuntimeError, match="already made"):
        _speedups.proxy_types(wrapt.BaseObjectProxy, wrapt.FunctionWrapper.__base__)


def test_a_proxy_in_a_reference_cycle_is_collected(bindings):
    import gc
    import weakref

    def target(x):
        return x

    bindings.target = target
    with callpin.record(spy="cp_bindings.target"):
        proxy = bindings.target
        target.proxy = proxy  # the proxy holds the function, the function the proxy
        gone = weakref.ref(proxy)
        assert proxy(1) == 1
    del proxy, target
    del bindings.target
    gc.collect()
    assert gone() is None
