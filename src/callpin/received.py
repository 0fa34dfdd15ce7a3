"""Received logs: the new log of a pin that drifted or had no baseline, kept beside its baseline.

`renew.cpin` drifted: its new log is `renew.cpin.received`, the same bytes
CALLPIN_OUTPUT_DIR would get. The suffix keeps it out of every `*.cpin` glob (unused
baselines, prune, bless, gate), `callpin git-setup` lists it in .gitignore, and
`callpin review` accepts it (it replaces the baseline and is blessed) or rejects it
(it is deleted). A pin that passes removes its stale received log.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .atomic import replace_file
from .logfile import log_bytes
from .normalize import RuleSet

SUFFIX = ".received"
PATTERN = f"*.cpin{SUFFIX}"


def received_path(baseline: str | os.PathLike[str]) -> str:
    """The received log of the baseline at `baseline`."""
    return os.fspath(baseline) + SUFFIX


def baseline_of(received: str | os.PathLike[str]) -> str:
    """The baseline a received log stands beside."""
    text = os.fspath(received)
    if not text.endswith(".cpin" + SUFFIX):
        raise ValueError(f"{text} is not a received log (*{PATTERN[1:]})")
    return text[: -len(SUFFIX)]


def write_received(baseline: str | os.PathLike[str], frames: list[bytes], rules: RuleSet, meta: dict[str, Any]) -> str:
    """Write the received log beside `baseline`, whole or not at all; its path."""
    path = received_path(baseline)
    replace_file(path, log_bytes(frames, rules=rules, meta=meta))
    return path


def remove_received(baseline: str | os.PathLike[str]) -> bool:
    """Delete the received log beside `baseline`; whether there was one."""
    try:
        os.unlink(received_path(baseline))
    except FileNotFoundError:
        return False
    return True


def find_received(folder: str | os.PathLike[str]) -> list[Path]:
    """Every received log under `folder`, sorted by path."""
    root = Path(folder)
    if not root.is_dir():
        return []
    return sorted(path for path in root.rglob(PATTERN) if path.is_file())
