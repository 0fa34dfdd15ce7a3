"""Align two sequences of hashable keys, and find which aligned pairs are out of order.

`align` pairs equal elements of two sequences in a common subsequence, in near-linear
time for mostly-equal sequences; `increasing` and `unstable` find the longest
increasing subsequences of the pairs' positions, which say what stayed and what moved.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, deque
from collections.abc import Hashable, Sequence
from itertools import accumulate, compress, islice, repeat
from operator import eq, gt, sub
from typing import TypeVar

# A gap between anchors with no event unique on both sides is aligned exactly
# (longest common subsequence) only while old length x new length stays under
# this many cells; a larger one pairs equal events in order of occurrence, which
# is near-linear but may report a few more differences than the minimum.
EXACT_GAP_CELLS = 40_000

_H = TypeVar("_H", bound=Hashable)
# A range of each sequence being aligned: a[a0:a1] and b[b0:b1].
_Box = tuple[int, int, int, int]


def complement(ascending: list[int], size: int) -> list[int]:
    """The integers of range(size) missing from an ascending list of some of them."""
    bounds = [-1, *ascending, size]
    steps = map(sub, islice(bounds, 1, None), bounds)
    holes = compress(range(len(bounds) - 1), map(gt, steps, repeat(1)))
    return [j for k in holes for j in range(bounds[k] + 1, bounds[k + 1])]


def align(a: Sequence[_H], b: Sequence[_H]) -> list[int]:
    """For each index of `a`, the index of `b` it is aligned with, or -1.

    The aligned pairs increase on both sides: a common subsequence. Equal prefixes
    and suffixes are taken first; the elements that occur once on each side then
    anchor the range (their longest in-order subsequence, as patience diff does),
    and every gap between anchors is aligned the same way. Each step is linear or
    n log n in the range, so mostly-equal sequences align in near-linear time.
    """
    if a == b:
        return list(range(len(a)))
    match = [-1] * len(a)
    stack = [(0, len(a), 0, len(b))]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
            match[a0] = b0
            a0 += 1
            b0 += 1
        while a0 < a1 and b0 < b1 and a[a1 - 1] == b[b1 - 1]:
            a1 -= 1
            b1 -= 1
            match[a1] = b1
        if a0 == a1 or b0 == b1:
            continue
        anchors_a, anchors_b = _unique_pairs(a, b, (a0, a1, b0, b1))
        if not anchors_a:
            if (a1 - a0) * (b1 - b0) <= EXACT_GAP_CELLS:
                for i, j in _common_subsequence(a, b, (a0, a1, b0, b1)):
                    match[i] = j
                continue
            anchors_a, anchors_b = _pairs_in_order(a, b, (a0, a1, b0, b1))
            if not anchors_a:
                continue
        next_a, next_b = a0, b0
        for k in increasing(anchors_b):
            i, j = anchors_a[k], anchors_b[k]
            match[i] = j
            if next_a < i and next_b < j:
                stack.append((next_a, i, next_b, j))
            next_a, next_b = i + 1, j + 1
        if next_a < a1 and next_b < b1:
            stack.append((next_a, a1, next_b, b1))
    return match


def _unique_pairs(a: Sequence[_H], b: Sequence[_H], box: _Box) -> tuple[list[int], list[int]]:
    """Indices (in a, in b) of every element occurring once in a[a0:a1] and once in b[b0:b1]."""
    a0, a1, b0, b1 = box
    part_a, part_b = a[a0:a1], b[b0:b1]
    once = _once(part_a)
    once.intersection_update(_once(part_b))
    if not once:
        return [], []
    where = dict(zip(part_b, range(b0, b1), strict=True))
    chosen = list(map(once.__contains__, part_a))
    return (
        list(compress(range(a0, a1), chosen)),
        list(map(where.__getitem__, compress(part_a, chosen))),
    )


def _once(items: Sequence[_H]) -> set[_H]:
    """The elements occurring exactly once in `items`."""
    tally = Counter(items)
    return set(compress(tally.keys(), map(eq, tally.values(), repeat(1))))


def _pairs_in_order(a: Sequence[_H], b: Sequence[_H], box: _Box) -> tuple[list[int], list[int]]:
    """Indices pairing the k-th occurrence of each element in a[a0:a1] with its k-th in b[b0:b1]."""
    a0, a1, b0, b1 = box
    where: dict[_H, deque[int]] = {}
    for j in range(b0, b1):
        where.setdefault(b[j], deque()).append(j)
    in_a: list[int] = []
    in_b: list[int] = []
    for i in range(a0, a1):
        waiting = where.get(a[i])
        if waiting:
            in_a.append(i)
            in_b.append(waiting.popleft())
    return in_a, in_b


def _common_subsequence(a: Sequence[_H], b: Sequence[_H], box: _Box) -> list[tuple[int, int]]:
    """A longest common subsequence of a[a0:a1] and b[b0:b1] as (i, j) pairs (small ranges)."""
    a0, a1, b0, b1 = box
    n, m = a1 - a0, b1 - b0
    # lengths[x][y]: the longest common subsequence of a[a0 + x:a1] and b[b0 + y:b1].
    lengths = [[0] * (m + 1) for _ in range(n + 1)]
    for x in range(n - 1, -1, -1):
        row, below = lengths[x], lengths[x + 1]
        item = a[a0 + x]
        for y in range(m - 1, -1, -1):
            if item == b[b0 + y]:
                row[y] = below[y + 1] + 1
            else:
                row[y] = below[y] if below[y] >= row[y + 1] else row[y + 1]
    pairs: list[tuple[int, int]] = []
    x = y = 0
    while x < n and y < m:
        if a[a0 + x] == b[b0 + y]:
            pairs.append((a0 + x, b0 + y))
            x += 1
            y += 1
        elif lengths[x + 1][y] >= lengths[x][y + 1]:
            x += 1
        else:
            y += 1
    return pairs


# ---------------------------------------------------------------------------
# Longest increasing subsequences, split into independent blocks.


def _blocks(values: list[int]) -> list[tuple[int, int]]:
    """The [start, end) ranges of `values` (distinct) inside which some pair is out of order.

    Every element outside those ranges is greater than all before it and less than
    all after it, so it belongs to every longest increasing subsequence; the ranges
    are independent. Found with C-speed scans, so an almost sorted list costs
    linear time.
    """
    if len(values) < 2:
        return []
    highest = list(accumulate(values, max))
    lowest = list(accumulate(reversed(values), min))
    lowest.reverse()
    crossings = compress(range(len(values) - 1), map(gt, highest, islice(lowest, 1, None)))
    blocks: list[tuple[int, int]] = []
    for k in crossings:
        if blocks and blocks[-1][1] == k + 1:
            blocks[-1] = (blocks[-1][0], k + 2)
        else:
            blocks.append((k, k + 2))
    return blocks


def _lengths_ending(values: Sequence[int]) -> list[int]:
    """For each element, the length of the longest increasing subsequence ending with it."""
    tails: list[int] = []
    lengths: list[int] = []
    for value in values:
        k = bisect_left(tails, value)
        if k == len(tails):
            tails.append(value)
        else:
            tails[k] = value
        lengths.append(k + 1)
    return lengths


def increasing(values: list[int]) -> list[int]:
    """Positions of a longest increasing subsequence of `values` (distinct)."""
    dropped: set[int] = set()
    for start, end in _blocks(values):
        block = values[start:end]
        lengths = _lengths_ending(block)
        # Walk back from the end, taking each time the latest element that
        # extends the subsequence: a deterministic choice among equals.
        want = max(lengths)
        limit: int | None = None
        keep: set[int] = set()
        for k in range(len(block) - 1, -1, -1):
            if lengths[k] == want and (limit is None or block[k] < limit):
                keep.add(k)
                limit = block[k]
                want -= 1
        dropped.update(start + k for k in range(len(block)) if k not in keep)
    if not dropped:
        return list(range(len(values)))
    return [k for k in range(len(values)) if k not in dropped]


def unstable(values: list[int]) -> set[int]:
    """Positions of elements (distinct values) not in every longest increasing subsequence."""
    unstable: set[int] = set()
    for start, end in _blocks(values):
        block = values[start:end]
        ending = _lengths_ending(block)
        starting = _lengths_ending([-v for v in reversed(block)])
        starting.reverse()
        longest = max(ending)
        on_some = [k for k in range(len(block)) if ending[k] + starting[k] - 1 == longest]
        per_level = Counter(ending[k] for k in on_some)
        on_every = {k for k in on_some if per_level[ending[k]] == 1}
        unstable.update(start + k for k in range(len(block)) if k not in on_every)
    return unstable
