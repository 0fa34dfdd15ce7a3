"""The test matrix of `make test-all`: every supported Python found here, both implementations, one table.

`make test-all` runs `make test` first (the default interpreter, in .venv, writing
test-results/default-*.xml), then this script with that interpreter as `--default`:

- finds each supported version, python3.X on PATH (a pyenv shim counts only if it runs)
  or else the newest pyenv install of 3.X, and says which it skipped and why;
- for each version other than the default, makes `.venv-3.X` (an editable install with
  the C speedups required) and runs the whole suite with the C extension and with
  CALLPIN_PURE_PYTHON=1;
- on every version found, runs the tests marked slow: the wheel and the sdist built,
  installed in fresh environments and run, and the fixed vectors written by every
  interpreter found (CALLPIN_INTERPRETERS);
- prints the counts of every run from its JUnit report, and exits 1 when any run failed.

Only the standard library: it runs before anything is installed for the other versions.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "test-results"
SUPPORTED = ("3.11", "3.12", "3.13")
# A venv is remade when one of these is newer than its stamp (as the Makefile's .venv).
INSTALL_INPUTS = ("pyproject.toml", "setup.py", "src/callpin/_speedups.c")
PYTEST = ("-m", "pytest", "-q")


@dataclass
class Interpreter:
    version: str
    python: Path  # the interpreter found (for the default one: its venv's python)
    venv: Path


def _version_of(python: str) -> str | None:
    """`3.X` of an interpreter that runs, or None (a pyenv shim of a version not enabled fails)."""
    try:
        done = subprocess.run(
            [python, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _pyenv_installs(version: str) -> list[Path]:
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = [
        path / "bin" / f"python{version}"
        for path in root.glob(f"{version}.*")
        if re.fullmatch(r"\d+\.\d+\.\d+", path.name)
    ]
    return sorted(found, key=lambda path: tuple(int(part) for part in path.parent.parent.name.split(".")), reverse=True)


def find(version: str) -> tuple[Path | None, str]:
    """The interpreter of `version` to test, and where it was found (or why none was)."""
    on_path = shutil.which(f"python{version}")
    if on_path and _version_of(on_path) == version:
        return Path(on_path), f"python{version} on PATH"
    for candidate in _pyenv_installs(version):
        if _version_of(str(candidate)) == version:
            return candidate, f"pyenv install {candidate.parent.parent.name}"
    shim = " (its pyenv shim does not run: that version is not enabled)" if on_path else ""
    return None, f"no python{version} on PATH{shim} and no pyenv install of {version}"


def _stale(stamp: Path) -> bool:
    return not stamp.exists() or any((ROOT / name).stat().st_mtime > stamp.stat().st_mtime for name in INSTALL_INPUTS)


def ensure_venv(found: Interpreter) -> None:
    """`.venv-3.X` with callpin installed editable, its test dependencies and the C speedups."""
    stamp = found.venv / ".installed"
    if not _stale(stamp):
        return
    print(f"== {found.version}: installing into {found.venv.name}", flush=True)
    subprocess.run([found.python, "-m", "venv", found.venv], check=True)
    env = {**os.environ, "CALLPIN_BUILD_SPEEDUPS": "1"}
    python = found.venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "-e", ".[test]"], cwd=ROOT, env=env, check=True)
    stamp.touch()


@dataclass
class Run:
    label: str
    report: Path
    seconds: float | None = None  # None: run by `make test` before this script


def run(found: Interpreter, implementation: str, args: list[str], *, extra_env: dict[str, str] | None = None) -> Run:
    """One pytest run in the interpreter's venv, reported to test-results/<version>-<implementation>.xml."""
    label = f"{found.version}-{implementation}"
    report = RESULTS / f"{label}.xml"
    env = {key: value for key, value in os.environ.items() if key != "CALLPIN_PURE_PYTHON"}
    if implementation == "python":
        env["CALLPIN_PURE_PYTHON"] = "1"
    env.update(extra_env or {})
    python = found.venv / "bin" / "python"
    live = "c" if implementation in ("c", "slow") else "python"
    check = f"import callpin, sys; sys.exit(callpin.IMPLEMENTATION != {live!r})"
    print(f"== {label}: {python} -m pytest {' '.join(args)}", flush=True)
    started = time.monotonic()
    if subprocess.run([python, "-c", check], cwd=ROOT, env=env, check=False).returncode != 0:
        print(f"callpin implementation under {label} is not {live}", flush=True)
        report.unlink(missing_ok=True)
    else:
        subprocess.run([python, *PYTEST, f"--junitxml={report}", *args], cwd=ROOT, env=env, check=False)
    return Run(label, report, time.monotonic() - started)


