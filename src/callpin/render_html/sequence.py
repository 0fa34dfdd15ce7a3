"""Place a log's events on the lifelines of a sequence diagram: which lanes each arrow joins.

Lane 0 is the code under test; each collaborator module gets the next lane in order of
first appearance (over every log placed together, so two sides of a diff share
their lanes). A call runs from the lane of the call it is nested in (by depth,
within its thread) to its module; a return or raise runs back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

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
    return placed.lanes, [[steps[index] for index in range(len(log))] for log, steps in zip(logs, placed.steps, strict=True)]


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
        # The lane of each label, looked up once per distinct label; the kind and
        # lane of each distinct key (kind byte + encoded label).
        self.lane_of: dict[str, int] = {}
        self.keyed: dict[bytes, tuple[str, int] | None] = {}

    def run(self) -> None:
        # Per thread, the calls still open as (depth, lane), innermost last. Without
        # recorded outcomes a call stays open until its thread's next event at the
        # same depth or shallower.
        open_calls: dict[int, list[tuple[int, int]]] = {}
        # The bars of each distinct stack of open calls, worked out once.
        known: dict[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] = {}
        frames = self.log.frames
        keys, thread_bytes, depth_bytes = frame_heads(frames)
        keyed = self.keyed
        shown, starts, steps = self.shown, self.starts, self.steps
        for index, key in enumerate(keys):
            if index in starts:
                self.stacks[index] = tuple((t, tuple(s)) for t, s in open_calls.items() if s)
            event: Event | None = None
            info: tuple[str, int] | None = None
            if index in shown:
                event = self._event(index)
            elif key is not None:
                info = keyed.get(key, _UNKNOWN)
                if info is _UNKNOWN:
                    info = keyed[key] = self._key_info(key)
                if info is None:
                    event = self._readable_event(index)
            else:
                event = self._readable_event(index)
            if event is not None:
                kind, thread, depth = event.kind, event.thread, event.depth
                lane = 0 if kind == "mark" else self._lane(event.label)
            elif info is not None:
                kind, lane = info
                thread, depth = thread_bytes[index], depth_bytes[index]
            else:
                continue
            stack = open_calls.get(thread)
            if stack is None:
                stack = open_calls[thread] = []
                self.threads.add(thread)
            if kind == "mark" or kind == "call":
                while stack and stack[-1][0] >= depth:
                    stack.pop()
                caller = stack[-1][1] if stack else 0
                if kind == "call":
                    stack.append((depth, lane))
                    source, target = caller, lane
                else:
                    source = target = caller
                if event is not None and index in shown:
                    steps[index] = Step(index, frames[index], event, source, target, _bars(stack, known))
                continue
            while stack and stack[-1][0] > depth:
                stack.pop()
            returning = bool(stack) and stack[-1][0] == depth
            below = stack[:-1] if returning else stack
            caller = below[-1][1] if below else 0
            if event is not None and index in shown:
                steps[index] = Step(index, frames[index], event, lane, caller, _bars(stack, known))
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

    def _key_info(self, key: bytes) -> tuple[str, int] | None:
        """The kind and lane of a key; None when its label does not decode to a str."""
        try:
            label = self.decoder.decode(key[1:])
        except CallpinError:
            return None
        if type(label) is not str:
            return None
        kind = KINDS[key[0]]
        return kind, (0 if kind == "mark" else self._lane(label))

    def _lane(self, label: str) -> int:
        lane = self.lane_of.get(label, -1)
        if lane < 0:
            lane = self.lane_of[label] = self.lanes.setdefault(module_of(label), len(self.lanes))
        return lane


_UNKNOWN: Final = ("", -1)


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
