"""Ctrl-C and SIGTERM during a bite run: clean up first, then let them take effect."""

from __future__ import annotations

import signal
import threading
from types import FrameType, TracebackType
from typing import Any


class _Terminated(BaseException):
    """SIGTERM arrived while bite was running."""


class SignalGuard:
    """Turn SIGINT and SIGTERM into exceptions while bite runs, hold them off while it
    cleans up, then restore the caller's handlers and deliver a SIGTERM to them."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: list[int] = []
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalGuard:
        # Handlers can only be set from the main thread; elsewhere the caller owns signals.
        if threading.current_thread() is threading.main_thread():
            for signum in self._SIGNALS:
                self._previous[signum] = signal.signal(signum, self._raise)
        return self

    def _raise(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise _Terminated

    def _note(self, signum: int, frame: FrameType | None) -> None:
        self.received.append(signum)

    def hold(self) -> None:
        """From now on only note signals: cleaning up must run to the end."""
        for signum in self._previous:
            signal.signal(signum, self._note)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        if signal.SIGTERM in self.received:
            signal.raise_signal(signal.SIGTERM)
            # Still here: the caller's handler returned or ignores SIGTERM.
            raise SystemExit(128 + signal.SIGTERM)
        if signal.SIGINT in self.received and kind is None:
            raise KeyboardInterrupt
