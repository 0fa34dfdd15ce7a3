"""What the values-* scenarios share: fresh copies of a scenario's project, and the
environment the pytest and callpin children they start run in."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def child_environment(leave_out: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """This process's environment without CI, CALLPIN_PURE_PYTHON and the variables
    named in `leave_out` (in any case), with `extra` set."""
    dropped = {name.upper() for name in leave_out}
    env = {k: v for k, v in os.environ.items() if k.upper() not in dropped and k != "CALLPIN_PURE_PYTHON"}
    env.pop("CI", None)
    env.update(extra)
    return env


def copy_project(project: Path, folder: Path, name: str) -> Path:
    """A copy of the folder `project` at `folder / name`."""
    copy = folder / name
    shutil.copytree(project, copy)
    return copy
