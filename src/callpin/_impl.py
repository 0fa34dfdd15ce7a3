"""Pick the C speedups or the pure-Python codec once; everything else imports the codec from here."""

from __future__ import annotations

import os
import threading
from typing import Any

from . import codec

# CALLPIN_PURE_PYTHON=1 forces the reference implementation, so the whole suite can
# run once per implementation and a user can rule the C code out when in doubt.
_forced_python = os.environ.get("CALLPIN_PURE_PYTHON", "") not in ("", "0")

Encoder: Any
IMPLEMENTATION: str
# The per-call path of a recording. In C: the spy wrapt calls, the recording's lock
# that spy takes directly, and the per-thread "inside callpin" flag it shares with
# the Python path. With the pure-Python codec, Spy and ThreadState are None and the
# recorder uses its own (recorder._Spy and recorder._ThreadState, the reference).
Spy: Any = None
ThreadState: Any = None
Lock: Any = threading.Lock

if _forced_python:
    Encoder = codec.Encoder
    IMPLEMENTATION = "python"
else:
    try:
        from . import _speedups
    except ImportError:
        Encoder = codec.Encoder
        IMPLEMENTATION = "python"
    else:
        _speedups.configure(codec)
        Encoder = _speedups.Encoder
        Spy = _speedups.Spy
        ThreadState = _speedups.ThreadState
        Lock = _speedups.Lock
        IMPLEMENTATION = "c"

__all__ = ["IMPLEMENTATION", "Encoder", "Lock", "Spy", "ThreadState"]
