"""A benchmark's targets: each figure beside its bound, gathered by run.py into one table.

A benchmark calls `check` for every figure that has a target; it prints nothing itself.
When run by `make bench` (benchmarks/run.py), the file named by CALLPIN_BENCH_TARGETS
collects one JSON line per check and run.py prints them all at the end, so one run
shows every target, its figure and whether it is met. A missed target is reported,
never a failed run: the figure is the point.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

ENV = "CALLPIN_BENCH_TARGETS"


@dataclass(frozen=True)
class Target:
    figure: str
    measured: float
    bound: float
    at_most: bool
    unit: str

    @property
    def met(self) -> bool:
        return self.measured <= self.bound if self.at_most else self.measured >= self.bound

    def row(self) -> str:
        sign = "≤" if self.at_most else "≥"
        return (
            f"| {self.figure} | {_number(self.measured)}{self.unit} | {sign} {_number(self.bound)}{self.unit} "
            f"| {'met' if self.met else 'NOT met'} |"
        )


def check(figure: str, measured: float, bound: float, *, at_most: bool, unit: str = "") -> bool:
    """Record one figure against its target (for run.py's table); True when it is met."""
    target = Target(figure, measured, bound, at_most, unit)
    path = os.environ.get(ENV)
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(asdict(target)) + "\n")
    return target.met


def table(path: Path) -> list[str]:
    """The markdown table of every target recorded in `path`, then one line of totals."""
    targets = [Target(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
    if not targets:
        return ["no benchmark recorded a target"]
    missed = [target for target in targets if not target.met]
    return [
        "| figure | measured | target | |",
        "|---|---:|---:|---|",
        *(target.row() for target in targets),
        "",
        f"{len(targets) - len(missed)} of {len(targets)} targets met"
        + (f"; not met: {', '.join(target.figure for target in missed)}" if missed else ""),
    ]


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.0f}"
