"""Run git: one subprocess runner, and each caller's policy for the environment git sees.

Every git command callpin runs goes through `run_git`. What differs between callers is
named, not copied: a `Policy` says which options come before the command, which
environment git runs in and whether it runs in a session of its own.

- `CALLER` (`callpin git-setup`): the user's own git, in the user's environment.
- `READ_ONLY` (gate and bless): questions about the user's repository, answered in
  English (LC_ALL=C) and never waiting on a password prompt.
- `SCRATCH` (bite): commands that create and remove scratch worktrees, aimed only at
  the repository bite names, never at an index or work tree the environment points to.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .errors import GitError

# Variables that point git at one particular index or work tree (set inside git hooks,
# for instance). Inherited, they would aim bite's own git commands, and the test
# command's, at the user's index instead of the scratch worktree's.
GIT_LOCAL_ENV = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_PREFIX",
        "GIT_NAMESPACE",
        "GIT_CEILING_DIRECTORIES",
        "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    }
)


def without_repository(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without the variables that aim git at one repository (GIT_LOCAL_ENV)."""
    return {key: value for key, value in environ.items() if key not in GIT_LOCAL_ENV}


@dataclass(frozen=True)
class Policy:
    """How one caller runs git: options before the command, its environment, its session."""

    environment: Callable[[], dict[str, str]]
    options: tuple[str, ...] = ()
    # A session of its own: a Ctrl-C meant for the caller does not reach git half-way
    # through a command; the caller cleans up itself.
    own_session: bool = False


def _caller_environment() -> dict[str, str]:
    return dict(os.environ)


def _read_only_environment() -> dict[str, str]:
    return {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


def _scratch_environment() -> dict[str, str]:
    env = without_repository(os.environ)
    # Read-only commands must not refresh the user's index behind their back.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


CALLER = Policy(_caller_environment)
READ_ONLY = Policy(_read_only_environment)
# Pathspecs are file names, never patterns; the user's hooks do not run on scratch
# branches and worktrees.
SCRATCH = Policy(
    _scratch_environment,
    options=("--literal-pathspecs", "-c", "core.hooksPath=/dev/null"),
    own_session=True,
)


@dataclass(frozen=True)
class GitOutput:
    """What one git command printed, and how it exited."""

    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def text(self) -> str:
        """The standard output as text; bytes that are not UTF-8 (a file name) survive a round trip."""
        return self.stdout.decode("utf-8", "surrogateescape")


def run_git(
    args: Sequence[str],
    *,
    policy: Policy,
    cwd: str | os.PathLike[str] | None = None,
    check: bool = True,
) -> GitOutput:
    """Run `git ARGS` in `cwd` under `policy`.

    Raises GitError when git is not installed, and, with `check`, when it exits non-zero
    (the message is git's last line on stderr; `returncode` and `stderr` are kept).
    """
    try:
        done = subprocess.run(
            ["git", *policy.options, *args],
            cwd=cwd,
            env=policy.environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            start_new_session=policy.own_session,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if check and done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace")
        lines = stderr.strip().splitlines()
        raise GitError(
            lines[-1] if lines else f"git {args[0]} failed",
            returncode=done.returncode,
            stderr=stderr,
        )
    return GitOutput(done.returncode, done.stdout, done.stderr)
