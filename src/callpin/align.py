"""Align two sequences of hashable keys, and find which aligned pairs are out of order.

`align` pairs equal elements of two sequences in a common subsequence, in near-linear
time for mostly-equal sequences; `increasing` and `unstable` find the longest
increasing subsequences of the pairs' positions, which say what stayed and what moved.
Every pass over a whole sequence is a C-speed pipeline (`map`, `compress`, slice
comparison, `Counter`); Python-level loops run only over the differences.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Hashable, Sequence
from itertools import compress, islice, pairwise, repeat
from operator import and_, eq, ge, gt, is_not, lt, ne, not_, sub
from typing import TypeVar, cast

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


def align(a: Sequence[_H], b: Sequence[_H], exact_gap_cells: int | None = None) -> list[int]:
    """For each index of `a`, the index of `b` it is aligned with, or -1.

    The aligned pairs increase on both sides: a common subsequence. Equal prefixes
    and suffixes are taken first; the elements that occur once on each side then
    anchor the range (their longest in-order subsequence, as patience diff does),
    and every gap between anchors is aligned the same way. Each step is linear or
    n log n in the range, so mostly-equal sequences align in near-linear time.
    `exact_gap_cells` is EXACT_GAP_CELLS unless given.
    """
    exact = EXACT_GAP_CELLS if exact_gap_cells is None else exact_gap_cells
    if a == b:
        return list(range(len(a)))
    match = [-1] * len(a)
    stack = [(0, len(a), 0, len(b))]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        if a1 - a0 == 1 and b1 - b0 == 1:
            # The commonest box by far: one event between two anchors on each side.
            if a[a0] == b[b0]:
                match[a0] = b0
            continue
        same = _common_prefix(a, b, a0, a1, b0, b1)
        if same:
            match[a0 : a0 + same] = range(b0, b0 + same)
            a0 += same
            b0 += same
        same = _common_suffix(a, b, a0, a1, b0, b1)
        if same:
            match[a1 - same : a1] = range(b1 - same, b1)
            a1 -= same
            b1 -= same
        if a0 == a1 or b0 == b1:
            continue
        anchors_a, anchors_b = _unique_pairs(a, b, (a0, a1, b0, b1))
        if not anchors_a:
            if (a1 - a0) * (b1 - b0) <= exact:
                for i, j in _common_subsequence(a, b, (a0, a1, b0, b1)):
                    match[i] = j
                continue
            anchors_a, anchors_b = _pairs_in_order(a, b, (a0, a1, b0, b1))
            if not anchors_a:
                continue
        kept = increasing(anchors_b)
        if len(kept) < len(anchors_b):
            anchors_a = list(map(anchors_a.__getitem__, kept))
            anchors_b = list(map(anchors_b.__getitem__, kept))
        deque(map(match.__setitem__, anchors_a, anchors_b), maxlen=0)
        stack.extend(_gaps(anchors_a, anchors_b, (a0, a1, b0, b1)))
    return match


# Correspondence: (runs, moved, gaps), in positions of the two sequences compared.
# `runs`: the pairs of equal elements that stayed in order, as stretches (i, j, length)
# with a[i + k] == b[j + k], ascending on both sides. `moved`: the pairs of equal
# elements out of order, (i, j) by ascending i. `gaps`: the unpaired elements, grouped
# by the gap between two stable pairs they fall in, in order: (positions in a,
# positions in b), each ascending, one side possibly empty.
Correspondence = tuple[list[tuple[int, int, int]], list[tuple[int, int]], list[tuple[list[int], list[int]]]]


def correspond(a: Sequence[_H], b: Sequence[_H], exact_gap_cells: int) -> Correspondence:
    """How the elements of `b` correspond to those of `a`: what stayed, what moved, what is left.

    docs/diff.md, "Alignment", steps 1 to 3 and the gaps of step 4. `_speedups.correspond`
    gives the same for sequences of 64-bit unsigned ints; `_impl.correspond` is the live one.
    """
    match = align(a, b, exact_gap_cells)

    # Elements left out of the alignment that are equal to one left out on the
    # other side are in both sequences: they moved. Pair them in order of occurrence.
    unaligned_b = complement(list(compress(match, map(ge, match, repeat(0)))), len(b))
    loose_b: dict[_H, deque[int]] = {}
    for j in unaligned_b:
        loose_b.setdefault(b[j], deque()).append(j)
    moved_b: set[int] = set()
    for i in compress(range(len(a)), map(lt, match, repeat(0))):
        waiting = loose_b.get(a[i])
        if waiting:
            match[i] = waiting.popleft()
            moved_b.add(match[i])

    # Of all paired elements, those outside some longest in-order subsequence
    # moved. An element in some but not every such subsequence (two adjacent ones
    # swapped: either could be the one that moved) moved too.
    is_paired = list(map(ge, match, repeat(0)))
    paired_a = list(compress(range(len(a)), is_paired))
    paired_b = list(compress(match, is_paired))
    moving = unstable(paired_b)
    moved = [(paired_a[k], paired_b[k]) for k in sorted(moving)]
    stable_a, stable_b = paired_a, paired_b
    if moving:
        is_stable = [True] * len(paired_a)
        for k in moving:
            is_stable[k] = False
        stable_a = list(compress(paired_a, is_stable))
        stable_b = list(compress(paired_b, is_stable))

    # What is left on each side falls in a gap between two stable pairs.
    gaps_a: dict[int, list[int]] = {}
    gaps_b: dict[int, list[int]] = {}
    for i in compress(range(len(a)), map(not_, is_paired)):
        gaps_a.setdefault(bisect_left(stable_a, i), []).append(i)
    for j in unaligned_b:
        if j not in moved_b:
            gaps_b.setdefault(bisect_left(stable_b, j), []).append(j)
    gaps = [(gaps_a.get(gap, []), gaps_b.get(gap, [])) for gap in sorted(gaps_a.keys() | gaps_b.keys())]
    return stretches(stable_a, stable_b), moved, gaps


def stretches(a: list[int], b: list[int]) -> list[tuple[int, int, int]]:
    """Pairs (a[k], b[k]), in the order given, cut into stretches that advance by one on both sides."""
    if not a:
        return []
    steps = map(
        and_,
        map(eq, map(sub, islice(a, 1, None), a), repeat(1)),
        map(eq, map(sub, islice(b, 1, None), b), repeat(1)),
    )
    starts = [0, *compress(range(1, len(a)), map(not_, steps)), len(a)]
    return [(a[lo], b[lo], hi - lo) for lo, hi in pairwise(starts)]


def _common_prefix(a: Sequence[_H], b: Sequence[_H], a0: int, a1: int, b0: int, b1: int) -> int:
    """The length of the equal prefix of a[a0:a1] and b[b0:b1], found by galloping slice comparisons."""
    limit = min(a1 - a0, b1 - b0)
    if not limit or a[a0] != b[b0]:
        return 0
    same, step = 1, 8
    while same < limit:
        end = min(same + step, limit)
        if a[a0 + same : a0 + end] == b[b0 + same : b0 + end]:
            same, step = end, step * 2
            continue
        # The first difference lies in [same, end): halve the window until it is small.
        while end - same > 8:
            middle = (same + end) // 2
            if a[a0 + same : a0 + middle] == b[b0 + same : b0 + middle]:
                same = middle
            else:
                end = middle
        while a[a0 + same] == b[b0 + same]:
            same += 1
        return same
    return same


def _common_suffix(a: Sequence[_H], b: Sequence[_H], a0: int, a1: int, b0: int, b1: int) -> int:
    """The length of the equal suffix of a[a0:a1] and b[b0:b1]."""
    limit = min(a1 - a0, b1 - b0)
    if not limit or a[a1 - 1] != b[b1 - 1]:
        return 0
    same, step = 1, 8
    while same < limit:
        end = min(same + step, limit)
        if a[a1 - end : a1 - same] == b[b1 - end : b1 - same]:
            same, step = end, step * 2
            continue
        while end - same > 8:
            middle = (same + end) // 2
            if a[a1 - middle : a1 - same] == b[b1 - middle : b1 - same]:
                same = middle
            else:
                end = middle
        while a[a1 - 1 - same] == b[b1 - 1 - same]:
            same += 1
        return same
    return same


def _gaps(anchors_a: list[int], anchors_b: list[int], box: _Box) -> list[_Box]:
    """The boxes between consecutive anchors (and the box's ends) with elements on both sides.

    Slot k lies between anchor k - 1 and anchor k; a box is open where both sides
    leave an element out in the same slot. The boxes are disjoint and aligned
    independently, so their order does not matter.
    """
    a0, a1, b0, b1 = box
    bounds_a = [a0 - 1, *anchors_a, a1]
    open_a = _open_slots(bounds_a)
    if not open_a:
        return []
    bounds_b = [b0 - 1, *anchors_b, b1]
    open_a.intersection_update(_open_slots(bounds_b))
    return [(bounds_a[k] + 1, bounds_a[k + 1], bounds_b[k] + 1, bounds_b[k + 1]) for k in open_a]


def _open_slots(bounds: list[int]) -> set[int]:
    """The k with room between bounds[k] and bounds[k + 1] (ascending bounds)."""
    steps = map(sub, islice(bounds, 1, None), bounds)
    return set(compress(range(len(bounds) - 1), map(gt, steps, repeat(1))))


def _unique_pairs(a: Sequence[_H], b: Sequence[_H], box: _Box) -> tuple[list[int], list[int]]:
    """Indices (in a, in b) of every element occurring once in a[a0:a1] and once in b[b0:b1].

    Only b's range is hashed: a map from each element to its last position in b,
    without the elements b repeats, is looked up with every element of a; an element
    a repeats then finds one position twice, which the few candidates' positions show.
    """
    a0, a1, b0, b1 = box
    part_b = b[b0:b1]
    where = dict(zip(part_b, range(b0, b1), strict=True))
    if len(where) < len(part_b):
        last = list(map(where.__getitem__, part_b))
        for j in compress(range(b0, b1), map(ne, last, range(b0, b1))):
            where.pop(b[j], None)
    found = list(map(where.get, a[a0:a1]))
    present = list(map(is_not, found, repeat(None)))
    anchors_a = list(compress(range(a0, a1), present))
    anchors_b = cast("list[int]", list(compress(found, present)))
    if len(set(anchors_b)) < len(anchors_b):
        tally = Counter(anchors_b)
        once = list(map(eq, map(tally.__getitem__, anchors_b), repeat(1)))
        anchors_a = list(compress(anchors_a, once))
        anchors_b = list(compress(anchors_b, once))
    return anchors_a, anchors_b


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
    are independent. A range grows out of each descent (an element greater than the
    next): outward while a neighbour is out of order with the range's least or
    greatest element, joining the range before it when they overlap. Between
    descents the values increase, so each step outward is a bisection, and an
    almost sorted list costs one C-speed scan for its descents.
    """
    size = len(values)
    descents = list(compress(range(size - 1), map(gt, values, islice(values, 1, None))))
    blocks: list[list[int]] = []  # [start, end, least, greatest]
    for at, k in enumerate(descents):
        if blocks and k + 1 < blocks[-1][1]:
            continue
        start, end = k, k + 2
        least, greatest = values[k + 1], values[k]
        while True:
            # Left: the values before `start` down to the previous block increase, so
            # those greater than `least` are a suffix of them.
            floor = blocks[-1][1] if blocks else 0
            start = bisect_right(values, least, floor, start)
            if blocks and start == floor and blocks[-1][3] > least:
                start, _, low, high = blocks.pop()
                least, greatest = min(least, low), max(greatest, high)
                continue
            # Right: the values after `end` up to the next descent increase, so those
            # less than `greatest` are a prefix of them.
            following = bisect_right(descents, end - 1, at)
            ceiling = descents[following] + 1 if following < len(descents) else size
            grown = bisect_left(values, greatest, end, ceiling)
            if grown == end:
                break
            least = min(least, values[end])
            end = grown
            if end == ceiling and end < size and values[end] < greatest:
                # Reached a descent: its right side is the next increasing stretch.
                least = min(least, values[end])
                end += 1
        blocks.append([start, end, least, greatest])
    return [(block[0], block[1]) for block in blocks]


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
    dropped: list[int] = []
    for start, end in _blocks(values):
        block = values[start:end]
        lengths = _lengths_ending(block)
        # Walk back from the end, taking each time the latest element that
        # extends the subsequence: a deterministic choice among equals.
        want = max(lengths)
        limit: int | None = None
        for k in range(len(block) - 1, -1, -1):
            if lengths[k] == want and (limit is None or block[k] < limit):
                limit = block[k]
                want -= 1
            else:
                dropped.append(start + k)
    if not dropped:
        return list(range(len(values)))
    kept = [True] * len(values)
    for k in dropped:
        kept[k] = False
    return list(compress(range(len(values)), kept))


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
