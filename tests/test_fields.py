"""Field paths into values: registered forms, records and object state, mappings, sequences; key paths."""

from __future__ import annotations

import collections

import pytest

import callpin
from callpin import Record, UsageError, diff
from callpin.diff import IGNORABLE
from callpin.fields import ABSENT, FieldChange, KeyPath, key_path
from sample_logs import call, log_of


class Request:
    def __init__(self, url: str, headers: dict[str, str]) -> None:
        self.url = url
        self.headers = headers


@pytest.fixture
def registered_request():
    callpin.register(Request, lambda r: {"url": r.url, "headers": r.headers})
    yield
    callpin.unregister(Request)


def changes(old, new):
    (op,) = diff(log_of(old), log_of(new)).ops
    assert op.op == "changed"
    return op.fields


def test_a_change_inside_a_registered_form_is_named_by_its_path(registered_request):
    old = call("http.send", "s", Request("https://x/a", {"User-Agent": "lib/1", "Accept": "json"}))
    new = call("http.send", "s", Request("https://x/a", {"User-Agent": "lib/2", "Accept": "json"}))
    assert changes(old, new) == (FieldChange("args[1].headers['User-Agent']", "lib/1", "lib/2"),)


def test_a_url_change_inside_a_registered_form_is_one_change_naming_url(registered_request):
    old = call("http.send", Request("https://x/a", {}))
    new = call("http.send", Request("https://x/b", {}))
    assert changes(old, new) == (FieldChange("args[0].url", "https://x/a", "https://x/b"),)


def test_object_state_that_gains_an_attribute_reads_absent_on_the_old_side():
    old = call("svc.send", Record("app.Request", (("url", "a"),)))
    new = call("svc.send", Record("app.Request", (("url", "a"), ("body", b"x"))))
    assert changes(old, new) == (FieldChange("args[0].body", ABSENT, b"x"),)


def test_a_mapping_that_is_not_a_dict_is_walked_by_key():
    old = call("svc.send", collections.OrderedDict(a=1, b=2))
    new = call("svc.send", collections.OrderedDict(a=1, b=3))
    assert [change.path for change in changes(old, new)] == ["args[0].b"]


def test_nested_sequences_and_records_give_one_path():
    old = call("svc.send", items=[Record("app.Item", (("sku", "A"), ("qty", 1)))])
    new = call("svc.send", items=[Record("app.Item", (("sku", "A"), ("qty", 2)))])
    assert changes(old, new) == (FieldChange("kwargs.items[0].qty", 1, 2),)


@pytest.mark.parametrize(
    ("text", "path", "spelled"),
    [
        ("kwargs.headers.Date", KeyPath("kwargs", ("headers", "Date")), "kwargs.headers.Date"),
        ("args[1].url", KeyPath("args", (1, "url")), "args[1].url"),
        ("kwargs.headers['User-Agent']", KeyPath("kwargs", ("headers", "User-Agent")), "kwargs.headers['User-Agent']"),
        ('value["a b"]', KeyPath("value", ("a b",)), "value['a b']"),
    ],
)
def test_key_paths_parse_and_spell_as_field_changes_do(text, path, spelled):
    assert key_path(text, IGNORABLE) == path
    assert path.text == spelled


@pytest.mark.parametrize("text", ["label.x", "kwargs.", "kwargs[", "args[x]", "nothing.a"])
def test_a_bad_key_path_is_a_usage_error(text):
    with pytest.raises(UsageError):
        key_path(text, IGNORABLE)


def test_a_key_path_covers_itself_and_what_lies_inside_it():
    path = key_path("kwargs.headers", IGNORABLE)
    assert path.covers("kwargs.headers")
    assert path.covers("kwargs.headers.Date")
    assert path.covers("kwargs.headers['User-Agent']")
    assert not path.covers("kwargs.headersx")


def test_stripping_a_key_path_removes_a_key_a_field_or_blanks_an_item():
    assert key_path("kwargs.headers.Date", IGNORABLE).strip({"headers": {"Date": 1, "A": 2}}) == {"headers": {"A": 2}}
    record = Record("app.R", (("url", "a"), ("at", 1)))
    assert key_path("args[0].at", IGNORABLE).strip([record]) == [Record("app.R", (("url", "a"),))]
    assert key_path("args[1]", IGNORABLE).strip([1, 2, 3]) == [1, None, 3]
    assert key_path("args[5]", IGNORABLE).strip([1]) == [1]


def test_ignoring_a_key_path_inside_a_registered_form(registered_request):
    old = log_of(call("http.send", Request("https://x/a", {"Date": "Mon"})))
    new = log_of(call("http.send", Request("https://x/a", {"Date": "Tue"})))
    assert not diff(old, new).same
    assert diff(old, new, ignore=["args[0].headers.Date"]).same
    assert diff(old, new, ignore=["args[0].headers.Date"]).ignore == ("args[0].headers.Date",)
