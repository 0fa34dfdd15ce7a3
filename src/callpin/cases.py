"""Cases: the combinations of inputs a pin runs over, every combination or every pair.

`cases(status=[...], price=[...])` is the cartesian product of the axes, in a stable order
(the last axis varies fastest). `cases(..., pairs=True)` is a smaller set in which every
pair of values of two axes appears in some case (all-pairs), built by in-parameter-order
growth, deterministic for the same axes. Each case is a dict of its inputs with an `id`;
`Cases.marked(recording)` opens each case with a `case` mark naming it, so a drift in a
log of many cases says which case it happened in; `Cases.ids` are `pytest.mark.parametrize`
ids for one baseline per case.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Protocol

from .errors import UsageError

CASE_MARK = "case"


class _Marks(Protocol):
    def mark(self, name: str, value: Any) -> None: ...


class Case(dict[str, Any]):
    """One combination of inputs: a dict of axis to value, named by `id`."""

    @property
    def id(self) -> str:
        """`status=active, price=1500`: every axis and its value, in axis order."""
        return ", ".join(f"{axis}={_shown(value)}" for axis, value in self.items())

    def __str__(self) -> str:
        return self.id


class Cases(tuple[Case, ...]):
    """The cases of `cases()`, in their stable order."""

    @property
    def ids(self) -> list[str]:
        """One id per case, for `pytest.mark.parametrize(..., ids=cases.ids)`."""
        return [case.id for case in self]

    def marked(self, recording: _Marks) -> Iterator[Case]:
        """Each case, after a `case` mark with its id in `recording` (a `record()` or `pin()` block)."""
        for case in self:
            recording.mark(CASE_MARK, case.id)
            yield case


def cases(*, pairs: bool = False, **axes: Iterable[Any]) -> Cases:
    """The combinations of `axes` (name to values): every one, or with `pairs` a set
    covering every pair of values of any two axes.

    ::

        for case in callpin.cases(status=["active", "inactive"], price=[0, 1500]).marked(rec):
            renewals.renew(make_case(**case))
    """
    names = list(axes)
    values = [list(axis) for axis in axes.values()]
    if not names:
        raise UsageError("cases() needs at least one axis: cases(status=['active', 'inactive'], ...)")
    for name, axis in zip(names, values, strict=True):
        if not axis:
            raise UsageError(f"the axis {name!r} has no values")
    rows = _all_pairs(values) if pairs and len(names) > 2 else list(itertools.product(*(range(len(v)) for v in values)))
    return Cases(Case(zip(names, (values[a][i] for a, i in enumerate(row)), strict=True)) for row in rows)


def _all_pairs(values: Sequence[Sequence[Any]]) -> list[tuple[int, ...]]:
    """Rows of value indices covering every pair of values of two axes (IPO strategy).

    Start from the product of the first two axes; for each next axis, give each row the
    value that covers the most uncovered pairs (the lowest index on a tie), then add rows
    for the pairs still uncovered, filling a free slot of an added row before adding
    another. Indices only: the values are never compared or hashed.
    """
    sizes = [len(axis) for axis in values]
    rows: list[list[int | None]] = [[a, b] for a in range(sizes[0]) for b in range(sizes[1])]
    for axis in range(2, len(sizes)):
        uncovered = {
            (other, value, new) for other in range(axis) for value in range(sizes[other]) for new in range(sizes[axis])
        }
        for row in rows:
            best = max(range(sizes[axis]), key=lambda new: (_gain(row, new, uncovered), -new))
            row.append(best)
            uncovered -= {(other, row[other], best) for other in range(axis)}
        added: list[list[int | None]] = []
        for other, value, new in sorted(uncovered):
            slot = next(
                (row for row in added if row[axis] == new and row[other] in (None, value)),
                None,
            )
            if slot is None:
                slot = [None] * axis + [new]
                added.append(slot)
            slot[other] = value
        rows.extend(added)
    # A slot no pair needed takes the axis's first value.
    return [tuple(0 if index is None else index for index in row) for row in rows]


def _gain(row: list[int | None], new: int, uncovered: set[tuple[int, int, int]]) -> int:
    return sum((other, value, new) in uncovered for other, value in enumerate(row) if value is not None)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)
