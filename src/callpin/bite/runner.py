"""The bite run: the unmutated command first, then every mutant in parallel, each judged by how it ended.

Each mutant runs in its own scratch copy on a pool of `jobs` threads, with a timeout
that follows the unmutated run's duration unless one is given. On a terminal a status
line (elapsed time, ETA, counts by outcome) is there from the start, saying what
happens while the copies and the unmutated run are prepared. Whatever stops the run
(an error, Ctrl-C, SIGTERM), queued mutants never start, the children's process groups
are killed and every scratch copy removed before it returns or raises.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Sequence
from typing import IO

from ..errors import BiteError, UsageError
from ..progress import LiveStatus
from .mutants import OPERATORS, Mutant
from .planning import plan
from .project import Project
from .report import Report, Result
from .scratch import Execution, Scratch
from .signals import SignalGuard

DEFAULT_TEST = "python -m pytest -x -q"

# Without --timeout, a mutant may take this many times the unmutated run, and never
# less than the floor: a duplicated call inside a loop may legitimately be slower.
_TIMEOUT_FACTOR = 5.0
_TIMEOUT_FLOOR = 10.0


def _cpu_count() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def default_timeout(baseline_seconds: float) -> float:
    """The per-mutant timeout when none is given, from the unmutated run's duration."""
    return max(_TIMEOUT_FLOOR, _TIMEOUT_FACTOR * baseline_seconds)


def _imported_problem(relative: str, imported: tuple[bool, str | None]) -> str | None:
    hit, elsewhere = imported
    if elsewhere is not None:
        return f"the test command imported {relative} from {elsewhere}, not from the scratch copy"
    if not hit:
        return f"the test command never imported {relative} from the scratch copy"
    return None


def _caught(mutant: Mutant, execution: Execution) -> Result:
    """A mutant the command failed on, with the strongest failure its tests reported."""
    for kind in ("drift", "assert", "error"):
        failure = next((found for found in execution.failures if found.kind == kind), None)
        if failure is not None:
            error = failure.type.removeprefix("builtins.") or "a failure"
            where = f" in {failure.where}" if failure.where else ""
            return Result(mutant, "caught", f"{error}{where} (exit {execution.returncode})", kind)
    detail = f"exit {execution.returncode}; no test failure reported (neither pytest nor an uncaught exception)"
    return Result(mutant, "caught", detail, "exit")


def _judge(mutant: Mutant, execution: Execution) -> Result:
    problem = _imported_problem(mutant.path, execution.imported[mutant.path])
    if problem is not None:
        return Result(mutant, "error", problem)
    if execution.timed_out:
        return Result(mutant, "timeout", f"stopped after {execution.seconds:.1f}s")
    if execution.returncode != 0:
        return _caught(mutant, execution)
    return Result(mutant, "survived", "the test command passed")


def _check_baseline(execution: Execution) -> dict[str, str]:
    """The files the unmutated run did not import from its copy, with the reason."""
    if execution.timed_out:
        raise BiteError("the unmutated test command timed out in a scratch copy", output=execution.output)
    if execution.returncode != 0:
        raise BiteError(
            f"the unmutated test command failed (exit {execution.returncode}) in a scratch "
            "copy; bite needs a passing command",
            output=execution.output,
        )
    problems = {
        relative: problem
        for relative, imported in execution.imported.items()
        if (problem := _imported_problem(relative, imported)) is not None
    }
    if problems and len(problems) == len(execution.imported):
        first = next(iter(problems.values()))
        raise BiteError(
            f"the unmutated run imports no SOURCE file from the scratch copy ({first}); "
            "check PYTHONPATH, installed copies and the test command",
            output=execution.output,
        )
    return problems


def run(
    project: Project,
    snapshot: dict[str, bytes | None],
    mutants: Sequence[Mutant],
    *,
    test: str = DEFAULT_TEST,
    jobs: int | None = None,
    timeout: float | None = None,
    progress: IO[str] | None = None,
) -> Report:
    """Run the unmutated command, then every mutant, each in its own scratch copy."""
    if not mutants:
        raise UsageError("no call sites of the pinned labels in SOURCE; nothing to mutate")
    if jobs is not None and jobs < 1:
        raise UsageError(f"--jobs must be at least 1, got {jobs}")
    if timeout is not None and timeout <= 0:
        raise UsageError(f"--timeout must be more than 0 seconds, got {timeout}")
    workers = jobs or _cpu_count()
    watched = sorted({mutant.path for mutant in mutants})
    results: dict[str, Result] = {}
    status = LiveStatus(progress, "bite", "mutants", len(mutants))
    scratch = Scratch(project, snapshot, test)
    with SignalGuard() as guard:
        pool = concurrent.futures.ThreadPoolExecutor(workers, thread_name_prefix="callpin-bite")
        try:
            status.start()
            status.note("preparing scratch copies")
            scratch.open()
            status.note("running the unmutated tests")
            baseline = pool.submit(scratch.attempt, "baseline", {}, watched, timeout).result()
            assert baseline is not None
            missed = _check_baseline(baseline)
            limit = timeout if timeout is not None else default_timeout(baseline.seconds)
            status.note(None)
            status.begin()
            pending = {}
            for mutant in mutants:
                if mutant.path in missed:
                    results[mutant.id] = Result(mutant, "error", missed[mutant.path])
                    status.finished("error")
                    continue
                files: dict[str, bytes | None] = {mutant.path: mutant.data()}
                future = pool.submit(scratch.attempt, mutant.id, files, [mutant.path], limit)
                pending[future] = mutant
            for future in concurrent.futures.as_completed(pending):
                execution = future.result()
                assert execution is not None
                result = results[pending[future].id] = _judge(pending[future], execution)
                status.finished(result.outcome)
        finally:
            guard.hold()
            scratch.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            scratch.close()
            status.stop()
    isolation = "git worktrees" if project.git else "temporary copies"
    return Report(tuple(results[mutant.id] for mutant in mutants), isolation)


def bite(
    sources: Sequence[str | os.PathLike[str]],
    *,
    test: str = DEFAULT_TEST,
    baselines: str | os.PathLike[str] = "baselines",
    labels: Sequence[str] = (),
    operators: Sequence[str] = OPERATORS,
    jobs: int | None = None,
    timeout: float | None = None,
    progress: IO[str] | None = None,
    shard: tuple[int, int] | None = None,
    loose: bool = False,
) -> Report:
    """Mutate the calls to the pinned collaborators in `sources` and run `test` on each mutant.

    Runs from the current folder: the project is its git repository (scratch worktrees)
    or the folder itself (temporary copies). Raises CallpinError when it cannot run.
    """
    project, snapshot, mutants = plan(
        sources, baselines=baselines, labels=labels, operators=operators, shard=shard, loose=loose
    )
    if shard is not None and not mutants:
        return Report((), "no scratch copies", shard)
    report = run(project, snapshot, mutants, test=test, jobs=jobs, timeout=timeout, progress=progress)
    return Report(report.results, report.isolation, shard)
