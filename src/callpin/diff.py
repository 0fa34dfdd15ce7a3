"""Align two event sequences and classify every difference as moved, missing, extra or changed.

Events are compared by identity: xxh3-64 of their canonical bytes (the frame itself,
or the frame's fields minus the ignored ones). Alignment works on those 64-bit digests
and decodes an event only when it takes part in a difference; docs/diff.md describes
the semantics this module implements.
"""

from __future__ import annotations

import os
from bisect import bisect_left, bisect_right
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, islice, pairwise, repeat
from operator import and_, eq, ge, getitem, gt, is_, itemgetter, lt, not_, sub
from typing import Any, Final, NamedTuple, cast

import msgpack
import xxhash

from . import codec
from ._impl import Encoder
from .align import align, complement, unstable
from .errors import CorruptLog, UsageError
from .event import FIELDS, KINDS
from .fields import FieldChange, KeyPath, field_changes, key_path
from .logfile import Log, load
from .normalize import NO_RULES, Rule
from .renormalize import reconcile

ORDERS: Final = ("strict", "thread", "none")
IGNORABLE: Final = FIELDS[2:]
OP_KINDS: Final = ("moved", "missing", "extra", "changed")


@dataclass(frozen=True, slots=True)
class Op:
    """One difference. `old` and `new` are event indices; None on the side it is absent from."""

    op: str
    label: str
    old: int | None
    new: int | None
    fields: tuple[FieldChange, ...] = ()


class Counts(NamedTuple):
    """The events of one label in each log, by kind, as (old, new) pairs.

    Calls are counted apart from their outcomes, so "one call became two" reads
    `calls (1, 2)` whether or not returns are recorded, and "now raises" reads
    `raises (0, 1)` beside unchanged calls.
    """

    calls: tuple[int, int] = (0, 0)
    returns: tuple[int, int] = (0, 0)
    raises: tuple[int, int] = (0, 0)
    marks: tuple[int, int] = (0, 0)

    @property
    def differs(self) -> bool:
        """True when some kind has another count in the new log."""
        return any(old != new for old, new in self)


# The column of each event kind in Counts, and its name in reports.
COUNT_COLUMNS: Final = {"call": "calls", "return": "returns", "raise": "raises", "mark": "marks"}


@dataclass(frozen=True, slots=True)
class Run:
    """A stretch of `length` equal events aligned in place: old[old + k] is new[new + k]."""

    old: int
    new: int
    length: int


class Diff:
    """The comparison of two logs: the differences (`ops`), the aligned equal stretches
    (`runs`) and, per label, how many events of each kind each side has (`counts`)."""

    def __init__(
        self,
        old: Log,
        new: Log,
        *,
        order: str,
        ignore: tuple[str, ...],
        ops: list[Op],
        runs: list[Run],
        counts: dict[str, Counts],
    ) -> None:
        self.old = old
        self.new = new
        self.order = order
        self.ignore = ignore
        self.runs: tuple[Run, ...] = tuple(sorted(runs, key=lambda run: run.new))
        # Events aligned in place: the equal runs and each changed pair. An event of
        # the old side only is placed after the nearest of them before it.
        aligned = list(runs)
        for op in ops:
            if op.op == "changed" and op.old is not None and op.new is not None:
                aligned.append(Run(op.old, op.new, 1))
        self._aligned_by_old = sorted(aligned, key=lambda run: run.old)
        self._aligned_old_starts = [run.old for run in self._aligned_by_old]
        self._run_new_starts = [run.new for run in self.runs]
        self.counts = counts
        self.ops: tuple[Op, ...] = tuple(sorted(ops, key=self._display_key))

    @property
    def same(self) -> bool:
        """True when no difference was found."""
        return not self.ops

    @property
    def summary(self) -> dict[str, int]:
        """How many ops of each kind: `{"moved": n, "missing": n, "extra": n, "changed": n}`."""
        tally = Counter(op.op for op in self.ops)
        return {kind: tally[kind] for kind in OP_KINDS}

    def position(self, op: Op) -> int:
        """Where an op stands in the new log: its new index, or for `missing` the index of
        the new event it would come before (just after the aligned event preceding it)."""
        if op.new is not None:
            return op.new
        assert op.old is not None
        return self.position_in_new(op.old)

    def position_in_new(self, old_index: int) -> int:
        """The index of the new event an old event would come before: just after the
        aligned event (equal or changed) preceding it."""
        if self.order == "none":
            return len(self.new)
        k = bisect_left(self._aligned_old_starts, old_index) - 1
        if k < 0:
            return 0
        run = self._aligned_by_old[k]
        return run.new + min(old_index - run.old, run.length)

    def aligned_old(self, new_index: int) -> int | None:
        """The old index aligned with an equal new event, None when it is not in a run."""
        k = bisect_right(self._run_new_starts, new_index) - 1
        if k < 0:
            return None
        run = self.runs[k]
        offset = new_index - run.new
        return run.old + offset if offset < run.length else None

    def _display_key(self, op: Op) -> tuple[int, int, int]:
        if self.order == "none":
            return (0, op.old, 0) if op.old is not None and op.new is None else (1, op.new or 0, 0)
        if op.new is None:
            assert op.old is not None
            return (self.position(op), 0, op.old)
        return (op.new, 1, 0)

    def __repr__(self) -> str:
        if self.same:
            return f"<Diff same: {len(self.new)} events>"
        parts = ", ".join(f"{n} {kind}" for kind, n in self.summary.items() if n)
        return f"<Diff {parts}>"


