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
PINS = "tests/test_publish.py"
SHORT = "baselines/tests/test_publish/test_a_short_series_is_pushed.cpin"
LONG = "baselines/tests/test_publish/test_a_long_series_is_pushed.cpin"


def run(project: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PYTEST, *args], cwd=project, env=child_environment(**extra), capture_output=True, text=True, check=False
    )


def edited(folder: Path, name: str, path: str, old: str, new: str) -> Path:
    copy = copy_into(HERE / "project", folder, name)
    target = copy / path
    text = target.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    target.write_text(text.replace(old, new), encoding="utf-8")
    return copy


def main() -> int:
    checks: list[tuple[str, bool]] = []
    with tempfile.TemporaryDirectory(prefix="callpin-realworld-numpy-") as name:
        folder = Path(name)
        project = copy_into(HERE / "project", folder, "project")
        written = run(project, PINS, "-k", "series", "--callpin-mode=new")
        checks.append(("the pins pass and write their baselines", written.returncode == 0))
        shown = subprocess.run([*CALLPIN, "show", SHORT], cwd=project, capture_output=True, text=True, check=False)
        for line in shown.stdout.splitlines()[1:3]:
            print(f"  {line[:150]}")
        long_shown = subprocess.run([*CALLPIN, "show", LONG], cwd=project, capture_output=True, text=True, check=False)
        print(f"  {long_shown.stdout.splitlines()[1][:150]}")

        pure = copy_into(HERE / "project", folder, "pure")
        run(pure, PINS, "-k", "series", "--callpin-mode=new", CALLPIN_PURE_PYTHON="1")
        same = all((project / log).read_bytes() == (pure / log).read_bytes() for log in (SHORT, LONG))
        checks.append(("the C and pure-Python recorders write the same bytes", same))

        # pytest runs the node ids in the order given: the print options first.
        tests = (
            "test_another_test_sets_the_print_options",
            "test_a_short_series_is_pushed",
            "test_a_long_series_is_pushed",
        )
        after_options = run(project, *(f"{PINS}::{test}" for test in tests))
        checks.append(("the pins pass after a test set numpy's print options", after_options.returncode == 0))

        probed = subprocess.run(
            [*CALLPIN, "probe", "--jobs", "2", "--", *PYTEST, PINS, "-k", "series"],
            cwd=project,
            env=child_environment(),
            capture_output=True,
            text=True,
            check=False,
        )
        verdict = probed.stderr.strip().splitlines()[-1] if probed.stderr.strip() else probed.stdout[-200:]
        print(f"probe {PINS}: {verdict}")
        checks.append(("probe is volatile nowhere", verdict == "VOLATILE: none"))

        cases = (
            ("one reading of the short series", "SHORT = [3.5, -1.0, 2.25, 8.0, 0.125]",
             "SHORT = [3.5, -1.0, 2.25, 8.5, 0.125]", SHORT, "args[0].values[3]: 8.0 → 8.5"),
            ("one reading deep in the long series", "LONG = [float(i % 17) for i in range(2000)]",
             "LONG = [float(i % 17) for i in range(2000)]; LONG[1500] = 99.0", LONG, "digest"),
            ("a reading below the repr's 8 digits", "SHORT = [3.5, -1.0, 2.25, 8.0, 0.125]",
             "SHORT = [3.5, -1.0, 2.25, 8.0000000001, 0.125]", SHORT, "args[0].values[3]: 8.0 → 8.0000000001"),
            ("a reading turned positive (unmasked)", "SHORT = [3.5, -1.0, 2.25, 8.0, 0.125]",
             "SHORT = [3.5, 1.0, 2.25, 8.0, 0.125]", SHORT, "args[0]._mask.values[1]: True → False"),
        )  # fmt: skip
        for index, (what, old, new, log, expected) in enumerate(cases):
            copy = copy_into(HERE / "project", folder, f"edit-{index}")
            run(copy, PINS, "-k", "series", "--callpin-mode=new")
            test_file = copy / PINS
            text = test_file.read_text(encoding="utf-8")
            test_file.write_text(text.replace(old, new), encoding="utf-8")
            drift = run(copy, PINS, "-k", "series")
            diffed = subprocess.run(
                [*CALLPIN, "diff", log, log + ".received"], cwd=copy, capture_output=True, text=True, check=False
            ).stdout
            found = [line.strip() for line in diffed.splitlines() if "→" in line and "args[0]" in line]
            print(f"{what}: pytest exit {drift.returncode}; {found[0][:150] if found else diffed[-200:]}")
            checks.append(
                (
                    f"{what} fails its pin, named by its path",
                    drift.returncode == 1 and any(expected in line for line in found),
                )
            )

    failed = [name for name, held in checks if not held]
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
