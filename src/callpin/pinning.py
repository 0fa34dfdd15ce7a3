"""pin(): record, then compare with the baseline; the pin modes and the CI policy."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from .diff import Diff, diff
from .errors import BaselineMissing, Drift, LogFormatError, ModeRefused, RulesMismatch, UsageError
from .logfile import load
from .normalize import RuleSet
from .recorder import Recording
from .render_diff import render_text, summary_line
from .spy import SpySpec

MODES = ("check", "new", "update")
MODE_VARIABLE = "CALLPIN_MODE"
PROBE_VARIABLE = "CALLPIN_PROBE"
_FALSE = ("", "0", "false", "no", "off")


def ci_active() -> bool:
    """Whether the environment says this is CI (`CI` set to a true value)."""
    return os.environ.get("CI", "").strip().lower() not in _FALSE


def resolve_mode(mode: str | None) -> str:
    """The pin mode: `mode`, else CALLPIN_MODE, else `check`; the one rule of every pin.

    `pin()` and the pytest plugin both ask here, so the mode means the same thing and
    fails with the same message wherever a baseline is compared: UsageError for a mode
    that does not exist, ModeRefused for a writing mode (`new`, `update`) under CI.
    """
    if mode:
        chosen, origin = mode, f"mode={mode!r}"
    else:
        chosen = os.environ.get(MODE_VARIABLE) or "check"
        origin = f"{MODE_VARIABLE}={chosen!r}"
    if chosen not in MODES:
        raise UsageError(f"{origin} is not a mode (choose from {', '.join(MODES)})")
    if chosen != "check" and ci_active():
        raise ModeRefused(
            f"mode {chosen!r} writes baselines and is refused under CI "
            f"(CI={os.environ.get('CI')}); refresh baselines locally, review and bless them"
        )
    return chosen


def pin(
    path: str | os.PathLike[str],
    *,
    spy: SpySpec,
    mode: str | None = None,
    on_result: Callable[[str, str | None], None] | None = None,
    create_command: str | None = None,
    shown_as: str | None = None,
    **record_options: Any,
) -> Pin:
    """Record like `record()`, then compare with the baseline at `path` when the block ends.

    ::

        with callpin.pin("baselines/renew.cpin", spy=["billing.charge_card"]):
            renewals.renew(case)

    `check` (default) raises `callpin.Drift` when the calls differ, with the rendered
    diff as its message and the `Diff` as `.diff`, and `BaselineMissing` when there is
    no baseline; `new` writes a missing baseline; `update` rewrites a differing one.
    The mode comes from `mode`, else CALLPIN_MODE; under CI, `new` and `update` are
    refused. A block that raises is not compared: its exception is the failure.
    `shown_as` is how messages name the baseline (default: `path`), e.g. a path
    relative to a project's root where `path` is absolute.
    """
    return Pin(
        path,
        spy=spy,
        mode=mode,
        on_result=on_result,
        create_command=create_command,
        shown_as=shown_as,
        **record_options,
    )


class Pin:
    """The context manager `pin()` returns: a `Recording` compared with a baseline on exit.

    After the block, `outcome` is one of `same`, `written`, `updated`, `drifted`,
    `missing` (or None when the block raised), and `diff` is the comparison made.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        spy: SpySpec,
        mode: str | None = None,
        on_result: Callable[[str, str | None], None] | None = None,
        create_command: str | None = None,
        shown_as: str | None = None,
        **record_options: Any,
    ) -> None:
        self.path = os.fspath(path)
        self.shown = shown_as or self.path
        self.mode = resolve_mode(mode)
        self.recording = Recording(None, spy=spy, **record_options)
        self.outcome: str | None = None
        self.diff: Diff | None = None
        self._on_result = on_result
        self._create_command = create_command or (
            f"CALLPIN_MODE=new python -m pytest (or callpin.pin(..., mode='new')) to write {self.shown}"
        )

    def __enter__(self) -> Recording:
        return self.recording.__enter__()

    def __exit__(self, kind: type[BaseException] | None, exc: object, tb: object) -> None:
        # A failed comparison is reported at the test's `with` line, not inside callpin.
        __tracebackhide__ = True
        self.recording.stop()
        if kind is not None and not issubclass(kind, Exception):
            return
        self.recording.export(self.shown)
        if kind is not None or os.environ.get(PROBE_VARIABLE, "") not in _FALSE:
            # A raising block is already a failure; a probe run only records.
            return
        self._compare()

    def _report(self, outcome: str, note: str | None = None) -> None:
        self.outcome = outcome
        if self._on_result is not None:
            self._on_result(outcome, note)

    def _compare(self) -> None:
        __tracebackhide__ = True
        new_log = self.recording.log()
        if not os.path.exists(self.path):
            if self.mode == "check":
                self._report("missing")
                raise BaselineMissing(self.shown, self._create_command)
            self.recording.write(self.path)
            self._report("written", f"wrote {self.shown} ({_count_events(len(new_log))})")
            return
        try:
            with open(self.path, "rb") as file:
                old_log = load(self.shown, data=file.read())
        except LogFormatError:
            if self.mode != "update":
                raise
            self.recording.write(self.path)
            events = _count_events(len(new_log))
            self._report("updated", f"rewrote unreadable {self.shown} ({events})")
            return
        if old_log.rules != new_log.rules:
            if self.mode == "update":
                self.recording.write(self.path)
                self._report("updated", f"rewrote {self.shown} with new normalization rules")
                return
            raise RulesMismatch(
                f"{self.shown} was recorded with rules {_rule_names(old_log.rules)}, "
                f"this recording uses {_rule_names(new_log.rules)}: re-record the baseline "
                "(mode 'update') or record with the baseline's rules"
            )
        if old_log.fingerprint == new_log.fingerprint and len(old_log) == len(new_log):
            self._report("same")
            return
        self.diff = found = diff(old_log, new_log)
        if found.same:
            self._report("same")
            return
        if self.mode == "update":
            self.recording.write(self.path)
            self._report("updated", f"updated {self.shown}: {summary_line(found)}")
            return
        self._report("drifted", f"drifted {self.shown}: {summary_line(found)}")
        rendered = f"interactions differ from {self.shown}\n{render_text(found)}"
        raise Drift(self.shown, found, rendered)


def _count_events(count: int) -> str:
    return f"{count} event{'' if count == 1 else 's'}"


def _rule_names(rules: RuleSet) -> str:
    return "[" + ", ".join(name for name, _ in rules.describe()) + "]"