def diff(
    old: Log | str | os.PathLike[str],
    new: Log | str | os.PathLike[str],
    *,
    ignore: Iterable[str] = (),
    order: str = "strict",
    rules: Sequence[Rule] = (),
) -> Diff:
    """Compare two logs (or the logs at two paths) by call order and count.

    `ignore` names event fields left out of an event's identity (any of args,
    kwargs, value, error, thread, depth). `order` is "strict" (one sequence),
    "thread" (each thread's sequence on its own) or "none" (only how many times each
    distinct event happened). `rules` are applied to both logs before comparing.
    Logs normalized with different rules are compared after applying to each the
    rules only the other has (the bytes recording with them gives); RulesMismatch
    is raised when one rule has different patterns in the two logs.
    """
    ignored, paths = check_options(order, ignore)
    old_log = old if isinstance(old, Log) else load(old)
    new_log = new if isinstance(new, Log) else load(new)
    old_log, new_log = reconcile(
        old_log, new_log, tuple(rules), names=(_name(old_log, "the old log"), _name(new_log, "the new log"))
    )
    old_side = _Side(old_log, ignored, paths)
    new_side = _Side(new_log, ignored, paths)
    counts = _counts(old_side, new_side)
    runs: list[Run] = []
    if order == "none":
        ops = _compare_counts(old_side, new_side)
    elif order == "thread":
        ops, pairs = _compare_threads(old_side, new_side)
        runs = pairs.runs()
    else:
        everything_old, everything_new = range(len(old_log)), range(len(new_log))
        ops, pairs = _compare_sequences(old_side, new_side, everything_old, everything_new)
        runs = pairs.runs()
    shown = (*ignored, *(path.text for path in paths))
    return Diff(old_log, new_log, order=order, ignore=shown, ops=ops, runs=runs, counts=counts)


def check_options(order: str, ignore: Iterable[str]) -> tuple[tuple[str, ...], tuple[KeyPath, ...]]:
    """The whole fields and the key paths `ignore` names; raises UsageError on a bad option."""
    if order not in ORDERS:
        raise UsageError(f"unknown order {order!r} (known: {', '.join(ORDERS)})")
    names = (ignore,) if isinstance(ignore, str) else tuple(ignore)
    paths: list[KeyPath] = []
    for name in names:
        if name in IGNORABLE:
            continue
        if name in FIELDS[:2]:
            raise UsageError(f"cannot ignore {name!r}: the fields that can be ignored are {', '.join(IGNORABLE)}")
        found = key_path(name, IGNORABLE)
        if found.field not in names and found not in paths:
            paths.append(found)
    return tuple(field for field in IGNORABLE if field in names), tuple(paths)


def _name(log: Log, fallback: str) -> str:
    return log.path or fallback


# ---------------------------------------------------------------------------
# One side of the comparison: digests and kind+label keys, computed without decoding.


