"""What the values-* scenarios share: fresh copies of a scenario's project, the environment
the pytest and callpin children they start run in, and the runs they make in a copy."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
CALLPIN = [sys.executable, "-m", "callpin"]


def child_environment(leave_out: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """This process's environment without CI, CALLPIN_PURE_PYTHON and the variables
    named in `leave_out` (in any case), with `extra` set."""
    dropped = {name.upper() for name in leave_out}
    env = {k: v for k, v in os.environ.items() if k.upper() not in dropped and k != "CALLPIN_PURE_PYTHON"}
    env.pop("CI", None)
    env.update(extra)
    return env


def copy_project(project: Path, folder: Path, name: str) -> Path:
    """A copy of the folder `project` at `folder / name`."""
    copy = folder / name
    shutil.copytree(project, copy)
    return copy


def pytest_in(
    project: Path, *args: str, leave_out: tuple[str, ...] = (), **extra: str
) -> subprocess.CompletedProcess[str]:
    """pytest run in `project` with `args`, in the child environment."""
    env = child_environment(leave_out, **extra)
    return subprocess.run([*PYTEST, *args], cwd=project, env=env, capture_output=True, text=True, check=False)


def callpin_in(project: Path, *args: str) -> str:
    """What `callpin ARGS` run in `project` prints."""
    return subprocess.run([*CALLPIN, *args], cwd=project, capture_output=True, text=True, check=False).stdout


def probe_verdict(project: Path, *pytest_args: str, leave_out: tuple[str, ...] = ()) -> str:
    """The last line of `callpin probe --jobs 2 -- pytest ARGS` run in `project`."""
    probed = subprocess.run(
        [*CALLPIN, "probe", "--jobs", "2", "--", *PYTEST, *pytest_args],
        cwd=project,
        env=child_environment(leave_out),
        capture_output=True,
        text=True,
        check=False,
    )
    return probed.stderr.strip().splitlines()[-1] if probed.stderr.strip() else probed.stdout[-200:]


def edited_run(
    copy: Path, path: str, old: str, new: str, log: str, *pins: str, leave_out: tuple[str, ...] = ()
) -> tuple[int, list[str]]:
    """In the project copy `copy`: the baselines of the pins (pytest's `pins` arguments)
    written, `old` replaced by `new` in `path` (once), the pins run again. Their exit
    code, and the changed fields `callpin diff` names for `log` (the lines with an arrow)."""
    pytest_in(copy, *pins, "--callpin-mode=new", leave_out=leave_out)
    target = copy / path
    text = target.read_text(encoding="utf-8")
    assert text.count(old) == 1, (path, old)
    target.write_text(text.replace(old, new), encoding="utf-8")
    drift = pytest_in(copy, *pins, leave_out=leave_out)
    diffed = callpin_in(copy, "diff", log, log + ".received")
    return drift.returncode, [line.strip() for line in diffed.splitlines() if "→" in line]


def edit_checks(
    project: Path,
    folder: Path,
    path: str,
    cases: tuple[tuple[str, str, str, str, str], ...],
    *pins: str,
    leave_out: tuple[str, ...] = (),
) -> list[tuple[str, bool]]:
    """For each case `(what, old, new, log, expected)`: in a fresh copy of `project` under
    `folder`, `old` replaced by `new` in `path` (`edited_run`); the check that the pins
    fail and that the diff of `log` names the change (a line holding `expected`)."""
    checks = []
    for index, (what, old, new, log, expected) in enumerate(cases):
        copy = copy_project(project, folder, f"edit-{index}")
        code, found = edited_run(copy, path, old, new, log, *pins, leave_out=leave_out)
        print(f"{what}: pytest exit {code}; {'; '.join(found)[:300]}")
        named = any(expected in line for line in found)
        checks.append((f"{what} edited fails its pin, named by its path", code == 1 and named))
    return checks


def verdict(checks: list[tuple[str, bool]]) -> int:
    """Each check printed as held or FAILED; the scenario's exit code."""
    for name, held in checks:
        print(f"{'held' if held else 'FAILED'}: {name}")
    return 1 if any(not held for _, held in checks) else 0
