"""probe: re-run a capture under ambient perturbations and name what it silently depends on.

The capture command runs in child processes over a matrix of cells (timezone, locale,
hash seed, working directory), several times per cell, each run with its own
`CALLPIN_OUTPUT_DIR` so every recorder also writes its actual log there. Comparing the
logs' fingerprints separates three signals: *unstable* (runs in one cell differ:
in-process nondeterminism), *ambient* (stable in a cell but different from the baseline
cell: the cell's setting leaks into the capture), and *error* (the command failed or
wrote no log in that cell: an environment trap).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .diff import diff
from .errors import CallpinError, LogFormatError, UsageError
from .logfile import Log, load
from .progress import Progress
from .render_diff import render_op

# Variables a cell controls. All of them are removed from the inherited environment,
# then the cell sets its own, so the parent's values cannot leak into any cell.
AMBIENT = (
    "TZ",
    "LANG",
    "LANGUAGE",
    "PYTHONHASHSEED",
    "LC_ALL",
    "LC_CTYPE",
    "LC_NUMERIC",
    "LC_TIME",
    "LC_COLLATE",
    "LC_MONETARY",
    "LC_MESSAGES",
)
BASELINE_ENV = {"TZ": "UTC", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "PYTHONHASHSEED": "0"}
GROUPS = ("tz", "locale", "hashseed", "cwd")
_PREFERRED_LOCALES = ("en_US.UTF-8", "de_DE.UTF-8", "fr_FR.UTF-8", "ja_JP.UTF-8", "en_GB.UTF-8")


@dataclass(frozen=True)
class Cell:
    """One environment of the matrix: the baseline, or the baseline with one setting changed."""

    group: str  # baseline, tz, locale, hashseed, cwd
    value: str
    env: dict[str, str]
    fresh_cwd: bool = False

    @property
    def name(self) -> str:
        return "baseline" if self.group == "baseline" else f"{self.group}={self.value}"


def available_locales() -> list[str]:
    """The locales this machine has, as `locale -a` lists them."""
    try:
        listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False).stdout
    except OSError:
        return ["C"]
    return [line.strip() for line in listed.splitlines() if line.strip()]


def _utf8_locale(found: list[str]) -> str | None:
    canonical = {name.lower().replace("utf8", "utf-8"): name for name in found}
    for wanted in _PREFERRED_LOCALES:
        if wanted.lower() in canonical:
            return canonical[wanted.lower()]
    return None


def build_cells(groups: tuple[str, ...] = GROUPS, locales: list[str] | None = None) -> list[Cell]:
    """The baseline cell, then every variation of the chosen groups.

    The baseline runs in UTC, hash seed 0, the project's folder, and a real UTF-8
    locale when the machine has one (else C.UTF-8); the locale cells run under the
    other locales of that list, C always among them.
    """
    unknown = [g for g in groups if g not in GROUPS]
    if unknown:
        raise UsageError(f"unknown cell {unknown[0]!r} (choose from {', '.join(GROUPS)})")
    found = available_locales() if locales is None and "locale" in groups else (locales or [])
    reference = _utf8_locale(found) or "C.UTF-8"
    baseline_env = {**BASELINE_ENV, "LC_ALL": reference, "LANG": reference}
    cells = [Cell("baseline", "", baseline_env)]
    for group in groups:
        if group == "tz":
            for zone in ("Asia/Tokyo", "America/Los_Angeles"):
                cells.append(Cell("tz", zone, {**baseline_env, "TZ": zone}))
        elif group == "locale":
            for name in dict.fromkeys(("C", "C.UTF-8", reference)):
                if name != reference:
                    cells.append(Cell("locale", name, {**baseline_env, "LC_ALL": name, "LANG": name}))
        elif group == "hashseed":
            for seed in ("1", "2"):
                cells.append(Cell("hashseed", seed, {**baseline_env, "PYTHONHASHSEED": seed}))
        elif group == "cwd":
            cells.append(Cell("cwd", "fresh", dict(baseline_env), fresh_cwd=True))
    return cells


@dataclass
class Run:
    """One execution of the command in one cell."""

    cell: Cell
    number: int
    returncode: int
    stderr_tail: str
    logs: dict[str, Path]


@dataclass
class Finding:
    """A volatile log: which signal, in which cell, and the first event that moved."""

    log: str
    signal: str  # unstable, ambient, error
    cell: str
    detail: str

    def as_json(self) -> dict[str, str]:
        return {"log": self.log, "signal": self.signal, "cell": self.cell, "detail": self.detail}


@dataclass
class ProbeReport:
    """Per log and cell, the outcome (`ok`, `unstable`, `ambient`, `error`), plus findings."""

    cells: list[Cell]
    table: dict[str, dict[str, str]] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def volatile(self) -> list[str]:
        """The settings (cell groups) and signals found volatile, in a fixed order."""
        names: list[str] = []
        for finding in self.findings:
            group = finding.cell.split("=", 1)[0]
            token = "unstable" if finding.signal == "unstable" else group
            if token not in names:
                names.append(token)
        order = ["unstable", "baseline", *GROUPS]
        return sorted(names, key=order.index)

    def verdict_line(self) -> str:
        return "VOLATILE: " + (", ".join(self.volatile) if self.volatile else "none")

    def lines(self) -> Iterator[str]:
        names = [cell.name for cell in self.cells]
        width = max([len("log"), *map(len, self.table)])
        widths = [max(len(name), 8) for name in names]
        yield "  ".join(["log".ljust(width), *(n.ljust(w) for n, w in zip(names, widths, strict=True))]).rstrip()
        for log, row in sorted(self.table.items()):
            cells = [row.get(name, "-").ljust(w) for name, w in zip(names, widths, strict=True)]
            yield "  ".join([log.ljust(width), *cells]).rstrip()
        for signal, title in (
            ("unstable", "unstable (runs in one cell differ)"),
            ("ambient", "ambient (stable, but different from the baseline cell)"),
            ("error", "error (the command failed or wrote no log)"),
        ):
            found = [f for f in self.findings if f.signal == signal]
            if found:
                yield ""
                yield f"{title}:"
                for finding in found:
                    yield f"  {finding.log} under {finding.cell}: {finding.detail}"

    def as_json(self) -> dict[str, Any]:
        return {
            "cells": [cell.name for cell in self.cells],
            "table": self.table,
            "findings": [f.as_json() for f in self.findings],
            "volatile": self.volatile,
        }


def _child_env(cell: Cell, output_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in AMBIENT}
    env.update(cell.env)
    env["CALLPIN_OUTPUT_DIR"] = str(output_dir)
    # The capture only records: pin() writes the actual log and does not compare, so a
    # drift caused by the cell is seen here as a changed log, not as a failed command.
    env["CALLPIN_PROBE"] = "1"
    env.pop("CALLPIN_MODE", None)
    return env


def _absolute_arguments(command: list[str], root: Path) -> list[str]:
    # In the cwd cell only the working directory moves: arguments naming files or
    # folders of the project are passed as absolute paths so they still resolve.
    resolved = [command[0]]
    for argument in command[1:]:
        candidate = root / argument
        if not argument.startswith("-") and not os.path.isabs(argument) and candidate.exists():
            resolved.append(str(candidate))
        else:
            resolved.append(argument)
    return resolved


def _collect_logs(output_dir: Path) -> dict[str, Path]:
    """The logs a run wrote: regular files inside its output folder, never through a symlink.

    The command writes that folder; a link it left there (a log named `x.cpin` pointing
    at a file elsewhere) must not make probe read outside its scratch folder.
    """
    inside = output_dir.resolve()
    return {
        p.relative_to(output_dir).as_posix(): p
        for p in sorted(output_dir.rglob("*.cpin"))
        if not p.is_symlink() and p.is_file() and p.resolve().is_relative_to(inside)
    }


def _execute(command: list[str], cell: Cell, number: int, root: Path, scratch: Path, timeout: float) -> Run:
    output_dir = scratch / f"{cell.name.replace('/', '_').replace('=', '-')}-run{number}"
    output_dir.mkdir(parents=True)
    cwd = root
    args = command
    if cell.fresh_cwd:
        cwd = scratch / f"cwd-{number}"
        cwd.mkdir()
        args = _absolute_arguments(command, root)
    try:
        done = subprocess.run(
            args,
            cwd=cwd,
            env=_child_env(cell, output_dir),
            capture_output=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise UsageError(f"command not found: {command[0]}") from None
    except PermissionError:
        raise UsageError(f"command not executable: {command[0]}") from None
    except subprocess.TimeoutExpired:
        return Run(cell, number, -1, f"timed out after {timeout:g} s", _collect_logs(output_dir))
    tail = _last_line(done.stderr) or _last_line(done.stdout)
    return Run(cell, number, done.returncode, tail, _collect_logs(output_dir))


def _last_line(data: bytes) -> str:
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _first_difference(old: Log, new: Log) -> str:
    try:
        found = diff(old, new)
    except CallpinError as exc:
        return f"cannot diff ({exc})"
    if found.same:
        return "same events, different bytes"
    return render_op(found, found.ops[0])


def probe(
    command: list[str],
    *,
    groups: tuple[str, ...] = GROUPS,
    runs: int = 2,
    jobs: int = 1,
    timeout: float = 600.0,
    root: str | os.PathLike[str] = ".",
    progress: Callable[[int, int], None] | None = None,
) -> ProbeReport:
    """Run `command` over the matrix and classify every log it writes."""
    if not command:
        raise UsageError("probe needs a command after --")
    if runs < 2:
        raise UsageError("--runs must be at least 2 (instability shows only between runs)")
    cells = build_cells(groups)
    base = Path(root).resolve()
    with tempfile.TemporaryDirectory(prefix="callpin-probe-") as scratch_name:
        scratch = Path(scratch_name)
        tasks = [(cell, n) for cell in cells for n in range(1, runs + 1)]
        done_count = 0
        results: list[Run] = []
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(_execute, command, cell, n, base, scratch, timeout) for cell, n in tasks]
            for future in futures:
                results.append(future.result())
                done_count += 1
                if progress is not None:
                    progress(done_count, len(tasks))
        return _classify(cells, results)


def _read(path: Path) -> Log | str:
    try:
        return load(path)
    except LogFormatError as exc:
        return f"unreadable log ({exc.reason})"


def _classify(cells: list[Cell], results: list[Run]) -> ProbeReport:
    if all(run.returncode != 0 and not run.logs for run in results):
        line = results[0].stderr_tail if results else ""
        raise UsageError(f"the command fails in every cell: {line or 'no output'}")
    names = sorted({name for run in results for name in run.logs})
    if not names:
        raise UsageError(
            "the command wrote no callpin logs (does it record with callpin, and does it honour CALLPIN_OUTPUT_DIR?)"
        )
    report = ProbeReport(cells)
    by_cell: dict[str, list[Run]] = {}
    for run in results:
        by_cell.setdefault(run.cell.name, []).append(run)
    for name in names:
        row: dict[str, str] = {}
        stable: dict[str, Log] = {}
        baseline_error: str | None = None
        for cell in cells:
            row[cell.name] = _cell_outcome(report, name, cell, by_cell[cell.name], stable, baseline_error)
            if cell.group == "baseline" and row[cell.name] == "ERROR":
                baseline_error = report.findings[-1].detail
        reference = stable.get("baseline")
        if reference is not None:
            for cell in cells[1:]:
                candidate = stable.get(cell.name)
                if candidate is not None and candidate.fingerprint != reference.fingerprint:
                    row[cell.name] = "AMBIENT"
                    report.findings.append(Finding(name, "ambient", cell.name, _first_difference(reference, candidate)))
        report.table[name] = row
    return report


def _cell_outcome(
    report: ProbeReport,
    name: str,
    cell: Cell,
    runs: list[Run],
    stable: dict[str, Log],
    baseline_error: str | None,
) -> str:
    """`ok`, `UNSTABLE` or `ERROR` for one log in one cell; records the finding.

    An error that is the same as the baseline cell's is not this cell's doing: the
    capture fails everywhere, which the baseline's own finding already says.
    """
    logs: list[Log] = []
    for run in sorted(runs, key=lambda r: r.number):
        path = run.logs.get(name)
        if run.returncode != 0 or path is None:
            why = f"exit {run.returncode}" if run.returncode != 0 else "no log written"
            detail = f"{why}: {run.stderr_tail}" if run.stderr_tail else why
            if detail != baseline_error:
                report.findings.append(Finding(name, "error", cell.name, detail))
            return "ERROR"
        read = _read(path)
        if isinstance(read, str):
            report.findings.append(Finding(name, "error", cell.name, read))
            return "ERROR"
        logs.append(read)
    for later in logs[1:]:
        if later.fingerprint != logs[0].fingerprint:
            report.findings.append(Finding(name, "unstable", cell.name, _first_difference(logs[0], later)))
            return "UNSTABLE"
    stable[cell.name] = logs[0]
    return "ok"


def progress_printer(stream: IO[str] | None = sys.stderr) -> Callable[[int, int], None] | None:
    """A progress line on a terminal; None when stderr is not one."""
    printer = Progress(stream, lambda done, total: f"probe: {done}/{total} runs")
    return printer if printer.shown else None