class _Side:
    """A log seen through identities: a digest and a raw kind+label key per event."""

    def __init__(self, log: Log, ignore: tuple[str, ...], paths: tuple[KeyPath, ...] = ()) -> None:
        self.log = log
        self.ignore = ignore
        self.paths = paths
        self._canonical: Callable[[Any], bytes] = Encoder(NO_RULES).encode
        self._unpacker = msgpack.Unpacker(max_buffer_size=codec.MAX_FRAME)
        self._decoder = codec.Decoder(log.path)
        frames = log.frames
        if paths:
            self.digests = list(map(self._stripped_digest, frames, range(len(frames))))
        elif ignore:
            kept = [k for k, name in enumerate(FIELDS) if name not in ignore]
            self.digests = [
                xxhash.xxh3_64_intdigest(b"".join([fields[k] for k in kept]))
                for fields in map(self.fields, frames, range(len(frames)))
            ]
        else:
            self.digests = list(map(xxhash.xxh3_64_intdigest, frames))
        self.keys = self._keys(frames)
        self._kind_labels: dict[bytes, tuple[str, str]] = {}

    def _stripped_digest(self, frame: bytes, index: int) -> int:
        """The digest of a frame's kept fields, with what the key paths name taken out."""
        fields = self.fields(frame, index)
        canonical = self._canonical
        for path in self.paths:
            k = FIELDS.index(path.field)
            fields[k] = canonical(path.strip(self._decoder.decode(fields[k])))
        return xxhash.xxh3_64_intdigest(b"".join(raw for k, raw in enumerate(fields) if FIELDS[k] not in self.ignore))

    def _keys(self, frames: list[bytes]) -> list[bytes]:
        """Every frame's kind byte and label bytes (a prefix of the frame), without a parser.

        A label of up to 255 bytes (fixstr or str8) gives its length in the two
        bytes after the kind, so one slice per distinct pair of those bytes cuts
        every key in C-speed passes; other frames take the parser.
        """
        heads: list[bytes] = list(map(itemgetter(slice(2, 4)), frames))
        well_formed = (
            min(map(len, frames), default=4) >= 4
            and set(map(itemgetter(0), frames)) <= {codec.FRAME_HEAD}
            and max(map(itemgetter(1), frames), default=0) < 0x80
        )
        if not well_formed:
            return [self._parsed_key(frame, index) for index, frame in enumerate(frames)]
        cuts = {head: _label_end(head) for head in set(heads)}
        keys = cast("list[bytes]", list(map(getitem, frames, map(cuts.__getitem__, heads))))
        if _UNCUT in cuts.values():
            for index in compress(range(len(frames)), map(is_, map(cuts.get, heads), repeat(_UNCUT))):
                keys[index] = self._parsed_key(frames[index], index)
        return keys

    def _parsed_key(self, frame: bytes, index: int) -> bytes:
        fields = self.fields(frame, index)
        if len(fields[0]) != 1:
            raise CorruptLog(self.log.path, f"event {index} is malformed", intact=index)
        return fields[0] + fields[1]

    def fields(self, frame: bytes, index: int) -> list[bytes]:
        """The raw bytes of the eight fields of one frame."""
        unpacker = self._unpacker
        unpacker.feed(frame)
        start = unpacker.tell()
        try:
            if unpacker.read_array_header() != len(FIELDS):
                raise ValueError("not an event array")
            bounds = [unpacker.tell()]
            for _ in FIELDS:
                unpacker.skip()
                bounds.append(unpacker.tell())
            if bounds[-1] - start != len(frame):
                raise ValueError("trailing bytes")
        except Exception:
            # Any parse failure of a frame is corruption; the unpacker's buffer
            # is left mid-value, so the next frame gets a fresh one.
            self._unpacker = msgpack.Unpacker(max_buffer_size=codec.MAX_FRAME)
            raise CorruptLog(self.log.path, f"event {index} is not an event array", intact=index) from None
        return [frame[lo - start : hi - start] for lo, hi in pairwise(bounds)]

    def kind_label(self, key: bytes, index: int) -> tuple[str, str]:
        """The kind and label a key stands for (`index`: an event with that key, for errors)."""
        found = self._kind_labels.get(key)
        if found is None:
            kind = key[0]
            label = self._decoder.decode(key[1:])
            if not (kind < len(KINDS) and type(label) is str):
                raise CorruptLog(self.log.path, f"event {index} is malformed", intact=index)
            found = (KINDS[kind], label)
            self._kind_labels[key] = found
        return found

    def label(self, index: int) -> str:
        return self.kind_label(self.keys[index], index)[1]

    def thread(self, index: int) -> int:
        raw = self.fields(self.log.frames[index], index)[FIELDS.index("thread")]
        thread = self._decoder.decode(raw)
        if type(thread) is not int or thread < 1:
            raise CorruptLog(self.log.path, f"event {index} is malformed", intact=index)
        return thread


