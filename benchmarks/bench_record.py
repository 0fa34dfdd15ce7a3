"""Per recorded call: callpin (C and pure Python) against a bare call, wrapt, mock and a naive spy.

The call is `billing.charge_card('card_A', 1500, currency='usd', idempotency_key=key)`
through the module attribute, as code under test makes it, with a fresh uuid4 for every
call (all generated before the round's timing starts, so their cost is in no figure;
only the candidates that read the key pay for fetching it from memory). Each candidate
runs in interleaved rounds (the order rotates every round) and the median ns per call
is reported, so the ratios compare figures taken side by side under the same load.

The pure-Python figures come from a child process with CALLPIN_PURE_PYTHON=1 that runs
every candidate the same way: its ratio against mock is taken inside that one process.
"""

from __future__ import annotations

import functools
import json
import os
import statistics
import subprocess
import sys
import time
import types
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any
from unittest import mock

import wrapt
from targets import check

import callpin

ROUNDS = 9
CALLS = 20_000
MODULE = "bench_record_billing"

# Targets (the performance issue): mock / callpin at least 10x on the C path (5x required),
# callpin / wrapt at most 1.5x, and the pure-Python path at least 2x cheaper than mock.
MOCK_OVER_C = 10.0
MOCK_OVER_C_REQUIRED = 5.0
C_OVER_WRAPT = 1.5
MOCK_OVER_PYTHON = 2.0


def make_billing() -> types.ModuleType:
    module = types.ModuleType(MODULE)
    exec(
        "def charge_card(card, amount, currency='usd', idempotency_key=None):\n    return None\n",
        module.__dict__,
    )
    sys.modules[MODULE] = module
    return module


BILLING = make_billing()
ORIGINAL = BILLING.charge_card


@contextmanager
def replaced(wrapper: Any) -> Iterator[None]:
    BILLING.charge_card = wrapper
    try:
        yield
    finally:
        BILLING.charge_card = ORIGINAL


def bare() -> AbstractContextManager[Any]:
    return nullcontext()


def wrapt_pass_through() -> AbstractContextManager[Any]:
    def passing(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
        return wrapped(*args, **kwargs)

    return replaced(wrapt.FunctionWrapper(ORIGINAL, passing))


def naive_spy() -> AbstractContextManager[Any]:
    calls: list[dict[str, Any]] = []

    @functools.wraps(ORIGINAL)
    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append({"label": "charge_card", "args": args, "kwargs": kwargs})
        return ORIGINAL(*args, **kwargs)

    return replaced(spy)


def mock_wraps() -> AbstractContextManager[Any]:
    return mock.patch.object(BILLING, "charge_card", wraps=ORIGINAL)


def callpin_record() -> AbstractContextManager[Any]:
    return callpin.record(spy=[f"{MODULE}.charge_card"])


CANDIDATES: dict[str, Callable[[], AbstractContextManager[Any]]] = {
    "bare call": bare,
    "wrapt pass-through": wrapt_pass_through,
    "naive functools.wraps spy": naive_spy,
    "mock.patch.object(wraps=)": mock_wraps,
    "callpin": callpin_record,
}


def run_round(make: Callable[[], AbstractContextManager[Any]]) -> float:
    keys = [uuid.uuid4() for _ in range(CALLS)]
    billing = BILLING
    with make():
        start = time.perf_counter_ns()
        for key in keys:
            billing.charge_card("card_A", 1500, currency="usd", idempotency_key=key)
        elapsed = time.perf_counter_ns() - start
    return elapsed / CALLS


def medians() -> dict[str, float]:
    """Median ns per call of every candidate over interleaved rounds, in this process."""
    samples: dict[str, list[float]] = {name: [] for name in CANDIDATES}
    names = list(CANDIDATES)
    for make in CANDIDATES.values():  # warm-up: imports, caches, first allocations
        run_round(make)
    for index in range(ROUNDS):
        for name in names[index % len(names) :] + names[: index % len(names)]:
            samples[name].append(run_round(CANDIDATES[name]))
    return {name: statistics.median(values) for name, values in samples.items()}


def pure_python_medians() -> dict[str, float]:
    """The same medians from a child process that runs callpin's pure-Python path."""
    child = subprocess.run(
        [sys.executable, __file__, "--medians"],
        env={**os.environ, "CALLPIN_PURE_PYTHON": "1"},
        capture_output=True,
        text=True,
        check=True,
    )
    measured: dict[str, Any] = json.loads(child.stdout)
    if measured["implementation"] != "python":
        raise RuntimeError(f"the child ran {measured['implementation']}, not pure Python")
    return dict(measured["medians"])


def main() -> None:
    here = medians()
    python = pure_python_medians() if callpin.IMPLEMENTATION == "c" else here
    c = here["callpin"] if callpin.IMPLEMENTATION == "c" else None

    print(
        f"python {sys.version.split()[0]}, callpin {callpin.__version__}, "
        f"wrapt {wrapt.__version__}; {CALLS:,} calls per round, {ROUNDS} interleaved rounds"
    )
    print()
    print("ns per call (median of interleaved rounds)")
    print()
    print("| candidate | C process | pure-Python process |")
    print("|---|---:|---:|")
    for name in CANDIDATES:
        shown = f"callpin ({callpin.IMPLEMENTATION} / pure Python)" if name == "callpin" else name
        mine = f"{here[name]:,.0f}" if c is not None or name != "callpin" else "n/a"
        print(f"| {shown} | {mine} | {python[name]:,.0f} |")
    print()
    mock_name = "mock.patch.object(wraps=)"
    if c is not None:
        over_c = here[mock_name] / c
        print(f"C: mock / callpin {over_c:.2f}x, callpin / wrapt {c / here['wrapt pass-through']:.2f}x")
        check("recorded call, C: mock / callpin", over_c, MOCK_OVER_C, at_most=False, unit="x")
        check("recorded call, C: mock / callpin (required)", over_c, MOCK_OVER_C_REQUIRED, at_most=False, unit="x")
        check("recorded call, C: callpin / wrapt", c / here["wrapt pass-through"], C_OVER_WRAPT, at_most=True, unit="x")
    else:
        print("C path: the C speedups are not live; its targets are not measured")
    over_python = python[mock_name] / python["callpin"]
    print(f"pure Python: mock / callpin {over_python:.2f}x")
    check("recorded call, pure Python: mock / callpin", over_python, MOCK_OVER_PYTHON, at_most=False, unit="x")


if __name__ == "__main__":
    if sys.argv[1:] == ["--medians"]:
        print(json.dumps({"implementation": callpin.IMPLEMENTATION, "medians": medians()}))
    else:
        main()
