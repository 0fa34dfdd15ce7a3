"""Review received logs: accept one (it replaces its baseline and is blessed) or reject it.

A pin that drifts, or has no baseline, leaves its new log beside the baseline
(`received.py`). Reviewing is the step after: `pending` lists what waits, `accept`
moves a received log over its baseline and records the blessing in the manifest (so
`callpin gate` sees the change as accepted, with its reason), `reject` deletes it.
`Walk` is the interactive form: one item at a time on a terminal, one key each.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import click

from . import manifest
from .diff import Diff, diff
from .errors import CallpinError, ModeRefused, UsageError
from .gate import Blessing, bless
from .logfile import Log, load
from .pinning import ci_active
from .received import baseline_of, find_received
from .render_diff import render_text, summary_line
from .render_html import render_html
from .render_log import render_log
from .text import counted

KEYS = {"a": "accept", "r": "reject", "s": "skip", "h": "html", "q": "quit"}


@dataclass(frozen=True)
class Pending:
    """One received log waiting for review, and the baseline it would replace."""

    received: Path
    baseline: Path
    name: str  # the baseline relative to the baselines folder, as the manifest names it

    @property
    def new(self) -> bool:
        """True when there is no baseline yet: accepting writes the first one."""
        return not self.baseline.exists()

    def diff(self) -> Diff | None:
        """The baseline compared with the received log; None for a new baseline."""
        if self.new:
            return None
        return diff(load(self.baseline), load(self.received))

    def summary(self) -> str:
        """One line: the diff's summary, or the size of a new baseline."""
        try:
            found = self.diff()
        except CallpinError as exc:
            return f"cannot compare: {exc}"
        if found is None:
            return f"new baseline: {counted(len(load(self.received)), 'event')}"
        return summary_line(found)


def pending(folder: str | os.PathLike[str]) -> list[Pending]:
    """Every received log under the baselines folder, sorted by baseline."""
    root = Path(folder)
    found = []
    for received in find_received(root):
        baseline = Path(baseline_of(received))
        found.append(Pending(received, baseline, baseline.relative_to(root).as_posix()))
    return found


def select(folder: str | os.PathLike[str], paths: Iterable[str]) -> list[Pending]:
    """The pending items named by `paths` (each a received log or its baseline)."""
    waiting = pending(folder)
    by_file = {os.path.abspath(item.received): item for item in waiting}
    by_file.update({os.path.abspath(item.baseline): item for item in waiting})
    chosen: list[Pending] = []
    for path in paths:
        item = by_file.get(os.path.abspath(path)) or by_file.get(os.path.abspath(Path(folder) / path))
        if item is None:
            raise UsageError(f"{path}: no received log waits for review under {folder}")
        if item not in chosen:
            chosen.append(item)
    return chosen


def accept(items: list[Pending], *, reason: str, folder: str | os.PathLike[str]) -> list[Blessing]:
    """Replace each baseline with its received log and bless it with `reason`."""
    if ci_active():
        raise ModeRefused(
            f"accepting received logs writes baselines and is refused under CI (CI={os.environ.get('CI')}); "
            "review them locally"
        )
    reason = manifest.check_reason(reason)
    for item in items:
        # The received log is read before it replaces anything: a damaged one is refused.
        load(item.received)
    for item in items:
        os.replace(item.received, item.baseline)
    return bless([item.name for item in items], reason=reason, folder=os.fspath(folder)) if items else []


def reject(items: list[Pending]) -> None:
    """Delete each received log; its baseline stays as it was."""
    for item in items:
        item.received.unlink(missing_ok=True)


def read_key() -> str:
    """One key from the terminal, without waiting for Enter.

    A key typed while the previous answer was still being read is kept, where
    click.getchar would flush it (it takes the terminal raw with TCSAFLUSH).
    """
    try:
        import termios
        import tty
    except ImportError:  # not a POSIX terminal
        return click.getchar()
    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd, termios.TCSANOW)
        return os.read(fd, 1).decode("utf-8", "replace")
    finally:
        termios.tcsetattr(fd, termios.TCSANOW, saved)


class Walk:
    """The interactive review: each pending item's diff, then one key (a, r, s, h, q).

    `echo`, `page`, `key`, `ask` and `launch` are the terminal (click's functions by
    default), so a test can drive a walk through a pseudo-terminal or by hand.
    """

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        reason: str | None = None,
        color: bool = False,
        echo: Callable[[str], None] = click.echo,
        page: Callable[[str], None] | None = None,
        key: Callable[[], str] | None = None,
        ask: Callable[[str, str | None], str] | None = None,
        launch: Callable[[str], object] = click.launch,
    ) -> None:
        self.folder = folder
        self.reason = reason
        self.color = color
        self.echo = echo
        self.page = page or self._page
        self.key = key or read_key
        self.ask = ask or (lambda text, default: click.prompt(text, default=default, show_default=bool(default)))
        self.launch = launch
        self.accepted: list[str] = []
        self.rejected: list[str] = []
        self.skipped: list[str] = []

    def run(self) -> int:
        """Walk every pending item; the number still pending afterwards."""
        items = pending(self.folder)
        if not items:
            self.echo(f"nothing to review under {self.folder}")
            return 0
        for number, item in enumerate(items, start=1):
            self.echo(f"[{number}/{len(items)}] {item.name}: {item.summary()}")
            self.page(self._report(item))
            if self._choose(item) == "quit":
                self.skipped.extend(other.name for other in items[number:])
                break
        self.echo(
            f"review: {len(self.accepted)} accepted, {len(self.rejected)} rejected, {len(self.skipped)} left pending"
        )
        return len(self.skipped)

    def _report(self, item: Pending) -> str:
        found = item.diff()
        if found is None:
            return render_log(load(item.received))
        return render_text(found, color=self.color)

    def _choose(self, item: Pending) -> str:
        while True:
            self.echo("accept [a], reject [r], skip [s], open the HTML report [h], quit [q]? ")
            action = KEYS.get(self.key().lower())
            if action == "accept":
                if ci_active():
                    self.echo("accepting is refused under CI: review the received logs locally")
                    continue
                reason = self.ask("reason for accepting", self.reason)
                try:
                    for blessing in accept([item], reason=reason, folder=self.folder):
                        self.echo(blessing.describe())
                except UsageError as exc:
                    self.echo(f"not accepted: {exc}")
                    continue
                self.reason = reason
                self.accepted.append(item.name)
                return action
            if action == "reject":
                reject([item])
                self.echo(f"rejected: deleted {item.received}")
                self.rejected.append(item.name)
                return action
            if action in ("skip", "quit"):
                self.skipped.append(item.name)
                return action
            if action == "html":
                self.echo(f"opened {self._html(item)}")

    def _html(self, item: Pending) -> str:
        found = item.diff()
        if found is None:
            # A new baseline: the whole received log, as extra events against an empty one.
            received = load(item.received)
            found = diff(Log.from_frames([], rules=received.rules, path=item.name), received)
        handle, path = tempfile.mkstemp(prefix="callpin-review-", suffix=".html")
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(render_html(found))
        self.launch(path)
        return path

    def _page(self, text: str) -> None:
        # A report that fits the terminal is printed; a longer one goes through the pager.
        if text.count("\n") + 4 < shutil.get_terminal_size().lines:
            self.echo(text)
        else:
            click.echo_via_pager(text + "\n", color=self.color)
