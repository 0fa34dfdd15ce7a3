"""The probe run: every cell's runs on a pool of jobs, live progress, and a clean stop on Ctrl-C."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import IO

from ..errors import UsageError
from ..progress import LiveStatus
from .cells import GROUPS, Cell, build_cells
from .children import Children, Run, resolve_command
from .classify import classify
from .report import ProbeReport

# How many more times the baseline cell runs when another cell looks ambient.
CONFIRMING_RUNS = 4


class Terminated(KeyboardInterrupt):
    """SIGTERM arrived while probe ran: it stopped as on Ctrl-C."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


@contextmanager
def _sigterm_stops_like_ctrl_c() -> Iterator[None]:
    # Each child is a session of its own, so a SIGTERM that ended probe by default
    # would leave them all running. Handlers can only be set from the main thread.
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def probe(
    command: list[str],
    *,
    groups: tuple[str, ...] = GROUPS,
    runs: int = 2,
    jobs: int = 1,
    timeout: float = 600.0,
    root: str | os.PathLike[str] = ".",
    env: dict[str, str] | None = None,
    progress: IO[str] | None = None,
) -> ProbeReport:
    """Run `command` over the matrix and classify every log it writes.

    `env` adds variables to the `env` cell; `progress` is where a terminal gets the live
    status line. On KeyboardInterrupt (and SIGTERM, raised as `Terminated`) no further
    run starts, every running child's process group is ended and the scratch folders
    removed before it propagates.
    """
    if not command:
        raise UsageError("probe needs a command after --")
    if runs < 2:
        raise UsageError("--runs must be at least 2 (instability shows only between runs)")
    cells = build_cells(groups, extra_env=env)
    base = Path(root).resolve()
    resolved = resolve_command(command, base)
    tasks = [(cell, n) for cell in cells for n in range(1, runs + 1)]
    results: list[Run] = []
    with _sigterm_stops_like_ctrl_c(), tempfile.TemporaryDirectory(prefix="callpin-probe-") as scratch_name:
        children = Children(resolved, base, Path(scratch_name), timeout)
        status = LiveStatus(progress, "probe", "runs", len(tasks))
        pool = concurrent.futures.ThreadPoolExecutor(max(1, jobs), thread_name_prefix="callpin-probe")

        def execute(batch: list[tuple[Cell, int]]) -> None:
            pending = [pool.submit(children.execute, cell, n) for cell, n in batch]
            for future in concurrent.futures.as_completed(pending):
                run = future.result()
                assert run is not None
                results.append(run)
                status.finished("ok" if run.returncode == 0 else "failed")

        status.start()
        try:
            execute(tasks)
            report = classify(cells, results)
            if any(finding.signal == "ambient" for finding in report.findings):
                # A cell whose runs agree, and differ from the baseline's, may have drawn
                # another outcome of the same nondeterminism (a registry filled in
                # memory-address order), not felt its setting: the baseline runs again,
                # and a log it writes otherwise is unstable, ambient nowhere.
                confirming = [(cells[0], n) for n in range(runs + 1, runs + 1 + CONFIRMING_RUNS)]
                status.more(len(confirming))
                status.note("running the baseline again to confirm what differs")
                execute(confirming)
                report = classify(cells, results)
        finally:
            children.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            status.stop()
    if not report.table:
        first = next((r for r in results if r.cell.group == "baseline"), results[0])
        why = "timed out" if first.timed_out else f"exit {first.returncode}"
        raise UsageError(
            f"the command wrote no callpin logs in any cell (baseline: {why}"
            f"{': ' + first.stderr_tail if first.stderr_tail else ''}); does it record with callpin, "
            "and does it honour CALLPIN_OUTPUT_DIR?"
        )
    return report
