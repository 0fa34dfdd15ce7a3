"""pandas frames and series as arguments, on pandas 2.2.3.

`project/report.py` builds a day's order report as a DataFrame, loads it into a warehouse
and pushes the revenue per SKU as a Series; the tests pin those calls for a day of four
lines and a busy day (5,000). A frame is recorded by its columns' dtypes, its index and
each column's values; its state is a block manager whose repr gives the shapes alone, and
a cache of the columns pandas has read so far. The checks: probe prints `VOLATILE: none`;
the C and pure-Python recorders write the same bytes; a one-cell edit is a changed op
naming the column and the row; an edit deep in the busy day's frame, which is over the
state budget, fails the pin by its digest; an equivalent refactor that reads no column
through pandas' cache passes.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scenario_copies import callpin_in, copy_project, edited_run, probe_verdict, pytest_in, verdict  # noqa: E402

PINS = "tests/test_report.py"
DAY = "baselines/tests/test_report/test_a_day_is_loaded.cpin"
BUSY = "baselines/tests/test_report/test_a_busy_day_is_loaded.cpin"
BUSY_NOTE = "objects over the 4096-byte state budget: pandas.core.frame.DataFrame by identity and a digest"
# (what, file, old text, new text, log, what the diff must say; None: the pin passes)
CASES = (
    ("one cell of the day's frame", PINS, '("B-02", 1, 12.0,', '("B-02", 2, 12.0,', DAY,
     "args[1].data.qty[1]: 1 → 2"),
    ("one line deep in the busy day", PINS, "for i in range(5000)]",
     "for i in range(5000)]; BUSY[4000] = ('S-00', 9, 1.25, '2024-03-02 08:00')", BUSY, "digest"),
    ("a refactor that reads no column through pandas' cache", "report.py",
     'frame["revenue"] = frame["qty"] * frame["price"]',
     "frame = frame.assign(revenue=frame.qty * frame.price)", DAY, None),
)  # fmt: skip


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-pandas-") as name:
        folder = Path(name)
        project = copy_project(HERE / "project", folder, "project")
        written = pytest_in(project, PINS, "--callpin-mode=new")
        checks.append(("the pins pass and write their baselines", written.returncode == 0))
        checks.append(("the busy day's note says its frame is over the budget", BUSY_NOTE in written.stdout))
        for log in (DAY, BUSY):
            for line in callpin_in(project, "show", log).splitlines()[1:3]:
                print(f"  {line[:160]}")

        pure = copy_project(HERE / "project", folder, "pure")
        pytest_in(pure, PINS, "--callpin-mode=new", CALLPIN_PURE_PYTHON="1")
        same = all((project / log).read_bytes() == (pure / log).read_bytes() for log in (DAY, BUSY))
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        found_verdict = probe_verdict(project, PINS)
        print(f"probe {PINS}: {found_verdict}")
        checks.append(("probe is volatile nowhere", found_verdict == "VOLATILE: none"))

        for index, (what, path, old, new, log, expected) in enumerate(CASES):
            copy = copy_project(HERE / "project", folder, f"edit-{index}")
            code, found = edited_run(copy, path, old, new, log, PINS)
            print(f"{what}: pytest exit {code}; {found[0][:150] if found else ''}")
            if expected is None:
                checks.append((f"{what} passes its pin", code == 0))
            else:
                named = any(expected in line and "args[1]" in line for line in found)
                checks.append((f"{what} fails its pin, named on the load call", code == 1 and named))
    return verdict(checks)


if __name__ == "__main__":
    sys.exit(main())
