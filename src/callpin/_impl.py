"""Pick the C speedups or the pure-Python codec once; everything else imports the codec from here."""

from __future__ import annotations

import os
from typing import Any

from . import codec

# CALLPIN_PURE_PYTHON=1 forces the reference implementation, so the whole suite can
# run once per implementation and a user can rule the C code out when in doubt.
_forced_python = os.environ.get("CALLPIN_PURE_PYTHON", "") not in ("", "0")

Encoder: Any
IMPLEMENTATION: str

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
        IMPLEMENTATION = "c"

__all__ = ["IMPLEMENTATION", "Encoder"]
