"""Throw-away git repositories for tests: made with one fixed identity, git run in them.

Every test that needs a repository makes it here, so commits never depend on the
machine's git identity, and `git status` never refreshes the index a test compares
byte for byte (GIT_OPTIONAL_LOCKS=0).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "callpin",
    "GIT_AUTHOR_EMAIL": "callpin@example.invalid",
    "GIT_COMMITTER_NAME": "callpin",
    "GIT_COMMITTER_EMAIL": "callpin@example.invalid",
}


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` with the fixed identity; its output (CalledProcessError when it fails)."""
    env = {**os.environ, **IDENTITY, "GIT_OPTIONAL_LOCKS": "0"}
    return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout


def new_repository(root: Path, *, commit: str | None = None) -> Path:
    """A repository at `root` (made if missing) on branch main; with `commit`, all its files committed."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    if commit is not None:
        commit_all(root, commit)
    return root


def commit_all(repo: Path, message: str) -> None:
    """Stage every file of the working tree and commit it."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
