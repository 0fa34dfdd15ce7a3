"""Progress on a terminal: one line, redrawn in place as work finishes; nothing anywhere else.

bite and probe both draw one: a report piped to a file or read by a machine must carry
no progress, so a stream that is not a terminal gets nothing at all.
"""

from __future__ import annotations

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