# The cut of a frame whose label is longer or not a plain str: it needs the parser.
_UNCUT = slice(0, 0)


def _label_end(head: bytes) -> slice:
    """The slice of a frame holding its kind and label, from the label's first two bytes."""
    if 0xA0 <= head[0] <= 0xBF:
        return slice(1, 3 + (head[0] & 0x1F))
    if head[0] == 0xD9:
        return slice(1, 4 + head[1])
    return _UNCUT


def _counts(old: _Side, new: _Side) -> dict[str, Counts]:
    # label -> [old calls, new calls, old returns, new returns, ...] in Counts' order.
    per_label: dict[str, list[int]] = {}
    slot = {kind: 2 * k for k, kind in enumerate(COUNT_COLUMNS)}
    for column, side in enumerate((old, new)):
        tally = Counter(side.keys)
        if not tally:
            continue
        first = dict(zip(reversed(side.keys), range(len(side.keys) - 1, -1, -1), strict=True))
        for key, n in tally.items():
            kind, label = side.kind_label(key, first[key])
            per_label.setdefault(label, [0] * 8)[slot[kind] + column] += n
    return {label: Counts(*((n[k], n[k + 1]) for k in range(0, 8, 2))) for label, n in sorted(per_label.items())}


# ---------------------------------------------------------------------------
# Comparing one sequence with another.


class _Pairs:
    """Aligned pairs as two parallel lists of log indices."""

    def __init__(self, old: list[int] | None = None, new: list[int] | None = None) -> None:
        self.old: list[int] = old if old is not None else []
        self.new: list[int] = new if new is not None else []

    def extend(self, other: _Pairs) -> None:
        self.old.extend(other.old)
        self.new.extend(other.new)

    def runs(self) -> list[Run]:
        """The pairs, ordered by new index, cut into stretches that advance on both sides."""
        old, new = self.old, self.new
        if any(map(gt, new, islice(new, 1, None))):
            order = sorted(range(len(new)), key=new.__getitem__)
            old, new = [old[k] for k in order], [new[k] for k in order]
        if not old:
            return []
        steps = map(
            and_,
            map(eq, map(sub, islice(old, 1, None), old), repeat(1)),
            map(eq, map(sub, islice(new, 1, None), new), repeat(1)),
        )
        starts = [0, *compress(range(1, len(old)), map(not_, steps)), len(old)]
        return [Run(old[lo], new[lo], hi - lo) for lo, hi in pairwise(starts)]


