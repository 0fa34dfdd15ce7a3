"""Place a log's events on the lifelines of a sequence diagram: which lanes each arrow joins.

Lane 0 is the code under test; each collaborator module gets the next lane in order of
first appearance (over every log placed together, so two sides of a diff share
their lanes). A call runs from the lane of the call it is nested in (by depth,
within its thread) to its module; a return or raise runs back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple, cast

from .. import codec
from ..errors import CallpinError, CorruptLog
from ..event import KINDS, decode_event
from .frame_heads import frame_heads

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from ..event import Event
    from ..logfile import Log

CALLER: Final = "code under test"


class Step(NamedTuple):
    """One event placed in the diagram: the lanes its arrow joins and the open calls.

    `bars` holds, for each call of the event's thread still open at this event,
    its lane and how many open calls below it share that lane. `event` is the
    decoded `frame` (equal frames share one Event, whose own index may be another
    of their indices: `index` is this one's).
    """

    index: int  # type: ignore[assignment]  # shadows tuple.index, as Event.index does
    frame: bytes
    event: Event
    source: int
    target: int
    bars: tuple[tuple[int, int], ...]


def module_of(label: str) -> str:
    """The lifeline of a label: its module part (`billing` of `billing.charge_card`)."""
    return label.rpartition(".")[0] or label


def place(*logs: Log) -> tuple[dict[str, int], list[list[Step]]]:
    """The lanes (name → number) and, per log, the step of each of its events.

    Lanes are numbered as their modules first appear, the first log's before the
    second's. A frame that recurs (in one log, or in both sides of a diff) is
    decoded once.
    """
    placed = outline(logs, [range(len(log)) for log in logs], [() for _ in logs])
    return placed.lanes, [
        [steps[index] for index in range(len(log))] for log, steps in zip(logs, placed.steps, strict=True)
    ]


# The calls still open at an event, per thread: (thread, ((depth, lane), ...)), innermost last.
Stacks = tuple[tuple[int, tuple[tuple[int, int], ...]], ...]


class Outline(NamedTuple):
    """Where events stand: the lanes, the steps asked for, the open calls before the
    events asked for, and every thread seen."""

    lanes: dict[str, int]
    steps: list[dict[int, Step]]
    stacks: list[dict[int, Stacks]]
    threads: set[int]


def outline(logs: Sequence[Log], shown: Sequence[Collection[int]], starts: Sequence[Collection[int]]) -> Outline:
    """Place every event of `logs` (in order, as `place` does), keeping per log the
    steps of its `shown` events and the open calls just before each of its `starts`.

    Only the shown events are decoded: every other frame is read for its kind,
    label, thread and depth alone (frame_heads), so the events a page leaves to its
    script cost no decoding here. A frame neither shown nor readable that way is
    decoded; one that cannot be is left out of the placing (the page's script
    shows it as unreadable).
    """
    lanes = {CALLER: 0}
    decoded: dict[bytes, Event] = {}
    threads: set[int] = set()
    steps: list[dict[int, Step]] = []
    stacks: list[dict[int, Stacks]] = []
    for log, wanted, marked in zip(logs, shown, starts, strict=True):
        placed = _Placing(log, lanes, decoded, set(wanted), set(marked))
        placed.run()
        steps.append(placed.steps)
        stacks.append(placed.stacks)
        threads |= placed.threads
    return Outline(lanes, steps, stacks, threads)


class _Placing:
    """One log's pass: open calls per thread, lanes by label, the steps and stacks kept."""

    def __init__(
        self, log: Log, lanes: dict[str, int], decoded: dict[bytes, Event], shown: set[int], starts: set[int]
    ) -> None:
        self.log = log
        self.lanes = lanes
        self.decoded = decoded
        self.shown = shown
        self.starts = starts
        self.decoder = codec.Decoder(log.path)
        self.steps: dict[int, Step] = {}
        self.stacks: dict[int, Stacks] = {}
        self.threads: set[int] = set()
        # The lane of each label, looked up once per distinct label.
        self.lane_of: dict[str, int] = {}
        # Per thread, the calls still open as (depth, lane), innermost last. Without
        # recorded outcomes a call stays open until its thread's next event at the
        # same depth or shallower.
        self.open_calls: dict[int, list[tuple[int, int]]] = {}
        # The bars of each distinct stack of open calls, worked out once.
        self.known: dict[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] = {}

    def run(self) -> None:
        frames = self.log.frames
        keys, thread_bytes, depth_bytes, unread = frame_heads(frames)
        labels = {key: self._label(key) for key in dict.fromkeys(keys) if key is not None}
        misread = {key for key, label in labels.items() if label is None}
        if misread:
            unread |= {index for index, key in enumerate(keys) if key in misread}
        # Events read whole: those shown, and those whose heads could not be read
        # (None: not even decoded, so left out of the placing).
        events: dict[int, Event | None] = {index: self._event(index) for index in self.shown}
        events.update((index, self._readable_event(index)) for index in unread - self.shown)
        self._number_lanes(keys, labels, events)
        self.info = {
            key: (KINDS[key[0]], 0 if key[0] == _MARK else self.lane_of[label])
            for key, label in labels.items()
            if label is not None
        }
        # Every index outside `unread` has a key, and only those are placed from their keys.
        self.keys = cast("list[bytes]", keys)
        self.thread_bytes, self.depth_bytes = thread_bytes, depth_bytes
        self.threads.update(set(thread_bytes) - {0} if not unread else self._read_threads(unread))
        done = 0
        for index in sorted(self.starts | events.keys()):
            self._pass(done, index)
            if index in self.starts:
                self.stacks[index] = tuple((t, tuple(s)) for t, s in self.open_calls.items() if s)
            event = events.get(index)
            if event is not None:
                self.threads.add(event.thread)
                lane = 0 if event.kind == "mark" else self.lane_of[event.label]
                self._place(index, event, event.kind, lane, event.thread, event.depth)
            elif index not in events:
                self._place(index, None, *self.info[self.keys[index]], thread_bytes[index], depth_bytes[index])
            done = index + 1
        self._pass(done, len(keys))

    def _number_lanes(
        self, keys: list[bytes | None], labels: dict[bytes, str | None], events: dict[int, Event | None]
    ) -> None:
        """Give each module its lane in order of first appearance (of an event that is not a mark)."""
        firsts = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1), strict=True))
        seen = [(firsts[key], label) for key, label in labels.items() if label is not None and key[0] != _MARK]
        seen.extend(
            (index, event.label) for index, event in events.items() if event is not None and event.kind != "mark"
        )
        for _, label in sorted(seen):
            if label not in self.lane_of:
                self.lane_of[label] = self.lanes.setdefault(module_of(label), len(self.lanes))

    def _read_threads(self, unread: set[int]) -> set[int]:
        threads = bytearray(self.thread_bytes)
        for index in unread:
            threads[index] = 0
        return set(threads) - {0}

    def _pass(self, start: int, stop: int) -> None:
        """Move the open calls over events start..stop-1, which keep no step."""
        if start >= stop:
            return
        threads = self.thread_bytes[start:stop]
        depths = self.depth_bytes[start:stop]
        keys, info = self.keys, self.info
        # After an event at depth 0 its thread has no open call but that event's own
        # (a call): in one thread's stretch only the events after the last such one count.
        if threads.count(threads[0]) == len(threads):
            last = depths.rfind(0)
            if last >= 0:
                kind, lane = info[keys[start + last]]
                self._stack(threads[0])[:] = [(0, lane)] if kind == "call" else []
                start += last + 1
                threads, depths = threads[last + 1 :], depths[last + 1 :]
        # The moves of _place without its step, in one loop: it runs once per event
        # of every stretch a page leaves to its script.
        open_calls = self.open_calls
        for key, thread, depth in zip(keys[start:stop], threads, depths, strict=True):
            kind, lane = info[key]
            stack = open_calls.get(thread) or self._stack(thread)
            if kind == "call":
                while stack and stack[-1][0] >= depth:
                    stack.pop()
                stack.append((depth, lane))
            elif kind == "mark":
                while stack and stack[-1][0] >= depth:
                    stack.pop()
            else:
                while stack and stack[-1][0] > depth:
                    stack.pop()
                if stack and stack[-1][0] == depth:
                    stack.pop()

    def _stack(self, thread: int) -> list[tuple[int, int]]:
        return self.open_calls.setdefault(thread, [])

    def _place(self, index: int, event: Event | None, kind: str, lane: int, thread: int, depth: int) -> None:
        """Move the open calls over one event, keeping its step when it is shown."""
        stack = self._stack(thread)
        if kind == "mark" or kind == "call":
            while stack and stack[-1][0] >= depth:
                stack.pop()
            caller = stack[-1][1] if stack else 0
            if kind == "call":
                stack.append((depth, lane))
                source, target = caller, lane
            else:
                source = target = caller
            if event is not None and index in self.shown:
                self.steps[index] = Step(index, self.log.frames[index], event, source, target, _bars(stack, self.known))
            return
        while stack and stack[-1][0] > depth:
            stack.pop()
        returning = bool(stack) and stack[-1][0] == depth
        below = stack[:-1] if returning else stack
        caller = below[-1][1] if below else 0
        if event is not None and index in self.shown:
            self.steps[index] = Step(index, self.log.frames[index], event, lane, caller, _bars(stack, self.known))
        if returning:
            stack.pop()

    def _event(self, index: int) -> Event:
        frame = self.log.frames[index]
        event = self.decoded.get(frame)
        if event is None:
            event = self.decoded[frame] = decode_event(frame, index, self.decoder)
        return event

    def _readable_event(self, index: int) -> Event | None:
        try:
            return self._event(index)
        except CorruptLog:
            return None

    def _label(self, key: bytes) -> str | None:
        """The label of a key; None when it does not decode to a str."""
        try:
            label = self.decoder.decode(key[1:])
        except CallpinError:
            return None
        return label if type(label) is str else None


_MARK: Final = KINDS.index("mark")


def _bars(
    stack: list[tuple[int, int]], known: dict[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]
) -> tuple[tuple[int, int], ...]:
    if not stack:
        return ()
    key = tuple(stack)
    found = known.get(key)
    if found is not None:
        return found
    placed: list[tuple[int, int]] = []
    for _, lane in stack:
        placed.append((lane, sum(1 for other, _ in placed if other == lane)))
    known[key] = tuple(placed)
    return known[key]
