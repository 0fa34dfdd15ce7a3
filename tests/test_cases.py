"""callpin.cases: every combination of inputs, or a set covering every pair, and a drift that names its case."""

from __future__ import annotations

import itertools

import pytest

import callpin
from callpin import UsageError
from callpin.render_diff import render_text
from sample_logs import call, log_of, mark

AXES = {"status": ["active", "inactive", "paused"], "price": [0, 1500, 99], "credit": [-300, 0, 50]}


def test_the_product_varies_the_last_axis_fastest() -> None:
    found = callpin.cases(status=["active", "inactive"], price=[0, 1500])
    assert [dict(case) for case in found] == [
        {"status": "active", "price": 0},
        {"status": "active", "price": 1500},
        {"status": "inactive", "price": 0},
        {"status": "inactive", "price": 1500},
    ]
    assert found.ids == [
        "status=active, price=0",
        "status=active, price=1500",
        "status=inactive, price=0",
        "status=inactive, price=1500",
    ]


def test_pairs_cover_every_pair_of_values_with_fewer_cases_than_the_product() -> None:
    found = callpin.cases(pairs=True, **AXES)
    assert len(found) < 27
    names = list(AXES)
    for a, b in itertools.combinations(names, 2):
        for x, y in itertools.product(AXES[a], AXES[b]):
            assert any(case[a] == x and case[b] == y for case in found), (a, x, b, y)


@pytest.mark.parametrize("size", [(2, 2, 2, 2), (3, 4, 2, 5, 3), (5, 5, 5)])
def test_pairs_cover_every_pair_for_more_and_uneven_axes(size: tuple[int, ...]) -> None:
    axes = {f"a{k}": list(range(n)) for k, n in enumerate(size)}
    found = callpin.cases(pairs=True, **axes)
    for a, b in itertools.combinations(axes, 2):
        assert {(case[a], case[b]) for case in found} == set(itertools.product(axes[a], axes[b]))
    assert len(found) < len(list(itertools.product(*axes.values())))


def test_the_order_is_stable_for_the_same_axes() -> None:
    assert callpin.cases(pairs=True, **AXES).ids == callpin.cases(pairs=True, **AXES).ids


def test_values_need_not_be_hashable_or_comparable() -> None:
    found = callpin.cases(pairs=True, a=[{"x": 1}, [2]], b=[object, None], c=[{3}, {4}])
    assert len(found) >= 4


@pytest.mark.parametrize("axes", [{}, {"status": []}])
def test_no_axis_or_an_empty_axis_is_a_usage_error(axes: dict[str, list[object]]) -> None:
    with pytest.raises(UsageError):
        callpin.cases(**axes)


def test_marked_opens_each_case_with_a_case_mark() -> None:
    def renew(status: str, price: int) -> None:
        pass

    with callpin.record(spy=[]) as recording:
        for case in callpin.cases(status=["active"], price=[0, 5]).marked(recording):
            renew(**case)
    assert [(e.kind, e.label, e.value) for e in recording.events] == [
        ("mark", "case", "status=active, price=0"),
        ("mark", "case", "status=active, price=5"),
    ]


def test_a_drift_names_the_case_it_happened_in() -> None:
    events = []
    for case in callpin.cases(status=["active", "inactive"], price=[0, 1500]):
        events.append(mark("case", case.id))
        events.extend(call("billing.charge", case["price"], step=step) for step in range(6))
    old = log_of(*events)
    changed = list(events)
    changed[-3] = call("billing.charge", 1500, step=99)
    text = render_text(callpin.diff(old, log_of(*changed)))
    assert "in case status=inactive, price=1500" in text
    assert "in case status=active" not in text
