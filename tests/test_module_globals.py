"""module_globals: points in sys.modules, the modules imported since, and the index of globals."""

from __future__ import annotations

import sys
import types
from importlib.machinery import ModuleSpec

import pytest

import callpin
from callpin import spy
from callpin.module_globals import GlobalsIndex, imported_since, mark


def _module(name: str, **namespace: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(namespace)
    sys.modules[name] = module
    return module


@pytest.fixture
def cleanup():
    made: list[str] = []
    yield made
    for name in made:
        sys.modules.pop(name, None)


def _function() -> types.FunctionType:
    """A function no module holds yet."""
    namespace: dict[str, object] = {}
    exec("def charge(card):\n    return card\n", namespace)
    made = namespace["charge"]
    assert isinstance(made, types.FunctionType)
    return made


def test_imported_since_gives_the_modules_added_after_a_mark_oldest_first(cleanup):
    point = mark()
    cleanup.extend(["cp_mg_a", "cp_mg_b"])
    first, second = _module("cp_mg_a"), _module("cp_mg_b")
    found, everything = imported_since(point)
    assert [module for _, module in found] == [first, second]
    assert not everything


def test_imported_since_gives_every_module_when_its_mark_is_gone(cleanup):
    cleanup.append("cp_mg_last")
    _module("cp_mg_last")
    point = mark()
    assert point.name == "cp_mg_last"
    del sys.modules["cp_mg_last"]
    found, everything = imported_since(point)
    assert everything and len(found) > 10


def test_the_index_finds_holders_of_modules_imported_after_it_was_built(cleanup):
    charge = _function()
    index = GlobalsIndex()
    index.refresh()
    cleanup.append("cp_mg_late")
    late = _module("cp_mg_late", charge=charge, other=print)
    assert index.holders(charge) == []
    index.refresh()
    assert index.holders(charge) == [(late, "charge")]
    late.charge = None  # a hint that no longer holds is never given
    assert index.holders(charge) == []


def test_a_module_still_importing_is_indexed_again_when_it_is_done(cleanup):
    charge = _function()
    index = GlobalsIndex()
    cleanup.append("cp_mg_importing")
    importing = _module("cp_mg_importing")
    importing.__spec__ = ModuleSpec("cp_mg_importing", None)
    importing.__spec__._initializing = True  # type: ignore[attr-defined]
    index.refresh()
    importing.charge = charge  # bound later in its own import
    importing.__spec__._initializing = False  # type: ignore[attr-defined]
    index.refresh()
    assert index.holders(charge) == [(importing, "charge")]


def test_a_block_without_aliases_reads_no_module_globals(make_module, monkeypatch):
    billing = make_module("cp_mg_billing", "def charge(card):\n    return card\n")
    make_module("cp_mg_user", "from cp_mg_billing import charge\n")

    def refused() -> None:
        raise AssertionError("the globals index was read")

    monkeypatch.setattr(spy._index, "refresh", refused)
    with callpin.record(spy=["cp_mg_billing.charge"], aliases=False) as rec:
        billing.charge("card_A")
    assert [patch.place for patch in rec.targets] == ["cp_mg_billing.charge"]


def test_an_alias_in_a_module_imported_between_blocks_is_patched(make_module):
    billing = make_module("cp_mg_billing2", "def charge(card):\n    return card\n")
    with callpin.record(spy=["cp_mg_billing2.charge"]):
        pass
    user = make_module("cp_mg_user2", "from cp_mg_billing2 import charge\ndef run():\n    return charge('x')\n")
    with callpin.record(spy=["cp_mg_billing2.charge"]) as rec:
        user.run()
    assert [(patch.place, patch.alias) for patch in rec.targets] == [
        ("cp_mg_billing2.charge", False),
        ("cp_mg_user2.charge", True),
    ]
    assert len(rec.events) == 1
    assert user.charge is billing.charge


LAZY = """
EVALUATED = []

class Promise:
    # A lazy proxy as celery's shared_task and lazy settings objects are: asked for its
    # class, it evaluates itself (celery finalizes its app).
    @property
    def __class__(self):
        EVALUATED.append("evaluated")
        return int

    def __call__(self, *args):
        return None

send_email = Promise()

def charge(card):
    return card
"""


def test_recording_never_evaluates_a_lazy_global(make_module):
    module = make_module("cp_mg_lazy", LAZY)
    with callpin.record(spy=["cp_mg_lazy.charge"]) as rec:
        module.charge("card_A")
    assert len(rec.events) == 1
    assert module.EVALUATED == []
