"""Entering and leaving a recording block: callpin against mock.patch of the same places.

A block spies 10 module-level functions of one collaborator module, while 500 or 5,000
other modules of 60 globals each are loaded (a large application's `sys.modules`); 10 of
those modules (the code under test) imported three of the collaborator's functions by
name, 30 aliases callpin finds and patches. Each candidate enters and leaves an empty block; the rounds are
interleaved (the order rotates) and the median microseconds per block is reported, with
`aliases=False` beside the default.

`mock.patch` patches the 10 named places only (it never looks for aliases), so the fair
comparison for the alias search is the difference between callpin's two rows.
"""

from __future__ import annotations

import statistics
import sys
import time
import types
from collections.abc import Callable
from contextlib import ExitStack
from unittest import mock

from targets import check

import callpin

ROUNDS = 9
BLOCKS = 50
TARGETS = 10
GLOBALS = 60
ALIAS_MODULES = 10
TARGET_US = 1000.0  # at most 1 ms per block with 5,000 modules


def load_modules(count: int) -> list[str]:
    """The collaborator module and `count` others; the names of the 10 targets."""
    billing = types.ModuleType("bench_blocks_billing")
    for index in range(TARGETS):
        exec(f"def call_{index}(x):\n    return x\n", billing.__dict__)
    sys.modules[billing.__name__] = billing
    functions = [getattr(billing, f"call_{index}") for index in range(TARGETS)]
    for number in range(count):
        module = types.ModuleType(f"bench_blocks_m{number}")
        namespace = module.__dict__
        for index in range(GLOBALS):
            namespace[f"value_{index}"] = index
        if number < ALIAS_MODULES:
            for index, function in enumerate(functions[:3]):
                namespace[f"call_{index}"] = function
        sys.modules[module.__name__] = module
    return [f"{billing.__name__}.call_{index}" for index in range(TARGETS)]


def unload() -> None:
    for name in [name for name in sys.modules if name.startswith("bench_blocks_")]:
        del sys.modules[name]


def time_blocks(enter_exit: Callable[[], None]) -> float:
    start = time.perf_counter_ns()
    for _ in range(BLOCKS):
        enter_exit()
    return (time.perf_counter_ns() - start) / BLOCKS / 1000


def main() -> int:
    print(f"enter + exit of an empty block, {TARGETS} targets, modules of {GLOBALS} globals; median of {ROUNDS} rounds")
    print(f"{'modules':>8}  {'candidate':<28} {'us/block':>10}")
    for count in (500, 5000):
        targets = load_modules(count)

        def callpin_block(aliases: bool = True, targets: list[str] = targets) -> None:
            with callpin.record(spy=targets, aliases=aliases):
                pass

        def mock_block(targets: list[str] = targets) -> None:
            with ExitStack() as stack:
                for target in targets:
                    stack.enter_context(mock.patch(target))

        candidates: dict[str, Callable[[], None]] = {
            "callpin": callpin_block,
            "callpin aliases=False": lambda: callpin_block(False),
            "mock.patch (no aliases)": mock_block,
        }
        samples: dict[str, list[float]] = {name: [] for name in candidates}
        names = list(candidates)
        for round_number in range(ROUNDS):
            order = names[round_number % len(names) :] + names[: round_number % len(names)]
            for name in order:
                samples[name].append(time_blocks(candidates[name]))
        for name in names:
            median = statistics.median(samples[name])
            print(f"{count:>8}  {name:<28} {median:>10.1f}")
            if name.startswith("callpin") and count == 5000:
                check(f"block enter + exit, 5,000 modules, {name}", median, TARGET_US, at_most=True, unit=" µs")
        unload()
    return 0


if __name__ == "__main__":
    sys.exit(main())
