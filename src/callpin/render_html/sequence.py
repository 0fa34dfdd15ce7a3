"""Place a log's events on the lifelines of a sequence diagram: which lanes each arrow joins.

Lane 0 is the code under test; each collaborator module gets the next lane in order of
first appearance (over every log placed together, so two sides of a diff share
their lanes). A call runs from the lane of the call it is nested in (by depth,
within its thread) to its module; a return or raise runs back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from ..event import Event
    from ..logfile import Log

CALLER: Final = "code under test"


class Step(NamedTuple):
    """One event placed in the diagram: the lanes its arrow joins and the open calls.

    `bars` holds, for each call of the event's thread still open at this event,
    its lane and how many open calls below it share that lane.
    """

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
    first log's before the second's.
    """
    lanes = {CALLER: 0}
    return lanes, [_steps(log, lanes) for log in logs]


def _steps(log: Log, lanes: dict[str, int]) -> list[Step]:
    # Per thread, the calls still open as (depth, lane), innermost last. Without
    # recorded outcomes a call stays open until its thread's next event at the
    # same depth or shallower.
    open_calls: dict[int, list[tuple[int, int]]] = {}
    steps: list[Step] = []
    append = steps.append
    for event in log:
        stack = open_calls.setdefault(event.thread, [])
        depth = event.depth
        kind = event.kind
        if kind == "mark":
            while stack and stack[-1][0] >= depth:
                stack.pop()
            caller = stack[-1][1] if stack else 0
            append(Step(event, caller, caller, _bars(stack)))
            continue
        target = lanes.setdefault(module_of(event.label), len(lanes))
        if kind == "call":
            while stack and stack[-1][0] >= depth:
                stack.pop()
            caller = stack[-1][1] if stack else 0
            stack.append((depth, target))
            append(Step(event, caller, target, _bars(stack)))
            continue
        while stack and stack[-1][0] > depth:
            stack.pop()
        returning = bool(stack) and stack[-1][0] == depth
        below = stack[:-1] if returning else stack
        caller = below[-1][1] if below else 0
        append(Step(event, target, caller, _bars(stack)))
        if returning:
            stack.pop()
    return steps


def _bars(stack: list[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    if not stack:
        return ()
    placed: list[tuple[int, int]] = []
    for _, lane in stack:
        placed.append((lane, sum(1 for other, _ in placed if other == lane)))
    return tuple(placed)
