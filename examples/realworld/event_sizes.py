"""Encoded event sizes now and before objects were recorded by their state, for the values-* scenarios."""

from __future__ import annotations

import subprocess
import tarfile
from io import BytesIO
from pathlib import Path

from callpin.logfile import LogReader

ROOT = Path(__file__).resolve().parent.parent.parent

# The last commit that recorded an object as its repr (`<PreparedRequest [GET]>`): the
# size today's users know.
BEFORE = "a8dfcc0462a6a9e28602c6412eb831ed32c563ba"


def callpin_before(folder: Path) -> Path:
    """callpin's source at BEFORE unpacked under `folder`; first on PYTHONPATH, with
    CALLPIN_PURE_PYTHON=1, it is the callpin a child imports."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", BEFORE, "src/callpin"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder / "before", filter="data")
    return folder / "before" / "src"


def frame_sizes(path: Path) -> list[int]:
    """The encoded size of each event of the log at `path`, in bytes."""
    with LogReader(path) as reader:
        return [len(frame) for frame in reader.frames()]
