"""Align two event sequences and classify every difference as moved, missing, extra or changed.

Events are compared by identity: xxh3-64 of their canonical bytes (the frame itself,
or the frame's fields minus the ignored ones). Alignment works on those 64-bit digests
and decodes an event only when it takes part in a difference; docs/diff.md describes
the semantics this module implements.
"""

from __future__ import annotations

import gc
import os
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import msgpack
import xxhash

from . import align as alignment
from . import codec
from ._impl import Encoder, correspond, frame_keys
from .align import align
from .errors import CorruptLog, UsageError
from .event import FIELDS, KINDS
from .fields import FieldChange, KeyPath, field_changes, key_path
from .logfile import Log, load
from .normalize import NO_RULES, Rule
from .renormalize import reconcile

if TYPE_CHECKING:
    from .frame_keys import FrameKeys

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
    # A diff of long logs makes many container objects (ops, runs, gaps) and leaves
    # no cycle among them; a collection meanwhile would only walk both logs' frames
    # again. The collector is paused while it runs, then left as it was.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _diff(old, new, ignore=ignore, order=order, rules=rules)
    finally:
        if collecting:
            gc.enable()


def _diff(
    old: Log | str | os.PathLike[str],
    new: Log | str | os.PathLike[str],
    *,
    ignore: Iterable[str],
    order: str,
    rules: Sequence[Rule],
) -> Diff:
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
        ops, runs = _compare_threads(old_side, new_side)
    else:
        everything_old, everything_new = range(len(old_log)), range(len(new_log))
        ops, stretches = _compare_sequences(old_side, new_side, everything_old, everything_new)
        runs = [Run(*stretch) for stretch in stretches]
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
        # The distinct kind+label keys, the position of each event's key among them,
        # and how many events have each key and which is the first.
        keys: FrameKeys = frame_keys(frames, self._parsed_key)
        self.keys, self.key_of, self.key_counts, self.key_firsts = keys
        self._kind_labels: dict[bytes, tuple[str, str]] = {}

    def _stripped_digest(self, frame: bytes, index: int) -> int:
        """The digest of a frame's kept fields, with what the key paths name taken out."""
        fields = self.fields(frame, index)
        canonical = self._canonical
        for path in self.paths:
            k = FIELDS.index(path.field)
            fields[k] = canonical(path.strip(self._decoder.decode(fields[k])))
        return xxhash.xxh3_64_intdigest(b"".join(raw for k, raw in enumerate(fields) if FIELDS[k] not in self.ignore))

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

    def key(self, index: int) -> bytes:
        """The kind+label key of an event."""
        return self.keys[self.key_of[index]]

    def label(self, index: int) -> str:
        return self.kind_label(self.key(index), index)[1]

    def thread(self, index: int) -> int:
        raw = self.fields(self.log.frames[index], index)[FIELDS.index("thread")]
        thread = self._decoder.decode(raw)
        if type(thread) is not int or thread < 1:
            raise CorruptLog(self.log.path, f"event {index} is malformed", intact=index)
        return thread


def _counts(old: _Side, new: _Side) -> dict[str, Counts]:
    # label -> [old calls, new calls, old returns, new returns, ...] in Counts' order.
    per_label: dict[str, list[int]] = {}
    slot = {kind: 2 * k for k, kind in enumerate(COUNT_COLUMNS)}
    for column, side in enumerate((old, new)):
        for key, n, first in zip(side.keys, side.key_counts, side.key_firsts, strict=True):
            kind, label = side.kind_label(key, first)
            per_label.setdefault(label, [0] * 8)[slot[kind] + column] += n
    return {label: Counts(*((n[k], n[k + 1]) for k in range(0, 8, 2))) for label, n in sorted(per_label.items())}


# ---------------------------------------------------------------------------
# Comparing one sequence with another.


def _compare_sequences(
    old: _Side,
    new: _Side,
    old_indices: Sequence[int],
    new_indices: Sequence[int],
) -> tuple[list[Op], list[tuple[int, int, int]]]:
    """The ops of two index sequences, and their aligned equal stretches as
    (old position, new position, length), positions in the two sequences."""
    stretches, moved, gaps = correspond(
        _picked(old.digests, old_indices), _picked(new.digests, new_indices), alignment.EXACT_GAP_CELLS
    )
    ops = [Op("moved", old.label(old_indices[i]), old_indices[i], new_indices[j]) for i, j in moved]
    # Within a gap, events of the same kind and label are aligned with each other:
    # the ones paired changed, the others are missing or extra.
    for left, right in gaps:
        ops.extend(
            _classify_gap(old, new, list(map(old_indices.__getitem__, left)), list(map(new_indices.__getitem__, right)))
        )
    return ops, stretches


def _picked(digests: list[int], indices: Sequence[int]) -> list[int]:
    """The digests of the events at `indices`: the list itself when that is all of them."""
    if indices == range(len(digests)):
        return digests
    return list(map(digests.__getitem__, indices))


def _classify_gap(old: _Side, new: _Side, left: list[int], right: list[int]) -> list[Op]:
    if not right:
        return [Op("missing", old.label(i), i, None) for i in left]
    if not left:
        return [Op("extra", new.label(j), None, j) for j in right]
    match = align(list(map(old.key, left)), list(map(new.key, right)))
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


def _compare_threads(old: _Side, new: _Side) -> tuple[list[Op], list[Run]]:
    threads_old: dict[int, list[int]] = {}
    threads_new: dict[int, list[int]] = {}
    for i in range(len(old.log)):
        threads_old.setdefault(old.thread(i), []).append(i)
    for j in range(len(new.log)):
        threads_new.setdefault(new.thread(j), []).append(j)
    ops: list[Op] = []
    # The aligned pairs of every thread, as log indices.
    pairs: list[tuple[int, int]] = []
    for thread in sorted(threads_old.keys() | threads_new.keys()):
        old_indices, new_indices = threads_old.get(thread, []), threads_new.get(thread, [])
        thread_ops, stretches = _compare_sequences(old, new, old_indices, new_indices)
        ops.extend(thread_ops)
        for i, j, length in stretches:
            pairs.extend(zip(old_indices[i : i + length], new_indices[j : j + length], strict=True))
    pairs.sort(key=itemgetter(1))
    in_old, in_new = [i for i, _ in pairs], [j for _, j in pairs]
    return ops, [Run(*stretch) for stretch in alignment.stretches(in_old, in_new)]


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
