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
