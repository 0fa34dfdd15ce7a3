"""Source files: the Python files a SOURCE file or folder holds, caches and environments left out."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

# Never searched for SOURCE files nor copied into a temporary copy: caches that would
# carry stale bytecode, and virtual environments (folders holding a pyvenv.cfg), which
# are large and location-bound.
_SKIPPED_DIRS = frozenset(
    {
        ".git",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
    }
)


def skipped(folder: str | os.PathLike[str], name: str) -> bool:
    """Whether the folder `name` inside `folder` stays out of snapshots and temporary copies."""
    return name in _SKIPPED_DIRS or (Path(folder, name) / "pyvenv.cfg").exists()


def python_files(folder: Path) -> Iterator[Path]:
    """The `.py` files under `folder` (or `folder` itself when it is one), in a stable order."""
    if folder.is_file():
        yield folder
        return
    for current, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not skipped(current, d))
        yield from (Path(current, name) for name in sorted(files) if name.endswith(".py"))
