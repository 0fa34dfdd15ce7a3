"""pin(): record, then compare with the baseline; the pin modes and the CI policy."""

from __future__ import annotations

import os
import shlex
from typing import Any, Protocol

from .codec import OBJECT_BUDGET
from .diff import Diff, check_options, diff
from .errors import BaselineMissing, Drift, LogFormatError, ModeRefused, RulesMismatch, UsageError
from .logfile import Log, load
from .received import received_path, remove_received, write_received
from .recorder import Recording
from .render_diff import render_text, summary_line
from .renormalize import reconcile
from .spy import SpySpec
from .text import counted

MODES = ("check", "new", "update")
MODE_VARIABLE = "CALLPIN_MODE"
PROBE_VARIABLE = "CALLPIN_PROBE"
_FALSE = ("", "0", "false", "no", "off")
# How an object over the state budget was written (values.Identities.past_budget).
_PAST_BUDGET = {
    "shallow": "written shallow, the objects it holds by identity and a digest of their state",
    "identity": "by identity and a digest of its state alone (a change shows, not where)",
}


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


# How many lines of differences a drift's message shows (pytest: --callpin-diff-lines).
DIFF_LINES = 40


class PinObserver(Protocol):
    """What a runner of pins (the pytest plugin) tells every pin of its run, and learns from it.

    Registered with `observe()` for the length of a run, so that a plain
    `callpin.pin(path)` in a test follows the run's mode and budget and is counted
    like the fixture's pins; without one (outside pytest), a pin speaks for itself.
    """

    mode: str
    diff_lines: int | None

    def shown(self, path: str) -> str:
        """How messages name the baseline at `path` (e.g. relative to the project)."""

    def command_path(self, path: str) -> str:
        """`path` as a command typed where the run was started names it."""

    def create_command(self) -> str | None:
        """The command that writes the running test's missing baselines, if any test runs."""

    def review_command(self) -> str:
        """The `callpin review` command for this run's baselines folder."""

    def pinned(self, path: str, outcome: str, note: str | None) -> None:
        """A pin of `path` ended with `outcome` (same, written, updated, drifted, missing)."""


_observers: list[PinObserver] = []


def observe(observer: PinObserver) -> None:
    """Make `observer` the runner every pin reports to, until `unobserve`; runs nest."""
    _observers.append(observer)


def unobserve(observer: PinObserver) -> None:
    """Stop reporting to `observer` (and to any runner registered after it)."""
    if observer in _observers:
        del _observers[_observers.index(observer) :]


def pin(
    path: str | os.PathLike[str],
    *,
    spy: SpySpec,
    mode: str | None = None,
    diff_lines: int | None = None,
    shown_as: str | None = None,
    order: str = "strict",
    ignore: tuple[str, ...] | list[str] = (),
    **record_options: Any,
) -> Pin:
    """Record like `record()`, then compare with the baseline at `path` when the block ends.

    ::

        with callpin.pin("baselines/renew.cpin", spy=["billing.charge_card"]):
            renewals.renew(case)

    `check` (default) raises `callpin.Drift` when the calls differ, with the rendered
    diff as its message and the `Diff` as `.diff`, and `BaselineMissing` when there is
    no baseline; `new` writes a missing baseline; `update` rewrites a differing one.
    The mode comes from `mode`, else the pytest run's (`--callpin-mode`), else
    CALLPIN_MODE; under CI, `new` and `update` are refused. A block that raises is not
    compared: its exception is the failure.

    A drift or a missing baseline leaves the new log beside the baseline as a received
    log (`renew.cpin.received`, see `received.py`) for `callpin review`; a pin that
    passes removes it. The message shows at most `diff_lines` lines of differences
    (default 40; 0 for all). `shown_as` is how messages name the baseline (default:
    `path`), e.g. a path relative to a project's root where `path` is absolute.
    `order` and `ignore` are those of `callpin.diff`: how the calls are compared
    ("strict", "thread", "none") and the fields or key paths left out.
    """
    return Pin(
        path,
        spy=spy,
        mode=mode,
        diff_lines=diff_lines,
        shown_as=shown_as,
        order=order,
        ignore=ignore,
        **record_options,
    )