@dataclass
class Counts:
    passed: int
    failed: int
    errors: int
    skipped: int
    seconds: float

    @classmethod
    def read(cls, report: Path) -> Counts | None:
        if not report.exists():
            return None
        suites = ElementTree.parse(report).getroot()
        suite = suites if suites.tag == "testsuite" else suites.find("testsuite")
        if suite is None:
            return None
        number = {key: int(suite.get(key, "0")) for key in ("tests", "failures", "errors", "skipped")}
        passed = number["tests"] - number["failures"] - number["errors"] - number["skipped"]
        seconds = float(suite.get("time", "0"))
        return cls(passed, number["failures"], number["errors"], number["skipped"], seconds)


def table(runs: list[Run]) -> bool:
    """Print one line per run; True when every run passed."""
    print("\ntest-all: the counts of every run")
    print(f"{'run':14} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>8} {'seconds':>8}")
    green = True
    for one in runs:
        counts = Counts.read(one.report)
        if counts is None:
            print(f"{one.label:14} {'did not run':>7}")
            green = False
            continue
        seconds = one.seconds if one.seconds is not None else counts.seconds
        print(f"{one.label:14} {counts.passed:7} {counts.failed:7} {counts.errors:7} {counts.skipped:8} {seconds:8.0f}")
        green = green and counts.failed == 0 and counts.errors == 0 and counts.passed > 0
    return green


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--default", required=True, help="the python of .venv, which `make test` ran")
    parser.add_argument("--xdist", default="-n 2", help="pytest-xdist options for the whole-suite runs")
    options = parser.parse_args()
    started = time.monotonic()
    RESULTS.mkdir(exist_ok=True)
    default_version = _version_of(options.default)
    found: list[Interpreter] = []
    skipped: list[str] = []
    for version in SUPPORTED:
        if version == default_version:
            venv = Path(options.default).absolute().parent.parent
            found.append(Interpreter(version, venv / "bin" / "python", venv))
            print(f"== {version}: the default interpreter, {venv.name} (run by make test)")
            continue
        python, where = find(version)
        if python is None:
            skipped.append(f"skipped Python {version}: {where}")
            print(f"== {skipped[-1]}")
            continue
        print(f"== {version}: {python} ({where})")
        found.append(Interpreter(version, python, ROOT / f".venv-{version}"))
    if default_version not in SUPPORTED:
        skipped.append(f"the default interpreter is Python {default_version}, not one of {', '.join(SUPPORTED)}")
    runs: list[Run] = []
    xdist = options.xdist.split()
    for one in found:
        if one.version == default_version:
            runs += [Run(f"{one.version}-{impl}", RESULTS / f"default-{impl}.xml") for impl in ("c", "python")]
            continue
        ensure_venv(one)
        runs += [run(one, "c", xdist), run(one, "python", xdist)]
    everywhere = {"CALLPIN_INTERPRETERS": os.pathsep.join(str(one.venv / "bin" / "python") for one in found)}
    for one in found:
        runs.append(run(one, "slow", ["-m", "slow", "-p", "no:xdist"], extra_env=everywhere))
    green = table(runs)
    for line in skipped:
        print(line)
    print(f"test-all: {'green' if green else 'FAILED'} in {time.monotonic() - started:.0f} s after make test")
    return 0 if green else 1


if __name__ == "__main__":
    sys.exit(main())
