"""Compare two folders of baselines: pair the logs by relative path and diff each pair."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .diff import Diff, check_options, diff
from .errors import LogFormatError, RulesMismatch
from .logfile import load
from .normalize import Rule

SUFFIX = ".cpin"


@dataclass(frozen=True, slots=True)
class Pair:
    """One relative path and what comparing its two logs found.

    `status` is `identical`, `different`, `only in old`, `only in new` or `cannot
    compare` (then `error` says why); `diff` is the comparison when one was made.
    """

    path: str
    status: str
    diff: Diff | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class FolderDiff:
    """The pairs of two folders in order of their relative paths."""

    old: str
    new: str
    pairs: tuple[Pair, ...]

    @property
    def same(self) -> bool:
        """True when every log is in both folders with the same calls."""
        return all(pair.status == "identical" for pair in self.pairs)

    @property
    def failed(self) -> bool:
        """True when some pair could not be compared."""
        return any(pair.status == "cannot compare" for pair in self.pairs)


def baselines_under(root: str) -> list[str]:
    """The relative paths (with `/`) of the logs under `root`, sorted; links to folders are not followed."""
    found: list[str] = []
    for folder, subfolders, files in os.walk(root):
        subfolders.sort()
        for name in files:
            if name.endswith(SUFFIX):
                found.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    return sorted(found)


def diff_folders(
    old: str,
    new: str,
    *,
    ignore: Iterable[str] = (),
    order: str = "strict",
    rules: Sequence[Rule] = (),
) -> FolderDiff:
    """Pair the logs of two folders by relative path and compare each pair as `diff` does."""
    ignored = tuple(ignore)
    check_options(order, ignored)
    old_paths, new_paths = set(baselines_under(old)), set(baselines_under(new))
    pairs: list[Pair] = []
    for path in sorted(old_paths | new_paths):
        if path not in new_paths:
            pairs.append(Pair(path, "only in old"))
            continue
        if path not in old_paths:
            pairs.append(Pair(path, "only in new"))
            continue
        try:
            found = diff(
                load(os.path.join(old, path)), load(os.path.join(new, path)), ignore=ignored, order=order, rules=rules
            )
        except (LogFormatError, RulesMismatch) as exc:
            pairs.append(Pair(path, "cannot compare", error=" ".join(str(exc).split())))
            continue
        pairs.append(Pair(path, "identical" if found.same else "different", found))
    return FolderDiff(old, new, tuple(pairs))
