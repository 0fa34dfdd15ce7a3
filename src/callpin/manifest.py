"""baselines/MANIFEST: one reviewable line per blessed baseline, read strictly, written sorted.

Format (docs/gate.md): comment lines start with `#`; every other line is four fields
separated by a single TAB:

    <path relative to the baselines folder>\t<fingerprint>\t<event count>\t<reason>

Lines are sorted by path and each path appears once. A baseline that is refreshed
(pytest `--callpin-update`) changes its file but not its line; `callpin bless` rewrites
the line, and `callpin gate` blocks a change whose line does not match its file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .atomic import replace_file
from .errors import ManifestError, UsageError

NAME = "MANIFEST"
HEADER = (
    "# callpin baseline manifest: path, fingerprint, events, reason of the last blessing.\n"
    "# Fields are separated by one TAB. Written by `callpin bless`; checked by `callpin gate`.\n"
)
_FINGERPRINT = re.compile(r"[0-9a-f]{16}")
_COUNT = re.compile(r"0|[1-9][0-9]*")


@dataclass(frozen=True)
class Entry:
    """One manifest line: a baseline's blessed fingerprint and event count, and why."""

    path: str
    fingerprint: str
    count: int
    reason: str

    def line(self) -> str:
        return f"{self.path}\t{self.fingerprint}\t{self.count}\t{self.reason}\n"


def check_reason(reason: str) -> str:
    """A blessing's reason: one non-empty line without TABs."""
    cleaned = reason.strip()
    if not cleaned:
        raise UsageError("a blessing needs a non-empty --reason")
    if "\t" in cleaned or "\n" in cleaned or "\r" in cleaned:
        raise UsageError("a blessing's reason must be one line without TAB characters")
    return cleaned


def check_path(path: str) -> str:
    """A baseline path as written in the manifest: relative, POSIX, inside the folder."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or not path or path != pure.as_posix():
        raise UsageError(f"baseline path {path!r} must be relative to the baselines folder")
    if "\t" in path or "\n" in path:
        raise UsageError(f"baseline path {path!r} contains a TAB or newline")
    return path


def parse(text: str, source: str = NAME) -> dict[str, Entry]:
    """Read a manifest strictly: a malformed line is a ManifestError naming its line number."""
    entries: dict[str, Entry] = {}
    previous = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        fields = raw.split("\t")
        if len(fields) != 4:
            raise ManifestError(source, number, f"expected 4 TAB-separated fields, found {len(fields)}")
        path, fingerprint, count, reason = fields
        try:
            check_path(path)
        except UsageError as exc:
            raise ManifestError(source, number, str(exc)) from None
        if not _FINGERPRINT.fullmatch(fingerprint):
            raise ManifestError(source, number, f"fingerprint {fingerprint!r} is not 16 lower-case hex digits")
        if not _COUNT.fullmatch(count):
            raise ManifestError(source, number, f"event count {count!r} is not a number")
        if not reason.strip():
            raise ManifestError(source, number, "empty reason")
        if path in entries:
            raise ManifestError(source, number, f"{path} is listed twice")
        if path < previous:
            raise ManifestError(source, number, f"{path} is out of order (lines are sorted by path)")
        previous = path
        entries[path] = Entry(path, fingerprint, int(count), reason)
    return entries


def render(entries: Iterable[Entry]) -> str:
    return HEADER + "".join(entry.line() for entry in sorted(entries, key=lambda e: e.path))


def read(folder: str | os.PathLike[str]) -> dict[str, Entry]:
    """The manifest of a baselines folder; empty when it has none yet."""
    path = Path(folder) / NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise ManifestError(str(path), 1, "not UTF-8 text") from None
    return parse(text, str(path))


def write(folder: str | os.PathLike[str], entries: Iterable[Entry]) -> None:
    """Write the manifest atomically, as a log is written (docs/FORMAT.md, "Writing").

    A crash or SIGKILL leaves the previous manifest whole, and the next write removes
    the temporary files of writers that died.
    """
    replace_file(Path(folder) / NAME, render(entries).encode("utf-8"))


def baseline_files(folder: str | os.PathLike[str]) -> list[str]:
    """Every `*.cpin` under the folder, as sorted manifest paths."""
    root = Path(folder)
    if not root.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.cpin") if p.is_file())