class Pin:
    """The context manager `pin()` returns: a `Recording` compared with a baseline on exit.

    After the block, `outcome` is one of `same`, `written`, `updated`, `drifted`,
    `missing` (or None when the block raised), `note` the line the pytest plugin's pin
    report shows for it (what was written or updated, and the objects over the state
    budget the log does not pin in full), `diff` is the comparison made, and
    `received` the received log written (None when there is none).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        spy: SpySpec,
        mode: str | None = None,
        diff_lines: int | None = None,
        shown_as: str | None = None,
        order: str = "strict",
        ignore: tuple[str, ...] | list[str] = (),
        **record_options: Any,
    ) -> None:
        # Checked now: a bad option is the test's mistake, not a drift found on exit.
        check_options(order, ignore)
        self.order = order
        self.ignore = tuple(ignore)
        self.path = os.fspath(path)
        self._observer = _observers[-1] if _observers else None
        observer = self._observer
        self.shown = shown_as or (observer.shown(self.path) if observer is not None else self.path)
        self.mode = resolve_mode(mode or (observer.mode if observer is not None else None))
        if diff_lines is None and observer is not None:
            diff_lines = observer.diff_lines
        self.diff_lines = DIFF_LINES if diff_lines is None else diff_lines
        self.recording = Recording(None, spy=spy, **record_options)
        self.outcome: str | None = None
        self.note: str | None = None
        self.diff: Diff | None = None
        self.received: str | None = None

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
        self.note = note
        if self._observer is not None:
            self._observer.pinned(self.path, outcome, note)

    def _write(self) -> None:
        """Write the new log as the baseline; a received log beside it is stale now."""
        self.recording.write(self.path)
        remove_received(self.path)

    def _receive(self) -> str:
        """Keep the new log beside the baseline for review; its path as messages name it."""
        recording = self.recording
        self.received = write_received(self.path, recording.frames, recording.rules, recording.meta)
        return received_path(self.shown)

    def _compare(self) -> None:
        __tracebackhide__ = True
        recording = self.recording
        # The new side is named as the received log it becomes when the pin fails.
        new_log = Log.from_frames(
            recording.frames, rules=recording.rules, meta=recording.meta, path=received_path(self.shown)
        )
        if not os.path.exists(self.path):
            if self.mode == "check":
                received = self._receive()
                self._report("missing")
                raise BaselineMissing(self.shown, self._create_hint(), received=received, review=self._review_hint())
            self._write()
            self._report("written", f"wrote {self.shown} ({counted(len(new_log), 'event')}){self._past_budget()}")
            return
        try:
            with open(self.path, "rb") as file:
                old_log = load(self.shown, data=file.read())
        except LogFormatError:
            if self.mode != "update":
                self._receive()
                raise
            self._write()
            self._report("updated", f"rewrote unreadable {self.shown} ({counted(len(new_log), 'event')})")
            return
        new_rules = old_log.rules != new_log.rules
        if new_rules:
            try:
                # A baseline recorded with fewer rules is compared as if recorded
                # with them: adding a rule fails no pin whose calls are the same.
                old_log, new_log = reconcile(old_log, new_log, names=(self.shown, "this recording"))
            except RulesMismatch as exc:
                if self.mode == "update":
                    self._write()
                    self._report("updated", f"rewrote {self.shown} with new normalization rules")
                    return
                self._receive()
                raise RulesMismatch(
                    f"{exc}: re-record the baseline (mode 'update') or record with the baseline's rules",
                    old=exc.old,
                    new=exc.new,
                ) from None
        if old_log.fingerprint == new_log.fingerprint and len(old_log) == len(new_log):
            self._same(new_rules)
            return
        self.diff = found = diff(old_log, new_log, order=self.order, ignore=self.ignore)
        if found.same:
            self._same(new_rules)
            return
        if self.mode == "update":
            self._write()
            how = " with new normalization rules" if new_rules else ""
            self._report("updated", f"updated {self.shown}{how}: {summary_line(found)}{self._past_budget()}")
            return
        received = self._receive()
        self._report("drifted", f"drifted {self.shown}: {summary_line(found)}")
        raise Drift(self.shown, found, self._drift_message(found, received))

    def _same(self, new_rules: bool) -> None:
        """The calls are the baseline's; in update mode a baseline with older rules is rewritten."""
        if new_rules and self.mode == "update":
            self._write()
            self._report("updated", f"rewrote {self.shown} with new normalization rules; no call changed")
            return
        remove_received(self.path)
        self._report("same")

    def _past_budget(self) -> str:
        """What a written baseline does not pin: the objects over the state budget, if any."""
        past = self.recording.past_budget
        if not past:
            return ""
        shown = ", ".join(
            f"{type_name} {_PAST_BUDGET[how]} ({count}x)" for (type_name, how), count in sorted(past.items())
        )
        return (
            f"; objects over the {OBJECT_BUDGET}-byte state budget: {shown};"
            " register a form to pin what matters of them (docs/api.md)"
        )

    def _drift_message(self, found: Diff, received: str) -> str:
        text = render_text(found, limit=self.diff_lines or None)
        baseline, kept = self._command_path(self.path), self._command_path(self.received or received)
        return "\n".join(
            [
                f"interactions differ from {self.shown}",
                text,
                f"all of it: callpin diff {shlex.quote(baseline)} {shlex.quote(kept)}"
                f" (add --format html -o drift.html for a page)",
                f"next: {self._review_hint()} to accept or reject the received log, or rerun in update mode and bless",
            ]
        )

    def _command_path(self, path: str) -> str:
        return self._observer.command_path(path) if self._observer is not None else path

    def _review_hint(self) -> str:
        if self._observer is not None:
            command = self._observer.review_command()
        else:
            command = f"callpin review --baselines {shlex.quote(os.path.dirname(self.path) or '.')}"
        return command + (" (locally: CI only keeps the received log)" if ci_active() else "")

    def _create_hint(self) -> str:
        """The command that writes this missing baseline, as it works where it is read."""
        command = self._observer.create_command() if self._observer is not None else None
        if command is None:
            command = "callpin.pin(..., mode='new'), or CALLPIN_MODE=new for the whole run"
        if ci_active():
            command = f"{command} (locally: CI refuses to write baselines)"
        return command
