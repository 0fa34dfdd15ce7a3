"""numpy arrays as arguments, on numpy 2.1.3.

`project/stats.py` pushes a float array and a masked array to a sink; the tests pin
those calls for a short series (5 readings) and a long one (2,000). An array is
recorded by its dtype, shape and values (its repr summarizes past 1,000 elements, rounds
to 8 digits and follows the print options another test may set). The checks: probe
prints `VOLATILE: none`; the C and pure-Python recorders write the same bytes; the logs
are the same after a test set numpy's print options; a one-reading edit of the short
series is a changed op naming the element; a one-reading edit deep in the long series,
which the repr would summarize away, fails the pin; an edit below the repr's 8 digits
fails it too.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from scenario_copies import callpin_in, copy_project, edited_run, probe_verdict, pytest_in, verdict  # noqa: E402

PINS = "tests/test_publish.py"
SHORT = "baselines/tests/test_publish/test_a_short_series_is_pushed.cpin"
LONG = "baselines/tests/test_publish/test_a_long_series_is_pushed.cpin"
CASES = (
    ("one reading of the short series", "SHORT = [3.5, -1.0, 2.25, 8.0, 0.125]",
     "SHORT = [3.5, -1.0, 2.25, 8.5, 0.125]", SHORT, "args[0].values[3]: 8.0 → 8.5"),
    ("one reading deep in the long series", "LONG = [float(i % 17) for i in range(2000)]",
     "LONG = [float(i % 17) for i in range(2000)]; LONG[1500] = 99.0", LONG, "digest"),
    ("a reading below the repr's 8 digits", "SHORT = [3.5, -1.0, 2.25, 8.0, 0.125]",
     "SHORT = [3.5, -1.0, 2.25, 8.0000000001, 0.125]", SHORT, "args[0].values[3]: 8.0 → 8.0000000001"),
    ("a reading turned positive (unmasked)", "SHORT = [3.5, -1.0, 2.25, 8.0, 0.125]",
     "SHORT = [3.5, 1.0, 2.25, 8.0, 0.125]", SHORT, "args[0]._mask.values[1]: True → False"),
)  # fmt: skip


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-numpy-") as name:
        folder = Path(name)
        project = copy_project(HERE / "project", folder, "project")
        written = pytest_in(project, PINS, "-k", "series", "--callpin-mode=new")
        checks.append(("the pins pass and write their baselines", written.returncode == 0))
        for line in callpin_in(project, "show", SHORT).splitlines()[1:3]:
            print(f"  {line[:150]}")
        print(f"  {callpin_in(project, 'show', LONG).splitlines()[1][:150]}")

        pure = copy_project(HERE / "project", folder, "pure")
        pytest_in(pure, PINS, "-k", "series", "--callpin-mode=new", CALLPIN_PURE_PYTHON="1")
        same = all((project / log).read_bytes() == (pure / log).read_bytes() for log in (SHORT, LONG))
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        # pytest runs the node ids in the order given: the print options first.
        tests = (
            "test_another_test_sets_the_print_options",
            "test_a_short_series_is_pushed",
            "test_a_long_series_is_pushed",
        )
        after_options = pytest_in(project, *(f"{PINS}::{test}" for test in tests))
        checks.append(("the pins pass after a test set numpy's print options", after_options.returncode == 0))

        found_verdict = probe_verdict(project, PINS, "-k", "series")
        print(f"probe {PINS}: {found_verdict}")
        checks.append(("probe is volatile nowhere", found_verdict == "VOLATILE: none"))

        for index, (what, old, new, log, expected) in enumerate(CASES):
            copy = copy_project(HERE / "project", folder, f"edit-{index}")
            code, found = edited_run(copy, PINS, old, new, log, PINS, "-k", "series")
            found = [line for line in found if "args[0]" in line]
            print(f"{what}: pytest exit {code}; {found[0][:150] if found else ''}")
            named = any(expected in line for line in found)
            checks.append((f"{what} fails its pin, named by its path", code == 1 and named))
    return verdict(checks)


if __name__ == "__main__":
    sys.exit(main())
