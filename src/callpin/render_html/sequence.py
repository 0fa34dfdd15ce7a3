"""Place a log's events on the lifelines of a sequence diagram: which lanes each arrow joins.

Lane 0 is the code under test; each collaborator module gets the next lane in order of
first appearance (over every log placed together, so two sides of a diff share
their lanes). A call runs from the lane of the call it is nested in (by depth,
within its thread) to its module; a return or raise runs back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

from .. import codec
from ..event import decode_event

if TYPE_CHECKING:
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

    Each log is read once; lanes are numbered as their modules first appear, the
    first log's before the second's. A frame that recurs (in one log, or in both
    sides of a diff) is decoded once.
    """
    lanes = {CALLER: 0}
    decoded: dict[bytes, Event] = {}
    return lanes, [_steps(log, lanes, decoded) for log in logs]


def _steps(log: Log, lanes: dict[str, int], decoded: dict[bytes, Event]) -> list[Step]:
    # Per thread, the calls still open as (depth, lane), innermost last. Without
    # recorded outcomes a call stays open until its thread's next event at the
    # same depth or shallower.
    open_calls: dict[int, list[tuple[int, int]]] = {}
    steps: list[Step] = []
    append = steps.append
    decoder = codec.Decoder(log.path)
    # The bars of each distinct stack of open calls, worked out once.
    known: dict[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]] = {}
    # The lane of each label, looked up once per distinct label.
    lane_of: dict[str, int] = {}
    for index, frame in enumerate(log.frames):
        event = decoded.get(frame)
        if event is None:
            event = decoded[frame] = decode_event(frame, index, decoder)
        stack = open_calls.setdefault(event.thread, [])
        depth = event.depth
        kind = event.kind
        if kind == "mark":
            while stack and stack[-1][0] >= depth:
                stack.pop()
            caller = stack[-1][1] if stack else 0
            append(Step(index, frame, event, caller, caller, _bars(stack, known)))
            continue
        target = lane_of.get(event.label, -1)
        if target < 0:
            target = lane_of[event.label] = lanes.setdefault(module_of(event.label), len(lanes))
        if kind == "call":
            while stack and stack[-1][0] >= depth:
                stack.pop()
            caller = stack[-1][1] if stack else 0
            stack.append((depth, target))
            append(Step(index, frame, event, caller, target, _bars(stack, known)))
            continue
        while stack and stack[-1][0] > depth:
            stack.pop()
        returning = bool(stack) and stack[-1][0] == depth
        below = stack[:-1] if returning else stack
        caller = below[-1][1] if below else 0
        append(Step(index, frame, event, target, caller, _bars(stack, known)))
        if returning:
            stack.pop()
    return steps


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
