"""The project bite runs in: its root, git or not, and a snapshot of its SOURCE files.

In git, the snapshot is every file git tracks or would track under SOURCE, so the user's
uncommitted and untracked changes travel into the scratch worktrees; outside git, it is
the Python files below SOURCE. bite's own git commands run through `git_at`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import BiteError, GitError, UsageError
from ..git import SCRATCH, GitOutput, run_git
from ..source_files import python_files


def git_at(root: Path, *args: str, check: bool = True) -> GitOutput:
    """Run one of bite's git commands in `root`; with `check`, a failure is a BiteError naming it."""
    try:
        return run_git(args, policy=SCRATCH, cwd=root, check=check)
    except GitError as exc:
        if exc.returncode is None:
            raise
        raise BiteError(f"git {' '.join(args[:2])} failed: {exc.stderr.strip()}") from None


@dataclass(frozen=True)
class Project:
    """The folder the test command runs in: a git repository's top level, or the current folder."""

    root: Path
    head: str | None

    @property
    def git(self) -> bool:
        return self.head is not None

    @classmethod
    def locate(cls) -> Project:
        cwd = Path.cwd().resolve()
        try:
            found = git_at(cwd, "rev-parse", "--show-toplevel", check=False)
        except GitError:  # git is not installed
            return cls(cwd, None)
        if found.returncode != 0:
            return cls(cwd, None)
        root = Path(found.text.strip()).resolve()
        head = git_at(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
        if head.returncode != 0:
            raise UsageError(f"the repository {root} has no commit yet; commit once, then run bite")
        return cls(root, head.text.strip())


def _relative(project: Project, path: Path) -> str:
    try:
        return path.resolve().relative_to(project.root).as_posix()
    except ValueError:
        raise UsageError(f"{path} is outside the project {project.root}") from None


def snapshot_sources(project: Project, sources: Sequence[str | os.PathLike[str]]) -> dict[str, bytes | None]:
    """The SOURCE files as they are now: relative path to bytes, None for a deleted tracked file.

    In git, every file git tracks or would track under SOURCE (so the user's uncommitted
    and untracked changes travel into the scratch worktrees); outside git, the Python files.
    """
    if not sources:
        raise UsageError("name at least one SOURCE file or folder")
    paths = []
    for source in sources:
        path = Path(source)
        if not path.exists():
            raise UsageError(f"no such file or folder: {source}")
        paths.append(path.resolve())
        _relative(project, path)
    names: set[str] = {_relative(project, path) for path in paths if path.is_file()}
    if project.git:
        listed = git_at(
            project.root,
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            *(_relative(project, path) or "." for path in paths),
        )
        names.update(name for name in listed.text.split("\0") if name)
    else:
        for path in paths:
            if path.is_dir():
                names.update(_relative(project, found) for found in python_files(path))
    snapshot: dict[str, bytes | None] = {}
    for name in sorted(names):
        target = project.root / name
        # A symlink out of the project would carry its target's text into the copies,
        # and make bite's report about a file the tests may never import from there.
        if not target.resolve().is_relative_to(project.root):
            raise UsageError(
                f"{name} is a symlink to {target.resolve()}, outside the project {project.root}; "
                "bite mutates only files inside it"
            )
        snapshot[name] = target.read_bytes() if target.is_file() else None
    return snapshot
