"""Pick the C speedups or the pure-Python reference once; everything else imports the live one from here."""

from __future__ import annotations

import os
from typing import Any

from . import codec, journal

# CALLPIN_PURE_PYTHON=1 forces the reference implementation, so the whole suite can
# run once per implementation and a user can rule the C code out when in doubt.
_forced_python = os.environ.get("CALLPIN_PURE_PYTHON", "") not in ("", "0")

# The same names from either side: the encoder (codec.Encoder), and the per-call path
# of a recording (journal.Spy, the lock of its journal, and the per-thread flag the
# C spies share with the Python path).
Encoder: Any = codec.Encoder
Spy: Any = journal.Spy
Lock: Any = journal.Lock
ThreadState: Any = journal.ThreadState
IMPLEMENTATION = "python"

if not _forced_python:
    try:
        from . import _speedups
    except ImportError:
        pass
    else:
        _speedups.configure(**codec.SPEEDUPS_INTERFACE)
        Encoder = _speedups.Encoder
        Spy = _speedups.Spy
        Lock = _speedups.Lock
        ThreadState = _speedups.ThreadState
        IMPLEMENTATION = "c"

__all__ = ["IMPLEMENTATION", "Encoder", "Lock", "Spy", "ThreadState"]
