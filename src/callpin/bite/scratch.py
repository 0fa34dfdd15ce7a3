"""Scratch copies of the project for bite: git worktrees or temporary copies, and the commands run in them.

A run owns one folder in the temporary directory (named with bite's pid, so a later
run can tell a killed run's leftovers from a live one's) and, in git, scratch branches
under `callpin-bite/<run>/`. Each copy gets the SOURCE snapshot written into it; the test
command runs there in a process group of its own, with the start-up hook (`_hook.py`)
first on PYTHONPATH to note which copy of each watched file it imported, and how its
tests failed (`_failures.py`). Everything of a run, children included, goes when the
run is closed or cancelled.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..atomic import process_alive
from ..errors import BiteError, UsageError
from ..git import without_repository
from ..site_hook import install_hook
from ..source_files import skipped
from .project import Project, git_at

BRANCH_PREFIX = "callpin-bite"

_OUTPUT_TAIL = 20
# The hook reads the same two names: it runs on the standard library alone, so it
# cannot import them from here.
_MARKER_ENV = "CALLPIN_BITE_MARKER"
_WATCH_ENV = "CALLPIN_BITE_WATCH"
_FAILURES_ENV = "CALLPIN_BITE_FAILURES"
_HOOK = Path(__file__).with_name("_hook.py")
_FAILURES = Path(__file__).with_name("_failures.py")
_FAILURES_MODULE = "callpin_bite_failures.py"
_KINDS = ("drift", "assert", "error")
_FOLDER_PREFIX = "callpin-bite-"
_RUN_ID = re.compile(r"^(\d+)-[0-9a-f]+$")


def _stale(run_id: str) -> bool:
    match = _RUN_ID.match(run_id)
    return match is not None and not process_alive(int(match.group(1)))


def _import_root(root: Path, relative: str) -> Path:
    folder = (root / relative).parent
    while folder != root and (folder / "__init__.py").exists():
        folder = folder.parent
    return folder


def _module_name(root: Path, relative: str) -> str:
    path = (root / relative).relative_to(_import_root(root, relative))
    parts = list(path.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@dataclass(frozen=True)
class Failure:
    """One failure the command's processes wrote down: its kind (drift, assert, error), exception type and place."""

    kind: str
    type: str
    where: str


@dataclass(frozen=True)
class Execution:
    """One run of the test command in one copy: how it ended, which copy of each watched
    file it imported, and the failures its tests reported."""

    returncode: int | None
    timed_out: bool
    seconds: float
    imported: dict[str, tuple[bool, str | None]]
    output: str
    failures: tuple[Failure, ...] = ()


