"""The exception hierarchy: one base, each subclass also the builtin it stands for."""

from __future__ import annotations

from typing import Any


class CallpinError(Exception):
    """Base of every error callpin raises on purpose."""


class UsageError(CallpinError, ValueError):
    """An argument or option that callpin cannot act on."""


class TargetError(CallpinError, LookupError):
    """A spy target that cannot be resolved or patched."""

    def __init__(self, target: str, message: str) -> None:
        super().__init__(f"cannot spy {target!r}: {message}")
        self.target = target


class LogFormatError(CallpinError, ValueError):
    """A file that is not a readable callpin log; subclasses say why."""

    def __init__(self, path: str | None, message: str, *, intact: int | None = None) -> None:
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{message}")
        self.path = path
        self.reason = message
        self.intact = intact


class NotALog(LogFormatError):
    """The file does not start with callpin's magic bytes."""


class UnsupportedVersion(LogFormatError):
    """The log's major format version is one this callpin cannot read."""

    def __init__(self, path: str | None, version: tuple[int, int]) -> None:
        super().__init__(path, f"unsupported format version {version[0]}.{version[1]} (this callpin reads 1.x)")
        self.version = version


class TruncatedLog(LogFormatError):
    """The log ends before its trailer."""


class CorruptLog(LogFormatError):
    """The log's bytes do not agree with its trailer, or cannot be decoded."""


class LimitExceeded(CorruptLog):
    """A decoding limit (nesting depth, string or container size) was exceeded."""

    def __init__(self, path: str | None, message: str, *, limit: int, intact: int | None = None) -> None:
        super().__init__(path, message, intact=intact)
        self.limit = limit


class ManifestError(CallpinError, ValueError):
    """A malformed line in baselines/MANIFEST."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}")
        self.path = path
        self.line = line


class BaselineMissing(CallpinError, AssertionError):
    """pin() in check mode found no baseline at its path; its new log was kept as `received`."""

    def __init__(self, path: str, command: str, *, received: str | None = None, review: str | None = None) -> None:
        message = f"no baseline at {path}; create it with: {command}"
        if received is not None:
            message += f"\nor accept its received log {received} with: {review or 'callpin review'}"
        super().__init__(message)
        self.path = path
        self.command = command
        self.received = received


class RulesMismatch(CallpinError, AssertionError):
    """A baseline and a new recording were normalized with different rules."""

    # `old` and `new` are the two `normalize.RuleSet`s; typed loosely so that this module,
    # the leaf every other imports, imports nothing of callpin.
    def __init__(self, message: str, *, old: Any = None, new: Any = None) -> None:
        super().__init__(message)
        self.old = old
        self.new = new


class Drift(CallpinError, AssertionError):
    """The recorded interactions differ from the baseline."""

    # `diff` is the `diff.Diff` found (typed loosely: see RulesMismatch).
    def __init__(self, path: str, diff: Any, rendered: str) -> None:
        super().__init__(rendered)
        self.path = path
        self.diff = diff


class ModeRefused(UsageError):
    """A writing mode (new, update) asked for where writing baselines is not allowed (CI)."""


class GitError(CallpinError, RuntimeError):
    """git could not answer (not installed, not a repository, unknown revision...).

    `returncode` is git's exit status (None when git could not be started) and `stderr`
    what it printed, for a caller that words the failure its own way.
    """

    def __init__(self, message: str, *, returncode: int | None = None, stderr: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.stderr = stderr


class BiteError(CallpinError, RuntimeError):
    """`callpin bite` could not run its mutants (the unmutated command fails, git refuses...)."""

    def __init__(self, message: str, *, output: str = "") -> None:
        super().__init__(message)
        self.output = output


class DemoError(CallpinError, RuntimeError):
    """A `callpin demo` step did not end the way the story needs (the message says which)."""
