"""`callpin git-setup`: make git show .cpin logs as calls, with a textconv driver that always runs.

Three settings: `diff.callpin.textconv` in the repository's own config,
`*.cpin diff=callpin` in the `.gitattributes` at its top, and `*.cpin.received` in its
`.gitignore` (received logs wait for `callpin review`; they are never committed). The
driver names this interpreter by its absolute path, and is tried once as git would run it.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

from .atomic import replace_file
from .errors import GitError, UsageError
from .git import CALLER, run_git
from .logfile import write_log
from .received import PATTERN as RECEIVED_PATTERN

GIT_ATTRIBUTE = "*.cpin diff=callpin"
GIT_IGNORE = RECEIVED_PATTERN


@dataclass
class Setup:
    """What git-setup did, one line per step, and a warning when the driver does not run."""

    lines: list[str] = field(default_factory=list)
    warning: str | None = None


def textconv_command() -> str:
    """The textconv driver: this interpreter, by its absolute path, running `callpin show`.

    git runs it with its own PATH, where a virtual environment's `callpin` may not be
    (the environment not activated, an IDE, a GUI client): the interpreter's path
    reaches the callpin installed beside it either way.
    """
    return f"{shlex.quote(sys.executable)} -m callpin show"


def textconv_failure(command: str) -> str | None:
    """Why `command` fails on a log as git would run it (through sh), or None when it works."""
    with tempfile.TemporaryDirectory(prefix="callpin-git-setup-") as folder:
        sample = os.path.join(folder, "sample.cpin")
        write_log(sample, [])
        try:
            done = subprocess.run(
                ["sh", "-c", f'{command} "$@"', command, sample],
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                check=False,
                timeout=60,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return str(exc)
    if done.returncode == 0:
        return None
    return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]


def git_setup() -> Setup:
    """Set the driver and the attribute in the repository of the working directory (each once)."""
    done = Setup()
    top = _git("rev-parse", "--show-toplevel").strip()
    textconv = textconv_command()
    current = _git("config", "--local", "--get", "diff.callpin.textconv", allow_failure=True).strip()
    if current == textconv:
        done.lines.append(f"git config diff.callpin.textconv is already '{textconv}'")
    else:
        _git("config", "--local", "diff.callpin.textconv", textconv)
        was = f" (was '{current}')" if current else ""
        done.lines.append(f"set git config diff.callpin.textconv = '{textconv}'{was}")
    failure = textconv_failure(textconv)
    if failure is not None:
        # Written anyway (the configuration is git-setup's job), but said loudly: git
        # would stop every diff of a .cpin file with "unable to read files to diff".
        done.warning = (
            f"warning: git cannot run '{textconv}' on a log here: {failure}; reinstall callpin and run "
            "`callpin git-setup` again from the Python it is installed in"
        )
    done.lines.append(_add_line(os.path.join(top, ".gitattributes"), GIT_ATTRIBUTE))
    done.lines.append(_add_line(os.path.join(top, ".gitignore"), GIT_IGNORE))
    return done


def _add_line(path: str, line: str) -> str:
    """Add `line` to the file at `path` unless it has it already; what was done, in words."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except FileNotFoundError:
        text = ""
    if any(present.split() == line.split() for present in text.splitlines()):
        return f"{path} already has '{line}'"
    # Rewritten whole, like a log: a killed git-setup never leaves half a line.
    joined = text + ("\n" if text and not text.endswith("\n") else "") + line + "\n"
    replace_file(path, joined.encode("utf-8"))
    return f"added '{line}' to {path}"


def _git(*args: str, allow_failure: bool = False) -> str:
    try:
        return run_git(args, policy=CALLER, check=not allow_failure).text
    except GitError as exc:
        if exc.returncode is None:
            raise UsageError("git-setup needs git, and git is not installed") from None
        reason = (exc.stderr.strip().splitlines() or [f"exit status {exc.returncode}"])[0]
        raise UsageError(f"git {args[0]} failed: {reason}") from None