class Scratch:
    """One run's scratch copies: git worktrees on scratch branches, or temporary copies."""

    def __init__(self, project: Project, snapshot: dict[str, bytes | None], command: str) -> None:
        self.project = project
        self.snapshot = snapshot
        self.command = command
        self.run_id = f"{os.getpid()}-{secrets.token_hex(3)}"
        self.cancelled = threading.Event()
        self._git_lock = threading.Lock()
        self._lock = threading.Lock()
        self._processes: set[subprocess.Popen[bytes]] = set()
        self._temp = Path(tempfile.gettempdir()).resolve()
        if self._temp == project.root or project.root in self._temp.parents:
            raise UsageError(f"the temporary folder {self._temp} is inside the project; set TMPDIR elsewhere")
        self.folder = self._temp / f"{_FOLDER_PREFIX}{self.run_id}"

    # -- lifetime --------------------------------------------------------------------

    def open(self) -> Scratch:
        """Clear what killed runs left, then make this run's folder and hook.

        Apart from the constructor so that a caller can put it inside the `try` whose
        `finally` closes the run: a Ctrl-C halfway through leaves nothing behind.
        """
        self._prune(self._temp)
        self.folder.mkdir()
        for sub in ("hook", "markers", "failures", "logs", "copies"):
            (self.folder / sub).mkdir()
        install_hook(_HOOK, self.folder / "hook")
        shutil.copyfile(_FAILURES, self.folder / "hook" / _FAILURES_MODULE)
        return self

    def _prune(self, temp: Path) -> None:
        """Remove what a killed run left behind: its worktrees, branches and folder."""
        if self.project.git:
            stale = {ref.split("/")[1] for ref in self._scratch_branches("") if ref.count("/") >= 2}
            for run_id in sorted(run for run in stale if _stale(run)):
                self._sweep(run_id)
        for leftover in temp.glob(f"{_FOLDER_PREFIX}*"):
            if _stale(leftover.name[len(_FOLDER_PREFIX) :]):
                shutil.rmtree(leftover, ignore_errors=True)

    def _scratch_branches(self, run_id: str) -> list[str]:
        prefix = f"refs/heads/{BRANCH_PREFIX}/{run_id + '/' if run_id else ''}"
        listed = git_at(self.project.root, "for-each-ref", "--format=%(refname)", prefix)
        return [ref[len("refs/heads/") :] for ref in listed.text.splitlines() if ref]

    def _sweep(self, run_id: str) -> None:
        branches = set(self._scratch_branches(run_id))
        listed = git_at(self.project.root, "worktree", "list", "--porcelain").text
        for entry in listed.split("\n\n"):
            fields = dict(line.split(" ", 1) for line in entry.splitlines() if " " in line)
            if fields.get("branch", "").removeprefix("refs/heads/") in branches:
                self._forget_worktree(Path(fields["worktree"]))
        if branches:
            git_at(self.project.root, "branch", "-D", "--", *sorted(branches), check=False)

    def _forget_worktree(self, path: Path) -> None:
        remove = ("worktree", "remove", "--force", "--force", str(path))
        if git_at(self.project.root, *remove, check=False).returncode != 0:
            # A worktree git will not remove (a submodule inside, say): delete the files,
            # then let git forget the now missing worktree.
            shutil.rmtree(path, ignore_errors=True)
            git_at(self.project.root, *remove, check=False)

    def close(self) -> None:
        """Stop every child and remove every worktree, branch and file of this run."""
        self.cancel()
        if self.project.git:
            with self._git_lock:
                self._sweep(self.run_id)
        shutil.rmtree(self.folder, ignore_errors=True)

    def cancel(self) -> None:
        self.cancelled.set()
        with self._lock:
            for process in self._processes:
                _kill_group(process)

    # -- copies ----------------------------------------------------------------------

    def _branch(self, name: str) -> str:
        return f"{BRANCH_PREFIX}/{self.run_id}/{name}"

    def create(self, name: str, files: dict[str, bytes | None]) -> Path:
        """A fresh scratch copy of the project with the snapshot and `files` written into it."""
        path = self.folder / "copies" / name
        if self.project.git:
            assert self.project.head is not None
            with self._git_lock:
                git_at(
                    self.project.root,
                    "worktree",
                    "add",
                    "--quiet",
                    "--no-track",
                    "-b",
                    self._branch(name),
                    str(path),
                    self.project.head,
                )
        else:
            shutil.copytree(self.project.root, path, symlinks=True, ignore=_skip_in_copy)
        for relative, data in {**self.snapshot, **files}.items():
            target = path / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.parent.resolve().is_relative_to(path.resolve()):
                raise BiteError(f"{relative} lies in a folder that leads out of the scratch copy")
            # A symlink in the copy (checked out from the project, or copied as one)
            # may point into the user's tree: the file is written in its place instead,
            # never through it.
            if data is None or target.is_symlink():
                target.unlink(missing_ok=True)
            if data is not None:
                target.write_bytes(data)
        return path

    def discard(self, name: str, path: Path) -> None:
        if self.project.git:
            with self._git_lock:
                self._forget_worktree(path)
                git_at(self.project.root, "branch", "-D", "--", self._branch(name), check=False)
        else:
            shutil.rmtree(path, ignore_errors=True)

    # -- running ---------------------------------------------------------------------

    def attempt(
        self,
        name: str,
        files: dict[str, bytes | None],
        watched: Sequence[str],
        timeout: float | None,
    ) -> Execution | None:
        """Make a copy, run the command in it, remove it; None once the run is cancelled."""
        if self.cancelled.is_set():
            return None
        try:
            copy = self.create(name, files)
        except OSError as exc:
            raise BiteError(f"cannot make the scratch copy {name}: {exc}") from exc
        try:
            return self.execute(name, copy, watched, timeout)
        finally:
            self.discard(name, copy)

    def _environment(self, copy: Path, marker: Path, failures: Path, watched: Sequence[str]) -> dict[str, str]:
        env = without_repository(os.environ)
        roots = dict.fromkeys([str(_import_root(copy, name)) for name in watched] + [str(copy)])
        previous = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join([str(self.folder / "hook"), *roots, *([previous] if previous else [])])
        env[_MARKER_ENV] = str(marker)
        env[_WATCH_ENV] = json.dumps(sorted({Path(name).name for name in watched}))
        env[_FAILURES_ENV] = str(failures)
        return env

    def execute(self, name: str, copy: Path, watched: Sequence[str], timeout: float | None) -> Execution:
        """Run the test command in `copy` and say which copy of each watched file it imported."""
        marker = self.folder / "markers" / name
        failures = self.folder / "failures" / name
        log = self.folder / "logs" / name
        started = time.monotonic()
        with open(log, "wb") as output:
            process = subprocess.Popen(
                self.command,
                shell=True,
                cwd=copy,
                env=self._environment(copy, marker, failures, watched),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            with self._lock:
                self._processes.add(process)
                if self.cancelled.is_set():
                    _kill_group(process)
            timed_out = False
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                # Whatever the command left running in its group goes with it.
                _kill_group(process)
                process.wait()
                with self._lock:
                    self._processes.discard(process)
        seen = [line.split("\t", 1) for line in _read_text(marker).splitlines() if "\t" in line]
        imported = {}
        for relative in watched:
            expected = os.path.realpath(copy / relative)
            original = os.path.realpath(self.project.root / relative)
            module = _module_name(copy, relative)
            hit = any(path == expected for path, _ in seen)
            elsewhere = next(
                (path for path, name in seen if path != expected and (path == original or name == module)),
                None,
            )
            imported[relative] = (hit, elsewhere)
        tail = _read_text(log).splitlines()[-_OUTPUT_TAIL:]
        return Execution(
            None if timed_out else process.returncode,
            timed_out,
            time.monotonic() - started,
            imported,
            "\n".join(tail),
            _read_failures(failures),
        )


def _skip_in_copy(folder: str, names: list[str]) -> set[str]:
    return {name for name in names if skipped(folder, name)}


def _read_failures(path: Path) -> tuple[Failure, ...]:
    """The failures in the file the children wrote; a line bite cannot read is no evidence and is left out."""
    found = []
    for line in _read_text(path).splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("kind") in _KINDS:
            found.append(Failure(entry["kind"], str(entry.get("type", "")), str(entry.get("where", ""))))
    return tuple(found)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