def _compare_sequences(
    old: _Side,
    new: _Side,
    old_indices: Sequence[int],
    new_indices: Sequence[int],
) -> tuple[list[Op], _Pairs]:
    """The ops and the aligned equal pairs (as log indices) of two index sequences."""
    a = list(map(old.digests.__getitem__, old_indices))
    b = list(map(new.digests.__getitem__, new_indices))
    match = align(a, b)

    # Events left out of the alignment that are equal to one left out on the
    # other side are in both logs: they moved. Pair them in order of occurrence.
    unaligned_new = complement(list(compress(match, map(ge, match, repeat(0)))), len(b))
    loose_new: dict[int, deque[int]] = {}
    for j in unaligned_new:
        loose_new.setdefault(b[j], deque()).append(j)
    moved_new: set[int] = set()
    for i in compress(range(len(a)), map(lt, match, repeat(0))):
        waiting = loose_new.get(a[i])
        if waiting:
            match[i] = waiting.popleft()
            moved_new.add(match[i])

    # Of all paired events, those outside some longest in-order subsequence
    # moved. An event in some but not every such subsequence (two adjacent calls
    # swapped: either could be the one that moved) is reported as moved too.
    is_paired = list(map(ge, match, repeat(0)))
    paired_old = list(compress(range(len(a)), is_paired))
    paired_new = list(compress(match, is_paired))
    moving = unstable(paired_new)
    ops = [
        Op(
            "moved",
            old.label(old_indices[paired_old[k]]),
            old_indices[paired_old[k]],
            new_indices[paired_new[k]],
        )
        for k in sorted(moving)
    ]
    stable_old, stable_new = paired_old, paired_new
    if moving:
        is_stable = [True] * len(paired_old)
        for k in moving:
            is_stable[k] = False
        stable_old = list(compress(paired_old, is_stable))
        stable_new = list(compress(paired_new, is_stable))

    # What is left on each side falls in a gap between two stable pairs. Within a
    # gap, events of the same kind and label are aligned with each other: the
    # ones paired changed, the others are missing or extra.
    gaps_old: dict[int, list[int]] = {}
    gaps_new: dict[int, list[int]] = {}
    for i in compress(range(len(a)), map(not_, is_paired)):
        gaps_old.setdefault(bisect_left(stable_old, i), []).append(old_indices[i])
    for j in unaligned_new:
        if j in moved_new:
            continue
        gaps_new.setdefault(bisect_left(stable_new, j), []).append(new_indices[j])
    for gap in sorted(gaps_old.keys() | gaps_new.keys()):
        ops.extend(_classify_gap(old, new, gaps_old.get(gap, []), gaps_new.get(gap, [])))
    pairs = _Pairs(
        list(map(old_indices.__getitem__, stable_old)),
        list(map(new_indices.__getitem__, stable_new)),
    )
    return ops, pairs


def _classify_gap(old: _Side, new: _Side, left: list[int], right: list[int]) -> list[Op]:
    if not right:
        return [Op("missing", old.label(i), i, None) for i in left]
    if not left:
        return [Op("extra", new.label(j), None, j) for j in right]
    match = align([old.keys[i] for i in left], [new.keys[j] for j in right])
    ops: list[Op] = []
    paired = set()
    for k, i in enumerate(left):
        if match[k] < 0:
            ops.append(Op("missing", old.label(i), i, None))
        else:
            j = right[match[k]]
            paired.add(j)
            changes = field_changes(
                old.log[i],
                new.log[j],
                old.fields(old.log.frames[i], i),
                new.fields(new.log.frames[j], j),
                old.ignore,
                old.paths,
            )
            ops.append(Op("changed", old.label(i), i, j, changes))
    ops.extend(Op("extra", new.label(j), None, j) for j in right if j not in paired)
    return ops


def _compare_threads(old: _Side, new: _Side) -> tuple[list[Op], _Pairs]:
    threads_old: dict[int, list[int]] = {}
    threads_new: dict[int, list[int]] = {}
    for i in range(len(old.log)):
        threads_old.setdefault(old.thread(i), []).append(i)
    for j in range(len(new.log)):
        threads_new.setdefault(new.thread(j), []).append(j)
    ops: list[Op] = []
    pairs = _Pairs()
    for thread in sorted(threads_old.keys() | threads_new.keys()):
        thread_ops, thread_pairs = _compare_sequences(
            old, new, threads_old.get(thread, []), threads_new.get(thread, [])
        )
        ops.extend(thread_ops)
        pairs.extend(thread_pairs)
    return ops, pairs


def _compare_counts(old: _Side, new: _Side) -> list[Op]:
    """Only how many times each distinct event happened: the surplus occurrences."""
    where_old: dict[int, list[int]] = {}
    where_new: dict[int, list[int]] = {}
    for i, digest in enumerate(old.digests):
        where_old.setdefault(digest, []).append(i)
    for j, digest in enumerate(new.digests):
        where_new.setdefault(digest, []).append(j)
    ops: list[Op] = []
    for digest, indices in where_old.items():
        surplus = indices[len(where_new.get(digest, ())) :]
        ops.extend(Op("missing", old.label(i), i, None) for i in surplus)
    for digest, indices in where_new.items():
        surplus = indices[len(where_old.get(digest, ())) :]
        ops.extend(Op("extra", new.label(j), None, j) for j in surplus)
    return ops
