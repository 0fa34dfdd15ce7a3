"""Progress on a terminal: one line, redrawn in place as work finishes; nothing anywhere else.

bite and probe both draw one: a report piped to a file or read by a machine must carry
no progress, so a stream that is not a terminal gets nothing at all.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import IO


class Progress:
    """Called with (done, total): redraws `describe(done, total)` over the line, ends it when all are done."""

    def __init__(self, stream: IO[str] | None, describe: Callable[[int, int], str]) -> None:
        isatty = getattr(stream, "isatty", None)
        self._stream = stream if stream is not None and isatty is not None and isatty() else None
        self._describe = describe

    @property
    def shown(self) -> bool:
        """Whether the stream is a terminal, so that anything is drawn."""
        return self._stream is not None

    def __call__(self, done: int, total: int) -> None:
        if self._stream is None:
            return
        self._stream.write("\r" + self._describe(done, total))
        if done == total:
            self._stream.write("\n")
        self._stream.flush()


def clock_text(seconds: float) -> str:
    """A duration as `m:ss` (`h:mm:ss` from an hour on)."""
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


class LiveStatus:
    """A line with counts by outcome, elapsed time and an ETA, redrawn on a terminal while work runs.

    A thread redraws it every `interval` seconds from `start()` on, so the line is there
    before the first piece of work ends; `note(text)` says what happens meanwhile (a
    setup step), `finished(outcome)` counts one piece and redraws. The ETA is the mean
    time per finished piece, measured from `begin()` (else from `start()`), times those
    left (`--:--` until one has finished). Nothing is drawn on a stream that is not a
    terminal.
    """

    def __init__(
        self,
        stream: IO[str] | None,
        title: str,
        unit: str,
        total: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        interval: float = 0.5,
    ) -> None:
        self._shown = Progress(stream, lambda done, total: self.text())
        self._stream = stream
        self._title = title
        self._unit = unit
        self._total = total
        self._clock = clock
        self._interval = interval
        self._counts: dict[str, int] = {}
        self._note: str | None = None
        self._width = 79
        self._started = clock()
        self._began = self._started
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def shown(self) -> bool:
        return self._shown.shown

    @property
    def done(self) -> int:
        return sum(self._counts.values())

    def text(self) -> str:
        """The line as it reads now."""
        done = self.done
        now = self._clock()
        eta = clock_text((now - self._began) / done * (self._total - done)) if done else "--:--"
        counts = ", ".join(f"{outcome} {n}" for outcome, n in self._counts.items())
        extras = [text for text in (counts, self._note) if text]
        parts = [f"{self._title}: {done}/{self._total} {self._unit}", *extras]
        return "  ".join([*parts, f"elapsed {clock_text(now - self._started)}", f"ETA {eta}"])

    def _draw(self) -> None:
        with self._lock:
            if self._stream is not None and self.shown:
                # Padding clears what a longer previous line left.
                text = self.text()
                self._width = max(self._width, len(text))
                self._stream.write("\r" + text.ljust(self._width))
                self._stream.flush()

    def start(self) -> LiveStatus:
        """Draw the line now and keep it current until `stop()`."""
        self._started = self._began = self._clock()
        if self.shown:
            self._draw()
            self._thread = threading.Thread(target=self._tick, name="callpin-progress", daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        while not self._stop.wait(self._interval):
            self._draw()

    def note(self, text: str | None) -> None:
        """Show what is happening now (None: nothing), until the next note."""
        self._note = text
        self._draw()

    def begin(self) -> None:
        """The pieces of work start now: setup before this does not count in the ETA."""
        self._began = self._clock()
        self._draw()

    def more(self, pieces: int) -> None:
        """`pieces` more pieces of work than the total said."""
        with self._lock:
            self._total += pieces
        self._draw()

    def finished(self, outcome: str) -> None:
        """One piece of work ended with `outcome` (a word such as `ok`, `failed`)."""
        with self._lock:
            self._counts[outcome] = self._counts.get(outcome, 0) + 1
        self._draw()

    def stop(self) -> None:
        """Stop redrawing; end the line, so what follows starts on a line of its own."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.shown and self._stream is not None:
            self._draw()
            self._stream.write("\n")
            self._stream.flush()
