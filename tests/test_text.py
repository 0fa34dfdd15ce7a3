"""Readable text of decoded values."""

from __future__ import annotations

from callpin import Record
from callpin.text import counted, value_text


def test_value_text_is_repr_wherever_repr_can_show_the_value():
    value = {"a": (1,), "s": frozenset({2}), "r": Record("m.R", (("x", [1.5, None]),))}
    assert value_text(value) == repr(value)


def test_a_count_is_written_with_its_noun_in_the_singular_or_plural():
    assert counted(1, "event") == "1 event"
    assert counted(0, "event") == "0 events"
    assert counted(2, "equal event") == "2 equal events"


def _lists(levels: int, leaf: object = None) -> object:
    value = leaf
    for _ in range(levels):
        value = [value]
    return value


def test_a_value_nested_past_depth_100_is_cut_there_even_where_repr_could_show_it():
    # repr() of 150 nested lists works on every Python, and of 5000 on 3.13: the text must
    # not depend on the interpreter's recursion limits.
    assert value_text(_lists(150)) == "[" * 100 + "..." + "]" * 100


def test_a_long_value_nested_less_than_100_deep_is_its_repr():
    value = _lists(99, "x" * 500)
    assert value_text(value) == repr(value)


def test_a_set_is_written_in_the_order_of_its_elements_texts():
    # Small ints hash to themselves: repr() writes this set as {33, 2, 10} in every process.
    value = [{33, 2, 10}, frozenset({"b", "a"}), {"k": {3, 1}}]
    assert value_text(value) == "[{10, 2, 33}, frozenset({'a', 'b'}), {'k': {1, 3}}]"
    assert value_text(Record("m.R", (("tags", {33, 2, 10}),))) == "R(tags={10, 2, 33})"
