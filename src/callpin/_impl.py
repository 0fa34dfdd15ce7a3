"""Pick the C speedups or the pure-Python reference once; everything else imports the live one from here."""

from __future__ import annotations

import os
from typing import Any

import wrapt

from . import align, codec, journal
from .frame_keys import frame_keys as reference_frame_keys

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
# The C spy's own proxies (_speedups.SpyProxy and its bound form, subclasses of wrapt's
# ObjectProxy that bind and call as wrapt's FunctionWrapper does, without its generic
# call path): spy.py gives a target whose handler is a C Spy the proxy its type maps to
# here, and every other target spy.SpyProxy (a wrapt FunctionWrapper). Empty under pure
# Python.
PROXY_OF: dict[type, type] = {}
# The hot passes of a diff over whole logs: each event's kind+label key, tallied
# (frame_keys.frame_keys), and how two sequences of digests correspond (align.correspond).
frame_keys: Any = reference_frame_keys
correspond: Any = align.correspond
PROXY_TYPES: tuple[type, ...] = ()
IMPLEMENTATION = "python"

if not _forced_python:
    try:
        from . import _speedups
    except ImportError:
        pass
    else:
        _speedups.configure(**codec.SPEEDUPS_INTERFACE)
        Encoder = _speedups.Encoder
        codec.digest_with(Encoder)
        Spy = _speedups.Spy
        Lock = _speedups.Lock
        ThreadState = _speedups.ThreadState
        frame_keys = _speedups.frame_keys
        correspond = _speedups.correspond
        # wrapt's ObjectProxy is a Python class over its C type; FunctionWrapper's base is
        # the type whose `_self_binding` a proxy of one of its instances takes.
        wrapper_base: Any = wrapt.FunctionWrapper.__base__
        PROXY_TYPES = _speedups.proxy_types(wrapt.ObjectProxy, wrapper_base)
        PROXY_OF = {_speedups.Spy: PROXY_TYPES[0]}
        IMPLEMENTATION = "c"

__all__ = [
    "IMPLEMENTATION",
    "PROXY_OF",
    "PROXY_TYPES",
    "Encoder",
    "Lock",
    "Spy",
    "ThreadState",
    "correspond",
    "frame_keys",
]
