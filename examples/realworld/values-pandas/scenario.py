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

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scenario_copies import child_environment  # noqa: E402
from scenario_copies import copy_project as copy_into  # noqa: E402

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
CALLPIN = [sys.executable, "-m", "callpin"]
PINS = "tests/test_report.py"
DAY = "baselines/tests/test_report/test_a_day_is_loaded.cpin"
BUSY = "baselines/tests/test_report/test_a_busy_day_is_loaded.cpin"
BUSY_NOTE = "objects over the 4096-byte state budget: pandas.core.frame.DataFrame by identity and a digest"


def run(project: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PYTEST, *args], cwd=project, env=child_environment(**extra), capture_output=True, text=True, check=False
    )


def callpin(project: Path, *args: str) -> str:
    done = subprocess.run([*CALLPIN, *args], cwd=project, capture_output=True, text=True, check=False)
    return done.stdout


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-pandas-") as name:
        folder = Path(name)
        project = copy_into(HERE / "project", folder, "project")
        written = run(project, PINS, "--callpin-mode=new")
        checks.append(("the pins pass and write their baselines", written.returncode == 0))
        checks.append(("the busy day's note says its frame is over the budget", BUSY_NOTE in written.stdout))
        for log in (DAY, BUSY):
            for line in callpin(project, "show", log).splitlines()[1:3]:
                print(f"  {line[:160]}")

        pure = copy_into(HERE / "project", folder, "pure")
        run(pure, PINS, "--callpin-mode=new", CALLPIN_PURE_PYTHON="1")
        same = all((project / log).read_bytes() == (pure / log).read_bytes() for log in (DAY, BUSY))
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        probed = subprocess.run(
            [*CALLPIN, "probe", "--jobs", "2", "--", *PYTEST, PINS],
            cwd=project,
            env=child_environment(),
            capture_output=True,
            text=True,
            check=False,
        )
        verdict = probed.stderr.strip().splitlines()[-1] if probed.stderr.strip() else probed.stdout[-200:]
        print(f"probe {PINS}: {verdict}")
        checks.append(("probe is volatile nowhere", verdict == "VOLATILE: none"))

        # (what, file, old text, new text, log, what the diff must say; None: the pin passes)
        cases = (
            ("one cell of the day's frame", PINS, '("B-02", 1, 12.0,', '("B-02", 2, 12.0,', DAY,
             "args[1].data.qty[1]: 1 → 2"),
            ("one line deep in the busy day", PINS, "for i in range(5000)]",
             "for i in range(5000)]; BUSY[4000] = ('S-00', 9, 1.25, '2024-03-02 08:00')", BUSY, "digest"),
            ("a refactor that reads no column through pandas' cache", "report.py",
             'frame["revenue"] = frame["qty"] * frame["price"]',
             "frame = frame.assign(revenue=frame.qty * frame.price)", DAY, None),
        )  # fmt: skip
        for index, (what, path, old, new, log, expected) in enumerate(cases):
            copy = copy_into(HERE / "project", folder, f"edit-{index}")
            run(copy, PINS, "--callpin-mode=new")
            target = copy / path
            text = target.read_text(encoding="utf-8")
            assert text.count(old) == 1, (path, old)
            target.write_text(text.replace(old, new), encoding="utf-8")
            drift = run(copy, PINS)
            if expected is None:
                print(f"{what}: pytest exit {drift.returncode}")
                checks.append((f"{what} passes its pin", drift.returncode == 0))
                continue
            diffed = callpin(copy, "diff", log, log + ".received")
            found = [line.strip() for line in diffed.splitlines() if "→" in line and "args[1]" in line]
            print(f"{what}: pytest exit {drift.returncode}; {found[0][:150] if found else diffed[-200:]}")
            named = any(expected in line for line in found)
            checks.append((f"{what} fails its pin, named on the load call", drift.returncode == 1 and named))

    failed = [name for name, held in checks if not held]
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
